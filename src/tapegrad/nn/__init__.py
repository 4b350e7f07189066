"""``tapegrad.nn``: Module, Parameter, the layers and losses, ``functional``, ``init``, ``utils``.

    import tapegrad as torch
    import tapegrad.nn as nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
"""

from . import functional  # noqa: I001 - the layers below call it
from . import init, parameter
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from . import common_types, grad, modules, utils
from . import parallel
from .parallel import DataParallel

__all__ = ["Buffer", "DataParallel", "Parameter", "UninitializedBuffer",
           "UninitializedParameter", "common_types", "factory_kwargs", "functional", "grad",
           "init", "modules", "parallel", "parameter", "utils", *_modules_all]


def factory_kwargs(kwargs: dict | None) -> dict:
    """The factory arguments (``device``, ``dtype``, ``memory_format``) among a module's
    ``**kwargs``, with those of an explicit ``factory_kwargs`` dict; anything else is a
    TypeError, as is an argument given both ways."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out
