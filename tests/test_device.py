"""torch.device and a CPU-only build's behaviour for tensors on other devices, against torch
2.13 (a CPU-only build): device parsing and its errors, equality, hashing and pickling, the
factories' ``device=``/``pin_memory=``, ``Tensor.to/cuda/pin_memory``, ``Module.to/cuda``,
the default device, ``Generator(device=...)``."""

from __future__ import annotations

import pickle

import pytest
from torchcompare import raised, run_fresh

STRINGS = [
    "cpu", "cuda", "cuda:1", "cuda:0", "cpu:0", "cpu:1", "mps", "mps:0", "meta", "xpu", "xla:3",
    "hpu", "ipu", "lazy", "hip", "ve", "fpga", "maia", "vulkan", "mtia", "privateuseone",
    "opengl", "opencl", "ideep", "ort", "gpu", "CUDA", "cuda:-1", "cuda:01", "cuda: 1", "cuda:x",
    " cpu", "cuda:1:2", "", "cuda:", "cpu:-1", "cuda:1 ", "cuda:999999999999",
]


def _describe(d):
    return (repr(d), str(d), d.type, d.index)


def test_device_strings(compare):
    compare(lambda L: [raised(lambda s=s: _describe(L.device(s))) for s in STRINGS])


def test_device_arguments(compare):
    import numpy as np

    def scenario(L):
        calls = [
            lambda: L.device("cpu", 0), lambda: L.device("cuda", 1),
            lambda: L.device("cuda:1", 1), lambda: L.device(1), lambda: L.device(0),
            lambda: L.device(-1), lambda: L.device("cuda", -1), lambda: L.device("cpu", -1),
            lambda: L.device(type="cuda", index=2), lambda: L.device(L.device("cuda:1")),
            lambda: L.device(None), lambda: L.device(), lambda: L.device(2.0),
            lambda: L.device("cuda", "x"), lambda: L.device("cuda", True),
            lambda: L.device("cuda", 1.0), lambda: L.device("cuda", np.int64(1)),
            lambda: L.device("cuda", 1, 2), lambda: L.device(type="cuda", idx=2),
            lambda: L.device("cpu", index=None),
        ]
        return [raised(lambda c=c: _describe(c())) for c in calls]

    compare(scenario)


def test_device_equality_hash_pickle(compare):
    def scenario(L):
        d = L.device
        out = [d("cuda") == d("cuda:0"), d("cuda") == "cuda", d("cpu") == "cpu",
               d("cpu") == d("cpu"), d("cpu") == d("cpu:0"), d("cuda:0") == d("cuda", 0),
               d("cpu") != "cpu", d("cpu") == 3, hash(d("cpu")) == hash(d("cpu")),
               {d("cpu"): 1}[d("cpu")], raised(lambda: d("cuda") < d("cpu")),
               _describe(pickle.loads(pickle.dumps(d("cuda:1")))),
               _describe(pickle.loads(pickle.dumps(d("meta")))),
               raised(lambda: setattr(d("cpu"), "type", "cuda"))]
        return out

    compare(scenario)


def test_mkldnn_device_warns_once_per_process(lib_name):
    body = """
    d = L.device("mkldnn")
    note(repr(d), d.type)
    """
    assert run_fresh(lib_name, body) == run_fresh("torch", body)


DEVICES = ["cuda", "cuda:1", "xpu", "mps", "hpu", "ipu", "xla", "hip", "vulkan", "mtia",
           "privateuseone", "gpu", 0]


@pytest.mark.parametrize("dev", DEVICES, ids=str)
def test_tensor_and_module_to_other_devices(compare, dev):
    def scenario(L):
        x = L.ones(2)
        m = L.nn.Linear(2, 2)
        return [raised(lambda: x.to(dev)), raised(lambda: x.to(device=dev)),
                raised(lambda: x.to(dev, L.float64)), raised(lambda: m.to(dev)),
                raised(lambda: L.tensor([1.0], device=dev))]

    compare(scenario)


@pytest.mark.parametrize("dev", ["cuda", "cuda:0", "xpu", 0, "gpu"], ids=str)
def test_factories_on_other_devices(compare, dev):
    import numpy as np

    def scenario(L):
        x = L.ones(2)
        calls = [
            lambda: L.zeros(2, device=dev), lambda: L.ones(2, device=dev),
            lambda: L.empty(2, device=dev), lambda: L.full((2,), 1.0, device=dev),
            lambda: L.arange(3, device=dev), lambda: L.linspace(0, 1, 3, device=dev),
            lambda: L.eye(2, device=dev), lambda: L.randn(2, device=dev),
            lambda: L.rand(2, device=dev), lambda: L.randint(0, 3, (2,), device=dev),
            lambda: L.randperm(3, device=dev), lambda: L.as_tensor([1.0], device=dev),
            lambda: L.zeros_like(x, device=dev), lambda: L.randn_like(x, device=dev),
            lambda: L.nn.Linear(2, 2, device=dev), lambda: L.nn.Conv2d(1, 1, 2, device=dev),
            lambda: L.nn.BatchNorm1d(2, device=dev), lambda: L.nn.Embedding(3, 2, device=dev),
            lambda: L.nn.LayerNorm(2, device=dev),
            lambda: L.from_numpy(np.ones(2)).to(dev),
        ]
        return [raised(c) for c in calls]

    compare(scenario)


def test_cpu_devices_are_accepted(compare):
    def scenario(L):
        x = L.ones(2)
        cpu = L.device("cpu")
        return [x.to("cpu"), x.to("cpu:0"), x.to("cpu:1"), x.to(cpu), x.to(device=None),
                x.to("cpu", L.float64), x.cpu(), L.zeros(2, device="cpu"),
                L.zeros(2, device=cpu), L.zeros(2, device="cpu:1").device,
                L.tensor([1.0], device="cpu"), L.nn.Linear(2, 2, device="cpu").weight.shape,
                x.to("cpu").device, x.to("cpu", copy=True) is x, x.to("cpu") is x]

    compare(scenario)


def test_cuda_pin_memory_and_flags(compare):
    def scenario(L):
        x = L.ones(2)
        m = L.nn.Linear(1, 1)
        return [raised(x.cuda), raised(lambda: x.cuda(0)), raised(lambda: x.cuda("cuda:1")),
                raised(lambda: x.cuda(device="cpu")), raised(lambda: x.cuda("xpu")),
                raised(lambda: x.cuda(-1)), raised(lambda: x.cuda(non_blocking=True)),
                raised(x.xpu), raised(x.pin_memory), x.is_pinned(),
                raised(lambda: L.zeros(2, pin_memory=True)),
                raised(lambda: L.tensor([1.0], pin_memory=True)),
                raised(lambda: L.empty(2, pin_memory=True)),
                raised(m.cuda), raised(lambda: m.cuda(1)), raised(lambda: m.cuda("cpu")),
                raised(lambda: m.cuda(-1)), raised(m.xpu), raised(lambda: m.to(0)),
                m.cpu() is m, m.to("cpu:3") is m,
                x.is_cuda, x.is_cpu, x.is_mps, x.is_meta, x.is_xpu, x.get_device(),
                repr(x.device)]

    compare(scenario)


def test_pin_memory_device_argument_is_deprecated(compare):
    compare(lambda L: [raised(lambda: L.ones(1).pin_memory("cuda")),
                       L.ones(1).is_pinned("cuda")])


def test_default_device(compare):
    def scenario(L):
        out = [repr(L.get_default_device())]
        try:
            L.set_default_device("cuda")
            out += [raised(L.get_default_device), raised(lambda: L.zeros(2)),
                    raised(lambda: L.tensor([1.0])), raised(lambda: L.nn.Linear(1, 1)),
                    raised(lambda: L.randn(2))]
            L.set_default_device("cuda:1")
            out.append(repr(L.get_default_device()))
            L.set_default_device(L.device("cpu"))
            out.append(repr(L.get_default_device()))
            L.set_default_device("cpu:0")
            out += [repr(L.get_default_device()), L.zeros(2)]
            out += [raised(lambda: L.set_default_device("gpu")),
                    raised(lambda: L.set_default_device(0))]
            with L.device("cuda"):
                out.append(raised(lambda: L.ones(1)))
            out.append(repr(L.get_default_device()))
            with L.device("cpu:0"):
                out.append(repr(L.get_default_device()))
        finally:
            L.set_default_device(None)
        out.append(repr(L.get_default_device()))
        return out

    compare(scenario)


def test_generator_devices(compare):
    def scenario(L):
        return [raised(lambda d=d: repr(L.Generator(device=d).device))
                for d in ["cpu", "cpu:1", "cuda", "mps", "xpu", "meta", "hip", 0]]

    compare(scenario)


def test_load_map_location_other_devices(compare, tmp_path):
    def scenario(L):
        path = tmp_path / f"{L.__name__}.pt"
        L.save({"a": L.ones(1)}, path)
        return [raised(lambda ml=ml: L.load(path, map_location=ml)["a"])
                for ml in ["cpu", "cuda", "cuda:1", "mps"]]

    compare(scenario)


def test_meta_tensors_are_refused_clearly(lib):
    if lib.__name__ == "torch":
        pytest.skip("torch has meta tensors; tapegrad (no shape-only tensors) refuses them")
    with pytest.raises(NotImplementedError, match="meta"):
        lib.zeros(2, device="meta")
    with pytest.raises(NotImplementedError, match="meta"):
        lib.ones(2).to("meta")


def test_new_tensor_methods_take_a_device(compare):
    def scenario(L):
        x = L.ones(2, dtype=L.float64)
        out = [x.new_zeros(2, device="cpu"), x.new_ones((2,), device=x.device),
               x.new_full((2,), 3.0, device=x.device), x.new_empty(2, device="cpu").shape,
               x.new_tensor([1, 2], device=x.device)]
        for dev in ("cuda", 0, "xpu"):
            out += [raised(lambda d=dev: x.new_zeros(2, device=d)),
                    raised(lambda d=dev: x.new_tensor([1.0], device=d))]
        out.append(raised(lambda: x.new_zeros(2, pin_memory=True)))
        try:
            L.set_default_device("cuda")
            out.append(x.new_zeros(2))  # self's device, not the default one
        finally:
            L.set_default_device(None)
        return out

    compare(scenario)


@pytest.mark.parametrize("dev", ["mps", "xla", "hip", "vulkan"])
def test_factories_on_unlinked_backends(lib, dev):
    """torch's factories fail in its dispatcher (NotImplementedError naming the backend and
    listing the build's kernels, which differ between builds: the start is compared); copies
    fail with 'not linked'."""
    import torch

    def outcome(L):
        out = []
        for call in (lambda: L.zeros(2, device=dev), lambda: L.randn(2, device=dev),
                     lambda: L.ones(1).new_zeros(2, device=dev)):
            r = raised(call)
            out.append((r.type, r.message.split(" This could be")[0]))
        out.append(raised(lambda: L.tensor([1.0], device=dev)))
        out.append(raised(lambda: L.ones(1).to(dev)))
        return out

    assert outcome(lib) == outcome(torch)
