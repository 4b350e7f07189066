"""tapegrad.ops: every differentiable primitive, registered once in ``_registry.REGISTRY``.

Read ``_registry.py`` first (the entry schema and ``apply``), then the families:
``elementwise``, ``reduction``, ``shape``, ``linalg``, ``indexing``; then the later ones:
``elementwise_math`` (atan2, hypot, logaddexp, gcd, shifts...), ``special`` (torch.special, on
SciPy) and ``shape_composite`` (atleast_*, tile, the diagonal family...); linear algebra in
``factorizations`` (cholesky, qr, solve), ``decompositions`` (svd, eigh, lu, ldl), ``solvers``
(det, inv, lstsq, pinv) and ``linalg_legacy`` (the older torch.* names), helpers in ``_lapack``.
"""

# scatter right after indexing: it holds take and masked_select, which indexing's users expect
# registered next to indexing's ops
from . import _registry, elementwise, indexing, scatter, linalg, reduction, shape  # noqa: F401, I001
from ._registry import REGISTRY, apply, defop

__all__ = ["REGISTRY", "apply", "defop", "elementwise", "indexing", "linalg", "reduction",
           "shape", "_registry"]
from . import nn_ops  # noqa: E402, F401 - the fused entries behind tapegrad.nn.functional

# isort: split
# the hot rules' first-order paths, by op name (after nn_ops, which lists the entries its
# families add: fast_paths imports some of them)
from . import fast_paths  # noqa: E402, F401
