"""The NumPy interpreter: the executable specification of the tile IR.

All program instances of a launch run together. Every runtime value carries a leading *program
axis*: an IR value of shape ``S`` is an array that broadcasts to ``(n, *S)``, where ``n`` is the number
of programs being run or 1 for values that are the same in every program (constants, ``arange``,
kernel scalars); its other axes are ``S``'s or 1 where the value does not vary (it is *compact*).
Index arithmetic and masks stay symbolic (:mod:`ascdsl.affine`), so that a load or store through
``base + rows * stride + cols`` is a strided copy. Large launches run in consecutive chunks of
programs, in program order, to bound memory. Control flow whose outcome differs by program runs
under a per-program *active* mask:

* a ``for`` loop runs for the largest trip count among active programs; a program's carried
  values only change on iterations it really executes;
* a ``while`` loop iterates until no active program's condition holds, each program's values
  changing only while its own condition does;
* an ``if`` on a per-program condition runs both regions, each under its programs, and merges the
  results with ``where``;
* a loop that carries no values, reads only buffers no lane writes and stores to distinct buffers
  runs its iterations at once, as copies of the programs (the writes of a store land in the loop's
  order; an error makes it run again iteration by iteration, so that it is the loop order's first,
  and what the batch stored for later iterations stays).

Memory ops touch memory only for active programs and unmasked lanes (a load from a buffer no lane
writes during the launch may return a read-only view of it). A pointer value is an int64
array of *addresses*: argument buffer ``k`` (its position in the argument list) starts at
``k << 40``, so a pointer selects its array and the element offset within it; offsets count
elements from the array's first element. A strided view is the span of memory from its lowest to
its highest element (kernels reach its elements through the strides they are passed, as on a
device). An access whose pointer derives from one parameter (:mod:`ascdsl.ir.provenance`) is
checked against that parameter's span whatever the offset.

Stores are applied one store op at a time, each for all programs of a chunk at once. When several
lanes store to the same address, the last one wins: in program order (linear program id, axis 0
fastest), then in lane order (row-major within the tile).

Numerics follow :mod:`ascdsl.numerics`; NumPy floating-point warnings are silenced, since inactive
programs and masked lanes routinely compute on garbage.

The modules: :mod:`.runner` (a launch, the kernel prepared once), :mod:`.state` (the buffers and the
programs of a chunk), :mod:`.dispatch` (the handler of each op), :mod:`.compute`, :mod:`.memory` and
:mod:`.control` (the handlers), :mod:`.values` (the helpers they share). The tunables (``CHUNK_ELEMENTS``,
``BATCH_CHUNKS``, ``DONATED_BYTES``) are :mod:`.state`'s alone: set them there, where they are read.
"""
from .compute import LAST_AXIS_REDUCE, UFUNC_FOR_OP, UNIFORM_LEAVES, ZERO, ZERO_F32
from .dispatch import COMPACT, HANDLERS, LOOPS, NOT_BATCHED
from .memory import ATOMIC_COMBINE
from .runner import FUSED, LAZY_USERS, PURE, run
from .state import HALF, SHIFT, Step
from .values import Array

__all__ = ["ATOMIC_COMBINE", "Array", "COMPACT", "FUSED", "HALF", "HANDLERS", "LAST_AXIS_REDUCE", "LAZY_USERS", "LOOPS",
           "NOT_BATCHED", "PURE", "SHIFT", "Step", "UFUNC_FOR_OP", "UNIFORM_LEAVES", "ZERO", "ZERO_F32", "run"]
