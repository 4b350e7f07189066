"""The demo's training run: data, the loop, the checkpoint that makes it resumable, the outputs.

``train(settings)`` trains ``model.GPT`` on a text, character by character:

- the text becomes a tensor of character ids; every step draws ``batch_size`` random windows of
  ``block_size + 1`` characters (inputs and the next character to predict) from a ``Generator``
  of its own, so the data's position is a generator state that the checkpoint stores;
- AdamW with weight decay on the matrices only, gradients clipped to norm 1, and a learning rate
  that warms up linearly and then follows a cosine down to a tenth (``LambdaLR``);
- the checkpoint (``tapegrad.save``) holds everything the next step depends on: the weights, the
  optimizer's moments, the scheduler, the data generator's state, the global RNG state and the
  losses so far. A run resumed from it continues with exactly the losses an uninterrupted run
  would have printed;
- Ctrl-C (SIGINT) stops the run after the step in progress, so the checkpoint is never written
  between a backward and its optimizer step; a second Ctrl-C quits at once (``QuitNow``, a
  ``KeyboardInterrupt``), writing nothing;
- every step records the gradient norm of each weight matrix (before clipping), for the plot of
  gradient norm per layer over training (``tapegrad.show.plot_grad_norms``); the checkpoint
  keeps them too.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tapegrad as torch
import tapegrad.nn.functional as F

from .model import GPT, GPTConfig
from .progress import progress_bar

__all__ = ["Settings", "TrainResult", "QuitNow", "train", "load_text", "BUNDLED_TEXTS"]

DATA = Path(__file__).resolve().parent / "data"
BUNDLED_TEXTS = {"en": DATA / "devils_dictionary.txt", "zh": DATA / "tang_song_poems.txt"}
CHECKPOINT = "checkpoint.pt"


@dataclass
class Settings:
    """What a run is: saved in the checkpoint, so that ``--resume`` rebuilds the same run."""

    text: str                      # path of the training text
    steps: int = 600
    batch_size: int = 32
    block_size: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 96
    lr: float = 6e-3
    warmup: int = 30
    weight_decay: float = 0.1
    seed: int = 0
    text_sha256: str = field(default="", compare=False)


@dataclass
class TrainResult:
    model: GPT
    chars: str                     # the vocabulary: id i is chars[i]
    losses: list[float]
    step: int                      # steps done in all (earlier runs included)
    interrupted: bool
    seconds: float                 # this run's training time
    settings: Settings
    start_step: int = 0            # steps done before this run (a resumed run's checkpoint)
    grad_names: list[str] = field(default_factory=list)  # the weight matrices' names
    # per step (losses' order): the gradient norm of each of grad_names, before clipping
    # ([] for a step of a checkpoint written before they were recorded)
    grad_norms: list[list[float]] = field(default_factory=list)

    @property
    def steps_this_run(self) -> int:
        return self.step - self.start_step

    def grad_history(self) -> list[dict[str, Any]]:
        """The recorded gradient norms in ``Monitor.history``'s form, for ``plot_grad_norms``."""
        return [{"step": k, "params": {n: {"grad_norm": g}
                                       for n, g in zip(self.grad_names, row, strict=True)}}
                for k, row in enumerate(self.grad_norms, 1) if row]


def load_text(path: str | Path) -> str:
    return Path(path).read_text(encoding="utf-8")


def lr_factor(step: int, warmup: int, steps: int) -> float:
    """Linear warm-up to 1, then a cosine from 1 down to 0.1 at the last step."""
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def _optimizer(model: GPT, s: Settings) -> torch.optim.AdamW:
    # weight decay pulls matrices towards 0; biases, LayerNorm gains and embeddings are left alone
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "emb" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "emb" not in n)]
    groups = [{"params": decay, "weight_decay": s.weight_decay},
              {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=s.lr, betas=(0.9, 0.99))


def get_batch(data: torch.Tensor, s: Settings,
              generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` random windows: inputs ``x`` and targets ``y`` (x shifted by one)."""
    starts = torch.randint(len(data) - s.block_size - 1, (s.batch_size,), generator=generator)
    idx = starts.unsqueeze(1) + torch.arange(s.block_size + 1)
    windows = data[idx]
    return windows[:, :-1], windows[:, 1:]


class QuitNow(KeyboardInterrupt):
    """The second Ctrl-C: quit at once, writing nothing (the step in progress is unfinished)."""


class _StopOnSigint:
    """While active, the first Ctrl-C sets ``requested`` (the loop stops after its step) and
    says so on stderr; the second raises ``QuitNow``."""

    def __init__(self, message: str = "") -> None:
        self.requested = False
        self.message = message

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise QuitNow
        self.requested = True
        if self.message:  # os.write: a signal handler must not re-enter sys.stderr's buffer
            os.write(2, ("\n" + self.message + "\n").encode("utf-8", "replace"))

    @contextlib.contextmanager
    def active(self) -> Iterator[_StopOnSigint]:
        if threading.current_thread() is not threading.main_thread():
            yield self  # signals reach the main thread only
            return
        previous = signal.signal(signal.SIGINT, self._handler)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)


def build(settings: Settings, text: str) -> tuple[GPT, str, torch.Tensor]:
    chars = "".join(sorted(set(text)))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    torch.manual_seed(settings.seed)
    config = GPTConfig(vocab_size=len(chars), block_size=settings.block_size,
                       n_layer=settings.n_layer, n_head=settings.n_head, n_embd=settings.n_embd)
    return GPT(config), chars, data


def train(settings: Settings, out: Path, *, resume: bool = False, device: str = "cpu",
          show_progress: bool = True, labels: dict[str, str] | None = None,
          callback: Callable[[int, float], None] | None = None,
          on_start: Callable[[GPT, str, Settings, int], None] | None = None) -> TrainResult:
    """Train (or, with ``resume``, continue from ``out/checkpoint.pt``) and save the checkpoint.

    ``callback(step, loss)`` is called after each completed step; raising ``KeyboardInterrupt``
    from it stops the run as Ctrl-C does. ``on_start(model, chars, settings, step)`` is called
    once the model is built (and restored), before the first step.
    """
    labels = labels or {}
    out.mkdir(parents=True, exist_ok=True)
    state = None
    if resume:
        state = torch.load(out / CHECKPOINT, weights_only=True)
        saved = Settings(**state["settings"])
        if settings.steps:  # a new total (0 keeps the checkpoint's): the schedule is re-planned
            saved.steps = settings.steps
        settings = saved
    text = load_text(settings.text)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if state is not None and digest != settings.text_sha256:
        raise ValueError(f"{settings.text} is not the text the checkpoint was trained on")
    settings.text_sha256 = digest
    if len(text) < settings.block_size + 2:
        raise ValueError(f"the text has {len(text)} characters; the demo needs at least "
                         f"{settings.block_size + 2}")

    model, chars, data = build(settings, text)
    model.to(torch.device(device))
    optimizer = _optimizer(model, settings)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, settings.warmup, settings.steps))
    generator = torch.Generator().manual_seed(settings.seed)
    losses: list[float] = []
    watched = [(n, p) for n, p in model.named_parameters() if p.dim() >= 2]
    grad_names = [n for n, _ in watched]
    grad_norms: list[list[float]] = []
    step = 0
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        generator.set_state(state["data_rng"])
        torch.set_rng_state(state["rng"])
        losses, step = list(state["losses"]), int(state["step"])
        if state.get("grad_names") == grad_names:
            grad_norms = [list(row) for row in state["grad_norms"]]
        grad_norms += [[] for _ in range(len(losses) - len(grad_norms))]
    start_step = step

    if on_start is not None:
        on_start(model, chars, settings, step)
    stop = _StopOnSigint(labels.get("stopping", ""))
    interrupted = False
    start = time.perf_counter()
    bar = progress_bar(settings.steps, step, enabled=show_progress, desc=labels.get("train", ""))
    model.train()
    try:
        with stop.active():
            while step < settings.steps:
                x, y = get_batch(data, settings, generator)
                logits = model(x)
                loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.reshape(-1))
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                norms = [p.grad.norm().item() if p.grad is not None else 0.0
                         for _, p in watched]
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                step += 1
                losses.append(loss.item())
                grad_norms.append(norms)
                bar.update(losses[-1])
                if callback is not None:
                    callback(step, losses[-1])
                if stop.requested:
                    raise KeyboardInterrupt
    except QuitNow:
        raise  # the second Ctrl-C: no checkpoint (the step in progress is half done)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    partial = out / (CHECKPOINT + ".partial")  # renamed when whole: Ctrl-C can't leave half
    try:
        torch.save({"settings": asdict(settings), "step": step, "losses": losses,
                    "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "data_rng": generator.get_state(),
                    "rng": torch.get_rng_state(), "grad_names": grad_names,
                    "grad_norms": grad_norms}, partial)
        os.replace(partial, out / CHECKPOINT)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return TrainResult(model, chars, losses, step, interrupted, seconds, settings, start_step,
                       grad_names, grad_norms)


def sample(result: TrainResult, prompt: str, n: int, seed: int = 0) -> str:
    """``n`` characters the model writes after ``prompt`` (characters it does not know are
    dropped from the prompt)."""
    stoi = {c: i for i, c in enumerate(result.chars)}
    ids = [stoi[c] for c in prompt if c in stoi] or [0]
    result.model.eval()
    generator = torch.Generator().manual_seed(seed)
    out = result.model.generate(torch.tensor([ids]), n, generator=generator)
    return "".join(result.chars[i] for i in out[0].tolist())


def fresh_gradients(result: TrainResult, settings_text: str, seed: int = 0) -> torch.Tensor:
    """One forward and backward on a batch, so the model's ``.grad`` hold current gradients for
    the health report (the checkpoint is already written: this changes no saved state)."""
    model = result.model
    model.train()
    stoi = {c: i for i, c in enumerate(result.chars)}
    text = load_text(settings_text)
    data = torch.tensor([stoi.get(c, 0) for c in text], dtype=torch.long)
    s = Settings(text=settings_text, block_size=model.config.block_size)
    x, y = get_batch(data, s, torch.Generator().manual_seed(seed))
    model.zero_grad(set_to_none=True)
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.reshape(-1))
    loss.backward()
    return loss


def write_loss_curve(losses: list[float], out: Path, title: str) -> list[Path]:
    """``losses.csv`` always; ``loss_curve.png`` when matplotlib is installed."""
    written = [out / "losses.csv"]
    with open(written[0], "w", encoding="utf-8") as f:
        f.write("step,loss\n")
        for i, v in enumerate(losses, 1):
            f.write(f"{i},{v:.6f}\n")
    try:
        # matplotlib: optional, loaded on first use (the Agg backend chosen before pyplot loads)
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # (after matplotlib.use)
    except ImportError:
        return written
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(range(1, len(losses) + 1), losses, lw=0.8, alpha=0.5, label="loss")
    if len(losses) >= 20:
        k = max(5, len(losses) // 30)
        smooth = [sum(losses[max(0, i - k + 1):i + 1]) / len(losses[max(0, i - k + 1):i + 1])
                  for i in range(len(losses))]
        ax.plot(range(1, len(losses) + 1), smooth, lw=2, label=f"mean of {k}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "loss_curve.png", dpi=120)
    plt.close(fig)
    written.append(out / "loss_curve.png")
    return written

