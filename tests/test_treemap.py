"""The one tree map (ascdsl.ir.treemap): rebuilt only along changed paths, shared subtrees mapped once,
``before`` replacements unwalked, ``after`` bottom-up, ``every`` reaching source locations."""
from __future__ import annotations

from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.errors import Loc
from ascdsl.ir.treemap import fields, tree_map


def _expr():
    x = kir.Var(1, dtypes.int32, "x")
    shared = kir.Bin(kir.BinOp.MUL, x, kir.Lit(4, dtypes.int32))
    return kir.Bin(kir.BinOp.ADD, shared, kir.Bin(kir.BinOp.ADD, shared, kir.Lit(2, dtypes.int32))), shared


def test_unchanged_subtrees_are_the_same_objects():
    e, shared = _expr()
    assert tree_map(e, lambda n: None) is e
    two = kir.Lit(2, dtypes.int32)
    out = tree_map(e, lambda n: kir.Lit(3, dtypes.int32) if n == two else None)
    assert out.a is shared and out.b.a is shared and out.b.b == kir.Lit(3, dtypes.int32) and out != e


def test_a_shared_subtree_is_mapped_once_and_a_replacement_is_not_walked():
    e, shared = _expr()
    seen = []

    def before(n):
        seen.append(n)
        return kir.Lit(0, dtypes.int32) if n is shared else None
    out = tree_map(e, before)
    assert out.a is out.b.a and out.a == kir.Lit(0, dtypes.int32)
    assert sum(n is shared for n in seen) == 1 and not any(isinstance(n, kir.Var) for n in seen)


def test_after_runs_bottom_up():
    lit = lambda v: kir.Lit(v, dtypes.int32)  # noqa: E731
    e = kir.Bin(kir.BinOp.ADD, kir.Bin(kir.BinOp.ADD, lit(1), lit(2)), lit(3))

    def fold(n):
        if isinstance(n, kir.Bin) and isinstance(n.a, kir.Lit) and isinstance(n.b, kir.Lit):
            return lit(n.a.value + n.b.value)
        return None
    assert tree_map(e, after=fold) == lit(6)


def test_every_reaches_fields_left_out_of_equality():
    loc = Loc("a.py", 3, 1)
    s = kir.Let(kir.Var(1, dtypes.int32, "x"), kir.Lit(1, dtypes.int32), loc=loc)
    assert "loc" not in fields(kir.Let) and "loc" in fields(kir.Let, every=True)
    move = lambda n: Loc("b.py", n.line, n.col) if isinstance(n, Loc) else None  # noqa: E731
    assert tree_map(s, move).loc is loc
    assert tree_map(s, move, every=True).loc == Loc("b.py", 3, 1)
    assert fields(int) is None and fields(dtypes.DType) is None
