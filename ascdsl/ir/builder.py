"""Build IR imperatively: fresh value ids, nested blocks, one instruction at a time."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from ..errors import UNKNOWN, Loc
from .core import Block, Instr, Kernel, Op, Type, Value, walk


class Builder:
    """Appends instructions to the innermost open block.

    >>> b = Builder()
    >>> with b.block([Type(int32)]) as (n,):
    ...     one = b.one(Op.CONST, Type(int32), attrs=[("value", 1)])
    ...     b.emit(Op.ADD, [Type(int32)], [n, one])
    >>> body = b.last_block
    """

    def __init__(self) -> None:
        self._next_id = 0
        self._open: list[list[Instr]] = []
        self.last_block: Block | None = None
        self.names: dict[int, str] = {}

    def name(self, value: Value, name: str) -> None:
        """Record that ``value`` was assigned to the DSL variable ``name`` (first name wins)."""
        self.names.setdefault(value.id, name)

    def value(self, type: Type) -> Value:
        v = Value(self._next_id, type)
        self._next_id += 1
        return v

    @contextmanager
    def block(self, arg_types: Iterable[Type]) -> Iterator[list[Value]]:
        """Open a block with fresh arguments; on exit it is stored in ``last_block``."""
        args = [self.value(t) for t in arg_types]
        self._open.append([])
        try:
            yield args
        finally:
            body = self._open.pop()
        self.last_block = Block(tuple(args), tuple(body))

    def emit(self, op: Op, result_types: Iterable[Type] = (), operands: Iterable[Value] = (),
             attrs: Iterable[tuple[str, Any]] = (), regions: Iterable[Block] = (),
             loc: Loc = UNKNOWN) -> tuple[Value, ...]:
        results = tuple(self.value(t) for t in result_types)
        self._open[-1].append(Instr(op, results, tuple(operands), tuple(attrs), tuple(regions), loc))
        return results

    def one(self, op: Op, type: Type, operands: Iterable[Value] = (),
            attrs: Iterable[tuple[str, Any]] = (), loc: Loc = UNKNOWN) -> Value:
        """Emit an instruction with exactly one result and return that result."""
        (result,) = self.emit(op, [type], operands, attrs, (), loc)
        return result

    def kernel(self, name: str, param_names: Iterable[str], constexprs: Iterable[tuple[str, Any]],
               loc: Loc = UNKNOWN) -> Kernel:
        """Wrap ``last_block`` (the body, whose args are the runtime parameters) as a Kernel."""
        assert self.last_block is not None, "build the kernel body with Builder.block first"
        return Kernel(name, tuple(param_names), tuple(constexprs), self.last_block, loc,
                      tuple(sorted(self.names.items())))


class Fresh:
    """Fresh SSA values numbered past every value of a kernel, for passes that add instructions."""

    def __init__(self, kernel: Kernel):
        ids = [v.id for v in kernel.body.args]
        for instr in walk(kernel.body):
            ids += [v.id for v in instr.results]
            ids += [a.id for r in instr.regions for a in r.args]
        self.next = max(ids, default=-1) + 1

    def value(self, t: Type) -> Value:
        v = Value(self.next, t)
        self.next += 1
        return v

    def instr(self, out: list, op: Op, t: Type, operands: Iterable[Value] = (),
              attrs: Iterable[tuple[str, Any]] = (), loc: Loc = UNKNOWN) -> Value:
        """Append ``op`` with one fresh result of type ``t`` to ``out`` and return the result."""
        v = self.value(t)
        out.append(Instr(op, (v,), tuple(operands), tuple(attrs), (), loc))
        return v
