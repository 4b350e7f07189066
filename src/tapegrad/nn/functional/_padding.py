"""``F.pad``: constant, reflect, replicate and circular padding (ops/padding.py, where the
spectral ops take it from too)."""

from ...ops.padding import pad as pad
