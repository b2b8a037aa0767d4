"""Runtime tile extents: constexprs that only size tiles, found by compiling the kernel for them as symbols
(:mod:`.symbolic`), their footprints polynomials (:mod:`.poly`)."""
