"""Triton sources of the ``triton`` backend and their launchers (Triton imported lazily)."""
