"""The CUDA kernels of ``gspn_scan.cu`` and their CuPy launchers.

:mod:`gspn2.kernels.fused` runs the ``cuda`` backend (GSPN-2: one launch scans every line),
:mod:`gspn2.kernels.multilaunch` the ``cuda_multilaunch`` one (GSPN-1 style: one launch per line);
:mod:`gspn2.kernels.common` holds what they share. Nothing here imports CuPy before a kernel runs.
"""
