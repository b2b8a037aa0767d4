"""A host function may call ``@ascdsl.host`` helpers (its own module's or another's, such as
:func:`ascdsl.lib.rows_in_parts`): the translator inlines them into the generated C++ tiling function, which
computes the same tiling, block dim and errors as the Python run."""
from __future__ import annotations

import importlib
import sys

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend.host import host
from ascdsl.backend.plan import tiling
from ascdsl.lib import rows_in_parts

from .test_tiling_function import PLATFORMS, check_equivalence, desc

PART_ROW_BYTES = 4  # not ascdsl.lib's: rows_in_parts reads its own module's (8192), the C++ both


@ascdsl.jit
def split_kernel(x_ptr, out_ptr, n, per_core, big_cores, tail, parts, part_k, blocks, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    extra = per_core + big_cores + tail + parts + part_k + blocks
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=mask) + extra, mask=mask)


@ascdsl.host
def clamp_block(n, low, high):
    if high < low:
        raise ValueError(f"no block of {n} between {low} and {high}")
    block = max(low, min(high, ascdsl.next_power_of_2(n)))
    return block


@ascdsl.host
def block_and_blocks(n, low, high=64):
    block = clamp_block(n, low, high)  # a helper calling a helper
    return block, ascdsl.cdiv(n, block)


@ascdsl.host
def helper_host(x, wide, platform, whole_rows=2):
    if x.ndim == 0:
        raise ValueError("x must not be a scalar")
    k = x.shape[-1]
    rows = x.numel // max(k, 1)
    if rows * k == 0:
        raise ValueError(f"x is empty: {x.shape}")
    used, per_core, big_cores, tail, parts, part_k = rows_in_parts(rows, k, x.dtype.itemsize, platform.vector_core_count,
                                                                   0 if wide else 1, whole_rows, True)
    block, blocks = block_and_blocks(k, 16, 64 if x.ndim < 3 else x.shape[0] * PART_ROW_BYTES)
    return ascdsl.Launch(split_kernel, grid=(used,), constexprs={"BLOCK": block},
                         scalars={"n": x.numel, "per_core": per_core, "big_cores": big_cores, "tail": tail,
                                  "parts": parts, "part_k": part_k, "blocks": blocks})


HELPERS = ascdsl.Operator(name="helpers", op_type="Helpers", entry=None, host=helper_host, reference=None,
                          inputs=("x",), attrs=(ascdsl.Attr("wide", "Bool", False),),
                          dtypes=("float32", "float16"))


def split_kernels():
    kernels = []
    for dt in ("float32", "float16"):
        ptr = tl.pointer_type(dtypes.lookup(dt))
        for block in (16, 32, 64):
            kernels += split_kernel.specialize(ptr, ptr, 1, 1, 1, 1, 1, 1, 1, BLOCK=block).kernels
    return kernels


def test_a_host_function_calling_helpers_matches_python(tmp_path):
    kernels = split_kernels()
    # rows in parts (3 rows of 5000 floats, wide or not), whole rows, a helper's raise (3-D, 3 * 4 < 16), the caller's
    sweep = [((desc(shape, dt),), {"wide": wide}) for dt in ("float32", "float16") for wide in (False, True)
             for shape in ((3, 5000), (82, 2100), (82, 4100), (7, 9), (100, 33), (3, 2, 40), (40, 2, 40), (0, 5), ())]
    assert check_equivalence(tmp_path, HELPERS, kernels, sweep) == {0, 1}
    plan = HELPERS.host(desc((3, 5000)), True, PLATFORMS[0])  # the helper's parts: 3 rows past no whole round
    assert plan.scalars["tail"] == 3 * plan.scalars["parts"] > 3 and plan.grid == (plan.scalars["tail"],)
    fn = host.lower_tiling(HELPERS, tiling.layout("HelpersTilingData", kernels), tiling.variants(kernels),
                           PLATFORMS[0], "HelpersTiling")
    # the same name, two constants: the host function's own, the other module's helper's named after it
    assert {"constexpr int64_t PART_ROW_BYTES = 4;", "constexpr int64_t rows_in_parts_PART_ROW_BYTES = 8192;"} <= \
        set(fn.constant_lines)
    # an argument known at build time stays a constant (`low`, 16: no variable, the comparison folds), another is
    # copied into the helper's variable
    assert not any("_low" in line for line in fn.local_lines)
    assert any(line.strip() == "clamp_block_high = block_and_blocks_high;" for line in fn.body_lines)


BAD_HOST = """import ascdsl
from tests.host.test_host_helpers import block_and_blocks, clamp_block, split_kernel


@ascdsl.host
def recursive(n):
    m = recursive(n)
    return m


@ascdsl.host
def assigns_a_parameter(n):
    n = n + 1
    return n


@ascdsl.host
def returns_twice(n):
    if n > 1:
        return n
    return 1


@ascdsl.host
def plans(x, platform):
    rows = ascdsl.planner.largest_extent(split_kernel, "BLOCK", x, x, platform=platform)
    return rows


@ascdsl.host
def bad_host(x, platform):
    {call}
    return ascdsl.Launch(split_kernel, grid=(n,))
"""


@pytest.mark.parametrize("call, line, message", [
    ("n = clamp_block(x.numel, 1, 4) + 1", "    n = clamp_block(", "a host helper's call is the whole value of an assignment"),
    ("n = recursive(x.numel)", "    m = recursive(n)", "recursive calls itself: host helpers are inlined"),
    ("n = assigns_a_parameter(x.numel)", "    n = n + 1", "host code may not assign to the parameter 'n'"),
    ("n = returns_twice(x.numel)", "        return n", "a host helper ends in its one return statement"),
    ("n = plans(x, platform)", "    rows = ", "the UB planner is asked from the op's host function, not from a host helper"),
    ("n, m = block_and_blocks(x.numel, 1, 4, 5)", "    n, m = ", "block_and_blocks(n, low, high=64): too many positional"),
])
def test_host_helper_misuse_is_a_located_error(tmp_path, monkeypatch, call, line, message):
    source = BAD_HOST.format(call=call)
    (tmp_path / "bad_host.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bad_host", raising=False)
    bad_host = importlib.import_module("bad_host").bad_host
    op = ascdsl.Operator(name="bad", op_type="Bad", entry=None, host=bad_host, reference=None, inputs=("x",))
    kernels = split_kernels()
    with pytest.raises(ascdsl.CompilationError) as info:
        host.lower_tiling(op, tiling.layout("BadTilingData", kernels), tiling.variants(kernels), PLATFORMS[0], "Bad")
    at = next(i for i, text in enumerate(source.splitlines(), 1) if text.startswith(line))
    assert f"bad_host.py:{at}:" in str(info.value) and message in str(info.value)
