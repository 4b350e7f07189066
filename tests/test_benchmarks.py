"""Smoke test of the benchmark suite (``python -m benchmarks --quick``), the way CI runs it.

Quick mode uses tiny sizes and one repeat, so it checks that every workload builds, runs on
tapegrad (and on torch when it is installed), and gives the same first-step loss on both; it
asserts no speed ratio.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ sits at the repo root, next to src/ and tests/
    sys.path.insert(0, str(ROOT))

import tapegrad  # noqa: E402
from benchmarks import WORKLOADS  # noqa: E402
from benchmarks._cli import main  # noqa: E402
from benchmarks._harness import (  # noqa: E402
    LOSS_RTOL,
    WeightBank,
    Workload,
    load_torch,
    op_breakdown,
    op_share,
    run_workload,
)

CORE = ("op-overhead", "matmul", "deep-chain")  # need only the core, which must always run
FUNCTIONAL = ("mlp-functional", "gpt-functional", "cnn-functional")
LARGE = ("gpt-large", "resnet18")  # report the share of the step in the matrix products


def _run(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "bench.json"
    rc = main(["--quick", "--json", str(out), *args])
    return rc, json.loads(out.read_text())


def test_quick_suite(tmp_path, capsys):
    rc, payload = _run(tmp_path)
    assert rc == 0, capsys.readouterr()
    assert payload["mode"] == "quick"
    env = payload["environment"]
    assert env["cpu_count"] and env["numpy"] and env["blas"]
    results = {r["workload"]: r for r in payload["results"]}
    assert list(results) == list(WORKLOADS)
    with_torch = load_torch() is not None
    assert (env["torch_num_threads"] is not None) == with_torch
    for name, r in results.items():
        tg = r["sides"]["tapegrad"]
        assert tg["status"] in ("ok", "missing"), (name, tg)
        if name in CORE:
            assert tg["status"] == "ok", (name, tg)
        if tg["status"] == "ok":
            assert tg["value"] > 0 and math.isfinite(tg["value"])
            assert tg["peak_bytes"] > 0 and tg["peak_method"] == "tracemalloc"
        if with_torch:
            th = r["sides"]["torch"]
            assert th["status"] == "ok" and th["value"] > 0
            if tg["status"] == "ok":
                # LOSS_RTOL, or the workload's own (gpt-bf16: bfloat16 logits)
                assert r["loss_rel_diff"] <= WORKLOADS[name].loss_rtol <= max(LOSS_RTOL, 2e-3)
                assert r["ratio"] > 0 and r["ratio_best"] > 0
        else:
            assert "torch" not in r["sides"]
    # matmul's informational reference: NumPy doing the step's work by hand, in the notes
    refs = results["matmul"]["references"]
    assert list(refs) == ["numpy, the same work by hand"]
    assert refs["numpy, the same work by hand"] > 0
    table = capsys.readouterr().out
    for name in WORKLOADS:
        assert name in table
    assert "get_num_threads" in table or "not installed" in table
    assert "numpy, the same work by hand:" in table


def test_quick_suite_without_torch(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    rc, payload = _run(tmp_path, "--only", "op-overhead,matmul", "--profile", "5", "--ops", "3")
    assert rc == 0
    assert payload["environment"]["torch"] is None
    for r in payload["results"]:
        assert list(r["sides"]) == ["tapegrad"] and r["sides"]["tapegrad"]["status"] == "ok"
    assert [r["ratio_of"] for r in payload["results"]] == ["tapegrad/torch", "tapegrad/numpy"]
    out = capsys.readouterr().out
    assert "torch: not installed" in out
    assert "cProfile, tapegrad side of op-overhead" in out and "tottime" in out
    assert "ops, tapegrad side of matmul" in out and "outside them" in out


def test_op_breakdown_times_each_op_and_restores_the_registry():
    from tapegrad.ops import _registry as reg

    forwards = {name: op.forward for name, op in reg.REGISTRY.items()}
    apply = reg.OpNode.apply
    w = tapegrad.ones(8, requires_grad=True)

    def step():
        loss = (w * 2.0).tanh().sum()
        loss.backward()
        return loss

    text = op_breakdown(step, steps=3, lines=2)
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[1:-1]}
    # three ops ran once a step, forward and backward; two are listed, the third is summed
    assert len(rows) == 3 and "(1" in rows
    listed = [name for name in rows if name in ("mul", "tanh", "sum")]
    assert len(listed) == 2
    for name in listed:
        calls, fwd, bwd = rows[name]
        assert float(calls) == 1.0 and float(fwd) > 0 and float(bwd) > 0
    assert "step" in text.splitlines()[-1] and "(3 steps" in text
    assert {name: op.forward for name, op in reg.REGISTRY.items()} == forwards
    assert reg.OpNode.apply is apply


def _fake(setup, requires=()) -> Workload:
    return Workload(name="fake", unit="s", requires=requires, config=lambda quick: {},
                    setup=setup, per_step=lambda sec, cfg: sec, describe=lambda cfg: "fake")


def test_loss_mismatch_fails_loudly():
    # both "libraries" are tapegrad; the setup hands them different first losses
    losses = iter([1.0, 1.5])

    def setup(lib, cfg, bank):
        value = lib.tensor(next(losses))
        return lambda: value

    res = run_workload(_fake(setup), True, {"tapegrad": tapegrad, "torch": tapegrad})
    assert res.sides["tapegrad"].status == "mismatch"
    assert "relative difference" in res.sides["tapegrad"].detail
    assert res.sides["tapegrad"].value is None and res.sides["torch"].value is None


def test_missing_piece_is_reported_not_raised():
    res = run_workload(_fake(lambda lib, cfg, bank: None, requires=("no_such_op",)), True,
                       {"tapegrad": tapegrad})
    side = res.sides["tapegrad"]
    assert side.status == "missing" and side.detail == "no_such_op"


def test_unknown_workload_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--quick", "--only", "nope"])
    assert info.value.code == 2
    assert "unknown workload nope" in capsys.readouterr().err


def test_tapegrad_error_is_recorded_as_failure(capsys):
    def setup(lib, cfg, bank):
        raise ValueError("broken layer")

    res = run_workload(_fake(setup), True, {"tapegrad": tapegrad})
    side = res.sides["tapegrad"]
    assert side.status == "error" and side.detail == "ValueError: broken layer"
    assert "broken layer" in capsys.readouterr().err  # the traceback, for whoever debugs it


def test_functional_and_large_workloads(tmp_path, capsys):
    """The functional-style twins and the large models run on both libraries with agreeing
    first losses, have a compiled column, and the large ones report the share of a step
    inside the matrix products."""
    rc, payload = _run(tmp_path, "--only", ",".join(FUNCTIONAL + LARGE))
    assert rc == 0, capsys.readouterr()
    results = {r["workload"]: r for r in payload["results"]}
    assert list(results) == [*FUNCTIONAL, *LARGE]
    for name, r in results.items():
        assert r["sides"]["tapegrad"]["status"] == "ok", (name, r["sides"])
        assert r["compiled"] > 0 and not r["compiled_detail"], (name, r["compiled_detail"])
        if name in LARGE:
            assert 0 < r["matmul_share"] < 1, (name, r["matmul_share"])
        else:
            assert r["matmul_share"] is None
    table = capsys.readouterr().out
    assert table.count("of the step inside the matrix products") == len(LARGE)


@pytest.mark.parametrize("name", FUNCTIONAL + LARGE)
def test_compiled_workload_replays_bit_identically(name):
    """Each new workload's step under tapegrad.compile: after its two captures, a program
    replays (no signature falls back to eager: the functional twins read their parameters
    from lists), and every loss is eager's, bit for bit."""
    w = WORKLOADS[name]
    cfg = w.config(True)
    eager = w.setup(tapegrad, cfg, WeightBank(name))
    compiled = tapegrad.compile(w.setup(tapegrad, cfg, WeightBank(name)))
    for _ in range(4):
        assert eager()._data.tobytes() == compiled()._data.tobytes()
    (entry,) = compiled.entries
    assert entry.program is not None and entry.eager is None, compiled.listing()


def test_op_share_counts_only_the_named_ops():
    from tapegrad.ops import _registry as reg

    forwards = {name: op.forward for name, op in reg.REGISTRY.items()}
    a = tapegrad.randn(64, 64, requires_grad=True)

    def step():
        loss = (a @ a).tanh().sum()
        loss.backward()
        return loss

    share = op_share(step, 3, ("mm",))
    assert 0 < share < 1
    assert op_share(step, 1, ("no_such_op",)) == 0
    assert {name: op.forward for name, op in reg.REGISTRY.items()} == forwards
