"""SoftmaxGrad: dst = (grad - sum(grad * src, last axis)) * src, the high-level API's semantics.

``src`` is the forward softmax output and ``grad`` the gradient of it. The input is viewed as
``[m, k]`` (``k`` the last axis). With ``is_front=True`` the result is the row sums only, broadcast
to one 32-byte block per row (shape ``grad.shape[:-1] + (32 // itemsize,)``).

Variants the host picks:

* ``rows`` (full load): ``[ROWS, BLOCK_K]`` tiles hold whole rows; one load of each input;
* ``packed`` (from the Python entry, not ``is_front``): 16-bit rows of ``k = 8 mod 16`` elements under
  1 KiB as ``rows``, but a tile of ``ROWS * k`` values read and written flat (one burst, where padded rows
  are a burst each), whose float32 rows are whole blocks;
* ``two_pass`` (rows longer than UB): per row, a first pass sums ``grad * src`` chunk by chunk and a
  second pass reloads the chunks and writes ``dst`` (``is_front`` needs only the first pass);
* ``nz``: inputs in the FRACTAL_NZ layout (:mod:`ascdsl.layout`), ``[B, K1, Mp, 16]``; a row ``i``
  is the 16-element segments ``[b, :, i, :]``, summed over both k axes in a first pass over ``K1``,
  then written in a second pass; the zero padding gives zero sums and zero outputs.

Outer work (rows; for NZ, blocks of rows of one batch) is split over the vector cores, the first
``big_cores`` programs taking one unit more. Not for ``is_front``, the rows past the last whole round of the
cores (``m % cores`` of them, at most half the cores; rows of ``PART_ROW_BYTES`` or more) go instead in column
parts over the cores, in ``two_pass``: every core takes ``m // cores`` whole rows, then the first ``tail`` cores
a part of ``part_k`` columns of one of the rows past them (``parts`` a row), writing its own columns. A part sums
the whole row again, or (``EXCHANGE``, where that re-read is ``EXCHANGE_ELEMENTS`` or more) its own columns, the
parts exchanging their sums through float32 GM scratch and a grid barrier (``ascdsl.lib.part_total``). Rows that
fit the UB take parts in float32 only, with at most ``PART_WHOLE_ROWS`` whole rows a core and 4 parts a row or more
(the two-pass kernel reads them twice: measured in docs/performance.md).

Tile sizes are runtime tile extents (tiling fields: one kernel class per algorithm serves every
shape), chosen from the kernel's exact UB footprint (``ascdsl.planner.largest_extent``, which the
tiling function evaluates too): the ``rows`` tile is a row rounded up to a 32-byte block (a row of
1025 floats is 1032 lanes) by as many rows as fit the budget (at most the rows of one core);
``two_pass`` takes 32-byte-aligned chunks of equal length as large as fit. ``nz`` takes the largest
power of two the UB planner fits (``ascdsl.planner.largest_block``; the generated tiling function reads it
from the footprint table the build computes).

``impl="api"`` instead calls ``AscendC::SoftmaxGrad`` / ``SoftmaxGradFront`` from a direct-launch
kernel rendered from ``templates/softmax_grad_api.cpp.j2``, its tiling computed by a generated host
function (``templates/softmax_grad_api_host.cpp.j2``) that calls CANN's host API
(``GetSoftMaxGradMaxTmpSize``, ``SoftMaxGradTilingFunc``); both run on the simulator
(``backend="sim"``), which provides those host functions (:mod:`ascdsl.sim.softmax_tiling`).
"""
import ctypes
import os
from pathlib import Path

import numpy as np

import ascdsl
import ascdsl.cache
import ascdsl.language as tl
from ascdsl.lib import (MAX_PARTS, core_span, load_flat_rows, part_span, part_total, reads_flat, row_part,
                        rows_in_parts, store_flat_rows)
from ascdsl import dtypes, render_template, sim
from ascdsl.sim import softmax_tiling
from ascdsl.platforms import DEFAULT_PLATFORM, get_platform

TILES_PER_CORE = 4  # the full-load kernel's fewest tiles a core, where its rows allow
MIN_TILE_BYTES = 8192  # the fewest bytes of an input such a tile holds
PART_WHOLE_ROWS = 2  # the most whole rows a core takes beside a part of a row that fits the UB
ROW_LIMIT = 1 << 30  # row indices (a core's first row plus a tile of rows) stay far inside int32
EXCHANGE_ELEMENTS = 11264  # the fewest elements of a float32 row's re-read its parts' exchange saves each
EXCHANGE_ELEMENTS_16 = 17088  # the same for 16-bit rows (their casts bound them on the vector unit)
NZ_ROWS = tuple(2 ** i for i in range(4, 13))  # the NZ row blocks (multiples of 16) it chooses from


@ascdsl.jit
def store_front(out_ptr, rows, end, total, ALIGN: tl.constexpr):
    """Row sums ``total`` broadcast to one 32-byte block (``ALIGN`` elements) per row."""
    block = tl.arange(0, ALIGN)
    value = total[:, None] + tl.zeros((total.shape[0], ALIGN), tl.float32)
    mask = (rows[:, None] < end) & (block[None, :] < ALIGN)
    tl.store(out_ptr + rows[:, None] * ALIGN + block[None, :], value.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def rows_kernel(grad_ptr, src_ptr, out_ptr, k, per_core, big_cores,
                ROWS: tl.constexpr, BLOCK_K: tl.constexpr, FRONT: tl.constexpr, ALIGN: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    cols = tl.arange(0, BLOCK_K)
    for row0 in range(start, end, ROWS):
        rows = row0 + tl.arange(0, ROWS)
        offsets = rows[:, None] * k + cols[None, :]
        mask = (rows[:, None] < end) & (cols[None, :] < k)
        grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        src = tl.load(src_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        total = tl.sum(grad * src, axis=1)
        if FRONT:
            store_front(out_ptr, rows, end, total, ALIGN)
        else:
            out = (grad - total[:, None]) * src
            tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def packed_kernel(grad_ptr, src_ptr, out_ptr, per_core, big_cores, ROWS: tl.constexpr, K: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    for row0 in range(start, end, ROWS):
        grad = load_flat_rows(grad_ptr, row0, end, ROWS, K)
        src = load_flat_rows(src_ptr, row0, end, ROWS, K)
        store_flat_rows(out_ptr, row0, end, (grad - tl.sum(grad * src, axis=1)[:, None]) * src)


@ascdsl.jit
def row_sum(grad_ptr, src_ptr, base, first, stop, BLOCK_K: tl.constexpr):
    """``[1]``: the float32 sum of ``grad * src`` over the columns ``[first, stop)`` of the row at ``base``."""
    lanes = tl.arange(0, BLOCK_K)
    total = tl.zeros((1,), tl.float32)
    for col0 in range(first, stop, BLOCK_K):
        cols = col0 + lanes
        mask = cols[None, :] < stop
        grad = tl.load(grad_ptr + base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        src = tl.load(src_ptr + base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        total += tl.sum(grad * src, axis=1)
    return total


@ascdsl.jit
def write_cols(grad_ptr, src_ptr, out_ptr, base, first, stop, total, BLOCK_K: tl.constexpr):
    """``dst`` over the columns ``[first, stop)`` of the row at ``base``, whose sum of ``grad * src`` is ``total``."""
    lanes = tl.arange(0, BLOCK_K)
    for col0 in range(first, stop, BLOCK_K):
        cols = col0 + lanes
        mask = cols[None, :] < stop
        offsets = base + cols[None, :]
        grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        src = tl.load(src_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        out = (grad - total[:, None]) * src
        tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def two_pass_kernel(grad_ptr, src_ptr, out_ptr, partials_ptr, k, per_core, big_cores, tail, parts, part_k,
                    BLOCK_K: tl.constexpr, FRONT: tl.constexpr, ALIGN: tl.constexpr, EXCHANGE: tl.constexpr):
    start, end, last = part_span(per_core, big_cores, tail)
    if EXCHANGE:
        # every program: its per_core whole rows, then (the same step on all) its part of a row past them, whose
        # partial sum over its own columns it exchanges with the row's other parts
        for step in range(0, per_core + 1):
            unit = start + step
            row, first, stop = row_part(unit, end, per_core, parts, part_k, k)  # a whole row: first 0, stop k
            stop = tl.where(unit < last, stop, first)  # past the first `tail` programs: no part
            total = row_sum(grad_ptr, src_ptr, row * k, first, stop, BLOCK_K)
            if step == per_core:
                total = part_total(partials_ptr, total, tail, parts)
            write_cols(grad_ptr, src_ptr, out_ptr, row * k, first, stop, total, BLOCK_K)
    else:
        for unit in range(start, last):
            # past its whole rows, one of the first `tail` cores writes a part of a row past the last whole round,
            # summing its whole row again
            row, first, stop = row_part(unit, end, per_core, parts, part_k, k)
            total = row_sum(grad_ptr, src_ptr, row * k, 0, k, BLOCK_K)
            if FRONT:
                store_front(out_ptr, row + tl.arange(0, 1), end, total, ALIGN)
            else:
                write_cols(grad_ptr, src_ptr, out_ptr, row * k, first, stop, total, BLOCK_K)


@ascdsl.jit
def nz_kernel(grad_ptr, src_ptr, out_ptr, k1, mp, row_blocks, per_core, big_cores, ROWS: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    lanes = tl.arange(0, 16)
    for unit in range(start, end):
        batch = unit // row_blocks
        rows = (unit - batch * row_blocks) * ROWS + tl.arange(0, ROWS)
        base = batch * k1 * mp * 16
        mask = (rows[:, None] < mp) & (lanes[None, :] < 16)
        total = tl.zeros((ROWS,), tl.float32)
        for j in range(k1):
            offsets = base + j * mp * 16 + rows[:, None] * 16 + lanes[None, :]
            grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            src = tl.load(src_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            total += tl.sum(grad * src, axis=1)
        for j in range(k1):
            offsets = base + j * mp * 16 + rows[:, None] * 16 + lanes[None, :]
            grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            src = tl.load(src_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            out = (grad - total[:, None]) * src
            tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.host
def softmax_grad_host(grad, src, is_front, platform, nz=False, packed=False):
    """Validate and plan SoftmaxGrad on ``platform`` (a :class:`ascdsl.platforms.Platform`);
    ``nz`` says the inputs are in the NZ layout ``[..., K1, Mp, 16]``. The op project's OpDef is ND
    only: ``nz`` is not an attribute, so the generated tiling function is this function with
    ``nz=False``; the NZ path exists only through the Python entry (``format="NZ"``). ``packed``: 16-bit
    rows may take ``packed``, a kernel per row length, not a runtime extent; the op project's tiling
    function is this function with ``packed=False`` (``rows``, which serves every length), the Python
    entry passes True."""
    if grad.shape != src.shape:
        raise ValueError(f"grad and src must have the same shape, got {grad.shape} and {src.shape}")
    if grad.dtype != src.dtype:
        raise TypeError(f"grad and src must have the same dtype, got {grad.dtype} and {src.dtype}")
    dtype = grad.dtype
    if dtype.name not in ("float32", "float16", "bfloat16"):
        raise TypeError(f"softmax_grad supports float32, float16 and bfloat16, not {dtype}")
    if dtype.name == "bfloat16" and not platform.has_bf16:
        raise TypeError(f"{platform.name} cannot cast bfloat16 to float32, so it cannot compute "
                        "bfloat16 softmax_grad; use float16 or float32")
    n = grad.ndim
    if n < 1:
        raise ValueError("softmax_grad needs a tensor of rank >= 1, got a scalar")
    cores = platform.vector_core_count
    align = 32 // dtype.itemsize
    if nz:
        if is_front:
            raise ValueError("is_front is not supported with format='NZ'; use format='ND'")
        if n < 3 or grad.shape[n - 1] != 16 or grad.shape[n - 2] % 16 != 0:
            raise ValueError(f"an NZ tensor has shape [..., ceil(k/16), 16*ceil(m/16), 16], got {grad.shape}; "
                             "convert with ascdsl.layout.nd_to_nz")
        k1 = grad.shape[n - 3]
        mp = grad.shape[n - 2]
        batches = grad.numel // max(k1 * mp * 16, 1)
        if grad.numel == 0:
            return ascdsl.Launch(nz_kernel, grid=(0,), variant="empty", constexprs={"ROWS": 16})
        rows = min(ascdsl.planner.largest_block(nz_kernel, "ROWS", NZ_ROWS, grad, src, grad, platform=platform),
                   ascdsl.next_power_of_2(mp))
        row_blocks = ascdsl.cdiv(mp, rows)
        units = batches * row_blocks
        used = min(cores, units)
        return ascdsl.Launch(nz_kernel, grid=(used,), variant="nz", constexprs={"ROWS": rows},
                             scalars={"k1": k1, "mp": mp, "row_blocks": row_blocks,
                                      "per_core": units // used, "big_cores": units % used})
    k = grad.shape[n - 1]
    m = 1
    for i in range(n - 1):
        m = m * grad.shape[i]
    if m > ROW_LIMIT:
        raise ValueError(f"softmax_grad indexes rows in int32: {m} rows are more than {ROW_LIMIT}; split the "
                         "tensor along its leading axes")
    if m == 0 or (k == 0 and not is_front):
        return ascdsl.Launch(two_pass_kernel, grid=(0,), variant="empty",
                             constexprs={"BLOCK_K": align, "FRONT": is_front, "ALIGN": align, "EXCHANGE": False},
                             scratch={"partials_ptr": (tl.float32, 0)})
    used = min(cores, m)
    block_k = max(1, ascdsl.cdiv(k, align)) * align  # a row in whole 32-byte blocks
    # Not for is_front: beside its [ROWS, ALIGN] store, rows of 200 and more elements make ROWS no runtime
    # extent the planner can size.
    flat = packed and not is_front and reads_flat(dtype.itemsize, m, k, used)
    if flat:
        rows = ascdsl.planner.largest_extent(packed_kernel, "ROWS", grad, src, grad, platform=platform, K=k)
    else:
        rows = ascdsl.planner.largest_extent(rows_kernel, "ROWS", grad, src, grad, platform=platform, BLOCK_K=block_k,
                                             FRONT=is_front, ALIGN=32 // grad.dtype.itemsize)
    # the rows past the last whole round of the cores in column parts over them, in the two-pass kernel, where
    # rows_in_parts says so; rows that fit the UB are then read twice, the second time from the L2: worth it in
    # float32 (16-bit rows are bound by the vector unit) where a core has at most PART_WHOLE_ROWS whole rows and a
    # row goes in 4 parts or more (measured, see docs/performance.md)
    used, per_core, big_cores, tail, parts, part_k = rows_in_parts(m, k, dtype.itemsize, cores, rows, PART_WHOLE_ROWS,
                                                                   not is_front and not flat)
    if rows >= 1 and tail == 0:
        rows = min(rows, ascdsl.cdiv(m, used))
        if ascdsl.cdiv(ascdsl.cdiv(m, used), rows) < TILES_PER_CORE:
            # a core's rows in TILES_PER_CORE tiles, so that its loads overlap its compute, but no tile of
            # an input under MIN_TILE_BYTES, whose copy set-up would cost more than that gains
            rows = min(rows, max(ascdsl.cdiv(ascdsl.cdiv(m, used), TILES_PER_CORE),
                                 ascdsl.cdiv(MIN_TILE_BYTES, max(k, 1) * dtype.itemsize)))
        if flat:
            return ascdsl.Launch(packed_kernel, grid=(used,), variant="packed",
                                 scalars={"per_core": m // used, "big_cores": m % used},
                                 constexprs={"ROWS": rows, "K": k})
        return ascdsl.Launch(rows_kernel, grid=(used,), variant="rows",
                             scalars={"k": k, "per_core": per_core, "big_cores": big_cores},
                             constexprs={"ROWS": rows, "BLOCK_K": block_k, "FRONT": is_front, "ALIGN": align})
    # the parts of a row exchange their partial sums (GM scratch and a grid barrier) where that saves each a
    # re-read of EXCHANGE_ELEMENTS or more, else each sums its whole row again (measured: docs/performance.md)
    saved = EXCHANGE_ELEMENTS
    if dtype.itemsize == 2:
        saved = EXCHANGE_ELEMENTS_16
    exchange = tail > 0 and k - part_k >= saved and parts <= MAX_PARTS
    block_k = ascdsl.planner.largest_extent(two_pass_kernel, "BLOCK_K", grad, src, grad, tl.pointer_type(tl.float32),
                                            platform=platform, FRONT=is_front, ALIGN=32 // grad.dtype.itemsize,
                                            EXCHANGE=exchange) // align * align
    if block_k < align:
        raise ValueError(f"no chunk of a {k}-element row fits the UB of {platform.name}")
    # chunks of equal length: a short last chunk would cost a whole one's vector work
    block_k = ascdsl.cdiv(ascdsl.cdiv(k, ascdsl.cdiv(k, block_k)), align) * align
    return ascdsl.Launch(two_pass_kernel, grid=(used,), variant="two_pass",
                         scalars={"k": k, "per_core": per_core, "big_cores": big_cores,
                                  "tail": tail, "parts": parts, "part_k": part_k},
                         constexprs={"BLOCK_K": block_k, "FRONT": is_front, "ALIGN": align, "EXCHANGE": exchange},
                         scratch={"partials_ptr": (tl.float32, used)})


@ascdsl.host
def softmax_grad_out_shape(grad, src, is_front):
    """``grad.shape``, or with ``is_front`` one 32-byte block per row."""
    if is_front:
        return grad.shape[:grad.ndim - 1] + (32 // grad.dtype.itemsize,)
    return grad.shape


def resolve_platform(platform):
    """The platform row for ``platform`` (a name, or None for ``ASCDSL_PLATFORM`` or the default)."""
    return get_platform(platform or os.environ.get("ASCDSL_PLATFORM") or DEFAULT_PLATFORM)


@ascdsl.entry
def softmax_grad(grad, src, *, is_front=False, format="ND", impl="dsl", platform=None, backend=None):
    """``(grad - sum(grad * src, -1)) * src``, or with ``is_front`` the row sums broadcast to one
    32-byte block per row. ``format="NZ"`` takes and returns the NZ layout of :mod:`ascdsl.layout`;
    ``impl="api"`` lowers through the ``AscendC::SoftmaxGrad`` API (simulator only)."""
    if format not in ("ND", "NZ"):
        raise ascdsl.InputValueError(f"format must be 'ND' or 'NZ', got {format!r}")
    if impl not in ("dsl", "api"):
        raise ascdsl.InputValueError(f"impl must be 'dsl' or 'api', got {impl!r}")
    if not isinstance(is_front, (bool, np.bool_)):
        raise ascdsl.InputTypeError(f"is_front must be a bool, got {is_front!r}")
    grad, src = np.asarray(grad, order="C"), np.asarray(src, order="C")
    target = resolve_platform(platform)
    plan = softmax_grad_host(ascdsl.TensorDesc.of(grad), ascdsl.TensorDesc.of(src), bool(is_front), target,
                             nz=format == "NZ", packed=True)
    if impl == "api":
        return softmax_grad_api(grad, src, bool(is_front), format == "NZ", target, backend)
    shape = grad.shape[:-1] + (32 // grad.dtype.itemsize,) if is_front else grad.shape
    out = np.empty(shape, grad.dtype)
    plan(grad, src, out, backend=backend, platform=target.name)
    return out


# ----------------------------------------------------------------------------- impl="api"

API_HOST = "SoftmaxGradApiTiling"
API_TILING_HEADER = "softmax_grad_api_tiling.h"
API_TEMPLATES = Path(__file__).parent / "softmax_grad_api"
"""The API lowering's Jinja templates (rendered by :func:`ascdsl.render_template`)."""
API_TILING_WORDS = 8 + 16  # SoftmaxGradApiTilingData: 8 uint32 fields, then the 16 of SoftMaxTiling


def api_kernel_name(dtype, is_front) -> str:
    return f"softmax_grad{'_front' if is_front else ''}_api_{dtype.short}"


def render_softmax_grad_api(dtype, is_front) -> dict[str, str]:
    """The API lowering's files for ``dtype`` (float32 or float16): the kernel, the tiling struct it
    shares with the host, and the host tiling function (calling CANN's SoftmaxGrad tiling API)."""
    cpp = dtype.cpp
    name = api_kernel_name(dtype, is_front)
    if is_front:
        call = f"SoftmaxGradFront<{cpp}>(dst, grad, src, tmp_.Get<uint8_t>(), t_.softmax, shape);"
        copy_out = "DataCopy(dstGm_[row * t_.outCols], dst, count * t_.outCols);"
    else:
        call = f"SoftmaxGrad<{cpp}>(dst, grad, src, tmp_.Get<uint8_t>(), t_.softmax, false, shape);"
        copy_out = (f"DataCopyPad(dstGm_[row * t_.cols], dst, "
                    f"{{static_cast<uint16_t>(count), static_cast<uint32_t>(t_.cols * sizeof({cpp})), 0, 0, 0}});")
    kernels = [api_kernel_name(d, f) for d in (dtypes.float32, dtypes.float16) for f in (False, True)]
    return {
        f"{name}.cpp": render_template(
            API_TEMPLATES / "softmax_grad_api.cpp.j2", api="SoftmaxGradFront" if is_front else "SoftmaxGrad",
            cpp_type=cpp, class_name="KernelSoftmaxGradApi", kernel_name=name, api_call=call, copy_out=copy_out,
            dst_cols="t.outCols" if is_front else "t.cols", tiling_header=API_TILING_HEADER, host=API_HOST),
        API_TILING_HEADER: render_template(API_TEMPLATES / "softmax_grad_api_tiling.h.j2", kernels=kernels,
                                           host=API_HOST),
        "softmax_grad_api_host.cpp": render_template(API_TEMPLATES / "softmax_grad_api_host.cpp.j2", host=API_HOST),
    }


def write_softmax_grad_api(dtype, is_front) -> Path:
    """The API lowering's files in a cache folder named by their contents; returns the folder."""
    files = render_softmax_grad_api(dtype, is_front)
    folder = ascdsl.cache.folder("softmax-grad-api", ascdsl.cache.digest(*(part for item in sorted(files.items()) for part in item))[:24])
    for rel, text in files.items():
        ascdsl.cache.write_text(folder / rel, text)
    return folder


def softmax_grad_api_tiling(folder: Path, m, k, dtype, is_front, platform) -> tuple[np.ndarray, int]:
    """``SoftmaxGradApiTilingData`` (as uint32 words) and the block dim for ``[m, k]``, from the
    generated host tiling function in ``folder``."""
    host_fn = getattr(softmax_tiling.host_library([folder / "softmax_grad_api_host.cpp"]), API_HOST)
    host_fn.restype = ctypes.c_int32
    words = np.zeros(API_TILING_WORDS, np.uint32)
    block_dim, row_bytes = ctypes.c_uint32(0), ctypes.c_uint32(0)
    status = host_fn(ctypes.c_uint32(m), ctypes.c_uint32(k), ctypes.c_uint32(dtype.itemsize), ctypes.c_bool(is_front),
                     ctypes.c_uint32(platform.vector_core_count), ctypes.c_uint64(platform.ub_budget_bytes),
                     words.ctypes.data_as(ctypes.c_void_p), ctypes.byref(block_dim), ctypes.byref(row_bytes))
    if status != 0:
        raise ascdsl.InputValueError(
            f"impl='api' cannot serve rows of {k} {dtype} elements: one row with the API's temporary "
            f"buffer needs {row_bytes.value} B of UB, over the {platform.ub_budget_bytes} B budget; use impl='dsl'")
    return words, block_dim.value


def softmax_grad_api(grad, src, is_front, nz, platform, backend):
    """Run the API lowering on the simulator (the only backend that runs hand-written Ascend C)."""
    dtype = ascdsl.TensorDesc.of(grad).dtype
    if (backend or os.environ.get("ASCDSL_BACKEND")) != "sim":
        raise ascdsl.InputValueError("impl='api' calls the AscendC::SoftmaxGrad API, which only the "
                                     "simulator runs: pass backend='sim' (or use impl='dsl')")
    if dtype.name == "bfloat16":
        raise ascdsl.InputTypeError("impl='api' cannot serve bfloat16: AscendC::SoftmaxGrad supports half "
                                    "and float only; use impl='dsl'")
    if nz:
        raise ascdsl.InputValueError("impl='api' with format='NZ' is not implemented; use impl='dsl'")
    k = grad.shape[-1]
    m = grad.size // k if k else 0
    out = np.zeros(grad.shape[:-1] + (32 // dtype.itemsize,) if is_front else grad.shape, grad.dtype)
    if m == 0 or k == 0:  # nothing to compute; SoftmaxGradFront of empty rows: the sums are zero
        return out
    folder = write_softmax_grad_api(dtype, is_front)
    words, blocks = softmax_grad_api_tiling(folder, m, k, dtype, is_front, platform)
    source = folder / f"{api_kernel_name(dtype, is_front)}.cpp"
    sim.check_front_end(source)  # clang++'s front end, as every generated kernel
    sim.run_kernel(source, api_kernel_name(dtype, is_front),
                   [grad, src, out, None, words.view(np.uint8).copy()], blocks, platform.name)
    return out


def reference(grad, src, *, is_front=False, format="ND", dtype=None):
    """float64 golden model; ``dtype`` is the inputs' dtype when ``grad`` is a float64 copy (``is_front``
    broadcasts to ``32 // itemsize`` of it)."""
    if format == "NZ":  # rows are [..., :, i, :] of [..., K1, Mp, 16]
        total = (grad * src).sum(axis=(-3, -1), keepdims=True)
        return (grad - total) * src
    total = (grad * src).sum(axis=-1, keepdims=True)
    if is_front:
        return np.broadcast_to(total, grad.shape[:-1] + (32 // (dtype or grad.dtype).itemsize,))
    return (grad - total) * src


def error_scale(grad, src, *, is_front=False, format="ND", dtype=None):
    """The magnitude of the terms the result cancels: ``total = sum(grad * src)`` is exact only to ulps of
    ``sum|grad * src|``, and ``(grad - total) * src`` to ``|src| * (|grad| + sum|grad * src|)``."""
    terms = np.abs(grad * src).sum(axis=(-3, -1) if format == "NZ" else -1, keepdims=True)
    if is_front:
        return np.broadcast_to(terms, grad.shape[:-1] + (32 // (dtype or grad.dtype).itemsize,))
    return np.abs(src) * (np.abs(grad) + terms)


CASES = [ascdsl.Case(shape, shape, dtype=dt) for dt in ("float32", "float16", "bfloat16")
         for shape in ((1,), (4, 31), (3, 32), (5, 33), (2, 3, 7))]
CASES += [ascdsl.Case((2, 10000), (2, 10000), dtype="float16"), ascdsl.Case((2, 10000), (2, 10000)),
          ascdsl.Case((2, 10000), (2, 10000), dtype="bfloat16"),  # two-pass parts that sum their whole rows
          ascdsl.Case((100, 33), (100, 33)),  # three rows per core: tiles of several rows, a burst a row
          ascdsl.Case((1300, 33), (1300, 33)),  # 32 rows a core: the entry's packed rows
          ascdsl.Case((0, 8), (0, 8)), ascdsl.Case((3, 0), (3, 0)),
          ascdsl.Case((2, 3, 16, 16), (2, 3, 16, 16), format="NZ")]
CASES += [ascdsl.Case(shape, shape, dtype=dt, is_front=True)
          for shape, dt in (((4, 31), "float32"), ((5, 33), "float16"), ((2, 3, 7), "bfloat16"),
                            ((2, 5000), "float32"), ((3, 0), "float32"))]

NOTES = """The op project serves the ND format only. The FRACTAL_NZ path (`format="NZ"`) and
`impl="api"` exist only in the Python entry `softmax_grad` of `ops/softmax_grad.py`: the OpDef has no
format attribute, and the generated tiling function is the host function with `nz=False`.
`is_front=true` returns the row sums, one 32-byte block per row: output shape `grad.shape[:-1] + (32 / sizeof(T),)`."""

OP = ascdsl.Operator(name="softmax_grad", op_type="SoftmaxGrad", entry=softmax_grad, host=softmax_grad_host,
                     reference=reference, cases=CASES, inputs=("grad", "src"),
                     outputs=(ascdsl.Output("out", shape=softmax_grad_out_shape),),
                     attrs=(ascdsl.Attr("is_front", "Bool", False),),
                     dtypes=("float32", "float16", "bfloat16"), notes=NOTES, error_scale=error_scale)
