"""``torch._dynamo.config``: the settings of tapegrad's captures that torch names here.

``recompile_limit`` (alias ``cache_size_limit``, 8 as in torch): the signatures one compiled
callable captures before further new ones run eagerly; it is ``compiler.replay``'s limit, read
at every call. The other names are accepted so that code setting them runs.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..compiler import replay

_ALIASES = {"cache_size_limit": "recompile_limit"}

suppress_errors = False
verbose = False
accumulated_recompile_limit = 256
accumulated_cache_size_limit = 256
automatic_dynamic_shapes = True
assume_static_by_default = True
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True


class _Config(types.ModuleType):
    """The module, with ``recompile_limit`` read from and written to the replay's limit."""

    def __getattr__(self, name: str) -> Any:
        if _ALIASES.get(name, name) == "recompile_limit":
            return replay.cache_size_limit
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if _ALIASES.get(name, name) == "recompile_limit":
            replay.cache_size_limit = value
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Config
