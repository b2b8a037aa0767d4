"""Repeat-form loops over the rows of a padded 2-D tile, and tile-scalar ops through a scalar block.

A row of a ``[M, N]`` tile is ``pitch`` elements; a repeat-form op covers one repeat (256 bytes)
of up to 255 rows per call, its repeat stride being the pitch in 32-byte blocks (8 bits). The
helpers here produce the C++ loops over column chunks and row chunks those limits need.
"""
from __future__ import annotations

from .model import F32, Stmt, vec

MAX_REPEATS = 255
MASK_REPEATS = MAX_REPEATS // 4 * 4
"""Repeats per ``Compare`` call: a multiple of 4, so every call's bit mask starts 32-byte aligned."""


def mask(cols: int, per_rep: int, c: str = "c", aligned: bool = True) -> str:
    """Lanes of the repeat starting at column ``c`` (a C++ expression) of ``cols`` columns; ``aligned``:
    ``c`` is a multiple of the repeat."""
    if (aligned and cols % per_rep == 0) or c.isdigit():
        return str(per_rep if aligned and cols % per_rep == 0 else min(cols - int(c), per_rep))
    return f"{cols} - {c}" if cols <= per_rep else f"{cols} - {c} < {per_rep} ? {cols} - {c} : {per_rep}"


def over_columns(start: str, cols: int, per_rep: int, body) -> list[str]:
    """``body(c)`` for each repeat-wide column chunk ``c`` from ``start`` (an expression) to ``cols``."""
    if start == "0" and cols <= per_rep:
        return body("0")
    if cols <= per_rep:  # at most one chunk
        return [f"if ({start} < {cols}) {{", *("    " + x for x in body(start)), "}"]
    return [f"for (int32_t c = {start}; c < {cols}; c += {per_rep}) {{", *("    " + x for x in body("c")), "}"]


def over_rows(rows: int, count: str, pitch_blocks: int, body) -> list[str]:
    """``body(r, repeats, rep_stride)`` over ``count`` rows (at most ``rows``), one repeat per row,
    in calls of at most 255 repeats; one row per call when the pitch exceeds the 8-bit stride."""
    per = MAX_REPEATS if pitch_blocks <= MAX_REPEATS else 1
    stride = pitch_blocks if per > 1 else 0
    if rows <= per:
        return body("0", count, stride)
    reps = "1" if per == 1 else f"{count} - r < {per} ? {count} - r : {per}"
    return [f"for (int32_t r = 0; r < {count}; r += {per}) {{", *("    " + x for x in body("r", reps, stride)), "}"]


def at(name: str, *terms: str) -> str:
    """``name[t0 + t1 ...]`` without zero terms (``name`` alone when all are zero)."""
    terms = [t for t in terms if t not in ("0", "0 * 0") and not t.startswith("0 * ") and not t.endswith(" * 0")]
    return f"{name}[{' + '.join(terms)}]" if terms else name


def scalar_block(api: str, dst: str, tile: str, scalar: str, dt, n: int, scalar_first: bool, reads, home: str,
                 comment: str, mode: str | None = None) -> list[Stmt]:
    """``dst = tile api scalar`` (or ``scalar api tile``): ``scalar`` (C++ of ``dt``) fills one 32-byte
    block that the repeat-form op reads with block and repeat stride 0, in calls of at most 255
    repeats. With a ``CMPMODE`` ``mode`` the op is ``Compare`` into the bit mask ``dst`` (``n`` whole
    repeats, 252 per call)."""
    per_rep, per_blk = 256 // dt.itemsize, 32 // dt.itemsize
    blk = "scalar" if dt == F32 else f"scalar{dt.short.capitalize()}"
    out = [vec(f"Duplicate({blk}, {scalar}, {per_blk});{comment}", (), {"scalarBuf"})]
    params = "{1, 0, 1, 8, 0, 8}" if scalar_first else "{1, 1, 0, 8, 8, 0}"
    most = MASK_REPEATS if mode else MAX_REPEATS
    start, full, tail = 0, *divmod(n, per_rep)
    while full > 0 or tail:
        reps, lanes = (min(full, most), per_rep) if full > 0 else (1, tail)
        at = f"[{start}]" if start else ""
        a, b = (blk, f"{tile}{at}") if scalar_first else (f"{tile}{at}", blk)
        if mode:
            text = f"Compare({at_bit(dst, start)}, {a}, {b}, CMPMODE::{mode}, {lanes}, {reps}, {params});"
        else:
            text = f"{api}({dst}{at}, {a}, {b}, {lanes}, {reps}, {params});"
        out.append(vec(text, reads | {"scalarBuf"}, {home}))
        start += reps * lanes
        full, tail = (full - reps, tail) if full > 0 else (0, 0)
    return out


def at_bit(mask: str, element: int) -> str:
    """The byte of bit mask ``mask`` holding element ``element``'s bit (a multiple of 8)."""
    return f"{mask}[{element // 8}]" if element else mask
