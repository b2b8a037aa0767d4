"""Host code's expressions are data: a host function's Python expressions lower to expression nodes (the
kernel IR's, and the host's own in :mod:`ascdsl.backend.kir.host`) carrying Python's semantics, and the
kernel's emitter prints them as C++ with C++'s grouping."""
from __future__ import annotations

import ast

import pytest

from ascdsl.backend.host.hostexpr import HostExpressions
from ascdsl.backend.kir import Bin, BinOp, Brace, Cond, Conv, Not
from ascdsl.backend.kir.host import (HostType, Ident, Init, Invoke, Logic, Member, Neg, Paren, Runtime,
                                     Scoped, Value)
from ascdsl.backend.render.emit import host_expr
from ascdsl.op import load_operators

from .test_host_errors import op_file

X, N = Ident("x"), Ident("n")


@pytest.mark.parametrize("node, text", [
    (Value(7), "7"),
    (Value(-2**31), "-2147483648"),
    (Value(2**40), "INT64_C(1099511627776)"),
    (Value(0.5), "0.5"),
    (Value(float("-inf")), "-std::numeric_limits<double>::infinity()"),
    (Value('a "b"??=\n'), r'"a \"b\"\?\?=\n"'),
    (Value(True), "true"),
    (Scoped(HostType.DTYPE, "BFLOAT16"), "ascdsl_host::DType::BFLOAT16"),
    (Invoke(Runtime.MAKE_SHAPE, (Brace((Value(2), N)),)), "ascdsl_host::MakeShape({2, n})"),
    (Invoke(Runtime.MIN, (N, Value(4)), HostType.INT), "std::min<int64_t>(n, 4)"),
    (Init(HostType.INT, Member(Member(X, "shape"), "ndim")), "int64_t{x.shape.ndim}"),
    (Conv(HostType.FLOAT, N), "static_cast<double>(n)"),
    (Not(Invoke(Runtime.SHAPE_EQ, (X, X))), "!ascdsl_host::ShapeEq(x, x)"),
    (Not(Paren(Bin(BinOp.LT, N, Value(0)))), "!(n < 0)"),
    (Neg(Paren(N)), "-(n)"),
    (Paren(Logic(False, (Bin(BinOp.EQ, N, Value(1)), Bin(BinOp.EQ, N, Value(2))))), "(n == 1 || n == 2)"),
    (Bin(BinOp.ADD, Bin(BinOp.LT, N, Value(1)), Value(1)), "(n < 1) + 1"),
    (Cond(Logic(True, (N, X)), Value(1), Value(2)), "(n && x) ? 1 : 2"),
])
def test_host_nodes_print_as_cpp(node, text):
    assert host_expr(node) == text


def test_host_expressions_lower_to_nodes_with_pythons_semantics(tmp_path):
    path, _ = op_file(tmp_path, """
        a = x.shape[-1] // 3
        b = -x.numel % 4 if x.ndim in (2, 3) else max(x.numel, 1)
        c = x.dtype == "float16" and not x.numel
        LAUNCH""")
    (op,) = load_operators([path])
    lowering = HostExpressions(op, op.host, None, ())
    a, b, c = (lowering.expr(s.value) for s in lowering.body if isinstance(s, ast.Assign))
    last = Invoke(Runtime.DIM, (Member(X, "shape"), Value(-1)))
    assert (a.type, a.node) == (HostType.INT, Invoke(Runtime.FLOOR_DIV, (last, Value(3))))
    numel, ndim = Invoke(Runtime.NUMEL, (Member(X, "shape"),)), Member(Member(X, "shape"), "ndim")
    assert (b.type, b.node) == (HostType.INT, Paren(Cond(
        Paren(Logic(False, (Bin(BinOp.EQ, ndim, Value(2)), Bin(BinOp.EQ, ndim, Value(3))))),
        Invoke(Runtime.FLOOR_MOD, (Neg(Paren(numel)), Value(4))),
        Invoke(Runtime.MAX, (numel, Value(1)), HostType.INT))))
    assert (c.type, c.node) == (HostType.BOOL, Paren(Logic(True, (
        Bin(BinOp.EQ, Member(X, "dtype"), Scoped(HostType.DTYPE, "FLOAT16")),
        Not(Paren(Bin(BinOp.NE, numel, Value(0))))))))
    assert host_expr(b.node) == ("((x.shape.ndim == 2 || x.shape.ndim == 3) ? ascdsl_host::FloorMod(-(ascdsl_host::"
                                 "Numel(x.shape)), 4) : std::max<int64_t>(ascdsl_host::Numel(x.shape), 1))")
