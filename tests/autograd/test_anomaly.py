"""Anomaly mode (autograd.detect_anomaly / set_detect_anomaly) against real torch: the flags, the
NaN error, the forward-traceback warning, and the in-place hint it changes."""

from __future__ import annotations

import warnings

import pytest


def _run(lib, make, anomaly_forward=True):
    """Build a graph with ``make`` (inside anomaly mode or not), backward it with anomaly mode
    on; return (error type name, error text, warning texts)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if anomaly_forward:
            with lib.autograd.detect_anomaly():
                out = make(lib)  # the line the traceback must show
                try:
                    out.backward()
                except Exception as e:  # noqa: BLE001 (compared below)
                    err = e
                else:
                    err = None
        else:
            out = make(lib)
            with lib.autograd.set_detect_anomaly(True):
                try:
                    out.backward()
                except Exception as e:  # noqa: BLE001
                    err = e
                else:
                    err = None
    texts = [str(w.message) for w in caught if w.category is UserWarning]
    return (type(err).__name__ if err else None, str(err) if err else None, texts)


def _frames(text):
    """The forward frames from ``_run`` on, less the library's own (torch's custom Function
    frame lives in torch/autograd/function.py; the tests call the two libraries from different
    lines, so the frames above ``_run`` differ)."""
    lines = [ln for ln in text.split("\n") if ln.startswith("  File")]
    start = next(i for i, ln in enumerate(lines) if ln.endswith(", in _run"))
    return [ln for ln in lines[start:] if "site-packages/torch/" not in ln
            and "/src/tapegrad/" not in ln]


def _sqrt_nan(lib):
    a = lib.tensor([0.0, 2.0], requires_grad=True)
    b = a.sqrt()  # FORWARD-LINE
    return (b * 0).sum()


def _log_nan(lib):
    a = lib.tensor([0.0, 1.0], requires_grad=True)
    return (a.log() * 0).sum()  # 0 * (1/0) = nan in LogBackward0


def _inplace(lib):
    w = lib.ones(3, requires_grad=True)
    s = w.sigmoid()
    s.mul_(2)
    return s.sum()


@pytest.mark.parametrize("make", [_sqrt_nan, _log_nan, _inplace])
def test_error_and_warning_match_torch(lib, oracle, make):
    got = _run(lib, make)
    want = _run(oracle, make)
    assert got[0] == want[0] == "RuntimeError"
    assert got[1] == want[1]
    # first: "Anomaly Detection has been enabled..."; then "Error detected in X. Traceback..."
    assert got[2][0] == want[2][0]
    g_err, w_err = got[2][1], want[2][1]
    assert g_err.split("\n")[0] == w_err.split("\n")[0]
    # the same forward frames (this file, the line in the make function), tapegrad's own
    # frames cut off as torch's C++ frames are absent
    g_frames, w_frames = _frames(g_err), _frames(w_err)
    assert g_frames == w_frames
    assert g_frames[-1].endswith(f", in {make.__name__}")
    assert g_err.endswith("python_anomaly_mode.cpp:122.)") and w_err.endswith("cpp:122.)")


def test_nan_message_text(lib):
    _, msg, texts = _run(lib, _log_nan)
    assert msg == "Function 'LogBackward0' returned nan values in its 0th output."
    assert texts[1].startswith(
        "Error detected in LogBackward0. Traceback of forward call that caused the error:\n"
    )
    assert "return (a.log() * 0).sum()" in texts[1]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_nan_found_in_low_precision_gradients(lib, oracle, dtype, create_graph):
    # with create_graph the rule runs on the low-precision tensors themselves
    def run(m):
        a = m.tensor([0.0, 2.0], dtype=getattr(m, dtype), requires_grad=True)
        out = (a.sqrt() * 0).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.set_detect_anomaly(True):
                with pytest.raises(RuntimeError) as info:
                    out.backward(create_graph=create_graph)
        return str(info.value)

    assert run(lib) == run(oracle) == (
        "Function 'SqrtBackward0' returned nan values in its 0th output.")


def test_graph_built_outside_anomaly_mode(lib, oracle):
    got = _run(lib, _sqrt_nan, anomaly_forward=False)
    want = _run(oracle, _sqrt_nan, anomaly_forward=False)
    assert got[:2] == want[:2]
    assert got[2] == want[2]
    assert got[2][0].startswith("Error detected in SqrtBackward0. No forward pass information")


def test_flags_match_torch(lib, oracle):
    def flags(m):
        seen = [(m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled())]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly(check_nan=False):
                seen.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
                with m.autograd.set_detect_anomaly(False):
                    seen.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
                seen.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
        seen.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
        m.autograd.set_detect_anomaly(True)  # as a plain call: stays on
        seen.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
        m.set_anomaly_enabled(False)
        seen.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
        return seen

    assert flags(lib) == flags(oracle)


def test_check_nan_false_lets_nan_through(lib, oracle):
    def run(m):
        x = m.tensor([0.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly(check_nan=False):
                (x.sqrt() * 0).sum().backward()
        return x.grad.tolist()

    got, want = run(lib), run(oracle)
    assert str(got) == str(want) == "[nan]"


def test_detect_anomaly_is_not_a_decorator(lib, oracle):
    for m in (lib, oracle):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError, match="'detect_anomaly' object is not callable"):
                m.autograd.detect_anomaly()(lambda: None)


def test_custom_function_error_shows_forward_line(lib, oracle):
    def run(m):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise ValueError("broken backward")

        def make(m_):
            x = m_.ones(2, requires_grad=True)
            return Bad.apply(x).sum()

        return _run(m, make)

    got, want = run(lib), run(oracle)
    assert got[:2] == want[:2] == ("ValueError", "broken backward")
    g_frames, w_frames = _frames(got[2][1]), _frames(want[2][1])
    assert g_frames == w_frames
    assert g_frames[-1].endswith(", in make")


def test_failure_in_double_backward_names_the_node_that_induced_it(lib, oracle):
    def make(m):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        y = x.pow(1.5)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        return (g * 0).sum()  # d/dx 1.5 x^0.5 at 0: 0 * inf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own "invalid value"
        got, want = _run(lib, make), _run(oracle, make)
    assert got[:2] == want[:2]
    assert len(got[2]) == len(want[2]) == 3
    assert got[2][1].split("\n")[0] == want[2][1].split("\n")[0]
    assert got[2][1].split("\n")[1:3] == want[2][1].split("\n")[1:3]  # the grad(...) line
    assert got[2][2].startswith(
        "\n\nPrevious calculation was induced by PowBackward0. Traceback of forward call that "
        "induced the previous calculation:\n"
    )
    assert _frames(got[2][2]) == _frames(want[2][2])
    assert _frames(got[2][2])[-1].endswith(", in make")
    assert "y = x.pow(1.5)" in got[2][2]
    assert got[2][2].endswith("python_anomaly_mode.cpp:129.)")


def test_off_records_nothing(lib_name):
    if lib_name != "tapegrad":
        pytest.skip("checks tapegrad's own bookkeeping")
    import tapegrad
    from tapegrad.autograd.graph import _forward_stacks

    x = tapegrad.ones(2, requires_grad=True)
    y = (x * 2).sum()
    assert y.grad_fn not in _forward_stacks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tapegrad.autograd.detect_anomaly():
            z = (x * 2).sum()
    assert z.grad_fn in _forward_stacks
