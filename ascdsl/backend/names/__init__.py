"""Naming and the last rewrite: readable collision-free C++ names, and ``simplify`` (the kernel IR as a CANN engineer would
write it)."""
