"""The IR text form: exact round trips and located parse errors."""
import dataclasses
import math
import os

import pytest

from ascdsl.dtypes import PointerType, bfloat16, bool_, float16, float32, int32
from ascdsl.errors import Loc
from ascdsl.ir import Builder, IRParseError, Module, Op, Type, dump, parse

L = Loc(os.path.abspath("ops/x.py"), 3, 5)  # recorded absolute, printed relative to the working directory


def sample_module() -> Module:
    """A kernel touching every syntactic form: attrs of each kind, tiles, pointers, regions."""
    b = Builder()
    with b.block([Type(PointerType(float32)), Type(int32)]) as (p, n):
        one = b.one(Op.CONST, Type(int32), attrs=[("value", 1)], loc=L)
        nan = b.one(Op.CONST, Type(float32, (4,)), attrs=[("value", float("nan"))], loc=L)
        b.one(Op.CONST, Type(float16, (4, 8)), loc=L, attrs=[
            ("value", -1.5e-7), ("s", 'a"b'), ("t", (1, 2)), ("d", bfloat16), ("z", None),
            ("e", ()), ("i", math.inf), ("j", -math.inf), ("k", True), ("big", 1e20)])
        b.one(Op.BROADCAST, Type(PointerType(float32), (4,)), [p], loc=L)
        with b.block([Type(int32), Type(float32, (4,))]) as (_, acc):
            b.emit(Op.YIELD, [], [acc], loc=L)
        b.emit(Op.FOR, [Type(float32, (4,))], [one, n, one, nan], regions=[b.last_block], loc=L)
        cond = b.one(Op.LT, Type(bool_), [one, n], loc=Loc("<unknown>", 0, 0))
        with b.block([]):
            b.emit(Op.YIELD, [], [one], loc=L)
        then = b.last_block
        with b.block([]):
            b.emit(Op.YIELD, [], [n], loc=L)
        b.emit(Op.IF, [Type(int32)], [cond], regions=[then, b.last_block], loc=L)
    kernel = b.kernel("k", ["p", "n"], [("BLOCK", 4), ("F", 1.0), ("DT", float16)], loc=L)
    return Module((kernel, kernel))


def test_dump_parse_round_trip_is_exact():
    module = sample_module()
    text = dump(module)
    parsed = parse(text)
    assert parsed == module
    assert dump(parsed) == text


def test_locations_survive_the_round_trip():
    """An instruction's location takes no part in equality; the kernel's does: a cache keyed by a kernel never
    hands an identical kernel written elsewhere the first one's source lines."""
    parsed = parse(dump(sample_module()))
    first = parsed.kernels[0].body.body[0]
    assert first.loc == L and parsed.kernels[0].loc == L
    assert 'loc("ops/x.py":3:5)' in dump(parsed)
    kernel = parsed.kernels[0]
    moved = dataclasses.replace(first, loc=Loc(L.file, 9, 1))
    assert kernel.with_body(dataclasses.replace(kernel.body, body=(moved, *kernel.body.body[1:]))) == kernel
    assert dataclasses.replace(kernel, loc=Loc(os.path.abspath("ops/y.py"), 3, 5)) != kernel


def test_printed_form_is_readable():
    text = dump(sample_module())
    assert "kernel @k(%0 p: ptr<f32>, %1 n: i32) constexprs(BLOCK = 4, F = 1.0, DT = f16)" in text
    assert "= for %2, %1, %2, %3 : tile<4xf32>" in text
    assert "^(%" in text and "yield" in text


@pytest.mark.parametrize("mutate, message", [
    (lambda t: t.replace("= add", "= addd").replace("= lt", "= ltt"), "unknown op 'ltt'"),
    (lambda t: t.replace("lt %2, %1", "lt %2, %99"), "%99 is used before it is defined"),
    (lambda t: t.replace(": tile<4xf32> loc", ": tile<4xf32>, i32 loc", 1), "1 results but 2 types"),
    (lambda t: t.replace("kernel @k", "kernel k", 1), "line 1"),
    (lambda t: t.replace("f16)", "q16)", 1), "unknown dtype 'q16'"),
])
def test_malformed_text_is_a_clear_error(mutate, message):
    with pytest.raises(IRParseError, match=message.replace("(", r"\(")):
        parse(mutate(dump(sample_module())))
