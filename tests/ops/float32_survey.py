"""Which ops give torch's float32 results bit for bit, and by how many ulps the others differ.

    PYTHONPATH=src python tests/ops/float32_survey.py                 # every in-scope entry
    PYTHONPATH=src python tests/ops/float32_survey.py 'pow' 'sum'     # some entries
    PYTHONPATH=src python tests/ops/float32_survey.py --write docs/float32.md

The OpInfo tests (``opinfo_harness``) compare float32 results within ``assert_close``'s
tolerances; a long float32 run needs more: one op that rounds differently from torch's kernel
makes two training runs drift apart. This tool runs every float32 sample of each in-scope op_db
entry (the harness's samples, converted the same way) through torch and tapegrad, and counts the
float32 output elements, and the first-order gradient elements (``autograd.grad`` against the
harness's fixed cotangent), that are bit-identical; for the rest, the largest distance in units
in the last place (ulps: how many float32 numbers lie between the two). Elementwise ops
(``UnaryUfuncInfo``, ``BinaryUfuncInfo``) and reductions (``ReductionOpInfo``) also run on a few
larger random inputs (a 64 x 257 tensor, inside the op's domain), where vectorized kernels and
reduction orders show.

``--write`` writes the markdown report (the table of the entries that are not bit-exact, each with
the cause: the BLAS/LAPACK build, the transcendental function library, the reduction order or the
formula) that docs/float32.md shows.
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import sys
import time
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import opinfo_harness as h  # noqa: E402

import tapegrad  # noqa: E402

# --------------------------------------------------------------------------------------------
# ulps
# --------------------------------------------------------------------------------------------


def _ordered(a: np.ndarray) -> np.ndarray:
    """float32 bits -> integers in the order of the floats (-0.0 and +0.0 both 0)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(2**31) - i, i)


def compare_bits(ours: np.ndarray, theirs: np.ndarray) -> tuple[int, int, float]:
    """(elements, elements whose bits differ, largest ulp distance) of two float32 arrays of one
    shape; NaNs of any payload count as equal, a NaN against a number as infinitely far."""
    a = np.ascontiguousarray(ours, dtype=np.float32).reshape(-1)
    b = np.ascontiguousarray(theirs, dtype=np.float32).reshape(-1)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    same = (a.view(np.int32) == b.view(np.int32)) | (nan_a & nan_b)
    differ = int(a.size - np.count_nonzero(same))
    if not differ:
        return a.size, 0, 0.0
    if np.any(nan_a != nan_b):
        return a.size, differ, math.inf
    ok = ~(nan_a | nan_b)
    d = np.abs(_ordered(a[ok]) - _ordered(b[ok]))
    return a.size, differ, float(d.max()) if d.size else 0.0


# --------------------------------------------------------------------------------------------
# One entry
# --------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Counts over one entry's float32 outputs (``out``) and gradients (``grad``)."""

    entry: str
    status: str = "ok"  # "ok", "missing", "no float32 samples"
    out_n: int = 0
    out_diff: int = 0
    out_ulp: float = 0.0
    grad_n: int = 0
    grad_diff: int = 0
    grad_ulp: float = 0.0
    skipped: int = 0  # samples that failed to compare (shape, error...): the OpInfo test's job
    where: str = ""  # the first sample whose bits differ
    kind: str = "other"  # "unary", "binary" (elementwise), "reduction" or "other"

    @property
    def exact(self) -> bool:
        return self.status == "ok" and self.out_n + self.grad_n > 0 and not (
            self.out_diff or self.grad_diff)

    def add(self, kind: str, ours: Any, theirs: Any, where: str) -> None:
        if not (isinstance(theirs, torch.Tensor) and theirs.dtype == torch.float32):
            return
        if not (isinstance(ours, tapegrad.Tensor) and ours.dtype == tapegrad.float32
                and tuple(ours.shape) == tuple(theirs.shape)):
            raise ValueError("not comparable")
        n, d, u = compare_bits(h.tg_numpy(ours),
                               theirs.detach().resolve_conj().resolve_neg().numpy())
        if kind == "out":
            self.out_n, self.out_diff = self.out_n + n, self.out_diff + d
            self.out_ulp = max(self.out_ulp, u)
        else:
            self.grad_n, self.grad_diff = self.grad_n + n, self.grad_diff + d
            self.grad_ulp = max(self.grad_ulp, u)
        if d and not self.where:
            self.where = where


def _process(s: Any) -> tuple[Any, Any]:
    p = s.output_process_fn_grad or (lambda x: x)
    return p, (h.rebind(p) if isinstance(p, types.FunctionType) else p)


def run_one(t: Tally, op: Any, fn: Any, s: Any, label: str) -> None:
    """One sample through both libraries; its float32 outputs and gradients into ``t``."""
    conv = h.Converter()
    args = (conv(s.input), conv(tuple(s.args)), conv(dict(s.kwargs)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = op.op(s.input, *s.args, **s.kwargs)
        except Exception:  # noqa: BLE001 - torch rejects its own sample
            return
        ours = fn(args[0], *args[1], **args[2])
    p_t, p_o = _process(s)
    if op.name in h.GAUGE_DEPENDENT:
        theirs, ours = p_t(theirs), p_o(ours)
    fo, ft = h.flatten(ours), h.flatten(theirs)
    if len(fo) != len(ft):
        raise ValueError("output count")
    for o, th in zip(fo, ft, strict=True):
        t.add("out", o, th, label)
    if not (op.supports_autograd and conv.grad_pairs):
        return
    if op.name not in h.GAUGE_DEPENDENT:
        theirs, ours = p_t(theirs), p_o(ours)
    pt, po = h.flatten(theirs), h.flatten(ours)
    idx = h._diff_outputs(pt)
    if not idx or any(not (isinstance(po[i], tapegrad.Tensor) and po[i].requires_grad)
                      for i in idx):
        return
    ins_t = [p[0] for p in conv.grad_pairs]
    ins_o = [p[1] for p in conv.grad_pairs]
    cots = [h._cotangent(pt[i], 100 + i) for i in idx]
    g_t = torch.autograd.grad([pt[i] for i in idx], ins_t, cots, allow_unused=True)
    g_o = tapegrad.autograd.grad([po[i] for i in idx], ins_o, [conv(c) for c in cots],
                                 allow_unused=True)
    for a, b in zip(g_o, g_t, strict=True):
        if a is not None and b is not None:
            t.add("grad", a, b, label + " (grad)")


def random_samples(op: Any) -> list:
    """A few larger random float32 inputs for elementwise ops and reductions (seeded)."""
    from torch.testing._internal.opinfo.core import (
        BinaryUfuncInfo,
        ReductionOpInfo,
        SampleInput,
        UnaryUfuncInfo,
    )

    g = torch.Generator().manual_seed(1234)
    shape = (64, 257)
    out = []
    if isinstance(op, UnaryUfuncInfo):
        lo, hi = op.domain
        x = torch.randn(shape, generator=g) * 3
        if lo is not None or hi is not None:
            lo_ = -8.0 if lo is None else float(lo)
            hi_ = 8.0 if hi is None else float(hi)
            width = hi_ - lo_
            x = lo_ + width * (0.02 + 0.96 * torch.rand(shape, generator=g))
        out.append(SampleInput(x.requires_grad_(op.supports_autograd)))
    elif isinstance(op, BinaryUfuncInfo):
        a = torch.randn(shape, generator=g) * 3
        b = torch.randn(shape, generator=g) * 3
        if op.rhs_make_tensor_kwargs.get("exclude_zero"):
            b = torch.where(b.abs() < 1e-3, torch.ones_like(b), b)
        grad = op.supports_autograd
        out.append(SampleInput(a.requires_grad_(grad), args=(b.requires_grad_(grad),)))
    elif isinstance(op, ReductionOpInfo):
        for kwargs in ({}, {"dim": -1}, {"dim": 0}):
            x = torch.randn(shape, generator=g)
            out.append(SampleInput(x.requires_grad_(op.supports_autograd), kwargs=kwargs))
    return out


def survey(op: Any, extra: bool = True) -> Tally:
    from torch.testing._internal.opinfo.core import (
        BinaryUfuncInfo,
        ReductionOpInfo,
        UnaryUfuncInfo,
    )

    kind = next((k for k, c in (("unary", UnaryUfuncInfo), ("binary", BinaryUfuncInfo),
                                ("reduction", ReductionOpInfo)) if isinstance(op, c)), "other")
    t = Tally(h.entry_id(op), kind=kind)
    fn = h.resolve(op)
    if fn is None:
        t.status = "missing"
        return t
    if torch.float32 not in op.supported_dtypes("cpu"):
        t.status = "no float32 samples"
        return t
    try:
        batch = list(h.samples(op, torch.float32, None))
    except Exception:  # noqa: BLE001 - torch's generator failing is torch's problem
        batch = []
    labelled = [(s, f"sample {n} ({h._describe(s)})") for n, s in enumerate(batch)]
    if extra:
        labelled += [(s, f"random ({h._describe(s)})") for s in random_samples(op)]
    for s, label in labelled:
        try:
            run_one(t, op, fn, s, label)
        except Exception:  # noqa: BLE001 - a failing sample is the OpInfo test's verdict
            t.skipped += 1
    if t.out_n + t.grad_n == 0 and t.status == "ok":
        t.status = "no float32 samples"
    return t


# --------------------------------------------------------------------------------------------
# Causes
# --------------------------------------------------------------------------------------------

_BLAS_NAMES = ("linalg.*", "matmul", "mm", "bmm", "addmm*", "addmv", "addbmm", "baddbmm", "mv",
               "dot", "vdot", "inner", "tensordot", "einsum", "chain_matmul", "cholesky*",
               "lu*", "qr", "svd*", "pinverse", "det", "logdet", "slogdet", "inverse",
               "triangular_solve", "matrix_exp", "ormqr", "geqrf", "nn.functional.conv*",
               "nn.functional.linear", "nn.functional.bilinear", "cdist", "pca_lowrank",
               "nn.functional.scaled_dot_product_attention", "nn.functional.multi_head*",
               "cov", "corrcoef", "nn.functional.unfold", "nn.functional.fold",
               "_chunk_cat", "nn.functional.grid_sample", "tensorinv", "tensorsolve",
               "nn.functional.pdist", "pdist", "addr", "kron", "trapz", "trapezoid",
               "cumulative_trapezoid", "nn.functional.ctc_loss", "nn.functional.gru*",
               "nn.functional.lstm*", "nn.functional.rnn*", "cholesky_*")
_LIBM_NAMES = ("exp*", "log*", "sin*", "cos*", "tan*", "asin*", "acos*", "atan*", "erf*",
               "sigmoid", "special.*", "pow", "float_power", "lgamma", "digamma", "polygamma*",
               "mvlgamma*", "igamma*", "i0", "xlogy", "sinc", "rsqrt", "sqrt", "nn.functional.elu",
               "nn.functional.selu", "nn.functional.celu", "nn.functional.gelu",
               "nn.functional.silu", "nn.functional.mish", "nn.functional.softplus",
               "nn.functional.logsigmoid", "nn.functional.tanhshrink",
               "nn.functional.softsign", "*softmax*", "softmax", "log_softmax", "logit",
               "nn.functional.rrelu", "hypot", "logaddexp*", "atan2", "arctan2", "ldexp",
               "cosh", "sinh", "nn.functional.hardswish", "nn.functional.glu",
               "nn.functional.binary_cross_entropy*", "nn.functional.poisson_nll_loss",
               "nn.functional.gaussian_nll_loss", "nn.functional.kl_div", "nn.functional.nll_loss",
               "nn.functional.cross_entropy", "nn.functional.soft_margin_loss",
               "nn.functional.multilabel_soft_margin_loss", "remainder", "fmod",
               "nn.functional.normalize", "norm", "dist", "renorm", "cumsum", "cumprod",
               "nn.functional.smooth_l1_loss", "nn.functional.huber_loss", "angle", "erfinv",
               "frexp", "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout*")
_REDUCE_NAMES = ("sum", "nansum", "mean", "nanmean", "std*", "var*", "prod", "cumsum",
                 "cumprod", "logcumsumexp", "logsumexp", "sum_to_size", "trace", "norm",
                 "nn.functional.*loss*", "nn.functional.*pool*", "nn.functional.*norm*",
                 "nn.functional.interpolate*", "nn.functional.embedding_bag",
                 "nn.functional.cosine_similarity", "nn.functional.pairwise_distance",
                 "masked.*", "index_add", "index_reduce*", "scatter_add", "scatter_reduce*",
                 "segment_reduce*", "histc", "bincount", "nn.functional.upsample*",
                 "nn.functional.adaptive*", "nn.functional.avg_pool*", "var_mean*",
                 "std_mean*", "_segment_reduce*", "diff", "trapz", "nn.functional.dropout*")

# What investigation found for particular entries (where the name alone says too little).
KNOWN: dict[str, tuple[str, str]] = {
    "sqrt": ("transcendental", "torch's float32 sqrt over more than 16 elements is MKL VML's, "
             "not correctly rounded (1 ulp off for a sixth of the elements)"),
    "pow": ("transcendental", "a tensor exponent, or a number other than 0, 1, 2, 3, -1, -2, "
            "-0.5 (and 0.5: sqrt's VML), goes through SLEEF's pow in torch"),
    "float_power": ("transcendental", "as pow, in float64"),
    "matrix_exp": ("formula", "torch: degree-18 Taylor polynomials (Bader-Blanes-Casas) in "
                   "float32; tapegrad: SciPy's Pade in float64. torch's own error exceeds "
                   "the float32 tolerance"),
    "nn.functional.leaky_relu": ("formula", "gradient where(x > 0, g, g * slope) in torch"),
    "linspace": ("formula", "torch: start + i * step for the first half, end - (n - 1 - i) * "
                 "step for the second"),
    "logspace": ("formula", "torch: base ** linspace, each half from its end"),
    "nn.functional.softmax": ("transcendental", "exp"),
    "softmax": ("transcendental", "exp"),
    "sigmoid": ("transcendental", "the forward's exp; the gradient is torch's formula"),
    "tanh": ("transcendental", "the forward (SLEEF); torch's gradient fuses 1 - y*y, not "
             "emulated (three times the rule's time)"),
}

# The categories, in the order the page explains them.
CAUSES = {
    "BLAS/LAPACK": "torch calls MKL, NumPy OpenBLAS: their blocked kernels add in other orders, "
                   "and their factorizations (SVD, eigh, QR, solves) round differently; not "
                   "reproducible without MKL itself",
    "transcendental": "torch's vectorized SLEEF / MKL VML functions against NumPy's (each within "
                      "an ulp or so, not the same ulp); reproducing them means reimplementing "
                      "those libraries' polynomials",
    "reduction order": "torch's cascade sum (8 lanes, 4 interleaved accumulators, levels of 16 "
                       "chunks) against NumPy's pairwise sum and BLAS products; also the "
                       "gradients of broadcast, expanded or overlapping inputs, which are sums",
    "signed zero": "the values are equal but a zero's sign differs (-0.0 against torch's +0.0)",
    "formula": "the same mathematics in another order of operations or another intermediate "
               "dtype: the kind that is cheap to fix",
}


def _named(entry: str, names: tuple) -> bool:
    return any(fnmatch.fnmatchcase(entry, p) for p in names)


def cause(t: Tally) -> tuple[str, str]:
    """(category, note) of an entry that is not bit-exact."""
    if t.entry in KNOWN:
        return KNOWN[t.entry]
    if t.out_diff == 0 and t.grad_ulp == 0:
        return "signed zero", ""
    if _named(t.entry, _BLAS_NAMES):
        return "BLAS/LAPACK", ""
    if t.kind == "binary" and t.out_diff == 0:
        return "reduction order", "the gradient of a broadcast operand"
    if _named(t.entry, _REDUCE_NAMES):
        return "reduction order", ""
    if _named(t.entry, _LIBM_NAMES) or t.kind == "unary":
        return "transcendental", ""
    if t.out_diff == 0:
        return "reduction order", "gradient contributions summed"
    return "formula", ""


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def _ulp(u: float) -> str:
    return "-" if u == 0 else ("NaN vs number" if math.isinf(u) else f"{u:.0f}")


def _pct(d: int, n: int) -> str:
    return "-" if not n else f"{d}/{n} ({100 * d / n:.0f}%)"


START, END = "<!-- survey:start -->", "<!-- survey:end -->"


def markdown(tallies: list[Tally], seconds: float) -> str:
    """The generated part of docs/float32.md: the counts and the table."""
    ran = [t for t in tallies if t.status == "ok"]
    exact = [t for t in ran if t.exact]
    differ = sorted((t for t in ran if not t.exact), key=lambda t: t.entry)
    causes = {t.entry: cause(t) for t in differ}
    by_cause = {c: sum(causes[t.entry][0] == c for t in differ) for c in CAUSES}
    out_exact = sum(t.out_diff == 0 for t in ran if t.out_n)
    lines = [
        START,
        f"**{len(exact)} of {len(ran)} entries** with float32 samples are bit-exact, outputs and "
        f"first-order gradients ({out_exact} of {sum(1 for t in ran if t.out_n)} in their "
        f"outputs alone); {len(differ)} are not. By cause:",
        "",
    ]
    lines += [f"- **{c}** ({by_cause[c]}): {why}." for c, why in CAUSES.items()]
    lines += [
        "",
        "| entry | outputs differing | max ulps | gradients differing | max ulps | cause |",
        "|---|---|---|---|---|---|",
    ]
    for t in differ:
        why, note = causes[t.entry]
        lines.append(f"| `{t.entry}` | {_pct(t.out_diff, t.out_n)} | {_ulp(t.out_ulp)} | "
                     f"{_pct(t.grad_diff, t.grad_n)} | {_ulp(t.grad_ulp)} | {why}"
                     f"{': ' + note if note else ''} |")
    lines += ["", f"(Written by the survey in {seconds:.0f} s.)", END]
    return "\n".join(lines)


def write(path: Path, block: str) -> None:
    """Put ``block`` between the markers of ``path`` (the page's own text stays)."""
    text = path.read_text() if path.exists() else f"# float32, bit for bit\n\n{START}\n{END}\n"
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(head + block + tail)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("patterns", nargs="*", help="only entries matching these shell patterns")
    p.add_argument("--no-random", action="store_true", help="only torch's own samples")
    p.add_argument("--write", metavar="PATH", help="write the markdown report there")
    a = p.parse_args(argv)
    ops = h.in_scope_entries()
    if a.patterns:
        ops = [op for op in ops if any(fnmatch.fnmatchcase(h.entry_id(op), pat)
                                       for pat in a.patterns)]
    start = time.perf_counter()
    tallies = []
    for op in ops:
        t = survey(op, extra=not a.no_random)
        tallies.append(t)
        if t.status == "ok" and not t.exact:
            print(f"{t.entry:45} out {_pct(t.out_diff, t.out_n):>22} ulp {_ulp(t.out_ulp):>6}"
                  f"  grad {_pct(t.grad_diff, t.grad_n):>22} ulp {_ulp(t.grad_ulp):>6}"
                  f"  first: {t.where[:60]}", flush=True)
    seconds = time.perf_counter() - start
    ran = [t for t in tallies if t.status == "ok"]
    print(f"{len(ops)} entries; {len(ran)} with float32 samples: "
          f"{sum(t.exact for t in ran)} bit-exact, {sum(not t.exact for t in ran)} not; "
          f"{sum(t.status == 'missing' for t in tallies)} missing; {seconds:.0f} s")
    if a.write:
        write(Path(a.write), markdown(tallies, seconds))
        print(f"wrote {a.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
