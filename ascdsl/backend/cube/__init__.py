"""``tl.dot`` on the AI cube core: pure-cube (AIC) kernels and MIX kernels split between the cube and the vector cores."""
