"""Classes and structseqs print as torch's: ``type(x)`` is ``<class 'torch.Tensor'>`` under the
torch alias (``tapegrad.install_torch_alias()``, what ``tapegrad run`` does) and
``<class 'tapegrad.Tensor'>`` without it; return_types print their fields as tensors.

Each listing runs in a fresh interpreter (the alias renames classes process-wide): real torch,
tapegrad under the alias, and tapegrad by its own name.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

LISTING = r'''
x = torch.tensor([[3, -1, 7], [2, 5, 0]])
f = torch.tensor([1.5, -2.0, 0.25])
items = [
    type(x), type(torch.nn.Parameter(f)), type(x.shape), type(x.dtype), type(x.device),
    type(torch.Generator()), type(x.layout), x.layout, torch.strided, type(torch.finfo(
        torch.float32)), type(torch.iinfo(torch.int32)), x.shape, x.dtype, x.device,
    torch.device("cpu", 0), torch.float64, torch.bfloat16, torch.contiguous_format,
    type(torch.contiguous_format), torch.nn.Parameter(f), torch.aminmax(x),
    type(torch.aminmax(x)), x.kthvalue(2), x.max(0), torch.sort(f), torch.topk(f, 2),
    torch.linalg.slogdet(torch.eye(2)), type(torch.max(x, 1)), torch.return_types.max,
    torch.return_types.aminmax_out, torch.dtype, torch.device, torch.Size, torch.Tensor,
    torch.nn.Parameter, torch.Generator,
    type(torch.default_generator), torch.return_types.aminmax(
        (torch.tensor(1), torch.tensor(2))),
    torch.return_types.max([f, x[0]]), tuple(torch.aminmax(x)), torch.aminmax(x).min,
    torch.storage.UntypedStorage, torch.linalg.LinAlgError, torch.Stream, torch.Event,
    torch.profiler.ProfilerActivity, torch.profiler.ProfilerActivity.CPU,
    torch.autograd.profiler.profile, torch.amp.GradScaler, torch.GradScaler,
]
for item in items:
    print(repr(item).replace("\n", "\\n"))
'''

# the classes of the library's Python modules: by its own name, under their torch paths
MODULE_CLASSES = r'''
for item in [torch.nn.Linear, torch.nn.Module, torch.optim.SGD, torch.utils.data.DataLoader,
             torch.autograd.Function, torch.no_grad, torch.nn.LazyLinear, torch.optim.Muon]:
    print(repr(item))
'''

# torchvision's classes, and a pickle round trip of a transform under the alias
VISION_CLASSES = r'''
import pickle
import torchvision
from torchvision import datasets, models, transforms
from torchvision.transforms import v2
for item in [datasets.FashionMNIST, datasets.ImageFolder, transforms.ToTensor,
             transforms.Compose, v2.RandomResizedCrop, models.ResNet,
             models.resnet.BasicBlock, torchvision.ops.misc.Conv2dNormActivation]:
    print(repr(item))
crop = pickle.loads(pickle.dumps(v2.RandomResizedCrop(4)))
print(type(crop), crop)
'''

PRELUDES = {
    "torch": "import torch\n",
    "alias": "import tapegrad\ntapegrad.install_torch_alias()\nimport torch\n",
    "own": "import tapegrad as torch\n",
}


def _run(kind: str, listing: str = LISTING) -> list[str]:
    env_path = "src" if kind != "torch" else ""
    code = PRELUDES[kind] + listing
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.fixture(scope="module")
def torch_lines() -> list[str]:
    return _run("torch")


def test_under_the_alias(torch_lines, lib_name):
    if lib_name != "tapegrad":
        pytest.skip("the alias is tapegrad's")
    assert _run("alias") == torch_lines


def test_by_its_own_name(torch_lines, lib_name):
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's own name")
    own = _run("own")
    assert own[0] == "<class 'tapegrad.Tensor'>"
    assert [line.replace("tapegrad", "torch") for line in own] == torch_lines
    classes = _run("own", MODULE_CLASSES)
    assert [line.replace("tapegrad", "torch") for line in classes] == _run(
        "torch", MODULE_CLASSES)


def test_vision_classes_under_the_alias(lib_name, tmp_path):
    if lib_name != "tapegrad":
        pytest.skip("the alias is tapegrad's")
    # torchvision's side: the real one, through the stand-in CUDA libraries it needs here
    script = tmp_path / "vision_classes.py"
    script.write_text("import torch\n" + VISION_CLASSES)
    oracle = Path(__file__).resolve().parent / "vision_oracle.py"
    proc = subprocess.run([sys.executable, str(oracle), str(script)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _run("alias", VISION_CLASSES) == proc.stdout.splitlines()
