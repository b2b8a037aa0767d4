"""UB-planner queries in host code, answered at build time.

Placeholder until the tables are emitted: a call is a located "not supported" error.
"""
from __future__ import annotations

import ast

from ..op import Operator


class PlannerTables:
    def __init__(self, op: Operator, lowering):
        self.op, self.lowering = op, lowering

    def largest_block(self, node: ast.Call):
        raise self.lowering.error(node, "ascdsl.planner.largest_block(...) has no C++ lowering yet")
