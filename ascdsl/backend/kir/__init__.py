"""The kernel IR: what the Ascend C backend's passes read and write, as frozen data.

Between the tile IR and the C++ text sits one kernel per variant made of:

* **buffers** (:class:`Buf`): one per tile value or API scratch area, with a :class:`Role`, an
  element type and a DSL name hint; the UB planner (:mod:`.ubplan`) maps them to physical slots;
* **tensor views** (:class:`Ref`: buffer, element type, element offset, static extent) and global
  tensors (:class:`Gm`);
* **expressions**, small typed trees (:class:`Var`, :class:`Lit`, :class:`Field`, :class:`Bin`,
  :class:`Cond`, :class:`Conv`, :class:`SizeOf`, :class:`ElemsPer`, :class:`Const`, :class:`Brace`, :class:`Elem`,
  :class:`GmValue`, :class:`Not`, :class:`Text`; a :attr:`Struct.BIT_MASK` variable is a bit-mode call's
  ``uint64_t mask[2]``: a :class:`Brace` of two words); host code's expressions add those of :mod:`.host`;
* **statements**: API calls (:class:`Call`), scalar definitions (:class:`Let`, :class:`Set`),
  queue operations (:class:`Queue`), nested :class:`For`/:class:`While`/:class:`If`, synchronisation
  (:class:`Barrier`, :class:`Flag`, inserted by :mod:`.sync`) and stage calls (:class:`Run`);
* **stages** (:class:`Stage`): CopyIn/Compute/CopyOut methods with the scalars they read.

Every node is data: no pass reads C++ text, and only :mod:`.emit` produces any. :func:`verify`
checks the invariants the passes rely on.
"""
from __future__ import annotations

from .expr import (Bin, BinOp, Brace, Buf, CINT_BYTES, CInt, CType, Cond, Const, Conv, Elem, ElemsPer, Expr,
                   FLOAT_INSTANCE, Field, Gm, GmValue, IsSame, Lit, Not, Operand, Pipe, Position, Ref, Role, SizeOf,
                   Struct, TYPE_PARAMETER, Text, Var, VarKind, add, as_expr, ceil_to, int_bytes, int_division, is_float,
                   is_lit, lit, minimum, mul)
from .stmt import (Barrier, Bind, Call, Flag, For, GmParam, If, Kernel, Let, Local, Note, QOp, Queue, Route, Run,
                   Segment, Set, Stage, StageKind, Stmt, While)
from .walk import KirError, buffers, children, exprs, restage, rewrite, sub_exprs, vars_read, verify, walk
