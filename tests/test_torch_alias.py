"""``tapegrad.install_torch_alias()`` (notebooks, the REPL) and ``tapegrad run`` alias every
public submodule, the CPU-only namespaces included; an old-style program with a CUDA preamble
prints what it prints on real torch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ALIASED = ["torch.cuda", "torch.cuda.amp", "torch.backends", "torch.backends.cudnn",
           "torch.version", "torch.jit", "torch.accelerator", "torch.amp", "torch.torch_version",
           "torch.nn", "torch.optim", "torch.utils.data", "torch.autograd"]


def test_install_torch_alias_in_a_session(lib_name):
    if lib_name == "torch":
        pytest.skip("the alias makes tapegrad stand for torch; nothing to check on torch")
    code = textwrap.dedent(f"""
        import tapegrad
        tapegrad.install_torch_alias()
        tapegrad.install_torch_alias()      # a second call changes nothing
        import torch, torch.nn as nn, torch.backends.cudnn as cudnn
        from torch.autograd import Variable
        from torch.utils.data import DataLoader
        import importlib, sys
        assert torch is tapegrad and nn is tapegrad.nn
        assert cudnn is tapegrad.backends.cudnn and DataLoader is tapegrad.utils.data.DataLoader
        for name in {ALIASED!r}:
            assert importlib.import_module(name) is sys.modules[name], name
            assert sys.modules[name].__name__ == "tapegrad" + name[len("torch"):], name
        stale = [n for n, m in sys.modules.items()
                 if n.startswith("torch.") and not m.__name__.startswith("tapegrad")]
        assert not stale, stale
        print(torch.__version__, torch.cuda.is_available())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "2.13.0+tapegrad0.1.0 False\n"


def test_install_torch_alias_after_a_real_torch_refuses_and_keeps_it_working(lib_name):
    """After a real ``import torch`` the alias is refused with a RuntimeError that says what to
    do, and nothing is changed: the real torch keeps working (printing a tensor imports more of
    torch's own modules) and ``import torch`` still gives it."""
    if lib_name == "torch":
        pytest.skip("the alias makes tapegrad stand for torch; nothing to check on torch")
    code = textwrap.dedent("""
        import sys
        import torch as real_torch
        import tapegrad
        before = dict(sys.modules)
        meta_path = list(sys.meta_path)
        try:
            tapegrad.install_torch_alias()
        except RuntimeError as exc:
            print("refused:", exc)
        else:
            raise SystemExit("the alias was installed over a real torch")
        assert sys.meta_path == meta_path
        assert all(sys.modules.get(n) is m for n, m in before.items() if n.startswith("torch"))
        import torch
        assert torch is real_torch
        x = real_torch.arange(3.0, requires_grad=True)
        (x * x).sum().backward()
        print(x.grad, real_torch.nn.Linear(2, 1).weight.shape)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    refused, printed = out.stdout.splitlines()
    assert refused.startswith("refused: install_torch_alias(): the real torch is already "
                              "imported in this process (")
    assert "Restart the interpreter (in Jupyter: the kernel)" in refused
    assert "`import tapegrad as torch`" in refused
    assert printed == "tensor([0., 2., 4.]) torch.Size([1, 2])"


OLD_STYLE_PROGRAM = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.backends.cudnn as cudnn
    from torch.autograd import Variable

    assert torch.__version__ >= "1.0" and torch.__version__ >= (2, 0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    cudnn.benchmark = True
    cudnn.deterministic = True
    torch.set_float32_matmul_precision("high")

    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = Variable(torch.FloatTensor([[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 0, 1]]))
    y = Variable(torch.randn(4, 1), requires_grad=False)
    for step in range(3):
        opt.zero_grad()
        loss = ((model(x.to(device)) - y) ** 2).mean()
        loss.backward()
        opt.step()
        print(step, f"{loss.item():.4f}", x.type(), isinstance(x, torch.FloatTensor))
    try:
        x.cuda()
    except AssertionError as exc:
        print("cuda:", exc)
    print(torch.LongTensor([1, 2]).type(torch.DoubleTensor), torch.Tensor(2, 3).shape, device)
    """
)


def test_old_style_program_runs_as_on_torch(lib_name, tmp_path):
    if lib_name == "torch":
        pytest.skip("compares tapegrad run with real torch itself")
    script = tmp_path / "old_style.py"
    script.write_text(OLD_STYLE_PROGRAM)
    ours = subprocess.run([sys.executable, "-m", "tapegrad", "run", str(script)],
                          capture_output=True, text=True)
    assert ours.returncode == 0, ours.stderr
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            check=True)
    assert ours.stdout == theirs.stdout


def test_namespaces_are_attributes(compare):
    names = ["cuda", "backends", "jit", "accelerator", "amp", "version", "autocast",
             "OutOfMemoryError", "compile", "FloatTensor", "set_default_device"]
    compare(lambda L: [(n, n in dir(L), hasattr(L, n)) for n in names]
            + [hasattr(L, "no_such_name")])


def test_without_torch_installed_the_import_error_says_what_exists(tmp_path):
    """Where neither torch nor torchvision is installed (a fresh interpreter that sees only
    tapegrad and its dependencies), ``import torchvision`` after ``import tapegrad as torch``
    fails as ever (ModuleNotFoundError, ``name`` set), but the message names tapegrad.vision
    and the ways to alias it; ``importlib.util.find_spec`` probes still get None."""
    from pathlib import Path

    import ml_dtypes
    import numpy
    import scipy

    import tapegrad

    deps = tmp_path / "deps"
    deps.mkdir()
    for module in (numpy, scipy, ml_dtypes):
        folder = Path(module.__file__).parent
        (deps / folder.name).symlink_to(folder)
        libs = folder.with_name(folder.name + ".libs")
        if libs.exists():
            (deps / libs.name).symlink_to(libs)
    code = textwrap.dedent("""
        import importlib, importlib.util
        import tapegrad as torch
        assert importlib.util.find_spec("torchvision") is None
        assert importlib.util.find_spec("torch") is None
        for name in ("torchvision", "torchvision.transforms", "torch.nn"):
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as exc:
                print(exc.name, "|", exc)
        import tapegrad.vision as torchvision
        print(torchvision.__name__)
    """)
    env = {"PYTHONPATH": os.pathsep.join([str(Path(tapegrad.__file__).parent.parent),
                                          str(deps)]), "PATH": os.environ.get("PATH", "")}
    out = subprocess.run([sys.executable, "-S", "-s", "-c", code], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    vision_hint = ("No module named 'torchvision'; tapegrad's torchvision is tapegrad.vision: "
                   "write `import tapegrad.vision as torchvision`, or make `import torchvision` "
                   "load it with tapegrad.install_torch_alias() (a notebook, the REPL) or "
                   "`tapegrad run script.py`")
    assert lines[0] == "torchvision | " + vision_hint
    assert lines[1] == "torchvision | " + vision_hint
    assert lines[2].startswith("torch | No module named 'torch'; tapegrad stands in for it: "
                               "write `import tapegrad as torch`")
    assert lines[3] == "tapegrad.vision"
