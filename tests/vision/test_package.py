"""``import torchvision`` under the torch alias is tapegrad.vision, with torchvision's top level."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def test_top_level_matches_torchvision(vision, tv):
    # the oracle's wheel is the CUDA build ("0.28.0+cu130"), ours is labelled as torch's version
    # is ("0.28.0+tapegrad0.1.0"): the release is what must match
    assert vision.__version__.split("+")[0] == tv.__version__.split("+")[0] == "0.28.0"
    assert vision.get_image_backend() == tv.get_image_backend() == "PIL"
    assert vision.get_video_backend() == tv.get_video_backend()
    for bad in ("nope", "pil"):
        with pytest.raises(ValueError) as theirs:
            tv.set_image_backend(bad)
        with pytest.raises(ValueError) as ours:
            vision.set_image_backend(bad)
        assert str(ours.value) == str(theirs.value)
    assert vision.disable_beta_transforms_warning() is None
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        vision.nope  # noqa: B018


def test_torchvision_is_aliased_on_demand(lib_name):
    if lib_name == "torch":
        pytest.skip("the alias makes tapegrad stand for torch; nothing to check on torch")
    code = textwrap.dedent("""
        import sys
        import tapegrad
        tapegrad.install_torch_alias()
        assert "tapegrad.vision" not in sys.modules     # nothing imported until asked for
        import torchvision
        import torch
        assert torchvision is tapegrad.vision and torch is tapegrad
        assert sys.modules["torchvision"] is tapegrad.vision
        assert torchvision.__spec__.name == "tapegrad.vision"
        try:
            import torchvision._C
        except ModuleNotFoundError as exc:
            print("private:", exc)
        try:
            import torch.nope
        except ModuleNotFoundError as exc:
            print("missing:", exc)
        print(torchvision.__version__)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    from tapegrad.torch_version import TAPEGRAD_VERSION as tg

    assert out.returncode == 0, out.stderr
    assert out.stdout == ("private: No module named 'torchvision._C'\n"
                          f"missing: No module named 'torch.nope'\n0.28.0+tapegrad{tg}\n")
