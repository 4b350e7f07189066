"""The precision lab (show/precision.py): the same four trainings on tapegrad and on torch, its
report in both languages, and the ``tapegrad precision`` command."""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest

from tapegrad.show.precision import precision_lab

STEPS = 20


@pytest.fixture(scope="module")
def labs(lib, oracle):
    """The lab on the library under test and on torch, with one BLAS thread each (the runs'
    matrices are small and the test machine's cores are shared)."""
    threads = lib.get_num_threads(), oracle.get_num_threads()
    lib.set_num_threads(1)
    oracle.set_num_threads(1)
    try:
        return precision_lab(STEPS, lib=lib, lang="en"), precision_lab(STEPS, lib=oracle)
    finally:
        lib.set_num_threads(threads[0])
        oracle.set_num_threads(threads[1])


def test_float32_trains_like_torch(labs):
    ours, theirs = labs
    np.testing.assert_allclose(ours["float32"].losses, theirs["float32"].losses, rtol=1e-4)
    assert ours["float32"].losses[-1] < ours["float32"].losses[0] / 2


def test_float16_without_scaling_overflows_in_both(labs):
    ours, theirs = labs
    a, b = ours["float16"], theirs["float16"]
    assert a.first_nonfinite == b.first_nonfinite == 1
    assert a.overflow == b.overflow
    assert a.overflow["step"] == 0 and a.overflow["parameter"] == "4.weight"
    assert a.losses[0] == b.losses[0]  # the float16 forward of the same weights, bit for bit
    assert all(math.isnan(v) for v in a.losses[2:])


def test_gradscaler_scale_sequence_is_torchs(labs):
    ours, theirs = labs
    a, b = ours["float16+scaler"], theirs["float16+scaler"]
    assert a.scales == b.scales
    assert a.skipped == b.skipped == list(range(17))
    assert a.scales[:3] == [32768.0, 16384.0, 8192.0] and a.scales[-1] == 0.5
    # after the skipped steps it trains, and stays close to torch (float16 products)
    assert a.losses[17] == a.losses[0] and a.losses[-1] < 0.8 * a.losses[0]
    np.testing.assert_allclose(a.losses, b.losses, rtol=2e-3)


def test_bfloat16_trains_without_scaling(labs):
    ours, theirs = labs
    a, b = ours["bfloat16"], theirs["bfloat16"]
    assert a.first_nonfinite is None and a.scales is None
    assert a.losses[-1] < a.losses[0] / 2
    np.testing.assert_allclose(a.losses, b.losses, rtol=2e-2)  # bfloat16: 8 significant bits


def test_report_text(labs, lib_name):
    ours, _ = labs
    text = str(ours)
    assert text.startswith("Precision lab: one model, four precisions, 20 SGD steps each")
    lines = text.splitlines()
    assert lines[2].split() == ["run", "first", "loss", "last", "loss", "first", "inf/NaN",
                                "loss", "skipped", "steps", "ms/step"]
    assert lines[4].startswith("float16 (no scaling)") and " nan " in lines[4]
    assert "float16 overflow: at step 0 the gradient of 4.weight went past 65504" in text
    assert "GradScaler: skipped 17 step(s) with inf/NaN gradients" in text
    assert "its first update was at step 17, and its scale is now 0.5" in text
    if lib_name == "tapegrad":  # the health check's sentence (tapegrad's own instrument)
        assert "The health check at that step: Inf in the gradients" in text
    zh = ours.__class__(ours.runs, ours.steps, "zh")
    assert "精度实验室" in str(zh)
    assert "float16 上溢：第 0 步 4.weight 的梯度超过了 65504" in str(zh)


def test_plot(labs, tmp_path):
    pytest.importorskip("matplotlib")
    ours, _ = labs
    path = tmp_path / "lab.png"
    ours.plot(str(path))
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_precision_command(tmp_path):
    from tapegrad._cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["precision", "--steps", "2", "--json", str(tmp_path / "lab.json"),
                       "--lang", "en"])
    assert status == 0
    text = out.getvalue()
    assert text.startswith("Precision lab: one model, four precisions, 2 SGD steps each")
    assert "float16 (no scaling)" in text and "bfloat16 autocast" in text
    data = json.loads((tmp_path / "lab.json").read_text())
    assert [r["name"] for r in data["runs"]] == ["float32", "float16", "float16+scaler",
                                                 "bfloat16"]
    assert data["runs"][2]["scales"] == [32768.0, 16384.0]


def test_precision_command_usage():
    from tapegrad._cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["precision", "--steps", "0"])
    assert status == 2 and "--steps must be at least 1" in err.getvalue()
