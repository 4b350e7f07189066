"""NumPy's keyword names for a dimension (``axis=``, ``keepdims=``), which torch's argument
parser takes for every function and method written in C++ (_numpy_names.py)."""

from __future__ import annotations

import inspect
import types

import pytest
import torch

import tapegrad
from tapegrad import _numpy_names


def _dim_params(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name in ("dim", "keepdim") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


def _takes_numpy_names(fn) -> bool:
    """Whether the face of ``fn`` takes NumPy's name for each of its dim/keepdim."""
    names = inspect.signature(fn, follow_wrapped=False).parameters
    wanted = [_numpy_names.ALIASES[p.name] for p in inspect.signature(fn).parameters.values()
              if p.name in _numpy_names.ALIASES
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return all(name in names for name in wanted)


def _parsed_by_torch(obj) -> bool:
    """Whether torch's C++ argument parser reads the arguments of ``obj`` (a builtin)."""
    return isinstance(obj, (types.BuiltinFunctionType, types.MethodDescriptorType))


def _cases():
    for name, fn in sorted(vars(tapegrad.Tensor).items()):
        if isinstance(fn, types.FunctionType) and not name.startswith("_") and _dim_params(fn):
            yield f"Tensor.{name}", fn, getattr(torch.Tensor, name)
    for name in sorted(dir(tapegrad)):
        fn = getattr(tapegrad, name)
        if isinstance(fn, types.FunctionType) and not name.startswith("_") and _dim_params(fn):
            yield name, fn, getattr(torch, name)


@pytest.mark.parametrize("name, ours, theirs", list(_cases()), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_numpy_names_where_torch_parses_the_arguments(name, ours, theirs) -> None:
    python_level = (_numpy_names.TENSOR_PYTHON_LEVEL if name.startswith("Tensor.")
                    else _numpy_names.PYTHON_LEVEL)
    if name.rsplit(".", 1)[-1] in python_level:
        assert not _parsed_by_torch(theirs)
        assert "axis" not in inspect.signature(ours, follow_wrapped=False).parameters
        return
    assert _parsed_by_torch(theirs), f"{name} is written in Python in torch"
    params = list(inspect.signature(ours).parameters.values())
    dim = next(p for p in params if p.name in ("dim", "keepdim"))
    later_required = [p for p in params[params.index(dim) + 1:] if p.default is p.empty
                      and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if dim.default is dim.empty and later_required:
        pytest.skip(f"{name}: a required argument follows dim, so axis= cannot stand for it "
                    "(torch's parser allows it; no code seen writes it)")
    assert _takes_numpy_names(ours)


CALLS = [
    lambda L, t: t.sum(axis=0),
    lambda L, t: t.sum(axis=1, keepdims=True),
    lambda L, t: L.sum(t, axis=(0, 1), keepdims=True),
    lambda L, t: t.mean(dim=1, keepdims=True),
    lambda L, t: t.argmax(axis=1),
    lambda L, t: L.argmax(t, axis=0, keepdims=True),
    lambda L, t: t.max(axis=1),
    lambda L, t: L.min(t, axis=0, keepdims=True),
    lambda L, t: t.softmax(axis=1),
    lambda L, t: L.log_softmax(t, axis=0),
    lambda L, t: t.cumsum(axis=1),
    lambda L, t: t.std(axis=0, keepdims=True),
    lambda L, t: L.var(t, axis=1),
    lambda L, t: t.logsumexp(axis=1),
    lambda L, t: (t > 2).all(axis=1),
    lambda L, t: (t > 2).any(axis=0, keepdims=True),
    lambda L, t: t.unsqueeze(axis=0),
    lambda L, t: t.reshape(1, 2, 3).squeeze(axis=0),
    lambda L, t: L.stack([t, t], axis=1),
    lambda L, t: L.cat([t, t], axis=0),
    lambda L, t: t.topk(2, axis=1),
    lambda L, t: t.sort(axis=0, descending=True),
    lambda L, t: t.prod(axis=1),
    lambda L, t: t.norm(dim=1),
    # errors: both names, or a name of a function torch writes in Python
    lambda L, t: t.sum(0, axis=1),
    lambda L, t: t.sum(keepdim=True, keepdims=True, dim=0),
    lambda L, t: L.argmax(t, dim=0, axis=0),
    lambda L, t: L.nn.functional.softmax(t, axis=1),
    lambda L, t: L.norm(t, axis=1),
]


@pytest.mark.parametrize("call", CALLS, ids=range(len(CALLS)))
def test_calls_with_numpy_names(compare, call) -> None:
    compare(lambda L: call(L, L.arange(6.0).reshape(2, 3)))
