"""Shared fixtures: the library under test (``lib``) and torch-comparison helpers.

Choose the library with ``TAPEGRAD_TEST_LIB=torch`` (or ``pytest --lib torch``); the default is
``tapegrad``. Running the suite with ``torch`` compares torch with itself and must pass 100%:
that is how the tests themselves are validated. Real torch is always available as the oracle
(fixture ``oracle``); the library itself never imports it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The oracle is loaded before any test runs. A test that installs the torch alias has its
# ``torch`` modules put back afterwards (``_torch_alias_undone``) as they were before it; were
# real torch first loaded during such a test, it would be taken out of ``sys.modules`` with the
# alias, and loading it a second time in one process crashes in its C extension.
import torch as _oracle  # noqa: F401

HERE = Path(__file__).resolve().parent
# The helper modules (torchcompare, ops/op_samples) live next to the tests, not in a package.
for _path in (HERE, HERE / "ops"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import torchcompare  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lib",
        default=None,
        choices=("tapegrad", "torch"),
        help=f"library under test (default: ${torchcompare.ENV_VAR} or 'tapegrad')",
    )


def pytest_configure(config: pytest.Config) -> None:
    chosen = config.getoption("--lib")
    if chosen:
        torchcompare.LIB_NAME = chosen


def pytest_report_header(config: pytest.Config) -> str:
    return f"library under test: {torchcompare.LIB_NAME} (oracle: torch)"


@pytest.fixture(scope="session")
def lib_name() -> str:
    """'tapegrad' or 'torch'."""
    return torchcompare.LIB_NAME


@pytest.fixture(scope="session")
def lib(lib_name):
    """The module under test, used exactly like ``torch``."""
    return torchcompare.load_lib(lib_name)


@pytest.fixture(scope="session")
def oracle():
    """Real torch, the reference every result is compared with."""
    import torch

    return torch


@pytest.fixture(scope="session")
def compare(lib, oracle):
    """``compare(scenario)``: run ``scenario(L)`` on torch and on lib and assert they agree.

    Compares the snapshot of the return value (tensors: dtype, shape, values, requires_grad,
    grad_fn name), any exception (type and message) and all warnings. Returns torch's record,
    so a test can also check that the scenario does what it claims on torch.
    """

    def run(scenario, *, rtol=1e-6, atol=1e-8):
        return torchcompare.compare_on_both(scenario, lib, oracle, rtol=rtol, atol=atol)

    return run


@pytest.fixture(autouse=True)
def _torch_alias_undone():
    """A test that runs ``tapegrad run`` or ``install_torch_alias()`` in this process points
    ``torch`` and ``torch.*`` in ``sys.modules`` at tapegrad, puts the alias's import hook first
    in ``sys.meta_path`` and names tapegrad's classes under ``torch``. The tests that follow
    compare with real torch and pickle tapegrad's classes (a pickle names a class by its module),
    so all three are put back as they were."""
    modules = dict(sys.modules)
    naming = sys.modules.get("tapegrad._naming")
    package = naming.package() if naming is not None else "tapegrad"
    yield
    alias = sys.modules.get("tapegrad._torch_alias")
    finder = getattr(alias, "_FINDER", None)
    hooked = finder is not None and finder in sys.meta_path
    naming = sys.modules.get("tapegrad._naming")
    renamed = naming is not None and naming.package() != package
    if not hooked and not renamed and sys.modules.get("torch") is modules.get("torch"):
        return
    aliased = ("torch", "torchvision")
    for name in [n for n in sys.modules if n.split(".")[0] in aliased]:
        del sys.modules[name]
    sys.modules.update({n: m for n, m in modules.items() if n.split(".")[0] in aliased})
    if hooked:
        sys.meta_path.remove(finder)
    if naming is not None:
        naming.set_package(package)


@pytest.fixture(autouse=True)
def _keep_torchs_distribution_validation():
    """Real torch.compile (torch._dynamo) turns off the argument validation of
    torch.distributions for the whole process when it is first imported, whichever test does
    that; the tests that run later compare torch's validation errors (a Beta with a negative
    concentration, torchvision's MixUp(alpha=-1)), so it is put back as it was."""
    before = _oracle.distributions.Distribution._validate_args
    yield
    if _oracle.distributions.Distribution._validate_args != before:
        _oracle.distributions.Distribution.set_default_validate_args(before)
