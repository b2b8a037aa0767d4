"""Instruction selection: tile IR -> kernel IR (:mod:`.select`), the selector's buffers and scalars, the API tables and the
calls of elementwise ops, data movement, reductions, broadcasts and ``tl.device_print``."""
