"""The Tensor attributes of torch's API that a CPU-only build of dense tensors answers
simply: flags for other backends and layouts (``is_xla``, ``is_nested``, ...), the methods
that move a tensor to a device this build lacks (``ipu()``, ``mtia()``, which raise what such a
torch raises), the removed ``Variable`` features (``volatile``, ``reinforce``), and a few
conveniences (``to_dense``, ``module_load``, ``torch.is_complex``...).

Example:
    >>> import tapegrad as torch
    >>> x = torch.zeros(2)
    >>> x.is_xla, x.is_nested, x.is_distributed(), x.to_dense() is x
    (False, False, False, True)
"""

from __future__ import annotations

import warnings
from typing import Any

from ._device import NO_MTIA
from ._tensor import Tensor

REINFORCE_REMOVED = (
    "reinforce() was removed.\nUse torch.distributions instead.\nSee "
    "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
    "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = env.step(action)\n"
    "action.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = policy_network(state)\n"
    "# NOTE: categorical is equivalent to what used to be called multinomial\nm = "
    "torch.distributions.Categorical(probs)\naction = m.sample()\nnext_state, reward = "
    "env.step(action)\nloss = -m.log_prob(action) * reward\nloss.backward()\n"
)


def _volatile_get(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _volatile_set(self: Tensor, value: Any) -> None:
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


def reinforce(self: Tensor, reward: Any) -> None:
    """Removed from torch long ago: says so, with what to use instead."""
    raise RuntimeError(REINFORCE_REMOVED)


def ipu(self: Tensor, device: Any = None, non_blocking: bool = False, *,
        memory_format: Any = None) -> Tensor:
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


def mtia(self: Tensor, device: Any = None, non_blocking: bool = False, *,
         memory_format: Any = None) -> Tensor:
    raise AssertionError(NO_MTIA)


def is_distributed(input: Tensor) -> bool:
    """False: no tensor here is spread over processes."""
    if not isinstance(input, Tensor):
        raise TypeError("is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False


def is_complex(input: Tensor) -> bool:
    """torch.is_complex: whether ``input``'s dtype is complex."""
    if not isinstance(input, Tensor):
        raise TypeError("is_complex(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input._data.dtype.kind == "c"


def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """``self`` (already dense), converted to ``dtype`` when one is given."""
    return self if dtype is None else self.to(dtype)


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How ``load_state_dict`` turns the saved ``other`` into the value swapped in for
    ``self``: ``other`` detached (``assign``), else ``self`` with other's values copied in,
    detached."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def index_put_(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """torch.index_put_: ``input.index_put_(indices, values, accumulate)``."""
    return input.index_put_(indices, values, accumulate)


def _install() -> None:
    false = property(lambda self: False)
    attributes: dict[str, Any] = {
        "is_xla": false, "is_ipu": false, "is_maia": false, "is_mtia": false,
        "is_nested": false, "name": property(lambda self: None),
        "volatile": property(_volatile_get, _volatile_set), "reinforce": reinforce,
        "ipu": ipu, "mtia": mtia, "is_distributed": is_distributed, "to_dense": to_dense,
        "module_load": module_load,
    }
    for name, value in attributes.items():
        setattr(Tensor, name, value)


_install()

__all__ = ["index_put_", "is_complex", "is_distributed", "reinforce", "ipu", "mtia", "to_dense",
           "module_load"]
