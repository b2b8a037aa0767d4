"""Every accepted construct compiles to the expected IR (ops, types, shapes, attributes)."""
import math
import os

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import semantics
from ascdsl.errors import display_path
from ascdsl.ir import Op, Type, walk
from ascdsl.ir.core import GroupOp
from tests.kernels.basic import add_kernel, scale_add_kernel, softmax_kernel

P = tl.pointer_type
F32, F16, BF16, I32 = P(tl.float32), P(tl.float16), P(tl.bfloat16), P(tl.int32)
GLOBAL_SCALE = 3
GLOBAL_BLOCK = tl.constexpr(16)


def kernel_of(fn, *args, **constexprs):
    (kernel,) = fn.specialize(*args, **constexprs).kernels
    return kernel


def ops(kernel):
    return [i.op for i in walk(kernel.body)]


def the(kernel, op):
    (instr,) = [i for i in walk(kernel.body) if i.op == op]
    return instr


def last(kernel, op):
    return [i for i in walk(kernel.body) if i.op == op][-1]


def stored(kernel):
    """The type of the value of the (only) store."""
    return the(kernel, Op.STORE).operands[1].type


# ----------------------------------------------------------------------------- core kernels

def test_vector_add():
    k = kernel_of(add_kernel, F32, F32, F32, 100, BLOCK=64)
    assert k.param_names == ("x_ptr", "y_ptr", "out_ptr", "n") and k.constexprs == (("BLOCK", 64),)
    assert [p.type for p in k.params] == [Type(F32)] * 3 + [Type(tl.int32)]
    assert ops(k) == [Op.PROGRAM_ID, Op.CONST, Op.MUL, Op.ARANGE, Op.ADD, Op.LT, Op.PTR_ADD, Op.CONST, Op.LOAD,
                      Op.PTR_ADD, Op.CONST, Op.LOAD, Op.PTR_ADD, Op.ADD, Op.STORE]
    load = [i for i in walk(k.body) if i.op == Op.LOAD][0]
    assert load.result.type == Type(tl.float32, (64,))
    # a masked load without `other` reads 0 in its masked lanes (an explicit `other` in the IR)
    assert load.attrs == (("has_mask", True), ("has_other", True))
    assert next(i for i in walk(k.body) if i.result is load.operands[2]).attr("value") == 0
    assert the(k, Op.ARANGE).attrs == (("start", 0), ("end", 64))
    assert the(k, Op.STORE).attrs == (("has_mask", True),)


def test_every_instruction_has_a_user_location():
    k = kernel_of(softmax_kernel, F16, F16, 10, 10, BLOCK=32)
    assert all(i.loc.file.endswith("tests/kernels/basic.py") and i.loc.line > 0 for i in walk(k.body))
    assert k.loc.line == 25


def test_scale_add_other_is_a_scalar_of_the_element_type():
    k = kernel_of(scale_add_kernel, F16, F16, F16, 2.0, 100, BLOCK=32)
    load = [i for i in walk(k.body) if i.op == Op.LOAD][0]
    assert load.operands[2].type == Type(tl.float16) and load.attr("has_other")
    # alpha is a float32 scalar: float16 * float32 promotes to float32, then the store casts back
    assert last(k, Op.MUL).result.type == Type(tl.float32, (32,))
    assert stored(k) == Type(tl.float16, (32,))


def test_softmax_reductions_are_scalars_used_without_broadcast():
    k = kernel_of(softmax_kernel, F32, F32, 10, 10, BLOCK=48)  # not a power of two
    assert the(k, Op.MAX).result.type == Type(tl.float32)
    assert the(k, Op.MAX).attrs == (("axis", 0), ("keep_dims", False))
    assert the(k, Op.SUB).operands[1].type.is_scalar
    assert Op.BROADCAST not in ops(k)


def test_specialisations_differ_by_constexpr_and_dtype():
    a = kernel_of(add_kernel, F32, F32, F32, 100, BLOCK=64)
    b = kernel_of(add_kernel, F32, F32, F32, 100, BLOCK=128)
    c = kernel_of(add_kernel, F16, F16, F16, 100, BLOCK=64)
    assert a != b and a != c and stored(c) == Type(tl.float16, (64,))
    assert kernel_of(add_kernel, F32, F32, F32, 100, BLOCK=64) is a


# ----------------------------------------------------------------------------- expressions

@ascdsl.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, OP: tl.constexpr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "div":
        z = x / y
    elif OP == "floordiv":
        z = x // y
    elif OP == "mod":
        z = x % y
    elif OP == "and":
        z = x & y
    elif OP == "or":
        z = x | y
    elif OP == "xor":
        z = x ^ y
    elif OP == "lt":
        z = x < y
    elif OP == "le":
        z = x <= y
    elif OP == "gt":
        z = x > y
    elif OP == "ge":
        z = x >= y
    elif OP == "eq":
        z = x == y
    elif OP == "ne":
        z = x != y
    elif OP == "maximum":
        z = tl.maximum(x, y)
    else:
        z = tl.minimum(x, y)
    tl.store(out_ptr + offs, z)


BINARY_CASES = [("add", Op.ADD), ("sub", Op.SUB), ("mul", Op.MUL), ("div", Op.DIV),
                ("floordiv", Op.IDIV), ("mod", Op.MOD), ("and", Op.AND), ("or", Op.OR),
                ("xor", Op.XOR), ("lt", Op.LT), ("le", Op.LE), ("gt", Op.GT), ("ge", Op.GE),
                ("eq", Op.EQ), ("ne", Op.NE), ("maximum", Op.MAXIMUM), ("minimum", Op.MINIMUM)]


@pytest.mark.parametrize("name, op", BINARY_CASES)
def test_binary_operators_on_int_tiles(name, op):
    k = kernel_of(binary_kernel, I32, I32, P(tl.int1) if op in GroupOp.COMPARE else I32, OP=name)
    instr = the(k, op)
    result = tl.float32 if op == Op.DIV else tl.int1 if op in GroupOp.COMPARE else tl.int32
    assert instr.result.type == Type(result, (8,))
    if op == Op.DIV:  # int / int is float32: both operands are cast first
        assert [o.type.dtype for o in instr.operands] == [tl.float32, tl.float32]


@pytest.mark.parametrize("name, op", [c for c in BINARY_CASES if c[1] not in (Op.IDIV, Op.MOD, Op.AND, Op.OR, Op.XOR)])
def test_binary_operators_keep_float16(name, op):
    k = kernel_of(binary_kernel, F16, F16, P(tl.int1) if op in GroupOp.COMPARE else F16, OP=name)
    assert [o.type.dtype for o in the(k, op).operands] == [tl.float16, tl.float16]
    assert Op.CAST not in ops(k)


def test_promotion_float16_with_bfloat16_is_float32():
    k = kernel_of(binary_kernel, F16, BF16, F32, OP="add")
    add = the(k, Op.ADD)
    assert add.result.type.dtype == tl.float32
    assert [i.attr("dtype") for i in walk(k.body) if i.op == Op.CAST] == [tl.float32, tl.float32]


def test_promotion_int_with_float_and_widths():
    assert stored(kernel_of(binary_kernel, I32, F16, F16, OP="add")) == Type(tl.float16, (8,))
    assert the(kernel_of(binary_kernel, I32, F16, F16, OP="add"), Op.ADD).result.type.dtype == tl.float16
    assert the(kernel_of(binary_kernel, F16, F32, F32, OP="mul"), Op.MUL).result.type.dtype == tl.float32
    k = kernel_of(binary_kernel, P(tl.int8), P(tl.int16), P(tl.int16), OP="add")
    assert the(k, Op.ADD).result.type.dtype == tl.int16
    k = kernel_of(binary_kernel, P(tl.uint8), P(tl.int8), P(tl.uint8), OP="add")
    assert the(k, Op.ADD).result.type.dtype == tl.uint8


def test_bool_bitwise_stays_bool():
    k = kernel_of(binary_kernel, P(tl.int1), P(tl.int1), P(tl.int1), OP="and")
    assert the(k, Op.AND).result.type == Type(tl.int1, (8,))


@ascdsl.jit
def literal_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 4)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, (x * 2.0 + 1) / 3 - -x)


@pytest.mark.parametrize("dtype", [tl.float16, tl.bfloat16, tl.float32])
def test_literals_are_weak(dtype):
    k = kernel_of(literal_kernel, P(dtype), P(dtype))
    assert {i.result.type for i in walk(k.body) if i.op == Op.CONST} == {Type(dtype)}
    assert [i.attr("value") for i in walk(k.body) if i.op == Op.CONST] == [2.0, 1.0, 3.0]
    assert Op.CAST not in ops(k) and Op.BROADCAST not in ops(k)
    assert ops(k)[-3:] == [Op.NEG, Op.SUB, Op.STORE]


def test_int_literal_with_int_tile_and_float_literal_with_int_tile():
    k = kernel_of(literal_kernel, I32, F32)
    consts = [i for i in walk(k.body) if i.op == Op.CONST]
    assert [c.result.type.dtype for c in consts] == [tl.float32, tl.float32, tl.float32]
    mul = the(k, Op.MUL)  # the int tile is cast to float32 for `x * 2.0`
    assert mul.operands[0].type == Type(tl.float32, (4,))


@ascdsl.jit
def broadcast_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs)
    row_max = tl.max(x, axis=1, keep_dims=True)
    tl.store(out_ptr + offs, x - row_max + cols)


def test_two_dimensional_pointers_and_broadcast():
    k = kernel_of(broadcast_kernel, F32, F32, M=4, N=8)
    dims = [i for i in walk(k.body) if i.op == Op.EXPAND_DIMS]
    assert [(d.attr("axis"), d.result.type.shape) for d in dims][:2] == [(1, (4, 1)), (0, (1, 8))]
    assert the(k, Op.LOAD).result.type == Type(tl.float32, (4, 8))
    assert the(k, Op.MAX).result.type == Type(tl.float32, (4, 1))
    for i in walk(k.body):  # elementwise operands are scalars or already of the result shape
        if i.op in GroupOp.ELEMENTWISE:
            assert all(o.type.shape in ((), i.result.type.shape) for o in i.operands), i
    # broadcast only stretches unit axes: a (8,) tile is first expanded to (1, 8)
    assert all(len(i.operands[0].type.shape) == len(i.result.type.shape) for i in walk(k.body) if i.op == Op.BROADCAST)
    assert stored(k) == Type(tl.float32, (4, 8))


@ascdsl.jit
def reduce_kernel(x_ptr, out_ptr, OP: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    x = tl.load(x_ptr + offs)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "sum32":
        r = tl.sum(x, AXIS, KEEP, dtype=tl.float32)
    elif OP == "max":
        r = tl.max(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "min":
        r = x.min(axis=AXIS, keep_dims=KEEP)
    elif OP == "argmax":
        r = tl.argmax(x, axis=AXIS, keep_dims=KEEP)
    else:
        r = tl.argmin(x, AXIS)
    tl.static_assert(r.dtype == out_ptr.dtype.element_ty, "wrong result dtype")
    total = r
    for _ in tl.static_range(len(r.shape)):
        total = tl.sum(total, axis=0)
    tl.store(out_ptr, total)


@pytest.mark.parametrize("op, x, result", [
    ("sum", tl.float16, tl.float16), ("sum", tl.bfloat16, tl.bfloat16), ("sum", tl.int8, tl.int32),
    ("sum", tl.int1, tl.int32), ("sum", tl.int64, tl.int64), ("sum32", tl.float16, tl.float32),
    ("max", tl.float16, tl.float32), ("max", tl.bfloat16, tl.float32), ("max", tl.float32, tl.float32),
    ("max", tl.int8, tl.int8), ("min", tl.float16, tl.float32), ("argmax", tl.float16, tl.int32),
    ("argmin", tl.float32, tl.int32)])
def test_reduction_result_dtypes(op, x, result):
    k = kernel_of(reduce_kernel, P(x), P(result), OP=op, AXIS=0, KEEP=False)
    reduced = [i for i in walk(k.body) if i.op in GroupOp.REDUCE][0]
    assert reduced.result.type == Type(result, (8,))
    first = semantics.reduce_types(reduced.op, x, tl.float32 if op == "sum32" else None)[0]
    assert reduced.operands[0].type.dtype == first


@pytest.mark.parametrize("axis, keep, shape", [(0, False, (8,)), (1, False, (4,)), (-1, True, (4, 1)),
                                               (None, False, ()), (None, True, (1, 1))])
def test_reduction_axes(axis, keep, shape):
    k = kernel_of(reduce_kernel, F32, F32, OP="sum", AXIS=axis, KEEP=keep)
    first = [i for i in walk(k.body) if i.op == Op.SUM][0]
    assert first.result.type.shape == shape
    assert first.attrs == (("axis", None if axis is None else axis % 2), ("keep_dims", keep))


@ascdsl.jit
def math_kernel(x_ptr, out_ptr, FN: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "log":
        y = tl.log(x)
    elif FN == "sqrt":
        y = tl.sqrt(x)
    elif FN == "rsqrt":
        y = tl.rsqrt(x)
    elif FN == "abs":
        y = tl.abs(x)
    elif FN == "sigmoid":
        y = x.sigmoid()
    elif FN == "neg":
        y = -x
    elif FN == "where":
        y = tl.where(x > 0, x, 0.0)
    else:
        y = ~(x > 0.5)
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("fn, op", [("exp", Op.EXP), ("log", Op.LOG), ("sqrt", Op.SQRT), ("rsqrt", Op.RSQRT),
                                    ("abs", Op.ABS), ("sigmoid", Op.SIGMOID), ("neg", Op.NEG), ("where", Op.WHERE)])
@pytest.mark.parametrize("dtype", [tl.float16, tl.bfloat16, tl.float32])
def test_math_keeps_the_float_dtype(fn, op, dtype):
    k = kernel_of(math_kernel, P(dtype), P(dtype), FN=fn)
    assert the(k, op).result.type == Type(dtype, (16,))
    assert Op.CAST not in ops(k)


def test_where_takes_a_weak_literal_and_invert_negates_a_mask():
    k = kernel_of(math_kernel, F16, F16, FN="where")
    operands = [o.type for o in the(k, Op.WHERE).operands]
    assert operands == [Type(tl.int1, (16,)), Type(tl.float16, (16,)), Type(tl.float16)]
    k = kernel_of(math_kernel, F32, P(tl.int1), FN="invert")
    assert the(k, Op.NOT).result.type == Type(tl.int1, (16,))


@ascdsl.jit
def misc_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(1)
    nprog = tl.num_programs(2)
    zeros = tl.zeros((BLOCK,), dtype=tl.float32)
    full = tl.full([BLOCK], 1.5, tl.float16)
    runtime_full = tl.full((BLOCK,), n, tl.float32)
    x = tl.load(x_ptr + pid * nprog)  # a scalar load
    tl.store(out_ptr + tl.arange(0, BLOCK), zeros + full + runtime_full + x)


def test_program_ids_constants_and_scalar_loads():
    k = kernel_of(misc_kernel, F32, F32, 5, BLOCK=24)
    assert the(k, Op.PROGRAM_ID).attrs == (("axis", 1),) and the(k, Op.NUM_PROGRAMS).attrs == (("axis", 2),)
    consts = [i for i in walk(k.body) if i.op == Op.CONST]
    assert [(c.attr("value"), c.result.type) for c in consts] == [
        (0.0, Type(tl.float32, (24,))), (1.5, Type(tl.float16, (24,)))]
    assert the(k, Op.LOAD).result.type == Type(tl.float32)
    # tl.full with a runtime scalar: cast, then broadcast the scalar
    broadcast = the(k, Op.BROADCAST)
    assert broadcast.operands[0].type == Type(tl.float32) and broadcast.result.type == Type(tl.float32, (24,))


@ascdsl.jit
def constexpr_kernel(out_ptr, N: tl.constexpr, FLAG: tl.constexpr):
    a = ascdsl.cdiv(N, 4) * 2 ** 3 + GLOBAL_SCALE
    b = min(N, 7) + max(1, 2) + len((1, 2, 3)) + int(2.5) + int(math.log2(8)) + int(bool(FLAG))
    c = N // 3 if FLAG and not N < 0 else -1
    block = ascdsl.next_power_of_2(N) + GLOBAL_BLOCK
    tl.static_assert(N > 0 and N < 100, "N is out of range")
    shape = tl.zeros((2, 3), tl.int32).shape
    inf = float("inf") > 1e30
    tl.store(out_ptr + tl.arange(0, 1), a + b + c + block + shape[1] + inf)


def test_constexpr_expressions_fold_without_ir():
    k = kernel_of(constexpr_kernel, I32, N=10, FLAG=True)
    # a = 3 * 8 + 3, b = 7 + 2 + 3 + 2 + 3 + 1, c = 3, block = 16 + 16, shape[1] = 3, inf = True
    assert ops(k) == [Op.CONST, Op.ARANGE, Op.PTR_ADD, Op.CONST, Op.BROADCAST, Op.STORE]
    assert [i.attr("value") for i in walk(k.body) if i.op == Op.CONST] == [0, 84]
    k = kernel_of(constexpr_kernel, I32, N=10, FLAG=False)  # c = -1, b loses bool(FLAG)
    assert [i.attr("value") for i in walk(k.body) if i.op == Op.CONST] == [0, 79]


def test_helper_functions_are_inlined():
    k = kernel_of(helper_caller, F32, F32, 64, BLOCK=32)
    assert ops(k).count(Op.LOAD) == 2 and Op.EXP in ops(k)
    # locations point into the helper's own lines
    exp = the(k, Op.EXP)
    assert exp.loc.line == HELPER_EXP_LINE


@ascdsl.jit
def helper_exp(x, scale: tl.constexpr):
    return tl.exp(x * scale)


HELPER_EXP_LINE = helper_exp.parsed.tree.lineno + 1


@ascdsl.jit
def helper_load(ptr, offs, mask):
    a = tl.load(ptr + offs, mask=mask, other=0.0)
    return a, offs


@ascdsl.jit()
def helper_caller(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, same = helper_load(x_ptr, offs, offs < n)
    y, _ = helper_load(ptr=x_ptr, offs=same, mask=same < n)
    tl.store(out_ptr + offs, helper_exp(x + y, scale=2.0))


# ----------------------------------------------------------------------------- control flow

@ascdsl.jit
def loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    count = 0
    scale = 2.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        count += 1
    tl.store(out_ptr + tl.arange(0, BLOCK), acc * scale + count)


def test_runtime_for_carries_names_assigned_in_the_body_and_live_before():
    k = kernel_of(loop_kernel, F32, F32, 100, BLOCK=16)
    loop = the(k, Op.FOR)
    lower, upper, step, *inits = loop.operands
    assert lower.type == upper.type == step.type == Type(tl.int32)
    assert [v.type for v in inits] == [Type(tl.float32, (16,)), Type(tl.int32)]  # acc, count (not scale, offs)
    assert [v.type for v in loop.results] == [Type(tl.float32, (16,)), Type(tl.int32)]
    (body,) = loop.regions
    assert [a.type for a in body.args] == [Type(tl.int32), Type(tl.float32, (16,)), Type(tl.int32)]
    assert body.body[-1].op == Op.YIELD and [v.type for v in body.body[-1].operands] == [v.type for v in inits]
    # after the loop, `acc` and `count` are the loop's results
    final_mul = last(k, Op.MUL)
    assert final_mul.operands[0] is loop.results[0]


@ascdsl.jit
def tl_range_kernel(out_ptr, n, M: tl.constexpr):
    total = 0.0
    for i in tl.range(n):
        for j in tl.static_range(1, M, 2):
            total = total + i * j
    tl.store(out_ptr, total)


def test_tl_range_and_static_range():
    k = kernel_of(tl_range_kernel, F32, 9, M=6)
    loop = the(k, Op.FOR)
    assert loop.operands[0].type == Type(tl.int32)
    assert [i.attr("value") for i in walk(k.body) if i.op == Op.CONST][:2] == [0, 1]
    # static_range(1, 6, 2) unrolls to j = 1, 3, 5: three multiplications by constants
    body_ops = [i.op for i in loop.regions[0].body]
    assert body_ops.count(Op.MUL) == 3 and Op.FOR not in body_ops
    assert [v.type for v in loop.results] == [Type(tl.float32)]


def test_int64_loop_bounds_give_an_int64_induction_variable():
    k = kernel_of(tl_range_kernel, F32, 2**40, M=2)
    assert the(k, Op.FOR).regions[0].args[0].type == Type(tl.int64)


@ascdsl.jit
def if_kernel(x_ptr, out_ptr, n, flag):
    x = tl.load(x_ptr + tl.arange(0, 8))
    y = x
    if n > 0 and not flag:
        y = x * 2.0
        z = 1.0
    else:
        z = tl.load(x_ptr)
    if n % 2 == 0:
        only_here = 1
    tl.store(out_ptr + tl.arange(0, 8), y + z)


def test_runtime_if_yields_names_assigned_in_a_branch_and_live_before_or_in_both():
    k = kernel_of(if_kernel, F32, F32, 3, True)
    (first,) = [i for i in walk(k.body) if i.op == Op.IF]  # the second if does nothing: not emitted
    assert first.operands[0].type == Type(tl.int1)
    assert [v.type for v in first.results] == [Type(tl.float32, (8,)), Type(tl.float32)]  # y, z
    then, other = first.regions
    assert then.body[-1].op == Op.YIELD and other.body[-1].op == Op.YIELD
    # the literal 1.0 becomes a constant of z's type inside the then-branch
    assert [i.op for i in then.body][-2:] == [Op.CONST, Op.YIELD]
    assert other.body[-1].operands[0] is [i for i in walk(k.body) if i.op == Op.LOAD][0].result
    assert last(k, Op.ADD).operands[0] is first.results[0]


def test_runtime_scalar_logic_and_conditional_expressions():
    k = kernel_of(if_kernel, F32, F32, 3, True)
    # `n > 0 and not flag`: flag (bool) is negated, both are combined with AND
    assert Op.NOT in ops(k) and Op.AND in ops(k)
    k2 = kernel_of(ternary_kernel, F32, 4)
    where = the(k2, Op.WHERE)
    assert where.operands[0].type == Type(tl.int1) and where.result.type == Type(tl.float32)


@ascdsl.jit
def ternary_kernel(out_ptr, n):
    tl.store(out_ptr, 1.0 if n > 2 else 0.5)


@ascdsl.jit
def constexpr_if_kernel(out_ptr, HAS_BIAS: tl.constexpr):
    y = tl.zeros((4,), tl.float32)
    if HAS_BIAS:
        y = y + 1.0
    else:
        y = y - 1.0
    tl.store(out_ptr + tl.arange(0, 4), y)


def test_constexpr_if_is_resolved_at_compile_time():
    with_bias = kernel_of(constexpr_if_kernel, F32, HAS_BIAS=True)
    assert Op.IF not in ops(with_bias) and Op.ADD in ops(with_bias) and Op.SUB not in ops(with_bias)
    assert Op.SUB in ops(kernel_of(constexpr_if_kernel, F32, HAS_BIAS=False))


@ascdsl.jit
def runtime_helpers_kernel(out_ptr, n):
    blocks = ascdsl.cdiv(n, 16)
    p2 = ascdsl.next_power_of_2(n)
    tl.device_print("blocks", blocks, p2)
    tl.static_print("compiling", blocks, tl.arange(0, 4).shape)
    tl.store(out_ptr - 1 + blocks, p2.to(tl.float32))


def test_cdiv_next_power_of_2_and_prints_on_runtime_ints(capsys):
    k = kernel_of(runtime_helpers_kernel, F32, 5)
    assert ops(k)[:3] == [Op.CONST, Op.ADD, Op.CONST]  # (n + 16 - 1) // 16
    assert ops(k).count(Op.IDIV) == 1 + 5 and ops(k).count(Op.OR) == 5
    printed = the(k, Op.PRINT)
    assert printed.attrs == (("prefix", "blocks"),) and len(printed.operands) == 2
    assert capsys.readouterr().out == "compiling i32 scalar (4,)\n"
    assert Op.NEG not in ops(k) and -1 in [i.attr("value") for i in walk(k.body) if i.op == Op.CONST]
    assert [i.op for i in walk(k.body) if i.op == Op.PTR_ADD] == [Op.PTR_ADD, Op.PTR_ADD]


ACC_DTYPE = tl.float32


@ascdsl.jit
def syntax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs: tl.tensor = tl.arange(0, BLOCK)
    first = second = offs
    a, (b, c) = 2, (first, math.pi)
    ptrs = x_ptr + offs
    acc = tl.zeros((BLOCK,), ACC_DTYPE)
    for _ in range(n):
        acc += tl.load(ptrs).to(ACC_DTYPE)
        ptrs += BLOCK
    flag = n > 3 or n < -3
    row = acc[None]
    col = acc[:, None]
    tl.store(out_ptr + offs, acc * a + b + c + tl.where(flag, 1.0, 0.0) + tl.sum(row + col, axis=0) + second)


def test_assignment_forms_globals_and_pointer_carried_loops():
    k = kernel_of(syntax_kernel, F16, F32, 5, BLOCK=8)
    loop = the(k, Op.FOR)
    # the pointer tile and the accumulator are both loop-carried
    assert [v.type for v in loop.results] == [Type(tl.float32, (8,)), Type(F16, (8,))]  # body order
    assert [i.op for i in loop.regions[0].body].count(Op.PTR_ADD) == 1
    assert math.pi in [i.attr("value") for i in walk(k.body) if i.op == Op.CONST]
    assert Op.OR in ops(k)
    dims = [i.result.type.shape for i in walk(k.body) if i.op == Op.EXPAND_DIMS]
    assert dims[:2] == [(1, 8), (8, 1)]


def test_string_annotations_and_indented_decorated_definitions():
    from tests.kernels import future_annotations
    k = kernel_of(future_annotations.Kernels.fill, F32, 1.0, N=4)
    assert k.param_names == ("out_ptr", "value") and k.constexprs == (("N", 4), ("M", 2))
    store = the(k, Op.STORE)
    path = future_annotations.__file__
    assert (str(store.loc), store.loc.file) == (f"{display_path(path)}:13:9", os.path.abspath(path))
    line = open(path).read().splitlines()[12]
    assert the(k, Op.ARANGE).loc.col == line.index("tl.arange") + 1 == 28
