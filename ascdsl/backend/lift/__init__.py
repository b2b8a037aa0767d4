"""Runtime tile extents: constexprs that only size tiles, found by differential specialisation and fitted as polynomials
(:mod:`.poly`)."""
