"""Symbolic tiles of the interpreter: integer tiles affine in their indices, and masks kept as
conjunctions, so that memory accesses become strided copies instead of gathers.

Runtime values of the interpreter (:mod:`ascdsl.interpreter`) have a leading program axis, and every
other axis either has the IR value's extent or is 1 (a *compact* value, broadcast where it is used).
Two kinds of value stay symbolic until something needs their elements:

* :class:`Affine`, an int32, int64 or pointer tile whose element ``(i_1, ..., i_r)`` in program ``p``
  is ``base[p] + sum_k coefs[k][p] * i_k``: what ``tl.arange``, ``+``, ``-``, ``*`` by a scalar,
  broadcasts and pointer arithmetic make. Its value is the exact integer result wrapped to its dtype,
  as the ops would compute it (integer addition and multiplication wrap alike whatever the order).
* :class:`Conj`, a bool tile that is the ``&`` of compact factors, such as a row mask and a column
  mask, never formed as a whole tile unless something reads it.

:func:`plan` turns a load or store through an affine pointer under such a mask into a strided view
of the buffer or a set of equally long strided runs; anything else (or anything out of bounds) is
left to the interpreter's general gather/scatter path, which also reports errors.

The modules: :mod:`.tiles` (the symbolic values and their algebra), :mod:`.access` (an access's views and
lazily loaded tiles), :mod:`.plans` (finding an access, and the plans kept for reuse). The tunables
(``STRIP_ELEMENTS``, ``PIECE_ELEMENTS``) and the memo of plans (``MEMO``) are :mod:`.access`'s and :mod:`.plans`'s
alone: set them there, where they are read.
"""
from .access import Access, Loaded, loaded
from .plans import Memo, Plans, mask_parts, plan
from .tiles import (AFFINE_DTYPES, COMPARE, I64, INT32, INT32_RANGE, Affine, Array, Conj, Term, arange, broadcast, conj,
                    dense, elementwise, expand, expand_dims, index, lift, repeat, select, strided, term)

__all__ = ["AFFINE_DTYPES", "Access", "Affine", "Array", "COMPARE", "Conj", "I64", "INT32", "INT32_RANGE", "Loaded",
           "Memo", "Plans", "Term", "arange", "broadcast", "conj", "dense", "elementwise", "expand", "expand_dims",
           "index", "lift", "loaded", "mask_parts", "plan", "repeat", "select", "strided", "term"]
