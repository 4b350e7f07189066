"""torch.backends against torch 2.13: the settable flags (defaults, type checks, the
flags() context managers), cuda.matmul.allow_tf32 tied to the float32 matmul precision, and
the availability checks (every accelerator unavailable)."""

from __future__ import annotations

import pytest
from torchcompare import raised

FLAGS = [("cudnn", "benchmark"), ("cudnn", "deterministic"), ("cudnn", "enabled"),
         ("cudnn", "allow_tf32"), ("mkldnn", "enabled"), ("mkldnn", "deterministic")]



@pytest.fixture(autouse=True)
def _torch_flags_mutable():
    """torch's own test utilities (imported by the OpInfo tests) call
    ``torch.backends.disable_global_flags()``, freezing torch's flags for the rest of the
    process; these tests set them, as a program does, so they lift that for their duration."""
    import torch.backends

    flags = torch.backends.flags_frozen.__globals__  # the module's own namespace
    key = "__allow_nonbracketed_mutation_flag"
    old = flags[key]
    flags[key] = True
    yield
    flags[key] = old

def test_flags_defaults_setting_and_checks(compare):
    def scenario(L):
        B = L.backends
        out = []
        for module, name in FLAGS:
            mod = getattr(B, module)
            old = getattr(mod, name)
            try:
                out.append((module, name, old,
                            raised(lambda m=mod, n=name: setattr(m, n, 1)),
                            raised(lambda m=mod, n=name: setattr(m, n, "x")),
                            getattr(mod, name)))
                setattr(mod, name, not old)
                out.append(getattr(mod, name))
            finally:
                setattr(mod, name, old)
        old = B.cudnn.benchmark_limit
        try:
            B.cudnn.benchmark_limit = 5
            out.append(B.cudnn.benchmark_limit)
        finally:
            B.cudnn.benchmark_limit = old
        out.append(old)
        return out

    compare(scenario)


def test_flags_context_managers(compare):
    def scenario(L):
        B = L.backends
        out = []
        with B.cudnn.flags(enabled=False, benchmark=True):
            out += [B.cudnn.enabled, B.cudnn.benchmark, B.cudnn.deterministic]
        out += [B.cudnn.enabled, B.cudnn.benchmark]
        with B.mkldnn.flags(enabled=False):
            out.append(B.mkldnn.enabled)
        out.append(B.mkldnn.enabled)
        return out

    compare(scenario)


def test_matmul_flags_follow_float32_precision(compare):
    def scenario(L):
        m = L.backends.cuda.matmul
        out = [m.allow_tf32, L.get_float32_matmul_precision()]  # (fp32_precision: "none"
        # until first set, then "ieee": not checked, the oracle process is shared)
        try:
            m.allow_tf32 = True
            out += [m.allow_tf32, L.get_float32_matmul_precision(), m.fp32_precision]
            L.set_float32_matmul_precision("medium")
            out += [m.allow_tf32, L.get_float32_matmul_precision()]
            L.set_float32_matmul_precision("highest")
            out += [m.allow_tf32, m.fp32_precision]
            out += [raised(lambda: setattr(m, "allow_tf32", 1)),
                    raised(lambda: m.foo), raised(lambda: setattr(m, "foo", 1)),
                    m.allow_fp16_reduced_precision_reduction,
                    m.allow_bf16_reduced_precision_reduction,
                    raised(lambda: setattr(m, "allow_fp16_reduced_precision_reduction", 1)),
                    raised(lambda: setattr(m, "allow_bf16_reduced_precision_reduction", "x"))]
        finally:
            L.set_float32_matmul_precision("highest")
        return out

    compare(scenario)


def test_accelerator_availability(compare):
    def scenario(L):
        B = L.backends
        return [B.cudnn.is_available(), B.cudnn.version(), B.cudnn.is_acceptable(L.ones(1)),
                B.mps.is_available(), B.mps.is_built(), B.cuda.is_built(),
                raised(lambda: B.cuda.is_available), B.cuda.flash_sdp_enabled(),
                B.cuda.math_sdp_enabled(), B.cuda.mem_efficient_sdp_enabled(),
                B.mha.get_fastpath_enabled(), B.opt_einsum.is_available(),
                B.opt_einsum.enabled, B.opt_einsum.strategy, L.backends.__name__,
                L.backends.cudnn.__name__]

    compare(scenario)


@pytest.mark.parametrize("module", ["mkl", "mkldnn", "openmp", "nnpack"])
def test_cpu_libraries_are_reported_absent(lib, module):
    """tapegrad uses none of these (NumPy's BLAS computes): a CPU-only torch built without
    them answers the same. torch's own wheel has them, so only tapegrad is checked here."""
    if lib.__name__ == "torch":
        pytest.skip("torch's wheel is built with these libraries")
    assert getattr(lib.backends, module).is_available() is False
    assert lib.backends.cpu.get_cpu_capability() == "DEFAULT"
