"""The precision lab: one small model trained four ways, float32, float16, float16 with a
GradScaler and bfloat16 autocast, side by side.

The lesson of the mixed-precision chapter in one run. The model is a small ReLU network fitting
raw (unnormalized) features with a loss summed over the batch, so its weight gradients are
large numbers; float16 stops at 65504::

    float32                       trains
    float16 (model.half())        a weight gradient overflows to inf (the health check names the
                                  layer and the step), the update writes inf into the weights,
                                  and the loss is NaN from then on
    float16 autocast + GradScaler the scaler starts at 2^16, finds inf gradients, skips those
                                  steps and halves its scale until the gradients fit; then it
                                  trains like float32
    bfloat16 autocast             float32's range: trains with no scaling at all

``precision_lab(steps)`` returns a ``PrecisionReport``: its text (``str(report)``, in English or
Chinese) is a table of the four runs (first and last loss, the first overflow or underflow of a
float16 gradient and in which parameter, the steps the scaler skipped, the time per step), and
``report.plot(path)`` draws the loss curves and the scaler's scale history in one picture.
``tapegrad precision`` runs it from the command line.

The training is written against the torch API (``lib`` is tapegrad, or torch itself: the tests
run the same lab on both and compare the losses and the scale sequences).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

import tapegrad

from .health import _cjk_font, _pad, _width, health
from .i18n import resolve_lang, t

RUNS = ("float32", "float16", "float16+scaler", "bfloat16")


@dataclass(frozen=True)
class LabConfig:
    """The model, the data and the optimizer the four runs share."""

    samples: int = 512  # one batch: every step sees the whole data set
    features: int = 8
    hidden: int = 32
    feature_scale: float = 45.0  # raw features of a few tens: never normalized
    lr: float = 1.5e-6  # plain SGD on a loss summed over the batch
    seed: int = 0


@dataclass
class RunResult:
    """One of the four trainings."""

    name: str
    losses: list[float]
    ms_per_step: float
    overflow: dict[str, Any] | None = None  # first step with an inf/NaN gradient, and where
    underflow: dict[str, Any] | None = None  # first step a gradient lost entries to zero
    scales: list[float] | None = None  # the scaler's scale after each step
    skipped: list[int] = field(default_factory=list)  # steps the scaler skipped
    diagnosis: dict[str, str] | None = None  # the health check's sentence at the overflow,
    # by language

    @property
    def first_nonfinite(self) -> int | None:
        """The first step whose loss was inf or NaN."""
        return next((i for i, v in enumerate(self.losses) if not math.isfinite(v)), None)


def _data(lib: Any, cfg: LabConfig) -> tuple:
    lib.manual_seed(cfg.seed)
    x = lib.randn(cfg.samples, cfg.features) * cfg.feature_scale
    w = lib.randn(cfg.features, 1)
    y = lib.tanh(x @ w / cfg.feature_scale) * 8  # a smooth target of a few units
    return x, y


def _model(lib: Any, cfg: LabConfig) -> Any:
    lib.manual_seed(cfg.seed + 1)
    nn = lib.nn
    return nn.Sequential(nn.Linear(cfg.features, cfg.hidden), nn.ReLU(),
                         nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU(),
                         nn.Linear(cfg.hidden, 1))


def _grad_arrays(model: Any) -> list[tuple[str, np.ndarray]]:
    return [(n, p.grad.detach().float().numpy()) for n, p in model.named_parameters()
            if p.grad is not None]


def train(name: str, steps: int, lib: Any = None, cfg: LabConfig | None = None,
          reference_zeros: list[dict[str, int]] | None = None) -> tuple[RunResult, list]:
    """Train one of ``RUNS``; also returns each step's count of exact-zero gradient entries
    per parameter (the float32 run's are the reference the float16 run's underflow is
    measured against)."""
    if lib is None:
        lib = tapegrad
    cfg = cfg or LabConfig()
    x, y = _data(lib, cfg)
    model = _model(lib, cfg)
    if name == "float16":
        model = model.half()
        x, y = x.half(), y.half()
    opt = lib.optim.SGD(model.parameters(), lr=cfg.lr)
    low = {"float16+scaler": lib.float16, "bfloat16": lib.bfloat16}.get(name)
    scaler = lib.amp.GradScaler("cpu") if name == "float16+scaler" else None
    F = lib.nn.functional
    result = RunResult(name, [], 0.0, scales=[] if scaler is not None else None)
    zeros: list[dict[str, int]] = []
    start = time.perf_counter()
    first_done = None
    for step in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=low or lib.bfloat16, enabled=low is not None):
            loss = F.mse_loss(model(x), y, reduction="sum")
        if scaler is not None:
            scaler.scale(loss).backward()
            scale = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            if scaler.get_scale() < scale:  # found inf/NaN: the step was skipped
                result.skipped.append(step)
            result.scales.append(scaler.get_scale())  # type: ignore[union-attr]
        else:
            loss.backward()
            _watch(result, step, model, zeros, reference_zeros, lib)
            opt.step()
        result.losses.append(float(loss.item()))
        if step == 0 and steps > 1:
            first_done = time.perf_counter()
    timed = steps - 1 if steps > 1 else 1  # the first step pays for first-use imports
    result.ms_per_step = (time.perf_counter() - (first_done or start)) / timed * 1e3
    return result, zeros


def _watch(result: RunResult, step: int, model: Any, zeros: list, reference: list | None,
           lib: Any) -> None:
    """Note the first inf/NaN gradient (overflow) and the first gradient with more exact
    zeros than the float32 run had at the same step (underflow)."""
    grads = _grad_arrays(model)
    zeros.append({n: int((g == 0).sum()) for n, g in grads})
    if result.overflow is None:
        for n, g in grads:
            bad = int((~np.isfinite(g)).sum())
            if bad:
                result.overflow = {"step": step, "parameter": n, "count": bad, "size": g.size}
                result.diagnosis = _health_sentences(model, lib)
                break
    if result.underflow is None and reference is not None and step < len(reference):
        for n, g in grads:
            lost = zeros[-1][n] - reference[step].get(n, 0)
            if lost > 0 and np.isfinite(g).all():
                result.underflow = {"step": step, "parameter": n, "count": lost,
                                    "size": g.size}
                break


def _health_sentences(model: Any, lib: Any) -> dict[str, str] | None:
    """The gradient health check's finding about the non-finite gradient, in each language
    (tapegrad's own instrument: None for another library)."""
    if getattr(lib, "__name__", "") != "tapegrad":
        return None
    out = {}
    for lang in ("en", "zh"):
        found = [f for f in health(model, lang=lang).diagnosis() if f.kind == "nan"]
        if found:
            out[lang] = found[0].text
    return out or None


class PrecisionReport:
    """The four runs side by side (``str()`` is the text, ``plot()`` the picture)."""

    def __init__(self, runs: list[RunResult], steps: int, lang: str | None = None) -> None:
        self.runs = runs
        self.steps = steps
        self.lang = resolve_lang(lang)

    def __getitem__(self, name: str) -> RunResult:
        return next(r for r in self.runs if r.name == name)

    def _label(self, name: str) -> str:
        return t(f"precision.run.{name}", self.lang)

    def table(self) -> str:
        lang = self.lang
        head = [t("precision.col.run", lang), t("precision.col.first", lang),
                t("precision.col.last", lang), t("precision.col.nonfinite", lang),
                t("precision.col.skipped", lang), t("precision.col.ms", lang)]
        rows = [head]
        for r in self.runs:
            bad = r.first_nonfinite
            rows.append([self._label(r.name), _num(r.losses[0]), _num(r.losses[-1]),
                         "-" if bad is None else str(bad),
                         "-" if r.scales is None else str(len(r.skipped)),
                         f"{r.ms_per_step:.2f}"])
        widths = [max(_width(row[i]) for row in rows) for i in range(len(head))]
        return "\n".join("  ".join(_pad(c, w, i) for i, (c, w) in enumerate(zip(
            row, widths, strict=True))).rstrip() for row in rows)

    def findings(self) -> list[str]:
        """The sentences under the table: where float16 broke, what the scaler did."""
        lang, out = self.lang, []
        half = self["float16"]
        if half.overflow is not None:
            o = half.overflow
            out.append(t("precision.overflow", lang, step=o["step"], parameter=o["parameter"],
                         count=o["count"], size=o["size"]))
        if half.underflow is not None:
            u = half.underflow
            out.append(t("precision.underflow", lang, step=u["step"], parameter=u["parameter"],
                         count=u["count"], size=u["size"]))
        if half.overflow is None and half.underflow is None:
            out.append(t("precision.half_ok", lang))
        if half.diagnosis and lang in half.diagnosis:
            out.append(t("precision.health", lang, text=half.diagnosis[lang]))
        bad = half.first_nonfinite
        if bad is not None:
            out.append(t("precision.nan_loss", lang, step=bad))
        sc = self["float16+scaler"]
        if sc.scales:
            first_good = next((i for i in range(len(sc.scales)) if i not in sc.skipped), None)
            out.append(t("precision.scaler", lang, skipped=len(sc.skipped),
                         scale=_num(sc.scales[-1]), first=first_good))
        bf = self["bfloat16"]
        if bf.first_nonfinite is None:
            out.append(t("precision.bf16", lang, last=_num(bf.losses[-1]),
                         f32=_num(self["float32"].losses[-1])))
        return out

    def __str__(self) -> str:
        title = t("precision.title", self.lang, steps=self.steps)
        return "\n".join([title, "", self.table(), ""] + self.findings())

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "runs": [asdict(r) for r in self.runs]}

    def plot(self, path: str | None = None) -> Any:
        """The loss curves of the four runs, and the scaler's scale per step (matplotlib)."""
        # matplotlib: optional (pip install 'tapegrad[viz]'), loaded on first use
        import matplotlib

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt  # (after matplotlib.use)

        lang = self.lang
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8),
                                      gridspec_kw={"width_ratios": [3, 2]})
        _cjk_font(fig, lang)
        colors = {"float32": "#1f77b4", "float16": "#d62728", "float16+scaler": "#ff7f0e",
                  "bfloat16": "#2ca02c"}
        for r in self.runs:
            ys = np.array(r.losses, dtype=float)
            finite = np.isfinite(ys)
            steps = np.arange(len(ys))
            ax.plot(steps[finite], ys[finite], color=colors[r.name], label=self._label(r.name),
                    linestyle="--" if r.name == "bfloat16" else "-")
            bad = r.first_nonfinite
            if bad is not None:
                top = np.nanmax(np.where(np.isfinite(ys), ys, np.nan)) if finite.any() else 1.0
                ax.plot([bad], [top], marker="x", markersize=10, color=colors[r.name])
                ax.annotate(t("precision.plot.nan", lang, step=bad), (bad, top),
                            textcoords="offset points", xytext=(6, -12),
                            color=colors[r.name], fontsize=8)
        ax.set_yscale("log")
        ax.set_xlabel(t("precision.plot.step", lang))
        ax.set_ylabel(t("precision.plot.loss", lang))
        ax.set_title(t("precision.plot.title", lang))
        ax.legend(fontsize=8)
        sc = self["float16+scaler"]
        if sc.scales:
            ax2.step(np.arange(len(sc.scales)), sc.scales, where="post", color=colors[sc.name])
            for s in sc.skipped:
                ax2.axvline(s, color="#dddddd", linewidth=0.8, zorder=0)
            ax2.set_yscale("log", base=2)
        ax2.set_xlabel(t("precision.plot.step", lang))
        ax2.set_title(t("precision.plot.scale", lang))
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=110)
            plt.close(fig)
        return fig


def _num(v: float) -> str:
    if not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return f"{v:.4g}"


def precision_lab(steps: int = 60, *, lang: str | None = None, lib: Any = None,
                  config: LabConfig | None = None) -> PrecisionReport:
    """Train the lab's model four ways and report them side by side.

    Args:
        steps: SGD steps per run.
        lang: "en" or "zh" (default: ``TAPEGRAD_LANG``, then the locale).
        lib: the library to train with (tapegrad; torch runs the same lab).
        config: the model, data and learning rate (``LabConfig``).

    Example:
        >>> report = torch.show.precision_lab(steps=20)
        >>> report["float16"].first_nonfinite is not None   # float16 overflowed
        True
        >>> report["bfloat16"].first_nonfinite is None
        True
    """
    f32, zeros = train("float32", steps, lib, config)
    half, _ = train("float16", steps, lib, config, reference_zeros=zeros)
    scaled, _ = train("float16+scaler", steps, lib, config)
    bf16, _ = train("bfloat16", steps, lib, config)
    return PrecisionReport([f32, half, scaled, bf16], steps, lang)


def precision_command(argv: Sequence[str]) -> int:
    """``tapegrad precision [--steps N] [--plot FILE] [--json FILE] [--lang en|zh]``."""
    parser = argparse.ArgumentParser(
        prog="tapegrad precision",
        description="train one small model in float32, float16, float16 with a GradScaler and "
                    "bfloat16 autocast, and report the four runs side by side")
    parser.add_argument("--steps", type=int, default=60, help="SGD steps per run (default 60)")
    parser.add_argument("--plot", metavar="FILE", help="draw the loss curves and the scale "
                        "history into FILE (.png or .svg; needs matplotlib)")
    parser.add_argument("--json", metavar="FILE", help="write the runs' numbers as JSON")
    parser.add_argument("--lang", choices=("en", "zh"), help="language of the report")
    args = parser.parse_args(list(argv))
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    report = precision_lab(args.steps, lang=args.lang)
    print(report)
    if args.plot:
        report.plot(args.plot)
        print("\n" + t("precision.wrote", report.lang, path=args.plot))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report.to_dict(), f, indent=1)
    return 0


__all__ = ["LabConfig", "PrecisionReport", "RunResult", "RUNS", "precision_lab", "train",
           "precision_command"]
