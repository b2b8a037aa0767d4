"""Program batching at launch: P and the schedule chosen from the cost model's estimate of a batched launch."""
