"""Compact IR construction for tests: kernels built op by op, without the frontend.

>>> k = KernelBuilder(x=ptr(f32), out=ptr(f32), n=i32)
>>> x, out, n = k.params
>>> offs = k.arange(0, 128)
>>> mask = k.op(Op.LT, offs, n)
>>> k.store(k.op(Op.PTR_ADD, out, offs), k.load(k.op(Op.PTR_ADD, x, offs), mask), mask)
>>> kernel = k.build()

Python numbers given as operands become constants of the other operand's dtype.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ascdsl import dtypes
from ascdsl.dtypes import DType, PointerType
from ascdsl.errors import UNKNOWN, Loc
from ascdsl.ir import Builder, GroupOp, Kernel, Op, Type, Value

f32, f16, bf16, i32, i64, i8, u8, i1 = (dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32,
                                         dtypes.int64, dtypes.int8, dtypes.uint8, dtypes.bool_)


def ptr(dtype: DType) -> PointerType:
    return PointerType(dtype)


class KernelBuilder:
    def __init__(self, name: str = "kernel", **params):
        self.name, self.names = name, tuple(params)
        self.b = Builder()
        self._body = self.b.block([Type(t) for t in params.values()])
        self.params = tuple(self._body.__enter__())

    def build(self) -> Kernel:
        self._body.__exit__(None, None, None)
        return self.b.kernel(self.name, self.names, ())

    def const(self, value, dtype: DType, shape: tuple[int, ...] = ()) -> Value:
        return self.b.one(Op.CONST, Type(dtype, shape), attrs=[("value", value)])

    def pid(self, axis: int = 0) -> Value:
        return self.b.one(Op.PROGRAM_ID, Type(i32), attrs=[("axis", axis)])

    def nprog(self, axis: int = 0) -> Value:
        return self.b.one(Op.NUM_PROGRAMS, Type(i32), attrs=[("axis", axis)])

    def arange(self, start: int, end: int) -> Value:
        return self.b.one(Op.ARANGE, Type(i32, (end - start,)), attrs=[("start", start), ("end", end)])

    def broadcast(self, x: Value, shape: tuple[int, ...]) -> Value:
        return self.b.one(Op.BROADCAST, x.type.with_shape(shape), [x])

    def expand(self, x: Value, axis: int) -> Value:
        shape = list(x.type.shape)
        shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, 1)
        return self.b.one(Op.EXPAND_DIMS, x.type.with_shape(tuple(shape)), [x], [("axis", axis)])

    def op(self, op: Op, *xs, dtype: DType | None = None, loc: Loc = UNKNOWN) -> Value:
        """An elementwise op; the result takes the shape of the first tile operand."""
        like = next(x for x in (xs[1:] if op is Op.WHERE else xs) if isinstance(x, Value)).type.dtype
        like = i32 if isinstance(like, PointerType) else like
        xs = [x if isinstance(x, Value) else self.const(x, like) for x in xs]
        shape = next((x.type.shape for x in xs if x.type.shape), ())
        if dtype is None:
            dtype = i1 if op in GroupOp.COMPARE else xs[op is Op.WHERE].type.dtype
        attrs = [("dtype", dtype)] if op is Op.CAST else []
        return self.b.one(op, Type(dtype, shape), xs, attrs, loc)

    def cast(self, x: Value, dtype: DType) -> Value:
        return self.op(Op.CAST, x, dtype=dtype)

    def reduce(self, op: Op, x: Value, axis: int | None = None, keep_dims: bool = False,
               dtype: DType | None = None) -> Value:
        rank = len(x.type.shape)
        kept = [1 if axis is None or d == axis % rank else s for d, s in enumerate(x.type.shape)]
        shape = tuple(kept) if keep_dims else tuple(s for d, s in enumerate(x.type.shape)
                                                     if axis is not None and d != axis % rank)
        if dtype is None:
            narrow = x.type.dtype in (f16, bf16) and op in (Op.MAX, Op.MIN)
            dtype = i32 if op in (Op.ARGMAX, Op.ARGMIN) else f32 if narrow else x.type.dtype
        return self.b.one(op, Type(dtype, shape), [x], [("axis", axis), ("keep_dims", keep_dims)])

    def load(self, p: Value, mask: Value | None = None, other=None, loc: Loc = UNKNOWN) -> Value:
        elem = p.type.dtype.element_ty
        operands = [p] + ([mask] if mask is not None else [])
        if other is not None:
            operands.append(other if isinstance(other, Value) else self.const(other, elem))
        attrs = [("has_mask", mask is not None), ("has_other", other is not None)]
        return self.b.one(Op.LOAD, Type(elem, p.type.shape), operands, attrs, loc)

    def store(self, p: Value, value: Value, mask: Value | None = None, loc: Loc = UNKNOWN) -> None:
        operands = [p, value] + ([mask] if mask is not None else [])
        self.b.emit(Op.STORE, [], operands, [("has_mask", mask is not None)], loc=loc)

    def for_(self, lower, upper, step, inits: Sequence[Value], body: Callable[..., Sequence[Value]]):
        """A for loop: ``body(iv, *carried)`` returns the next carried values."""
        lower, upper, step = (x if isinstance(x, Value) else self.const(x, i32) for x in (lower, upper, step))
        with self.b.block([lower.type] + [v.type for v in inits]) as args:
            self.b.emit(Op.YIELD, [], list(body(*args)))
        region = self.b.last_block
        return self.b.emit(Op.FOR, [v.type for v in inits], [lower, upper, step, *inits], [], [region])

    def if_(self, cond: Value, then: Callable[[], Sequence[Value]], orelse: Callable[[], Sequence[Value]]):
        regions, types = [], []
        for branch in (then, orelse):
            with self.b.block([]):
                values = list(branch())
                self.b.emit(Op.YIELD, [], values)
            regions.append(self.b.last_block)
            types = [v.type for v in values]
        return self.b.emit(Op.IF, types, [cond], [], regions)

    def print(self, prefix: str, *values: Value) -> None:
        self.b.emit(Op.PRINT, [], values, [("prefix", prefix)])
