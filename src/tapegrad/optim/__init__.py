"""``tapegrad.optim``: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, ASGD,
LBFGS, NAdam, RAdam, Rprop, SparseAdam), ``lr_scheduler`` and ``swa_utils``.

    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    sched.step()

Every update follows torch 2.13's single-tensor (``foreach=False``) algorithm and its CPU
arithmetic; see ``optimizer.py`` for the base class and the kernels.
"""

from __future__ import annotations

from typing import Any as _Any

from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "ASGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
]


def __getattr__(name: str) -> _Any:
    """``optim.lr_scheduler`` and ``optim.swa_utils``, imported on first use."""
    if name in ("lr_scheduler", "swa_utils"):
        import importlib  # importlib: here, keeping the package's namespace (dir) as torch's

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"lr_scheduler", "swa_utils"})
