"""``torch.nn.utils.prune``: zero out parts of a parameter with a mask.

Pruning ``module.weight`` moves the parameter to ``module.weight_orig``, adds the buffer
``module.weight_mask`` and makes ``module.weight`` a plain attribute equal to
``weight_orig * weight_mask``, recomputed before every forward by a forward pre-hook (the
pruning method object itself). Pruning the same tensor again combines the new mask with the
old one in a :class:`PruningContainer`, which applies the new method to the entries (or
channels) still unpruned. ``remove`` makes the pruning permanent.

Masks match torch's: random ones are drawn from the same generator in the same order, and
when ties make "the k smallest" ambiguous the entries are picked as torch's CPU ``topk``
picks them (see ``_topk_indices``).
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import numpy as np

from ... import _tensor
from ..._creation import ones_like, zeros_like
from ..._random import rand, rand_like
from ..._sort_emulation import topk_positions
from ...autograd.grad_mode import no_grad
from .convert_parameters import parameters_to_vector

Tensor = _tensor.Tensor

__all__ = [
    "BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
    "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
    "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
    "random_structured", "random_unstructured", "remove",
]


class BasePruningMethod(ABC):
    """A way of computing a pruning mask; also the forward pre-hook that re-applies it.

    Subclasses define ``compute_mask(t, default_mask)`` and ``PRUNING_TYPE``
    ("unstructured", "structured" with a ``dim``, or "global").
    """

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t`` (same shape), given the mask from earlier pruning."""

    def apply_mask(self, module: Any) -> Tensor:
        """``<name>_orig * <name>_mask``: the pruned tensor."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)`` (combined with any
        earlier pruning of that tensor); the mask is computed from ``importance_scores``
        (default: the tensor itself)."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as "
                                     f"parameter {name} of {module}, got "
                                     f"{importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):  # first pruning of this tensor
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):  # put the parameter back
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times the mask this method computes for it (nothing is registered)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor "
                                     f"t, got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter again, holding the
        pruned values; ``<name>_orig`` and ``<name>_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 "removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls: type, module: Any, name: str, *args: Any,
                      **kwargs: Any) -> BasePruningMethod:
    """The new method, or the container holding the earlier ones and the new one; the
    earlier hook is taken off the module."""
    old_method = None
    found = 0
    hooks_to_remove = []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            hooks_to_remove.append(k)
            found += 1
    if found > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for k in hooks_to_remove:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old_method is not None:
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        else:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied, in order, to one tensor (iterative pruning)."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:  # several methods, or none
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (it must act on the same tensor name)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: Any) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the part of ``t`` still unpruned (entries for
        "unstructured", channels with a non-zero mask for "structured", all of it for
        "global") and written into a copy of ``default_mask``."""
        method = self._pruning_methods[-1]
        mask = default_mask
        new_mask = mask.to(dtype=t.dtype)
        slc: Any
        if method.PRUNING_TYPE == "unstructured":
            slc = mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n_dims = t.ndim
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            parts: list = [slice(None)] * n_dims
            parts[dim] = keep_channel
            slc = tuple(parts)
        elif method.PRUNING_TYPE == "global":
            slc = tuple([slice(None)] * len(t.shape))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=mask[slc])
        with no_grad():
            new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class _UnstructuredAmount(BasePruningMethod):
    """What the unstructured methods that prune ``amount`` entries (a fraction, or a count)
    share: the checks, and a mask with zeros at the entries ``_pruned`` picks."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        tensor_size = t.numel()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            _zero_at(mask, self._pruned(t, nparams_toprune))
        return mask

    def _pruned(self, t: Tensor, k: int) -> np.ndarray:
        """The flat indices of the ``k`` entries of ``t`` to prune."""
        raise NotImplementedError


class RandomUnstructured(_UnstructuredAmount):
    """Prunes ``amount`` entries (a fraction, or a count) chosen at random."""

    def _pruned(self, t: Tensor, k: int) -> np.ndarray:
        prob = rand_like(t)  # the entries with the largest draws go
        return _topk_indices(prob._data.reshape(-1), k, True)

    @classmethod
    def apply(cls, module: Any, name: str, amount: float  # type: ignore[override]
              ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredAmount):
    """Prunes the ``amount`` entries of smallest absolute value."""

    def _pruned(self, t: Tensor, k: int) -> np.ndarray:
        return _topk_indices(np.abs(t._data).reshape(-1), k, False)

    @classmethod
    def apply(cls, module: Any, name: str, amount: float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channels_to_prune(t: Tensor, dim: int, amount: float) -> tuple[int, int]:
    """The structured methods' checks, then the number of channels of ``t`` along ``dim`` and
    how many of them ``amount`` prunes."""
    _validate_structured_pruning(t)
    _validate_pruning_dim(t, dim)
    tensor_size = t.shape[dim]
    nparams_toprune = _compute_nparams_toprune(amount, tensor_size)
    _validate_pruning_amount(nparams_toprune, tensor_size)
    return tensor_size, nparams_toprune


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        tensor_size, nparams_toprune = _channels_to_prune(t, self.dim, self.amount)
        if nparams_toprune == 0:
            return default_mask
        prob = rand(tensor_size)._data
        threshold = np.partition(prob, nparams_toprune - 1)[nparams_toprune - 1]  # kthvalue
        mask = _channel_mask(t, self.dim, prob > threshold)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        tensor_size, nparams_toprune = _channels_to_prune(t, self.dim, self.amount)
        nparams_tokeep = tensor_size - nparams_toprune
        norm = _compute_norm(t, self.n, self.dim)
        keep = _topk_indices(norm._data, nparams_tokeep, True)
        if nparams_toprune == 0:
            return default_mask
        channels = np.zeros(tensor_size, dtype=bool)
        channels[keep] = True
        mask = _channel_mask(t, self.dim, channels)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: float, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor  # type: ignore[override]
              ) -> BasePruningMethod:
        return super().apply(module, name, mask=mask)


# ---------------------------------------------------------------------------------------------
# The functional interface
# ---------------------------------------------------------------------------------------------

def identity(module: Any, name: str) -> Any:
    """Apply an all-ones mask to ``module.<name>`` (the pruning machinery, nothing pruned)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: float) -> Any:
    """Prune ``amount`` random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: float,
                    importance_scores: Tensor | None = None) -> Any:
    """Prune the ``amount`` entries of ``module.<name>`` with the smallest |score|."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: float, dim: int) -> Any:
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Any:
    """Prune the ``amount`` channels along ``dim`` with the smallest L``n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Any, pruning_method: Any,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune the (module, name) pairs in ``parameters`` as one vector: e.g. the ``amount``
    smallest entries over all of them together."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    relevant_importance_scores = parameters_to_vector(
        [importance_scores.get((module, name), getattr(module, name))
         for (module, name) in parameters])
    default_mask = parameters_to_vector(
        [getattr(module, name + "_mask", ones_like(getattr(module, name)))
         for (module, name) in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer:pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    """Prune ``module.<name>`` where ``mask`` is zero."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruning of ``module.<name>`` permanent (see ``BasePruningMethod.remove``)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Any) -> bool:
    """Whether ``module`` or any submodule has a pruning hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


# ---------------------------------------------------------------------------------------------
# Helpers: amounts, channel masks, and torch's choice among tied entries
# ---------------------------------------------------------------------------------------------

def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral)
            and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and int(amount) > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)  # Python's round: half to even, as torch


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    dims = list(range(t.ndim))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return t.norm(p=n, dim=dims)


def _zero_at(mask: Tensor, flat_indices: np.ndarray) -> None:
    """``mask.view(-1)[flat_indices] = 0``."""
    with no_grad():
        mask.view(-1)[Tensor._make(flat_indices.astype(np.int64))] = 0


def _channel_mask(t: Tensor, dim: int, channels: np.ndarray) -> Tensor:
    """Zeros like ``t`` with ones in the chosen channels along ``dim``."""
    mask = zeros_like(t)
    parts: list = [slice(None)] * t.ndim
    parts[dim] = np.flatnonzero(channels)
    mask._data[tuple(parts)] = 1
    return mask


def _topk_indices(values: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """The positions torch's CPU ``topk(values, k, largest)`` returns (as a set).

    The set is unique unless ties straddle the k-th place; then it depends on how torch
    selects: ``std::partial_sort`` when 64 k <= n, ``std::nth_element`` otherwise, both on
    (value, index) pairs compared by value alone, NaN counting as the largest. Those
    algorithms are replayed in that case (``_sort_emulation.topk_positions``).
    """
    n = values.shape[0]
    if k >= n:
        return np.arange(n)
    v = values.astype(np.float64)
    nan = np.isnan(v)
    if not nan.any():
        order = np.argsort(-v if largest else v, kind="stable")
        kth = v[order[k - 1]]
        better = (v > kth) if largest else (v < kth)
        if int(better.sum()) + int((v == kth).sum()) == k:  # no tie at the boundary
            return order[:k]
    return np.array(topk_positions(v, k, largest, sorted=False), dtype=np.int64)
