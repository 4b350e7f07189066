"""Every in-scope entry of torch's OpInfo database, judged by its own samples.

One test per entry (``test_opinfo[add]``, ``test_opinfo[squeeze.multiple]``): every sample at
float64, float32 and the integer and bool dtypes the entry supports runs through torch and
tapegrad; outputs, dtypes, shapes, gradients (first order, and second order where torch has
them), ``grad_fn`` names and error inputs must agree (see ``opinfo_harness``).

An entry that tapegrad lacks or fails is a failure, unless ``opinfo_expected_failures.txt`` lists
it with its reason; then it is an expected failure, and strictly so: a listed entry that passes
every sample fails the test, to be taken off the list. Quick mode (the default) runs the first
``OPINFO_SAMPLES`` samples (2) at float64, float32, int64 and bool; a listed entry whose
reason is tagged ``[full sweep]`` fails only beyond those (the full sweep holds it to the list),
any other listed entry that passes them is run on every sample before it can count as passing.
``-m opinfo_full`` (or ``OPINFO_FULL=1``) selects ``test_opinfo_full``, the sweep over every
sample and dtype.
"""

from __future__ import annotations

import fnmatch

import opinfo_harness as h
import pytest
from cpu_kernels import VECTORIZED

ENTRIES = h.in_scope_entries()
EXPECTED = h.read_list(h.EXPECTED_FAILURES_FILE)


def _check(op, full: bool) -> None:
    eid = h.entry_id(op)
    listed = EXPECTED.get(eid)
    verdict = h.run_entry(op, full=full)
    if listed is None:
        if not verdict.passed:
            pytest.fail(f"{eid} {verdict.status}: " + "\n".join(verdict.failures[:5]),
                        pytrace=False)
        return
    if verdict.passed and h.KERNELS_TAG in listed and not VECTORIZED:
        return  # (torch's scalar kernels happen to agree with tapegrad here)
    if verdict.passed and not full:
        if listed.startswith(h.FULL_SWEEP_TAG):  # it fails beyond the quick samples
            pytest.xfail(f"{listed} (the quick samples pass; -m opinfo_full checks the rest)")
        verdict = h.run_entry(op, full=True)  # fixed? the full sweep decides
    if verdict.passed:
        pytest.fail(f"{eid} is listed in {h.EXPECTED_FAILURES_FILE.name} ({listed}) but passes "
                    "every sample: take it off the list", pytrace=False)
    pytest.xfail(f"{listed} | {verdict.failures[0] if verdict.failures else verdict.status}")


@pytest.mark.parametrize("op", ENTRIES, ids=h.entry_id)
def test_opinfo(op) -> None:
    _check(op, full=h.FULL)


@pytest.mark.opinfo_full
@pytest.mark.parametrize("op", ENTRIES, ids=h.entry_id)
def test_opinfo_full(op, request) -> None:
    if not (h.FULL or "opinfo_full" in (request.config.option.markexpr or "")):
        pytest.skip("the full sweep runs when selected: -m opinfo_full or OPINFO_FULL=1")
    _check(op, full=True)


def test_lists_name_real_entries() -> None:
    """The expected-failures list names in-scope entries only, and every ``opdb:`` pattern of
    the out-of-scope file matches an entry (no stale lines)."""
    ids = {h.entry_id(op) for op in h.op_db()}
    in_scope = {h.entry_id(op) for op in ENTRIES}
    stale = sorted(set(EXPECTED) - in_scope)
    assert not stale, f"not in-scope op_db entries: {stale}"
    patterns = [p[5:] for p in h.read_list(h.OUT_OF_SCOPE_FILE) if p.startswith("opdb:")]
    unused = [p for p in patterns if not any(fnmatch.fnmatchcase(i, p) for i in ids)]
    assert not unused, f"out-of-scope patterns matching no op_db entry: {unused}"
