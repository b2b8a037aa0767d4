"""Legalising element types: what the A2 vector unit has no instruction for in a tile's type (bool masks, int8/int16 and int32 arithmetic
beyond + - * max min, ``tl.umulhi``, int64 tiles on the scalar unit, fills ``Duplicate`` has no form for), rewritten
before selection or selected as rules of :data:`..selection.select.RULES`; and the located errors for what cannot run."""
