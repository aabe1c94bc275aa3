"""The CUDA kernels of ``truss.cu`` and their CuPy launcher :mod:`trussreg.kernels.truss` (the
``cuda`` backend of :func:`trussreg.truss_decomposition`). Nothing here imports CuPy before a
kernel runs."""
