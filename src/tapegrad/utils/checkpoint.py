"""Activation checkpointing: keep less for backward, recompute it when the backward pass needs it.

``checkpoint(fn, *args)`` runs ``fn`` so that the tensors its ops would save for backward are
not kept; the backward pass runs ``fn`` again on the same inputs (with the random number
generator put back where it was, so dropout draws the same mask) and uses what that run saves.
The gradients are the same; the memory held between forward and backward is the block's inputs
and outputs instead of every intermediate.

Two implementations, chosen by ``use_reentrant`` as in torch:

    use_reentrant=True   a custom Function (CheckpointFunctionBackward): forward under no_grad;
                         its backward recomputes with grad on and runs a nested backward
    use_reentrant=False  the ops record their nodes as usual, but through saved_tensors_hooks
                         each saved tensor is packed as its position in the block; the first
                         unpack recomputes the block and hands back the tensor at that position

``checkpoint_sequential(functions, segments, input)`` checkpoints all segments of a Sequential
but the last.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor
from ..autograd import _is_checkpoint_valid
from ..autograd import backward as autograd_backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..nn.modules.container import Sequential

__all__ = ["checkpoint", "checkpoint_sequential"]


def _get_rng() -> Tensor:
    return get_rng_state()


def _set_rng(state: Tensor) -> None:
    set_rng_state(state)


def _detach_inputs(args: tuple) -> list:
    out = []
    for a in args:
        if isinstance(a, Tensor):
            d = a.detach()
            d.requires_grad_(a.requires_grad)
            out.append(d)
        else:
            out.append(a)
    return out


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward recomputes it."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool,
                *args: Any) -> Any:
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = _get_rng()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        detached = _detach_inputs(tuple(inputs))
        current = _get_rng() if ctx.preserve_rng_state else None
        try:
            if ctx.preserve_rng_state:
                _set_rng(ctx.rng_state)
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if current is not None:
                _set_rng(current)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        grads_in = tuple(d.grad if isinstance(d, Tensor) else None for d in detached)
        return (None, None) + grads_in


def _explicit_use_reentrant(use_reentrant: bool | None, opening: str) -> bool:
    """``use_reentrant``; when not given, True, after torch's warning (``opening``, then the
    advice both checkpoint functions give) naming the caller of the checkpoint function."""
    if use_reentrant is None:
        warnings.warn(
            opening + "use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            UserWarning,
            stacklevel=3,
        )
        return True
    return use_reentrant


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable | None = None, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its intermediates for backward; the
    backward pass recomputes them.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.utils.checkpoint import checkpoint
        >>> x = torch.ones(2, requires_grad=True)
        >>> checkpoint(lambda t: (t.exp() * 2).sum(), x, use_reentrant=False).backward()
        >>> x.grad
        tensor([5.4366, 5.4366])
    """
    use_reentrant = _explicit_use_reentrant(
        use_reentrant,
        "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
        "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
        "exception. ")
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if context_fn is not None:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=2)
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, args, kwargs)


def _checkpoint_without_reentrant(function: Callable, preserve: bool, args: tuple,
                                  kwargs: dict) -> Any:
    rng_state = _get_rng() if preserve else None
    frame: dict[str, Any] = {"count": 0, "recomputed": None}

    def pack(t: Tensor) -> int:  # keep the position only
        index = frame["count"]
        frame["count"] += 1
        return index

    def unpack(index: int) -> Tensor:
        if frame["recomputed"] is None:
            frame["recomputed"] = _recompute()
        return frame["recomputed"][index]

    def _recompute() -> list:
        saved: list[Tensor] = []

        def keep(t: Tensor) -> None:  # the recomputed graph itself is never run: keep nothing
            saved.append(t)

        current = _get_rng() if rng_state is not None else None
        try:
            if rng_state is not None:
                _set_rng(rng_state)
            with enable_grad(), saved_tensors_hooks(keep, _never_unpacked):
                function(*_detach_inputs(args), **kwargs)
        finally:
            if current is not None:
                _set_rng(current)
        return saved

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def _never_unpacked(packed: Any) -> Tensor:
    raise RuntimeError("a recomputed checkpoint graph is never run backward")


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a Sequential (or list of modules) in ``segments`` chunks, checkpointing all but the
    last chunk."""
    use_reentrant = _explicit_use_reentrant(
        use_reentrant,
        "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
        "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
        "is not passed. ")
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    size = len(functions) // segments
    if size == 0:
        raise ValueError("range() arg 3 must not be zero")

    def run(start: int, end: int) -> Callable:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
