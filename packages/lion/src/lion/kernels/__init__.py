"""Triton kernels, loaded lazily; the pure-torch forms of :mod:`lion.ops` are the reference."""
