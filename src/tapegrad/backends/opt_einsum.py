"""``torch.backends.opt_einsum``: the opt_einsum path optimiser is not used by tapegrad."""

from typing import Any

enabled = False
strategy: Any = None


def is_available() -> bool:
    return False
