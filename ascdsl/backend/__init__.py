"""The Ascend C backend: tile IR -> kernel IR (:mod:`.kir`) -> C++, one sub-package a job (listed in docs/design.md)."""
