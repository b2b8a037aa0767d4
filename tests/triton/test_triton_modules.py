"""Triton's modules and decorators on ascdsl: closures, constexpr arithmetic, the ``triton`` alias,
``runtime`` (driver, libentry, autotune, heuristics), ``compiler``, ``testing``, and the located
error the Ascend C backend gives for what it does not lower yet."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl as triton
import ascdsl.language as tl
from ascdsl import ir

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs

ROOT = Path(__file__).resolve().parents[2]


def test_a_kernel_defined_in_a_function_uses_its_local_tl_and_helpers():
    import ascdsl.language as local_tl  # a local name, reached through a closure cell
    offset = 3

    @triton.jit
    def plus(x):
        return x + offset

    @triton.jit
    def kernel(x_ptr, BLOCK: local_tl.constexpr):
        i = local_tl.arange(0, BLOCK)
        local_tl.store(x_ptr + i, plus(local_tl.load(x_ptr + i)))

    x = np.arange(8, dtype=np.float32)
    kernel[(1,)](x, BLOCK=8)
    assert np.array_equal(x, np.arange(8) + 3)
    assert kernel.parsed.constexprs == ("BLOCK",)


def test_an_undefined_closure_name_is_located():
    @triton.jit
    def kernel(x_ptr):
        tl.store(x_ptr, helper_defined_later(1.0))

    with pytest.raises(ascdsl.CompilationError, match="undefined name `helper_defined_later`"):
        kernel.specialize(tl.pointer_type(tl.float32))
    helper_defined_later = None  # noqa: F841  (declared, never bound before the compile above)


def test_constexpr_arithmetic_outside_kernels():
    a, b = tl.constexpr(4), tl.constexpr(8)
    assert isinstance(a * b, tl.constexpr) and (a * b).value == 32
    assert (b // a).value == 2 and (2 * a).value == 8 and (a + 1).value == 5 and (-a).value == -4
    assert bool(a < b) and list(range(a)) == [0, 1, 2, 3] and hash(a) == hash(4)

    @triton.jit
    def kernel(out_ptr, N: tl.constexpr):
        tl.store(out_ptr + tl.arange(0, N), 1.0)

    out = np.zeros(32, np.float32)
    kernel[(1,)](out, N=a * b)
    assert out.sum() == 32


def test_dtype_methods_fold_in_kernels():
    @triton.jit
    def kernel(x_ptr, out_ptr):
        x = tl.load(x_ptr)
        if x.dtype.is_floating() and not x.dtype.is_int():
            tl.store(out_ptr, x.dtype.primitive_bitwidth + x_ptr.dtype.element_ty.is_fp32())
        else:
            tl.store(out_ptr, -1)

    out = np.zeros(1, np.int32)
    kernel[(1,)](np.zeros(1, np.float32), out)
    assert out[0] == 33
    kernel[(1,)](np.zeros(1, np.int16), out)
    assert out[0] == -1


def test_the_triton_alias_runs_an_unchanged_triton_file(tmp_path):
    script = tmp_path / "uses_triton.py"
    script.write_text(textwrap.dedent('''
        import ascdsl.triton_alias
        ascdsl.triton_alias.install()
        import numpy as np
        import triton
        import triton.language as tl
        from triton.language.extra.cann import libdevice
        from triton.language.extra import libdevice as cuda_libdevice
        from triton.runtime.libentry import libentry
        from triton.compiler.errors import CompilationError

        @libentry()
        @triton.jit
        def kernel(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(x_ptr + offs, libdevice.floor(cuda_libdevice.fabs(x) * 2.5), mask=offs < n)

        x = np.arange(10, dtype=np.float32) - 5
        kernel[(triton.cdiv(10, 4),)](x, 10, BLOCK=4)
        assert np.array_equal(x, np.floor(np.abs(np.arange(10) - 5) * 2.5)), x
        driver = triton.runtime.driver.active
        props = driver.utils.get_device_properties(driver.get_current_device())
        assert props["num_vectorcore"] == 40, props
        assert CompilationError is triton.CompilationError and tl.load is __import__("ascdsl").language.load
        print("ok")
    '''))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@triton.autotune(configs=[triton.Config({"BLOCK": 3}), triton.Config({"BLOCK": 64}, num_warps=4),
                          triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def tuned(x_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_autotune_picks_the_first_valid_config_per_key_and_caches_it():
    x = np.zeros(200, np.float32)
    tuned[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, 200)
    assert np.array_equal(x, np.ones(200)) and tuned.best_config.kwargs == {"BLOCK": 64}
    assert list(tuned.cache) == [(200,)]
    tuned.configs.reverse()  # the cached choice stays for n=200; a new key chooses afresh
    tuned[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, 200)
    assert tuned.best_config.kwargs == {"BLOCK": 64}
    tuned[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, 100)
    assert tuned.best_config.kwargs == {"BLOCK": 128} and x[:100].sum() == 300
    with pytest.raises(ascdsl.Error, match="sets `BLOCK`, which the launch also passes"):
        tuned[(1,)](x, 7, BLOCK=16)


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"]), "EVEN": lambda args: args["n"] % 2 == 0})
@triton.jit
def heuristic(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, BLOCK + EVEN, mask=offs < n)


def test_heuristics_compute_constexprs_from_the_arguments():
    x = np.zeros(5, np.int32)
    heuristic[(1,)](x, 5)
    assert np.array_equal(x, [8] * 5)
    heuristic[(1,)](x, 4)
    assert np.array_equal(x, [5] * 4 + [8])


def test_compiler_compiles_an_ast_source():
    compiled = triton.compiler.compile(triton.compiler.ASTSource(
        fn=heuristic.fn, signature={"x_ptr": "*i32", "n": "i32"}, constexprs={"BLOCK": 8, "EVEN": True}))
    assert compiled.name == "heuristic" and ir.parse(compiled.asm["ir"]) == compiled.module
    with pytest.raises(ValueError, match="unsupported signature type 'fp64'"):
        triton.compiler.compile(triton.compiler.ASTSource(fn=heuristic.fn, signature={"x_ptr": "*i32", "n": "fp64"}))


def test_testing_assert_close_and_do_bench():
    triton.testing.assert_close(np.float32([1, 2]), np.float64([1.001, 2]), atol=1e-2, rtol=0)
    triton.testing.assert_close(np.float32([1, 2]), np.float64([1.001, 2]), 1e-2, 0)  # Triton's positional form
    with pytest.raises(AssertionError, match="mine: 1 of 2 elements differ"):
        triton.testing.assert_close(np.float32([1, 2]), np.float64([1.1, 2]), atol=1e-2, rtol=0, err_msg="mine")
    x = np.zeros(1024, np.float32)
    ms = triton.testing.do_bench(lambda: tuned[(8,)](x, 1024), warmup=1, rep=5)
    low, high = triton.testing.do_bench(lambda: tuned[(8,)](x, 1024), warmup=1, rep=5, quantiles=[0.2, 0.8])
    assert 0 < ms and 0 < low <= high


def test_runtime_exports():
    assert triton.runtime.JITFunction is ascdsl.JITFunction and isinstance(tuned.fn, triton.runtime.JITFunction)
    assert triton.runtime.driver.active.get_current_target().backend == "cpu"
    assert triton.runtime.libentry.libentry()(tuned) is tuned


@triton.jit
def atan2_op(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.extra.libdevice.atan2(x, x))


@triton.jit
def sort_op(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.sort(tl.load(x_ptr + offs), 0))


@triton.jit
def reshape_op(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.flip(tl.reshape(tl.load(x_ptr + offs), (2, BLOCK // 2)), 1)
    tl.store(out_ptr + offs, tl.reshape(x, (BLOCK,)))


@pytest.mark.parametrize("kernel, reference", [(atan2_op, lambda x: np.arctan2(x, x)), (sort_op, np.sort),
                                               (reshape_op, lambda x: x.reshape(2, -1)[:, ::-1].ravel())])
def test_new_ops_run_on_the_ascend_c_backend(kernel, reference):
    x = np.random.default_rng(0).uniform(-2, 2, 64).astype(np.float32)
    got = {b: np.zeros_like(x) for b in ("interpreter", "sim")}
    for backend, out in got.items():
        kernel[(1,)](x, out, BLOCK=64, backend=backend)
    ascdsl.testing.assert_close(got["sim"], got["interpreter"], tl.float32)
    np.testing.assert_allclose(got["interpreter"], reference(x), rtol=1e-6)


def test_new_ops_print_and_parse_back():
    kernels = [reshape_op.specialize(tl.pointer_type(tl.float32), tl.pointer_type(tl.float32), BLOCK=64)]
    from tests.triton.compat_kernels import build
    k = build(ascdsl, tl)
    f32, i32, i1, i8, i64 = (tl.pointer_type(d) for d in (tl.float32, tl.int32, tl.int1, tl.int8, tl.int64))
    kernels += [k.reduce_kernel.specialize(f32, f32, f32, i32, i32, M=4, N=8),
                k.scan_kernel.specialize(f32, f32, f32, f32, f32, N=8),
                k.join_kernel.specialize(f32, f32, f32, f32, f32, f32, N=8),
                k.math_kernel.specialize(f32, f32, f32, N=8),
                k.random_kernel.specialize(i32, f32, f32, i32, tl.int64, N=8),
                k.dot_kernel.specialize(f32, f32, f32, M=4, N=4, K=8),
                k.atomic_kernel.specialize(f32, f32, f32, f32, i32, N=8),
                k.assert_kernel.specialize(f32, tl.int32, BLOCK=8, debug=True)]
    for module in kernels:
        text = ir.dump(module)
        assert ir.parse(text) == module and ir.dump(ir.parse(text)) == text
    assert "assert" in ir.dump(kernels[-1]) and "umulhi" in ir.dump(kernels[5])
