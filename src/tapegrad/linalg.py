"""``torch.linalg``: the linear-algebra namespace (factorizations and solves in ``ops/``)."""

from __future__ import annotations

from .ops.factorizations import cholesky, solve_triangular

__all__ = ["cholesky", "solve_triangular"]
