"""resnet18: ResNet-18 on 32x32 RGB images (CIFAR-10's size), ten classes, one SGD step.

He et al.'s ResNet-18 as it is adapted to 32x32 inputs: a 3x3 convolution to 64 channels
(no 7x7 stem, no max pooling), four stages of two basic blocks (3x3 convolution, batch norm,
ReLU, 3x3 convolution, batch norm, the shortcut, ReLU) at 64, 128, 256 and 512 channels, the
last three starting with stride 2 and a 1x1 convolution with batch norm on the shortcut;
global average pooling and a linear layer. ``nn.Conv2d`` without bias, ``nn.BatchNorm2d`` in
training mode, ``F.cross_entropy``, ``optim.SGD`` lr 0.1 with momentum 0.9 and weight decay
5e-4. The notes report the share of a tapegrad (eager) step inside the convolutions and
matrix products. A step takes a good part of a second, so it is timed over fewer repeats
than the small workloads (its ``timing``). Reported in ms per step.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Step, Timing, WeightBank, Workload, training_step


def config(quick: bool) -> dict:
    # (quick: 16x16, so the last stage's batch norm still sees 16 values per channel; over
    # fewer, the normalization magnifies float32 rounding beyond the loss check's tolerance)
    return {"batch": 4, "image": 16 if quick else 32, "classes": 10, "lr": 0.1}


def build(lib: ModuleType, classes: int):
    """The model, written once against the torch API."""
    nn = lib.nn
    F = lib.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, c_in: int, c_out: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.shortcut = nn.Sequential()
            if stride != 1 or c_in != c_out:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet18(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            layers = []
            c_in = 64
            for c_out, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [BasicBlock(c_in, c_out, stride), BasicBlock(c_out, c_out, 1)]
                c_in = c_out
            self.layers = nn.Sequential(*layers)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            x = self.pool(self.layers(x))
            return self.fc(x.flatten(1))

    return ResNet18()


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    batch, image, classes = cfg["batch"], cfg["image"], cfg["classes"]
    model = build(lib, classes)
    bank.load(lib, model)
    x = bank.tensor(lib, "x", lambda r: r.standard_normal((batch, 3, image, image),
                                                          dtype=np.float32))
    y = bank.tensor(lib, "y", lambda r: r.integers(0, classes, batch, dtype=np.int64))
    F = lib.nn.functional
    opt = lib.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=5e-4)
    return training_step(lambda: F.cross_entropy(model(x), y), opt)


WORKLOAD = Workload(
    name="resnet18",
    unit="ms/step",
    requires=("nn.Module", "nn.Sequential", "nn.Conv2d", "nn.BatchNorm2d",
              "nn.AdaptiveAvgPool2d", "nn.Linear", "nn.functional.relu",
              "nn.functional.cross_entropy", "optim.SGD"),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: (f"ResNet-18 (3x3 stem, 4 stages of 2 basic blocks), batch "
                          f"{cfg['batch']} of 3x{cfg['image']}x{cfg['image']}, "
                          f"{cfg['classes']} classes, SGD momentum"),
    timing=Timing(warmup=1, repeats=3, min_repeat_s=0.0),
    matmul_ops=("convolution", "mm", "addmm"),
)
