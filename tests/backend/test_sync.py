"""The sync pass on hand-built kernel IR: barriers from per-slot reads and writes, V_S flags."""
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.plan import ubplan
from ascdsl.backend.kir import Barrier, Buf, Call, Elem, Flag, For, Ref, Role, Set, Var, VarKind, lit
from ascdsl.backend.plan.sync import sync
from ascdsl.platforms import get_platform

F32 = dtypes.float32


def _buf(key, hint):
    return Buf(key, Role.TILE, F32, hint)


def _ref(b):
    return Ref(b, F32, lit(0), 64)


def _kernel(body, members=()):
    seg = kir.Segment(1, (), tuple(body), ())
    k = kir.Kernel("k", (), (), (seg,), tuple(members))
    from ascdsl.backend.plan.staging import stage
    return stage(ubplan.plan_ub(k, get_platform()))


def _stage_body(k):
    return [s for s in sync(k).stages[0].body if not isinstance(s, kir.Local)]


def test_barriers_only_between_dependent_vector_calls():
    a, b, c, d = _buf(1, "a"), _buf(2, "b"), _buf(3, "c"), _buf(4, "d")
    body = [Call("Duplicate", _ref(a), (), (lit(0), lit(64))),
            Call("Duplicate", _ref(b), (), (lit(1), lit(64))),  # independent of the first: no barrier
            Call("Add", _ref(c), (_ref(a), _ref(b)), (lit(64),)),  # reads both: barrier
            Call("Exp", _ref(d), (_ref(c),), (lit(64),))]  # reads c: barrier
    out = _stage_body(_kernel(body))
    kinds = ["|" if isinstance(s, Barrier) else s.api for s in out]
    # TBufs may hold an earlier stage's results, so the first write waits too
    assert kinds == ["|", "Duplicate", "Duplicate", "|", "Add", "|", "Exp"]


def test_a_loop_that_carries_a_dependence_gets_a_barrier_per_iteration_an_independent_one_does_not():
    acc, src = _buf(1, "acc"), _buf(2, "src")
    r = Var(-5, dtypes.int32, "r", VarKind.LOOP)
    init = [Call("Duplicate", _ref(src), (), (lit(0), lit(64))), Call("Duplicate", _ref(acc), (), (lit(0), lit(64)))]
    carried = For(r, lit(0), lit(4), lit(1), (Call("Add", _ref(acc), (_ref(acc), _ref(src)), (lit(8),)),))
    chunks = For(r, lit(0), lit(4), lit(1), (Call("Add", _ref(acc), (_ref(acc), _ref(src)), (lit(8),)),), True)
    loop = next(s for s in _stage_body(_kernel(init + [carried])) if isinstance(s, For))
    assert isinstance(loop.body[0], Barrier)
    out = _stage_body(_kernel(init + [Call("Exp", _ref(src), (_ref(src),), (lit(64),)), chunks]))
    loop = next(s for s in out if isinstance(s, For))
    assert not any(isinstance(s, Barrier) for s in loop.body) and isinstance(out[out.index(loop) - 1], Barrier)


def test_a_scalar_read_of_a_vector_result_waits_for_a_v_s_flag():
    block, work, x = _buf(1, "scalar"), _buf(2, "work"), _buf(3, "x")
    total = Var(7, F32, "total", VarKind.MEMBER)
    body = [Call("Duplicate", _ref(x), (), (lit(1), lit(64))),
            Call("ReduceSum", Ref(block, F32, lit(0), 8), (_ref(x),), (lit(64),), work=(_ref(work),)),
            Set(total, Elem(Ref(block, F32, lit(0), 8), 0)),
            Set(total, Elem(Ref(block, F32, lit(0), 8), 0))]  # no vector write since the last flag
    out = _stage_body(_kernel(body, [total]))
    flags = [i for i, s in enumerate(out) if isinstance(s, Flag)]
    assert len(flags) == 1 and isinstance(out[flags[0] + 1], Set)
