"""Loss functions: the fused entries behind ``F.mse_loss``, ``smooth_l1_loss``, ``huber_loss``,
``soft_margin_loss``, ``binary_cross_entropy`` (and ``_with_logits``), ``nll_loss`` (and the
lean pair ``cross_entropy`` takes in its common case), ``multi_margin_loss``,
``multilabel_margin_loss`` and ``ctc_loss``. ``reduction`` is torch's enum: 0 none, 1 mean, 2 sum.
"""


from __future__ import annotations

from typing import Any

import numpy as np

from .. import _numpy_warnings as _nw
from .._tensor import Tensor
from ..autograd import grad
from ..autograd.grad_mode import enable_grad
from . import elementwise as ew
from . import reduction as rd
from . import shape as sh
from ._registry import defop
from .activations import _fast_max, _softplus
from .nn_common import _fast_sum, _float, _linked, _quiet

# ---------------------------------------------------------------------------------------------
# Losses. reduction: 0 none, 1 mean, 2 sum (torch's enum)
# ---------------------------------------------------------------------------------------------

def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == 1:
        return np.asarray(_nw.mean(loss), dtype=loss.dtype)
    if reduction == 2:
        return np.asarray(np.sum(loss), dtype=loss.dtype)
    return loss


def _norm(reduction: int, shape: tuple) -> float:
    """The factor a mean reduction puts on every element's gradient."""
    return 1.0 / max(int(np.prod(shape)), 1) if reduction == 1 else 1.0


def _pair_shape(ctx: Any) -> tuple:
    """The shape of a loss's input (and target): that of whichever needs a gradient."""
    return next(s for s in ctx.input_shapes if s is not None)


def target_pair(ctx: Any, gx: Any) -> tuple:
    """(d input, d target) for losses of ``input - target``: the target gets the negative
    (Tensors in a rule, arrays in its fast path)."""
    need_x, need_t = ctx.needs_input_grad
    return (gx if need_x else None), (-gx if need_t else None)


@defop("mse_loss", node="MseLossBackward0", save=(0, 1))
def _mse_loss(x: np.ndarray, t: np.ndarray, *, reduction: int) -> np.ndarray:
    _float(x, "mse_cpu")
    d = x - t
    return _reduce(d * d, reduction)


@_mse_loss.backward
def mse_loss_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx (x - t)^2 = 2 (x - t)
    x, t = ctx.saved
    red = ctx.params["reduction"]
    return target_pair(ctx, (x - t) * (2.0 * _norm(red, _pair_shape(ctx))) * grad)


@defop("smooth_l1_loss", node="SmoothL1LossBackward0", save=(0, 1))
def _smooth_l1_loss(x: np.ndarray, t: np.ndarray, *, reduction: int, beta: float) -> np.ndarray:
    z = np.abs(x - t)
    return _reduce(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


@_smooth_l1_loss.backward
def smooth_l1_loss_backward(ctx: Any, grad: Tensor) -> tuple:
    # (x - t)/beta inside |x - t| < beta, sign outside
    (x, t), p = ctx.saved, ctx.params
    d = ew.clamp((x - t) / p["beta"], -1.0, 1.0)
    return target_pair(ctx, d * _norm(p["reduction"], _pair_shape(ctx)) * grad)


@defop("huber_loss", node="HuberLossBackward0", save=(0, 1))
def _huber_loss(x: np.ndarray, t: np.ndarray, *, reduction: int, delta: float) -> np.ndarray:
    z = np.abs(x - t)
    return _reduce(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


@_huber_loss.backward
def huber_loss_backward(ctx: Any, grad: Tensor) -> tuple:
    # x - t inside |x - t| < delta, delta sign outside
    (x, t), p = ctx.saved, ctx.params
    d = ew.clamp(x - t, -p["delta"], p["delta"])
    return target_pair(ctx, d * _norm(p["reduction"], _pair_shape(ctx)) * grad)


@defop("soft_margin_loss", node="SoftMarginLossBackward0", save=(0,))
@_quiet
def _soft_margin_loss(x: np.ndarray, *, target: np.ndarray, reduction: int) -> np.ndarray:
    return _reduce(np.log1p(np.exp(-target * x)), reduction)


@_soft_margin_loss.backward
def soft_margin_loss_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx log(1 + e^(-yx)) = -y s(-yx)
    (x,) = ctx.saved
    y = Tensor._make(ctx.params["target"])
    norm = _norm(ctx.params["reduction"], _pair_shape(ctx))
    return (-y * ew.sigmoid(-y * x) * norm * grad,)


@defop("binary_cross_entropy", node="BinaryCrossEntropyBackward0", save=(0, 1))
@_quiet
def _bce(x: np.ndarray, t: np.ndarray, *, weight: Any, reduction: int) -> np.ndarray:
    if not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not ((t >= 0) & (t <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    loss = (t - 1.0) * np.maximum(np.log1p(-x), -100.0) - t * np.maximum(np.log(x), -100.0)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_bce.backward
def bce_backward(ctx: Any, grad: Tensor) -> tuple:  # (x - t)/((1 - x) x); target: log(1-x) - log(x)
    (x, t), p = ctx.saved, ctx.params
    need_x, need_t = ctx.needs_input_grad
    scale = grad * _norm(p["reduction"], _pair_shape(ctx))
    if p["weight"] is not None:
        scale = scale * Tensor._make(p["weight"])
    with np.errstate(all="ignore"):
        # torch's EPSILON 1e-12, rounded to float for every dtype
        gx = (x - t) / ew.clamp((1.0 - x) * x, EPS12_F) * scale if need_x else None
        gt = None
        if need_t:
            gt = (ew.clamp(ew.log(1.0 - x), -100.0) - ew.clamp(ew.log(x), -100.0)) * scale
    return gx, gt


EPS12_F = float(np.float32(1e-12))


def _log_sigmoid_np(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


@defop("bce_with_logits", node="BinaryCrossEntropyWithLogitsBackward0", save=(0, 1))
def _bce_logits(x: np.ndarray, t: np.ndarray, *, weight: Any, pos_weight: Any,
                reduction: int) -> np.ndarray:
    ls = _log_sigmoid_np(x)
    if pos_weight is not None:
        ls = ls * ((pos_weight - 1.0) * t + 1.0)
    loss = (1.0 - t) * x - ls
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_bce_logits.backward
def bce_logits_backward(ctx: Any, grad: Tensor) -> tuple:
    # x: s(x) - t (or (pw t + 1 - t) s(x) - pw t)
    (x, t), p = ctx.saved, ctx.params
    need_x, need_t = ctx.needs_input_grad
    scale = grad * _norm(p["reduction"], _pair_shape(ctx))
    if p["weight"] is not None:
        scale = scale * Tensor._make(p["weight"])
    pw = Tensor._make(p["pos_weight"]) if p["pos_weight"] is not None else None
    gx = gt = None
    if need_x:
        s = ew.sigmoid(x)
        gx = ((pw * t + 1.0 - t) * s - pw * t if pw is not None else s - t) * scale
    if need_t:  # d/dt = log s(-x) - pw log s(x)  (= -x without pos_weight)
        if pw is None:
            gt = -x * scale
        else:
            lsx = -_softplus(-x, beta=1.0, threshold=20.0)
            gt = (lsx - x - pw * lsx) * scale
    return gx, gt


def _pick(x: np.ndarray, index: np.ndarray, cdim: int) -> np.ndarray:
    """x[..., index, ...] along the class dim: one value per target."""
    if x.ndim == 2:
        return x[np.arange(x.shape[0]), index]
    if x.ndim == 1:
        return x[index]
    return np.squeeze(np.take_along_axis(x, np.expand_dims(index, cdim), axis=cdim), cdim)


def _place(out: np.ndarray, index: np.ndarray, values: np.ndarray, cdim: int) -> None:
    """out[..., index, ...] = values along the class dim (the adjoint of _pick)."""
    if out.ndim == 2:
        out[np.arange(out.shape[0]), index] = values
    elif out.ndim == 1:
        out[index] = values
    else:
        np.put_along_axis(out, np.expand_dims(index, cdim), np.expand_dims(values, cdim),
                          axis=cdim)


def _nll_forward(x: np.ndarray, *, target: np.ndarray, weight: Any, ignore_index: int,
                 reduction: int, _cache: dict) -> np.ndarray:
    """-w[t] x[t] along dim 1 (dim 0 for a 1-D input); mean divides by the total weight."""
    cdim = 0 if x.ndim == 1 else 1
    c = x.shape[cdim]
    valid = target != ignore_index
    all_valid = bool(valid.all())
    if target.size and (target.min() < 0 or target.max() >= c):
        bad = valid & ((target < 0) | (target >= c))
        if bad.any():
            raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    safe = target if all_valid else np.where(valid, target, 0)
    if weight is None:
        w = np.ones(target.shape, dtype=x.dtype) if all_valid else valid.astype(x.dtype)
    else:
        w = weight[safe] if all_valid else weight[safe] * valid
    losses = -(_pick(x, safe, cdim) * w)
    if not all_valid:
        losses = np.where(valid, losses, 0).astype(x.dtype)
    _cache.update(safe=safe, w=w, valid=None if all_valid else valid)
    if reduction == 0:
        return losses
    total = np.sum(losses, dtype=x.dtype)
    if reduction == 2:
        return np.asarray(total)
    tw = np.sum(w, dtype=x.dtype)
    _cache["total_weight"] = tw
    with np.errstate(all="ignore"):
        return np.asarray(total / tw, dtype=x.dtype)


def nll_loss_backward(ctx: Any, grad: Tensor) -> tuple:  # -w[t]/total at the target class, 0 else
    p = ctx.params
    cache = p["_cache"]
    shape = ctx.input_shapes[0]
    cdim = 0 if len(shape) == 1 else 1
    dtype = grad._data.dtype
    valid = cache["valid"]
    with np.errstate(all="ignore"):
        coef = -cache["w"]
        if p["reduction"] == 1:
            coef = coef / cache["total_weight"]
        m = np.zeros(shape, dtype=dtype)
        _place(m, cache["safe"], (coef if valid is None else np.where(valid, coef, 0))
               .astype(dtype, copy=False), cdim)
    gt = grad.unsqueeze(cdim) if p["reduction"] == 0 and len(shape) > 1 else grad
    return (gt * Tensor._make(m),)


_nll_loss = defop("nll_loss", node="NllLossBackward0", save=(0,))(_nll_forward)
_nll_loss2d = defop("nll_loss2d", node="NllLoss2DBackward0", save=(0,))(_nll_forward)
_nll_loss.backward(nll_loss_backward)
_nll_loss2d.backward(nll_loss_backward)


# F.cross_entropy's common case: (N, C) float logits, int64 class indices all in [0, C), no
# weight, mean reduction, no smoothing. The same two nodes as the general path (NllLossBackward0
# over LogSoftmaxBackward0) with lean rules: the forward keeps the softmax for the backward, and
# the first-order backward is a handful of array operations (ops/fast_paths.py).

@defop("ce_log_softmax", node="LogSoftmaxBackward0", save_output=True)
def _ce_log_softmax(x: np.ndarray, *, _cache: dict) -> np.ndarray:
    m = _fast_max(x, 1)
    if not np.isfinite(m).all():
        m = np.where(np.isfinite(m), m, 0)
    y = x - m
    e = np.exp(y)
    s = _fast_sum(e, (1,), True)
    with np.errstate(divide="ignore", invalid="ignore"):
        y -= np.log(s)
        e /= s
    _cache["softmax"] = e
    return y


@_ce_log_softmax.backward
def ce_log_softmax_backward(ctx: Any, grad: Tensor) -> tuple:  # d(x - lse)/dx: g - softmax * sum(g)
    (y,) = ctx.saved
    return (grad - y.exp() * grad.sum(1, keepdim=True),)


@defop("ce_nll", node="NllLossBackward0")
def _ce_nll(x: np.ndarray, *, target: np.ndarray) -> np.ndarray:
    total = np.add.reduce(x[np.arange(x.shape[0]), target])
    return np.asarray(-total / x.shape[0], dtype=x.dtype)


@_ce_nll.backward
def ce_nll_backward(ctx: Any, grad: Tensor) -> tuple:  # -1/N at the target class, 0 else
    n, c = ctx.input_shapes[0]
    m = np.zeros((n, c), dtype=grad._data.dtype)
    m[np.arange(n), ctx.params["target"]] = -1.0 / n
    return (grad * Tensor._make(m),)


# ---------------------------------------------------------------------------------------------
# CTC loss (torch's _ctc_loss: per-sample negative log likelihoods; the reduction is outside)
#
#   labels l' = blank, l1, blank, l2, ..., blank  (2S + 1 states per sample)
#   alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2)*)
#   beta_t(s)  = lp_t(l'_s) + logsumexp(beta_{t+1}(s), beta_{t+1}(s+1), beta_{t+1}(s+2)*)
#     (* when l'_s is a label different from l'_{s-2}); nll = -log(alpha_{T-1}(2S) +
#     alpha_{T-1}(2S-1)). One Python step per time step, every sample and state at once.
#   backward (torch's formula, the gradient for log-softmax outputs), with
#   ab_t(c) = logsumexp over the states s with l'_s = c of alpha_t(s) + beta_t(s) (added one
#   state at a time, from the last down, as torch's kernel adds them: float32 shows the order):
#     d/dlp_t(c) = exp(lp_t(c)) - exp(ab_t(c) + nll - lp_t(c))
#     for t < the sample's input length, 0 after it (and 0 for an infinite loss with
#     zero_infinity).
# ---------------------------------------------------------------------------------------------

def _log_add3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log(e^a + e^b + e^c), -inf where all three are."""
    m = np.maximum(np.maximum(a, b), c)
    shift = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.log(np.exp(a - shift) + np.exp(b - shift) + np.exp(c - shift))
    out += shift
    return out


def _log_add2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(e^a + e^b) as torch's CTC kernel takes it: shifted by max(a, b) (by 0 when both are
    -inf, which then stays -inf); exactly a where b is -inf."""
    m = np.maximum(a, b)
    shift = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.log(np.exp(a - shift) + np.exp(b - shift)) + shift


def _ctc_collect(ab: np.ndarray, labels: np.ndarray, target_lengths: np.ndarray,
                 classes: int) -> np.ndarray:
    """log of the sum, over the states s of each class c, of alpha_t(s) beta_t(s): torch adds
    the states one at a time from the last down (a running pairwise log-add), and in float32
    that order shows in the gradient, so it is kept here (one step per state, all t, n)."""
    t_max, n, states = ab.shape
    out = np.full((t_max, n, classes), -np.inf, dtype=ab.dtype)
    rows = np.arange(n)
    for s in range(states - 1, -1, -1):
        live = s <= 2 * target_lengths
        r, c = rows[live], labels[live, s]
        cur, new = out[:, r, c], ab[:, live, s]
        out[:, r, c] = np.where(cur == -np.inf, new, _log_add2(cur, new))
    return out


def _ctc_shift(x: np.ndarray, k: int, allowed: Any = None) -> np.ndarray:
    """x moved k states up along the last axis (k < 0: down), -inf shifted in; -inf where
    ``allowed`` is False."""
    out = np.full_like(x, -np.inf)
    if k > 0:
        out[..., k:] = x[..., :-k]
    else:
        out[..., :k] = x[..., -k:]
    if allowed is not None:
        out[~allowed] = -np.inf
    return out


def _ctc_forward(lp: np.ndarray, *, labels: np.ndarray, input_lengths: np.ndarray,
                 target_lengths: np.ndarray, zero_infinity: bool, _cache: dict) -> np.ndarray:
    t_max, n, _ = lp.shape
    states = labels.shape[1]
    inf = np.inf
    last = 2 * target_lengths  # the final blank's state
    valid = np.arange(states)[None, :] <= last[:, None]
    skip = np.zeros((n, states), dtype=bool)  # s - 2 -> s allowed (into s; from s - 2)
    skip[:, 3::2] = labels[:, 3::2] != labels[:, 1:-2:2]
    lpl = np.take_along_axis(lp, np.broadcast_to(labels[None], (t_max, n, states)), axis=2)
    alpha = np.full((t_max, n, states), -inf, dtype=lp.dtype)
    if t_max:
        alpha[0, :, 0] = lpl[0, :, 0]
        alpha[0, :, 1:2] = np.where(target_lengths[:, None] > 0, lpl[0, :, 1:2], -inf)
    for t in range(1, t_max):
        a = alpha[t - 1]
        alpha[t] = _log_add3(a, _ctc_shift(a, 1), _ctc_shift(a, 2, skip)) + lpl[t]
        alpha[t][~valid] = -inf
    rows = np.arange(n)
    end = np.maximum(input_lengths - 1, 0)
    with np.errstate(invalid="ignore"):
        fin = alpha[end, rows, last]
        fin2 = np.where(target_lengths > 0, alpha[end, rows, np.maximum(last - 1, 0)], -inf)
        nll = -np.logaddexp(fin, fin2)
    nll = np.where(input_lengths > 0, nll, np.where(target_lengths > 0, inf, 0)).astype(lp.dtype)
    _cache.update(alpha=alpha, lpl=lpl, skip=skip, valid=valid, nll=nll)
    return nll


def ctc_grad_array(ctx: Any, lp: np.ndarray, gout: np.ndarray) -> np.ndarray:
    """The gradient for the log-probabilities ``lp`` (see the section comment), given the
    losses' gradient ``gout``: torch's kernel on the arrays (the rule's and its fast path's)."""
    p, c = ctx.params, ctx.params["_cache"]
    labels, il, tl = p["labels"], p["input_lengths"], p["target_lengths"]
    alpha, lpl, skip, valid, nll = c["alpha"], c["lpl"], c["skip"], c["valid"], c["nll"]
    t_max, n, classes = lp.shape
    inf = np.inf
    rows = np.arange(n)
    last = 2 * tl
    beta = np.full_like(alpha, -inf)
    end = il - 1
    live = il > 0
    beta[end[live], rows[live], last[live]] = lpl[end[live], rows[live], last[live]]
    two = live & (tl > 0)
    beta[end[two], rows[two], last[two] - 1] = lpl[end[two], rows[two], last[two] - 1]
    skip_from = np.zeros_like(skip)  # s + 2 -> s (backwards) allowed when skip[s + 2]
    skip_from[:, :-2] = skip[:, 2:]
    for t in range(t_max - 2, -1, -1):
        b = beta[t + 1]
        new = _log_add3(b, _ctc_shift(b, -1), _ctc_shift(b, -2, skip_from)) + lpl[t]
        new[~valid] = -inf
        beta[t] = np.where((t < end)[:, None], new, beta[t])
    lcab = _ctc_collect(alpha + beta, labels, tl, classes)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        g = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    g[np.arange(t_max)[:, None] >= il[None, :]] = 0
    if p["zero_infinity"]:
        g[:, nll == inf] = 0
    g *= gout[None, :, None]
    return g.astype(lp.dtype, copy=False)


def ctc_loss_backward(ctx: Any, grad: Tensor) -> tuple:
    # the kernel's values, as an entry whose own backward torch does not have
    lp_t, nll_t = ctx.saved
    return (_ctc_grad(lp_t, nll_t, value=ctc_grad_array(ctx, lp_t._data, grad._data)),)


_ctc_loss = defop("ctc_loss", node="CtcLossBackward0", save=(0,), save_output=True)(
    _ctc_forward)
_ctc_loss.backward(ctc_loss_backward)


@_ctc_loss.jvp
def ctc_loss_jvp(tangents: list, inputs: tuple, out: Tensor, **p: Any) -> Tensor:
    # loss n depends on log_probs[:, n] only, so (J^T 1)[:, n] is row n of J: J v = sum (J^T 1) v
    lp = inputs[0]
    with enable_grad():
        x = lp if lp._requires_grad else Tensor._make(lp._data, requires_grad=True)
        again = _ctc_loss(x, **p)
        (g,) = grad(again, x, Tensor._make(np.ones(again.shape, again._data.dtype)))
    return (g.detach() * tangents[0]).sum((0, 2))


@defop("ctc_loss_backward", node="NotImplemented")
def _ctc_grad(lp: np.ndarray, nll: np.ndarray, *, value: np.ndarray) -> np.ndarray:
    return value


_ctc_grad.node_cls._cpp_name = "torch::autograd::NotImplemented"


@_ctc_grad.backward
def ctc_grad_backward(ctx: Any, grad: Tensor) -> tuple:
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


# ---------------------------------------------------------------------------------------------
# Margin losses
# ---------------------------------------------------------------------------------------------

def _margin_reduce(loss: np.ndarray, reduction: int, out_shape: tuple, dtype: Any
                   ) -> np.ndarray:
    """The margin losses' reduction of their float64 per-sample losses, as torch's kernels
    take it (the sum, and the mean's division, in float64; a mean over no sample is NaN)."""
    if reduction == 0:
        return loss.astype(dtype).reshape(out_shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.sum(loss) / (len(loss) if reduction == 1 else 1)
    return np.asarray(total, dtype=dtype)


def multi_margin_terms(x: np.ndarray, onehot: np.ndarray, margin: float) -> tuple:
    """z[n, i] = (margin - x[n, y_n]) + x[n, i] (torch's order) and the terms that count."""
    xy = _fast_sum(x * onehot, (-1,), True)
    z = (margin - xy) + x
    return z, (z > 0) & ~onehot


def _saved_rows(ctx: Any, table: str) -> tuple:
    """A multi-class margin loss's saved input as its (N, C) rows, and its (N, C) array
    ``table`` (the targets as a one-hot or as counts)."""
    rows = ctx.params[table]
    return sh.reshape(ctx.saved[0], rows.shape), rows


def _per_sample_mean_grad(grad: Tensor, reduction: int, n: int, c: int) -> Tensor:
    """The gradient of each sample's loss (a sum over C classes / C), from the reduced loss's
    ``grad``: / (N C) for 'mean', / C for 'sum', a column (N, 1) for 'none'."""
    scale = grad * ((1.0 / (n * c)) if reduction == 1 else (1.0 / c))
    return sh.reshape(scale, (n, 1)) if reduction == 0 else scale


@defop("multi_margin_loss", node="MultiMarginLossBackward0", save=(0,))
def _multi_margin_loss(x: np.ndarray, *, onehot: np.ndarray, p: int, margin: float,
                       weight: Any, reduction: int, out_shape: tuple) -> np.ndarray:
    """Per sample (a row of the (N, C) view of x): the sum over i != y of
    max(0, margin - x[y] + x[i])^p (times weight[y]) / C, summed in float64 as torch does."""
    x2 = x.reshape(onehot.shape)
    z, on = multi_margin_terms(x2, onehot, margin)
    h = np.where(on, z, 0) if p == 1 else np.where(on, z * z, 0)
    if weight is not None:
        h = h * weight[np.argmax(onehot, axis=-1)][:, None]
    loss = np.sum(h, axis=-1, dtype=np.float64) / onehot.shape[1]
    return _margin_reduce(loss, reduction, out_shape, x.dtype)


@_multi_margin_loss.backward
def multi_margin_loss_backward(ctx: Any, grad: Tensor) -> tuple:
    # each counted term: +p z^(p-1) at i, - at the target
    x2, onehot = _saved_rows(ctx, "onehot")
    prm = ctx.params
    n, c = onehot.shape
    z = (prm["margin"] - rd.sum(x2 * Tensor._make(onehot), (-1,), True)) + x2  # (as the terms)
    on = (z > 0) & Tensor._make(~onehot)
    d = on * (1.0 if prm["p"] == 1 else z * 2.0)
    if prm["weight"] is not None:
        d = d * Tensor._make(prm["weight"][np.argmax(onehot, axis=-1)][:, None])
    scale = _per_sample_mean_grad(grad, prm["reduction"], n, c)
    d = d * scale
    d = d - Tensor._make(onehot.astype(grad._data.dtype)) * rd.sum(d, (-1,), True)
    return (sh.reshape(d, tuple(ctx.input_shapes[0])),)


@defop("multilabel_margin_loss", node="MultilabelMarginLossBackward0", save=(0,))
def _multilabel_margin_loss(x: np.ndarray, *, counts: np.ndarray, reduction: int,
                            out_shape: tuple) -> np.ndarray:
    """Per sample: the sum over its targets j (a class named twice counts twice) and its
    non-target classes i of max(0, 1 - (x[j] - x[i])), / C; summed in float64 as torch does."""
    x2 = x.reshape(counts.shape)
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]  # (n, target j, other i)
    z = (1.0 - x2[:, :, None]) + x2[:, None, :]
    loss = np.sum(pairs * np.maximum(z, 0), axis=(-1, -2), dtype=np.float64) / counts.shape[1]
    return _margin_reduce(loss, reduction, out_shape, x.dtype)


@_multilabel_margin_loss.backward
def multilabel_margin_loss_backward(ctx: Any, grad: Tensor) -> tuple:
    # each active pair: -1 at the target, +1 at the other
    x2, counts = _saved_rows(ctx, "counts")
    n, c = counts.shape
    pairs = (counts[:, :, None] * (counts == 0)[:, None, :]).astype(grad._data.dtype)
    xj = sh.reshape(x2, (n, c, 1))
    xi = sh.reshape(x2, (n, 1, c))
    active = ((1.0 - xj) + xi > 0) * Tensor._make(pairs)
    scale = _per_sample_mean_grad(grad, ctx.params["reduction"], n, c)
    d = rd.sum(active * 1.0, (-2,), False) - rd.sum(active * 1.0, (-1,), False)
    return (sh.reshape(d * scale, tuple(ctx.input_shapes[0])),)


# Rules whose gradient torch's double-backward node ties to the forward's inputs (see _link)
for _entry in (_nll_loss, _nll_loss2d):
    _linked(_entry)
