"""The kernel registry of the v2 functionals.

A functional (``resize``, ``hflip``, ...) dispatches on the type of its input: a plain tensor
or ``tv_tensors.Image`` goes to the image kernel, a PIL image to the PIL kernel, ``Mask``,
``BoundingBoxes``, ``KeyPoints`` and ``Video`` to theirs. ``_register_kernel_internal`` files a
kernel under (functional, input type); a kernel registered for a TVTensor class gets the plain
tensor and its result is wrapped back into the class (``tv_tensors.wrap``) unless it does that
itself. ``register_kernel`` (in the package's ``__init__``, which holds every functional's name)
lets users add kernels for their own TVTensor classes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Optional, Union

from tapegrad import Tensor
from tapegrad.vision import tv_tensors

# a fill argument: one number, one per channel, or None (no fill)
_FillType = Union[int, float, Sequence[int], Sequence[float], None]  # noqa: UP007
_FillTypeJIT = Optional[list[float]]  # noqa: UP045


def is_pure_tensor(inpt: Any) -> bool:
    """Whether ``inpt`` is a tensor but not a TVTensor."""
    return isinstance(inpt, Tensor) and not isinstance(inpt, tv_tensors.TVTensor)


_KERNEL_REGISTRY: dict[Callable, dict[type, Callable]] = {}


def _kernel_tv_tensor_wrapper(kernel: Callable) -> Callable:
    @functools.wraps(kernel)
    def wrapper(inpt: Any, *args: Any, **kwargs: Any) -> Any:
        # the kernel runs on the plain tensor; the result goes back into the input's class
        output = kernel(inpt.as_subclass(Tensor), *args, **kwargs)
        return tv_tensors.wrap(output, like=inpt)

    return wrapper


def _register_kernel_internal(functional: Callable, input_type: type, *,
                              tv_tensor_wrapper: bool = True) -> Callable:
    registry = _KERNEL_REGISTRY.setdefault(functional, {})
    if input_type in registry:
        raise ValueError(
            f"Functional {functional} already has a kernel registered for type {input_type}.")

    def decorator(kernel: Callable) -> Callable:
        registry[input_type] = (
            _kernel_tv_tensor_wrapper(kernel)
            if issubclass(input_type, tv_tensors.TVTensor) and tv_tensor_wrapper else kernel)
        return kernel

    return decorator


def _get_kernel(functional: Callable, input_type: type, *, allow_passthrough: bool = False
                ) -> Callable:
    """The kernel of ``functional`` for ``input_type`` (or its closest registered base class;
    a TVTensor subclass never falls back to the plain tensor kernel)."""
    registry = _KERNEL_REGISTRY.get(functional)
    if not registry:
        raise ValueError(f"No kernel registered for functional {functional.__name__}.")
    for cls in input_type.__mro__:
        if cls in registry:
            return registry[cls]
        elif cls is tv_tensors.TVTensor:
            break
    if allow_passthrough:
        return lambda inpt, *args, **kwargs: inpt
    raise TypeError(f"Functional F.{functional.__name__} supports inputs of type "
                    f"{registry.keys()}, but got {input_type} instead.")


def _register_five_ten_crop_kernel_internal(functional: Callable, input_type: type) -> Callable:
    """Like ``_register_kernel_internal``, for kernels returning a tuple of images."""
    registry = _KERNEL_REGISTRY.setdefault(functional, {})
    if input_type in registry:
        raise TypeError(
            f"Functional '{functional}' already has a kernel registered for type '{input_type}'.")

    def wrap(kernel: Callable) -> Callable:
        @functools.wraps(kernel)
        def wrapper(inpt: Any, *args: Any, **kwargs: Any) -> Any:
            output = kernel(inpt, *args, **kwargs)
            return type(output)(tv_tensors.wrap(o, like=inpt) for o in output)

        return wrapper

    def decorator(kernel: Callable) -> Callable:
        registry[input_type] = (wrap(kernel) if issubclass(input_type, tv_tensors.TVTensor)
                                else kernel)
        return kernel

    return decorator
