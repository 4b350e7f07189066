"""``__version__`` (a TorchVersion) and ``torch.version``: comparisons as torch's TorchVersion
makes them (PEP 440 against strings and tuples, str fallback), checked on the same version
strings with real torch's class."""

from __future__ import annotations

import pytest

OTHERS = ["2.0", "2.13", "2.13.0", "2.13.0+cpu", "2.13.0+tapegrad0.1.0", "2.13.0.post1",
          "2.13.0a0", "2.13.0rc1", "2.13.0.dev20250101", "2.14", "3", "1!0.1", "abc",
          (2, 13), (2, 14), (2, 13, 0), (2, 13, 0, 1), (2,), [2], 2, 2.1, None]
VERSIONS = ["2.13.0+tapegrad0.1.0", "2.13.0+cpu", "1.10.0a0", "2.1.0.dev20230801+cu118",
            "2.13.0", "0.4.1.post2", "2.13.0rc2"]


def _table(cls, version):
    import operator

    v = cls(version)
    out = []
    for other in OTHERS:
        row = []
        for op in (operator.lt, operator.le, operator.eq, operator.ne, operator.ge, operator.gt):
            try:
                row.append(op(v, other))
            except TypeError as exc:
                row.append(f"TypeError: {exc}")
        out.append(row)
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_comparisons_match_torch_version(lib, version):
    from torch.torch_version import TorchVersion as Reference

    from tapegrad.torch_version import TorchVersion

    assert _table(TorchVersion, version) == _table(Reference, version)


def test_dunder_version(lib):
    if lib.__name__ == "torch":
        pytest.skip("torch reports its own build (2.13.0+cpu)")
    v = lib.__version__
    assert v == "2.13.0+tapegrad0.1.0" and isinstance(v, str)
    assert type(v).__name__ == "TorchVersion"
    assert v >= "2.0" and v >= (2, 13) and v < (2, 14) and not v == (2, 13, 0)
    assert v.split("+")[0].split(".") == ["2", "13", "0"]
    assert hash(v) == hash(str(v)) and {v: 1}[str(v)] == 1
    assert lib.version.__version__ == str(v) and type(lib.version.__version__) is str
    assert lib.version.tapegrad_version == "0.1.0"


def test_version_module(compare):
    compare(lambda L: [L.version.cuda, L.version.debug, L.version.hip, L.version.rocm,
                       L.version.xpu, type(L.version.git_version).__name__, L.version.__name__,
                       type(L.version.__version__).__name__])


def test_packaging_reads_the_version(lib):
    """packaging parses it (the local label names tapegrad); like torch's TorchVersion, ours
    compares with strings and tuples, not with packaging's Version objects (torch's only knows
    its vendored copy of that class)."""
    version = pytest.importorskip("packaging.version")
    from torch.torch_version import TorchVersion as Reference

    from tapegrad.torch_version import TorchVersion

    parsed = version.parse(TorchVersion("2.13.0+tapegrad0.1.0"))
    assert (parsed.local, parsed.base_version) == ("tapegrad0.1.0", "2.13.0")
    assert parsed >= version.parse("1.9")
    for cls in (TorchVersion, Reference):
        with pytest.raises(TypeError):
            _ = cls("2.13.0") < version.Version("3.0")
