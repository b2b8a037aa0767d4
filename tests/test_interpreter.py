"""The NumPy interpreter on hand-built IR: every op, batched control flow, memory semantics."""
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from irbuild import KernelBuilder, Op, bf16, f16, f32, i8, i32, ptr, u8

from ascdsl import interpreter
from ascdsl.dtypes import from_numpy
from ascdsl.errors import CompilationError, InputTypeError, InputValueError, Loc, OutOfBoundsError
from ascdsl.interpreter import run, state

RNG = np.random.default_rng(0)


def at(k, p, offsets):
    return k.op(Op.PTR_ADD, p, offsets)


def elementwise_kernel(op, in_types, out_type, n):
    """out[i] = op(a0[i], a1[i], ...) for one block of n elements."""
    k = KernelBuilder(**{f"a{i}": ptr(t) for i, t in enumerate(in_types)}, out=ptr(out_type))
    *ins, out = k.params
    offs = k.arange(0, n)
    k.store(at(k, out, offs), k.op(op, *[k.load(at(k, p, offs)) for p in ins], dtype=out_type))
    return k.build()


def apply(op, arrays, out_dtype):
    """Run ``op`` elementwise on 1-D arrays in one program; the result has ``out_dtype``."""
    out = np.zeros(arrays[0].shape, out_dtype)
    kernel = elementwise_kernel(op, [from_numpy(a.dtype) for a in arrays], from_numpy(out.dtype), out.size)
    run(kernel, [*arrays, out], (1,))
    return out


def f32s(n=64, lo=-4.0, hi=4.0):
    return RNG.uniform(lo, hi, n).astype(np.float32)


def i32s(n=64, lo=-50, hi=50):
    return RNG.integers(lo, hi, n).astype(np.int32)


def exact64(fn):
    """The float64 result of fn, correctly rounded to float32."""
    return lambda *xs: fn(*[x.astype(np.float64) for x in xs]).astype(np.float32)


# (op, inputs, output dtype, reference) for every elementwise op
ELEMENTWISE = [
    (Op.ADD, (f32s(), f32s()), np.float32, exact64(np.add)),
    (Op.SUB, (f32s(), f32s()), np.float32, exact64(np.subtract)),
    (Op.MUL, (f32s(), f32s()), np.float32, exact64(np.multiply)),
    (Op.DIV, (f32s(), f32s(lo=0.5)), np.float32, exact64(np.divide)),
    (Op.MAXIMUM, (f32s(), f32s()), np.float32, np.maximum),
    (Op.MINIMUM, (i32s(), i32s()), np.int32, np.minimum),
    (Op.LT, (i32s(), i32s()), np.bool_, np.less),
    (Op.LE, (i32s(), i32s()), np.bool_, np.less_equal),
    (Op.GT, (f32s(), f32s()), np.bool_, np.greater),
    (Op.GE, (f32s(), f32s()), np.bool_, np.greater_equal),
    (Op.EQ, (i32s(lo=0, hi=3), i32s(lo=0, hi=3)), np.bool_, np.equal),
    (Op.NE, (i32s(lo=0, hi=3), i32s(lo=0, hi=3)), np.bool_, np.not_equal),
    (Op.AND, (i32s(), i32s()), np.int32, np.bitwise_and),
    (Op.OR, (RNG.random(64) < 0.5, RNG.random(64) < 0.5), np.bool_, np.logical_or),
    (Op.XOR, (i32s(), i32s()), np.int32, np.bitwise_xor),
    (Op.NEG, (f32s(),), np.float32, np.negative),
    (Op.NOT, (RNG.random(64) < 0.5,), np.bool_, np.logical_not),
    (Op.ABS, (i32s(),), np.int32, np.abs),
    (Op.SQRT, (f32s(lo=0),), np.float32, exact64(np.sqrt)),
    (Op.CAST, (f32s(lo=-100, hi=100),), np.int32, lambda x: np.trunc(x).astype(np.int32)),
    (Op.WHERE, (RNG.random(64) < 0.5, f32s(), f32s()), np.float32, np.where),
]


@pytest.mark.parametrize("op, inputs, out_dtype, reference", ELEMENTWISE,
                         ids=[c[0].value for c in ELEMENTWISE])
def test_elementwise_exact(op, inputs, out_dtype, reference):
    out = apply(op, list(inputs), out_dtype)
    np.testing.assert_array_equal(out, reference(*inputs))


@pytest.mark.parametrize("op, reference, lo", [
    (Op.EXP, np.exp, -8), (Op.LOG, np.log, 1e-3), (Op.RSQRT, lambda x: 1 / np.sqrt(x), 1e-3),
    (Op.SIGMOID, lambda x: 1 / (1 + np.exp(-x)), -8)])
def test_transcendental_within_float32_tolerance(op, reference, lo):
    x = f32s(lo=lo, hi=8)
    want = reference(x.astype(np.float64))
    np.testing.assert_allclose(apply(op, [x], np.float32), want, rtol=1e-6, atol=1e-7)


def test_integer_division_truncates_toward_zero():
    a = np.array([7, -7, 7, -7, 0, 5, -1], np.int32)
    b = np.array([2, 2, -2, -2, 3, 5, 3], np.int32)
    assert apply(Op.IDIV, [a, b], np.int32).tolist() == [3, -3, -3, 3, 0, 1, 0]
    assert apply(Op.MOD, [a, b], np.int32).tolist() == [1, -1, 1, -1, 0, 0, -1]


def test_integer_ops_wrap():
    big = np.array([2**31 - 1, -2**31], np.int32)
    assert apply(Op.ADD, [big, np.array([1, -1], np.int32)], np.int32).tolist() == [-2**31, 2**31 - 1]
    assert apply(Op.MUL, [np.array([100], np.int8), np.array([3], np.int8)], np.int8).tolist() == [44]
    assert apply(Op.SUB, [np.array([0], np.uint8), np.array([1], np.uint8)], np.uint8).tolist() == [255]


def test_const_arange_broadcast_expand_dims():
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    rows = k.broadcast(k.expand(k.arange(2, 5), 1), (3, 4))       # [[2]*4, [3]*4, [4]*4]
    cols = k.broadcast(k.expand(k.arange(0, 4), 0), (3, 4))       # [[0, 1, 2, 3]]*3
    seven = k.broadcast(k.const(7, i32), (3, 4))
    value = k.op(Op.ADD, k.op(Op.MUL, rows, 10), k.op(Op.ADD, cols, seven))
    row_ids = k.broadcast(k.expand(k.arange(0, 3), -1), (3, 4))
    k.store(at(k, out, k.op(Op.ADD, k.op(Op.MUL, row_ids, 4), cols)), value)
    got = np.zeros(12, np.int32)
    run(k.build(), [got], (1,))
    np.testing.assert_array_equal(got.reshape(3, 4), 10 * np.arange(2, 5)[:, None] + np.arange(4) + 7)


def test_program_id_and_num_programs_on_3d_grid():
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    x, y, z = k.pid(0), k.pid(1), k.pid(2)
    gx, gy, gz = k.nprog(0), k.nprog(1), k.nprog(2)
    linear = k.op(Op.ADD, x, k.op(Op.MUL, gx, k.op(Op.ADD, y, k.op(Op.MUL, gy, z))))
    base = k.op(Op.MUL, linear, 4)
    for i, v in enumerate([x, y, z, k.op(Op.MUL, gx, k.op(Op.MUL, gy, gz))]):
        k.store(at(k, out, k.op(Op.ADD, base, i)), v)
    got = np.full(4 * 24, -1, np.int32)
    run(k.build(), [got], (2, 3, 4))
    want = [[x, y, z, 24] for z in range(4) for y in range(3) for x in range(2)]
    assert got.reshape(24, 4).tolist() == want


def tile_2d(k, p, rows, cols, stride):
    """Pointers to a rows x cols block of a row-major array with row stride `stride`."""
    r = k.broadcast(k.expand(k.arange(0, rows), 1), (rows, cols))
    c = k.broadcast(k.expand(k.arange(0, cols), 0), (rows, cols))
    return at(k, p, k.op(Op.ADD, k.op(Op.MUL, r, stride), c))


@pytest.mark.parametrize("axis, keep_dims",
                         [(0, False), (1, False), (None, False), (1, True), (None, True), (-1, False)])
@pytest.mark.parametrize("op", [Op.SUM, Op.MAX, Op.MIN, Op.ARGMAX, Op.ARGMIN])
def test_reductions(op, axis, keep_dims):
    x = RNG.integers(-3, 4, (5, 6)).astype(np.float32)  # small integers: many ties
    k = KernelBuilder(x=ptr(f32), out=ptr(f32))
    xp, out = k.params
    r = k.reduce(op, k.load(tile_2d(k, xp, 5, 6, 6)), axis, keep_dims)
    r = r if r.type.dtype == f32 else k.cast(r, f32)
    shape = r.type.shape
    dst = {0: lambda: out, 1: lambda: at(k, out, k.arange(0, shape[0])),
           2: lambda: tile_2d(k, out, *shape, shape[1])}[len(shape)]
    k.store(dst(), r)
    got = np.zeros(x.size, np.float32)
    run(k.build(), [x, got], (1,))
    fn = {Op.SUM: np.sum, Op.MAX: np.max, Op.MIN: np.min, Op.ARGMAX: np.argmax, Op.ARGMIN: np.argmin}[op]
    want = np.asarray(fn(x, axis=axis, keepdims=keep_dims)).reshape(-1)
    np.testing.assert_array_equal(got[:want.size], want)


def test_argmax_ties_pick_lowest_index_and_max_of_half_is_float32():
    k = KernelBuilder(x=ptr(f16), idx=ptr(i32), mx=ptr(f32))
    x, idx, mx = k.params
    v = k.load(at(k, x, k.arange(0, 6)))
    k.store(idx, k.reduce(Op.ARGMAX, v))
    k.store(at(k, idx, 1), k.reduce(Op.ARGMIN, v))
    m = k.reduce(Op.MAX, v)
    assert m.type.dtype == f32
    k.store(mx, m)
    xs, ids, mxs = np.array([1, 3, -2, 3, -2, 0], np.float16), np.zeros(2, np.int32), np.zeros(1, np.float32)
    run(k.build(), [xs, ids, mxs], (1,))
    assert ids.tolist() == [1, 2] and mxs[0] == 3.0


# --- batched control flow ------------------------------------------------------------------------

def test_loop_trip_count_differs_by_program():
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    pid = k.pid()
    acc, count = k.for_(0, pid, 1, [k.const(0, i32), k.const(0, i32)],
                        lambda i, acc, n: [k.op(Op.ADD, acc, i), k.op(Op.ADD, n, 1)])
    k.store(at(k, out, pid), k.op(Op.ADD, k.op(Op.MUL, acc, 100), count))
    got = np.zeros(9, np.int32)
    run(k.build(), [got], (9,))
    assert got.tolist() == [100 * (p * (p - 1) // 2) + p for p in range(9)]


def test_loop_bounds_and_negative_step_per_program_follow_python_range():
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    pid = k.pid()
    step = k.op(Op.SUB, k.op(Op.MOD, pid, 3), 1)           # -1, 0, 1 -> make 0 into -2
    step = k.op(Op.WHERE, k.op(Op.EQ, step, 0), -2, step)
    lower = k.op(Op.SUB, pid, 4)
    total, n = k.for_(lower, k.op(Op.SUB, 3, pid), step, [k.const(0, i32), k.const(0, i32)],
                      lambda i, t, n: [k.op(Op.ADD, k.op(Op.MUL, t, 3), i), k.op(Op.ADD, n, 1)])
    k.store(at(k, out, k.op(Op.MUL, pid, 2)), total)
    k.store(at(k, out, k.op(Op.ADD, k.op(Op.MUL, pid, 2), 1)), n)
    got = np.zeros(20, np.int32)
    run(k.build(), [got], (10,))
    for p in range(10):
        step = {0: -1, 1: -2, 2: 1}[p % 3]
        t = 0
        for i in range(p - 4, 3 - p, step):
            t = 3 * t + i
        assert got[2 * p:2 * p + 2].tolist() == [t, len(range(p - 4, 3 - p, step))], p


def test_stores_in_a_divergent_loop_only_touch_active_programs():
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    pid = k.pid()

    def body(i):
        k.store(at(k, out, k.op(Op.ADD, k.op(Op.MUL, pid, 4), i)), k.op(Op.ADD, i, 1))
        return []
    k.for_(0, pid, 1, [], body)
    got = np.full(16, -1, np.int32)
    run(k.build(), [got], (4,))
    assert got.reshape(4, 4).tolist() == [[-1] * 4, [1, -1, -1, -1], [1, 2, -1, -1], [1, 2, 3, -1]]


def test_nested_loops_carry_pointers_and_tiles():
    """Per program p: out[p, :] = sum over i < p+1 of x[i, :] via an advancing pointer, in an inner loop."""
    k = KernelBuilder(x=ptr(f32), out=ptr(f32))
    x, out = k.params
    pid = k.pid()
    offs = k.arange(0, 8)

    def outer(j, acc, p):
        def inner(i, acc):
            return [k.op(Op.ADD, acc, k.load(at(k, p, offs)))]
        (acc,) = k.for_(0, 1, 1, [acc], inner)
        return [acc, at(k, p, 8)]
    acc, _ = k.for_(0, k.op(Op.ADD, pid, 1), 1, [k.const(0.0, f32, (8,)), x], outer)
    k.store(at(k, out, k.op(Op.ADD, k.op(Op.MUL, pid, 8), offs)), acc)
    xs = RNG.integers(0, 10, (4, 8)).astype(np.float32)
    got = np.zeros((4, 8), np.float32)
    run(k.build(), [xs, got], (4,))
    np.testing.assert_array_equal(got, np.cumsum(xs, axis=0))


def test_if_diverging_by_program_merges_results_and_masks_side_effects():
    k = KernelBuilder(x=ptr(f32), out=ptr(f32), flag=ptr(i32), n=i32)
    x, out, flag, n = k.params
    pid = k.pid()
    inside = k.op(Op.LT, pid, n)

    def then():
        k.store(at(k, flag, pid), k.const(1, i32))
        return [k.load(at(k, x, pid))]               # out of bounds for pid >= n: must not run there

    def orelse():
        k.store(at(k, flag, pid), k.const(2, i32))
        return [k.cast(k.op(Op.NEG, pid), f32)]
    (v,) = k.if_(inside, then, orelse)
    k.store(at(k, out, pid), v)
    xs, got, flags = np.arange(3, dtype=np.float32) + 10, np.zeros(6, np.float32), np.zeros(6, np.int32)
    run(k.build(), [xs, got, flags, 3], (6,))
    assert got.tolist() == [10, 11, 12, -3, -4, -5] and flags.tolist() == [1, 1, 1, 2, 2, 2]


def test_if_inside_divergent_loop():
    """Per program p: count of odd i in range(p), with the branch inside a per-program loop."""
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    pid = k.pid()

    def body(i, c):
        odd = k.op(Op.EQ, k.op(Op.MOD, i, 2), 1)
        return k.if_(odd, lambda: [k.op(Op.ADD, c, 1)], lambda: [c])
    (c,) = k.for_(0, pid, 1, [k.const(0, i32)], body)
    k.store(at(k, out, pid), c)
    got = np.zeros(7, np.int32)
    run(k.build(), [got], (7,))
    assert got.tolist() == [p // 2 for p in range(7)]


def test_uniform_if_runs_only_one_region():
    k = KernelBuilder(x=ptr(f32), n=i32)
    x, n = k.params
    big = k.op(Op.GT, n, 100)
    (v,) = k.if_(big, lambda: [k.load(at(k, x, 1000))], lambda: [k.load(x)])  # then-branch would be OOB
    k.store(at(k, x, 1), v)
    xs = np.array([5, 0], np.float32)
    run(k.build(), [xs, 3], (4,))
    assert xs.tolist() == [5, 5]


def test_zero_step_is_a_located_error():
    k = KernelBuilder(n=i32)
    k.for_(0, 4, k.params[0], [], lambda i: [])
    with pytest.raises(CompilationError, match="step"):
        run(k.build(), [0], (2,))


# --- memory --------------------------------------------------------------------------------------

def masked_copy_kernel(dtype, block, other=None, mask_store=True):
    k = KernelBuilder(x=ptr(dtype), out=ptr(dtype), n=i32)
    x, out, n = k.params
    offs = k.op(Op.ADD, k.op(Op.MUL, k.pid(), block), k.arange(0, block))
    mask = k.op(Op.LT, offs, n)
    k.store(at(k, out, offs), k.load(at(k, x, offs), mask, other), mask if mask_store else None)
    return k.build()


def test_masked_load_poison_and_other():
    cases = [(f32, np.float32, None), (i32, np.int32, None), (bf16, ml_dtypes.bfloat16, None),
             (f16, np.float16, 2.5), (i8, np.int8, 7)]
    for dtype, np_dtype, other in cases:
        xs = np.arange(3).astype(np_dtype)
        got = np.zeros(8, np_dtype)
        run(masked_copy_kernel(dtype, 8, other, mask_store=False), [xs, got, 3], (1,))
        assert got[:3].tolist() == xs.tolist()
        if other is not None:
            assert (got[3:] == np.array(other, np_dtype)).all()
        else:  # all bits set: NaN for floats, -1 for signed ints
            assert (got[3:].view(f"u{got.itemsize}") == np.iinfo(f"u{got.itemsize}").max).all()


def test_masked_lanes_never_touch_memory():
    xs = np.arange(10, dtype=np.float32)
    got = np.full(12, -1, np.float32)
    run(masked_copy_kernel(f32, 4), [xs, got, 10], (3,))  # lanes 10, 11 are out of bounds but masked
    assert got.tolist() == list(range(10)) + [-1, -1]


def test_out_of_bounds_load_is_located_and_names_program_and_index():
    k = KernelBuilder(x=ptr(f32), out=ptr(f32))
    x, out = k.params
    offs = k.op(Op.ADD, k.op(Op.MUL, k.pid(), 4), k.arange(0, 4))
    k.store(at(k, out, offs), k.load(at(k, x, offs), loc=Loc("ops/copy.py", 7, 13)))
    with pytest.raises(OutOfBoundsError) as info:
        run(k.build(), [np.zeros(10, np.float32), np.zeros(12, np.float32)], (3,))
    message = str(info.value)
    assert message.startswith("ops/copy.py:7:13: error: load from x out of bounds")
    assert "program (2, 0, 0)" in message and "element 10 " in message and "10 elements" in message
    assert info.value.loc == Loc("ops/copy.py", 7, 13) and isinstance(info.value, IndexError)


@pytest.mark.parametrize("chunk", [state.CHUNK_ELEMENTS, 1])
def test_out_of_bounds_store_names_3d_program_id_and_negative_index(monkeypatch, chunk):
    monkeypatch.setattr(state, "CHUNK_ELEMENTS", chunk)
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    k.store(at(k, out, k.op(Op.NEG, k.pid(2))), k.pid(0), loc=Loc("k.py", 3, 5))  # z > 0 writes out[-z]
    expected = r"store to out out of bounds: program \(0, 0, 1\) accesses element -1 of an array of 4 "
    with pytest.raises(OutOfBoundsError, match=expected):
        run(k.build(), [np.zeros(4, np.int32)], (2, 2, 2))


def test_duplicate_addresses_last_program_then_last_lane_wins(monkeypatch):
    k = KernelBuilder(out=ptr(i32))
    (out,) = k.params
    lanes = k.arange(0, 8)
    value = k.op(Op.ADD, k.op(Op.MUL, k.pid(), 100), lanes)
    k.store(at(k, out, k.op(Op.IDIV, lanes, 2)), value)                       # lanes 2i, 2i+1 -> i
    k.store(at(k, out, k.op(Op.ADD, k.op(Op.IDIV, k.op(Op.SUB, 7, lanes), 2), 4)), value)  # reversed order
    kernel = k.build()
    for chunk in (state.CHUNK_ELEMENTS, 8):  # all programs at once, or one program per chunk
        monkeypatch.setattr(state, "CHUNK_ELEMENTS", chunk)
        got = np.zeros(8, np.int32)
        run(kernel, [got], (5,))
        assert got.tolist() == [401, 403, 405, 407, 407, 405, 403, 401]


def test_pointer_selecting_between_arrays():
    k = KernelBuilder(x=ptr(f32), y=ptr(f32), out=ptr(f32))
    x, y, out = k.params
    pid = k.pid()
    src = k.op(Op.WHERE, k.op(Op.EQ, k.op(Op.MOD, pid, 2), 0), x, y)
    k.store(at(k, out, pid), k.load(at(k, src, pid)))
    got = np.zeros(4, np.float32)
    run(k.build(), [np.arange(4, dtype=np.float32), 10 + np.arange(4, dtype=np.float32), got], (4,))
    assert got.tolist() == [0, 11, 2, 13]


def test_print_one_line_per_active_program(capsys):
    k = KernelBuilder()
    pid = k.pid()

    def then():
        k.print("x:", pid, k.op(Op.MUL, k.arange(0, 3), pid))
        return []
    k.if_(k.op(Op.NE, pid, 1), then, list)
    run(k.build(), [], (3,))
    assert capsys.readouterr().out == "pid (0, 0, 0) x: 0 [0 0 0]\npid (2, 0, 0) x: 2 [0 2 4]\n"


def test_launch_argument_errors():
    kernel = masked_copy_kernel(f32, 4)
    with pytest.raises(InputValueError, match="3 arguments"):
        run(kernel, [np.zeros(4, np.float32)], (1,))
    with pytest.raises(InputTypeError, match="dtype float16"):
        run(kernel, [np.zeros(4, np.float16), np.zeros(4, np.float32), 4], (1,))
    with pytest.raises(InputValueError, match="whole elements"):
        odd = np.lib.stride_tricks.as_strided(np.zeros(16, np.float32), shape=(4,), strides=(6,))
        run(kernel, [odd, np.zeros(4, np.float32), 4], (1,))


def test_every_op_has_a_handler():
    assert set(interpreter.HANDLERS) == set(Op)


def test_garbage_in_masked_lanes_raises_no_numpy_warnings():
    """0/0, log(NaN) and casting NaN to int happen in lanes the mask discards: no warnings."""
    k = KernelBuilder(x=ptr(f32), out=ptr(i32))
    x, out = k.params
    offs = k.arange(0, 4)
    mask = k.op(Op.LT, offs, 2)
    v = k.load(at(k, x, offs), mask, 0.0)
    k.store(at(k, out, offs), k.cast(k.op(Op.LOG, k.op(Op.DIV, v, v)), i32), mask)
    got = np.full(4, 9, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(k.build(), [np.array([1, -1, 5, 5], np.float32), got], (1,))
    assert got.tolist() == [0, 0, 9, 9]


def test_empty_grid_runs_nothing():
    got = np.zeros(4, np.float32)
    run(masked_copy_kernel(f32, 4), [np.ones(4, np.float32), got, 4], (0, 1, 1))
    assert not got.any()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), block=st.integers(1, 70), dtype=st.sampled_from([f32, f16, bf16, i32, u8]))
def test_property_masked_copy_any_shape_and_block(n, block, dtype):
    xs = (np.arange(n) % 251).astype(dtype.np)
    got = np.zeros(n, dtype.np)
    run(masked_copy_kernel(dtype, block), [xs, got, n], (-(-n // block),))
    np.testing.assert_array_equal(got, xs)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 40), bm=st.integers(1, 16), bn=st.integers(1, 16),
       dtype=st.sampled_from([f32, f16, bf16]))
def test_property_2d_masked_add(m, n, bm, bn, dtype):
    """out = x + y over an m x n array in bm x bn blocks on a 2-D grid."""
    k = KernelBuilder(x=ptr(dtype), y=ptr(dtype), out=ptr(dtype), M=i32, N=i32)
    x, y, out, M, N = k.params
    rows = k.broadcast(k.expand(k.op(Op.ADD, k.op(Op.MUL, k.pid(0), bm), k.arange(0, bm)), 1), (bm, bn))
    cols = k.broadcast(k.expand(k.op(Op.ADD, k.op(Op.MUL, k.pid(1), bn), k.arange(0, bn)), 0), (bm, bn))
    offs = k.op(Op.ADD, k.op(Op.MUL, rows, N), cols)
    mask = k.op(Op.AND, k.op(Op.LT, rows, M), k.op(Op.LT, cols, N))
    k.store(at(k, out, offs), k.op(Op.ADD, k.load(at(k, x, offs), mask), k.load(at(k, y, offs), mask)), mask)
    xs, ys = RNG.standard_normal((m, n)).astype(dtype.np), RNG.standard_normal((m, n)).astype(dtype.np)
    got = np.zeros((m, n), dtype.np)
    run(k.build(), [xs, ys, got, m, n], (-(-m // bm), -(-n // bn)))
    np.testing.assert_array_equal(got, (xs.astype(np.float64) + ys.astype(np.float64)).astype(dtype.np))
