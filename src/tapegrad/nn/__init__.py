"""``tapegrad.nn``: Module, Parameter, the layers and losses, ``functional``, ``init``, ``utils``.

    import tapegrad as torch
    import tapegrad.nn as nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
"""

from . import functional  # noqa: I001 - the layers below call it
from . import init, parameter
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter
from . import modules, utils
from . import parallel
from .parallel import DataParallel

__all__ = ["Buffer", "DataParallel", "Parameter", "functional", "init", "modules", "parallel",
           "parameter", "utils", *_modules_all]
