"""LogSoftmaxBackward: grad_input = grad_output - exp(output) * sum(grad_output, dim).

``output`` is the forward log-softmax result, so ``exp(output)`` is the softmax. The host merges
the shape around the reduced axes into ``[d0, d1, d2]`` (``d1`` reduced) and picks a variant:

* ``no_reduce`` (``d1 == 1``): the sum over a single element is ``grad_output`` itself, so
  ``grad_input = grad_output - exp(output) * grad_output``, elementwise over ``d0 * d2`` values;
* ``reduce_tail`` (``d2 == 1``): rows of ``d1`` contiguous values, ``[ROWS, BLOCK_R]`` tiles; from the
  Python entry, 16-bit rows of ``d1 = 8 mod 16`` elements under 1 KiB ``reduce_tail_packed``: a tile of
  ``ROWS * d1`` values read flat (one burst, where padded rows are a burst each), whose float32 rows are
  whole blocks;
* ``reduce_middle``: ``[BLOCK_R, BLOCK_B]`` tiles of one ``d0`` index, summed over the rows;

each of these ``full_load`` (the whole reduced extent is one tile) or ``recompute`` (a first
pass sums chunk by chunk, a second pass reloads and writes: the reduced extent does not fit UB);

* ``reduce_middle_lines`` (columns ``d2`` under 256 bytes and not a whole 64 bytes): the slab
  ``[d1, d2]`` of one ``d0`` index read flat, as lines of ``GROUP`` whole rows (``GROUP * d2`` values,
  whole 32-byte blocks, at least 256 bytes), so a tile of lines is one burst where a column tile would
  be one burst of ``d2`` values a row. A first pass sums the lines, then folds the line's ``GROUP``
  rows into the ``d2`` sums; a second pass writes. Every core takes the same number of whole slabs (``whole``
  of them in all: none with fewer slabs than cores) and the slabs past them go in ``parts`` over the cores,
  each part summing its whole slab again (from the L2 but for the first) and writing its own lines, so 82
  slabs on 40 cores are 2 whole slabs a core and 2 slabs in parts, not 3 whole slabs on 2 cores. A tile takes
  at most a slab's lines (a part's where a core has no whole slab); a core whose two passes read fewer lines
  than ``TILES_PER_CORE`` tiles of them takes them in that many (none under ``MIN_TILE_BYTES``), so that its
  loads overlap.
  ``reduce_middle_slabs`` (the same columns, ``TILES_PER_CORE`` slabs a core or more, a slab that fits UB):
  tiles of ``SLABS`` whole slabs ``[SLABS, LINES * GROUP * INNER]`` (a burst a slab), each read once, the
  lines summed and folded into the ``d2`` sums for all of the tile's slabs at once (3-D sums whose rows are a
  call's repeats), where the lines kernel reads ``grad_output`` twice and folds a slab at a time: a chain of
  dependent vector calls a slab.
The outer work (rows, ``(d0, column-block)`` pairs, or element blocks) is split over the platform's
vector cores: one program per core, the first ``big_cores`` programs take one unit more; ``reduce_tail``'s rows
past the last whole round of the cores go in column parts over them as softmax_grad's do (``reduce_tail_recompute``,
each part summing its whole row of ``dy`` again; rows that fit the UB in float32, in 4 parts or more, with at
most ``PART_WHOLE_ROWS`` whole rows a core).

Tile sizes are runtime tile extents (tiling fields: one kernel class per algorithm serves every shape),
sized from the kernel's exact UB footprint (``ascdsl.planner.largest_extent``; the generated tiling
function evaluates the same footprint). ``no_reduce`` blocks are as long as fit, then evened out over
whole rounds of the cores (equal blocks, a multiple of 32 bytes). A reduced row is its length rounded
up to a 32-byte block (a row of 1025 floats is 1032 lanes), the full-load tile takes as many rows as
fit the budget (at most the rows of one core), rows over UB go in chunks of equal length as large as
fit, and the reduce-middle tiles take the reduced extent whole (rounded up to 2) with the widest column
tile (a multiple of 64 bytes) that fits if that is 256 bytes or all the columns, or else 256 columns
and as many rows as fit.

PyTorch's ``torch.ops.aten._log_softmax_backward_data`` is the semantic reference. The source
document's note that the no-reduce case simplifies to ``(grad_output - 1) * exp(output)`` is wrong
(it is ``grad_output * (1 - exp(output))``); the mathematics is implemented and pinned by a test.
"""
import os

import numpy as np

import ascdsl
import ascdsl.language as tl
from ascdsl.lib import core_span, load_flat_rows, part_span, reads_flat, row_part, rows_in_parts, store_flat_rows
from ascdsl.platforms import DEFAULT_PLATFORM, get_platform

MAX_DIMS = 8
TILES_PER_CORE = 4  # the full-load kernel's fewest tiles a core, where its rows allow
MIN_TILE_BYTES = 8192  # the fewest bytes of an input such a tile holds
PART_WHOLE_ROWS = 4  # the most whole rows a core takes beside a part of a row that fits the UB
ROW_LIMIT = 1 << 30  # row indices (a core's first row plus a tile of rows) stay far inside int32


@ascdsl.jit
def no_reduce_kernel(dy_ptr, x_ptr, out_ptr, n, per_core, big_cores, BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    lanes = tl.arange(0, BLOCK)
    for block in range(start, end):
        offsets = block * BLOCK + lanes
        mask = offsets < n
        dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        out = dy - tl.exp(x) * dy
        tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def reduce_tail_full_kernel(dy_ptr, x_ptr, out_ptr, d1, per_core, big_cores,
                            ROWS: tl.constexpr, BLOCK_R: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    cols = tl.arange(0, BLOCK_R)
    for row0 in range(start, end, ROWS):
        rows = row0 + tl.arange(0, ROWS)
        offsets = rows[:, None] * d1 + cols[None, :]
        mask = (rows[:, None] < end) & (cols[None, :] < d1)
        dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        total = tl.sum(dy, axis=1)
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        out = dy - tl.exp(x) * total[:, None]
        tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def reduce_tail_packed_kernel(dy_ptr, x_ptr, out_ptr, per_core, big_cores, ROWS: tl.constexpr, D1: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    for row0 in range(start, end, ROWS):
        dy = load_flat_rows(dy_ptr, row0, end, ROWS, D1)
        out = dy - tl.exp(load_flat_rows(x_ptr, row0, end, ROWS, D1)) * tl.sum(dy, axis=1)[:, None]
        store_flat_rows(out_ptr, row0, end, out)


@ascdsl.jit
def reduce_tail_recompute_kernel(dy_ptr, x_ptr, out_ptr, d1, per_core, big_cores, tail, parts, part_k,
                                 BLOCK_R: tl.constexpr):
    start, end, last = part_span(per_core, big_cores, tail)
    lanes = tl.arange(0, BLOCK_R)
    for unit in range(start, last):
        # past its whole rows, one of the first `tail` cores writes a part of a row past the last whole round
        row, first, stop = row_part(unit, end, per_core, parts, part_k, d1)
        total = tl.zeros((1,), tl.float32)
        for col0 in range(0, d1, BLOCK_R):
            cols = col0 + lanes
            mask = cols[None, :] < d1
            dy = tl.load(dy_ptr + row * d1 + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            total += tl.sum(dy, axis=1)
        for col0 in range(first, stop, BLOCK_R):
            cols = col0 + lanes
            mask = cols[None, :] < stop
            offsets = row * d1 + cols[None, :]
            dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            out = dy - tl.exp(x) * total[:, None]
            tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def reduce_middle_full_kernel(dy_ptr, x_ptr, out_ptr, d1, d2, col_blocks, per_core, big_cores,
                              BLOCK_R: tl.constexpr, BLOCK_B: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    rows = tl.arange(0, BLOCK_R)
    lanes = tl.arange(0, BLOCK_B)
    for unit in range(start, end):
        a = unit // col_blocks
        cols = (unit - a * col_blocks) * BLOCK_B + lanes
        offsets = a * d1 * d2 + rows[:, None] * d2 + cols[None, :]
        mask = (rows[:, None] < d1) & (cols[None, :] < d2)
        dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        total = tl.sum(dy, axis=0)
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        out = dy - tl.exp(x) * total[None, :]
        tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def reduce_middle_recompute_kernel(dy_ptr, x_ptr, out_ptr, d1, d2, col_blocks, per_core, big_cores,
                                   BLOCK_R: tl.constexpr, BLOCK_B: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    lanes_r = tl.arange(0, BLOCK_R)
    lanes = tl.arange(0, BLOCK_B)
    for unit in range(start, end):
        a = unit // col_blocks
        cols = (unit - a * col_blocks) * BLOCK_B + lanes
        base = a * d1 * d2
        total = tl.zeros((BLOCK_B,), tl.float32)
        for row0 in range(0, d1, BLOCK_R):
            rows = row0 + lanes_r
            mask = (rows[:, None] < d1) & (cols[None, :] < d2)
            dy = tl.load(dy_ptr + base + rows[:, None] * d2 + cols[None, :], mask=mask, other=0.0)
            total += tl.sum(dy.to(tl.float32), axis=0)
        for row0 in range(0, d1, BLOCK_R):
            rows = row0 + lanes_r
            offsets = base + rows[:, None] * d2 + cols[None, :]
            mask = (rows[:, None] < d1) & (cols[None, :] < d2)
            dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
            out = dy - tl.exp(x) * total[None, :]
            tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def reduce_middle_lines_kernel(dy_ptr, x_ptr, out_ptr, slab, lines, part_lines, parts, whole, per_core, big_cores,
                               BLOCK_L: tl.constexpr, GROUP: tl.constexpr, INNER: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    flat = tl.arange(0, BLOCK_L * GROUP * INNER)
    for unit in range(start, end):
        # the first big_cores cores take whole slabs, then a part of a slab from `whole` on (their last unit)
        core = unit // (per_core + 1)
        split = (unit - core * (per_core + 1) == per_core) & (core < big_cores)
        a = tl.where(split, whole + core // parts, unit - tl.minimum(core, big_cores))
        base = a * slab
        line_sums = tl.zeros((GROUP * INNER,), tl.float32)
        for line0 in range(0, lines, BLOCK_L):
            offsets = line0 * (GROUP * INNER) + flat
            dy = tl.load(dy_ptr + base + offsets, mask=offsets < slab, other=0.0).to(tl.float32)
            line_sums += tl.sum(tl.reshape(dy, (BLOCK_L, GROUP * INNER)), axis=0)
        total = tl.sum(tl.reshape(line_sums, (GROUP, INNER)), axis=0)
        line = tl.reshape(tl.broadcast_to(total[None, :], (GROUP, INNER)), (GROUP * INNER,))
        first = tl.where(split, (core - core // parts * parts) * part_lines, 0)
        stop = tl.minimum(tl.where(split, first + part_lines, lines), lines)
        last = tl.minimum(stop * (GROUP * INNER), slab)
        for line0 in range(first, stop, BLOCK_L):
            offsets = line0 * (GROUP * INNER) + flat
            mask = offsets < last
            dy = tl.load(dy_ptr + base + offsets, mask=mask, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + base + offsets, mask=mask, other=0.0).to(tl.float32)
            lined = tl.reshape(dy, (BLOCK_L, GROUP * INNER)) - \
                tl.reshape(tl.exp(x), (BLOCK_L, GROUP * INNER)) * line[None, :]
            out = tl.reshape(lined, (BLOCK_L * GROUP * INNER,))
            tl.store(out_ptr + base + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def reduce_middle_slabs_kernel(dy_ptr, x_ptr, out_ptr, slab, per_core, big_cores, SLABS: tl.constexpr,
                               LINES: tl.constexpr, GROUP: tl.constexpr, INNER: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    cols = tl.arange(0, LINES * GROUP * INNER)
    for a0 in range(start, end, SLABS):
        slabs = a0 + tl.arange(0, SLABS)
        offsets = slabs[:, None] * slab + cols[None, :]
        mask = (slabs[:, None] < end) & (cols[None, :] < slab)
        dy = tl.reshape(tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32), (SLABS, LINES, GROUP * INNER))
        total = tl.sum(tl.reshape(tl.sum(dy, axis=1), (SLABS, GROUP, INNER)), axis=1)
        line = tl.reshape(tl.broadcast_to(total[:, None, :], (SLABS, GROUP, INNER)), (SLABS, GROUP * INNER))
        x = tl.reshape(tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32), (SLABS, LINES, GROUP * INNER))
        out = tl.reshape(dy - tl.exp(x) * line[:, None, :], (SLABS, LINES * GROUP * INNER))
        tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.host
def log_softmax_backward_host(grad_output, output, dim, platform, lines=False):
    """Validate, merge the shape to ``[d0, d1, d2]`` around the reduced axis ``dim`` (an int, as the
    OpDef's attribute; lists of contiguous axes are merged into one by the Python entry) and plan the
    launch on ``platform`` (a :class:`ascdsl.platforms.Platform`). ``lines``: columns under 256 bytes may
    take ``reduce_middle_lines``, whose fold of a line into its rows is a kernel per ``d2``, and short 16-bit
    rows ``reduce_tail_packed``, a kernel per ``d1``, not runtime extents; the op project's tiling function
    is this function with ``lines=False`` (column tiles and padded rows, which serve every length), the
    Python entry passes True."""
    if grad_output.shape != output.shape:
        raise ValueError(f"grad_output and output must have the same shape (no broadcasting), "
                         f"got {grad_output.shape} and {output.shape}")
    if grad_output.dtype != output.dtype:
        raise TypeError(f"grad_output and output must have the same dtype, "
                        f"got {grad_output.dtype} and {output.dtype}")
    dtype = grad_output.dtype
    if dtype.name not in ("float32", "float16", "bfloat16"):
        raise TypeError(f"log_softmax_backward supports float32, float16 and bfloat16, not {dtype}")
    if dtype.name == "bfloat16" and not platform.has_bf16:
        raise TypeError(f"{platform.name} cannot cast bfloat16 to float32, so it cannot compute "
                        "bfloat16 log_softmax_backward; use float16 or float32")
    n = grad_output.ndim
    if n > MAX_DIMS:
        raise ValueError(f"log_softmax_backward supports at most {MAX_DIMS} dims, got {n}")
    rank = max(n, 1)  # a rank-0 tensor takes dim -1 or 0, as PyTorch allows
    if dim < -rank or dim >= rank:
        raise ValueError(f"dim {dim} is out of range [{-rank}, {rank - 1}] for a tensor of rank {n}")
    axis = (dim + rank) % rank
    d0 = 1
    d1 = 1
    d2 = 1
    for i in range(n):
        if i < axis:
            d0 = d0 * grad_output.shape[i]
        elif i == axis:
            d1 = grad_output.shape[i]
        else:
            d2 = d2 * grad_output.shape[i]
    cores = platform.vector_core_count
    align = 32 // dtype.itemsize  # elements per 32-byte block
    if d0 * d1 * d2 == 0:
        return ascdsl.Launch(no_reduce_kernel, grid=(0,), variant="empty", constexprs={"BLOCK": align})
    if d0 * d2 > ROW_LIMIT:
        raise ValueError(f"log_softmax_backward indexes rows in int32: {d0 * d2} rows are more than {ROW_LIMIT}; "
                         "split the tensor along an axis it does not reduce")

    if d1 == 1:
        count = d0 * d2
        largest = ascdsl.planner.largest_extent(no_reduce_kernel, "BLOCK", grad_output, output, grad_output,
                                                platform=platform) // align * align
        if largest < align:
            raise ValueError(f"no block of {align} elements fits the UB of {platform.name}")
        # whole cores' worth of blocks, then blocks of equal length (a short last block would cost a
        # whole one's vector work on its core)
        units = ascdsl.cdiv(ascdsl.cdiv(count, largest), cores) * cores
        block = ascdsl.cdiv(ascdsl.cdiv(count, units), align) * align
        units = ascdsl.cdiv(count, block)
        used = min(cores, units)
        return ascdsl.Launch(no_reduce_kernel, grid=(used,), variant="no_reduce",
                             constexprs={"BLOCK": block},
                             scalars={"n": count, "per_core": units // used, "big_cores": units % used})

    block_r = ascdsl.cdiv(d1, align) * align  # a reduced row in whole 32-byte blocks
    if d2 == 1:
        used = min(cores, d0)
        packed = lines and reads_flat(dtype.itemsize, d0, d1, used)
        if packed:
            rows = ascdsl.planner.largest_extent(reduce_tail_packed_kernel, "ROWS", grad_output, output, grad_output,
                                                 platform=platform, D1=d1)
        else:
            rows = ascdsl.planner.largest_extent(reduce_tail_full_kernel, "ROWS", grad_output, output, grad_output,
                                                 platform=platform, BLOCK_R=block_r)
        # as softmax_grad's rows: the rows past the last whole round of the cores in parts over them, in the
        # recompute kernel, where rows_in_parts says so (the part sums `dy` alone: more whole rows than
        # softmax_grad's two inputs allow)
        used, per_core, big_cores, tail, parts, part_k = rows_in_parts(d0, d1, dtype.itemsize, cores, rows,
                                                                       PART_WHOLE_ROWS, not packed)
        if rows >= 1 and tail == 0:
            rows = min(rows, ascdsl.cdiv(d0, used))
            if ascdsl.cdiv(ascdsl.cdiv(d0, used), rows) < TILES_PER_CORE:
                # a core's rows in TILES_PER_CORE tiles, so that its loads overlap its compute, but no tile of
                # an input under MIN_TILE_BYTES, whose copy set-up would cost more than that gains
                rows = min(rows, max(ascdsl.cdiv(ascdsl.cdiv(d0, used), TILES_PER_CORE),
                                     ascdsl.cdiv(MIN_TILE_BYTES, d1 * dtype.itemsize)))
            if packed:
                return ascdsl.Launch(reduce_tail_packed_kernel, grid=(used,), variant="reduce_tail_packed",
                                     constexprs={"ROWS": rows, "D1": d1},
                                     scalars={"per_core": d0 // used, "big_cores": d0 % used})
            return ascdsl.Launch(reduce_tail_full_kernel, grid=(used,), variant="reduce_tail_full_load",
                                 constexprs={"ROWS": rows, "BLOCK_R": block_r},
                                 scalars={"d1": d1, "per_core": per_core, "big_cores": big_cores})
        chunk = ascdsl.planner.largest_extent(reduce_tail_recompute_kernel, "BLOCK_R", grad_output, output,
                                              grad_output, platform=platform)
        chunk = chunk // align * align
        if chunk < align:
            raise ValueError(f"no chunk of a {d1}-element row fits the UB of {platform.name}")
        # chunks of equal length: a short last chunk would cost a whole one's vector work
        chunk = ascdsl.cdiv(ascdsl.cdiv(d1, ascdsl.cdiv(d1, chunk)), align) * align
        return ascdsl.Launch(reduce_tail_recompute_kernel, grid=(used,), variant="reduce_tail_recompute",
                             constexprs={"BLOCK_R": chunk},
                             scalars={"d1": d1, "per_core": per_core, "big_cores": big_cores,
                                      "tail": tail, "parts": parts, "part_k": part_k})

    wide = 2 * align  # the column tiles of the reduce-middle kernels: multiples of 64 bytes
    if lines and d2 % wide != 0 and d2 < 8 * align:
        # columns under 256 bytes: a slab [d1, d2] read as lines of GROUP whole rows, whole 32-byte blocks
        # of at least 256 bytes, whose tiles are contiguous in GM (one burst, not one of d2 a row)
        common = 1  # gcd(d2, align)
        for i in range(1, align + 1):
            if d2 % i == 0 and align % i == 0:
                common = i
        group = align // common * ascdsl.cdiv(8 * align, align // common * d2)
        slab_lines = ascdsl.cdiv(d1 * d2, group * d2)
        # the slabs past the last whole round of the cores (all of them with fewer slabs than cores): each one's
        # lines in parts over the cores, each part summing the whole slab (its re-reads mostly from the L2) and
        # writing its own lines, beside the whole slabs of the rounds
        whole = d0 // cores * cores
        rest = d0 - whole
        parts = min(max(1, cores // rest), slab_lines) if rest else 1
        part_lines = ascdsl.cdiv(slab_lines, parts)
        parts = ascdsl.cdiv(slab_lines, part_lines)
        used = cores if whole else rest * parts
        slabs = slabs_a_tile(grad_output, output, platform, d0, d1 * d2, slab_lines, group, d2)
        if slabs:  # tiles of whole slabs, each read once, the fold of a tile's slabs one set of calls
            return ascdsl.Launch(reduce_middle_slabs_kernel, grid=(cores,), variant="reduce_middle_slabs",
                                 constexprs={"SLABS": slabs, "LINES": slab_lines, "GROUP": group, "INNER": d2},
                                 scalars={"slab": d1 * d2, "per_core": d0 // cores, "big_cores": d0 % cores})
        block_l = min(ascdsl.planner.largest_extent(reduce_middle_lines_kernel, "BLOCK_L", grad_output, output,
                                                    grad_output, platform=platform, GROUP=group, INNER=d2),
                      slab_lines if whole else part_lines)
        # the lines a core's two passes read (its whole slabs', and a part's)
        mine = whole // cores * 2 * slab_lines + (slab_lines + part_lines if rest else 0)
        if ascdsl.cdiv(mine, block_l) < TILES_PER_CORE:
            # as the full-load tiles: a core's few lines in TILES_PER_CORE tiles, none under MIN_TILE_BYTES
            block_l = min(block_l, max(ascdsl.cdiv(mine, TILES_PER_CORE),
                                       ascdsl.cdiv(MIN_TILE_BYTES, group * d2 * dtype.itemsize)))
        return ascdsl.Launch(reduce_middle_lines_kernel, grid=(used,), variant="reduce_middle_lines",
                             constexprs={"BLOCK_L": block_l, "GROUP": group, "INNER": d2},
                             scalars={"slab": d1 * d2, "lines": slab_lines, "part_lines": part_lines, "parts": parts,
                                      "whole": whole, "per_core": whole // cores, "big_cores": rest * parts})
    block_b = ascdsl.cdiv(d2, wide) * wide
    block_r = ascdsl.cdiv(d1, 2) * 2
    fit = ascdsl.planner.largest_extent(reduce_middle_full_kernel, "BLOCK_B", grad_output, output, grad_output,
                                        platform=platform, BLOCK_R=block_r) // wide * wide
    if fit >= min(block_b, 8 * align):  # a full-load column tile is worth it from 256-byte bursts
        kernel = reduce_middle_full_kernel
        variant = "reduce_middle_full_load"
        block_b = min(block_b, fit)
    else:
        kernel = reduce_middle_recompute_kernel
        variant = "reduce_middle_recompute"
        block_b = min(block_b, 256)
        rows = ascdsl.planner.largest_extent(reduce_middle_recompute_kernel, "BLOCK_R", grad_output, output,
                                             grad_output, platform=platform, BLOCK_B=block_b) // 2 * 2
        if rows < 2:
            raise ValueError(f"no tile of {block_b} columns fits the UB of {platform.name}")
        block_r = min(block_r, rows)
    col_blocks = ascdsl.cdiv(d2, block_b)
    units = d0 * col_blocks
    used = min(cores, units)
    return ascdsl.Launch(kernel, grid=(used,), variant=variant,
                         constexprs={"BLOCK_R": block_r, "BLOCK_B": block_b},
                         scalars={"d1": d1, "d2": d2, "col_blocks": col_blocks,
                                  "per_core": units // used, "big_cores": units % used})


def slabs_a_tile(grad_output, output, platform, d0, slab, lines, group, inner) -> int:
    """``SLABS`` of ``reduce_middle_slabs_kernel`` for ``d0`` slabs of ``slab`` values (``lines`` lines of
    ``group`` rows of ``inner``), or 0 where the lines kernel serves: with fewer than ``TILES_PER_CORE`` slabs
    a core (a core's one or two slabs in one tile would overlap nothing) or no slab fitting the UB. As many
    slabs as make ``MIN_TILE_BYTES`` (at least one), at most a core's share in ``TILES_PER_CORE`` tiles."""
    cores, size = platform.vector_core_count, slab * grad_output.dtype.itemsize
    if d0 < TILES_PER_CORE * cores or 4 * size > platform.ub_budget_bytes:
        return 0
    want = max(1, min(MIN_TILE_BYTES // size, ascdsl.cdiv(ascdsl.cdiv(d0, cores), TILES_PER_CORE)))
    try:
        return ascdsl.planner.largest_block(reduce_middle_slabs_kernel, "SLABS", sorted({1, want}), grad_output,
                                            output, grad_output, platform=platform, LINES=lines, GROUP=group,
                                            INNER=inner)
    except ascdsl.InputValueError:
        return 0


def merge_axes(shape, dim):
    """``(shape, axis)`` for the OpDef's int ``dim``: a list of contiguous axes is validated and merged
    into one axis (``[2, 3]`` of ``(a, b, c, d)`` becomes axis 2 of ``(a, b, c * d)``); an int passes
    through (the host function checks its range)."""
    dims = reduced_axes(dim)
    if isinstance(dim, (int, np.integer)):
        return tuple(shape), dims[0]
    n = len(shape)
    if n > MAX_DIMS:
        raise ascdsl.InputValueError(f"log_softmax_backward supports at most {MAX_DIMS} dims, got {n}")
    if not dims:
        raise ascdsl.InputValueError("dim must name at least one axis, got an empty list")
    rank = max(n, 1)  # a rank-0 tensor takes dim -1 or 0, as PyTorch allows
    axes = []
    for d in dims:
        if d < -rank or d >= rank:
            raise ascdsl.InputValueError(f"dim {d} is out of range [{-rank}, {rank - 1}] for a tensor of rank {n}")
        if d % rank in axes:
            raise ascdsl.InputValueError(f"dim lists axis {d % rank} twice in {dims}")
        axes.append(d % rank)
    first, last = min(axes), max(axes)
    if last - first + 1 != len(axes):
        raise ascdsl.InputValueError(f"the reduced axes {dims} must be contiguous (like [2, 3, 4], not [2, 4])")
    if n == 0:
        return (), dims[0]
    merged = int(np.prod(shape[first:last + 1], dtype=np.int64))
    return tuple(shape[:first]) + (merged,) + tuple(shape[last + 1:]), first


def reduced_axes(dim) -> tuple[int, ...]:
    """``dim`` as a tuple of ints (an int, or a list or tuple of ints), before range checks."""
    items = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    for d in items:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise ascdsl.InputTypeError(f"dim must be an int or a list of ints, got {dim!r}")
    return tuple(int(d) for d in items)


def resolve_platform(platform):
    """The platform row for ``platform`` (a name, or None for ``ASCDSL_PLATFORM`` or the default)."""
    return get_platform(platform or os.environ.get("ASCDSL_PLATFORM") or DEFAULT_PLATFORM)


@ascdsl.entry
def log_softmax_backward(grad_output, output, dim, *, platform=None, backend=None):
    """The gradient of log_softmax's input, given the gradient of its ``output`` (same shape and
    dtype as both); ``dim`` is the reduced axis, or a list of contiguous axes."""
    grad_output, output = np.asarray(grad_output, order="C"), np.asarray(output, order="C")
    target = resolve_platform(platform)
    if grad_output.shape == output.shape:  # otherwise the host function names the mismatch
        shape, axis = merge_axes(grad_output.shape, dim)
        grad_view, output_view = grad_output.reshape(shape), output.reshape(shape)
    else:
        grad_view, output_view, axis = grad_output, output, (reduced_axes(dim) or (0,))[0]
    plan = log_softmax_backward_host(ascdsl.TensorDesc.of(grad_view), ascdsl.TensorDesc.of(output_view),
                                     axis, target, lines=True)
    out = np.empty_like(grad_view)
    plan(grad_view, output_view, out, backend=backend, platform=target.name)
    return out.reshape(grad_output.shape)


def reference(grad_output, output, dim):
    axes = tuple(d % max(grad_output.ndim, 1) for d in reduced_axes(dim))
    grad = np.atleast_1d(grad_output)
    total = grad.sum(axis=axes, keepdims=True)
    return (grad - np.exp(np.atleast_1d(output)) * total).reshape(grad_output.shape)


def error_scale(grad_output, output, dim):
    """The magnitude of the terms ``out = grad - exp(output) * sum(grad)`` cancels: a float32 sum of ``n``
    terms is exact only to a few ulps of ``sum|grad|``, so ``out`` is judged against
    ``|grad| + exp(output) * sum|grad|`` rather than against its own (possibly cancelled) size."""
    axes = tuple(d % max(grad_output.ndim, 1) for d in reduced_axes(dim))
    grad = np.abs(np.atleast_1d(grad_output))
    return (grad + np.exp(np.atleast_1d(output)) * grad.sum(axis=axes, keepdims=True)).reshape(grad_output.shape)


def sample(case):
    """A case's inputs as the op gets them: ``output`` is a log-softmax (of standard-normal logits times
    3) along ``dim``. Standard-normal outputs, whose exponentials sum to anything, make
    ``grad - exp(output) * sum`` cancel on long rows beyond what any float32 sum resolves."""
    grad, logits = case.inputs()
    x = 3 * np.atleast_1d(logits).astype(np.float64)
    if x.size == 0:
        return grad, logits
    axes = tuple(d % x.ndim for d in reduced_axes(dict(case.attrs)["dim"]))
    shifted = x - x.max(axis=axes, keepdims=True)
    out = shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))
    return grad, out.reshape(np.shape(logits)).astype(logits.dtype)


# The reduce-middle cases have columns of 256 bytes or more in every dtype: the Python entry reads narrower
# ones as lines of whole rows, the op project's tiling function as column tiles (its kernels are the cases').
CASES = [ascdsl.Case(shape, shape, dtype=dt, dim=dim) for dt in ("float32", "float16", "bfloat16")
         for shape, dim in (((4, 33), -1), ((3, 5, 130), 1), ((6, 1, 9), 1), ((2, 3, 4, 64), (1, 2)),
                            ((1300, 33), -1))]  # 4 rows of 33 take the op project's kernel, 1300 the entry's packed
CASES += [ascdsl.Case((), (), dim=-1), ascdsl.Case((3, 12000), (3, 12000), dim=1),
          ascdsl.Case((2, 700, 130), (2, 700, 130), dtype="float16", dim=1),
          ascdsl.Case((2, 700, 130), (2, 700, 130), dtype="bfloat16", dim=1), ascdsl.Case((0, 4), (0, 4), dim=0),
          ascdsl.Case((50, 3), (50, 3), dim=-1)]

# The OpDef's attribute is an Int, as aclnnLogSoftmaxBackward(gradOutput, output, dim, out) takes one dim;
# lists of contiguous axes exist only in the Python entry, which merges them into one axis (merge_axes).
NOTES = """`dim` is one axis (an Int in `[-n, n-1]`; -1 and 0 for a rank-0 tensor), as
`aclnnLogSoftmaxBackward` takes it. Lists of contiguous axes exist only in the Python entry
`log_softmax_backward` of `ops/log_softmax_grad.py`, which merges them into one axis before the tiling
function runs; a graph that reduces over several axes reshapes them into one first. The Python entry also
reads a reduced middle axis with columns under 256 bytes as lines of whole rows (`reduce_middle_lines`, a
kernel per column count); the op project's tiling function uses column tiles there, which serve every shape."""

OP = ascdsl.Operator(name="log_softmax_grad", op_type="LogSoftmaxBackward", entry=log_softmax_backward,
                     host=log_softmax_backward_host, reference=reference, cases=CASES,
                     inputs=("grad_output", "output"), outputs=("out",), attrs=(ascdsl.Attr("dim", "Int"),),
                     dtypes=("float32", "float16", "bfloat16"), notes=NOTES, sample=sample,
                     error_scale=error_scale)
