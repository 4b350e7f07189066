"""torch's own OpInfo database (``op_db``) as the judge of tapegrad's op surface.

torch describes each of its ops by an ``OpInfo``: the callable its tests call (``op.op``), the
dtypes it supports, a generator of sample inputs (0-d and empty tensors, zero-size dimensions,
non-contiguous views, negative dims, broadcasting...), a generator of inputs that must raise, and
flags (``supports_autograd``, ``supports_gradgrad``). This module runs every sample through torch
and through tapegrad and says, per entry, whether tapegrad agrees:

* forward: the outputs' structure, dtypes, shapes and values (``torch.testing.assert_close``'s
  default tolerances for the dtype; integers and bools exactly);
* first-order gradients: ``autograd.grad`` of the differentiable outputs against a fixed random
  cotangent, with respect to every input that requires grad, and the ``grad_fn`` names;
* second-order gradients (float64 only, as torch's own gradgradcheck) where the entry says
  ``supports_gradgrad``;
* ``error_inputs``: the exception type and torch's message regex.

An entry is named ``name`` or ``name.variant_test_name`` (``squeeze.multiple``). Three files next
to this one keep the verdicts honest (one entry a line, ``name  reason``; ``#`` comments):

* ``opinfo_out_of_scope.txt``: entries (``opdb:`` patterns) and API names tapegrad does not aim
  to cover (sparse, quantized, private ``_`` ops...), each with its reason. Shared with the API
  coverage test.
* ``opinfo_expected_failures.txt``: in-scope entries that do not pass yet (missing or failing),
  each with its reason: the TODO list. The test is strict: a listed entry that passes fails the
  test, so the list only ever shrinks.
* ``api_expected_missing.txt``: the same for public API names (``torch.X``, ``Tensor.X``...).

Samples are built once per process (``samples``' cache), seeded, so every run sees the same ones.
Quick mode (the default) takes the first ``OPINFO_SAMPLES`` (default 2) samples per entry and
dtype and tests float64, float32, int64 and bool; ``OPINFO_FULL=1`` (or ``-m opinfo_full``) runs
every sample at every supported float, integer and bool dtype. ``OPINFO_COMPLEX=1`` (the
report's ``--complex``) runs the complex64 and complex128 samples instead, where the entry has
them (second-order gradients at complex128, as at float64); it is off in the strict tests.
"""

from __future__ import annotations

import fnmatch
import inspect
import os
import re
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

import tapegrad

HERE = Path(__file__).resolve().parent
OUT_OF_SCOPE_FILE = HERE / "opinfo_out_of_scope.txt"
EXPECTED_FAILURES_FILE = HERE / "opinfo_expected_failures.txt"
API_EXPECTED_MISSING_FILE = HERE / "api_expected_missing.txt"

QUICK_SAMPLES = int(os.environ.get("OPINFO_SAMPLES", "2"))
FULL = os.environ.get("OPINFO_FULL", "") not in ("", "0")
COMPLEX = os.environ.get("OPINFO_COMPLEX", "") not in ("", "0")

QUICK_DTYPES = (torch.float64, torch.float32, torch.int64, torch.bool)
FULL_DTYPES = (torch.float64, torch.float32, torch.int64, torch.int32, torch.int16, torch.int8,
               torch.uint8, torch.bool)
COMPLEX_DTYPES = (torch.complex128, torch.complex64)

# Ops whose values are unspecified (uninitialised memory): only shapes and dtypes are compared.
UNSPECIFIED_VALUES = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
                      "new_empty_strided"}

# Ops whose outputs are defined up to a sign (phase) per singular vector or eigenvector, which
# differs between LAPACK builds: as torch's own tests do, the outputs are compared through the
# sample's ``output_process_fn_grad`` (its gauge-invariant view: |U|, |V|, or U S V^H).
GAUGE_DEPENDENT = {"linalg.eigh", "linalg.svd", "svd", "svd_lowrank", "pca_lowrank",
                   "linalg.eig"}


# --------------------------------------------------------------------------------------------
# The database and the list files
# --------------------------------------------------------------------------------------------

_OP_DB: list | None = None


def op_db() -> list:
    """torch's OpInfo entries (imported once: the module takes seconds to import)."""
    global _OP_DB
    if _OP_DB is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal import common_utils
            from torch.testing._internal.common_methods_invocations import op_db as db
            from torch.testing._internal.opinfo import core
        # torch's sample iterators look for a unittest.TestCase up the stack (inspect.stack(),
        # a fifth of a second a call under pytest) to label the input under test in torch's
        # own failure messages; these tests are no unittest cases, so there is none to find.
        common_utils.extract_test_fn = core.extract_test_fn = lambda: None
        _OP_DB = list(db)
    return _OP_DB


def entry_id(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def read_list(path: Path) -> dict[str, str]:
    """``name  reason`` lines (two or more spaces apart) -> {name: reason}; ``#`` comments."""
    out: dict[str, str] = {}
    if not path.exists():
        return out
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = re.split(r"\s{2,}|\t", line, maxsplit=1)
        if len(parts) != 2 or not parts[1].strip():
            raise ValueError(f"{path.name}: entry without a reason: {raw!r}")
        if parts[0] in out:
            raise ValueError(f"{path.name}: {parts[0]} is listed twice")
        out[parts[0]] = parts[1].strip()
    return out


def out_of_scope_reason(qualified: str) -> str | None:
    """The reason ``qualified`` (``opdb:name``, ``torch.X``, ``Tensor.X``...) is out of scope."""
    for pattern, reason in read_list(OUT_OF_SCOPE_FILE).items():
        if fnmatch.fnmatchcase(qualified, pattern):
            return reason
    return None


def in_scope_entries() -> list:
    return [op for op in op_db() if out_of_scope_reason("opdb:" + entry_id(op)) is None]


# --------------------------------------------------------------------------------------------
# torch's callable -> tapegrad's
# --------------------------------------------------------------------------------------------

_NAMESPACES = {  # op_db name prefix -> (torch module, tapegrad attribute path)
    "nn.functional.": "nn.functional",
    "linalg.": "linalg",
    "special.": "special",
    "fft.": "fft",
    "signal.windows.": "signal.windows",
}


def _tg_attr(path: str, name: str) -> Any:
    obj: Any = tapegrad
    for part in path.split(".") if path else ():
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return getattr(obj, name, None)


def _method(name: str) -> Callable:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _tg_wrapper_set_seed(op: Callable, *args: Any, **kwargs: Any) -> Any:
    """tapegrad's twin of op_db's ``wrapper_set_seed``: the same seed before a random op."""
    tapegrad.manual_seed(42)
    return op(*args, **kwargs)


def rebind(fn: Callable) -> Callable:
    """A copy of op_db's Python wrapper ``fn`` whose ``torch`` is tapegrad: the same code (the
    same argument reordering or unpacking) calling tapegrad's API."""
    glb = dict(fn.__globals__)
    glb["torch"] = tapegrad
    glb["wrapper_set_seed"] = _tg_wrapper_set_seed
    if "F" in glb:
        glb["F"] = getattr(getattr(tapegrad, "nn", None), "functional", None)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)


def resolve(op: Any) -> Callable | None:
    """tapegrad's callable for ``op.op``, or None when tapegrad lacks it."""
    f = op.op
    name = op.name
    mod = getattr(f, "__module__", None) or ""
    if isinstance(f, types.FunctionType) and mod.startswith("torch.testing"):
        return rebind(f)
    for prefix, path in _NAMESPACES.items():
        if name.startswith(prefix):
            return _tg_attr(path, name[len(prefix):])
    fname = getattr(f, "__name__", None)
    if fname is None:
        return None
    if type(f).__name__ in ("method_descriptor", "wrapper_descriptor") or mod == "torch._tensor":
        return _method(fname) if hasattr(tapegrad.Tensor, fname) else None
    if getattr(torch, fname, None) is f or mod == "torch.functional":
        return getattr(tapegrad, fname, None)
    if mod == "torch._C._nn" or mod == "torch.nn.functional":
        return _tg_attr("nn.functional", fname)
    return None


# --------------------------------------------------------------------------------------------
# Samples: built once per process, converted to tapegrad with the same strides
# --------------------------------------------------------------------------------------------

_SAMPLES: dict[tuple, list] = {}


def samples(op: Any, dtype: torch.dtype, limit: int | None) -> list:
    """The first ``limit`` (None: all) samples of ``op`` at ``dtype``, cached and seeded."""
    key = (entry_id(op), dtype, limit)
    if key not in _SAMPLES:
        torch.manual_seed(0)
        grad = op.supports_autograd and (dtype.is_floating_point or dtype.is_complex)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for s in op.sample_inputs("cpu", dtype, requires_grad=grad):
                out.append(s)
                if limit is not None and len(out) >= limit:
                    break
        _SAMPLES[key] = out
    return _SAMPLES[key]


def _strided_copy(t: torch.Tensor, storages: dict | None = None) -> np.ndarray:
    """A NumPy copy of ``t`` with its strides and storage offset (non-contiguity kept).
    ``storages`` (storage address -> flat copy) makes tensors that share memory in torch share
    it in the copies too (an ``out=`` that overlaps an input)."""
    t = t.detach()
    if t.dtype == torch.bfloat16:  # torch's numpy() has no bfloat16: its bits, as ml_dtypes'
        import ml_dtypes

        return _strided_copy(t.view(torch.int16), storages).view(ml_dtypes.bfloat16)
    if t.dtype == torch.complex32:  # nor complex32: its bits, as tapegrad's float16 pairs
        return _strided_copy(t.view(torch.int32), storages).view(tapegrad.complex32.np)
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    n = t.untyped_storage().nbytes() // t.element_size()
    key = (t.untyped_storage().data_ptr(), t.dtype)
    if storages is not None and t.numel() and key in storages:
        flat = storages[key]
    elif t.numel() == 0 or (t.is_contiguous() and t.storage_offset() == 0 and n == t.numel()):
        arr = np.array(t.numpy(), copy=True)
        if storages is not None and t.numel():
            storages[key] = arr.reshape(-1)
        return arr
    else:
        flat = torch.as_strided(t, (n,), (1,), 0).numpy().copy()
        if storages is not None:
            storages[key] = flat
    strides = tuple(s * t.element_size() for s in t.stride())
    return np.lib.stride_tricks.as_strided(flat[t.storage_offset():], t.shape, strides)


class Converter:
    """torch objects of a sample -> tapegrad's; remembers (torch leaf, tapegrad leaf) pairs of
    the tensors that require grad, in the order met (aliasing kept: one tensor, one copy)."""

    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}
        self.storages: dict[tuple, np.ndarray] = {}
        self.grad_pairs: list[tuple[torch.Tensor, Any]] = []

    def __call__(self, x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if id(x) in self.memo:
                return self.memo[id(x)]
            if x.dtype in (torch.bfloat16, torch.float16) and not hasattr(tapegrad, "bfloat16"):
                raise UnsupportedSample(f"dtype {x.dtype}")
            if x.device.type != "cpu":  # a meta tensor (shapes only): tapegrad has none
                raise UnsupportedSample(f"a tensor on the {x.device.type} device")
            if x.dim() > 64:  # NumPy's limit (torch's is 64 too, but a 65-d tensor exists)
                raise UnsupportedSample("a tensor of more than 64 dims")
            t = tapegrad.from_numpy(_strided_copy(x, self.storages))
            if x.requires_grad:
                t.requires_grad_(True)
                self.grad_pairs.append((x, t))
            self.memo[id(x)] = t
            return t
        if isinstance(x, torch.dtype):
            return dtype_to_tg(x)
        if isinstance(x, torch.Size):
            return tapegrad.Size(x)
        if isinstance(x, torch.device):
            return tapegrad.device(str(x))
        if isinstance(x, torch.memory_format) or isinstance(x, torch.layout):
            return getattr(tapegrad, str(x).rsplit(".", 1)[-1])
        if isinstance(x, torch.Generator):
            raise UnsupportedSample("a torch.Generator argument")
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(self(v) for v in x)
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        if isinstance(x, types.FunctionType):
            return rebind(x)
        if isinstance(x, torch.nn.Module):  # a parameterless module (PairwiseDistance, ...)
            return self._module(x)
        return x

    @staticmethod
    def _module(m: torch.nn.Module) -> Any:
        """tapegrad's module of the same class, built from the torch module's hyperparameters
        (the attributes named like its constructor's arguments)."""
        cls = getattr(tapegrad.nn, type(m).__name__, None)
        if cls is None or any(True for _ in m.parameters()):
            raise UnsupportedSample(f"a torch.nn.{type(m).__name__} argument")
        names = inspect.signature(type(m).__init__).parameters
        return cls(**{k: getattr(m, k) for k in names if k != "self" and hasattr(m, k)})


class UnsupportedSample(Exception):
    """A sample that cannot be expressed with tapegrad's objects."""


def dtype_to_tg(d: torch.dtype) -> Any:
    name = str(d).rsplit(".", 1)[-1]
    got = getattr(tapegrad, name, None)
    if got is None:
        raise UnsupportedSample(f"dtype {d}")
    return got


# --------------------------------------------------------------------------------------------
# Comparing results
# --------------------------------------------------------------------------------------------


class Mismatch(AssertionError):
    pass


def flatten(x: Any) -> list:
    if isinstance(x, (list, tuple)) and not isinstance(x, (torch.Size, tapegrad.Size)):
        return [leaf for v in x for leaf in flatten(v)]
    return [x]


def _is_tg(x: Any) -> bool:
    return isinstance(x, tapegrad.Tensor)


def _name(d: Any) -> str:
    return str(d).rsplit(".", 1)[-1]


def tg_numpy(t: Any) -> np.ndarray:
    return np.array(t.detach().numpy(), copy=True)


def compare_tensor(ours: Any, theirs: torch.Tensor, what: str, values: bool = True) -> None:
    if not _is_tg(ours):
        raise Mismatch(f"{what}: expected a tensor, got {type(ours).__name__}")
    if _name(ours.dtype) != _name(theirs.dtype):
        raise Mismatch(f"{what}: dtype {_name(ours.dtype)}, torch {_name(theirs.dtype)}")
    if tuple(ours.shape) != tuple(theirs.shape):
        raise Mismatch(f"{what}: shape {tuple(ours.shape)}, torch {tuple(theirs.shape)}")
    if not values:
        return
    arr = tg_numpy(ours)
    ref = theirs.detach().resolve_conj().resolve_neg().cpu()
    if arr.dtype.names:  # complex32: float16 pairs
        arr, ref = tapegrad._dtype.from_chalf(arr), ref.cfloat()
    elif arr.dtype.kind == "V" or arr.dtype.name == "bfloat16":  # ml_dtypes' bfloat16
        arr, ref = arr.astype(np.float32), ref.float()
    mine = torch.from_numpy(arr)
    try:
        torch.testing.assert_close(mine, ref, equal_nan=True, check_dtype=False,
                                   check_stride=False)
    except AssertionError as e:
        raise Mismatch(f"{what}: values differ: {str(e).strip().splitlines()[:6]}") from None


def compare_outputs(ours: Any, theirs: Any, what: str, values: bool = True) -> None:
    fo, ft = flatten(ours), flatten(theirs)
    if len(fo) != len(ft):
        raise Mismatch(f"{what}: {len(fo)} outputs, torch {len(ft)}")
    for i, (o, t) in enumerate(zip(fo, ft, strict=True)):
        w = f"{what}[{i}]" if len(ft) > 1 else what
        if isinstance(t, torch.Tensor):
            compare_tensor(o, t, w, values)
        elif isinstance(t, torch.dtype):
            if _name(o) != _name(t):
                raise Mismatch(f"{w}: {o}, torch {t}")
        elif isinstance(t, torch.Size):
            if tuple(o) != tuple(t):
                raise Mismatch(f"{w}: {o}, torch {t}")
        elif isinstance(t, float) and isinstance(o, (int, float)):
            if not (np.isclose(o, t, rtol=1e-6, atol=1e-7, equal_nan=True)):
                raise Mismatch(f"{w}: {o!r}, torch {t!r}")
        elif values and o != t and type(t) in (int, bool, str, type(None)):
            raise Mismatch(f"{w}: {o!r}, torch {t!r}")


# --------------------------------------------------------------------------------------------
# Running one entry
# --------------------------------------------------------------------------------------------


@dataclass
class Verdict:
    entry: str
    status: str  # "pass", "fail", "missing"
    failures: list[str] = field(default_factory=list)
    samples: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def _cotangent(t: torch.Tensor, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t.shape, dtype=t.dtype, generator=g)


def _call(fn: Callable, s: Any, conv: Callable) -> Any:
    return fn(conv(s.input), *conv(tuple(s.args)), **conv(dict(s.kwargs)))


def _diff_outputs(out: Any) -> list[int]:
    return [i for i, t in enumerate(flatten(out))
            if isinstance(t, torch.Tensor) and t.requires_grad]


def run_sample(op: Any, fn: Callable, s: Any, dtype: torch.dtype, gradgrad: bool) -> None:
    """Compare one sample on both libraries; raises Mismatch (or tapegrad's exception)."""
    conv = Converter()
    mine_args = (conv(s.input), conv(tuple(s.args)), conv(dict(s.kwargs)))
    ident = lambda x: x  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = op.op(s.input, *s.args, **s.kwargs)
        except Exception:  # torch rejects its own sample on this build: nothing to compare
            return
        ours = fn(mine_args[0], *mine_args[1], **mine_args[2])
    values = op.name not in UNSPECIFIED_VALUES
    process = s.output_process_fn_grad or ident
    if op.name in GAUGE_DEPENDENT:
        compare_outputs(ours, theirs, "output", values=False)  # shapes and dtypes as they are
        compare_outputs((rebind(process) if isinstance(process, types.FunctionType) else
                         process)(ours), process(theirs), "output (gauge-invariant)", values)
    else:
        compare_outputs(ours, theirs, "output", values)
    if not (op.supports_autograd and conv.grad_pairs and values):
        return
    p_theirs = flatten(process(theirs))
    p_ours = flatten((rebind(process) if isinstance(process, types.FunctionType) else process)(
        ours))
    idx = _diff_outputs(p_theirs)
    if not idx:
        return
    for i in idx:
        t, o = p_theirs[i], p_ours[i]
        if not _is_tg(o) or not o.requires_grad:
            raise Mismatch(f"output[{i}] does not require grad")
        tn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        on = type(o.grad_fn).__name__ if o.grad_fn is not None else None
        if tn != on:
            raise Mismatch(f"grad_fn {on}, torch {tn}")
    ins_t = [p[0] for p in conv.grad_pairs]
    ins_o = [p[1] for p in conv.grad_pairs]
    cots_t = [_cotangent(p_theirs[i], 100 + i) for i in idx]
    cots_o = [conv(c) for c in cots_t]
    gg = gradgrad and op.supports_gradgrad and dtype in (torch.float64, torch.complex128)
    g_t = torch.autograd.grad([p_theirs[i] for i in idx], ins_t, cots_t, allow_unused=True,
                              create_graph=gg)
    g_o = tapegrad.autograd.grad([p_ours[i] for i in idx], ins_o, cots_o, allow_unused=True,
                                 create_graph=gg)
    for k, (a, b) in enumerate(zip(g_o, g_t, strict=True)):
        b = torch.zeros_like(ins_t[k]) if b is None else b
        a = tapegrad.zeros_like(ins_o[k]) if a is None else a
        compare_tensor(a, b, f"grad[{k}]")
    if not gg:
        return
    second = [k for k, b in enumerate(g_t) if b is not None and b.requires_grad]
    if not second:
        return
    cots2_t = [_cotangent(g_t[k], 200 + k) for k in second]
    try:
        gg_t = torch.autograd.grad([g_t[k] for k in second], ins_t, cots2_t, allow_unused=True)
    except RuntimeError:  # torch fails its own second order here: nothing to compare
        return
    outs_o = []
    for k in second:
        if g_o[k] is None or not g_o[k].requires_grad:
            raise Mismatch(f"grad[{k}] does not require grad (create_graph=True)")
        outs_o.append(g_o[k])
    gg_o = tapegrad.autograd.grad(outs_o, ins_o, [conv(c) for c in cots2_t], allow_unused=True)
    for k, (a, b) in enumerate(zip(gg_o, gg_t, strict=True)):
        b = torch.zeros_like(ins_t[k]) if b is None else b
        a = tapegrad.zeros_like(ins_o[k]) if a is None else a
        compare_tensor(a, b, f"gradgrad[{k}]")


def error_inputs(op: Any) -> list:
    if op.error_inputs_func is None:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            return list(op.error_inputs("cpu"))
    except NotImplementedError:
        return []


def run_error_input(op: Any, fn: Callable, ei: Any) -> None:
    s = ei.sample_input
    try:
        conv = Converter()
        args = (conv(s.input), conv(tuple(s.args)), conv(dict(s.kwargs)))
    except UnsupportedSample:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            op.op(s.input, *s.args, **s.kwargs)
        except Exception as e:  # noqa: BLE001
            expected = type(e)
        else:
            return  # torch does not raise here on this build
        try:
            fn(args[0], *args[1], **args[2])
        except Exception as e:  # noqa: BLE001
            # torch's own exception class, or its nearest builtin base (torch's LinAlgError is
            # a RuntimeError); and the class the entry names
            base = next(c for c in expected.__mro__ if c.__module__ == "builtins")
            ok_type = isinstance(e, base) and (ei.error_type.__module__ != "builtins"
                                               or isinstance(e, ei.error_type))
            if not ok_type:
                raise Mismatch(f"error input: {type(e).__name__}: {e}; torch raises "
                               f"{expected.__name__} matching {ei.error_regex!r}") from None
            if not re.search(ei.error_regex, str(e).replace("tapegrad", "torch")):
                raise Mismatch(f"error input: message {str(e)!r} does not match torch's "
                               f"{ei.error_regex!r}") from None
            return
    raise Mismatch(f"error input: no exception; torch raises {expected.__name__} "
                   f"matching {ei.error_regex!r}")


def dtypes_for(op: Any, full: bool, complex_: bool | None = None) -> list:
    """The dtypes an entry is run at: the real ones, or (``complex_``) the complex ones."""
    supported = op.supported_dtypes("cpu")
    if COMPLEX if complex_ is None else complex_:
        return [d for d in COMPLEX_DTYPES if d in supported]
    return [d for d in (FULL_DTYPES if full else QUICK_DTYPES) if d in supported]


def run_entry(op: Any, full: bool = FULL, limit: int | None = None,
              stop_at_first: bool = True) -> Verdict:
    """Run every (or the first ``limit``) sample of ``op`` at its dtypes, and its error inputs."""
    eid = entry_id(op)
    fn = resolve(op)
    if fn is None:
        return Verdict(eid, "missing", ["tapegrad has no callable for it"])
    if limit is None and not full:
        limit = QUICK_SAMPLES
    v = Verdict(eid, "pass")
    for dtype in dtypes_for(op, full):
        try:
            batch = samples(op, dtype, None if full else limit)
        except Exception as e:  # noqa: BLE001 - torch's generator failing is torch's problem
            v.failures.append(f"{_name(dtype)}: torch's sample_inputs raised {e!r}")
            continue
        for n, s in enumerate(batch):
            v.samples += 1
            try:
                run_sample(op, fn, s, dtype, gradgrad=True)
            except UnsupportedSample:
                continue
            except Exception as e:  # noqa: BLE001 - any tapegrad error is a verdict
                msg = str(e).splitlines()[0][:300] if str(e) else ""
                v.failures.append(f"{_name(dtype)} sample {n} ({_describe(s)}): "
                                  f"{type(e).__name__}: {msg}")
                if stop_at_first:
                    v.status = "fail"
                    return v
    for n, ei in enumerate(error_inputs(op)):
        try:
            run_error_input(op, fn, ei)
        except Exception as e:  # noqa: BLE001
            v.failures.append(f"error input {n}: {type(e).__name__}: {str(e)[:300]}")
            if stop_at_first:
                break
    if v.failures:
        v.status = "fail"
    return v


def _describe(s: Any) -> str:
    def d(x: Any) -> str:
        if isinstance(x, torch.Tensor):
            nc = "" if x.is_contiguous() else " noncontig"
            return f"T{tuple(x.shape)}{nc}"
        if isinstance(x, (list, tuple)):
            return "[" + ", ".join(d(v) for v in x) + "]"
        return repr(x)[:40]

    parts = [d(s.input)] + [d(a) for a in s.args] + [f"{k}={d(v)}" for k, v in s.kwargs.items()]
    return ", ".join(parts)


def iter_verdicts(ops: list, **kw: Any) -> Iterator[Verdict]:
    for op in ops:
        yield run_entry(op, **kw)


__all__ = ["op_db", "entry_id", "read_list", "in_scope_entries", "resolve", "run_entry",
           "Verdict", "out_of_scope_reason"]


FULL_SWEEP_TAG = "[full sweep]"  # a listed entry that passes the quick samples
# a listed entry whose verdict depends on which kernels torch runs (tests/cpu_kernels.py): it
# fails with torch's vectorized kernels and may pass with others, so passing is no news there
KERNELS_TAG = "[kernels]"

EXPECTED_FAILURES_HEADER = """\
# The in-scope op_db entries tapegrad does not pass yet: the TODO list of the op surface.
# One entry a line, two spaces, then the reason ("missing: ..." when tapegrad lacks the op).
# tests/ops/test_opinfo.py is strict: an entry listed here that passes fails the test, so remove
# it when it lands (tests/ops/opinfo_report.py --full --write-expected rewrites this file).
# "[full sweep]": the entry passes the quick samples and fails on a later one (the quick test
# lets it be; -m opinfo_full holds it to this list).
# "[kernels]": the entry fails against torch's vectorized kernels and passes against its scalar
# ones (ATEN_CPU_CAPABILITY=default; tests/cpu_kernels.py), where it is not held to the list.
"""


# --------------------------------------------------------------------------------------------
# The public API surface: every public name of torch's namespaces below
# --------------------------------------------------------------------------------------------

API_NAMESPACES = {  # qualified prefix -> (torch object, tapegrad attribute path)
    "torch.": ("torch", ""),
    "Tensor.": ("torch.Tensor", "Tensor"),
    "torch.nn.": ("torch.nn", "nn"),
    "torch.nn.functional.": ("torch.nn.functional", "nn.functional"),
    "torch.autograd.": ("torch.autograd", "autograd"),
    "torch.optim.": ("torch.optim", "optim"),
    "torch.utils.data.": ("torch.utils.data", "utils.data"),
    "torch.linalg.": ("torch.linalg", "linalg"),
    "torch.special.": ("torch.special", "special"),
    "torch.fft.": ("torch.fft", "fft"),
    "torch.random.": ("torch.random", "random"),
    "torch.testing.": ("torch.testing", "testing"),
    "torch.profiler.": ("torch.profiler", "profiler"),
    "torch.types.": ("torch.types", "types"),
    "torch.return_types.": ("torch.return_types", "return_types"),
    "torch.compiler.": ("torch.compiler", "compiler"),
}


def _torch_obj(path: str) -> Any:
    obj: Any = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def api_kind(value: Any, path: str, name: str, exported: bool) -> str | None:
    """What a public attribute ``name`` of torch's namespace ``path`` is for the audit
    ("function", "class", "module", "constant", "object"), or None for a name that is not
    the namespace's own API: another library's (typing's ``Any``, ``os``), a module imported
    rather than a submodule, or a torch class or function a namespace imports for its own use
    (``torch.profiler.Optimizer``) unless its ``__all__`` exports it."""
    if isinstance(value, types.ModuleType):
        return "module" if value.__name__ == f"{path}.{name}" else None
    if name == "TYPE_CHECKING":  # typing's flag, imported
        return None
    if isinstance(value, (types.BuiltinFunctionType, types.FunctionType, type)):
        module = getattr(value, "__module__", None) or "torch"
        if module.split(".")[0] != "torch":
            return None
        kind = "class" if isinstance(value, type) else "function"
        # from elsewhere in torch (not its C++ core): the namespace's own only when exported
        if path != "torch" and not (module == path or module.startswith(path + ".")
                                    or module.startswith("torch._C") or exported):
            return None
        return kind
    if isinstance(value, (bool, int, float, complex, str)):
        return "constant"
    if (type(value).__module__ or "").split(".")[0] == "torch":
        return "object"  # dtypes, layouts, memory formats, the default generator...
    return None


def public_objects() -> dict[str, tuple[Any, str]]:
    """Every public name of torch's namespaces -> (torch's value, its kind); for ``Tensor``
    every public attribute (kind "attribute")."""
    # torch.onnx is a submodule torch loads on first use (importing torchvision does): loaded
    # here, so that the public names do not depend on which tests ran before
    import torch.onnx  # noqa: F401

    out: dict[str, tuple[Any, str]] = {}
    for prefix, (tpath, _) in API_NAMESPACES.items():
        tobj = _torch_obj(tpath)
        exported = set(getattr(tobj, "__all__", ()))
        for name in dir(tobj):
            if name.startswith("_"):
                continue
            if prefix == "Tensor.":
                out[prefix + name] = (inspect.getattr_static(tobj, name), "attribute")
                continue
            value = getattr(tobj, name)
            kind = api_kind(value, tpath, name, name in exported)
            if kind is not None:
                out[prefix + name] = (value, kind)
    return out


def ours(name: str) -> Any:
    """tapegrad's object for a qualified public name, or None."""
    for prefix, (_, gpath) in API_NAMESPACES.items():
        rest = name[len(prefix):]
        if name.startswith(prefix) and "." not in rest:
            obj: Any = tapegrad
            for part in gpath.split(".") if gpath else ():
                obj = getattr(obj, part, None)
                if obj is None:
                    return None
            if prefix == "Tensor.":
                return inspect.getattr_static(obj, rest, None)
            return getattr(obj, rest, None)
    return None


def public_api() -> dict[str, bool]:
    """Every public name of torch's namespaces -> whether tapegrad has it."""
    return {name: _has(name) for name in public_objects()}


def _has(name: str) -> bool:
    prefix = next(p for p in API_NAMESPACES if name.startswith(p) and "." not in name[len(p):])
    gpath = API_NAMESPACES[prefix][1]
    obj: Any = tapegrad
    for part in gpath.split(".") if gpath else ():
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return hasattr(obj, name[len(prefix):])
