"""Reusable ``@ascdsl.jit`` helpers for kernels (call them from your own kernels), and the ``@ascdsl.host`` helper
that plans the rows of :func:`part_span` and :func:`row_part` (call it from your own host functions)."""
from math import gcd

import ascdsl.language as tl
import ascdsl.language.extra.cann.extension as al

from .backend.selection.packed_rows import spans
from .jit import jit
from .op import host

FLAT_ROW_BYTES = 1024
"""Rows of this many bytes or more are not read flat (:func:`reads_flat`): ``K`` is a constexpr, so each row length
is a kernel of its own, and longer rows gain little (softmax_grad's under 5%, log_softmax_grad's 3000x1000 3%)."""
FLAT_ELEMENTS = 1 << 30
"""The most elements :func:`reads_flat` reads flat: the offsets ``row * K + lane`` stay far inside int32."""
PACKED_STRIDE = 255
"""Rows of ``k`` float32 values packed at a pitch of ``k`` (the backend's packed rows, ``selection/packed_rows.py``)
form residue classes of their lane offsets whose rows lie ``k / gcd(k, 8)`` blocks apart: the repeat stride of
their calls, 8 bits, so at most this many."""

PACKED_ROWS_A_CALL = 4
"""The fewest rows a core's share of packed rows holds per class call of a tile (``8 / gcd(k, 8)`` classes times the
repeats a row spans): with fewer, the calls cost the vector unit more than the bursts the flat read saves
(``ascdsl.bench.simulate``, softmax_grad est us flat / a burst a row on 40 cores: 199 halves 1.993 / 1.837 at 32 rows a
core, 4.337 / 5.298 at 128; 77 floats 1.281 / 1.267 at 32, 1.858 / 1.909 at 64)."""

PART_ROW_BYTES = 8192
"""The fewest bytes of a row :func:`rows_in_parts` splits into parts (a part's load stays a tile of a few KiB)."""


def reads_flat(itemsize: int, rows: int, k: int, programs: int) -> bool:
    """Whether ``rows`` rows of ``k`` elements of ``itemsize`` bytes are read flat (:func:`load_flat_rows`): rows
    that are not whole 32-byte blocks lie in UB padded to a block, a burst each; read flat, a tile of them is one
    burst. 16-bit rows of whole float32 blocks (``k = 8 mod 16``): their float32 rows follow each other (the
    reshape moves nothing). 16-bit and float32 rows of ``1 < k``, ``k % 8 != 0`` and ``k / gcd(k, 8) <=``
    :data:`PACKED_STRIDE` under :data:`FLAT_ROW_BYTES`, where each of ``programs`` has at least
    :data:`PACKED_ROWS_A_CALL` rows per class call: the backend packs their float32 rows at a pitch of ``k`` and
    reduces them per residue class of their lane offsets, a masked call per repeat a row spans (71279x19 float16
    softmax_grad 2.537 -> 1.185 of the simulator's floor, 31102x62 1.350 -> 1.029). A host function
    calls it only after a flag the Python entry sets (an ``and`` after softmax_grad's ``packed``): each ``k`` is a
    kernel of its own, and the op project's tiling function, whose C++ cannot call it, has it False."""
    if rows * k > FLAT_ELEMENTS:
        return False
    if itemsize == 2 and k % 16 == 8:
        return k * 2 < FLAT_ROW_BYTES
    per_blk = 8  # float32 lanes a 32-byte block, 64 a repeat
    classes = per_blk // gcd(k, per_blk)
    if itemsize not in (2, 4) or k <= 1 or k % per_blk == 0 or k * classes // per_blk > PACKED_STRIDE \
            or k * itemsize >= FLAT_ROW_BYTES:
        return False
    return rows // programs >= PACKED_ROWS_A_CALL * classes * spans(k, per_blk, 8 * per_blk)[1]


@jit
def core_span(per_core, big_cores):
    """The work units ``[start, end)`` of this program when units are split over programs with
    ``per_core`` each and one more on the first ``big_cores`` (CANN's big/small-core split).
    The host computes ``per_core = units // programs`` and ``big_cores = units % programs``."""
    pid = tl.program_id(0)
    start = pid * per_core + tl.minimum(pid, big_cores)
    return start, start + per_core + (pid < big_cores).to(tl.int32)


@jit
def load_flat_rows(ptr, row0, end, ROWS: tl.constexpr, K: tl.constexpr):
    """Rows ``row0 .. row0 + ROWS`` (those before ``end``; masked ones 0) of a row-major ``[.., K]`` tensor as
    a float32 ``[ROWS, K]`` tile, read flat: one burst, where a ``[ROWS, K]`` load whose rows are not whole
    32-byte blocks is a burst a row. The float32 tile's rows follow each other in UB when ``K`` is a
    multiple of 8 (the reshape moves nothing); any other ``K`` is a Gather."""
    offsets = row0 * K + tl.arange(0, ROWS * K)
    return tl.reshape(tl.load(ptr + offsets, mask=offsets < end * K, other=0.0).to(tl.float32), (ROWS, K))


@jit
def store_flat_rows(ptr, row0, end, value):
    """``value`` (``[ROWS, K]``) into rows ``row0 .. row0 + ROWS`` (those before ``end``) of a row-major
    ``[.., K]`` tensor of ``ptr``'s type, written flat (see :func:`load_flat_rows`)."""
    rows, k = value.shape
    offsets = row0 * k + tl.arange(0, rows * k)
    tl.store(ptr + offsets, tl.reshape(value, (rows * k,)).to(ptr.dtype.element_ty), mask=offsets < end * k)


@jit
def part_span(per_core, big_cores, tail):
    """:func:`core_span`'s units ``[start, end)``, and the end of this program's loop: ``end + 1`` on the first
    ``tail`` programs, whose unit ``end`` is a part of a row past the last whole round of the programs (see
    :func:`row_part`), else ``end``."""
    start, end = core_span(per_core, big_cores)
    return start, end, end + (tl.program_id(0) < tail).to(tl.int32)


@jit
def row_part(unit, end, per_core, parts, part_k, k):
    """``(row, first, stop)``: the row of ``k`` columns this program's ``unit`` (of :func:`part_span`) works on and
    the columns ``[first, stop)`` it writes. A unit before ``end`` is a whole row of its own; unit ``end`` is a part:
    the rows past the ``per_core`` whole rounds of the programs go in ``parts`` parts of ``part_k`` columns each
    (the last one shorter), program ``pid`` taking part ``pid % parts`` of row ``pid // parts`` past them."""
    pid = tl.program_id(0)
    split = unit == end
    row = tl.where(split, per_core * tl.num_programs(0) + pid // parts, unit)
    first = tl.where(split, (pid - pid // parts * parts) * part_k, 0)
    return row, first, tl.where(split, tl.minimum(first + part_k, k), k)


MAX_PARTS = 64
"""The most parts of a row :func:`part_total` adds (a tile of this many partial sums; at least the vector cores)."""


@jit
def part_total(partials_ptr, partial, tail, parts):
    """The sum of ``partial`` (``[1]`` float32) over the ``parts`` programs that share this program's row (programs
    ``pid // parts * parts`` on, the first ``tail`` programs in rows of :func:`row_part`): each stores its own to
    float32 GM scratch of a slot a program (``partials_ptr``), all meet at a grid barrier, then each reads its row's.
    Every program of the launch must call it (a grid barrier), at most one a vector core."""
    pid = tl.program_id(0)
    tl.store(partials_ptr + pid + tl.arange(0, 1), partial)
    al.sync_block_all("all_vector", 0)
    first = pid // parts * parts
    i = tl.arange(0, MAX_PARTS)
    sums = tl.load(partials_ptr + first + i, mask=(i < parts) & (first + i < tail), other=0.0)
    return tl.sum(sums, axis=0, keep_dims=True)


@host
def rows_in_parts(rows, k, itemsize, cores, tile_rows, whole_rows, allowed):
    """The split of ``rows`` rows of ``k`` elements of ``itemsize`` bytes over at most ``cores`` programs of a kernel
    looping over :func:`part_span` and :func:`row_part`: ``(programs, per_core, big_cores, tail, parts, part_k)``.

    Where ``allowed``, the rows past the last whole round of the cores (``rows % cores``, all of them with fewer rows
    than cores) go in column parts over the cores: at most half the cores' number of them, rows of
    :data:`PART_ROW_BYTES` or more, and where a tile of ``tile_rows`` whole rows fits the UB (``tile_rows >= 1``) only
    float32 ones in 4 parts or more beside at most ``whole_rows`` whole rows a core (a part reads its row twice, the
    second time from the L2). Every program takes ``per_core`` whole rows, then the first ``tail`` a part of ``part_k``
    columns (a multiple of 32 bytes) of one of the rows past them, ``parts`` a row: 82 rows on 40 cores are 2 whole
    rows a core and 2 rows in 20 parts, not 3 rows on 2 cores. Otherwise ``tail`` is 0 (``parts`` 1 of ``k``
    columns) and ``per_core`` whole rows go on every program, one more on the first ``big_cores``."""
    programs = min(cores, rows)
    per_core = rows // programs
    big_cores = rows % programs
    rest = rows % cores
    tail = 0
    parts = 1
    part_k = k
    if allowed and rest > 0 and 2 * rest <= cores and k * itemsize >= PART_ROW_BYTES and \
            (tile_rows < 1 or (itemsize == 4 and 4 * rest <= cores and rows // cores <= whole_rows)):
        align = 32 // itemsize
        part_k = tl.cdiv(tl.cdiv(k, cores // rest), align) * align
        parts = tl.cdiv(k, part_k)
        tail = rest * parts
        programs = cores if rows >= cores else tail
        per_core = rows // cores
        big_cores = 0
    return programs, per_core, big_cores, tail, parts, part_k
