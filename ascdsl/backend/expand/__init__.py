"""Expanding composite ops into the ops the vector unit has: the tile-IR rewrites before selection (:mod:`.decompose`) and
the selection rules of reductions, scans, sorts and flips, ``tl.reduce``/``tl.associative_scan`` with a combine
function, float math without one instruction, and ``tl.histogram``."""
