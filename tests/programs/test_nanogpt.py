"""karpathy/nanoGPT's ``train.py`` on a small generated text: one process under ``tapegrad
run``, and two ranks under the launcher, print the losses real torch prints (``python
train.py`` and ``torchrun --nproc-per-node 2``, gloo); then ``sample.py`` loads the
checkpoint and prints what torch's prints. Sources and the edit are in SOURCES.md.

The config (``CONFIG`` below, passed on the command line as nanoGPT's configurator expects)
shrinks the model to 2 layers of width 32 and trains 6 iterations on the CPU in float32,
without ``torch.compile``, with the ``gloo`` backend (nanoGPT's default is ``nccl``, which a
CPU-only torch does not have). ``sample.py`` imports ``tiktoken`` at the top but uses it only
when the dataset has no ``meta.pkl``; ours has one, so an empty stand-in module is put on the
path instead of installing the package.
"""

from __future__ import annotations

import os
import pickle
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from program_outputs import mismatches

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
FILES = ("train.py", "model.py", "sample.py", "configurator.py")

CONFIG = """\
out_dir = 'out'
dataset = 'tiny'
device = 'cpu'
dtype = 'float32'
compile = False
backend = 'gloo'
n_layer = 2
n_head = 2
n_embd = 32
block_size = 32
batch_size = 4
gradient_accumulation_steps = 2
dropout = 0.0
learning_rate = 1e-3
max_iters = 6
warmup_iters = 2
lr_decay_iters = 6
min_lr = 1e-4
eval_interval = 3
eval_iters = 2
log_interval = 1
always_save_checkpoint = True
"""
SAMPLE_ARGS = ["--device=cpu", "--dtype=float32", "--num_samples=2", "--max_new_tokens=30"]


def prepare(where: Path) -> Path:
    """nanoGPT's files, the config, and data/tiny (a character-level dataset, as nanoGPT's
    shakespeare_char/prepare.py writes one, from 600 lines of random words)."""
    where.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copy(HERE / "nanogpt" / name, where / name)
    (where / "tiny.py").write_text(CONFIG)
    rng = random.Random(0)
    words = "the cat sat on a mat and dog ran to see my big red ball in sun".split()
    text = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(4, 9)))
                     for _ in range(600))
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    data = where / "data" / "tiny"
    data.mkdir(parents=True)
    split = int(len(ids) * 0.9)
    ids[:split].tofile(data / "train.bin")
    ids[split:].tofile(data / "val.bin")
    with open(data / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi}, f)
    stub = where / "stub"
    stub.mkdir()
    (stub / "tiktoken.py").write_text('"""Stands in for tiktoken (unused: meta.pkl exists)."""\n')
    return where


# torch's gloo teardown now and then aborts a rank as torchrun's processes exit, on a loaded
# machine (a thread of its own still joinable when it is destroyed): torch's exit, not the
# losses under test, so the oracle's two-rank run is started again on that abort only (up to
# three times in all)
_TEARDOWN_ABORT = "terminate called without an active exception"


def run(cmd: list[str], cwd: Path, timeout: float = 300, again_on_abort: bool = False) -> str:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONHASHSEED="0")
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(cwd / "stub")])
    for _ in range(3 if again_on_abort else 1):
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode == 0 or _TEARDOWN_ABORT not in done.stdout + done.stderr:
            break
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


_TIMING = re.compile(r", time [\d.]+ms, mfu -?[\d.]+%")


def losses(stdout: str, prefix: str = "") -> str:
    """The lines with losses (of one rank's output), without the wall-clock time and MFU."""
    lines = [line[len(prefix):] for line in stdout.splitlines() if line.startswith(prefix)]
    return "\n".join(_TIMING.sub("", line) for line in lines
                     if line.startswith(("step ", "iter ", "saving ")))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Each library's single-process and two-rank runs, and sample.py after the latter."""
    base = tmp_path_factory.mktemp("nanogpt")
    py = sys.executable
    out = {}
    for lib in ("torch", "tapegrad"):
        one = prepare(base / f"{lib}-1")
        two = prepare(base / f"{lib}-2")
        if lib == "torch":
            out[lib, 1] = run([py, "train.py", "tiny.py"], one)
            out[lib, 2] = run([py, "-m", "torch.distributed.run", "--standalone",
                               "--nproc-per-node", "2", "--tee", "3", "train.py", "tiny.py"], two,
                              again_on_abort=True)
            out[lib, "sample"] = run([py, "sample.py", *SAMPLE_ARGS], two)
        else:
            out[lib, 1] = run([py, "-m", "tapegrad", "run", "train.py", "tiny.py"], one)
            out[lib, 2] = run([py, "-m", "tapegrad", "run", "--nproc-per-node", "2",
                               "train.py", "tiny.py"], two)
            out[lib, "sample"] = run([py, "-m", "tapegrad", "run", "sample.py",
                                      *SAMPLE_ARGS], two)
    return out


def test_train_one_process_prints_torchs_losses(runs) -> None:
    want, got = losses(runs["torch", 1]), losses(runs["tapegrad", 1])
    assert want.count("iter ") == 7
    assert not mismatches(want, got)


def test_train_two_ranks_prints_torchruns_losses(runs) -> None:
    want = losses(runs["torch", 2], "[default0]:")
    got = losses(runs["tapegrad", 2], "[default0]:")
    assert want.count("iter ") == 7 and "saving checkpoint to out" in want
    assert not mismatches(want, got)
    # the second rank prints the same lines as under torchrun (its config and batch size)
    assert [line for line in runs["torch", 2].splitlines() if line.startswith("[default1]:")] \
        == [line for line in runs["tapegrad", 2].splitlines() if line.startswith("[default1]:")]


def test_sample_loads_the_two_rank_checkpoint(runs) -> None:
    assert "Loading meta from data/tiny/meta.pkl..." in runs["tapegrad", "sample"]
    assert not mismatches(runs["torch", "sample"], runs["tapegrad", "sample"])
