"""Loss functions: regression losses, cross entropy and NLL, binary cross entropy, KL divergence,
margin and embedding losses, the NLL variants (Poisson, Gaussian), ``ctc_loss`` and
``linear_cross_entropy``; the fused ones are entries of ``ops/losses.py``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..._creation import ones_like
from ..._dtype import promote_types
from ..._tensor import Tensor
from ...autograd.grad_mode import _state, no_grad
from ...ops import elementwise as ew
from ...ops import losses as K
from ...ops import nn_common as C
from ...ops import reduction as rd
from ...ops._registry import defop, scalar_type_name, value_check
from ._activations import log_softmax, logsigmoid
from ._common import _broadcast_pair, _scalar_name
from ._distance import pairwise_distance
from ._linear import linear

# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _legacy_reduction(size_average: Any, reduce: Any, stacklevel: int = 3) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
        "instead.",
        stacklevel=stacklevel,
    )
    return ret


def _reduction(reduction: str, size_average: Any = None, reduce: Any = None) -> int:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=3,
        )
        return 1
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _apply_reduction(loss: Tensor, reduction: int) -> Tensor:
    if reduction == 1:
        return loss.mean()
    if reduction == 2:
        return loss.sum()
    return loss


def _size_warning(input: Tensor, target: Tensor, stacklevel: int = 3) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=stacklevel,
        )


def _regression_inputs(input: Tensor, target: Tensor, size_average: Any, reduce: Any,
                       reduction: str) -> tuple[Tensor, Tensor, str]:
    """What mse_loss, l1_loss and smooth_l1_loss begin with: torch's warning for a target of
    another size, the legacy ``size_average``/``reduce`` arguments (their warnings name the
    loss's caller), and input and target broadcast together."""
    _size_warning(input, target, stacklevel=4)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, stacklevel=4)
    x, t = _broadcast_pair(input, target)
    return x, t, reduction


def _promoted_pair(a: Tensor, b: Tensor) -> tuple:
    """Both operands in torch's promoted dtype (float32 input, int64 target: float32)."""
    if a.dtype == b.dtype:
        return a, b
    common = promote_types(a.dtype, b.dtype)
    return (a if a.dtype == common else a.to(common), b if b.dtype == common else b.to(common))


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str,
              mean_by_weight: bool) -> Tensor:
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    out = loss * weight
    if reduction == "none":
        return out
    if reduction == "sum":
        return rd.sum(out)
    if reduction == "mean":
        return rd.sum(out) / rd.sum(weight) if mean_by_weight else out.mean()
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error (MseLossBackward0)."""
    x, t, reduction = _regression_inputs(input, target, size_average, reduce, reduction)
    if weight is not None:
        return _weighted((x - t) ** 2, weight, input, reduction, True)
    return K._mse_loss(*_promoted_pair(x, t), reduction=_reduction(reduction))


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error: ``(input - target).abs()`` then the reduction."""
    x, t, reduction = _regression_inputs(input, target, size_average, reduce, reduction)
    if weight is not None:
        return _weighted((x - t).abs(), weight, input, reduction, True)
    return _apply_reduction((x - t).abs(), _reduction(reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (SmoothL1LossBackward0)."""
    x, t, reduction = _regression_inputs(input, target, size_average, reduce, reduction)
    red = _reduction(reduction)
    if beta == 0.0:
        return _apply_reduction((x - t).abs(), red)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return K._smooth_l1_loss(*_promoted_pair(x, t), reduction=red, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (HuberLossBackward0)."""
    _size_warning(input, target)
    x, t = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return K._huber_loss(x, t, reduction=_reduction(reduction), delta=delta)
    loss = K._huber_loss(x, t, reduction=0, delta=delta)
    return _weighted(loss, weight, input, reduction, False)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y x))."""
    red = _reduction(reduction, size_average, reduce)
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except ValueError:
        raise ew._broadcast_error(input._data, target._data) from None
    t = target._data.astype(input._data.dtype)
    return K._soft_margin_loss(input, target=np.broadcast_to(t, input.shape), reduction=red)


def _check_target_dtype(target: Tensor) -> None:
    if target.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_name(target)}"
        )


def _nll_weight(weight: Tensor | None, input: Tensor, n_classes: int, prefix: str = "") -> Any:
    if weight is None:
        return None
    if weight.ndim != 1 or weight.numel() != n_classes:
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: [{', '.join(str(s) for s in weight.shape)}]"
        )
    if weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input)} but found {_scalar_name(weight)}"
        )
    return weight._data


@value_check
def _nll_target(t: np.ndarray, scalar: bool) -> np.ndarray:
    """The class indices as the kernel reads them (int64; 0-d for a 1-D input). The range is
    checked in the kernel."""
    t = t.astype(np.int64)
    return t.reshape(()) if scalar else t


@value_check
def _nll_target2d(t: np.ndarray, shape: tuple) -> np.ndarray:
    """The spatial class indices as the kernel reads them: int64, (N, H, W)."""
    return t.reshape(shape).astype(np.int64)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] (weighted), for log-probabilities along dim 1 (NllLossBackward0;
    NllLoss2DBackward0 for inputs with spatial dims)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _nll_nd(input, target, weight, _reduction(reduction), ignore_index)


def _nll_nd(input: Tensor, target: Tensor, weight: Tensor | None, red: int,
            ignore_index: int) -> Tensor:
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(
                "For 1D input, 1D target must have size 1, but got target size: "
                f"{target.shape[0]}"
            )
        _check_target_dtype(target)
        w = _nll_weight(weight, input, input.shape[-1])
        tgt = _nll_target(target._data, input.ndim == 1)
        return K._nll_loss(input, target=tgt, weight=w, ignore_index=ignore_index,
                           reduction=red, _cache={})
    n, c = input.shape[:2]
    out_size = (n,) + tuple(input.shape[2:])
    if input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of "
                f"dimension: {target.ndim}"
            )
        if tuple(target.shape) != (n,) + tuple(input.shape[2:]):
            raise RuntimeError(
                f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}"
            )
        x, tgt = input, target._data
    else:
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(
                f"Expected target size {list(out_size)}, got {list(target.shape)}"
            )
        x = input.contiguous().view(n, c, 1, -1) if input.numel() else input.view(n, c, 0, 0)
        tgt = target._data.reshape(n, 1, -1) if target.numel() else target._data.reshape(n, 0, 0)
    _check_target_dtype(target)
    w = _nll_weight(weight, input, c)
    tgt = _nll_target2d(target._data, tuple(tgt.shape))
    out = K._nll_loss2d(x, target=tgt, weight=w, ignore_index=ignore_index,
                        reduction=red, _cache={})
    if red == 0 and input.ndim != 4:
        out = out.view(out_size)
    return out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over dim 1, then nll_loss (NllLossBackward0 over LogSoftmaxBackward0).

    ``target`` holds class indices (int64, shape (N, d1, ...)) or, with the input's shape,
    class probabilities. Stable for any logits: log_softmax subtracts the row maximum.

    Example:
        >>> import tapegrad as torch
        >>> import tapegrad.nn.functional as F
        >>> F.cross_entropy(torch.tensor([[1e4, 0.0]]), torch.tensor([1]))
        tensor(10000.)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    red = _reduction(reduction)
    class_dim = 0 if input.ndim == 1 else 1
    if (red == 1 and weight is None and not label_smoothing and input.ndim == 2
            and target.ndim == 1):
        fast = _cross_entropy_fast(input, target, ignore_index)
        if fast is not None:
            return fast
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_scalar_name(target)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, red, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}"
            )
        return _cross_entropy_smoothed(input, target, weight, red, ignore_index,
                                       label_smoothing, class_dim)
    logp = log_softmax(input, class_dim, dtype=input.dtype)
    return _nll_nd(logp, target, weight, red, ignore_index)


def _cross_entropy_fast(input: Tensor, target: Tensor, ignore_index: int) -> Tensor | None:
    """The common case as two lean entries (the same nodes), or None where it does not apply:
    (N, C) float logits, N int64 class indices in [0, C), none of them ignored."""
    x, t = input._data, target._data
    n, c = x.shape
    if (x.dtype.kind != "f" or t.dtype != np.int64 or n == 0 or c == 0 or t.shape[0] != n
            or not _ce_targets_fit(t, c, ignore_index)):
        return None
    return K._ce_nll(K._ce_log_softmax(input, _cache={}), target=_target_copy(t))


@value_check
def _target_copy(t: np.ndarray) -> np.ndarray:
    """Cross-entropy's own copy of its class indices (its backward reads them after the
    caller may have changed the target). Marked as a value check so that a compiled program
    records the copy as a call on the target's array, wherever that array came from (an
    argument, a slice or view of one), and copies the replay's target."""
    return t.copy()


@value_check
def _ce_targets_fit(t: np.ndarray, c: int, ignore_index: int) -> bool:
    """Does cross-entropy's lean path apply to these targets: all in [0, C), none ignored?
    A target out of range and not ignored is the general path's error, raised here."""
    if not 0 <= ignore_index < c and t.view(np.uint64).max() < c:  # (negatives wrap)
        return True
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    return False


def _class_weight(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probs(input: Tensor, target: Tensor, weight: Tensor | None, red: int,
                         label_smoothing: float, class_dim: int) -> Tensor:
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim, dtype=input.dtype)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        _nll_weight(weight, input, n_classes, "cross_entropy: ")
        prod = prod * _class_weight(weight, input.ndim, class_dim)
    if red == 0:
        return -prod.sum(class_dim)
    total = -rd.sum(prod)
    if red == 2:
        return total
    return C._div_scalar(total, other=input.numel() / n_classes if input.numel() else math.nan)


def _cross_entropy_smoothed(input: Tensor, target: Tensor, weight: Tensor | None, red: int,
                            ignore_index: int, label_smoothing: float, class_dim: int) -> Tensor:
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim, dtype=input.dtype)
    nll = _nll_nd(logp, target, weight, red, ignore_index)
    ignore = _ignored_targets(target._data, ignore_index)
    if weight is not None:
        smooth = -(logp * _class_weight(weight, input.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill_(Tensor._make(ignore), 0.0)
    if red == 1:
        w = None if weight is None else weight._data
        smooth = rd.sum(smooth) / Tensor._make(_smoothing_denominator(target._data, ignore, w))
    elif red == 2:
        smooth = rd.sum(smooth)
    return (C._mul_scalar(nll, other=1 - label_smoothing)
            + C._mul_scalar(smooth, other=label_smoothing / n_classes))


# Label smoothing reads the targets' values in Python: value checks that return arrays, so a
# compiled program computes them again from each replay's targets.

@value_check
def _ignored_targets(t: np.ndarray, ignore_index: int) -> np.ndarray:
    """The mask of the targets equal to ``ignore_index``."""
    return t == ignore_index


@value_check
def _smoothing_denominator(t: np.ndarray, ignore: np.ndarray,
                           weight: np.ndarray | None) -> np.ndarray:
    """The mean's denominator of the smoothing term: the kept targets' total class weight, or
    their count."""
    if weight is not None:
        return np.asarray(np.sum(weight[t[~ignore].reshape(-1)], dtype=weight.dtype))
    return np.asarray(np.sum(~ignore), dtype=np.int64)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 (BinaryCrossEntropyBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(
            f"Found dtype {_scalar_name(target)} but expected {_scalar_name(input)}"
        )
    w = None
    if weight is not None:
        if weight._requires_grad and _state.enabled:
            raise RuntimeError(
                "The function 'binary_cross_entropy' is not differentiable with respect to "
                "argument 'weight'. This input cannot have requires_grad True."
            )
        shape = tuple(np.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
        w = np.broadcast_to(weight._data, shape)
    return K._bce(input, target, weight=w, reduction=red)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """BCE on logits, in the stable log-sigmoid form (BinaryCrossEntropyWithLogitsBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    arrays: dict[str, Any] = {}
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is None:
            arrays[name] = None
            continue
        if t._requires_grad and _state.enabled:
            raise RuntimeError(
                "The function 'binary_cross_entropy_with_logits' is not differentiable with "
                f"respect to argument '{name}'. This input cannot have requires_grad True."
            )
        try:
            np.broadcast_shapes(tuple(t.shape), tuple(input.shape))
        except ValueError:
            raise ew._broadcast_error(t._data, input._data) from None
        arrays[name] = t._data
    return K._bce_logits(input, target, weight=arrays["weight"],
                         pos_weight=arrays["pos_weight"], reduction=red)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise: target (log target - input); 'batchmean' divides
    the sum by the batch size."""
    if size_average is not None or reduce is not None:
        red = _REDUCTIONS[_legacy_reduction(size_average, reduce)]
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the KL "
                "div math definition.'mean' will be changed to behave the same as 'batchmean' "
                "in the next major release.",
                stacklevel=2,
            )
        red = 2 if reduction == "batchmean" else _reduction(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    out = _apply_reduction(loss, red)
    if reduction == "batchmean" and input.ndim != 0:
        out = out / input.shape[0]
    return out


def _xlogy_self(t: Tensor) -> Tensor:
    """t log t, 0 where t == 0 (torch's xlogy(t, t))."""
    if not t._requires_grad and t._fw_grad is None:
        with np.errstate(all="ignore"):
            d = t._data
            return Tensor._make(np.where(d == 0, 0, d * np.log(np.where(d == 0, 1, d)))
                                .astype(d.dtype))
    pos = t != 0
    safe = ew.where(pos, t, 1.0)
    return ew.where(pos, t * safe.log(), 0.0)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for target 1, max(0, cos - margin) for target -1."""
    red = _reduction(reduction, size_average, reduce)
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    if td == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12
    prod = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + eps
    mag2 = (input2 * input2).sum(td) + eps
    cos = prod / (mag1 * mag2).sqrt()
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    out = ew.where(target == 1, pos, 0.0) + ew.where(target == -1, neg, 0.0)
    return _apply_reduction(out, red)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target (x1 - x2) + margin)."""
    red = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), red)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """x for target 1, max(0, margin - x) for target -1."""
    red = _reduction(reduction, size_average, reduce)
    margin_clamp = (margin - input).clamp_min(0)
    out_margin = ew.where(target != 1, margin_clamp, 0.0)
    out_self = ew.where(target != -1, input, 0.0)
    return _apply_reduction(out_margin + out_self, red)


def _triplet_distances(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float,
                       swap: bool, dist: Any) -> tuple[Tensor, Tensor]:
    """torch's checks of the triplet losses, then ``dist(anchor, positive)`` and
    ``dist(anchor, negative)`` (with ``swap``, the smaller of it and
    ``dist(positive, negative)``)."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ew.minimum(d_neg, dist(positive, negative))
    return d_pos, d_neg


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with pairwise distances."""
    red = _reduction(reduction, size_average, reduce)
    d_pos, d_neg = _triplet_distances(anchor, positive, negative, margin, swap,
                                      lambda a, b: pairwise_distance(a, b, p, eps))
    return _apply_reduction((margin + d_pos - d_neg).clamp_min(0), red)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """exp(x) - t x (log_input) or x - t log(x + eps), plus Stirling's term when ``full``."""
    red = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, red)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 (log var + (x - t)^2 / var), var clamped at eps (without gradient through it)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(
            y for x, y in zip(input.shape, var.shape, strict=True) if x != y
        ) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = (var.log() + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """-mean over classes of t log s(x) + (1 - t) log s(-x)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with any distance."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = _triplet_distances(anchor, positive, negative, margin, swap, dist)
    loss = (d_pos - d_neg + margin).clamp_min(0)
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def _margin_shape_check(input: Tensor) -> tuple[int, int]:
    """(frames, classes) of a margin loss's input: a vector, a matrix, or a 0-d value."""
    nd = input.ndim
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0)
            or nd == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    if nd <= 1:
        return 1, (1 if nd == 0 else input.shape[0])
    return input.shape[0], input.shape[1]


@value_check
def _margin_onehot(target: np.ndarray, c: int) -> np.ndarray:
    """multi_margin_loss's targets, checked in [0, C), as a (N, C) one-hot mask."""
    t = target.reshape(-1)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    return t[:, None] == np.arange(c)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """sum over i != y of max(0, margin - x[y] + x[i])^p (weighted by w[y]) / C."""
    red = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    n, c = _margin_shape_check(input)
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and (weight.ndim > 1 or weight.numel() != c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    if not input.is_floating_point():
        raise NotImplementedError(
            f"\"multi_margin_loss_cpu_kernel\" not implemented for '{_scalar_name(input)}'")
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {_scalar_name(target)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found "
                           f"{_scalar_name(weight)}")
    onehot = _margin_onehot(target._data, c)
    out_shape = (n,) if target.ndim > 0 else ()
    return K._multi_margin_loss(input, onehot=onehot, p=p, margin=float(margin),
                                weight=None if weight is None else weight._data,
                                reduction=red, out_shape=out_shape)


@value_check
def _multilabel_range(target: np.ndarray, c: int) -> None:
    """multilabel_margin_loss's labels lie in [-1, C)."""
    if target.size and (target.min() < -1 or target.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")


@value_check
def _multilabel_counts(target: np.ndarray, n: int, c: int) -> np.ndarray:
    """(N, C): how many times each class is listed before the row's first -1."""
    t = target.reshape(n, c).astype(np.int64)
    listed = np.cumsum(t < 0, axis=-1) == 0  # the labels before the first -1
    counts = np.zeros((n, c), dtype=np.int64)
    rows = np.nonzero(listed)
    np.add.at(counts, (rows[0], t[rows]), 1)
    return counts


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """For each target class j (the labels before the first -1; one named twice counts twice)
    and non-target i: max(0, 1 - (x[j] - x[i])), summed and divided by C."""
    red = _reduction(reduction, size_average, reduce)
    n, c = _margin_shape_check(input)
    ok = (target.ndim <= 1 and target.numel() == c) if input.ndim <= 1 else (
        target.ndim == 2 and tuple(target.shape) == (n, c))
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _multilabel_range(target._data, c)
    if not input.is_floating_point():
        raise NotImplementedError("\"multilabel_margin_loss_forward_out_frame\" not "
                                  f"implemented for '{_scalar_name(input)}'")
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {_scalar_name(target)}")
    counts = _multilabel_counts(target._data, n, c)
    out_shape = (n,) if input.ndim == 2 else ()
    return K._multilabel_margin_loss(input, counts=counts, reduction=red, out_shape=out_shape)


def _lengths(x: Any) -> np.ndarray:
    data = x._data if isinstance(x, Tensor) else np.asarray(x)
    return np.asarray(data, dtype=np.int64).reshape(-1)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification: -log of the summed probability of every
    alignment of each target, ``log_probs`` (T, N, C) (or (T, C)) from log_softmax. Targets
    are padded (N, S) or concatenated (sum of target_lengths,). ``mean`` divides each loss by
    its target length, then averages (CtcLossBackward0 under DivBackward0 and MeanBackward0)."""
    red = _reduction(reduction)
    if log_probs._data.dtype.kind != "f":
        name = scalar_type_name(log_probs.dtype)
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for \'{name}\'')
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    t_max, n, classes = lp.shape
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    tg = np.asarray(targets._data if isinstance(targets, Tensor) else targets).astype(np.int64)
    if not batched:
        tg = tg.reshape(1, -1)
    check = " (while checking arguments for ctc_loss_allocate_outputs)"
    if il.size != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.size != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if n and int(il.max()) > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {int(il.max())}{check}")
    s_max = int(tl.max()) if n else 0
    padded = np.full((n, s_max), blank, dtype=np.int64)
    if tg.ndim == 2:
        if tg.shape[1] < s_max:
            raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension 1, "
                               f"but got size {tg.shape[1]} for argument #2 'targets'{check}")
        for i in range(n):
            padded[i, :tl[i]] = tg[i, :tl[i]]
    else:
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        if int(tl.sum()) > tg.size:
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.sum())} at "
                               f"dimension 0, but got size {tg.size} for argument #2 "
                               f"'targets'{check}")
        for i in range(n):
            padded[i, :tl[i]] = tg[starts[i]:starts[i] + tl[i]]
    labels = np.full((n, 2 * s_max + 1), blank, dtype=np.int64)
    labels[:, 1::2] = padded
    loss = K._ctc_loss(lp, labels=labels, input_lengths=il, target_lengths=tl,
                       zero_infinity=zero_infinity, _cache={})
    if zero_infinity:
        loss = ew.where(loss == math.inf, Tensor._make(np.zeros((), loss._data.dtype)), loss)
    if red == 1:
        div = Tensor._make(np.maximum(tl, 1).astype(loss._data.dtype))
        return (loss / div).mean()
    if red == 2:
        return loss.sum()
    return loss if batched else loss.squeeze(0)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): torch's reference
    path. ``linear_weight`` (C, *d, in) gives K-dimensional logits (N, C, *d). ``options``
    (torch's chunking strategy) is accepted; the computation is the reference one."""
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{in_features} and {linear_weight.shape[-1]}, respectively")
    c, out = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (c, *out):
        raise RuntimeError(f"expected linear_bias shape {(c, *out)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*batch, c, *out)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if (options is not None and reduction in ("mean", "sum", "none") and not out
            and label_smoothing == 0.0 and target.dtype.name == "int64"):
        # torch's chunked path: the same loss under the node of its custom op (unbatched
        # input goes through as a batch of one)
        unbatched = input.ndim == 1
        x, t = (input.unsqueeze(0), target.unsqueeze(0)) if unbatched else (input, target)
        loss = linear_cross_entropy(x, linear_weight, t, linear_bias=linear_bias,
                                    weight=weight, reduction=reduction,
                                    ignore_index=ignore_index)
        loss = (_CHUNKED_NONE if reduction == "none" else _CHUNKED)(loss)
        return loss.squeeze(0) if unbatched else loss
    rows = c * math.prod(out)
    w2 = linear_weight.reshape(rows, in_features) if out else linear_weight
    b2 = None if linear_bias is None else (linear_bias.reshape(rows) if out else linear_bias)
    logits = linear(input, w2, b2)
    if out:
        logits = logits.reshape(logits_shape)
    return cross_entropy(logits, target, weight, ignore_index=(
        -100 if ignore_index is None else ignore_index), reduction=reduction,
        label_smoothing=label_smoothing)


def _chunked_entry(name: str, node: str) -> Any:
    entry = defop(name, node=node)(lambda x: x.copy())

    @entry.backward
    def chunked_backward(ctx: Any, grad: Any) -> tuple:  # identity: the loss's graph is below
        return (grad,)

    return entry


_CHUNKED = _chunked_entry(
    "linear_cross_entropy_chunked",
    "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_defaultBackward")
_CHUNKED_NONE = _chunked_entry(
    "linear_cross_entropy_chunked_none",
    "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_"
    "defaultBackward")
