"""``@ascdsl.jit``: kernels compiled from their Python source, specialised and launched.

A :class:`JITFunction` is compiled once per *specialisation key*: the values of its
``tl.constexpr`` parameters and the dtypes of its other arguments (an array is a pointer to its
dtype; a Python int is int32, or int64 if it does not fit; a Python float is float32; a NumPy
scalar has its dtype). ``kernel[grid](*args, **kwargs)`` runs it on a backend, writing array
arguments in place::

    add_kernel[(ascdsl.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    add_kernel[lambda meta: (ascdsl.cdiv(meta["n"], meta["BLOCK"]),)](x, y, out, n, BLOCK=256)

Triton's compile options are accepted at launch and in ``@jit(...)`` (:data:`LAUNCH_OPTIONS`):
``debug=True`` (or ``TRITON_DEBUG=1``) compiles ``tl.device_assert`` checks in; the others tune
GPU or NPU code generation and have no effect here. A ``None`` argument (an absent optional
pointer) specialises like a constexpr, so ``if bias_ptr is not None:`` is resolved at compile time.
Array arguments may be strided views (NumPy or PyTorch); kernels address them through the strides
they are passed, as in Triton.
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

import ml_dtypes
import numpy as np

from . import dtypes, interpreter, record
from .dtypes import DType, PointerType
from .backend.render import ascendc
from .backend.plan import tiling
from .errors import UNKNOWN, CompilationError, Error, Loc, source_file
from .frontend import check_syntax, compile_kernel, parse_function
from .ir import Kernel, Module, Type, dump
from .ir.provenance import stored_params
from .ir.symbol import Symbol
from .language import constexpr
from .platforms import DEFAULT_PLATFORM, get_platform
from .interpreter.state import span
from .semantics import SemanticError, fits, literal_dtype

LAUNCH_OPTIONS = frozenset({
    # Triton (every backend)
    "debug", "num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
    "launch_pdl", "extern_libs", "sanitize_overflow", "supported_fp8_dtypes", "deprecated_fp8_dtypes",
    "default_dot_input_precision", "allowed_dot_input_precisions", "max_num_imprecise_acc_default", "arch",
    "ptx_version", "ir_override", "instrumentation_mode", "cluster_dims", "enable_warp_specialization",
    "enable_persistent", "optimize_epilogue", "allow_fp8e4nv", "stream", "warmup", "matrix_instr_nonkdim",
    "waves_per_eu", "kpack",
    # the Ascend (NPU) Triton backend
    "multibuffer", "optimize_dynamic_offset", "enable_sync_block_lock", "auto_blockify_size", "enable_ubuf_saving",
    "enable_select_analysis", "enable_hivm_auto_cv_balance", "sync_solver", "unit_flag", "inject_barrier_all",
    "inject_block_all", "limit_auto_multi_buffer_only_for_local_buffer", "limit_auto_multi_buffer_of_local_buffer",
    "set_workspace_multibuffer", "tile_mix_vector_loop", "tile_mix_cube_loop", "disable_auto_inject_block_sync",
    "enable_auto_bind_sub_block", "enable_nd2nz_on_vector", "enable_linearize", "enable_mixed_cv", "mix_mode",
    "num_buffers_warp_spec", "num_consumer_groups", "reg_dec_producer", "reg_inc_consumer", "kernel_name",
    "llvm_version", "compile_mode", "force_simt_only", "enable_drop_unit_dims", "enable_flatten",
    "enable_bishengir_simt_optimization", "shared_mem_dynamic_size", "vf_merge_level",
    "enable_mask_fallback_conversion", "disable_auto_sync", "enable_auto_multi_buffer",
})
"""Launch and ``@jit`` keywords that Triton or the Ascend Triton backend accepts. ``debug`` turns on
``tl.device_assert``; the others have no effect on the interpreter or the generated Ascend C."""
JIT_OPTIONS = frozenset({"debug", "version", "repr", "launch_metadata", "do_not_specialize",
                         "do_not_specialize_on_alignment", "noinline"})
"""``@jit(...)`` keywords (Triton's); only ``debug`` has an effect."""

DEFAULT_BACKEND = "interpreter"


@dataclass(frozen=True)
class Backend:
    """Where a launch runs: ``run(kernel, args, grid, platform)``; ``name`` is what records and results
    call it (and what decides whether strided views pass: only the interpreter takes them). A launch's
    ``backend=`` is a registered name or a Backend (verification passes its own for the "sim" name)."""

    name: str
    run: Callable


BACKENDS: dict[str, Backend] = {}


def register_backend(name: str, runner: Callable) -> None:
    """Make ``backend=name`` run kernels with ``runner(kernel, args, grid, platform)``."""
    BACKENDS[name] = Backend(name, runner)


def backend_name(backend: str | Backend) -> str:
    return backend.name if isinstance(backend, Backend) else backend


def _run_interpreter(kernel: Kernel, args: list, grid: tuple[int, int, int], platform) -> None:
    interpreter.run(kernel, args, grid)


register_backend("interpreter", _run_interpreter)


def jit(fn: Callable | None = None, **options) -> Any:
    """Compile ``fn`` as a kernel (or a helper that kernels call); also usable as ``@jit()`` or
    ``@jit(debug=True)`` (the keywords of :data:`JIT_OPTIONS`).

    The source is checked now: unsupported syntax is reported at decoration time.
    """
    unknown = sorted(set(options) - JIT_OPTIONS)
    if unknown:
        raise Error(f"@jit got an unknown option {unknown[0]!r}; valid: {', '.join(sorted(JIT_OPTIONS))}")
    if fn is None:
        return functools.partial(jit, **options)
    return JITFunction(fn, debug=options.get("debug"))


class JITFunction:
    """A ``@jit`` function: ``specialize(...)`` gives its IR, ``kernel[grid](...)`` launches it."""

    def __init__(self, fn: Callable, debug: bool | None = None):
        self.fn = fn
        self.debug = debug
        self.parsed = parse_function(fn)
        check_syntax(self.parsed)
        self._cache: dict[tuple, Kernel] = {}
        functools.update_wrapper(self, fn)

    @property
    def arg_names(self) -> list[str]:
        return list(self.parsed.params)

    def run(self, *args, grid, warmup: bool = False, **kwargs):
        """Triton's ``kernel.run(*args, grid=grid, **kwargs)``: the same as ``kernel[grid](...)``."""
        return self._launch(grid, *args, **kwargs) if not warmup else self.warmup(*args, grid=grid, **kwargs)

    def warmup(self, *args, grid=None, **kwargs) -> Module:
        """Compile for these arguments without running (Triton's ``kernel.warmup``)."""
        kwargs = {k: v for k, v in kwargs.items() if k not in ("backend", "platform")}
        return self.specialize(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<ascdsl.jit {self.parsed.describe()}>"

    def __call__(self, *args, **kwargs):
        raise Error(f"`{self.parsed.name}` is an @ascdsl.jit function: launch it with "
                    f"{self.parsed.name}[grid](...) or call it from another @ascdsl.jit function")

    def __getitem__(self, grid) -> Callable:
        return functools.partial(self._launch, grid)

    def specialize(self, *args, **kwargs) -> Module:
        """The IR module (one kernel) for these arguments: arrays, scalars, or just their types
        (a ``DType`` for a scalar, a ``tl.pointer_type(dtype)`` for an array)."""
        return Module((self._specialize(_call_site(), args, kwargs)[0],))

    def _specialize(self, site: Loc, args, kwargs) -> tuple[Kernel, dict[str, Any]]:
        fn = self.parsed
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in LAUNCH_OPTIONS and k not in fn.params}
        debug = options.get("debug", self.debug)
        debug = bool(debug) if debug is not None else os.environ.get("TRITON_DEBUG", "0") not in ("", "0")
        try:
            bound = fn.bind(args, kwargs)
        except SemanticError as e:
            raise CompilationError(site, e.message, e.hint) from None
        key, types, constexprs = [("debug", debug)], {}, {}
        for name, value in bound.items():
            if name in fn.constexprs or value is None or isinstance(value, constexpr):
                bound[name] = constexprs[name] = _constexpr_value(site, name, value)
                key.append((name, _typed(bound[name])))
            else:
                types[name] = Type(_arg_dtype(site, name, value))
                key.append((name, types[name]))
        key = tuple(key)
        if key not in self._cache:
            try:
                self._cache[key] = compile_kernel(fn, constexprs, types, debug)
            except CompilationError as e:
                raise e.with_note(f"while compiling `{fn.name}` for the call at {site}") from None
        return self._cache[key], bound

    def _launch(self, grid, *args, backend: str | Backend | None = None, platform: str | None = None, **kwargs):
        site = _call_site()
        if not isinstance(backend, Backend):
            name = _choose(backend, "ASCDSL_BACKEND", DEFAULT_BACKEND)
            if name not in BACKENDS:
                raise Error(f"unknown backend {name!r}; valid backends: {', '.join(sorted(BACKENDS))}")
            backend = BACKENDS[name]
        platform = _choose(platform, "ASCDSL_PLATFORM", DEFAULT_PLATFORM)
        get_platform(platform)
        kernel, bound = self._specialize(site, args, kwargs)
        grid = _grid(site, grid(dict(bound)) if callable(grid) else grid)
        stored = _stored_params(kernel)
        arrays = [_runtime_arg(site, name, bound[name], param.type, backend.name, name in stored)
                  for name, param in zip(kernel.param_names, kernel.params)]
        record.note(kernel, grid, backend.name, arrays)
        if 0 not in grid:
            backend.run(kernel, arrays, grid, platform)
        return CompiledKernel(kernel, platform)


class CompiledKernel:
    """What a launch returns, as Triton's launch does: the specialisation that ran (``kernel``, its tile
    IR), its ``name``, ``metadata`` and ``asm``, whose texts are the tile IR (``"ir"``, and under
    Triton's ``"ttir"``) and the generated Ascend C kernel source (``"ascendc"``, rendered when read)."""

    def __init__(self, kernel: Kernel, platform: str):
        self.kernel, self.name, self.platform = kernel, kernel.name, platform
        self.metadata = {"name": kernel.name, "constexprs": dict(kernel.constexprs), "platform": platform}

    @functools.cached_property
    def asm(self) -> "_Asm":
        return _Asm(self)

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.name} for {self.platform}>"


class _Asm(dict):
    """``CompiledKernel.asm``: the keys are there from the start; a text is made when first read."""

    KINDS = ("ttir", "ir", "ascendc")

    def __init__(self, compiled: CompiledKernel):
        super().__init__({k: None for k in self.KINDS})
        self.compiled = compiled

    def __getitem__(self, kind: str) -> str:
        text = super().__getitem__(kind)
        if text is None:
            text = self._render(kind)
            super().__setitem__(kind, text)
        return text

    def __repr__(self) -> str:
        return f"<asm: {', '.join(self)}>"

    def get(self, kind, default=None):
        return self[kind] if kind in self else default

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]

    def _render(self, kind: str) -> str:
        k = self.compiled.kernel
        if kind in ("ttir", "ir"):
            return dump(k)

        variants = tiling.variants([k])
        return str(ascendc.kernel_source("ascdsl_kernel", variants, tiling.layout("KernelTilingData", [k]),
                                         self.compiled.platform))


def _choose(value: str | None, env: str, default: str) -> str:
    return value or os.environ.get(env) or default


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _call_site() -> Loc:
    """Where user code called into ascdsl (the first frame outside the package)."""
    frame = sys._getframe(1)
    while frame is not None and _in_package(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return UNKNOWN
    key = (frame.f_code, frame.f_lasti)  # (the instruction that called: its line and column)
    site = _SITES.get(key)
    if site is None:
        if len(_SITES) >= 1024:
            _SITES.clear()
        site = _SITES[key] = _site(frame)
    return site


_SITES: dict[tuple, Loc] = {}


@functools.lru_cache(maxsize=1024)
def _in_package(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE)


def _site(frame) -> Loc:
    # co_positions() is indexed by instruction (2 bytes each); inspect.getframeinfo would give the
    # same answer but scans sys.modules, which costs tens of milliseconds per launch.
    positions = list(frame.f_code.co_positions())
    col = positions[frame.f_lasti // 2][2] if frame.f_lasti // 2 < len(positions) else None
    return Loc(source_file(frame.f_code.co_filename), frame.f_lineno, (col or 0) + 1)


def _is_torch(value) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def _constexpr_value(site: Loc, name: str, value):
    value = value.value if isinstance(value, constexpr) else value
    value = value.item() if isinstance(value, np.generic) else value
    if not isinstance(value, (bool, int, float, str, type(None), DType, tuple, Symbol)):
        raise CompilationError(site, f"constexpr `{name}` got a {type(value).__name__}",
                               "constexprs are ints, floats, bools, strings, dtypes or tuples of them")
    return value


def _typed(value):
    """A cache key that tells ``1``, ``1.0`` and ``True`` apart (they compile differently), and
    ``0.0`` from ``-0.0`` (floats by their bits: NaN is one key)."""
    if isinstance(value, tuple):
        return tuple(map(_typed, value))
    return (type(value), value.hex() if isinstance(value, float) else value)


def _arg_dtype(site: Loc, name: str, value) -> DType | PointerType:
    if isinstance(value, (DType, PointerType)):
        return value
    if isinstance(value, (np.ndarray, np.generic)) or _is_torch(value):
        try:
            dtype = (dtypes.lookup(str(value.dtype).removeprefix("torch.")) if _is_torch(value)
                     else dtypes.from_numpy(value.dtype))
        except KeyError:
            raise CompilationError(site, f"argument `{name}` has unsupported dtype {value.dtype}",
                                   "supported: " + ", ".join(d.name for d in dtypes.ALL)) from None
        return dtype if isinstance(value, np.generic) else PointerType(dtype)
    if isinstance(value, int) and not isinstance(value, bool) and not fits(value, dtypes.int64):
        raise CompilationError(site, f"argument `{name}` = {value} does not fit int64",
                               "kernel scalars are at most 64 bits wide")
    if isinstance(value, (bool, int, float)):
        return literal_dtype(value)
    raise CompilationError(site, f"argument `{name}` is a {type(value).__name__}, which kernels cannot take",
                           "pass NumPy arrays, PyTorch CPU tensors, or int/float/bool scalars")


_stored: dict[int, tuple[Kernel, frozenset[str]]] = {}


def _stored_params(kernel: Kernel) -> frozenset[str]:
    """:func:`stored_params`, once per kernel object (by identity: hashing a kernel hashes its IR)."""
    hit = _stored.get(id(kernel))
    if hit is None or hit[0] is not kernel:
        if len(_stored) >= 256:
            _stored.clear()
        hit = _stored[id(kernel)] = (kernel, stored_params(kernel))
    return hit[1]


def _runtime_arg(site: Loc, name: str, value, type: Type, backend: str, stored: bool):
    """The value the backend receives: a NumPy array (sharing memory; views only on the interpreter; on
    the other backends a view, contiguous or strided, is its allocation from its first element, what the
    interpreter's pointer reaches: ``interpreter.state.span``) or a scalar. ``stored``: the kernel may
    store through this argument (it must be writeable)."""
    if isinstance(value, (DType, PointerType)):
        raise CompilationError(site, f"argument `{name}` is the type {value}; a launch needs data",
                               "types are accepted only by kernel.specialize(...)")
    if _is_torch(value):  # its memory, whatever autograd records (as Triton, which never looks at it)
        value = _from_torch(site, name, value)
    if isinstance(value, np.ndarray):
        if stored and not value.flags.writeable:
            raise CompilationError(site, f"argument `{name}` is read-only, and the kernel stores to it",
                                   "pass a writeable array (np.array(x) makes a writeable copy)")
        if value.base is not None and backend != "interpreter":
            return _allocation(site, name, value)
        return value
    return type.dtype.np.type(value)


def _allocation(site: Loc, name: str, view: np.ndarray) -> np.ndarray:
    """What a device kernel gets for a view: a pointer to the view's first element that reaches
    the rest of its allocation (a 1-D array from there to the allocation's end); the kernel addresses
    the view through the strides it is passed, as a Triton kernel does."""
    if any(s < 0 for s in view.strides) and view.size > 1:
        raise CompilationError(site, f"argument `{name}` has a negative stride, which a device pointer to its "
                               "first element cannot reach", "pass np.ascontiguousarray(x), or run on the "
                               "interpreter")
    try:
        flat, start = span(view)
    except Error as e:
        raise CompilationError(site, f"argument `{name}`: {e}", "pass np.ascontiguousarray(x)") from None
    return flat[start:]


def _from_torch(site: Loc, name: str, tensor) -> np.ndarray:
    """The tensor as a NumPy view of its whole storage (a view's pointer reaches all of its storage,
    as on a device)."""
    torch = sys.modules["torch"]
    if tensor.device.type != "cpu":
        raise CompilationError(site, f"argument `{name}` must be a CPU tensor",
                               "pass t.cpu() and copy results back if needed")
    tensor = tensor.detach()
    storage = tensor.untyped_storage()
    whole = torch.empty(0, dtype=tensor.dtype).set_(storage, 0, (storage.nbytes() // tensor.element_size(),))
    if tensor.dtype == torch.bfloat16:  # NumPy has no bfloat16: share the bits through int16
        whole = whole.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    else:
        whole = whole.numpy()
    item = whole.itemsize
    return np.ndarray(tuple(tensor.shape), whole.dtype, buffer=whole, offset=tensor.storage_offset() * item,
                      strides=tuple(s * item for s in tensor.stride()))


def _grid(site: Loc, grid) -> tuple[int, int, int]:
    ok = isinstance(grid, (tuple, list)) and 1 <= len(grid) <= 3 and all(
        isinstance(g, (int, np.integer)) and not isinstance(g, bool) and g >= 0 for g in grid)
    if not ok:
        raise CompilationError(site, f"the grid must be a tuple of 1 to 3 non-negative ints, got {grid!r}",
                               "e.g. kernel[(ascdsl.cdiv(n, BLOCK),)](...) or kernel[lambda meta: (...)](...)")
    return tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
