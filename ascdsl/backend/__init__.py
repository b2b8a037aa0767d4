"""The Ascend C backend: tiling layout and variants (:mod:`.tiling`), kernel emission, host code."""
