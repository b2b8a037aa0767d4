"""``acc += tl.dot(a, b)`` as ``acc = tl.dot(a, b, acc)``: one accumulating product, what the cube core's
``Mmad`` computes (the form :mod:`ascdsl.backend.cube.cube` matches)."""
from __future__ import annotations

from collections import Counter

from .. import dtypes
from ..ir.core import Block, Instr, Kernel, Op, walk


def accumulated_products(kernel: Kernel, platform=None) -> Kernel:
    """An ``add`` of a float32 tile and a float32 ``dot`` without accumulator that nothing else reads becomes
    that ``dot`` accumulating into the tile, where the ``add`` was. Exact: the interpreter computes both as
    the float32 product plus the tile."""
    uses = Counter(v.id for i in walk(kernel.body) for v in i.operands)
    return kernel.with_body(_fold(kernel.body, uses))


def _fold(block: Block, uses: Counter) -> Block:
    dots = {i.result.id: i for i in block.body if i.op is Op.DOT and len(i.results) == 1 and not i.attr("has_acc")}
    replaced: dict[int, Instr] = {}  # id of each add -> the accumulating dot in its place
    absorbed: set[int] = set()  # ids of the dots those took in
    for instr in block.body:
        if instr.op is not Op.ADD or instr.result.type.dtype != dtypes.float32:
            continue
        for product, acc in (instr.operands, instr.operands[::-1]):
            dot = dots.get(product.id)
            if dot is not None and uses[product.id] == 1 and acc.type == dot.result.type == instr.result.type:
                replaced[id(instr)] = Instr(Op.DOT, instr.results, (*dot.operands, acc), (("has_acc", True),), (),
                                            dot.loc)
                absorbed.add(id(dot))
                break
    return Block(block.args, tuple(replaced.get(id(i), i.map_regions(lambda r: _fold(r, uses)))
                                   for i in block.body if id(i) not in absorbed))
