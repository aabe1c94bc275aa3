"""Triton kernels and their launchers, loaded lazily; :mod:`lion.reference` is what they are
tested against."""
