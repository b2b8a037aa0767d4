"""Runner behaviour: multi-block launches, counters, record(), shuffled blocks, caching and speed."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim
from ascdsl.platforms import PLATFORMS, UnknownPlatformError, get_platform

ADD = Path(__file__).parent / "kernels" / "add.cpp"


def add(n, block_dim, tile, **kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    res = sim.run_kernel(ADD, "add_custom", [x, y, z, np.uint32(n), np.uint32(tile)], block_dim, **kw)
    np.testing.assert_array_equal(z, (x + y) * 2)
    return res


def test_counters_per_block_and_total():
    res = add(40 * 4096, 40, 1024)
    s = res.stats
    assert (res.block_dim, res.platform.name, res.kernel) == (40, "Ascend910B3", "add_custom")
    assert len(s.per_block) == 40
    assert s.gm_read_bytes == 2 * 40 * 4096 * 4 and s.gm_write_bytes == 40 * 4096 * 4
    assert s.gm_copies == 40 * 4 * 3 and s.ub_copies == 0
    assert s.ub_peak_bytes == 3 * 2 * 1024 * 4
    assert s.vector_calls == {"Add": 160, "Muls": 160}
    assert s.vector_elements == {"Add": 40 * 4096, "Muls": 40 * 4096}
    b = s.per_block[7]
    assert (b.gm_read_bytes, b.vector_calls, b.per_block) == (2 * 4096 * 4, {"Add": 4, "Muls": 4}, ())


def test_shuffled_blocks_give_the_same_result():
    a = add(8 * 2048, 8, 512, shuffle_blocks=3)
    b = add(8 * 2048, 8, 512)
    assert a.stats == b.stats


def test_record_collects_every_result():
    with sim.record() as runs:
        add(2048, 2, 256)
        with sim.record() as inner:
            add(2048, 4, 256)
    assert [r.block_dim for r in runs] == [2, 4]
    assert [r.block_dim for r in inner] == [4]
    add(2048, 1, 256)
    assert len(runs) == 2


def test_build_is_cached_by_content():
    add(1024, 1, 256)
    before = sim.build_stats()
    add(1024, 2, 256)
    after = sim.build_stats()
    assert (after.builds, after.cache_hits) == (before.builds, before.cache_hits + 1)


def test_one_million_floats_over_40_blocks_is_fast():
    n = 40 * 26624  # 1,064,960 floats
    add(n, 40, 6656)  # warm the build
    start = time.perf_counter()
    add(n, 40, 6656)
    assert time.perf_counter() - start < 1.0


def test_kernel_stdout_is_captured(tmp_path):
    src = tmp_path / "hello.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   'extern "C" __global__ __aicore__ void hello() { AscendC::printf("block %ld\\n", (long)AscendC::GetBlockIdx()); }\n')
    res = sim.run_kernel(src, "hello", [], 3)
    assert res.stdout == "block 0\nblock 1\nblock 2\n"


def test_platform_table():
    assert get_platform().name == "Ascend910B3" and get_platform().vector_core_count == 40
    assert get_platform("Ascend910B1").vector_core_count == 48
    p = get_platform("Ascend310P3")
    assert (p.ai_core_count, p.ub_bytes, p.has_bf16) == (8, 256 * 1024, False)
    assert all(q.ub_budget_bytes == 184 * 1024 for q in PLATFORMS.values() if q.name.startswith("Ascend910"))
    with pytest.raises(UnknownPlatformError, match="valid platforms: Ascend910B1, Ascend910B2") as info:
        get_platform("Ascend910C")
    assert isinstance(info.value, ValueError)


def test_ub_limit_follows_the_platform():
    """190 KiB of buffers fit the 310P's 256 KiB UB but not the 910B's 192 KiB."""
    src = Path(__file__).parent / "kernels" / "faults.cpp"
    x = np.zeros(1024, np.float32)
    sim.run_kernel(src, "ub_overflow", [x, x.copy()], 1, platform="Ascend310P3")
    with pytest.raises(sim.SimError, match="exceeds the 196608 B UB of Ascend910B3"):
        sim.run_kernel(src, "ub_overflow", [x, x.copy()], 1)


def test_a_declared_entry_is_not_searched_for(tmp_path, monkeypatch):
    """``entry=`` (what the backend passes for its generated files) runs a kernel the source search
    cannot see (its entry comes from a macro) and the search is never called."""
    src = tmp_path / "macro_entry.cpp"
    src.write_text(ADD.read_text().replace('extern "C" __global__ __aicore__ void add_custom(',
                                           '#define ENTRY(name) extern "C" __global__ __aicore__ void name(\nENTRY(add_macro)'))
    with pytest.raises(sim.SimArgumentError, match="no extern \"C\" kernel 'add_macro'"):
        sim.run_kernel(src, "add_macro", [], 1)
    entry = sim.Entry("add_macro", (*(sim.Param("GM_ADDR", p, True) for p in "xyz"),
                                     sim.Param("uint32_t", "totalLength", False), sim.Param("uint32_t", "tileLength", False)))
    monkeypatch.setattr("ascdsl.sim.runner.find_kernels", lambda source: pytest.fail("the source was searched"))
    x, y, z = np.arange(512, dtype=np.float32), np.ones(512, np.float32), np.zeros(512, np.float32)
    sim.run_kernel(src, "add_macro", [x, y, z, np.uint32(512), np.uint32(256)], 2, entry=entry)
    np.testing.assert_array_equal(z, (x + y) * 2)
    with pytest.raises(sim.SimArgumentError, match="launched with the declaration of 'add_macro'"):
        sim.run_kernel(src, "add_custom", [x, y, z, np.uint32(512), np.uint32(256)], 2, entry=entry)


def test_generated_kernels_launch_with_the_backends_declaration(monkeypatch):
    """The sim backend tells the simulator its kernel's entry instead of having the generated text read back."""
    import ascdsl.language as tl
    from ascdsl import jit

    @jit
    def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    monkeypatch.setattr("ascdsl.sim.runner.find_kernels", lambda source: pytest.fail("generated text was read back"))
    monkeypatch.setattr("ascdsl.sim.runner.default_tiling_type", lambda source: pytest.fail("generated text was read back"))
    x = np.arange(300, dtype=np.float32)
    y = np.zeros_like(x)
    double[(3,)](x, y, 300, BLOCK=128, backend="sim")
    np.testing.assert_array_equal(y, x * 2)
