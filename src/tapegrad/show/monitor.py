"""The health monitor: the gradient health check at every optimizer step, over training.

    monitor = Monitor(model, optimizer)          # attach (or: with Monitor(...) as monitor:)
        forward   -> forward hooks: which modules ran, under no_grad or not, dead ReLU units
        backward  -> the loss and its graph (which parameters are on its path), where a NaN
                     first appeared; leaf hooks: was the old gradient still there (zero_grad
                     never called)?
        opt.step  -> pre-step hook copies the weights, post-step hook measures the update and
                     records one row of numbers per parameter in ``monitor.history``
    monitor.report()   the health report of the last step, with the diagnosis
    monitor.plot(path) gradient norm per layer over the steps (log scale)
    monitor.detach()   everything taken out again

Nothing here costs anything while no monitor is attached: the hooks are registered on attach
and removed on detach, and ``Tensor.backward`` / ``Tensor.detach`` are wrapped only while some
monitor (or ``ForwardWatch``) is attached. Attached, a step costs a copy of the weights, a
finiteness check of every gradient the engine passes on (to find where a NaN was born), and a
Python call per module call. The loss is seen through ``loss.backward()``; a backward started
with ``torch.autograd.backward`` or ``autograd.grad`` is not watched.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import graph as _graph
from .health import (
    Context,
    HealthReport,
    _norm,
    build_report,
    forward_nonfinite_origin,
    graph_leaves,
    named_parameters_of,
    param_stats,
    plot_grad_norms,
)
from .i18n import resolve_lang, t
from .watch import ForwardWatch, listen, unlisten

# ---------------------------------------------------------------------------------------------
# The monitor


class Monitor:
    """Record the gradient health at every optimizer step (see the module docstring).

    Args:
        model: an ``nn.Module`` (or named parameters: then no forward hooks).
        optimizer: the optimizer whose steps are recorded; without one, every ``backward``
            call counts as a step.
        lang: the language of ``report()`` and ``plot()``.
        on_step: called as ``on_step(step, loss)`` after each recorded step.

    Example:
        >>> model = torch.nn.Linear(3, 1)
        >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> with torch.show.Monitor(model, opt) as monitor:
        ...     for _ in range(3):
        ...         opt.zero_grad()
        ...         model(torch.ones(2, 3)).sum().backward()
        ...         opt.step()
        >>> len(monitor.history)
        3
    """

    def __init__(self, model: Any, optimizer: Any = None, *, lang: str | None = None,
                 on_step: Callable[[int, float | None], None] | None = None) -> None:
        self.model = model
        self.optimizer = optimizer
        self.lang = lang
        self.on_step = on_step
        self.named = [(n, p) for n, p in named_parameters_of(model)]
        self.history: list[dict[str, Any]] = []
        self._prev: dict[str, np.ndarray] = {}
        self._updates: dict[str, float] = {}
        self._fresh: dict[str, bool] = {}
        self._stale_now: set[str] = set()
        self._stale_steps: dict[str, int] = {}
        self._loss: float | None = None
        self._root: Any = None
        self._origin: dict[str, Any] | None = None
        self._bw_origin: dict[str, Any] | None = None
        self._handles: list[Any] = []
        self._watch: ForwardWatch | None = None
        self.attached = False
        self.attach()

    # -- attaching -------------------------------------------------------------------------------

    def attach(self) -> Monitor:
        if self.attached:
            return self
        if self.optimizer is not None:
            self._handles.append(self.optimizer.register_step_pre_hook(self._pre_step))
            self._handles.append(self.optimizer.register_step_post_hook(self._post_step))
        for name, p in self.named:
            if p._requires_grad and p.grad_fn is None:
                self._fresh[name] = True
                self._handles.append(p.register_hook(self._grad_hook(name, p)))
        if hasattr(self.model, "named_modules"):
            self._watch = ForwardWatch(self.model)
        listen(self)
        self.attached = True
        return self

    def detach(self) -> None:
        """Take every hook out again."""
        for h in self._handles:
            h.remove()
        self._handles = []
        if self._watch is not None:
            self._watch.detach()
        unlisten(self)
        self.attached = False

    def __enter__(self) -> Monitor:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()

    # -- what the hooks see ------------------------------------------------------------------------

    def _grad_hook(self, name: str, p: Tensor) -> Callable:
        def hook(g: Tensor) -> None:
            if self._fresh.get(name):
                self._fresh[name] = False
                old = p._grad
                if old is not None and np.any(np.asarray(old._data) != 0):
                    self._stale_now.add(name)  # the last step's gradient is still there

        return hook

    def _before_backward(self, loss: Tensor) -> None:
        self._root = loss.grad_fn
        self._loss = None
        self._bw_origin = None
        if loss._data.size == 1:
            self._loss = float(np.asarray(loss._data, dtype=np.float64).reshape(()))
        if self._watch is not None:
            self._watch.snapshot()
        if self._loss is not None and not np.isfinite(self._loss) and self._root is not None:
            self._origin = forward_nonfinite_origin(self._root)  # before backward frees it
        else:
            self._origin = None

    def _on_nonfinite(self, node: Any, i: int) -> None:
        if self._bw_origin is None:
            entry = _graph._forward_stacks.get(node)
            frames = entry[0] if entry else None
            where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None
            self._bw_origin = {"phase": "backward", "op": node.name(), "where": where}

    def _after_backward(self, loss: Tensor) -> None:
        if self._origin is None and self._bw_origin is not None:
            self._origin = self._bw_origin
        if self.optimizer is None:
            self._record()

    def _on_detach(self, node: Any) -> None:
        pass

    def _pre_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self._prev = {name: np.array(p._data, copy=True) for name, p in self.named}

    def _post_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self._updates = {
            name: _norm(np.asarray(p._data, dtype=np.float64) - self._prev[name])
            for name, p in self.named if name in self._prev
        }
        self._prev = {}
        self._record()

    def _record(self) -> None:
        for name in self._stale_now:
            self._stale_steps[name] = self._stale_steps.get(name, 0) + 1
        entry = {
            "step": len(self.history) + 1,
            "loss": self._loss,
            "stale": sorted(self._stale_now),
            "params": {
                name: param_stats(name, p, self._updates.get(name)).__dict__
                for name, p in self.named
            },
        }
        self.history.append(entry)
        self._stale_now = set()
        for name in self._fresh:
            self._fresh[name] = True
        if self.on_step is not None:
            self.on_step(len(self.history), self._loss)

    # -- results -------------------------------------------------------------------------------

    def context(self) -> Context:
        """What the monitor knows, for the diagnosis."""
        ctx = Context(step=len(self.history) or None, updates=dict(self._updates))
        if self._root is not None:
            ctx.graph_params = graph_leaves(self._root)
        if self._watch is not None:
            ctx.modules = self._watch.last_calls or self._watch.calls
        ctx.nan_origin = self._origin
        for name, _ in self.named:
            steps = self._stale_steps.get(name)
            if steps:
                norms = [h["params"][name]["grad_norm"] for h in self.history
                         if h["params"][name]["grad_norm"] is not None]
                ctx.stale[name] = (steps, norms[0] if norms else 0.0,
                                   norms[-1] if norms else 0.0)
        return ctx

    def report(self, lang: str | None = None) -> HealthReport:
        """The health report of the last recorded step, with everything the monitor saw."""
        lang = resolve_lang(lang or self.lang)
        return build_report(self.named, self.context(), lang, optimizer=self.optimizer)

    def plot(self, path: str | None = None, lang: str | None = None) -> Any:
        """Gradient norm per layer over the steps (log scale): a matplotlib Figure, written to
        ``path`` if given. Needs matplotlib (``pip install 'tapegrad[viz]'``). The layers are
        the weight matrices (every parameter where there is none); ``plot_grad_norms`` draws
        it."""
        names = [n for n, p in self.named if p.dim() >= 2] or [n for n, _ in self.named]
        return plot_grad_norms(self.history, names, path, lang=lang or self.lang)

    def svg(self, lang: str | None = None) -> str:
        """The plot as SVG text (for an HTML page)."""
        buf = io.StringIO()
        self.plot(lang=lang).savefig(buf, format="svg")
        return buf.getvalue()

    def __repr__(self) -> str:
        state = "attached" if self.attached else "detached"
        return f"<tapegrad.show.Monitor: {len(self.history)} steps recorded, {state}>"

    def _repr_html_(self) -> str:
        """What Jupyter shows: the steps recorded, the plot of gradient norm per layer over
        them (where matplotlib is installed) and the health report of the last step."""
        lang = resolve_lang(self.lang)
        state = t("monitor.attached" if self.attached else "monitor.detached", lang)
        parts = ['<div class="tg-monitor"><p style="font-weight:bold;margin:0.3em 0">'
                 + html.escape(t("monitor.html_title", lang, steps=len(self.history),
                                 state=state)) + "</p>"]
        if not self.history:
            parts.append(f"<p>{html.escape(t('monitor.no_steps', lang))}</p></div>")
            return "".join(parts)
        try:
            svg = self.svg(lang)
        except ImportError:
            parts.append(f"<p>{html.escape(t('doctor.no_plot', lang))}</p>")
        else:
            svg = svg[svg.find("<svg"):]
            parts.append(f'<div style="max-width:100%;overflow-x:auto">{svg}</div>')
        parts.append(self.report(lang).html())
        parts.append("</div>")
        return "".join(parts)


__all__ = ["ForwardWatch", "Monitor"]
