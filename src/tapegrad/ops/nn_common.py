"""What the neural-network families share: two namespaces for formulas written once over arrays
or Tensors, linked gradients, small helpers, and the scalar-arithmetic entries that composites
record under torch's C++ node names.

The families (``activations``, ``losses``, ``normalization``, ``embedding``, ``padding``,
``conv``, ``pooling``, ``resampling``, ``attention``; ``erf`` for GELU's normal CDF) each hold
fused entries torch also records as one node (``GeluBackward0``, ``NativeLayerNormBackward0``,
``ConvolutionBackward0``, ``NllLossBackward0``, ...): a NumPy forward written for speed and
numerical stability, and a backward rule next to it, in Tensor terms. The rules a training
step runs have a fast first-order path on the arrays in ops/fast_paths.py; forwards may leave
intermediate arrays for it in ``params["_cache"]`` (the normalised input of layer_norm, the
im2col matrix of a convolution, the attention probabilities), which the rule recomputes from
the saved inputs with Tensor ops.

A few formulas too long to write twice (the recurrent layers' steps, the gather pads' and
separable resampling maps' transposes) are written once against a small namespace ``B`` of
operations (``B.matmul``, ``B.sum``, ``B.tanh``, ...): ``_Tensors`` in the rule, ``_Arrays`` in
its fast path and in the forward.

Speed notes: no ``np.where`` or boolean indexing on large arrays in hot paths (both are slow
in NumPy); branch-free forms (``np.maximum(x, 0) + slope * np.minimum(x, 0)``) instead.
float32 stays float32: only Python floats meet arrays, never NumPy float64 scalars.
"""


from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._dtype import from_numpy_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import _state
from ..kernels.sums import fast_sum as _fast_sum
from . import elementwise as ew
from . import reduction as rd
from . import shape as sh
from ._registry import defop, scalar_type_name
from ._tangents import linear_tangent
from .linalg import matmul

# ---------------------------------------------------------------------------------------------
# Formulas written once over arrays or Tensors (see the module docstring)
# ---------------------------------------------------------------------------------------------


class _Arrays:
    """The formulas' operations on ndarrays: the first-order path."""

    tensors = False

    @staticmethod
    def const(a: np.ndarray) -> np.ndarray:
        return a

    tanh = staticmethod(np.tanh)
    matmul = staticmethod(np.matmul)

    @staticmethod
    def sigmoid(x: np.ndarray) -> np.ndarray:
        return _sigmoid(x)

    @staticmethod
    def softplus(x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.log1p(np.exp(x))

    @staticmethod
    def sum(x: np.ndarray, dims: tuple, keepdim: bool = True) -> np.ndarray:
        return _fast_sum(x, dims, keepdim)

    @staticmethod
    def mean(x: np.ndarray, dims: tuple, keepdim: bool = True) -> np.ndarray:
        n = 1
        for d in dims:
            n *= x.shape[d]
        return _fast_sum(x, dims, keepdim) * (1.0 / max(n, 1))

    @staticmethod
    def clamp(x: np.ndarray, lo: Any = None, hi: Any = None) -> np.ndarray:
        return np.clip(x, lo, hi)

    @staticmethod
    def mT(x: np.ndarray) -> np.ndarray:
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def movedim(x: np.ndarray, src: int, dst: int) -> np.ndarray:
        return np.moveaxis(x, src, dst)

    @staticmethod
    def cat(xs: list, dim: int) -> np.ndarray:
        return np.concatenate(xs, axis=dim)


class _Tensors:
    """The same operations on Tensors: the rule records a graph (create_graph=True)."""

    tensors = True

    @staticmethod
    def const(a: np.ndarray) -> Tensor:
        return Tensor._make(a)

    tanh = staticmethod(ew.tanh)
    sigmoid = staticmethod(ew.sigmoid)

    @staticmethod
    def matmul(a: Tensor, b: Tensor) -> Tensor:
        return matmul(a, b)

    @staticmethod
    def sum(x: Tensor, dims: tuple, keepdim: bool = True) -> Tensor:
        return rd.sum(x, dims, keepdim)

    @staticmethod
    def mean(x: Tensor, dims: tuple, keepdim: bool = True) -> Tensor:
        return rd.mean(x, dims, keepdim)

    @staticmethod
    def clamp(x: Tensor, lo: Any = None, hi: Any = None) -> Tensor:
        return ew.clamp(x, lo, hi)

    @staticmethod
    def mT(x: Tensor) -> Tensor:
        return sh.transpose(x, -1, -2)

    @staticmethod
    def movedim(x: Tensor, src: int, dst: int) -> Tensor:
        return sh.movedim(x, src, dst)

    @staticmethod
    def cat(xs: list, dim: int) -> Tensor:
        return sh.cat(xs, dim)


# Linked gradients. Many first-order rules do not depend on the forward's input at all (pooling,
# padding, a convolution's bias, a loss's gradient in a linear term) or depend on it only
# through a mask (relu6, hardtanh, leaky_relu, the shrinks): their gradient, computed from a
# cotangent that does not require grad, would not require grad either. torch's double-backward
# node (MaxPool2DWithIndicesBackwardBackward0, ...) takes the forward's input all the same, so
# its gradient requires grad and a second differentiation gives 0 for that input. ``_link``
# joins a gradient to those inputs with that zero derivative (create_graph only).
_LINKS: dict = {}


def _link(out: Tensor, inputs: Any, node: str) -> Tensor:
    """``out`` unchanged in value, with ``inputs`` (those that require grad) as extra graph
    inputs whose derivative is 0, under a node named ``node``."""
    inputs = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
    if not inputs:
        return out
    entry = _LINKS.get((node, len(inputs)))
    if entry is None:  # made on first use: one entry per node name and input count
        entry = defop(f"link:{node}:{len(inputs)}", node=node)(lambda r, *xs: r)

        @entry.backward
        def link_backward(ctx: Any, g: Any) -> tuple:  # the gradient to out; 0 to the inputs
            return (g,) + (None,) * (len(ctx.input_meta) - 1)

        _LINKS[(node, len(inputs))] = entry
    return entry(out, *inputs)


def _linked(entry: Any) -> None:
    """Link ``entry``'s gradients, under create_graph, to its saved inputs (``_link``)."""
    rule = entry.rule
    head = entry.node.rpartition("Backward")[0]
    # (the node of the backward op, whose one overload is 0: ThresholdBackward1, the in-place
    # form's node, has ThresholdBackwardBackward0 too)
    node = f"{head}BackwardBackward0"

    @functools.wraps(rule)  # (still named after the op)
    def linked(ctx: Any, grad: Any) -> tuple:
        grads = rule(ctx, grad)
        if not _state.enabled:
            return grads
        saved = [t for t in ctx.saved if t is not None]
        return tuple(None if gi is None else _link(gi, saved, node) for gi in grads)

    entry.rule = linked


def _take(cache: dict, key: str, make: Any) -> Any:
    """A forward intermediate, handed over once: the first backward takes it (so the graph
    does not hold it afterwards); a second backward (retain_graph) recomputes it."""
    value = cache.pop(key, None)
    return make() if value is None else value


def _quiet(fn: Any) -> Any:
    """Run ``fn`` with NumPy's floating-point warnings off (torch warns about none of them)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # 1/(1+e^-x): e^-x overflows to inf for very negative x and the result is 0, never NaN.
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _float(x: np.ndarray, name: str) -> None:
    """torch's error for an integer input to a floating-point-only kernel."""
    if x.dtype.kind not in "fc" and x.dtype.name != "bfloat16":
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{scalar_type_name(from_numpy_dtype(x.dtype))}'"
        )


# ---------------------------------------------------------------------------------------------
# Scalar arithmetic with torch's C++ node names (composites call at::mul(t, scalar) etc.)
# ---------------------------------------------------------------------------------------------

@defop("mul_scalar", node="MulBackward1")
def _mul_scalar(x: np.ndarray, *, other: Any) -> np.ndarray:
    return ew._binary(np.multiply, x, other)


@_mul_scalar.backward
def mul_scalar_backward(ctx: Any, grad: Tensor) -> tuple:  # d(c x)/dx = c
    return (grad * ctx.params["other"],)


@defop("add_scalar", node="AddBackward1")
def _add_scalar(x: np.ndarray, *, other: Any) -> np.ndarray:
    return ew._binary(np.add, x, other)


@_add_scalar.backward
def add_scalar_backward(ctx: Any, grad: Tensor) -> tuple:  # d(x + c)/dx = 1
    return (grad,)


@defop("div_scalar", node="DivBackward1")
def _div_scalar(x: np.ndarray, *, other: Any) -> np.ndarray:
    return ew._div.forward(x, other)


@_div_scalar.backward
def div_scalar_backward(ctx: Any, grad: Tensor) -> tuple:  # d(x / c)/dx = 1/c
    return (grad / ctx.params["other"],)


# at::norm(x, p, dim, keepdim) as composites call it (pairwise_distance): NormBackward1. The
# arithmetic is the vector norm's; only the node torch prints differs.
_norm_dim = defop("norm_dim", node="NormBackward1", save=(0,), save_output=True)(
    rd._norm.forward)
_norm_dim.backward(rd._norm.rule)

# forward mode
for _scalar_op in (_mul_scalar, _div_scalar):  # linear in x
    _scalar_op.jvp(linear_tangent(_scalar_op))


@_add_scalar.jvp
def add_scalar_jvp(tangents: list, inputs: tuple, out: Any, **p: Any) -> Any:  # d(x + c) = dx
    return tangents[0]
