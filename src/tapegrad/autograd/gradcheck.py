"""gradcheck / gradgradcheck: compare analytic gradients with central finite differences.

For each differentiable input ``x_j`` and output ``y_i``:

    numerical  J[:, k] = (f(x + eps e_k) - f(x - eps e_k)) / (2 eps)   one column per element
    analytical J[k, :] = autograd.grad(y_i, x_j, e_k)                  one row per output element

They must agree to ``atol + rtol * |numerical|`` (float64 inputs; float32 is too coarse, as torch
warns). ``gradgradcheck`` runs the same check on the function that returns the first
derivatives (built with ``create_graph=True``), so second derivatives are checked too.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._printing import format_tensor
from .._tensor import Tensor
from .grad_mode import enable_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients disagree."""


def _as_tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,) if not isinstance(x, list) else tuple(x)


def _outputs(fn: Callable, inputs: tuple) -> tuple:
    out = fn(*inputs)
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def _fmt(a: np.ndarray) -> str:
    return format_tensor(a, "float64")


def gradcheck(
    func: Callable,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: Any = None,
    **_: Any,
) -> bool:
    """True when ``func``'s analytic Jacobians match finite differences (else raise).

    Example:
        >>> import tapegrad as torch
        >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
        True
    """
    # same package, kept here: autograd/__init__.py defines grad and imports this module
    from . import grad as autograd_grad

    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]
    for i in diff:
        if inputs[i]._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                UserWarning,
                stacklevel=2,
            )
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "them have requires_grad=True."
        )
    with enable_grad():
        outputs = _outputs(func, inputs)
    for oi, out in enumerate(outputs):
        n_out = out._data.size
        for ij, j in enumerate(diff):
            x = inputs[j]
            n_in = x._data.size
            numerical = np.zeros((n_in, n_out))
            flat = x._data.reshape(-1)  # a view: perturb in place, as torch does
            if not x._data.flags.c_contiguous:
                raise ValueError("gradcheck needs contiguous inputs")
            with enable_grad():  # as torch: the function may rely on grad mode (hooks...)
                for k in range(n_in):
                    orig = flat[k]
                    flat[k] = orig + eps
                    plus = _outputs(func, inputs)[oi]._data.astype(np.float64).reshape(-1)
                    flat[k] = orig - eps
                    minus = _outputs(func, inputs)[oi]._data.astype(np.float64).reshape(-1)
                    flat[k] = orig
                    numerical[k] = (plus - minus) / (2 * eps)
            analytical = np.zeros((n_in, n_out))
            for m in range(n_out if out._requires_grad else 0):  # no graph: a zero Jacobian
                seed = np.zeros(n_out, dtype=out._data.dtype)
                seed[m] = 1
                with enable_grad():
                    outs = _outputs(func, inputs)
                    g = autograd_grad(
                        outs[oi], x, Tensor._make(seed.reshape(out._data.shape)),
                        allow_unused=True, retain_graph=True,
                    )[0]
                if g is not None:
                    analytical[:, m] = g._data.astype(np.float64).reshape(-1)
            if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                msg = (
                    f"Jacobian mismatch for output {oi} with respect to input {j},\n"
                    f"numerical:{_fmt(numerical)}\nanalytical:{_fmt(analytical)}\n"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
            del ij
    return True


def gradgradcheck(
    func: Callable,
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """gradcheck of the first derivatives: checks second derivatives."""
    # same package, kept here: autograd/__init__.py defines grad and imports this module
    from . import grad as autograd_grad

    inputs = _as_tuple(inputs)
    with enable_grad():
        outputs = _outputs(func, inputs)
    diff_out = [o for o in outputs if o._requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor._make(rng.standard_normal(o._data.shape).astype(o._data.dtype),
                         requires_grad=True)
            for o in diff_out
        )
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]

    def first_derivatives(*args: Any) -> tuple:
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():
            outs = [o for o in _outputs(func, ins) if o._requires_grad]
            return autograd_grad(outs, [ins[i] for i in diff], gos, create_graph=True,
                                 materialize_grads=True)

    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)
