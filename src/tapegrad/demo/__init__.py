"""``tapegrad demo``: train a small GPT on a bundled text, then show what autograd saw.

It runs on a fresh installation with no network, in about a minute on a 2-core machine:

1. trains a character-level GPT (``model.py``) on a public-domain text shipped in ``data/``
   (``data/SOURCES.md`` says which and why): Ambrose Bierce's *The Devil's Dictionary* in English,
   or Tang and Song poems with ``--lang zh``; ``--text FILE`` trains on your own;
2. prints text sampled from the trained model;
3. prints the gradient health report of the trained model, plots the gradient norm of each
   layer over the training steps (``gradient_health.png``, the plot of ``tapegrad doctor``:
   ``tapegrad.show.plot_grad_norms``) and draws the autograd graph of one attention block (from
   ``tapegrad.show``, when it is installed);
4. writes everything into one folder, named when the demo starts: ``--out DIR``, by default
   ``tapegrad/demo`` in the user's cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``; on
   Windows ``%LOCALAPPDATA%``), so that it never litters the current folder: the loss curve
   (``loss_curve.png``, and ``losses.csv``), ``sample.txt``, the pictures and
   ``checkpoint.pt``.

Its summary compares the loss of the first step with the mean of the last steps (named by their
numbers, with the last step's own loss), and counts the steps this run trained (after
``--resume``, not those of the checkpoint). Ctrl-C stops after the current step and still writes
all of it; a second Ctrl-C quits at once. ``--resume`` continues from the checkpoint with the
losses an uninterrupted run would have had (``train.py`` explains how).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tapegrad as torch

from . import train as T

__all__ = ["demo_command", "main"]

# Steps that take about a minute on a 2-core machine for each bundled text (the Chinese text has
# 2,841 distinct characters against the English 90-odd, so its output layer costs more a step).
DEFAULT_STEPS = {"en": 700, "zh": 350}
PROMPTS = {"en": "LOVE, n.  ", "zh": "《"}

MESSAGES = {
    "en": {
        "intro": "tapegrad demo: a character-level GPT ({params:,} parameters) learns {name} "
                 "({chars:,} characters, {vocab} distinct), {steps} steps.",
        "resumed": "Resuming at step {step} of {steps} from {path}.",
        "where": "Writing to {out} (--out DIR writes elsewhere).",
        "need_plots": "Not installed: matplotlib, for loss_curve.png and gradient_health.png "
                      "(pip install matplotlib, or the [viz] extra).",
        "need_dot": "Not installed: Graphviz's dot program, for attention_graph.svg "
                    "(apt install graphviz, or brew install graphviz).",
        "done": "Trained {steps} steps in {secs:.1f} s.",
        "done_resumed": "Trained {steps} steps in this run (steps {a}-{b} of {total}) in "
                        "{secs:.1f} s.",
        "loss_one": "Loss at step 1: {first:.3f}.",
        "loss_last": "Loss: {first:.3f} at step 1 -> {last:.3f} at step {b}.",
        "loss_mean": "Loss: {first:.3f} at step 1 -> {mean:.3f}, the mean of steps {a}-{b} "
                     "(step {b} alone: {last:.3f}).",
        "stopping": "Ctrl-C: stopping after this step, then writing the results (Ctrl-C again "
                    "quits at once).",
        "quit": "tapegrad demo: quit at once (Ctrl-C).",
        "interrupted": "Stopped at step {step} of {steps} (Ctrl-C); the checkpoint is saved: "
                       "`tapegrad demo --resume --out {out}` continues.",
        "already": "The checkpoint has already done all {steps} steps (pass a larger --steps "
                   "to train on).",
        "sample": "Sampled text:",
        "health": "Gradient health:",
        "no_show": "(The gradient health report and the graph picture come with tapegrad.show, "
                   "which this installation lacks.)",
        "failed": "({what} not written: {err})",
        "no_plot": "(matplotlib is not installed: the loss curve is in losses.csv; "
                   "`pip install matplotlib` for the picture.)",
        "written": "Written to {out}/:",
        "train": "training",
        "curve_title": "tapegrad demo: training loss",
        "grad_title": "Gradient norm per layer over training (before clipping)",
        "no_checkpoint": "tapegrad demo: error: no checkpoint to resume from: {path}",
    },
    "zh": {
        "intro": "tapegrad 演示：一个字符级 GPT（{params:,} 个参数）学习{name}"
                 "（{chars:,} 个字符，{vocab} 个不同的字），共 {steps} 步。",
        "resumed": "从 {path} 的第 {step} 步继续（共 {steps} 步）。",
        "where": "结果写入 {out}（用 --out 目录 可写到别处）。",
        "need_plots": "未安装 matplotlib：loss_curve.png 和 gradient_health.png 需要它"
                      "（pip install matplotlib，或安装 [viz] 附加依赖）。",
        "need_dot": "未安装 Graphviz 的 dot 程序：attention_graph.svg 需要它"
                    "（apt install graphviz 或 brew install graphviz）。",
        "done": "训练 {steps} 步，用时 {secs:.1f} 秒。",
        "done_resumed": "本次训练 {steps} 步（第 {a}-{b} 步，共 {total} 步），用时 {secs:.1f} 秒。",
        "loss_one": "第 1 步的损失：{first:.3f}。",
        "loss_last": "损失：第 1 步 {first:.3f} -> 第 {b} 步 {last:.3f}。",
        "loss_mean": "损失：第 1 步 {first:.3f} -> 第 {a}-{b} 步的平均 {mean:.3f}"
                     "（仅第 {b} 步：{last:.3f}）。",
        "stopping": "Ctrl-C：这一步结束后停止，然后写出结果（再按一次 Ctrl-C 立即退出）。",
        "quit": "tapegrad demo：已立即退出（Ctrl-C）。",
        "interrupted": "在第 {step} 步停止（共 {steps} 步，Ctrl-C）；检查点已保存，"
                       "`tapegrad demo --resume --out {out}` 可继续训练。",
        "already": "检查点已完成全部 {steps} 步（给出更大的 --steps 可继续训练）。",
        "sample": "模型生成的文本：",
        "health": "梯度健康报告：",
        "no_show": "（梯度健康报告和计算图图片由 tapegrad.show 提供，当前安装中没有它。）",
        "failed": "（未能写出{what}：{err}）",
        "no_plot": "（未安装 matplotlib：损失曲线保存在 losses.csv 中；"
                   "`pip install matplotlib` 后可生成图片。）",
        "written": "已写入 {out}/：",
        "train": "训练",
        "curve_title": "tapegrad demo: training loss",
        "grad_title": "各层梯度范数随训练的变化（裁剪之前）",
        "no_checkpoint": "tapegrad demo: 错误：没有可继续的检查点：{path}",
    },
}
TEXT_NAMES = {"en": {"en": "The Devil's Dictionary (Ambrose Bierce, 1911)",
                     "zh": "《唐诗三百首》与宋词"},
              "zh": {"en": "《魔鬼辞典》（安布罗斯·比尔斯，1911）",
                     "zh": "《唐诗三百首》与宋词"}}


def default_out() -> Path:
    """The demo's folder unless ``--out``: ``tapegrad/demo`` in the user's cache folder
    (``$XDG_CACHE_HOME``, else ``~/.cache``; ``%LOCALAPPDATA%`` on Windows)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base and os.name == "nt":
        base = os.environ.get("LOCALAPPDATA")
    return Path(base or Path.home() / ".cache") / "tapegrad" / "demo"


def missing_for_pictures(msg: dict[str, str]) -> list[str]:
    """One line for each thing the pictures need that is not installed: matplotlib (the loss
    curve, the gradient plot), Graphviz's ``dot`` program (the graph)."""
    lines = []
    if importlib.util.find_spec("matplotlib") is None:
        lines.append(msg["need_plots"])
    if shutil.which("dot") is None:
        lines.append(msg["need_dot"])
    return lines


def loss_summary(losses: list[float], msg: dict[str, str]) -> str:
    """The loss at step 1 against the mean of the last steps (a fifth of them, at most 20),
    every number named by its steps."""
    if not losses:
        return ""
    n = len(losses)
    k = min(20, n // 5)
    if n == 1:
        return msg["loss_one"].format(first=losses[0])
    if k <= 1:
        return msg["loss_last"].format(first=losses[0], last=losses[-1], b=n)
    return msg["loss_mean"].format(first=losses[0], mean=sum(losses[-k:]) / k, a=n - k + 1,
                                   b=n, last=losses[-1])


def _default_lang() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tapegrad demo",
        description="Train a small character-level GPT on a public-domain text shipped with "
                    "tapegrad (about a minute on 2 CPU cores), sample from it, and write the "
                    "loss curve, the gradient health plot and the graph of one attention block.",
        epilog="Ctrl-C stops after the current step and still writes everything; "
               "--resume continues from the checkpoint with the same losses as an "
               "uninterrupted run.")
    parser.add_argument("--steps", type=int, default=None,
                        help=f"training steps in all (default: {DEFAULT_STEPS['en']} for the "
                             f"English text, {DEFAULT_STEPS['zh']} for the Chinese; with "
                             "--resume: the checkpoint's)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output folder (default: tapegrad/demo in your cache folder, "
                             f"here {default_out()})")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--device", default="cpu",
                        help="device to train on; tapegrad runs on the CPU (default: cpu)")
    parser.add_argument("--lang", choices=["en", "zh"], default=None,
                        help="language of the messages and of the bundled text: en (The "
                             "Devil's Dictionary) or zh (唐诗三百首); default: from $LANG")
    parser.add_argument("--text", metavar="FILE", default=None,
                        help="train on this UTF-8 text file instead of the bundled one")
    parser.add_argument("--resume", action="store_true",
                        help="continue from OUT/checkpoint.pt")
    parser.add_argument("--sample-chars", type=int, default=None, metavar="N",
                        help="characters to sample after training (default: 300; 150 for zh)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: Sequence[str] | None = None, *, callback=None) -> int:
    # type: ignore[no-untyped-def]
    """Run the demo; ``callback(step, loss)`` is passed to ``train`` (the tests stop it so)."""
    args = _parser().parse_args(argv)
    lang = args.lang or _default_lang()
    msg = MESSAGES[lang]
    out = Path(args.out) if args.out is not None else default_out()

    try:
        torch.device(args.device)
        torch.empty(0, device=args.device)  # a CUDA device fails here, as on a CPU-only torch
    except (RuntimeError, AssertionError) as exc:
        print(f"tapegrad demo: error: {exc}", file=sys.stderr)
        return 2
    if args.resume and not (out / T.CHECKPOINT).exists():
        print(msg["no_checkpoint"].format(path=out / T.CHECKPOINT), file=sys.stderr)
        return 2
    text_path = Path(args.text) if args.text else T.BUNDLED_TEXTS[lang]
    if args.text and not text_path.is_file():
        print(f"tapegrad demo: error: can't open text file {args.text!r}", file=sys.stderr)
        return 2
    steps = args.steps if args.steps is not None else (0 if args.resume else DEFAULT_STEPS[lang])
    settings = T.Settings(text=str(text_path.resolve()), steps=steps, seed=args.seed)

    # one BLAS thread: the demo's matrices are small, and extra threads only fight each other
    # (and everything else) for the cores
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(args, lang, msg, out, settings, callback, T)
    except KeyboardInterrupt:  # the second Ctrl-C in training, or one while writing
        print("\n" + msg["quit"], file=sys.stderr)
        return 130
    finally:
        torch.set_num_threads(threads)


def _run(args, lang, msg, out, settings, callback, T) -> int:  # type: ignore[no-untyped-def]
    text_file = settings.text
    if args.resume:
        text_file = torch.load(out / T.CHECKPOINT, weights_only=True)["settings"]["text"]
    text = T.load_text(text_file)
    bundled = {str(p): k for k, p in T.BUNDLED_TEXTS.items()}
    name = (TEXT_NAMES[lang][bundled[text_file]] if text_file in bundled
            else Path(text_file).name)

    def on_start(model, chars, s, step):  # type: ignore[no-untyped-def]
        if step == 0:
            n_params = sum(p.numel() for p in model.parameters())
            print(msg["intro"].format(params=n_params, name=name, chars=len(text),
                                      vocab=len(chars), steps=s.steps))
            print(msg["where"].format(out=out.resolve()))
            for line in missing_for_pictures(msg):
                print(line)
        else:
            print(msg["resumed"].format(step=step, steps=s.steps, path=out / T.CHECKPOINT))
        if step >= s.steps:
            print(msg["already"].format(steps=s.steps))
        sys.stdout.flush()

    try:
        result = T.train(settings, out, resume=args.resume, device=args.device,
                         show_progress=not args.no_progress, labels=msg, callback=callback,
                         on_start=on_start)
    except ValueError as exc:
        print(f"tapegrad demo: error: {exc}", file=sys.stderr)
        return 2
    losses = result.losses
    if result.interrupted:
        print(msg["interrupted"].format(step=result.step, steps=result.settings.steps,
                                        out=out.resolve()))
    elif result.steps_this_run:
        if result.start_step:
            print(msg["done_resumed"].format(steps=result.steps_this_run, secs=result.seconds,
                                             a=result.start_step + 1, b=result.step,
                                             total=result.settings.steps))
        else:
            print(msg["done"].format(steps=result.steps_this_run, secs=result.seconds))
    if losses:
        print(loss_summary(losses, msg))

    written = T.write_loss_curve(losses, out, msg["curve_title"])
    if not any(p.suffix == ".png" for p in written):
        print(msg["no_plot"])

    prompt = PROMPTS[lang] if text_file in bundled else text[:8]
    n_chars = args.sample_chars if args.sample_chars is not None else 300 if lang == "en" else 150
    sampled = T.sample(result, prompt, n_chars, seed=args.seed)
    (out / "sample.txt").write_text(sampled + "\n", encoding="utf-8")
    written.append(out / "sample.txt")
    print("\n" + msg["sample"] + "\n" + "-" * 60 + "\n" + sampled + "\n" + "-" * 60)

    written += _show(result, text_file, out, msg, torch, lang)
    written.append(out / T.CHECKPOINT)
    print("\n" + msg["written"].format(out=out.resolve()))
    for path in written:
        print(f"  {path.name}")
    return 130 if result.interrupted else 0


def _show(result, text_file, out, msg, torch, lang) -> list[Path]:  # type: ignore[no-untyped-def]
    """The health report of the trained model, the plot of gradient norm per layer over the
    training steps, and the graph of one attention block (tapegrad.show)."""
    try:
        show: Any = importlib.import_module("tapegrad.show")
    except ImportError:
        print("\n" + msg["no_show"])
        return []
    written = []
    T.fresh_gradients(result, text_file)
    try:
        health = show.health(result.model, lang=lang)
        health.step = result.step
        print("\n" + msg["health"] + "\n" + str(health))
        show.plot_grad_norms(result.grad_history(), result.grad_names,
                             out / "gradient_health.png", lang=lang,
                             title=MESSAGES[_plot_lang(lang)]["grad_title"])
        written.append(out / "gradient_health.png")
    except Exception as exc:  # noqa: BLE001 - a picture that cannot be drawn is not fatal
        print(msg["failed"].format(what="gradient_health.png", err=exc))
    try:
        block = result.model.blocks[0]
        idx = torch.arange(8).remainder(len(result.chars)).unsqueeze(0)
        x = result.model.tok_emb(idx) + result.model.pos_emb(torch.arange(8))
        y = block.attn(block.ln1(x))
        show.graph(y, params=block).render(str(out / "attention_graph.svg"))
        written.append(out / "attention_graph.svg")
    except Exception as exc:  # noqa: BLE001
        print(msg["failed"].format(what="attention_graph.svg", err=exc))
    return written


def _plot_lang(lang: str) -> str:
    """The language of a plot's words: Chinese only where a font can draw it."""
    try:
        # tapegrad.show: loaded on first use (English plots if it cannot load)
        from tapegrad.show.health import plot_lang
    except ImportError:
        return "en"
    return plot_lang(lang)


def demo_command(argv: Sequence[str]) -> int:
    """``tapegrad demo [options]`` (the command table's entry)."""
    return main(list(argv))
