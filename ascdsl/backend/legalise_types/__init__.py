"""Legalising element types: what the A2 vector unit has no instruction for in a tile's type (bool masks, int8/int16
and int32 arithmetic beyond + - * max min, ``tl.umulhi``, int64 tiles on the scalar unit, 8-bit and int64 fills, casts
and selects through word views), rewritten before selection or selected as rules of :data:`..selection.select.RULES`;
and the located errors for what cannot run."""
