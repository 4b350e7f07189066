"""CPU autocast's op lists: which ops run in the low precision type, which in float32, which in
the widest type among their inputs (torch 2.13's CPU policy, as data).

Under ``torch.autocast("cpu", dtype)`` an op on a list casts its floating-point tensor
arguments (float64 ones excepted) before it runs:

* ``LOWER``  (torch's ``lower_precision_fp``): to the autocast dtype (bfloat16 or float16). The
  matrix products and convolutions, where the low type pays off.
* ``FP32``: to float32. Reductions, losses, FFTs, decompositions, where the low type loses
  too much (a bfloat16 ``prod`` or ``cholesky`` is noise).
* ``PROMOTE``: to the widest floating type among the arguments (the autocast dtype, or float32
  when one of them is float32), so that ``cat`` of a float32 and a bfloat16 tensor works.

Every other op runs in the dtype of its inputs.

How the lists were derived: torch registers one kernel per listed op under its ``AutocastCPU``
dispatch key, so ``torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastCPU")`` over
``torch._C._dispatch_get_all_op_names()`` names them (127 aten overloads in torch 2.13), and
running each under autocast with float32 and bfloat16 inputs tells its policy.
``TORCH_AUTOCAST_CPU`` below is that result, keyed by aten name; tests/test_autocast.py
recomputes it from torch and checks it is equal. The tables after it say where each aten op is
reached in tapegrad:

* ``REGISTRY_POLICY``: registry entries (ops/_registry.py) cast where they are called, so that
  internal calls are caught as torch's dispatcher catches them (``einsum`` and ``tensordot`` reach
  ``bmm``/``mm``, ``hstack`` reaches ``cat``, ``F.pad(mode="reflect")`` reaches
  ``reflection_pad2d``).
* ``PUBLIC_POLICY``: public functions that torch runs as one aten op but tapegrad composes of
  several registry entries (``F.linear`` is an ``addmm`` or a ``matmul`` plus a bias;
  ``F.cross_entropy`` is a ``log_softmax`` and an ``nll_loss``). They cast their arguments once
  and run the rest with autocast off, as torch's autocast kernel redispatches below itself.
  Names are paths under ``tapegrad`` (``nn.functional.linear``, ``Tensor.matmul``).
"""

from __future__ import annotations

from typing import Any

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"
# tapegrad-side policies of composites that torch builds from listed and unlisted ops:
UNLISTED = "unlisted"  # as its parts: each op inside casts (or not) by its own policy
CONTRACTION = "contraction"  # einsum: a product summing an index is one bmm in torch

# aten op -> policy, torch 2.13's CPU autocast (overloads folded into their op).
TORCH_AUTOCAST_CPU: dict[str, str] = {
    **dict.fromkeys((
        "_addmm_activation", "_convolution", "_native_multi_head_attention", "addbmm", "addmm",
        "baddbmm", "bmm", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
        "conv_transpose2d", "conv_transpose3d", "linalg_vecdot", "linear", "matmul",
        "mkldnn_rnn_layer", "mm", "prelu", "scaled_dot_product_attention",
    ), LOWER),
    **dict.fromkeys(("cat", "index_copy", "stack"), PROMOTE),
    **dict.fromkeys((
        "_grid_sampler_2d_cpu_fallback", "_lu_with_info", "adaptive_avg_pool3d",
        "adaptive_max_pool3d", "avg_pool3d", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "cdist", "cholesky", "cholesky_inverse",
        "cholesky_solve", "cosine_embedding_loss", "cross_entropy_loss", "ctc_loss",
        "fake_quantize_per_tensor_affine", "fft_fft", "fft_fft2", "fft_fftn", "fft_hfft",
        "fft_ifft", "fft_ifft2", "fft_ifftn", "fft_ihfft", "fft_irfft", "fft_irfft2",
        "fft_irfftn", "fft_rfft", "fft_rfft2", "fft_rfftn", "fractional_max_pool2d",
        "fractional_max_pool3d", "geqrf", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
        "hinge_embedding_loss", "huber_loss", "inverse", "kl_div", "l1_loss", "linalg_cholesky",
        "linalg_cholesky_ex", "linalg_cond", "linalg_eig", "linalg_eigh", "linalg_eigvals",
        "linalg_eigvalsh", "linalg_householder_product", "linalg_inv", "linalg_inv_ex",
        "linalg_lstsq", "linalg_matrix_rank", "linalg_qr", "linalg_solve", "linalg_svd",
        "linalg_svdvals", "linalg_tensorinv", "linalg_tensorsolve", "lu_solve",
        "margin_ranking_loss", "max_pool3d", "max_unpool2d", "max_unpool3d", "mse_loss",
        "multi_margin_loss", "multilabel_margin_loss", "multilabel_margin_loss_forward",
        "nanquantile", "nll_loss", "nll_loss2d", "orgqr", "ormqr", "pinverse",
        "poisson_nll_loss", "polar", "prod", "qr", "quantile", "reflection_pad1d",
        "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
        "smooth_l1_loss", "soft_margin_loss", "stft", "svd", "trace", "triangular_solve",
        "triplet_margin_loss", "view_as_complex",
    ), FP32),
}

# registry entry -> policy (the primitives the lists name; see the module docstring)
REGISTRY_POLICY: dict[str, str] = {
    **dict.fromkeys(("mm", "bmm", "addmm", "baddbmm", "addbmm", "convolution", "prelu", "sdpa"),
                    LOWER),
    **dict.fromkeys(("cat", "stack", "index_copy"), PROMOTE),
    **dict.fromkeys((
        "prod", "prod_dim", "trace", "cdist", "polar", "view_as_complex", "nll_loss",
        "nll_loss2d", "mse_loss", "huber_loss", "smooth_l1_loss", "soft_margin_loss",
        "multi_margin_loss", "multilabel_margin_loss", "binary_cross_entropy", "ctc_loss",
        "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool2d",
        "max_unpool3d", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
        "replication_pad2d", "replication_pad3d", "cholesky", "cholesky_inverse",
        "cholesky_solve", "ormqr", "triangular_solve", "linalg_householder_product",
    ), FP32),
}

_TENSOR_LOWER = ("matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm", "addbmm",
                 "baddbmm", "prelu")
_TENSOR_FP32 = ("prod", "quantile", "nanquantile", "trace", "cholesky", "cholesky_inverse",
                "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "geqrf",
                "qr", "svd", "triangular_solve")

# public function (a path under tapegrad) -> policy
PUBLIC_POLICY: dict[str, str] = {
    **dict.fromkeys((
        "matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "conv1d", "conv2d", "conv3d",
        "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
        "linalg.matmul", "linalg.vecdot",
        "nn.functional.linear", "nn.functional.conv1d", "nn.functional.conv2d",
        "nn.functional.conv3d", "nn.functional.conv_transpose1d",
        "nn.functional.conv_transpose2d", "nn.functional.conv_transpose3d",
        "nn.functional.prelu", "nn.functional.scaled_dot_product_attention",
    ), LOWER),
    **{f"Tensor.{name}": LOWER for name in _TENSOR_LOWER},
    **dict.fromkeys(("cat", "concat", "concatenate", "stack", "index_copy", "Tensor.index_copy"),
                    PROMOTE),
    **{f"Tensor.{name}": FP32 for name in _TENSOR_FP32},
    **dict.fromkeys((
        "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "polar", "prod", "quantile",
        "nanquantile", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
        "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
        "cosine_embedding_loss", "hinge_embedding_loss", "poisson_nll_loss",
        "margin_ranking_loss", "triplet_margin_loss", "ctc_loss", "kl_div",
        "binary_cross_entropy_with_logits", "geqrf", "qr", "svd", "triangular_solve",
        "nn.functional.avg_pool3d", "nn.functional.binary_cross_entropy",
        "nn.functional.grid_sample", "nn.functional.max_pool3d",
        "nn.functional.max_unpool1d", "nn.functional.max_unpool2d",
        "nn.functional.max_unpool3d", "nn.functional.adaptive_avg_pool3d",
        "nn.functional.adaptive_max_pool3d", "nn.functional.mse_loss",
        "nn.functional.cosine_embedding_loss", "nn.functional.nll_loss",
        "nn.functional.hinge_embedding_loss", "nn.functional.poisson_nll_loss",
        "nn.functional.smooth_l1_loss", "nn.functional.cross_entropy",
        "nn.functional.l1_loss", "nn.functional.huber_loss",
        "nn.functional.margin_ranking_loss", "nn.functional.soft_margin_loss",
        "nn.functional.triplet_margin_loss", "nn.functional.multi_margin_loss",
        "nn.functional.ctc_loss", "nn.functional.kl_div",
        "nn.functional.multilabel_margin_loss",
        "nn.functional.binary_cross_entropy_with_logits",
        "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
        "fft.fft", "fft.fft2", "fft.fftn", "fft.hfft", "fft.ifft", "fft.ifft2", "fft.ifftn",
        "fft.ihfft", "fft.irfft", "fft.irfft2", "fft.irfftn", "fft.rfft", "fft.rfft2",
        "fft.rfftn",
        "linalg.cholesky", "linalg.cholesky_ex", "linalg.cond", "linalg.eig", "linalg.eigh",
        "linalg.eigvals", "linalg.eigvalsh", "linalg.householder_product", "linalg.inv",
        "linalg.inv_ex", "linalg.lstsq", "linalg.matrix_rank", "linalg.qr", "linalg.solve",
        "linalg.svd", "linalg.svdvals", "linalg.tensorinv", "linalg.tensorsolve",
    ), FP32),
}

PUBLIC_POLICY.update({
    # torch: inner and tensordot fold both sides into matrices for one ``mm``, except when
    # the result has one element (``dot``, or ``mul`` and ``sum``: unlisted; see below)
    "inner": UNLISTED, "tensordot": UNLISTED, "Tensor.inner": UNLISTED,
    # torch: the chunked path is a custom op of its own, which autocast does not enter
    "nn.functional.linear_cross_entropy": UNLISTED,
    # torch: lu is _lu_with_info (fp32)
    "lu": FP32, "Tensor.lu": FP32,
    # torch: pinv is an SVD (or eigh) in float32, then a matmul in the low type; one node
    # (LinalgPinvBackward0), which rounds as torch's (ops/solvers.py: _pinv_product)
    "linalg.pinv": UNLISTED,
    "einsum": CONTRACTION,
})


def _one_element_result(a: dict) -> bool:
    """tensordot/inner: torch's path when the result has one element (no ``mm``)."""
    x, y = a.get("a", a.get("input")), a.get("b", a.get("other"))
    if x is None or y is None or x.ndim == 0 or y.ndim == 0:
        return True
    dims = a.get("dims", 2)
    if hasattr(dims, "tolist"):
        dims = dims.tolist()
    if "input" in a:  # inner: the last dimension of both
        left, right = x.shape[:-1], y.shape[:-1]
    elif isinstance(dims, int):
        left, right = x.shape[:x.ndim - dims], y.shape[dims:]
    else:
        da = [dims[0]] if isinstance(dims[0], int) else list(dims[0])
        db = [dims[1]] if isinstance(dims[1], int) else list(dims[1])
        left = [n for i, n in enumerate(x.shape) if i not in {d % x.ndim for d in da}]
        right = [n for i, n in enumerate(y.shape) if i not in {d % y.ndim for d in db}]
    count = 1
    for n in (*left, *right):
        count *= n
    return count == 1


def _chunked_linear_cross_entropy(a: dict) -> bool:
    target = a.get("target")
    return (a.get("options") is not None and a.get("reduction", "mean") in ("mean", "sum", "none")
            and a["linear_weight"].ndim == 2 and a.get("label_smoothing", 0.0) == 0.0
            and target is not None and target.dtype.name == "int64")


# Public functions that run with autocast off (torch reaches no listed op) when a condition on
# their arguments holds: ``max_pool3d(..., return_indices=True)`` is
# ``max_pool3d_with_indices``, which is on no list; see also the notes above.
UNLISTED_WHEN: dict[str, Any] = {
    "max_pool3d": lambda a: a.get("return_indices", False) is True,
    "nn.functional.max_pool3d": lambda a: a.get("return_indices", False) is True,
    "inner": _one_element_result,
    "Tensor.inner": _one_element_result,
    "tensordot": _one_element_result,
    "nn.functional.linear_cross_entropy": _chunked_linear_cross_entropy,
}
