"""The error audit: where torch raises, tapegrad raises the same exception type with the same
first line of message, so that ``except RuntimeError`` (or ``IndexError``...) catches tapegrad's
errors where it catches torch's, and the message says the same.

Three sources of bad calls, each run on torch and on tapegrad in the same test:

* ``error_inputs`` of torch's OpInfo database, every in-scope entry that has them (the OpInfo
  test accepts torch's base class and its regex; here the type name and the first line must be
  torch's own);
* every in-scope OpInfo entry called with 0-d tensors (its first samples, each tensor argument
  reduced to its first element): either both libraries raise alike or neither raises;
* ``BAD_CALLS`` below: wrong shapes, dtypes, sizes that cannot be allocated, values out of a
  type's range, wrong argument types.

Only the first line is compared: torch appends C++ context to some messages (``Exception raised
from ... at ...``, a stack of frames) that no Python library reproduces. ``KNOWN`` lists what
still differs, each with its reason (``error_audit_known.txt``, the TODO list of the audit);
it is strict (a listed case that agrees fails the test).
"""

from __future__ import annotations

import warnings

import opinfo_harness as h
import pytest
import torch
from torch.testing._internal.opinfo.core import SampleInput


def _outcome(fn, *args, **kwargs) -> tuple[str, str] | None:
    """(exception type name, first line of its message) or None when nothing was raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - every type is part of the verdict
            return type(e).__name__, (str(e).splitlines() or [""])[0].replace("tapegrad", "torch")
    return None


def _verdict(theirs, ours) -> str | None:
    if theirs == ours:
        return None
    return f"torch: {theirs}; tapegrad: {ours}"


# --------------------------------------------------------------------------------------------
# What still differs
# --------------------------------------------------------------------------------------------

KNOWN_FILE = h.HERE / "error_audit_known.txt"
KNOWN = h.read_list(KNOWN_FILE)  # "key  reason", one a line: what still differs, and why


# --------------------------------------------------------------------------------------------
# OpInfo error_inputs
# --------------------------------------------------------------------------------------------


def _error_cases() -> list:
    cases = []
    for op in h.in_scope_entries():
        if h.resolve(op) is None:
            continue
        for i, _ in enumerate(h.error_inputs(op)):
            cases.append(pytest.param(op, i, id=f"{h.entry_id(op)} #{i}"))
    return cases


@pytest.mark.parametrize("op,index", _error_cases())
def test_error_inputs(op, index) -> None:
    ei = h.error_inputs(op)[index]
    s = ei.sample_input
    try:
        conv = h.Converter()
        args = (conv(s.input), conv(tuple(s.args)), conv(dict(s.kwargs)))
    except h.UnsupportedSample as e:
        pytest.skip(f"not expressible with tapegrad's objects: {e}")
    theirs = _outcome(op.op, s.input, *s.args, **s.kwargs)
    if theirs is None:
        pytest.skip("torch does not raise here on this build")
    _judge(f"{h.entry_id(op)} #{index}", theirs, _outcome(h.resolve(op), args[0], *args[1],
                                                             **args[2]))


def _judge(key: str, theirs, ours) -> None:
    why = _verdict(theirs, ours)
    if key in KNOWN:
        assert why, f"{key} is listed in KNOWN ({KNOWN[key]}) but agrees: take it off the list"
        pytest.xfail(KNOWN[key])
    assert why is None, why


# --------------------------------------------------------------------------------------------
# Every entry with 0-d tensors
# --------------------------------------------------------------------------------------------


def _zero_d(x):
    if isinstance(x, torch.Tensor) and x.dim() > 0 and x.numel() >= 1:
        return x.detach().reshape(-1)[0].clone().requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_zero_d(v) for v in x)
    return x


ZERO_D_SAMPLES = 2


@pytest.mark.parametrize("op", h.in_scope_entries(), ids=h.entry_id)
def test_zero_dimensional_arguments(op) -> None:
    fn = h.resolve(op)
    if fn is None or torch.float64 not in op.supported_dtypes("cpu"):
        pytest.skip("tapegrad lacks the entry, or it has no float64 samples")
    failures = []
    for n, s in enumerate(h.samples(op, torch.float64, ZERO_D_SAMPLES)):
        if not isinstance(s.input, torch.Tensor) or s.input.dim() == 0:
            continue
        b = SampleInput(_zero_d(s.input), args=_zero_d(tuple(s.args)),
                        kwargs=dict(s.kwargs))
        try:
            conv = h.Converter()
            args = (conv(b.input), conv(tuple(b.args)), conv(dict(b.kwargs)))
        except h.UnsupportedSample:
            continue
        theirs = _outcome(op.op, b.input, *b.args, **b.kwargs)
        ours = _outcome(fn, args[0], *args[1], **args[2])
        why = _verdict(theirs, ours)
        if why:
            failures.append(f"sample {n}: {why}")
    key = f"0-d {h.entry_id(op)}"
    if key in KNOWN:
        assert failures, f"{key} is listed in KNOWN ({KNOWN[key]}) but agrees"
        pytest.xfail(KNOWN[key])
    assert not failures, "\n".join(failures)


# --------------------------------------------------------------------------------------------
# A corpus of bad calls
# --------------------------------------------------------------------------------------------

HUGE = 2**46  # elements: past the 47-bit address space in any dtype

BAD_CALLS = [
    # shapes
    "ones(2, 3) + ones(3, 2)", "ones(2, 3) @ ones(2, 3)", "mm(ones(2), ones(2))",
    "bmm(ones(2, 3), ones(3, 2))", "ones(4).view(3, -1)", "ones(4).reshape(-2, 2)",
    "ones(4).view(-1, -1)", "ones(2, 3).t().view(6)", "cat([ones(2, 3), ones(2, 4)])",
    "cat([ones(2, 3), ones(3)])", "cat([])", "stack([ones(2), ones(3)])",
    "ones(2, 3).expand(3, 3)", "ones(2, 3).expand(3)", "ones(4).expand(-2, 4)",
    "ones(2).repeat(-1)", "ones(2, 3).permute(0)", "ones(2, 3).permute(0, 0)",
    "ones(2, 3).transpose(0, 2)", "ones(2, 3).squeeze(2)", "ones(2, 3).unsqueeze(3)",
    "ones(2, 3).sum(2)", "ones(2, 3).max(dim=5)", "ones(2, 3).flatten(1, 0)",
    "ones(2, 3)[2]", "ones(2, 3)[:, 3]", "ones(2, 3)[0, 0, 0]", "ones(3).gather(0, tensor([3]))",
    "ones(3).index_select(0, tensor([5]))", "ones(2, 3).narrow(1, 2, 2)",
    "ones(2, 3).split([1, 1], 1)", "ones(2).chunk(0)", "tensor(1.0).chunk(2)",
    "ones(3, 4).unfold(1, 5, 1)", "outer(tensor(1.0), ones(2))", "dot(ones(2), ones(3))",
    "dot(ones(2, 2), ones(2, 2))", "ones(2, 2).copy_(ones(3))", "ones(2).copy_(ones(2, 2))",
    "nn.functional.linear(ones(2, 3), ones(4, 2))", "nn.functional.conv2d(ones(1, 3, 5, 5), "
    "ones(2, 4, 3, 3))", "nn.functional.conv2d(ones(3, 5, 5, 2, 2), ones(2, 3, 3, 3))",
    "nn.functional.cross_entropy(ones(2, 3), tensor([0, 3]))",
    "nn.functional.cross_entropy(ones(2, 3), tensor([0]))", "nn.functional.mse_loss(ones(2), "
    "ones(3))", "linalg.inv(ones(2, 3))", "linalg.det(ones(3))", "linalg.solve(ones(2, 2), "
    "ones(3))", "addmv(ones(3), ones(2, 3), ones(3))", "lstsq_bad()",
    # dtypes
    "ones(2).long() @ ones(2)",
    "arange(3) * 1.5j > 0", "ones(2, dtype=bool) - ones(2, dtype=bool)",
    "-ones(2, dtype=bool)", "tensor([1, 2]).mean()", "tensor([1, 2]).std()",
    "ones(2).long().requires_grad_()", "tensor([1, 2], requires_grad=True)",
    "tensor([True]) % tensor([True])", "tensor([True]) // tensor([True])",
    "ones(2).bitwise_and(ones(2))", "ones(2).long() << 1.5", "ones(3).index_select(0, "
    "tensor([0.0]))", "ones(3).gather(0, tensor([0.0]))", "ones(2, 2).masked_fill(ones(2, 2), 1)",
    "nn.functional.embedding(tensor([0.0]), ones(3, 2))",
    "nn.functional.nll_loss(ones(2, 3), tensor([0.0, 1.0]))", "linalg.inv(ones(2, 2).long())",
    "where(ones(2), ones(2), ones(2))", "ones(2).lerp(ones(2, dtype=float64), 0.5)",
    "tensor([5]) % 0", "tensor([5]) // 0", "fmod(tensor([5]), 0)",
    "div(tensor([5]), 0, rounding_mode='trunc')", "div(ones(2), 2, rounding_mode='round')",
    "pow(tensor([2, 3]), -1)",
    # sizes that cannot be allocated
    "empty(2**62)", "empty(2**31, 2**31)", "empty(HUGE)", "zeros(HUGE)", "ones(HUGE)",
    "full((HUGE,), 1.0)", "rand(HUGE)", "randn(2**62)", "arange(HUGE)", "eye(2**31)",
    "ones(3).expand(HUGE, 3).contiguous()", "ones(3).expand(HUGE, 3) * 2",
    "ones(3).repeat(HUGE)", "zeros(2**63)", "empty(-1)", "zeros(-1)", "rand(2, -1)",
    "empty_strided((2**62,), (1,))", "ones(2).new_zeros(HUGE)",
    # values out of range
    "zeros(2, dtype=int8).fill_(300)", "zeros(2, dtype=uint8).fill_(-256)",
    "zeros(2, dtype=int8).fill_(float('nan'))", "zeros(2, dtype=float16).fill_(1e6)",
    "full((2,), 300, dtype=int8)", "tensor([300], dtype=int8)", "tensor([1.5e300], "
    "dtype=int64)", "tensor([float('inf')], dtype=int32)", "zeros(2, dtype=int8).masked_fill("
    "tensor([True, False]), 300)", "zeros(2, dtype=int8).index_fill_(0, tensor([0]), 300)",
    "zeros(2, dtype=int8).clamp(max=300)", "arange(0, 10, 0)", "arange(0, float('inf'))",
    "linspace(0, 1, -1)", "randint(5, 3, (2,))", "randperm(-1)", "multinomial(ones(3), 4)",
    "bernoulli(tensor([1.5]))", "ones(3).normal_(0, -1)", "nn.functional.dropout(ones(2), 1.5)",
    "nn.functional.softmax(ones(2), 3)", "ones(2).uniform_(1, 0)",
    # wrong argument types
    "ones('a')", "ones(2.5)", "zeros((2, 2.5))", "ones(2).sum('a')", "ones(2) + 'a'",
    "ones(2).view('a')", "ones(2).reshape(2.0)", "tensor('a')", "tensor([1, 'a'])",
    "tensor([[1, 2], [3]])", "tensor([ones(2), ones(2)])", "ones(2).to('cpu', 'x')",
    "ones(2).expand(2.5)", "ones(2)[1.5]", "ones(2)['a']", "cat(ones(2))",
    "stack(ones(2, 2), 1.0)", "full(3, 1.0)", "ones(2).masked_fill(tensor([1, 0]), 2.0)",
    "nn.functional.relu('a')", "exp(2)", "ones(2).max(dim='x')", "manual_seed('a')",
]


def lstsq_bad(L):
    return L.linalg.lstsq(L.ones(3), L.ones(3, 2))


@pytest.mark.parametrize("call", BAD_CALLS)
def test_bad_calls(lib, oracle, call) -> None:
    def run(L):
        import builtins

        ns = {name: getattr(L, name) for name in dir(L)
              if not name.startswith("__") and not hasattr(builtins, name)}
        ns.update(L=L, HUGE=HUGE, lstsq_bad=lambda: lstsq_bad(L))
        return _outcome(lambda: eval(call, ns))

    theirs = run(oracle)
    assert theirs is not None, f"torch accepts {call!r}: not a bad call"
    _judge(call, theirs, run(lib))
