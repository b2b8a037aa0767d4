"""Planning over the kernel IR: UB slots (:mod:`.ubplan`), the tiling struct and variant table (:mod:`.tiling`), queues
fitted to event ids, the ``CopyIn``/``Compute``/``CopyOut`` stages and synchronisation between pipes."""
