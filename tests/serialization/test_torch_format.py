"""Checkpoints (``save``/``load``) and the .safetensors format.

Round trips of nested structures are compared with torch (torch.save + torch.load with
weights_only=True gives the oracle's view of the same objects). The rest is tapegrad's own
format and is skipped when the library under test is torch: every truncation and every
single-bit flip of a checkpoint must raise a ``CheckpointError`` (a RuntimeError) that names the
problem; foreign files (a torch.save zip, a pickle, random bytes) are recognised; a crash in the
middle of a save leaves the previous file whole. The .safetensors writer must produce the bytes
the format prescribes (built here by hand from the spec) and the bytes the reference
``safetensors`` package writes, when it is installed.
"""

from __future__ import annotations

import collections
import io
import json
import os
import pickle
import stat
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from torchcompare import raised


@pytest.fixture
def tg(lib, lib_name):
    """tapegrad itself: these tests are about tapegrad's own file formats."""
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's checkpoint format")
    return lib


def roundtrip(L, obj):
    buf = io.BytesIO()
    L.save(obj, buf)
    buf.seek(0)
    return L.load(buf, weights_only=True)


def describe(obj):
    """Types all the way down (the values are compared by the snapshot)."""
    if isinstance(obj, dict):
        return [type(obj).__name__, [(describe(k), describe(v)) for k, v in obj.items()]]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [describe(v) for v in obj]]
    if type(obj).__name__ == "Tensor":
        # (not is_contiguous(): torch keeps a view's strides, tapegrad saves its values)
        return ["Tensor", str(obj.dtype), list(obj.shape), obj.requires_grad, obj.is_leaf]
    return type(obj).__name__


# --------------------------------------------------------------------------------------------
# Round trips, compared with torch
# --------------------------------------------------------------------------------------------


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def test_round_trip_of_every_dtype(compare):
    def scenario(L):
        obj = {}
        for name in DTYPES:
            t = (L.arange(12) % 5 - 2).reshape(3, 4).to(getattr(L, name))
            obj[name] = t
            obj[name + "_0d"] = t[1, 2].clone()
            obj[name + "_empty"] = t[:0]
        out = roundtrip(L, obj)
        # (torch cannot hand bfloat16 to NumPy: compare those values through float32)
        values = {k: v.float() if v.dtype == L.bfloat16 else v for k, v in out.items()}
        return values, describe(out)

    compare(scenario, rtol=0, atol=0)


def test_round_trip_of_views_and_nested_structures(compare):
    def scenario(L):
        base = L.arange(24.0).reshape(2, 3, 4)
        w = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        obj = {
            "t": base.transpose(0, 2),
            "strided": base[:, ::2, 1:],
            "expand": L.ones(3, 1).expand(3, 4),
            "leaf": w,
            "nonleaf": w * 2,
            "list": [1, 2.5, None, True, "text", (3, [4.0, {"deep": L.zeros(1)}])],
            "od": collections.OrderedDict([("b", 1), ("a", L.tensor([1, 2]))]),
            3: "int key",
            (1, 2): "tuple key",
            "inf": float("inf"),
            "big": 2**70,
            "same": [w, w],
        }
        out = roundtrip(L, obj)
        return out, describe(out), out["same"][0] is out["same"][1], out["leaf"] is out["same"][0]

    compare(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("name,kw", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                     ("AdamW", {}), ("RMSprop", {"centered": True}),
                                     ("Adagrad", {})])
def test_optimizer_and_scheduler_state_dicts_survive(compare, name, kw):
    def scenario(L):
        w = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
        opt = getattr(L.optim, name)([w], lr=0.1, **kw)
        sched = L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
        for _ in range(3):
            opt.zero_grad()
            (w**2).sum().backward()
            opt.step()
            sched.step()
        sd = roundtrip(L, {"opt": opt.state_dict(), "sched": sched.state_dict(), "w": w})
        w2 = sd["w"]
        opt2 = getattr(L.optim, name)([w2], lr=0.1, **kw)
        opt2.load_state_dict(sd["opt"])
        sched2 = L.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4)
        sched2.load_state_dict(sd["sched"])
        for o, p, s in ((opt, w, sched), (opt2, w2, sched2)):
            o.zero_grad()
            (p**2).sum().backward()
            o.step()
            s.step()
        return w, w2, opt2.state_dict(), sched2.get_last_lr() == sched.get_last_lr()

    compare(scenario, rtol=1e-6)  # float32: torch's sqrt differs from NumPy's in the last bit


def test_paths_and_file_objects(compare, tmp_path):
    def scenario(L):
        p = tmp_path / f"{L.__name__}.ckpt"
        L.save({"a": L.ones(2)}, p)
        L.save({"b": L.zeros(1)}, str(p))  # overwrite through a str path
        with open(p, "rb") as fh:
            from_file = L.load(fh)
        return L.load(p), from_file, L.load(str(p), map_location="cpu")

    compare(scenario)


def test_missing_parent_directory(compare, tmp_path):
    compare(lambda L: raised(lambda: L.save({"a": 1}, str(tmp_path / "nope" / "x.ckpt"))))


def test_parameters_come_back_as_parameters(tg):
    nn = pytest.importorskip("tapegrad.nn")
    if not hasattr(nn, "Parameter"):
        pytest.skip("tapegrad.nn.Parameter is not there yet")
    p = nn.Parameter(tg.ones(2))
    out = roundtrip(tg, {"p": p})
    assert type(out["p"]) is type(p) and out["p"].requires_grad


def test_load_refuses_a_non_file_object(compare):
    """torch and tapegrad raise the same exception type for ``load(3.5)``."""
    compare(lambda L: type(raised(lambda: L.load(3.5))).__name__)
