"""Helpers that run the same scenario on tapegrad and on real torch and compare what they saw.

The library under test is chosen by ``TAPEGRAD_TEST_LIB`` (or pytest's ``--lib``): ``tapegrad``
(the default) or ``torch``. With ``torch`` every comparison is torch against torch, which
validates the tests themselves: the whole suite must pass that way.

A *scenario* is a function ``scenario(L)`` written in torch's API against a module ``L``. The
``compare`` fixture runs it once with ``L = torch`` and once with ``L = lib``, turns everything it
returned (tensors, sizes, dtypes, grad_fn nodes, strings, numbers, nested tuples/lists/dicts) into
plain comparable values with :func:`snapshot`, records any exception (type name and message) and
every warning raised while it ran, and asserts that both runs agree. Text is normalised first:
``tapegrad`` reads as ``torch``, object addresses ``0x...`` are masked and torch's
``(Triggered internally at ...)`` suffix on C++ warnings is dropped.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

ENV_VAR = "TAPEGRAD_TEST_LIB"
LIB_NAME = os.environ.get(ENV_VAR, "tapegrad")


def load_lib(name: str):
    """Import the library under test (``tapegrad`` or ``torch``)."""
    return importlib.import_module(name)


# --------------------------------------------------------------------------------------------
# Text normalisation
# --------------------------------------------------------------------------------------------

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?")


def normalize_text(text: str) -> str:
    """Make a repr or message comparable: package name, object addresses, C++ suffixes."""
    text = text.replace("tapegrad", "torch")
    text = _ADDRESS.sub("0x...", text)
    return _TRIGGERED.sub("", text)


def dtype_name(dtype: Any) -> str:
    """``torch.float32`` / ``tapegrad.float32`` -> ``float32``."""
    return str(dtype).rsplit(".", 1)[-1]


def is_tapegrad(obj: Any) -> bool:
    """True for a tapegrad tensor (whatever package name its class shows: ``torch`` under the
    torch alias)."""
    tapegrad = sys.modules.get("tapegrad")
    return tapegrad is not None and isinstance(obj, tapegrad.Tensor)


def to_numpy(t: Any) -> np.ndarray:
    """The values of a tensor of either library as a NumPy array (never shares memory)."""
    if not is_tapegrad(t):  # real torch, which may hand back lazy ZeroTensors
        if dtype_name(t.dtype) == "bfloat16":  # NumPy has no bfloat16: compared as float32
            return np.array(t.detach().float().numpy(force=True), copy=True)
        return np.array(t.detach().numpy(force=True), copy=True)
    if dtype_name(t.dtype) == "bfloat16":
        return np.array(t.detach().numpy(), dtype=np.float32)
    return np.array(t.detach().numpy(), copy=True)


def is_tensor(obj: Any) -> bool:
    """True for a tensor of torch or of tapegrad (duck-typed on the tensor class name)."""
    return any(cls.__name__ == "Tensor" for cls in type(obj).__mro__) and hasattr(obj, "detach")


# --------------------------------------------------------------------------------------------
# Snapshots: plain values that can be compared between the two libraries
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raised:
    """An exception a scenario (or part of it) raised: its class name and normalised message."""

    type: str
    message: str


@dataclass
class TensorSnap:
    """What we compare about a tensor."""

    dtype: str
    shape: tuple[int, ...]
    values: np.ndarray
    requires_grad: bool
    grad_fn: str | None


@dataclass(frozen=True)
class NodeSnap:
    """A grad_fn node, compared by its class name."""

    name: str


def normal_values(L: Any, *shape: int, seed: int = 0, dtype: Any = None,
                  requires_grad: bool = False) -> Any:
    """A tensor of standard normal values from NumPy's generator (``seed``), the same for both
    libraries on every CPU: torch's own float32 normal draws of 16 or more values go through
    its CPU kernels, whose last bits differ between its vectorized and scalar versions."""
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return L.tensor(values, dtype=dtype, requires_grad=requires_grad)


def raised(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``; return its result, or a :class:`Raised` record of the exception it raised."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - we record every exception type
        return Raised(type(exc).__name__, normalize_text(str(exc)))


def error_of(fn: Callable[[], Any]) -> Exception | None:
    """Call ``fn``; return the exception it raised (compared by type and message), or None."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are compared
        return exc
    return None


def snapshot(obj: Any) -> Any:
    """Turn a scenario's result into comparable plain data (see the module docstring)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, complex, Raised)):
        return obj
    if isinstance(obj, str):
        return normalize_text(obj)
    if isinstance(obj, BaseException):
        return Raised(type(obj).__name__, normalize_text(str(obj)))
    if is_tensor(obj):
        grad_fn = obj.grad_fn
        return TensorSnap(
            dtype=dtype_name(obj.dtype),
            shape=tuple(obj.shape),
            values=to_numpy(obj),
            requires_grad=bool(obj.requires_grad),
            grad_fn=None if grad_fn is None else type(grad_fn).__name__,
        )
    if type(obj).__name__ == "Size":
        return ("Size", tuple(int(s) for s in obj))
    if any(cls.__name__ == "dtype" for cls in type(obj).__mro__):  # (tapegrad's bfloat16 is
        # an instance of a dtype subclass that imports ml_dtypes on first use)
        return ("dtype", normalize_text(str(obj)))
    if type(obj).__name__ == "device":
        return ("device", normalize_text(str(obj)))
    if hasattr(obj, "next_functions") and callable(getattr(obj, "name", None)):
        return NodeSnap(type(obj).__name__)
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, dict):
        return {k: snapshot(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [snapshot(v) for v in obj]
    if isinstance(obj, tuple):  # also namedtuples and torch.return_types structseqs
        return tuple(snapshot(v) for v in obj)
    if isinstance(obj, type):
        return ("type", normalize_text(obj.__name__))
    return ("object", type(obj).__name__, normalize_text(repr(obj)))


def assert_same(expected: Any, actual: Any, path: str = "result", rtol=1e-6, atol=1e-8) -> None:
    """Assert two snapshots agree (floats and tensor values to ``rtol``/``atol``)."""
    where = f"at {path}: expected (torch) {expected!r}, got {actual!r}"
    if isinstance(expected, TensorSnap):
        assert isinstance(actual, TensorSnap), where
        assert (expected.dtype, expected.shape) == (actual.dtype, actual.shape), where
        assert expected.requires_grad == actual.requires_grad, f"requires_grad differs {where}"
        assert expected.grad_fn == actual.grad_fn, f"grad_fn differs {where}"
        assert_values(expected.values, actual.values, rtol=rtol, atol=atol, what=path)
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), where
        assert (expected.dtype, expected.shape) == (actual.dtype, actual.shape), where
        assert_values(expected, actual, rtol=rtol, atol=atol, what=path)
        return
    if isinstance(expected, float) and not isinstance(expected, bool):
        assert type(actual) is float, where
        assert math.isclose(expected, actual, rel_tol=rtol, abs_tol=atol) or (
            math.isnan(expected) and math.isnan(actual)
        ), where
        return
    if isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected), where
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{path}[{i}]", rtol, atol)
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and expected.keys() == actual.keys(), where
        for k in expected:
            assert_same(expected[k], actual[k], f"{path}[{k!r}]", rtol, atol)
        return
    assert type(expected) is type(actual) and expected == actual, where


def assert_values(expected: np.ndarray, actual: np.ndarray, rtol=1e-7, atol=0.0, what="") -> None:
    """Exact equality for integer/bool arrays, ``assert_allclose`` for floating ones."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert expected.shape == actual.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if np.issubdtype(expected.dtype, np.floating) or np.issubdtype(
        expected.dtype, np.complexfloating
    ):
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


# --------------------------------------------------------------------------------------------
# Running a scenario on both libraries
# --------------------------------------------------------------------------------------------


@dataclass
class Record:
    """Everything one run of a scenario produced."""

    result: Any  # snapshot of the return value, or Raised
    warnings: list[tuple[str, str]]


def run_scenario(scenario: Callable[[Any], Any], L: Any) -> Record:
    """Run ``scenario(L)``, snapshotting its result (or exception) and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = snapshot(scenario(L))
        except Exception as exc:  # noqa: BLE001
            result = Raised(type(exc).__name__, normalize_text(str(exc)))
    seen = [(w.category.__name__, normalize_text(str(w.message))) for w in caught]
    return Record(result, seen)


# torch emits these warnings only once per process (C++ TORCH_WARN_ONCE), so whether one shows up
# in a scenario depends on what ran before. compare_on_both ignores them; the tests that are about
# them run their scenario in a fresh interpreter (run_fresh).
WARN_ONCE_PREFIXES = (
    "Using backward() with create_graph=True will create a reference cycle",
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior",
    "TypedStorage is deprecated. It will be removed in the future",  # (once: a Python flag)
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated",
    "Tensor.T is deprecated on 0-D tensors.",
)


def _without_warn_once(seen: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [w for w in seen if not w[1].startswith(WARN_ONCE_PREFIXES)]


def compare_on_both(scenario, lib, oracle, *, rtol=1e-6, atol=1e-8) -> Record:
    """Run ``scenario`` on torch and on ``lib``; assert same result and warnings; return torch's."""
    expected = run_scenario(scenario, oracle)
    actual = run_scenario(scenario, lib)
    assert_same(expected.result, actual.result, "result", rtol, atol)
    expected.warnings = _without_warn_once(expected.warnings)
    actual.warnings = _without_warn_once(actual.warnings)
    assert actual.warnings == expected.warnings, (
        f"warnings differ:\n torch: {expected.warnings}\n   lib: {actual.warnings}"
    )
    return expected


_FRESH_RUNNER = """
import importlib, json, sys, warnings
L = importlib.import_module(sys.argv[1])
events = []
def note(*items):
    events.append([str(i) for i in items])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for run in range(2):
        try:
{body}
        except Exception as exc:
            note("raised", type(exc).__name__, exc)
        note("warnings after run", run, len(caught))
events.append([[w.category.__name__, str(w.message)] for w in caught])
print(json.dumps(events))
"""


def run_fresh(lib_name: str, body: str) -> list:
    """Run ``body`` twice in a fresh interpreter with ``L`` = ``lib_name``; return its events.

    ``body`` may call ``note(...)`` to record values. The result is the list of notes followed
    by the normalised warnings ``[category, message]`` of both runs.
    """
    code = _FRESH_RUNNER.format(body=textwrap.indent(textwrap.dedent(body), " " * 12))
    proc = subprocess.run(
        [sys.executable, "-c", code, lib_name], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    events = json.loads(proc.stdout.strip().splitlines()[-1])
    return [
        [normalize_text(x) if isinstance(x, str) else [normalize_text(y) for y in x] for x in ev]
        for ev in events
    ]
