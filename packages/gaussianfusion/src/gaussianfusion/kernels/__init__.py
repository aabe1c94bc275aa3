"""GPU kernels of gaussianfusion: the optional tile-based Triton splat (:mod:`.splat_triton`)."""
