"""A constexpr given as a ``Symbol`` (a run-time tile extent) compiles to tile IR whose shapes and
constants are polynomials of it, which ``ir/text.py`` prints and parses back (issue 25, step 2 of the
"Symbolic tile extents" plan in docs/design.md; the build does not use it yet)."""
from __future__ import annotations

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.ir import Op, Type, dump, parse, walk
from ascdsl.ir.symbol import Poly, Symbol, Undecided
from ascdsl.lib import load_flat_rows, store_flat_rows

F32 = tl.pointer_type(tl.float32)
BLOCK = Symbol("BLOCK", 8, 8, 4096)


@ascdsl.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@ascdsl.jit
def halves_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, PARTS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK // PARTS) * PARTS
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


def _kernel(fn, *args, **constexprs):
    (kernel,) = fn.specialize(*args, **constexprs).kernels
    return kernel


def test_a_symbolic_block_is_a_shape_and_a_constant_of_the_tile_ir():
    kernel = _kernel(copy_kernel, F32, F32, tl.int32, BLOCK=BLOCK)
    assert dict(kernel.constexprs) == {"BLOCK": BLOCK}
    block = Poly.var(BLOCK)
    shapes = {r.type.shape for i in walk(kernel.body) for r in i.results}
    assert shapes == {(), (block,)}
    assert [i.attr("end") for i in walk(kernel.body) if i.op is Op.ARANGE] == [block]
    assert [i.attr("value") for i in walk(kernel.body) if i.op is Op.CONST and i.results[0].type.dtype.is_int] == [block]
    text = dump(kernel)
    assert "constexprs(BLOCK = symbol(BLOCK, 8, 8, 4096))" in text and ": tile<(BLOCK)xf32>" in text
    assert 'const {value = symint("BLOCK")} : i32' in text
    assert parse(text).kernels == (kernel,) and dump(parse(text)) == text


def test_trace_time_arithmetic_on_a_symbol_is_exact():
    kernel = _kernel(halves_kernel, F32, F32, BLOCK=BLOCK, PARTS=2)
    (arange,) = [i for i in walk(kernel.body) if i.op is Op.ARANGE]
    assert arange.results[0].type == Type(tl.int32, (Poly.var(BLOCK) // 2,))
    text = dump(kernel)
    assert "tile<(1/2 * BLOCK)xi32>" in text and parse(text).kernels == (kernel,)


def test_a_division_the_symbol_s_quantum_does_not_admit_is_undecided():
    with pytest.raises(Undecided, match="not a multiple of 16"):  # BLOCK is a multiple of 8 only
        _kernel(halves_kernel, F32, F32, BLOCK=BLOCK, PARTS=16)


def test_an_unknown_symbol_in_ir_text_is_a_parse_error():
    text = dump(_kernel(copy_kernel, F32, F32, tl.int32, BLOCK=BLOCK))
    with pytest.raises(ValueError, match="'ROWS' in 'ROWS' is no symbol"):
        parse(text.replace('symint("BLOCK")', 'symint("ROWS")'))


@ascdsl.jit
def flat_rows_kernel(x_ptr, out_ptr, end, ROWS: tl.constexpr, K: tl.constexpr):
    rows = load_flat_rows(x_ptr, 0, end, ROWS, K)
    store_flat_rows(out_ptr, 0, end, rows * 2.0)


@ascdsl.jit
def reshape_kernel(x_ptr, ROWS: tl.constexpr, K: tl.constexpr, TO: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, ROWS * K))
    tl.reshape(x, (K, ROWS) if TO == 0 else (ROWS * K + 8,) if TO == 1 else (ROWS, 8))


def test_a_flat_tile_of_symbols_reshapes_to_rows():
    """``tl.reshape`` of a ``[ROWS * K]`` tile to ``(ROWS, K)`` and back (``ascdsl.lib``'s flat rows), symbols both."""
    rows, k = Symbol("ROWS", 1, 1, 400), Symbol("K", 8, 8, 4096)
    kernel = _kernel(flat_rows_kernel, F32, F32, tl.int32, ROWS=rows, K=k)
    shapes = [i.results[0].type.shape for i in walk(kernel.body) if i.op is Op.RESHAPE]
    flat, tile = (Poly.var(rows) * Poly.var(k),), (Poly.var(rows), Poly.var(k))
    assert shapes == [tile, flat]
    text = dump(kernel)
    assert "tile<(ROWS)x(K)xf32>" in text and parse(text).kernels == (kernel,)


def test_a_reshape_of_symbols_checks_the_element_counts_on_the_domain():
    """The counts agree at every point (a reshape), at none (a located error), or at some: ``Undecided``."""
    rows, k = Symbol("ROWS", 1, 1, 400), Symbol("K", 8, 8, 4096)
    _kernel(reshape_kernel, F32, ROWS=rows, K=k, TO=0)
    with pytest.raises(ascdsl.CompilationError, match="element counts differ") as e:
        _kernel(reshape_kernel, F32, ROWS=rows, K=k, TO=1)
    assert e.value.loc.line == reshape_kernel.fn.__code__.co_firstlineno + 3
    with pytest.raises(Undecided, match="do not decide"):  # equal where K is 8
        _kernel(reshape_kernel, F32, ROWS=rows, K=k, TO=2)
