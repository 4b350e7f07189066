"""``tapegrad.optim``: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and ``lr_scheduler``.

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

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
