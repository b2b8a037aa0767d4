"""The last backend pass (ascdsl/backend/simplify.py): literal arithmetic folded, loops that run once
unrolled, known branches taken, unread definitions dropped, on hand-written kernel IR."""
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.kir import Bin, BinOp, Brace, Call, Cond, Conv, Field, For, If, Let, Ref, Var, VarKind, lit
from ascdsl.backend.names.simplify import simplify

F32 = dtypes.float32
BUF = kir.Buf(1, kir.Role.TILE, F32, "x")
R = Var(2, dtypes.int32, "r", VarKind.LOOP)
N = Field("N", dtypes.int32)


def _process(*body):
    return simplify(kir.Kernel("k", (), (), tuple(body))).process


def _add(offset, count):
    return Call("Adds", Ref(BUF, F32, offset, 4096), (Ref(BUF, F32, offset, 4096),), (kir.Lit(1.0, F32), count))


def test_a_loop_that_runs_once_is_its_body_at_the_start_value():
    rest = Bin(BinOp.SUB, lit(1), R)
    loop = For(R, lit(0), lit(1), lit(255), (_add(Bin(BinOp.MUL, R, lit(64)), kir.minimum(rest, lit(255))),))
    assert _process(loop) == (_add(lit(0), lit(1)),)
    step = For(R, lit(3), lit(64), lit(64), (_add(R, lit(8)),))  # one iteration: the step passes the stop
    assert _process(step) == (_add(lit(3), lit(8)),)


def test_loops_that_never_run_vanish_and_loops_of_unknown_trips_stay():
    assert _process(For(R, lit(5), lit(5), lit(1), (_add(R, lit(8)),))) == ()
    kept = For(R, lit(0), N, lit(64), (_add(R, lit(8)),))
    assert _process(kept) == (kept,)
    twice = For(R, lit(0), lit(2), lit(1), (_add(R, lit(8)),))
    assert _process(twice) == (twice,)


def test_a_known_condition_takes_its_branch_and_if_constexpr_stays():
    c = Bin(BinOp.LT, lit(2), lit(3))
    assert _process(If(c, (_add(lit(0), lit(1)),), orelse=(_add(lit(0), lit(2)),))) == (_add(lit(0), lit(1)),)
    assert _process(If(Bin(BinOp.GE, lit(2), lit(3)), (_add(lit(0), lit(1)),))) == ()
    static = If(kir.FLOAT_INSTANCE, (_add(lit(0), lit(1)),), static=True)
    assert _process(static) == (static,)


def test_integer_literals_fold_with_c_semantics_and_never_overflow():
    v = Var(3, dtypes.int32, "v")
    def folded(e):
        return _process(Let(v, e), _add(v, lit(1)))[0].expr
    assert folded(Bin(BinOp.DIV, lit(-7), lit(2))) == lit(-3)  # C truncates toward zero
    assert folded(Bin(BinOp.MOD, lit(-7), lit(2))) == lit(-1)
    assert folded(Bin(BinOp.ADD, N, lit(0))) == N
    assert folded(Bin(BinOp.MUL, Conv(dtypes.int64, N), lit(0))) == lit(0)
    big = Bin(BinOp.MUL, lit(1 << 20), lit(1 << 20))  # would not fit int32: left for the compiler to see
    wide = Conv(dtypes.int64, lit(3))
    assert folded(Bin(BinOp.MUL, wide, lit(5))) == Conv(dtypes.int64, lit(15))  # still widens what it meets
    assert folded(Bin(BinOp.ADD, N, Conv(dtypes.int64, lit(0)))) != N  # N + (int64)0 is an int64
    unsigned = Conv(dtypes.uint8, lit(0))
    assert folded(Bin(BinOp.SUB, unsigned, lit(1))) == Bin(BinOp.SUB, unsigned, lit(1))  # C's unsigned rules
    assert folded(big) == big
    choice = Cond(Bin(BinOp.LE, N, lit(255)), lit(255), lit(1))
    assert folded(kir.minimum(lit(1), choice)) == lit(1)  # min(1, b) where b >= 1
    assert folded(kir.minimum(lit(2), choice)) == kir.minimum(lit(2), choice)


def test_unrolling_never_defines_a_name_twice_in_one_scope_and_unread_definitions_go():
    v = Var(3, dtypes.int32, "v")
    once = For(R, lit(0), lit(1), lit(1), (Let(v, Bin(BinOp.ADD, R, N)), _add(v, lit(8))))
    out = _process(once, once)
    assert [type(s) for s in out] == [For, For]  # the same definition in both bodies: kept in their loops
    unread = Var(4, dtypes.int32, "unread")
    assert _process(Let(unread, N), _add(lit(0), lit(1))) == (_add(lit(0), lit(1)),)


def test_a_copy_of_one_burst_has_no_strides():
    u16, u32 = kir.CInt.UINT16, kir.CInt.UINT32
    params = Var(5, kir.Struct.COPY_PARAMS, "xParams")
    gm = kir.Gm(0, F32, lit(0))
    stride = Conv(u32, Bin(BinOp.SUB, lit(0), N))
    copy = Call("DataCopyPad", gm, (Ref(BUF, F32, lit(0), 4096),), (params,), pipe=kir.Pipe.MTE3)
    one = Let(params, Brace((Conv(u16, lit(1)), Conv(u32, N), stride, lit(3), lit(0))))
    assert _process(one, copy)[0].expr.items[2:4] == (lit(0), lit(0))
    two = Let(params, Brace((Conv(u16, lit(2)), Conv(u32, N), stride, lit(3), lit(0))))
    assert _process(two, copy)[0].expr.items[2:4] == (stride, lit(3))



def test_an_integer_compared_with_itself_is_known_and_a_float_only_where_nan_agrees():
    """``n < n`` (a kernel whose mask compares a scalar with itself) is not left for clang to call a
    self-comparison; for a float ``x <= x`` and ``x == x`` stay (false for NaN), ``x < x`` is false."""
    use = lambda c: If(c, (_add(lit(0), lit(1)),), orelse=(_add(lit(0), lit(2)),))  # noqa: E731
    for op, taken in ((BinOp.LT, 2), (BinOp.NE, 2), (BinOp.GE, 1), (BinOp.EQ, 1)):
        assert _process(use(Bin(op, N, N))) == (_add(lit(0), lit(taken)),)
    x = Field("X", F32)
    assert _process(use(Bin(BinOp.GT, x, x))) == (_add(lit(0), lit(2)),)
    for op in (BinOp.LE, BinOp.EQ, BinOp.NE):
        assert _process(use(Bin(op, x, x))) == (use(Bin(op, x, x)),)
