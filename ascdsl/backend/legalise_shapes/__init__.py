"""Legalising tile shapes: how tiles lie in UB, tiles of rank 3 and more as their flat 2-D view, moves between UB layouts
(transposes, permutes, concatenation, reshapes), broadcasts and index tiles, and non-unit innermost strides."""
