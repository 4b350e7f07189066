"""``tv_tensors.set_return_type``: whether the operations on a TVTensor return plain tensors (the
default) or the TVTensor's own class."""

from __future__ import annotations

from typing import Any

_TORCHFUNCTION_SUBCLASS = False


class _ReturnTypeCM:
    """Returned by ``set_return_type``; as a context manager it restores the previous setting."""

    def __init__(self, to_restore: bool) -> None:
        self.to_restore = to_restore

    def __enter__(self) -> _ReturnTypeCM:
        return self

    def __exit__(self, *args: Any) -> None:
        global _TORCHFUNCTION_SUBCLASS
        _TORCHFUNCTION_SUBCLASS = self.to_restore


def set_return_type(return_type: str) -> _ReturnTypeCM:
    """Set what the operations on TVTensors return: ``"Tensor"`` (plain tensors, the default) or
    ``"TVTensor"`` (the input's class, with its metadata). Use it as a function, or as a context
    manager (``with set_return_type("TVTensor"): ...``) to set it for a block only.

    Operations are the TVTensor's own methods and operators (``img + 1``, ``boxes.flip(0)``);
    ``clone``, ``to``, ``detach``, ``requires_grad_`` and ``pin_memory`` always keep the class.
    tapegrad's module functions (``torch.stack([img, img])``) and the methods of plain tensors
    given a TVTensor (``t.to(img)``) return plain tensors either way: they dispatch on no
    ``__torch_function__``.
    """
    global _TORCHFUNCTION_SUBCLASS
    to_restore = _TORCHFUNCTION_SUBCLASS
    try:
        _TORCHFUNCTION_SUBCLASS = {"tensor": False, "tvtensor": True}[return_type.lower()]
    except KeyError:
        raise ValueError(
            f"return_type must be 'TVTensor' or 'Tensor', got {return_type}") from None
    return _ReturnTypeCM(to_restore)


def _must_return_subclass() -> bool:
    return _TORCHFUNCTION_SUBCLASS


# the methods whose result keeps the TVTensor's class whatever the return type
_FORCE_TORCHFUNCTION_SUBCLASS = frozenset({"clone", "to", "detach", "requires_grad_",
                                           "pin_memory"})
