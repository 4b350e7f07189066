"""``nn.functional`` against real torch: values, dtypes, nodes, gradients, errors, RNG.

Every case in ``CASES`` is one call written in torch's API against ``(L, F)`` (the library and
its ``nn.functional``). For each case we check, with the same inputs on both sides:

* the float64 forward (values, dtype, shape, ``grad_fn`` node name) and first-order gradients
  for a random cotangent;
* the float32 forward and gradients (float32 stays float32);
* second-order gradients against torch where torch has them, and the library's own
  ``gradcheck`` / ``gradgradcheck`` on a subset.

Then: torch's error messages for bad input (``ERRORS``), graph shapes (linear, cross_entropy),
dropout and attention dropout bit for bit after the same ``manual_seed``, batch-norm running
statistics, and stability (cross_entropy with logits of 1e4).
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch
from cpu_kernels import assert_draws
from torchcompare import assert_values, dtype_name, run_fresh, to_numpy

# --------------------------------------------------------------------------------------------
# Arguments and cases
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """One tensor argument: values from ``gen``; ``diff`` floating args get requires_grad."""

    gen: Callable[[np.random.Generator], np.ndarray]
    diff: bool = True
    floating: bool = True


def R(*shape: int, scale: float = 1.0, diff: bool = True) -> Arg:
    return Arg(lambda rng: rng.standard_normal(shape) * scale, diff)


def U(*shape: int, lo: float = 0.05, hi: float = 0.95, diff: bool = True) -> Arg:
    return Arg(lambda rng: rng.uniform(lo, hi, shape), diff)


def A(*shape: int, kinks: tuple = (0.0,), scale: float = 2.0, diff: bool = True) -> Arg:
    """Normal values moved at least 0.05 away from the kinks (relu-like functions)."""

    def gen(rng: np.random.Generator) -> np.ndarray:
        x = rng.standard_normal(shape) * scale
        for _ in range(100):
            near = np.zeros(shape, dtype=bool)
            for k in kinks:
                near |= np.abs(x - k) < 0.05
            if not near.any():
                return x
            x = np.where(near, rng.standard_normal(shape) * scale, x)
        raise AssertionError("could not draw values away from the kinks")

    return Arg(gen, diff)


def I(values: Any) -> Arg:  # noqa: E743 - short name, like the other makers
    arr = np.asarray(values, dtype=np.int64)
    return Arg(lambda rng: arr.copy(), False, False)


def RI(*shape: int, hi: int) -> Arg:
    return Arg(lambda rng: rng.integers(0, hi, shape), False, False)


def M(*shape: int, p: float = 0.7) -> Arg:
    """A boolean mask, True with probability p."""
    return Arg(lambda rng: rng.random(shape) < p, False, False)


def C(values: Any, diff: bool = False) -> Arg:
    arr = np.asarray(values, dtype=np.float64)
    return Arg(lambda rng: arr.copy(), diff)


@dataclass
class Case:
    id: str
    fn: Callable
    args: list
    grad: bool = True
    gradgrad: bool = True  # compare second order with torch
    f32: bool = True
    f32_tol: float = 1e-5
    check: bool = False  # also run the library's gradcheck / gradgradcheck
    kw: dict = field(default_factory=dict)

    def inputs(self, L: Any, dtype: str, requires_grad: bool = True) -> list:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        out = []
        for a in self.args:
            v = a.gen(rng)
            if a.floating:
                t = L.tensor(v.astype(dtype))
                if requires_grad and a.diff:
                    t.requires_grad_(True)
            else:
                t = L.tensor(v)
            out.append(t)
        return out


CASES: list[Case] = []


def case(id: str, fn: Callable, *args: Arg, **kw: Any) -> None:
    CASES.append(Case(id, fn, list(args), **kw))


# linear
case("linear_2d", lambda L, F, x, w, b: F.linear(x, w, b), R(4, 5), R(3, 5), R(3), check=True)
case("linear_2d_nobias", lambda L, F, x, w: F.linear(x, w), R(4, 5), R(3, 5))
case("linear_3d", lambda L, F, x, w, b: F.linear(x, w, b), R(2, 4, 5), R(3, 5), R(3))
case("linear_3d_nobias", lambda L, F, x, w: F.linear(x, w), R(2, 4, 5), R(3, 5))
case("linear_1d", lambda L, F, x, w, b: F.linear(x, w, b), R(5), R(3, 5), R(3))
case("linear_1d_nobias", lambda L, F, x, w: F.linear(x, w), R(5), R(3, 5))
case("linear_noncontig", lambda L, F, x, w, b: F.linear(x.transpose(0, 1), w, b),
     R(4, 2, 5), R(3, 5), R(3))
case("bilinear", lambda L, F, a, b, w, bb: F.bilinear(a, b, w, bb), R(3, 4), R(3, 5),
     R(2, 4, 5), R(2))

# activations
_ACTS = {
    "relu": (0.0,), "relu6": (0.0, 6.0), "leaky_relu": (0.0,), "gelu": (), "silu": (),
    "mish": (), "softplus": (), "elu": (0.0,), "selu": (0.0,), "celu": (0.0,),
    "hardtanh": (-1.0, 1.0), "hardsigmoid": (-3.0, 3.0), "hardswish": (-3.0, 3.0),
    "sigmoid": (), "tanh": (), "logsigmoid": (), "softsign": (0.0,), "tanhshrink": (),
    "hardshrink": (-0.5, 0.5), "softshrink": (-0.5, 0.5),
}
_NO_GG = {"hardsigmoid"}  # torch: "derivative for aten::hardsigmoid_backward is not implemented"
for _name, _kinks in _ACTS.items():
    case(_name, lambda L, F, x, n=_name: getattr(F, n)(x), A(4, 6, kinks=_kinks, scale=3.0),
         gradgrad=_name not in _NO_GG, check=_name in ("gelu", "mish", "elu", "logsigmoid"))
case("gelu_tanh", lambda L, F, x: F.gelu(x, approximate="tanh"), R(4, 6, scale=3.0),
     check=True)
case("gelu_wide", lambda L, F, x: F.gelu(x), C(np.linspace(-9.0, 9.0, 73), diff=True))
case("leaky_relu_slope", lambda L, F, x: F.leaky_relu(x, 0.3), A(4, 6))
case("elu_alpha", lambda L, F, x: F.elu(x, alpha=0.5), A(4, 6))
case("celu_alpha", lambda L, F, x: F.celu(x, alpha=2.0), A(4, 6))
case("softplus_beta", lambda L, F, x: F.softplus(x, beta=2.0, threshold=5.0),
     A(4, 6, kinks=(2.5,), scale=3.0))
case("hardtanh_range", lambda L, F, x: F.hardtanh(x, -0.5, 2.0), A(4, 6, kinks=(-0.5, 2.0)))
case("threshold", lambda L, F, x: F.threshold(x, 0.1, 20.0), A(4, 6, kinks=(0.1,)))
case("glu", lambda L, F, x: F.glu(x), R(4, 6), check=True)
case("glu_dim0", lambda L, F, x: F.glu(x, 0), R(4, 3))
case("prelu", lambda L, F, x, w: F.prelu(x, w), A(2, 3, 4), R(3))
case("prelu_shared", lambda L, F, x, w: F.prelu(x, w), A(2, 3, 4), C([0.25], diff=True))
case("softmax", lambda L, F, x: F.softmax(x, 1), R(4, 6))
case("softmax_dtype", lambda L, F, x: F.softmax(x, 0, dtype=L.float64), R(4, 6))
case("softmin", lambda L, F, x: F.softmin(x, -1), R(4, 6))
case("log_softmax", lambda L, F, x: F.log_softmax(x, 0), R(4, 6))
# in place (on a non-leaf): the result's node and the gradient through it
for _name, _call in {
    "relu_inplace": lambda L, F, x: F.relu(x * 1, inplace=True),
    "relu_": lambda L, F, x: F.relu_(x * 1),
    "leaky_relu_inplace": lambda L, F, x: F.leaky_relu(x * 1, 0.2, inplace=True),
    "elu_inplace": lambda L, F, x: F.elu(x * 1, inplace=True),
    "selu_inplace": lambda L, F, x: F.selu(x * 1, inplace=True),
    "celu_inplace": lambda L, F, x: F.celu(x * 1, 0.5, inplace=True),
    "hardtanh_inplace": lambda L, F, x: F.hardtanh(x * 1, inplace=True),
    "relu6_inplace": lambda L, F, x: F.relu6(x * 3, inplace=True),
    "threshold_inplace": lambda L, F, x: F.threshold(x * 1, 0.1, 2.0, inplace=True),
    "hardswish_inplace": lambda L, F, x: F.hardswish(x * 1, inplace=True),
    "hardsigmoid_inplace": lambda L, F, x: F.hardsigmoid(x * 1, inplace=True),
    "silu_inplace": lambda L, F, x: F.silu(x * 1, inplace=True),
    "mish_inplace": lambda L, F, x: F.mish(x * 1, inplace=True),
}.items():
    case(_name, _call, A(4, 6, kinks=(0.0, 0.1, 1.0, -1.0, 2.0, 3.0, -3.0)),
         gradgrad=_name != "hardsigmoid_inplace")

# losses
for _red in ("mean", "sum", "none"):
    case(f"mse_{_red}", lambda L, F, x, y, r=_red: F.mse_loss(x, y, reduction=r),
         R(4, 6), R(4, 6))
    case(f"l1_{_red}", lambda L, F, x, y, r=_red: F.l1_loss(x, y, reduction=r), R(4, 6), R(4, 6))
    case(f"smooth_l1_{_red}",
         lambda L, F, x, y, r=_red: F.smooth_l1_loss(x, y, reduction=r, beta=0.5),
         R(4, 6), R(4, 6))
    case(f"huber_{_red}", lambda L, F, x, y, r=_red: F.huber_loss(x, y, reduction=r, delta=0.7),
         R(4, 6), R(4, 6))
    case(f"cross_entropy_{_red}",
         lambda L, F, x, y, r=_red: F.cross_entropy(x, y, reduction=r),
         R(4, 6), I([1, 0, 5, -100]))
    case(f"cross_entropy_weight_{_red}",
         lambda L, F, x, y, w, r=_red: F.cross_entropy(x, y, weight=w, reduction=r),
         R(4, 6), I([1, 0, 5, 2]), U(6, diff=False))
    case(f"cross_entropy_smooth_{_red}",
         lambda L, F, x, y, r=_red: F.cross_entropy(x, y, reduction=r, label_smoothing=0.1),
         R(4, 6), I([1, 0, 5, -100]))
    case(f"cross_entropy_smooth_weight_{_red}",
         lambda L, F, x, y, w, r=_red: F.cross_entropy(x, y, weight=w, reduction=r,
                                                       label_smoothing=0.2),
         R(4, 6), I([1, 0, 5, 2]), U(6, diff=False))
    case(f"cross_entropy_probs_{_red}",
         lambda L, F, x, y, r=_red: F.cross_entropy(x, y.softmax(1), reduction=r),
         R(4, 6), R(4, 6))
    case(f"cross_entropy_probs_weight_smooth_{_red}",
         lambda L, F, x, y, w, r=_red: F.cross_entropy(x, y.softmax(1), weight=w, reduction=r,
                                                       label_smoothing=0.3),
         R(4, 6), R(4, 6, diff=False), U(6, diff=False))
    case(f"cross_entropy_4d_{_red}",
         lambda L, F, x, y, r=_red: F.cross_entropy(x, y, reduction=r),
         R(2, 3, 4, 5), RI(2, 4, 5, hi=3))
    case(f"cross_entropy_3d_{_red}",
         lambda L, F, x, y, r=_red: F.cross_entropy(x, y, reduction=r), R(2, 3, 4), RI(2, 4, hi=3))
    case(f"cross_entropy_5d_{_red}",
         lambda L, F, x, y, r=_red: F.cross_entropy(x, y, reduction=r),
         R(2, 3, 2, 2, 2), RI(2, 2, 2, 2, hi=3))
    case(f"nll_{_red}", lambda L, F, x, y, r=_red: F.nll_loss(x, y, reduction=r),
         R(4, 6), I([1, 0, 5, 2]))
    case(f"nll_weight_ignore_{_red}",
         lambda L, F, x, y, w, r=_red: F.nll_loss(x, y, weight=w, ignore_index=0, reduction=r),
         R(4, 6), I([1, 0, 5, 2]), U(6, diff=False))
    case(f"bce_{_red}", lambda L, F, x, y, r=_red: F.binary_cross_entropy(x, y, reduction=r),
         U(4, 6), U(4, 6))
    case(f"bce_weight_{_red}",
         lambda L, F, x, y, w, r=_red: F.binary_cross_entropy(x, y, weight=w, reduction=r),
         U(4, 6), U(4, 6), U(6, diff=False))
    case(f"bce_logits_{_red}",
         lambda L, F, x, y, r=_red: F.binary_cross_entropy_with_logits(x, y, reduction=r),
         R(4, 6, scale=3.0), U(4, 6))
    case(f"bce_logits_weights_{_red}",
         lambda L, F, x, y, w, pw, r=_red: F.binary_cross_entropy_with_logits(
             x, y, weight=w, pos_weight=pw, reduction=r),
         R(4, 6, scale=3.0), U(4, 6), U(6, diff=False), U(6, lo=0.5, hi=3.0, diff=False))
    case(f"kl_div_{_red}", lambda L, F, x, y, r=_red: F.kl_div(x, y, reduction=r),
         R(4, 6), U(4, 6))
    case(f"kl_div_log_target_{_red}",
         lambda L, F, x, y, r=_red: F.kl_div(x, y, reduction=r, log_target=True), R(4, 6), R(4, 6))
    case(f"soft_margin_{_red}", lambda L, F, x, y, r=_red: F.soft_margin_loss(x, y, reduction=r),
         R(4, 6), C(np.sign(np.arange(24).reshape(4, 6) % 3 - 0.5)))
case("cross_entropy_1d", lambda L, F, x, y: F.cross_entropy(x, y), R(6), I(3))
case("nll_1d", lambda L, F, x, y: F.nll_loss(x, y), R(6), I(3))
case("kl_div_batchmean", lambda L, F, x, y: F.kl_div(x, y, reduction="batchmean"),
     R(4, 6), U(4, 6))
case("kl_div_target_grad", lambda L, F, x, y: F.kl_div(x, y, reduction="sum"),
     R(4, 6), U(4, 6), gradgrad=False)
case("mse_broadcast", lambda L, F, x, y: F.mse_loss(x, y), R(4, 1), R(4))
case("mse_weight", lambda L, F, x, y, w: F.mse_loss(x, y, weight=w), R(4, 6), R(4, 6),
     U(4, 6, diff=False))
case("l1_weight_sum", lambda L, F, x, y, w: F.l1_loss(x, y, weight=w, reduction="sum"),
     R(4, 6), R(4, 6), U(4, 6, diff=False))
case("huber_weight", lambda L, F, x, y, w: F.huber_loss(x, y, weight=w), R(4, 6), R(4, 6),
     U(4, 6, diff=False))
case("smooth_l1_beta0", lambda L, F, x, y: F.smooth_l1_loss(x, y, beta=0.0), R(4, 6), R(4, 6))
case("cosine_similarity", lambda L, F, x, y: F.cosine_similarity(x, y), R(4, 6), R(4, 6))
case("cosine_similarity_dim", lambda L, F, x, y: F.cosine_similarity(x, y, dim=-1),
     R(2, 3, 6), R(1, 3, 6))
case("pairwise_distance", lambda L, F, x, y: F.pairwise_distance(x, y), R(4, 6), R(4, 6))
case("cosine_embedding", lambda L, F, x, y, t: F.cosine_embedding_loss(x, y, t, margin=0.1),
     R(4, 6), R(4, 6), I([1, -1, 1, -1]))
case("margin_ranking", lambda L, F, x, y, t: F.margin_ranking_loss(x, y, t, margin=0.1),
     R(6), R(6), C([1.0, -1, 1, -1, 1, -1]))
case("hinge_embedding", lambda L, F, x, t: F.hinge_embedding_loss(x, t),
     A(4, 6, kinks=(0.0, 1.0)), C(np.where(np.arange(24) % 2, 1.0, -1.0).reshape(4, 6)))
case("triplet_margin", lambda L, F, a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
     R(4, 6), R(4, 6), R(4, 6))

# normalization
case("layer_norm", lambda L, F, x, w, b: F.layer_norm(x, (6,), w, b), R(4, 6), R(6), R(6),
     check=True)
case("layer_norm_2d_shape", lambda L, F, x, w, b: F.layer_norm(x, (3, 6), w, b, eps=1e-3),
     R(2, 3, 6), R(3, 6), R(3, 6))
case("layer_norm_plain", lambda L, F, x: F.layer_norm(x, [6]), R(4, 6))
case("layer_norm_weight_only", lambda L, F, x, w: F.layer_norm(x, (6,), w), R(4, 6), R(6))
# (torch's own double backward of this one raises: its undefined weight reaches a mul)
case("layer_norm_bias_only_2d_shape",
     lambda L, F, x, b: F.layer_norm(x, (3, 6), None, b), R(2, 3, 6), R(3, 6), gradgrad=False)
case("layer_norm_noncontig", lambda L, F, x, w, b: F.layer_norm(x.transpose(0, 1), (6,), w, b),
     R(4, 2, 6), R(6), R(6))
case("rms_norm", lambda L, F, x, w: F.rms_norm(x, (6,), w), R(4, 6), R(6))
case("rms_norm_plain", lambda L, F, x: F.rms_norm(x, [2, 6], eps=1e-3), R(3, 2, 6))
case("batch_norm_train",
     lambda L, F, x, w, b: F.batch_norm(x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype),
                                        w, b, training=True), R(4, 3, 5), R(3), R(3), check=True)
case("batch_norm_eval",
     lambda L, F, x, w, b: F.batch_norm(x, L.zeros(3, dtype=x.dtype) + 0.3,
                                        L.ones(3, dtype=x.dtype) * 2, w, b), R(4, 3, 5), R(3),
     R(3))
case("batch_norm_nostats", lambda L, F, x: F.batch_norm(x, None, None, training=True),
     R(4, 3, 2, 2))
case("batch_norm_2d", lambda L, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     R(5, 3), R(3), R(3))
case("group_norm", lambda L, F, x, w, b: F.group_norm(x, 2, w, b), R(3, 4, 5), R(4), R(4),
     check=True)
case("group_norm_4d", lambda L, F, x: F.group_norm(x, 3), R(2, 6, 2, 3))
case("instance_norm", lambda L, F, x: F.instance_norm(x), R(3, 2, 5), gradgrad=False)
case("normalize", lambda L, F, x: F.normalize(x), R(4, 6))
case("normalize_p1", lambda L, F, x: F.normalize(x, p=1.0, dim=0), R(4, 6))

# embedding and padding
case("embedding", lambda L, F, w, i: F.embedding(i, w), R(10, 3), I([[1, 2, 1], [0, 9, 2]]),
     check=True)
case("embedding_padding_idx", lambda L, F, w, i: F.embedding(i, w, padding_idx=1), R(10, 3),
     I([[1, 2, 1], [0, 9, 2]]))
case("embedding_negative_padding_idx", lambda L, F, w, i: F.embedding(i, w, padding_idx=-1),
     R(10, 3), I([[1, 9, 1], [0, 9, 2]]))
case("embedding_scale_grad", lambda L, F, w, i: F.embedding(i, w, scale_grad_by_freq=True),
     R(10, 3), I([[1, 2, 1], [0, 9, 1]]))
for _mode in ("constant", "reflect", "replicate", "circular"):
    case(f"pad_{_mode}_2d", lambda L, F, x, m=_mode: F.pad(x, (1, 2, 2, 1), mode=m),
         R(2, 3, 4, 5), check=_mode != "circular")
    case(f"pad_{_mode}_1d", lambda L, F, x, m=_mode: F.pad(x, (1, 2), mode=m), R(2, 3, 4))
    case(f"pad_{_mode}_negative", lambda L, F, x, m=_mode: F.pad(x, (-1, 2), mode=m),
         R(2, 3, 4))
    case(f"pad_{_mode}_3d", lambda L, F, x, m=_mode: F.pad(x, (1, 0, 0, 1, 1, 1), mode=m),
         R(1, 2, 3, 3, 4))
case("pad_constant_value", lambda L, F, x: F.pad(x, (2, 1, 0, -1, 1, 1), value=1.5),
     R(2, 3, 4))

# convolution
case("conv2d", lambda L, F, x, w, b: F.conv2d(x, w, b, padding=1), R(2, 3, 6, 6),
     R(4, 3, 3, 3), R(4))
case("conv2d_stride_dilation",
     lambda L, F, x, w, b: F.conv2d(x, w, b, stride=2, padding=(1, 0), dilation=(1, 2)),
     R(2, 3, 7, 8), R(4, 3, 3, 2), R(4))
case("conv2d_groups", lambda L, F, x, w, b: F.conv2d(x, w, b, groups=2), R(2, 4, 5, 6),
     R(6, 2, 3, 3), R(6))
case("conv2d_same_even", lambda L, F, x, w: F.conv2d(x, w, padding="same"), R(2, 3, 6, 6),
     R(4, 3, 4, 4))
case("conv2d_same_dilated", lambda L, F, x, w: F.conv2d(x, w, padding="same", dilation=2),
     R(2, 3, 6, 6), R(4, 3, 3, 3))
case("conv2d_valid_unbatched", lambda L, F, x, w: F.conv2d(x, w, padding="valid"),
     R(3, 6, 6), R(4, 3, 3, 3))
case("conv1d", lambda L, F, x, w, b: F.conv1d(x, w, b, padding=2, stride=2), R(2, 3, 9),
     R(4, 3, 3), R(4))
case("conv3d", lambda L, F, x, w, b: F.conv3d(x, w, b, padding=1), R(1, 2, 4, 4, 3),
     R(3, 2, 3, 3, 3), R(3))
case("conv_transpose2d",
     lambda L, F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
     R(2, 3, 4, 5), R(3, 4, 3, 3), R(4))
case("conv_transpose2d_groups_dilation",
     lambda L, F, x, w, b: F.conv_transpose2d(x, w, b, groups=2, dilation=2),
     R(2, 4, 4, 5), R(4, 3, 3, 3), R(6))
case("conv_transpose1d", lambda L, F, x, w: F.conv_transpose1d(x, w, stride=3), R(2, 3, 4),
     R(3, 2, 3))
case("unfold", lambda L, F, x: F.unfold(x, 2, padding=1, stride=2), R(2, 3, 5, 6), check=True)
case("fold", lambda L, F, x: F.fold(x, (4, 6), 2, padding=1, stride=2), R(2, 12, 12),
     check=True)

# pooling
case("max_pool2d", lambda L, F, x: F.max_pool2d(x, 2), R(2, 3, 6, 6), check=True)
case("max_pool2d_overlap", lambda L, F, x: F.max_pool2d(x, 3, stride=1, padding=1),
     R(2, 3, 6, 6), check=True)
case("max_pool2d_ceil", lambda L, F, x: F.max_pool2d(x, 3, stride=2, ceil_mode=True),
     R(2, 3, 8, 7))
case("max_pool2d_dilation", lambda L, F, x: F.max_pool2d(x, 2, stride=1, dilation=2),
     R(2, 3, 6, 6))
case("max_pool2d_indices", lambda L, F, x: F.max_pool2d(x, (2, 3), (2, 1), (1, 1),
                                                        return_indices=True), R(2, 3, 6, 7))
case("max_pool2d_unbatched", lambda L, F, x: F.max_pool2d(x, 2), R(3, 6, 6))
case("max_pool1d", lambda L, F, x: F.max_pool1d(x, 2), R(2, 3, 8))
case("max_pool1d_indices", lambda L, F, x: F.max_pool1d(x, 3, 2, 1, return_indices=True),
     R(2, 3, 8))
case("avg_pool2d", lambda L, F, x: F.avg_pool2d(x, 2), R(2, 3, 6, 6), check=True)
case("avg_pool2d_pad", lambda L, F, x: F.avg_pool2d(x, 3, stride=2, padding=1), R(2, 3, 7, 6))
case("avg_pool2d_exclude_pad",
     lambda L, F, x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
     R(2, 3, 7, 6), check=True)
case("avg_pool2d_ceil", lambda L, F, x: F.avg_pool2d(x, 3, stride=2, ceil_mode=True),
     R(2, 3, 8, 7))
case("avg_pool2d_ceil_pad",
     lambda L, F, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), R(2, 3, 8, 7))
case("avg_pool2d_divisor", lambda L, F, x: F.avg_pool2d(x, 2, divisor_override=3),
     R(2, 3, 6, 6))
case("avg_pool1d", lambda L, F, x: F.avg_pool1d(x, 3), R(2, 3, 8))
case("adaptive_avg_pool2d", lambda L, F, x: F.adaptive_avg_pool2d(x, (3, 4)), R(2, 3, 7, 9),
     check=True)
case("adaptive_avg_pool2d_1", lambda L, F, x: F.adaptive_avg_pool2d(x, 1), R(2, 3, 7, 9))
case("adaptive_avg_pool2d_none", lambda L, F, x: F.adaptive_avg_pool2d(x, (None, 2)),
     R(2, 3, 5, 9))
case("adaptive_avg_pool1d", lambda L, F, x: F.adaptive_avg_pool1d(x, 3), R(2, 3, 7))
case("adaptive_max_pool2d", lambda L, F, x: F.adaptive_max_pool2d(x, (3, 4)), R(2, 3, 7, 9),
     check=True)
case("adaptive_max_pool2d_indices",
     lambda L, F, x: F.adaptive_max_pool2d(x, 3, return_indices=True), R(2, 3, 7, 8))
case("adaptive_max_pool1d", lambda L, F, x: F.adaptive_max_pool1d(x, 4), R(2, 3, 9))
case("ctc_loss", lambda L, F, x: F.ctc_loss(
    x.log_softmax(2), L.tensor([[1, 2, 2], [3, 1, 0]]), L.tensor([6, 5]), L.tensor([3, 2])),
    R(6, 2, 4), gradgrad=False)
case("adaptive_max_pool3d", lambda L, F, x: F.adaptive_max_pool3d(x, (3, 2, 4)),
     R(2, 3, 7, 5, 6), check=True)
case("adaptive_max_pool3d_indices", lambda L, F, x: F.adaptive_max_pool3d(
    x, (2, None, 3), return_indices=True), R(3, 4, 5, 6))
case("adaptive_max_pool3d_overlapping", lambda L, F, x: F.adaptive_max_pool3d(
    x, (4, 5, 6), return_indices=True), R(2, 1, 3, 3, 3))
case("adaptive_max_pool3d_empty_output", lambda L, F, x: F.adaptive_max_pool3d(
    x, (0, 2, 2), return_indices=True), R(2, 3, 4, 5, 6, diff=False))

# interpolation, unpooling, pixel shuffle, 3-D pooling, LP pooling, local response norm
for _mode, _shape in (("nearest", (1, 2, 3, 4)), ("nearest-exact", (1, 2, 3, 4)),
                      ("bilinear", (1, 2, 3, 4)), ("bicubic", (1, 2, 4, 5)),
                      ("area", (1, 2, 6, 7)), ("linear", (2, 2, 5)),
                      ("trilinear", (1, 2, 3, 2, 4)), ("nearest", (2, 2, 5))):
    _nd = len(_shape) - 2
    case(f"interpolate_{_mode}_{_nd}d_size",
         lambda L, F, x, m=_mode, nd=_nd: F.interpolate(x, size=(7, 5, 3)[:nd], mode=m),
         R(*_shape))
    case(f"interpolate_{_mode}_{_nd}d_scale",
         lambda L, F, x, m=_mode: F.interpolate(x, scale_factor=1.7, mode=m), R(*_shape))
case("interpolate_nearest_3d", lambda L, F, x: F.interpolate(x, size=(2, 5, 3)),
     R(1, 2, 3, 2, 4))
case("interpolate_nearest_exact_1d", lambda L, F, x: F.interpolate(x, scale_factor=0.7,
                                                                   mode="nearest-exact"),
     R(2, 2, 7))
case("interpolate_nearest_exact_3d", lambda L, F, x: F.interpolate(x, scale_factor=1.5,
                                                                   mode="nearest-exact"),
     R(1, 2, 3, 2, 4))
case("interpolate_bilinear_align", lambda L, F, x: F.interpolate(
    x, size=(5, 7), mode="bilinear", align_corners=True), R(1, 2, 3, 4), check=True)
case("interpolate_bicubic_align_down", lambda L, F, x: F.interpolate(
    x, size=(3, 2), mode="bicubic", align_corners=True), R(1, 2, 5, 6))
case("interpolate_bilinear_recompute", lambda L, F, x: F.interpolate(
    x, scale_factor=(0.6, 2.5), mode="bilinear", recompute_scale_factor=True), R(1, 2, 5, 4))
case("interpolate_nearest_down", lambda L, F, x: F.interpolate(x, scale_factor=0.5),
     R(1, 2, 6, 7), check=True)
case("pixel_shuffle", lambda L, F, x: F.pixel_shuffle(x, 2), R(2, 8, 2, 3), check=True)
case("pixel_unshuffle", lambda L, F, x: F.pixel_unshuffle(x, 2), R(2, 2, 4, 6))
case("max_unpool2d", lambda L, F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True),
                                                     2), R(2, 3, 4, 6))
case("max_unpool2d_size", lambda L, F, x: F.max_unpool2d(
    *F.max_pool2d(x, 2, return_indices=True), 2, output_size=(5, 7)), R(2, 3, 5, 7))
case("max_unpool1d", lambda L, F, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True),
                                                     2), R(2, 3, 8))
case("max_pool3d", lambda L, F, x: F.max_pool3d(x, 2, stride=(1, 2, 2), padding=(1, 0, 1)),
     R(1, 2, 4, 4, 5))
case("max_pool3d_indices", lambda L, F, x: F.max_pool3d(x, 2, return_indices=True),
     R(1, 2, 4, 4, 4))
case("max_unpool3d", lambda L, F, x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True),
                                                     2), R(1, 2, 4, 4, 4))
case("avg_pool3d", lambda L, F, x: F.avg_pool3d(x, 2, padding=1, count_include_pad=False),
     R(1, 2, 3, 4, 5))
case("avg_pool3d_divisor", lambda L, F, x: F.avg_pool3d(x, 2, divisor_override=3),
     R(2, 4, 4, 4))
case("adaptive_avg_pool3d", lambda L, F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
     R(1, 2, 5, 4, 3))
case("lp_pool2d", lambda L, F, x: F.lp_pool2d(x, 2, 2), U(1, 2, 4, 6, lo=0.2, hi=2.0))
case("lp_pool1d", lambda L, F, x: F.lp_pool1d(x, 3, 2, stride=1), U(1, 2, 6, lo=0.2, hi=2.0))
case("local_response_norm", lambda L, F, x: F.local_response_norm(x, 3), R(2, 5, 4))
case("local_response_norm_4d", lambda L, F, x: F.local_response_norm(x, 2, k=2.0),
     R(1, 4, 3, 3))
case("rrelu_eval", lambda L, F, x: F.rrelu(x), A(4, 6))
case("poisson_nll", lambda L, F, x, t: F.poisson_nll_loss(x, t), R(4, 6), U(4, 6))
case("poisson_nll_full", lambda L, F, x, t: F.poisson_nll_loss(
    x, t, log_input=False, full=True), U(4, 6), U(4, 6, lo=0.5, hi=3.0, diff=False))
case("gaussian_nll", lambda L, F, x, t, v: F.gaussian_nll_loss(x, t, v), R(4, 6), R(4, 6),
     U(4, 6))
case("gaussian_nll_full_sum", lambda L, F, x, t, v: F.gaussian_nll_loss(
    x, t, v, full=True, reduction="sum"), R(4, 6), R(4, 6), U(4, diff=False))
case("multilabel_soft_margin", lambda L, F, x, t: F.multilabel_soft_margin_loss(x, t),
     R(4, 6), U(4, 6, diff=False))
case("triplet_with_distance", lambda L, F, a, p, n: F.triplet_margin_with_distance_loss(
    a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), swap=True), R(4, 6),
    R(4, 6), R(4, 6))
for _red in ("mean", "none"):
    case(f"multi_margin_{_red}", lambda L, F, x, y, r=_red: F.multi_margin_loss(
        x, y, reduction=r), R(4, 5), I([1, 0, 4, 2]), gradgrad=False)
    case(f"multi_margin_p2_weight_{_red}", lambda L, F, x, y, w, r=_red: F.multi_margin_loss(
        x, y, p=2, margin=0.5, weight=w, reduction=r), R(4, 5), I([1, 0, 4, 2]),
        U(5, diff=False), gradgrad=False, check=True)
    case(f"multilabel_margin_{_red}", lambda L, F, x, y, r=_red: F.multilabel_margin_loss(
        x, y, reduction=r), R(3, 5), I([[1, 2, -1, 0, 0], [4, 0, 3, 1, 2], [-1, 1, 1, 1, 1]]),
        gradgrad=False)
case("multi_margin_1d", lambda L, F, x, y: F.multi_margin_loss(x, y), R(5), I(3),
     gradgrad=False)
for _mode in ("sum", "mean", "max"):
    case(f"embedding_bag_{_mode}", lambda L, F, w, i, o, m=_mode: F.embedding_bag(
        i, w, o, mode=m), R(10, 3), I([1, 2, 4, 5, 4, 3, 2, 9]), I([0, 3, 3, 6]))
    case(f"embedding_bag_2d_{_mode}", lambda L, F, w, i, m=_mode: F.embedding_bag(
        i, w, mode=m, padding_idx=2), R(10, 3), I([[1, 2, 4], [2, 2, 2], [9, 9, 0]]))
case("embedding_bag_weights", lambda L, F, w, i, o, s: F.embedding_bag(
    i, w, o, mode="sum", per_sample_weights=s, include_last_offset=True), R(10, 3),
    I([1, 2, 4, 5, 4, 3]), I([0, 2, 5, 6]), R(6), gradgrad=False)

# attention (torch has no double backward for its fused CPU kernel: checked with gradgradcheck)
_SDPA = dict(gradgrad=False)
case("sdpa", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     R(2, 3, 5, 4), R(2, 3, 6, 4), R(2, 3, 6, 4), **_SDPA)
case("sdpa_causal", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                                          is_causal=True),
     R(2, 3, 5, 4), R(2, 3, 6, 4), R(2, 3, 6, 4), **_SDPA)
case("sdpa_bool_mask", lambda L, F, q, k, v, m: F.scaled_dot_product_attention(
    q, k, v, attn_mask=m), R(2, 3, 5, 4), R(2, 3, 6, 4), R(2, 3, 6, 4), M(5, 6), **_SDPA)
case("sdpa_masked_row", lambda L, F, q, k, v, m: F.scaled_dot_product_attention(
    q, k, v, attn_mask=m, scale=0.7), R(1, 2, 3, 4), R(1, 2, 5, 4), R(1, 2, 5, 4),
    Arg(lambda rng: np.array([[True] * 5, [False] * 5, [True, False] * 2 + [True]]), False,
        False), gradgrad=False)
case("sdpa_float_mask", lambda L, F, q, k, v, m: F.scaled_dot_product_attention(
    q, k, v, attn_mask=m), R(2, 3, 5, 4), R(2, 3, 6, 4), R(2, 3, 6, 4), R(5, 6, diff=False),
    **_SDPA)
case("sdpa_causal_and_mask", lambda L, F, q, k, v, m: F.scaled_dot_product_attention(
    q, k, v, attn_mask=m, is_causal=True), R(2, 3, 5, 4), R(2, 3, 5, 4), R(2, 3, 5, 4),
    M(2, 1, 5, 5, p=0.8), gradgrad=False)
case("sdpa_gqa", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                                       enable_gqa=True),
     R(2, 4, 5, 4), R(2, 2, 6, 4), R(2, 2, 6, 4), **_SDPA)
case("sdpa_transposed_inputs", lambda L, F, q, k, v: F.scaled_dot_product_attention(
    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True),
     R(2, 5, 3, 4), R(2, 5, 3, 4), R(2, 5, 3, 4), **_SDPA)
case("sdpa_query_grad_only", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     R(2, 3, 5, 4), R(2, 3, 6, 4, diff=False), R(2, 3, 6, 4, diff=False), **_SDPA)
case("sdpa_value_grad_only", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     R(2, 3, 5, 4, diff=False), R(2, 3, 6, 4, diff=False), R(2, 3, 6, 4), **_SDPA)
case("sdpa_3d_math", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
     R(2, 5, 4), R(2, 6, 4), R(2, 6, 4))
case("sdpa_value_dim", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     R(2, 3, 5, 4), R(2, 3, 6, 4), R(2, 3, 6, 7))
case("sdpa_negative_scale", lambda L, F, q, k, v: F.scaled_dot_product_attention(
    q, k, v, scale=-0.4), R(2, 5, 4), R(2, 6, 4), R(2, 6, 4))
case("sdpa_negative_scale_fused", lambda L, F, q, k, v: F.scaled_dot_product_attention(
    q, k, v, scale=-0.4), R(1, 2, 5, 4), R(1, 2, 6, 4), R(1, 2, 6, 4), gradgrad=False)

# small inputs for the library's own gradcheck / gradgradcheck of the big fused entries
_Q, _KV = (1, 2, 3, 2), (1, 2, 4, 2)
case("small_sdpa", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     R(*_Q), R(*_KV), R(*_KV), check=True, **_SDPA)
case("small_sdpa_causal_mask", lambda L, F, q, k, v, m: F.scaled_dot_product_attention(
    q, k, v, attn_mask=m, is_causal=True), R(*_Q), R(*_KV), R(*_KV), M(3, 4, p=0.8),
    check=True, **_SDPA)
case("small_sdpa_gqa", lambda L, F, q, k, v: F.scaled_dot_product_attention(
    q, k, v, attn_mask=L.tensor([[0.5, -1.0, 0.0, 2.0]], dtype=q.dtype), enable_gqa=True),
    R(1, 4, 2, 2), R(*_KV), R(*_KV), check=True, **_SDPA)
case("small_sdpa_math", lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     R(2, 3, 2), R(2, 4, 2), R(2, 4, 2), check=True)
case("small_conv2d", lambda L, F, x, w, b: F.conv2d(x, w, b, padding=1, stride=(2, 1)),
     R(1, 2, 4, 3), R(2, 2, 2, 2), R(2), check=True)
case("small_conv2d_groups", lambda L, F, x, w: F.conv2d(x, w, groups=2, dilation=(1, 2)),
     R(1, 4, 3, 4), R(4, 2, 2, 2), check=True)
case("small_conv_transpose2d", lambda L, F, x, w, b: F.conv_transpose2d(
    x, w, b, stride=2, padding=1, output_padding=1, groups=2), R(1, 2, 2, 3), R(2, 1, 2, 2),
    R(2), check=True)
case("small_conv1d", lambda L, F, x, w: F.conv1d(x, w, stride=2), R(1, 2, 5), R(3, 2, 2),
     check=True)

CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS), "duplicate case ids"

F64 = {"rtol": 1e-9, "atol": 1e-11}


# --------------------------------------------------------------------------------------------
# Running a case on both libraries
# --------------------------------------------------------------------------------------------


def _flat(out: Any) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _is_float(t: Any) -> bool:
    return dtype_name(t.dtype).startswith(("float", "double"))


def _run(c: Case, L: Any, dtype: str, requires_grad: bool = True) -> tuple:
    inputs = c.inputs(L, dtype, requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = c.fn(L, L.nn.functional, *inputs)
    return inputs, _flat(out)


def _node(t: Any) -> Any:
    return None if t.grad_fn is None else t.grad_fn.name()


def _grads(c: Case, L: Any, inputs: list, outs: list, create_graph: bool = False) -> tuple:
    diff = [t for t in inputs if getattr(t, "requires_grad", False)]
    touts = [o for o in outs if _is_float(o) and o.requires_grad]
    rng = np.random.default_rng(zlib.crc32(c.id.encode()) + 1)
    cts = [L.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype_name(o.dtype)))
           for o in touts]
    grads = L.autograd.grad(touts, diff, cts, allow_unused=True, create_graph=create_graph)
    return diff, grads


def _compare_outputs(a: list, b: list, rtol: float, atol: float) -> None:
    assert len(a) == len(b)
    for ta, tb in zip(a, b, strict=True):
        assert dtype_name(ta.dtype) == dtype_name(tb.dtype)
        assert tuple(ta.shape) == tuple(tb.shape)
        assert_values(to_numpy(ta), to_numpy(tb), rtol=rtol, atol=atol)


@pytest.mark.parametrize("c", CASES, ids=CASE_IDS)
def test_forward_and_gradients_float64(c: Case, lib: Any) -> None:
    ti, to = _run(c, torch, "float64")
    li, lo = _run(c, lib, "float64")
    _compare_outputs(to, lo, **F64)
    assert [_node(t) for t in lo] == [_node(t) for t in to], "grad_fn differs"
    assert [t.requires_grad for t in lo] == [t.requires_grad for t in to]
    if not c.grad or not any(t.requires_grad for t in to):
        return
    _, tg = _grads(c, torch, ti, to)
    _, lg = _grads(c, lib, li, lo)
    for a, b in zip(tg, lg, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert dtype_name(a.dtype) == dtype_name(b.dtype)
            assert_values(to_numpy(a), to_numpy(b), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("c", [c for c in CASES if c.f32], ids=[c.id for c in CASES if c.f32])
def test_float32(c: Case, lib: Any) -> None:
    ti, to = _run(c, torch, "float32")
    li, lo = _run(c, lib, "float32")
    scale = max([float(np.abs(to_numpy(t)).max()) for t in to if _is_float(t) and t.numel()]
                + [1.0])
    _compare_outputs(to, lo, rtol=c.f32_tol, atol=c.f32_tol * scale)  # dtypes too
    if not c.grad or not any(t.requires_grad for t in to):
        return
    _, tg = _grads(c, torch, ti, to)
    _, lg = _grads(c, lib, li, lo)
    for a, b in zip(tg, lg, strict=True):
        if a is not None:
            assert dtype_name(b.dtype) == dtype_name(a.dtype)
            gscale = max(float(np.abs(to_numpy(a)).max()), 1.0)
            assert_values(to_numpy(a), to_numpy(b), rtol=c.f32_tol * 10,
                          atol=c.f32_tol * 10 * gscale)


GG = [c for c in CASES if c.grad and c.gradgrad]


@pytest.mark.parametrize("c", GG, ids=[c.id for c in GG])
def test_second_order(c: Case, lib: Any) -> None:
    """grad of <first-order grads, v> matches torch (None counted as zeros)."""

    def second(L: Any) -> list:
        inputs, outs = _run(c, L, "float64")
        if not any(o.requires_grad for o in outs):
            return []
        diff, grads = _grads(c, L, inputs, outs, create_graph=True)
        rng = np.random.default_rng(7)
        total = None
        for g in grads:
            if g is None or not g.requires_grad:
                continue
            v = L.tensor(rng.standard_normal(tuple(g.shape)))
            term = (g * v).sum()
            total = term if total is None else total + term
        if total is None:
            return [None] * len(diff)
        out = L.autograd.grad(total, diff, allow_unused=True)
        return [None if o is None else to_numpy(o) for o in out]

    expected, actual = second(torch), second(lib)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual, strict=True):
        e = np.zeros(1) if e is None else e
        a = np.zeros(1) if a is None else a
        e, a = np.broadcast_arrays(e, a)
        assert_values(e, a, rtol=1e-7, atol=1e-9)


CHECKED = [c for c in CASES if c.check]


@pytest.mark.parametrize("c", CHECKED, ids=[c.id for c in CHECKED])
def test_gradcheck_and_gradgradcheck(c: Case, lib: Any, lib_name: str) -> None:
    inputs = c.inputs(lib, "float64")
    diff_pos = [i for i, t in enumerate(inputs) if getattr(t, "requires_grad", False)]

    def fn(*diff: Any) -> Any:
        args = list(inputs)
        for i, t in zip(diff_pos, diff, strict=True):
            args[i] = t
        out = _flat(c.fn(lib, lib.nn.functional, *args))
        return tuple(o for o in out if _is_float(o))

    diff = tuple(inputs[i] for i in diff_pos)
    assert lib.autograd.gradcheck(fn, diff, eps=1e-6, atol=1e-5, rtol=1e-4)
    if c.gradgrad or lib_name == "tapegrad":  # (torch's fused attention has no double backward)
        assert lib.autograd.gradgradcheck(fn, diff, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_every_nn_entry_is_exercised(lib_name: str) -> None:
    """Each registry entry of the nn families (ops/nn_ops.py lists them) is reached (forward or
    create_graph backward) by some case above."""
    if lib_name != "tapegrad":
        pytest.skip("coverage of tapegrad's registry")
    import tapegrad
    from tapegrad.ops import nn_ops
    from tapegrad.ops._registry import REGISTRY

    seen: set = set()

    def walk(tensors: list) -> None:
        stack = [t.grad_fn for t in tensors if t is not None and t.grad_fn is not None]
        visited: set = set()
        while stack:
            fn = stack.pop()
            if id(fn) in visited:
                continue
            visited.add(id(fn))
            seen.add(type(fn).__name__)
            stack.extend(f for f, _ in fn.next_functions if f is not None)

    for c in CASES:
        inputs, outs = _run(c, tapegrad, "float64")
        walk(outs)
        if c.grad and any(o.requires_grad for o in outs):
            _, grads = _grads(c, tapegrad, inputs, outs, create_graph=True)
            walk([g for g in grads if g is not None])
    missing = sorted(f"{n} ({REGISTRY[n].node})" for n in nn_ops.NAMES
                     if REGISTRY[n].node not in seen)
    assert not missing, f"nn_ops entries no case reaches: {missing}"


# --------------------------------------------------------------------------------------------
# Graph shapes
# --------------------------------------------------------------------------------------------


def _graph(t: Any, depth: int = 3) -> Any:
    def rec(fn: Any, d: int) -> Any:
        if fn is None:
            return None
        if d == 0:
            return fn.name()
        return (fn.name(), tuple(rec(f, d - 1) for f, _ in fn.next_functions))

    return rec(t.grad_fn, depth)


@pytest.mark.parametrize("which", ["linear2d", "linear3d", "linear1d", "linear_nobias",
                                   "linear_noncontig", "ce", "ce_smooth", "ce_3d",
                                   "layer_norm_no_affine", "rms_norm", "conv_nobias",
                                   "sdpa_dropout", "normalize", "dropout", "softmin"])
def test_graph_shape(which: str, compare: Any) -> None:
    def scenario(L: Any) -> Any:
        F = L.nn.functional
        L.manual_seed(0)
        x = L.randn(4, 6, requires_grad=True)
        w = L.randn(3, 6, requires_grad=True)
        b = L.randn(3, requires_grad=True)
        out = {
            "linear2d": lambda: F.linear(x, w, b),
            "linear3d": lambda: F.linear(x.view(2, 2, 6), w, b),
            "linear1d": lambda: F.linear(x[0], w, b),
            "linear_nobias": lambda: F.linear(x, w),
            "linear_noncontig": lambda: F.linear(x.view(2, 2, 6).transpose(0, 1), w, b),
            "ce": lambda: F.cross_entropy(x, L.tensor([1, 0, 5, 2])),
            "ce_smooth": lambda: F.cross_entropy(x, L.tensor([1, 0, 5, 2]), label_smoothing=0.1),
            "ce_3d": lambda: F.cross_entropy(x.view(2, 3, 4), L.tensor([[0, 1, 2, 0]] * 2)),
            "layer_norm_no_affine": lambda: F.layer_norm(x, (6,)),
            "rms_norm": lambda: F.rms_norm(x, (6,), b.repeat(2)),
            "conv_nobias": lambda: F.conv2d(x.view(1, 1, 4, 6), w.view(2, 1, 3, 3)),
            "sdpa_dropout": lambda: F.scaled_dot_product_attention(
                x.view(1, 2, 2, 6), x.view(1, 2, 2, 6), x.view(1, 2, 2, 6), dropout_p=0.5),
            "normalize": lambda: F.normalize(x),
            "dropout": lambda: F.dropout(x, 0.3),
            "softmin": lambda: F.softmin(x, 1),
        }[which]()
        return _graph(out, 2)

    compare(scenario)


def test_cross_entropy_nodes(lib: Any) -> None:
    """Class indices: NllLossBackward0 over LogSoftmaxBackward0 (NllLoss2DBackward0 for 4-D)."""
    F = lib.nn.functional
    x = lib.randn(4, 6, requires_grad=True)
    loss = F.cross_entropy(x, lib.tensor([1, 0, 5, 2]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    x4 = lib.randn(2, 3, 4, 4, requires_grad=True)
    loss = F.cross_entropy(x4, lib.zeros(2, 4, 4, dtype=lib.int64))
    assert loss.grad_fn.name() == "NllLoss2DBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"


def test_no_graph_without_grad(lib: Any) -> None:
    F = lib.nn.functional
    x = lib.randn(2, 3, 6, 6)
    w = lib.randn(4, 3, 3, 3)
    assert F.conv2d(x, w).grad_fn is None
    assert F.layer_norm(x, (6,)).grad_fn is None
    with lib.no_grad():
        assert F.gelu(x.requires_grad_()).grad_fn is None


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

def _ctc_double_backward(L: Any, F: Any) -> Any:
    lp = L.randn(6, 2, 4, requires_grad=True)
    loss = F.ctc_loss(lp.log_softmax(2), L.ones(2, 3, dtype=L.int64), L.tensor([6, 6]),
                      L.tensor([3, 3]))
    (g,) = L.autograd.grad(loss, lp, create_graph=True)
    assert g.grad_fn.next_functions[0][0].name() == "torch::autograd::NotImplemented"
    g.sum().backward()


ERRORS = {
    "ce_float_target": lambda L, F: F.cross_entropy(L.randn(4, 6), L.tensor([1.0, 0, 5, 2])),
    "ce_int32_target": lambda L, F: F.cross_entropy(L.randn(4, 6),
                                                    L.tensor([1, 0, 5, 2], dtype=L.int32)),
    "ce_out_of_bounds": lambda L, F: F.cross_entropy(L.randn(4, 6), L.tensor([1, 0, 6, 2])),
    "ce_negative_target": lambda L, F: F.cross_entropy(L.randn(4, 6), L.tensor([1, -1, 2, 2])),
    "ce_batch_mismatch": lambda L, F: F.cross_entropy(L.randn(4, 6), L.tensor([1, 0, 5])),
    "ce_probs_long": lambda L, F: F.cross_entropy(L.randn(4, 6), L.zeros(4, 6, dtype=L.int64)),
    "ce_2d_target": lambda L, F: F.cross_entropy(L.randn(4, 6), L.zeros(4, 2, dtype=L.int64)),
    "ce_bad_weight": lambda L, F: F.cross_entropy(L.randn(4, 6), L.tensor([1, 0, 5, 2]),
                                                  weight=L.ones(5)),
    "ce_probs_bad_weight": lambda L, F: F.cross_entropy(L.randn(4, 6), L.rand(4, 6),
                                                        weight=L.ones(3)),
    "ce_label_smoothing": lambda L, F: F.cross_entropy(L.randn(4, 6), L.tensor([1, 0, 5, 2]),
                                                       label_smoothing=1.5),
    "ce_probs_ignore_index": lambda L, F: F.cross_entropy(L.randn(4, 6), L.rand(4, 6),
                                                          ignore_index=1),
    "ce_reduction": lambda L, F: F.cross_entropy(L.randn(4, 6), L.tensor([1, 0, 5, 2]),
                                                 reduction="foo"),
    "ce_3d_target_shape": lambda L, F: F.cross_entropy(L.randn(2, 3, 4),
                                                       L.zeros(2, 5, dtype=L.int64)),
    "ce_long_input": lambda L, F: F.cross_entropy(L.ones(4, 6, dtype=L.int64),
                                                  L.tensor([1, 0, 5, 2])),
    "nll_0d": lambda L, F: F.nll_loss(L.tensor(1.0), L.tensor(0)),
    "nll_4d_mismatch": lambda L, F: F.nll_loss(L.randn(2, 3, 4, 4),
                                               L.zeros(2, 4, 3, dtype=L.int64)),
    "nll_4d_out_of_bounds": lambda L, F: F.nll_loss(L.randn(2, 3, 4, 4),
                                                    L.full((2, 4, 4), 3, dtype=L.int64)),
    "nll_1d_target_size": lambda L, F: F.nll_loss(L.randn(6), L.tensor([1, 2])),
    "nll_weight_dtype": lambda L, F: F.nll_loss(L.randn(4, 6), L.tensor([1, 0, 5, 2]),
                                                weight=L.ones(6, dtype=L.float64)),
    "mse_shapes": lambda L, F: F.mse_loss(L.randn(4, 3), L.randn(4)),
    "mse_long": lambda L, F: F.mse_loss(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64)),
    "mse_weight_shape": lambda L, F: F.mse_loss(L.randn(4), L.randn(4), weight=L.ones(3)),
    "smooth_l1_beta": lambda L, F: F.smooth_l1_loss(L.randn(3), L.randn(3), beta=-1.0),
    "huber_delta": lambda L, F: F.huber_loss(L.randn(3), L.randn(3), delta=0.0),
    "bce_range": lambda L, F: F.binary_cross_entropy(L.tensor([1.5]), L.tensor([1.0])),
    "bce_target_range": lambda L, F: F.binary_cross_entropy(L.rand(4),
                                                            L.tensor([2.0, 0, 0, 0])),
    "bce_shape": lambda L, F: F.binary_cross_entropy(L.rand(4, 1), L.rand(4)),
    "bce_dtype": lambda L, F: F.binary_cross_entropy(L.rand(4), L.rand(4, dtype=L.float64)),
    "bce_weight_grad": lambda L, F: F.binary_cross_entropy(
        L.rand(4), L.rand(4), weight=L.rand(4, requires_grad=True)),
    "bce_logits_shape": lambda L, F: F.binary_cross_entropy_with_logits(L.rand(4, 1),
                                                                        L.rand(4)),
    "bce_logits_pos_weight_grad": lambda L, F: F.binary_cross_entropy_with_logits(
        L.randn(4), L.rand(4), pos_weight=L.rand(4, requires_grad=True)),
    "kl_reduction": lambda L, F: F.kl_div(L.randn(3), L.rand(3), reduction="foo"),
    "cosine_shapes": lambda L, F: F.cosine_similarity(L.randn(4, 6), L.randn(3, 6)),
    "layer_norm_shape": lambda L, F: F.layer_norm(L.randn(4, 6), (5,)),
    "layer_norm_weight": lambda L, F: F.layer_norm(L.randn(4, 6), (6,), L.ones(5)),
    "layer_norm_int_shape": lambda L, F: F.layer_norm(L.randn(4, 6), 6),
    "rms_norm_shape": lambda L, F: F.rms_norm(L.randn(4, 3), (4,)),
    "batch_norm_one_value": lambda L, F: F.batch_norm(L.randn(1, 3), L.zeros(3), L.ones(3),
                                                      training=True),
    "batch_norm_running_size": lambda L, F: F.batch_norm(L.randn(2, 3), L.zeros(4), L.ones(4),
                                                         training=True),
    "batch_norm_eval_no_stats": lambda L, F: F.batch_norm(L.randn(2, 3), None, None),
    "batch_norm_weight_size": lambda L, F: F.batch_norm(L.randn(2, 3), L.zeros(3), L.ones(3),
                                                        L.ones(4), training=True),
    "group_norm_groups": lambda L, F: F.group_norm(L.randn(2, 3, 4), 2),
    "embedding_float_indices": lambda L, F: F.embedding(L.tensor([1.0, 2.0]), L.randn(5, 3)),
    "embedding_out_of_range": lambda L, F: F.embedding(L.tensor([5]), L.randn(5, 3)),
    "embedding_padding_idx": lambda L, F: F.embedding(L.tensor([1]), L.randn(5, 3),
                                                      padding_idx=5),
    "one_hot_float": lambda L, F: F.one_hot(L.tensor([1.0])),
    "one_hot_negative": lambda L, F: F.one_hot(L.tensor([-1])),
    "one_hot_too_big": lambda L, F: F.one_hot(L.tensor([3]), 3),
    "one_hot_empty": lambda L, F: F.one_hot(L.tensor([], dtype=L.int64)),
    "pad_odd": lambda L, F: F.pad(L.randn(4, 6), (1,)),
    "pad_too_long": lambda L, F: F.pad(L.randn(4, 6), (1, 1, 1, 1, 1, 1)),
    "pad_too_negative": lambda L, F: F.pad(L.randn(4, 6), (-4, -3)),
    "pad_reflect_too_big": lambda L, F: F.pad(L.randn(1, 2, 3, 3), (3, 3, 0, 0), mode="reflect"),
    "pad_reflect_1d_input": lambda L, F: F.pad(L.randn(3), (1, 1), mode="reflect"),
    "pad_reflect_value": lambda L, F: F.pad(L.randn(1, 3, 3), (1, 1), mode="reflect", value=1.0),
    "pad_circular_wrap": lambda L, F: F.pad(L.randn(1, 3, 3), (4, 0), mode="circular"),
    "pad_mode": lambda L, F: F.pad(L.randn(4, 6), (1, 1), mode="foo"),
    "conv_channels": lambda L, F: F.conv2d(L.randn(2, 3, 8, 8), L.randn(4, 2, 3, 3)),
    "conv_input_dims": lambda L, F: F.conv2d(L.randn(3, 8), L.randn(4, 3, 3, 3)),
    "conv_kernel_too_big": lambda L, F: F.conv2d(L.randn(2, 3, 2, 2), L.randn(4, 3, 3, 3)),
    "conv_same_strided": lambda L, F: F.conv2d(L.randn(2, 3, 8, 8), L.randn(4, 3, 3, 3),
                                               padding="same", stride=2),
    "conv_padding_string": lambda L, F: F.conv2d(L.randn(2, 3, 8, 8), L.randn(4, 3, 3, 3),
                                                 padding="foo"),
    "conv_groups": lambda L, F: F.conv2d(L.randn(2, 4, 8, 8), L.randn(3, 2, 3, 3), groups=2),
    "conv_bias_size": lambda L, F: F.conv2d(L.randn(2, 3, 8, 8), L.randn(4, 3, 3, 3),
                                            L.randn(3)),
    "conv_dtype": lambda L, F: F.conv2d(L.randn(1, 3, 8, 8, dtype=L.float64),
                                        L.randn(4, 3, 3, 3)),
    "conv_bias_dtype": lambda L, F: F.conv2d(L.randn(1, 3, 8, 8), L.randn(4, 3, 3, 3),
                                             L.randn(4, dtype=L.float64)),
    "conv_negative_padding": lambda L, F: F.conv2d(L.randn(1, 3, 8, 8), L.randn(4, 3, 3, 3),
                                                   padding=-1),
    "conv_zero_stride": lambda L, F: F.conv2d(L.randn(1, 3, 8, 8), L.randn(4, 3, 3, 3),
                                              stride=0),
    "conv_stride_length": lambda L, F: F.conv2d(L.randn(1, 3, 8, 8), L.randn(4, 3, 3, 3),
                                                stride=(1, 1, 1)),
    "conv_transpose_output_padding": lambda L, F: F.conv_transpose2d(
        L.randn(1, 3, 8, 8), L.randn(3, 4, 3, 3), output_padding=1),
    "conv_transpose_channels": lambda L, F: F.conv_transpose2d(L.randn(1, 3, 8, 8),
                                                               L.randn(4, 2, 3, 3)),
    "max_pool_pad": lambda L, F: F.max_pool2d(L.randn(2, 3, 8, 8), 3, padding=2),
    "max_pool_too_small": lambda L, F: F.max_pool2d(L.randn(1, 3, 2, 2), 3),
    "max_pool_2d_input": lambda L, F: F.max_pool2d(L.randn(8, 8), 2),
    "max_pool_zero_stride": lambda L, F: F.max_pool2d(L.randn(2, 3, 8, 8), 2, stride=0),
    "max_pool_kernel_tuple": lambda L, F: F.max_pool2d(L.randn(2, 3, 8, 8), (2, 2, 2)),
    "max_pool_dilation": lambda L, F: F.max_pool2d(L.randn(1, 3, 8, 8), 2, dilation=0),
    "max_pool1d_1d_input": lambda L, F: F.max_pool1d(L.randn(8), 2),
    "avg_pool_pad": lambda L, F: F.avg_pool2d(L.randn(2, 3, 8, 8), 3, padding=2),
    "avg_pool_divisor": lambda L, F: F.avg_pool2d(L.randn(2, 3, 8, 8), 2, divisor_override=0),
    "avg_pool1d_1d_input": lambda L, F: F.avg_pool1d(L.randn(8), 2),
    "adaptive_avg_pool_dims": lambda L, F: F.adaptive_avg_pool2d(L.randn(8, 8), 2),
    "adaptive_avg_pool_size": lambda L, F: F.adaptive_avg_pool2d(L.randn(1, 3, 8, 8), (1, 2, 3)),
    "adaptive_max_pool_dims": lambda L, F: F.adaptive_max_pool2d(L.randn(8, 8), 2),
    "adaptive_max_pool3d_dims": lambda L, F: F.adaptive_max_pool3d(L.randn(3, 4, 5), 2),
    "adaptive_max_pool3d_size": lambda L, F: F.adaptive_max_pool3d(L.randn(2, 3, 4, 5, 6),
                                                                   (2, 2)),
    "adaptive_max_pool3d_negative": lambda L, F: F.adaptive_max_pool3d(
        L.randn(2, 3, 4, 5, 6), (-1, 2, 2)),
    "adaptive_max_pool3d_empty": lambda L, F: F.adaptive_max_pool3d(L.randn(2, 3, 0, 5, 6), 2),
    "ctc_input_length": lambda L, F: F.ctc_loss(
        L.randn(6, 2, 4).log_softmax(2), L.ones(2, 3, dtype=L.int64), L.tensor([7, 6]),
        L.tensor([3, 3])),
    "ctc_target_length": lambda L, F: F.ctc_loss(
        L.randn(6, 2, 4).log_softmax(2), L.ones(2, 3, dtype=L.int64), L.tensor([6, 6]),
        L.tensor([4, 3])),
    "ctc_blank": lambda L, F: F.ctc_loss(
        L.randn(6, 2, 4).log_softmax(2), L.ones(2, 3, dtype=L.int64), L.tensor([6, 6]),
        L.tensor([3, 3]), blank=4),
    "ctc_lengths_size": lambda L, F: F.ctc_loss(
        L.randn(6, 2, 4).log_softmax(2), L.ones(2, 3, dtype=L.int64), L.tensor([6]),
        L.tensor([3, 3])),
    "ctc_int_input": lambda L, F: F.ctc_loss(
        L.ones(6, 2, 4, dtype=L.int32), L.ones(2, 3, dtype=L.int64), L.tensor([6, 6]),
        L.tensor([3, 3])),
    "ctc_reduction": lambda L, F: F.ctc_loss(
        L.randn(6, 2, 4).log_softmax(2), L.ones(2, 3, dtype=L.int64), L.tensor([6, 6]),
        L.tensor([3, 3]), reduction="foo"),
    "ctc_double_backward": lambda L, F: _ctc_double_backward(L, F),
    "adaptive_max_pool3d_empty_backward": lambda L, F: F.adaptive_max_pool3d(
        L.randn(2, 3, 4, 5, 6, requires_grad=True), (0, 2, 2)).sum().backward(),
    "adaptive_max_pool2d_empty_backward": lambda L, F: F.adaptive_max_pool2d(
        L.randn(3, 4, 5, requires_grad=True), (2, 0)).sum().backward(),
    "fold_blocks": lambda L, F: F.fold(L.randn(1, 12, 10), (4, 4), 2),
    "sdpa_dtypes": lambda L, F: F.scaled_dot_product_attention(
        L.randn(1, 2, 3, 4), L.randn(1, 2, 3, 4, dtype=L.float64), L.randn(1, 2, 3, 4)),
    "sdpa_mask_dtype": lambda L, F: F.scaled_dot_product_attention(
        L.randn(1, 2, 3, 4), L.randn(1, 2, 3, 4), L.randn(1, 2, 3, 4),
        attn_mask=L.ones(3, 3, dtype=L.int64)),
    "sdpa_mask_shape": lambda L, F: F.scaled_dot_product_attention(
        L.randn(1, 2, 3, 4), L.randn(1, 2, 3, 4), L.randn(1, 2, 3, 4), attn_mask=L.ones(2, 3)),
    "sdpa_dropout_p": lambda L, F: F.scaled_dot_product_attention(
        L.randn(1, 2, 3, 4), L.randn(1, 2, 3, 4), L.randn(1, 2, 3, 4), dropout_p=1.5),
    "sdpa_1d": lambda L, F: F.scaled_dot_product_attention(L.randn(4), L.randn(4), L.randn(4)),
    "sdpa_gqa_heads": lambda L, F: F.scaled_dot_product_attention(
        L.randn(1, 4, 3, 4), L.randn(1, 3, 3, 4), L.randn(1, 3, 3, 4), enable_gqa=True),
    "dropout_p": lambda L, F: F.dropout(L.randn(3), 1.5),
    "dropout1d_dims": lambda L, F: F.dropout1d(L.randn(2, 3, 4, 5), 0.5),
    "dropout_long": lambda L, F: F.dropout(L.ones(3, dtype=L.int64), 0.5),
    "glu_odd": lambda L, F: F.glu(L.randn(4, 5)),
    "glu_scalar": lambda L, F: F.glu(L.tensor(1.0)),
    "gelu_approximate": lambda L, F: F.gelu(L.randn(3), approximate="foo"),
    "gelu_long": lambda L, F: F.gelu(L.ones(3, dtype=L.int64)),
    "silu_long": lambda L, F: F.silu(L.ones(3, dtype=L.int64)),
    "softplus_long": lambda L, F: F.softplus(L.ones(3, dtype=L.int64)),
    "softmax_long": lambda L, F: F.softmax(L.ones(3, dtype=L.int64), 0),
    "log_softmax_long_dim0": lambda L, F: F.log_softmax(L.ones(3, 4, dtype=L.int64), 0),
    "hardtanh_range": lambda L, F: F.hardtanh(L.randn(3), 1.0, -1.0),
    "celu_alpha": lambda L, F: F.celu(L.randn(3), alpha=0.0),
    "softshrink_lambda": lambda L, F: F.softshrink(L.randn(3), -1.0),
    "prelu_channels": lambda L, F: F.prelu(L.randn(2, 6), L.randn(3)),
    "relu_leaf_inplace": lambda L, F: F.relu(L.ones(3, requires_grad=True), inplace=True),
    "linear_shapes": lambda L, F: F.linear(L.randn(3, 5), L.randn(4, 6)),
    "linear_3d_shapes": lambda L, F: F.linear(L.randn(2, 3, 5), L.randn(4, 6), L.randn(4)),
    "linear_dtype": lambda L, F: F.linear(L.randn(2, 8, dtype=L.float64), L.randn(4, 8)),
    "linear_bias_shape": lambda L, F: F.linear(L.randn(3, 6), L.randn(4, 6), L.randn(3)),
    "linear_bias_dtype": lambda L, F: F.linear(L.randn(3, 6), L.randn(4, 6),
                                               L.randn(4, dtype=L.float64)),
    "pixel_shuffle_channels": lambda L, F: F.pixel_shuffle(L.randn(1, 5, 2, 2), 2),
    "pixel_shuffle_dims": lambda L, F: F.pixel_shuffle(L.randn(5, 2), 2),
    "pixel_unshuffle_height": lambda L, F: F.pixel_unshuffle(L.randn(1, 2, 3, 4), 2),
    "interpolate_both": lambda L, F: F.interpolate(L.randn(1, 1, 3, 3), 4, 2.0),
    "interpolate_neither": lambda L, F: F.interpolate(L.randn(1, 1, 3, 3)),
    "interpolate_align_nearest": lambda L, F: F.interpolate(L.randn(1, 1, 3, 3), 4,
                                                            align_corners=True),
    "interpolate_size_len": lambda L, F: F.interpolate(L.randn(1, 1, 3, 3), (4, 4, 4)),
    "interpolate_linear_4d": lambda L, F: F.interpolate(L.randn(1, 1, 3, 3), 4, mode="linear"),
    "interpolate_bilinear_3d": lambda L, F: F.interpolate(L.randn(1, 1, 3), 4, mode="bilinear"),
    "unpool_index": lambda L, F: F.max_unpool2d(L.randn(1, 1, 2, 2), L.tensor([[[[0, 1],
                                                                                  [2, 40]]]]), 2),
    "unpool_output_size": lambda L, F: F.max_unpool2d(L.randn(1, 1, 2, 2),
                                                      L.zeros(1, 1, 2, 2, dtype=L.int64), 2,
                                                      output_size=(9, 9)),
    "multi_margin_p": lambda L, F: F.multi_margin_loss(L.randn(2, 3), L.tensor([0, 1]), p=3),
    "embedding_bag_offsets": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.randn(5, 3)),
    "embedding_bag_mode": lambda L, F: F.embedding_bag(L.tensor([[1, 2]]), L.randn(5, 3),
                                                       mode="min"),
    "embedding_bag_psw_mode": lambda L, F: F.embedding_bag(
        L.tensor([[1, 2]]), L.randn(5, 3), per_sample_weights=L.ones(1, 2)),
    "gaussian_nll_var": lambda L, F: F.gaussian_nll_loss(L.randn(3, 2), L.randn(3, 2),
                                                         L.ones(2, 2)),
    "local_response_norm_dims": lambda L, F: F.local_response_norm(L.randn(3, 4), 2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name: str, compare: Any) -> None:
    compare(lambda L: ERRORS[name](L, L.nn.functional))


WARNINGS = {
    "mse_size": lambda L, F: F.mse_loss(L.randn(4, 1), L.randn(4)),
    "kl_mean": lambda L, F: F.kl_div(L.randn(3), L.rand(3)),
    "softmax_implicit": lambda L, F: F.softmax(L.randn(2, 3)),
    "softmin_implicit": lambda L, F: F.softmin(L.randn(2, 3)),
    "log_softmax_implicit": lambda L, F: F.log_softmax(L.randn(3)),
    "dropout2d_3d": lambda L, F: F.dropout2d(L.randn(3, 8, 8), 0.5).shape,
    "dropout2d_5d": lambda L, F: F.dropout2d(L.randn(2, 3, 4, 8, 8), 0.5).shape,
    "legacy_reduction": lambda L, F: F.mse_loss(L.randn(3), L.randn(3), size_average=False),
}


@pytest.mark.parametrize("name", list(WARNINGS))
def test_warnings(name: str, compare: Any) -> None:
    """Results, and the warnings torch gives (same category and message)."""
    def scenario(L: Any) -> Any:
        L.manual_seed(0)
        return WARNINGS[name](L, L.nn.functional)

    compare(scenario, rtol=1e-5, atol=1e-6)


SAME_EVEN_BODY = """
x = L.randn(1, 1, 5, 5)
note("shape", tuple(L.nn.functional.conv2d(x, L.randn(1, 1, 2, 2), padding="same").shape))
"""


def test_conv_same_even_warns_once(lib_name: str) -> None:
    """torch warns about padding='same' with an even kernel once per process (TORCH_WARN_ONCE)."""
    assert run_fresh(lib_name, SAME_EVEN_BODY) == run_fresh("torch", SAME_EVEN_BODY)


# --------------------------------------------------------------------------------------------
# Random numbers: dropout draws what torch draws
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["dropout", "dropout_f64", "dropout_inplace", "dropout2d",
                                   "dropout1d_unbatched", "dropout3d", "alpha_dropout",
                                   "feature_alpha_dropout", "sdpa_dropout", "sdpa_3d_dropout",
                                   "p1", "eval", "rrelu", "rrelu_f64", "gumbel",
                                   "gumbel_hard"])
def test_dropout_bitwise(which: str, lib: Any) -> None:
    def run(L: Any) -> list:
        F = L.nn.functional
        L.manual_seed(1234)
        x = L.randn(3, 4, 5, 6)
        out = {
            "dropout": lambda: F.dropout(x, 0.3),
            "dropout_f64": lambda: F.dropout(x.double(), 0.7),
            "dropout_inplace": lambda: F.dropout(x.clone(), 0.25, inplace=True),
            "dropout2d": lambda: F.dropout2d(x, 0.5),
            "dropout1d_unbatched": lambda: F.dropout1d(x[0, 0], 0.5),
            "dropout3d": lambda: F.dropout3d(x, 0.4),
            "alpha_dropout": lambda: F.alpha_dropout(x, 0.2, training=True),
            "feature_alpha_dropout": lambda: F.feature_alpha_dropout(x, 0.2, training=True),
            "sdpa_dropout": lambda: F.scaled_dot_product_attention(x, x, x, dropout_p=0.3),
            "sdpa_3d_dropout": lambda: F.scaled_dot_product_attention(x[0], x[1], x[2],
                                                                      dropout_p=0.3),
            "p1": lambda: F.dropout(x, 1.0),
            "rrelu": lambda: F.rrelu(x, training=True),
            "rrelu_f64": lambda: F.rrelu(x.double(), 0.1, 0.9, training=True),
            "gumbel": lambda: F.gumbel_softmax(x, tau=0.5),
            "gumbel_hard": lambda: F.gumbel_softmax(x.double(), hard=True, dim=1),
            "eval": lambda: F.dropout(x, 0.5, training=False),
        }[which]()
        after = L.rand(3)  # the generator advanced by the same amount
        return [to_numpy(out), to_numpy(after)]

    expected, actual = run(torch), run(lib)
    if which.startswith(("sdpa", "gumbel")):  # same noise, float32 softmax rounding differs
        assert_values(expected[0], actual[0], rtol=1e-5, atol=1e-6)
        assert ((expected[0] == 0) == (actual[0] == 0)).all()
    else:
        assert expected[0].dtype == actual[0].dtype
        # (x is a float32 randn's: tests/cpu_kernels.py)
        assert_draws(actual[0], expected[0], precision=np.float32)
    np.testing.assert_array_equal(actual[1], expected[1])


def test_dropout_identity_and_gradient(lib: Any) -> None:
    F = lib.nn.functional
    x = lib.randn(4, 5, requires_grad=True)
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.5, training=False) is x
    lib.manual_seed(3)
    y = F.dropout(x, 0.5)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    kept = to_numpy(y) != 0
    np.testing.assert_allclose(to_numpy(x.grad), np.where(kept, 2.0, 0.0))


# --------------------------------------------------------------------------------------------
# State, stability, special values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_stats(momentum: float, lib: Any) -> None:
    def run(L: Any) -> list:
        rng = np.random.default_rng(0)
        x = L.tensor(rng.standard_normal((6, 3, 4)).astype(np.float32))
        rm, rv = L.zeros(3), L.ones(3)
        v0 = rm._version
        out = L.nn.functional.batch_norm(x, rm, rv, training=True, momentum=momentum)
        bumped = rm._version > v0
        ev = L.nn.functional.batch_norm(x, rm, rv, training=False)
        return [to_numpy(out), to_numpy(rm), to_numpy(rv), to_numpy(ev), bumped]

    expected, actual = run(torch), run(lib)
    for e, a in zip(expected[:4], actual[:4], strict=True):
        assert_values(e, a, rtol=1e-5, atol=1e-6)
    assert expected[4] == actual[4]


def test_embedding_max_norm(lib: Any) -> None:
    def run(L: Any) -> list:
        rng = np.random.default_rng(1)
        w = L.tensor(rng.standard_normal((6, 3)) * 3)
        out = L.nn.functional.embedding(L.tensor([1, 1, 4]), w, max_norm=1.5)
        return [to_numpy(out), to_numpy(w)]

    for e, a in zip(run(torch), run(lib), strict=True):
        assert_values(e, a, rtol=1e-12, atol=1e-12)


def test_embedding_padding_row_gets_no_gradient(lib: Any) -> None:
    w = lib.randn(5, 3, requires_grad=True)
    lib.nn.functional.embedding(lib.tensor([0, 2, 2, 4]), w, padding_idx=2).sum().backward()
    g = to_numpy(w.grad)
    assert (g[2] == 0).all() and (g[0] == 1).all() and (g[1] == 0).all()


def test_one_hot(compare: Any) -> None:
    def scenario(L: Any) -> Any:
        F = L.nn.functional
        t = L.tensor([[0, 2], [1, 0]])
        return [F.one_hot(t), F.one_hot(t, 4), F.one_hot(L.tensor([], dtype=L.int64), 3)]

    compare(scenario)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_large_logits(dtype: str, lib: Any) -> None:
    """Logits of 1e4: a finite loss and finite gradients, equal to torch's."""

    def run(L: Any) -> list:
        x = L.tensor(np.array([[1e4, 0.0, -1e4], [-1e4, 1e4, 1e4 - 1]], dtype=dtype),
                     requires_grad=True)
        t = L.tensor([1, 2])
        loss = L.nn.functional.cross_entropy(x, t)
        loss.backward()
        smooth = L.nn.functional.cross_entropy(x, t, label_smoothing=0.1)
        probs = L.nn.functional.cross_entropy(x, L.tensor([[0.0, 1, 0], [0, 0.5, 0.5]],
                                                           dtype=getattr(L, dtype)))
        return [to_numpy(loss), to_numpy(x.grad), to_numpy(smooth), to_numpy(probs)]

    expected, actual = run(torch), run(lib)
    for e, a in zip(expected, actual, strict=True):
        assert np.isfinite(a).all()
        assert_values(e, a, rtol=1e-6, atol=1e-6)


def test_bce_with_logits_stable(lib: Any) -> None:
    def run(L: Any) -> list:
        x = L.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], requires_grad=True)
        t = L.tensor([1.0, 0.0, 0.5, 1.0, 0.0])
        loss = L.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="sum")
        loss.backward()
        return [to_numpy(loss), to_numpy(x.grad)]

    for e, a in zip(run(torch), run(lib), strict=True):
        assert_values(e, a, rtol=1e-6, atol=1e-7)


def test_bce_clamps_log(lib: Any) -> None:
    def run(L: Any) -> list:
        x = L.tensor([0.0, 1.0, 1e-30], dtype=L.float64, requires_grad=True)
        t = L.tensor([1.0, 0.0, 1.0], dtype=L.float64)
        loss = L.nn.functional.binary_cross_entropy(x, t, reduction="none")
        loss.sum().backward()
        return [to_numpy(loss), to_numpy(x.grad)]

    for e, a in zip(run(torch), run(lib), strict=True):
        assert_values(e, a, rtol=1e-10, atol=0)


def test_nll_all_ignored_is_nan(compare: Any) -> None:
    def scenario(L: Any) -> Any:
        x = L.randn(3, 4, requires_grad=True)
        loss = L.nn.functional.cross_entropy(x, L.full((3,), -100, dtype=L.int64))
        loss.backward()
        return [math.isnan(loss.item()), x.grad]

    compare(scenario)


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "l1_loss"])
@pytest.mark.parametrize("target_dtype", ["int64", "float64", "int32"])
def test_regression_loss_promotes_the_target(loss: str, target_dtype: str, compare: Any) -> None:
    # the 60-minute blitz compares a float32 output with torch.arange(1, 11): float32 loss
    def scenario(L: Any) -> Any:
        x = L.tensor([[0.5, 2.0, 2.5, 7.0]], requires_grad=True)
        target = L.arange(1, 5, dtype=getattr(L, target_dtype)).view(1, -1)
        out = getattr(L.nn.functional, loss)(x, target)
        out.backward()
        return out, x.grad

    compare(scenario)


def test_sdpa_fully_masked_rows_are_zero(lib: Any) -> None:
    F = lib.nn.functional
    q = lib.randn(1, 1, 3, 4, requires_grad=True)
    mask = lib.tensor([[True, True], [False, False], [True, False]])
    out = F.scaled_dot_product_attention(q, lib.randn(1, 1, 2, 4), lib.randn(1, 1, 2, 4),
                                         attn_mask=mask)
    assert (to_numpy(out)[0, 0, 1] == 0).all()
    out.sum().backward()
    assert np.isfinite(to_numpy(q.grad)).all() and (to_numpy(q.grad)[0, 0, 1] == 0).all()


def test_erf_accuracy(lib_name: str) -> None:
    """The vectorised erf: within 2 ulp in float64, 1 ulp in float32 (math.erf as reference)."""
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's own erf")
    from tapegrad.ops.erf import erf_array

    x = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-300, 0.8, 400),
                        -np.logspace(-300, 0.8, 400), [0.0, -0.0, np.inf, -np.inf]])
    ref = np.array([math.erf(v) for v in x])
    got = erf_array(x)
    assert (np.abs(got - ref) <= 2 * np.spacing(np.abs(ref))).all()
    x32 = x.astype(np.float32)
    ref32 = np.array([math.erf(float(v)) for v in x32]).astype(np.float32)
    got32 = erf_array(x32)
    assert got32.dtype == np.float32
    assert (np.abs(got32 - ref32) <= np.spacing(np.abs(ref32))).all()
    assert np.isnan(erf_array(np.array([np.nan])))[0]


def test_gelu_matches_erf_formula_float64(lib: Any) -> None:
    """approximate='none' is x/2 (1 + erf(x/sqrt 2)): torch's float64 values to ~1e-15 (absolute
    too: 1 + erf(x) cancels for negative x, in torch as here)."""
    x = np.linspace(-6, 6, 2001)
    a = to_numpy(lib.nn.functional.gelu(lib.tensor(x)))
    e = to_numpy(torch.nn.functional.gelu(torch.tensor(x)))
    np.testing.assert_allclose(a, e, rtol=4e-15, atol=4e-16)


@pytest.mark.parametrize("which", ["conv2d", "layer_norm", "batch_norm", "batch_norm_eval",
                                   "group_norm", "gelu", "sdpa", "nll"])
def test_backward_twice_with_retain_graph(which: str, lib: Any) -> None:
    """Forward intermediates handed to the first backward are recomputed for a second one."""

    def run(L: Any) -> list:
        F = L.nn.functional
        rng = np.random.default_rng(0)
        x = L.tensor(rng.standard_normal((2, 4, 5, 5)), requires_grad=True)
        out = {
            "conv2d": lambda: F.conv2d(x, L.ones(3, 4, 3, 3, dtype=x.dtype)),
            "layer_norm": lambda: F.layer_norm(x, (5,)),
            "batch_norm": lambda: F.batch_norm(x, None, None, training=True),
            "batch_norm_eval": lambda: F.batch_norm(x, L.zeros(4, dtype=x.dtype),
                                                    L.ones(4, dtype=x.dtype) * 2),
            "group_norm": lambda: F.group_norm(x, 2),
            "gelu": lambda: F.gelu(x.float()),
            "sdpa": lambda: F.scaled_dot_product_attention(x, x * 2, x * 3),
            "nll": lambda: F.cross_entropy(x, L.zeros(2, 5, 5, dtype=L.int64)),
        }[which]()
        w = L.tensor(rng.standard_normal(tuple(out.shape)).astype(dtype_name(out.dtype)))
        (out * w).sum().backward(retain_graph=True)
        first = to_numpy(x.grad)
        (out * w).sum().backward()
        return [first, to_numpy(x.grad)]

    for e, a in zip(run(torch), run(lib), strict=True):
        assert_values(e, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("needs", ["xwb", "wb", "b", "xw", "x"])
@pytest.mark.parametrize("chunk_bytes", [1, 40_000, None], ids=["1-image", "3-4-images", "default"])
@pytest.mark.parametrize("kw", [{}, {"padding": 1}, {"padding": (2, 1), "dilation": (2, 1)},
                                {"padding": (0, 2), "dilation": (1, 3)}],
                         ids=["valid", "pad1", "pad-dilated", "pad-dilated-across"])
def test_conv2d_in_image_chunks(kw: dict, chunk_bytes: int | None, needs: str, lib: Any,
                                lib_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """tapegrad's stride-1 2-D convolution runs a batch a few images at a time (ops/conv.py,
    ``_CHUNK_BYTES``), with the bias as a row of its products: split into chunks of one image,
    of three or four (the last one short) or left whole, and whichever of input, weight and
    bias want a gradient, the output and every gradient are torch's."""
    if lib_name == "tapegrad" and chunk_bytes is not None:
        from tapegrad.ops import conv

        monkeypatch.setattr(conv, "_CHUNK_BYTES", chunk_bytes)
    rng = np.random.default_rng(3)
    x0, w0, b0 = (rng.standard_normal(s) for s in ((7, 3, 9, 8), (4, 3, 3, 2), (4,)))
    g0 = rng.standard_normal(tuple(torch.nn.functional.conv2d(
        torch.tensor(x0), torch.tensor(w0), **kw).shape))

    def run(L: Any) -> list:
        x, w, b = (L.tensor(a, requires_grad=name in needs)
                   for a, name in ((x0, "x"), (w0, "w"), (b0, "b")))
        y = L.nn.functional.conv2d(x, w, b, **kw)
        y.backward(L.tensor(g0))
        return [to_numpy(y)] + [None if t.grad is None else to_numpy(t.grad) for t in (x, w, b)]

    for want, got in zip(run(torch), run(lib), strict=True):
        assert (want is None) == (got is None)
        if want is not None:
            assert_values(want, got, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 70, 50), (2, 5)], ids=["large", "small"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_relu_special_values(dtype: str, shape: tuple, lib: Any) -> None:
    """relu is torch's ``x < 0 ? 0 : x`` and its gradient ``y <= 0 ? 0 : g``, in each of
    tapegrad's forms (NumPy's maximum where its probe allows, the bitwise form, np.where for
    small arrays; the gradient's integer product): NaN, infinities and -0.0 come out as torch
    gives them wherever they sit (SIMD body or tail), a NaN input keeps its gradient, an
    infinite or NaN gradient of an inactive entry becomes +0, the dtype is kept."""
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal(shape).astype(dtype)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, -np.nan, -1.0]
    x0.flat[:6] = specials[:6]
    x0.flat[-7:] = specials
    x0.flat[7:x0.size - 7:37] = np.resize(specials, len(range(7, x0.size - 7, 37)))
    g0 = rng.standard_normal(x0.shape).astype(dtype)
    g0.flat[1::5] = np.resize([np.inf, -np.inf, np.nan, -0.0, -2.0], len(range(1, g0.size, 5)))

    def run(L: Any) -> list:
        x = L.tensor(x0, requires_grad=True)
        y = L.relu(x)
        y.backward(L.tensor(g0))
        return [to_numpy(y), to_numpy(x.grad), to_numpy(L.relu(L.tensor(x0[..., ::2])))]

    for want, got in zip(run(torch), run(lib), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_layer_norm_empty_batch(lib: Any) -> None:
    """No rows to normalise: the output is empty and the affine gradients are zeros."""
    def run(L: Any) -> list:
        x = L.zeros(0, 6, requires_grad=True)
        w = L.ones(6, requires_grad=True)
        b = L.zeros(6, requires_grad=True)
        y = L.nn.functional.layer_norm(x, (6,), w, b)
        y.sum().backward()
        return [to_numpy(t) for t in (y, x.grad, w.grad, b.grad)]

    for want, got in zip(run(torch), run(lib), strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def _log_softmax_np(x: np.ndarray) -> np.ndarray:
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


_CTC_RNG = np.random.default_rng(11)
_CTC_LP = _log_softmax_np(_CTC_RNG.standard_normal((12, 4, 6)))
_CTC_TARGETS = _CTC_RNG.integers(1, 6, (4, 5))
_CTC_TARGETS[1, 1] = _CTC_TARGETS[1, 0]  # a repeated label: the blank between is required
_CTC_IL, _CTC_TL = np.array([12, 10, 7, 12]), np.array([5, 3, 0, 4])
_CTC_CASES = {
    "mean": ({}, _CTC_TARGETS, _CTC_IL),
    "sum": ({"reduction": "sum"}, _CTC_TARGETS, _CTC_IL),
    "none": ({"reduction": "none"}, _CTC_TARGETS, _CTC_IL),
    "blank_3": ({"blank": 3, "reduction": "none"}, np.where(_CTC_TARGETS == 3, 1, _CTC_TARGETS),
                _CTC_IL),
    "concatenated": ({}, np.concatenate([_CTC_TARGETS[i, :n] for i, n in enumerate(_CTC_TL)]),
                     _CTC_IL),
    "impossible": ({"reduction": "none"}, _CTC_TARGETS, np.array([2, 2, 12, 12])),
    "zero_infinity": ({"reduction": "none", "zero_infinity": True}, _CTC_TARGETS,
                      np.array([2, 2, 12, 12])),
    "zero_infinity_mean": ({"zero_infinity": True}, _CTC_TARGETS, np.array([2, 2, 12, 12])),
    "unbatched": ({}, None, None),
    "unbatched_none": ({"reduction": "none"}, None, None),
    "module": ({}, _CTC_TARGETS, _CTC_IL),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("which", list(_CTC_CASES))
def test_ctc_loss(which: str, dtype: str, lib: Any) -> None:
    """F.ctc_loss / nn.CTCLoss against torch: the loss, the graph's top node, and the gradient
    (torch's formula; NaN where the loss is infinite, zero after each input length), for padded
    and concatenated targets, repeated labels, another blank, impossible alignments with and
    without zero_infinity, every reduction and an unbatched input."""
    kw, targets, lengths = _CTC_CASES[which]
    lp0 = _CTC_LP.astype(dtype)
    tl0 = _CTC_TL
    if targets is None:  # unbatched: (T, C) log-probs, one target, 0-d lengths
        lp0, targets, lengths, tl0 = lp0[:, 0], _CTC_TARGETS[0], np.array(12), np.array(5)
    g0 = np.random.default_rng(12).standard_normal(4)

    def run(L: Any) -> list:
        lp = L.tensor(lp0, requires_grad=True)
        args = (lp, L.tensor(targets), L.tensor(lengths), L.tensor(tl0))
        if which == "module":
            loss = L.nn.CTCLoss(**kw)(*args)
        else:
            loss = L.nn.functional.ctc_loss(*args, **kw)
        g = L.tensor(g0[: loss.numel()].reshape(tuple(loss.shape)).astype(dtype))
        loss.backward(g)
        return [loss.grad_fn.name(), to_numpy(loss.detach()), to_numpy(lp.grad)]

    want, got = run(torch), run(lib)
    assert want[0] == got[0]
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    for e, a in zip(want[1:], got[1:], strict=True):
        assert e.dtype == a.dtype
        assert_values(e, a, **tol)


@pytest.mark.parametrize("make", [
    lambda L: L.ones(3, 4, 5).permute(1, 0, 2), lambda L: L.ones(3, 4, 5).permute(2, 0, 1),
    lambda L: L.ones(6, 5).t(), lambda L: L.ones(4, 6)[:, ::2]])
def test_dropout_noise_follows_the_input_layout(make):
    # torch's noise is empty_like(input), filled in the input's memory order
    import tapegrad

    out = []
    for L in (torch, tapegrad):
        L.manual_seed(0)
        out.append(L.nn.functional.dropout(make(L), 0.5).numpy())
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize("make", [
    lambda L: (L.ones(2, 5, 3, 4).transpose(1, 2),) * 3,  # heads split from a projection
    lambda L: (L.ones(5, 2, 3, 4).permute(1, 2, 0, 3),) * 3,
    lambda L: (L.ones(2, 3, 5, 8)[..., :4],) * 3,  # not dense: a contiguous result
    lambda L: (L.ones(2, 3, 5, 4), L.ones(2, 5, 3, 4).transpose(1, 2),
               L.ones(2, 5, 3, 4).transpose(1, 2)),
    lambda L: (L.ones(2, 5, 3, 6).transpose(1, 2), L.ones(2, 3, 5, 6), L.ones(2, 3, 5, 2)),
    lambda L: (L.ones(5, 3, 4).transpose(0, 1),) * 3,  # 3-D: the math path
])
def test_sdpa_result_layout_follows_the_query(make):
    # torch's fused CPU kernel allocates its result like the query; the math path, contiguous
    import tapegrad

    strides = [L.nn.functional.scaled_dot_product_attention(*make(L)).stride()
               for L in (torch, tapegrad)]
    assert strides[1] == strides[0]


def test_norm_and_loss_backward_when_the_input_needs_no_gradient():
    import tapegrad

    res = []
    for L in (torch, tapegrad):
        L.manual_seed(0)
        x = L.randn(2, 6, 5)
        w = L.ones(6, requires_grad=True)
        lw = L.ones(5, requires_grad=True)
        t = L.randn(2, 6, 5, requires_grad=True)
        loss = (L.nn.functional.group_norm(x, 3, w).pow(2).sum()
                + L.nn.functional.layer_norm(x, (5,), lw).pow(2).sum()
                + L.nn.functional.mse_loss(x, t) + L.nn.functional.l1_loss(x, t)
                + L.nn.functional.binary_cross_entropy_with_logits(x, t.sigmoid()))
        loss.backward()
        res.append([w.grad.numpy(), lw.grad.numpy(), t.grad.numpy()])
    for a, b in zip(res[1], res[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["int64", "bool", "uint8"])
def test_interpolate_rejects_integer_inputs_as_torch(lib, oracle, dtype):
    """torch's resampling kernels take floating inputs (uint8 too for nearest, bilinear and
    bicubic): the NotImplementedError names the kernel of the path torch takes."""
    cases = [("nearest", (1, 2, 5), 4), ("nearest", (1, 2, 5, 5), (3, 3)),
             ("nearest", (1, 2, 5, 5), (100, 100)), ("nearest", (1, 5, 5, 5), (100, 100)),
             ("nearest-exact", (1, 2, 5, 5, 5), (3, 3, 3)), ("linear", (1, 2, 5), 4),
             ("bilinear", (1, 2, 5, 5), (3, 3)), ("bilinear", (1, 5, 5, 5), (100, 100)),
             ("trilinear", (1, 2, 5, 5, 5), (3, 3, 3)), ("bicubic", (1, 2, 5, 5), (3, 3)),
             ("area", (1, 2, 5), 3), ("area", (1, 2, 5, 5), (3, 3)),
             ("area", (1, 2, 5, 5, 5), (3, 3, 3))]

    def outcome(lib, mode, shape, size, channels_last):
        x = lib.zeros(shape, dtype=getattr(lib, dtype))
        if channels_last:
            x = x.movedim(1, -1).contiguous().movedim(-1, 1)
        try:
            lib.nn.functional.interpolate(x, size=size, mode=mode)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return type(e).__name__, str(e).replace("tapegrad", "torch")
        return "ok"

    for mode, shape, size in cases:
        for channels_last in (False, True) if len(shape) > 3 else (False,):
            assert (outcome(lib, mode, shape, size, channels_last)
                    == outcome(oracle, mode, shape, size, channels_last)), (mode, shape, size)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_indices_after_the_last_offset(lib, oracle, dtype, mode):
    """include_last_offset with offsets[-1] < len(input): torch puts the indices after the last
    offset in the last bag, except its float32 fast path (no padding_idx) for sum, which
    leaves them out, and for mean, which sums without them but divides by their number too."""
    rng = np.random.default_rng(3)
    weight, idx = rng.standard_normal((10, 3)), np.array([1, 2, 4, 5, 4, 3, 2, 9])
    cot = rng.standard_normal((2, 3))

    def run(m, offsets, padding_idx):
        w = m.tensor(weight, dtype=getattr(m, dtype), requires_grad=True)
        out = m.nn.functional.embedding_bag(m.tensor(idx), w, m.tensor(offsets), mode=mode,
                                            include_last_offset=True, padding_idx=padding_idx)
        out.backward(m.tensor(cot, dtype=getattr(m, dtype)))
        return out.detach().numpy(), w.grad.numpy()

    for offsets in ([0, 4, 6], [0, 4, 4]):
        for padding_idx in (None, 4):
            got, want = run(lib, offsets, padding_idx), run(oracle, offsets, padding_idx)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
            if not (mode == "sum" and dtype == "float32" and padding_idx is None):
                # (there torch leaves the rows only the left-out indices name uninitialised)
                np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6)
