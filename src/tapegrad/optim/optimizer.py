"""``Optimizer``: parameter groups, per-parameter state, state_dict, hooks; and the update kernels.

An optimizer holds ``param_groups`` (a list of dicts: ``params`` plus every hyper-parameter, the
defaults filled in, in torch's key order) and ``state`` (a dict keyed by the parameter tensor
itself). ``step()`` runs with grad mode off and rewrites each parameter's ndarray in place::

    optimizer.step(closure)
      -> step pre-hooks -> closure() under enable_grad -> for each group, for each p with a grad:
         the algorithm's update on p._data / state arrays (NumPy ufuncs with out=), bumping the
         version counters as torch's in-place ops would -> step post-hooks

The kernels at the bottom of this module reproduce torch's vectorised CPU arithmetic:

* hyper-parameters are rounded to the compute type (float32 for float32/float16/bfloat16
  tensors, float64 for float64); an ``add``'s alpha (or added number) is first rounded to the
  tensor's own dtype, as torch does for float16/bfloat16;
* ``addcmul_`` and ``lerp_`` round once (torch uses a fused multiply-add): for float32 that
  single rounding is computed exactly in float64 (it can be one ulp off only when the float64
  sum lands exactly on a float32 midpoint, about 2^-29 of the time); float64 uses a multiply
  then an add, so it may differ from torch's FMA in the last bit;
* ``add_(x, alpha=a)`` on float32 (every SGD update) rounds twice, in float32: one ulp per step
  from torch at most, where the float64 emulation cost as much as an MLP step's products
  (RMSprop, whose centered variance cancels, keeps the exact form);
* float16/bfloat16 compute in float32 and round every torch op's result to their dtype.

With identical gradients, float32 SGD is within one rounding per step of torch; the optimizers
that take a square root (Adam, AdamW, RMSprop, Adagrad) can differ in the last bits because
torch's float32 ``sqrt`` comes from a vector math library that is not always correctly rounded
(NumPy's is).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from copy import deepcopy
from typing import Any

import numpy as np

from .. import _announce, _blas, _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import enable_grad
from ..nn.modules.module import RemovableHandle, _add_hook, _args_after_pre_hook, _typename

__all__ = [
    "Optimizer",
    "required",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_post_hooks: OrderedDict[int, Callable] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``."""
    return _add_hook(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return _add_hook(_global_post_hooks, hook)


def _type_str(obj: Any) -> str:
    """``str(type(obj))`` with tapegrad's Tensor shown under its public name."""
    if isinstance(obj, Tensor) and type(obj) is Tensor:
        return "<class 'tapegrad.Tensor'>"
    return str(type(obj))


def _hooked_step(func: Callable) -> Callable:
    """Wrap a class's ``step`` so the global and per-optimizer step hooks run around it; the
    wrapped step is announced to the listener stack (``run_method``: a compiled function's
    capture records it as one call)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _announce.listener is not None:
            self = args[0]
            return _announce.listener.run_method(
                self, wrapper, args[1:], kwargs, lambda *a, **k: hooked(self, *a, **k))
        return hooked(*args, **kwargs)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        for pre_hook in itertools.chain(
            _global_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
        ):
            args, kwargs = _args_after_pre_hook(pre_hook(self, args, kwargs), args, kwargs,
                                                str(func))
        out = func(*args, **kwargs)
        for post_hook in itertools.chain(
            self._optimizer_step_post_hooks.values(), _global_post_hooks.values()
        ):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True  # type: ignore[attr-defined]
    return wrapper


def _use_grad_for_differentiable(func: Callable) -> Callable:
    """Run ``step`` with grad mode set to ``defaults['differentiable']`` (off), as torch does."""

    @functools.wraps(func)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        previous = _grad_state.enabled
        _grad_state.enabled = bool(self.defaults.get("differentiable", False))
        try:
            return func(self, *args, **kwargs)
        finally:
            _grad_state.enabled = previous

    return wrapper


def _run_closure(closure: Callable | None) -> Any:
    """Evaluate the closure (which re-computes the loss and calls backward) with grad on."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _scalar_dtype() -> _dtype.dtype:
    """The dtype of ``state['step']``: float64 when that is the default dtype, else float32."""
    return _dtype.float64 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.float32


def _check_lr(lr: Any) -> None:
    """torch's first constructor check: a Tensor ``lr`` holds one number, and ``lr >= 0``."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_betas(betas: Any) -> None:
    """torch's check of a ``betas`` pair: each in ``[0, 1)``."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _check_adam_arguments(lr: Any, eps: Any, betas: Any, weight_decay: Any) -> None:
    """torch's checks of the arguments the Adam family (Adam, AdamW, Adamax, NAdam, RAdam)
    shares, in its order: ``lr``, ``eps``, each beta, ``weight_decay``."""
    _check_lr(lr)
    _check_non_negative(epsilon=eps)
    _check_betas(betas)
    _check_non_negative(weight_decay=weight_decay)


def _defaults(arguments: dict[str, Any], names: str) -> dict[str, Any]:
    """The ``defaults`` dict a constructor passes to :class:`Optimizer`: its arguments
    (``arguments`` is its ``locals()``) named in ``names``, separated by spaces, in torch's key
    order (the order a group's options keep in ``param_groups`` and ``state_dict``)."""
    return {name: arguments[name] for name in names.split()}


def _check_non_negative(**values: Any) -> None:
    """torch's ``Invalid <name> value: <value>`` for the first of ``values`` (checked in the
    order given) that is not ``>= 0`` (NaN fails too)."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")


def _zeros_like(p: Tensor) -> Tensor:
    """A fresh state tensor of zeros shaped and typed like the parameter ``p``."""
    return Tensor._make(np.zeros_like(p._data))


def _step_tensor(fused_or_capturable: bool) -> Tensor:
    """A new ``state['step']``: 0-d float32 (fused/capturable) or of :func:`_scalar_dtype`."""
    d = _dtype.float32 if fused_or_capturable else _scalar_dtype()
    return Tensor._make(np.zeros((), dtype=d.np))


def _scalar_tensor(value: Any) -> Tensor:
    """A 0-d tensor of :func:`_scalar_dtype` holding ``value``."""
    return Tensor._make(np.array(value, dtype=_scalar_dtype().np))


def _as_step_tensor(value: Any, fused_or_capturable: bool) -> Tensor:
    """An old-style numeric ``step`` (from an old state_dict) as the 0-d tensor torch keeps."""
    t = _step_tensor(fused_or_capturable)
    t._data[()] = float(value)
    return t


def _steps_as_tensors(state: dict, params: list, fused_or_capturable: bool) -> None:
    """Turn an old state_dict's numeric ``step`` of each of ``params`` into the 0-d tensor
    torch keeps (used by ``__setstate__``)."""
    for p in params:
        p_state = state.get(p, [])
        if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
            p_state["step"] = _as_step_tensor(p_state["step"], fused_or_capturable)


def _restore_group_options(optimizer: Any, **options: Any) -> None:
    """``__setstate__`` of an optimizer pickled by an older version: each of ``options`` that a
    group lacks is set there to the value given (in the order given, torch's)."""
    for group in optimizer.param_groups:
        for name, value in options.items():
            group.setdefault(name, value)


def _params_with_grad(optimizer: Any, group: dict,
                      new_state: Callable[[Tensor, dict], dict]) -> list:
    """The group's parameters that have a gradient; an empty state is filled with
    ``new_state(p, group)`` (the per-parameter buffers, created lazily as torch does)."""
    with_grad = [p for p in group["params"] if p._grad is not None]
    for p in with_grad:
        state = optimizer.state[p]
        if len(state) == 0:
            state.update(new_state(p, group))
    return with_grad


def _increment_step(step_t: Tensor) -> float:
    """``state['step'] += 1`` in place (one version bump); returns the new count. A 0-d float
    count is set from the sum in Python's double, where it is exact, so it is rounded once to
    the count's dtype, as NumPy's add rounds it (and a tenth of the add's cost on a 0-d array,
    once per parameter and step)."""
    a = step_t._data
    if a.ndim == 0 and a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        a[()] = float(a) + 1.0
    else:
        np.add(a, 1, out=a)
    _bump(step_t)
    return float(a)


def _update_grad(grad_t: Tensor, maximize: bool) -> np.ndarray:
    """The gradient array the update uses: seen as real pairs, negated when maximizing."""
    g = _real(grad_t._data)
    return np.negative(g) if maximize else g


def _to_scalar(x: Any) -> Any:
    """A 1-element tensor hyper-parameter as a Python number; anything else unchanged."""
    if isinstance(x, Tensor):
        return x.item()
    return x



def _zero_grads(optimizer: Optimizer, set_to_none: bool = True) -> None:
    """``optimizer.zero_grad(set_to_none)``'s work."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                if grad._data.flags.writeable:
                    grad._data[...] = 0
                else:  # e.g. a broadcast view handed out as a gradient
                    grad._data = np.zeros_like(grad._data)
                grad._version_counter.value += 1

class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of tensors, of dicts (parameter groups with their own options), or
            of ``(name, tensor)`` pairs. A generator is consumed once.
        defaults: the default value of every option, used where a group does not set it.

    Example:
        >>> import tapegrad as torch
        >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + _typename(params)
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        if _announce.listener is not None:  # (``tapegrad doctor`` watches every optimizer)
            _announce.listener.optimizer_created(self)

    # -- pickling / loading ----------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        text += ")"
        return text

    def _patch_step_function(self) -> None:
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = _hooked_step(cls.step)  # type: ignore[method-assign]

    # -- hooks -----------------------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before ``step``; it may return new
        ``(args, kwargs)``."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                     ) -> RemovableHandle:
        """``hook(optimizer)`` runs before ``state_dict`` builds its result."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend=prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                      ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs after; a returned dict replaces the result."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend=prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                          ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs before loading; a returned dict is loaded."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend=prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                           ) -> RemovableHandle:
        """``hook(optimizer)`` runs after ``load_state_dict``."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend=prepend)

    # -- state_dict ------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The state: ``{'state': {id: {...}}, 'param_groups': [{..., 'params': [ids]}]}``.

        Parameters are replaced by integer ids, numbered in order over the groups; the state
        tensors are the optimizer's own (not copies), as in torch.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack(g) for g in self.param_groups]
        packed_state = {
            (mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(
        param: Tensor, value: Tensor, param_id: Any, param_groups: list[dict[str, Any]],
        key: Any = None,
    ) -> Tensor:
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_dtype.float32)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (from this or a matching optimizer): parameters are matched
        by position; floating state tensors are cast to their parameter's dtype."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(
            len(g["params"]) != len(s["params"])
            for g, s in zip(groups, saved_groups, strict=True)
        ):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                itertools.chain.from_iterable(g["params"] for g in saved_groups),
                itertools.chain.from_iterable(g["params"] for g in groups),
                strict=True,
            )
        )

        def cast(param: Tensor, value: Any, param_id: Any, key: Any = None) -> Any:
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key
                )
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, k)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups, strict=True)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and groups --------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None by default, else to zeros)."""
        if _announce.listener is not None:  # (a capture records the call as one step)
            _announce.zero_grad(self, Optimizer.zero_grad, _zero_grads, set_to_none)
            return
        _zero_grads(self, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step (subclasses implement it)."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters, with its own options, to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_type_str(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        tensors: list[Any] = []
        names: list[Any] = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.grad_fn is None or param._retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization parameter "
                    + name
                )
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )

        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


# ---------------------------------------------------------------------------------------------
# Update kernels: torch's CPU arithmetic on ndarrays, in place
# ---------------------------------------------------------------------------------------------


def _bump(t: Tensor, n: int = 1) -> None:
    """Count ``n`` in-place writes on ``t`` (shared with its views), as torch's ops would."""
    t._version_counter.value += n


def _real(a: np.ndarray) -> np.ndarray:
    """A complex array seen as its real pairs (``torch.view_as_real``); others unchanged."""
    if a.dtype.kind == "c":
        return a.view(a.real.dtype)
    return a


def _is_low(a: np.ndarray) -> bool:
    """float16 / bfloat16: torch computes these in float32 and rounds each result."""
    return a.dtype.itemsize < 4


def _opmath(a: np.ndarray) -> np.dtype:
    return np.dtype(np.float32) if a.dtype.itemsize <= 4 else np.dtype(np.float64)


def _sc(x: float, a: np.ndarray) -> Any:
    """A Python number rounded to the compute type of ``a``'s kernels."""
    return _opmath(a).type(x)


def _sc_add(x: float, a: np.ndarray) -> Any:
    """The scalar of an ``add`` (its ``alpha``, or a number added): torch rounds it to the
    tensor's own dtype first (float16/bfloat16 included), then computes in the compute type."""
    return _opmath(a).type(a.dtype.type(x)) if _is_low(a) else _sc(x, a)


def _store(dst: np.ndarray, value: np.ndarray) -> None:
    np.copyto(dst, value, casting="unsafe")


def _fma(a: Any, b: Any, c: Any, dtype: np.dtype, out: np.ndarray | None = None) -> np.ndarray:
    """``a*b + c`` rounded once to ``dtype`` (float32: exact through float64; float64: two
    roundings), written to ``out`` when given. ``a``, ``b``, ``c`` are in ``dtype`` or lower."""
    if dtype == np.float32:
        if out is not None and out.size >= 2 * _FMA_BLOCK and _fma_in_blocks(a, b, c, out):
            return out
        t = np.multiply(a, b, dtype=np.float64)
        if out is None:
            np.add(t, c, out=t)
            return t.astype(np.float32)
        return np.add(t, c, out=out, casting="same_kind")  # added in float64, stored rounded
    t = np.multiply(a, b, dtype=dtype)
    return np.add(t, c, out=t if out is None else out)


# float32 a*b + c through float64 a block at a time: the three float64 blocks stay in the
# CPU's cache, and each cast is a plain copy instead of NumPy's buffered mixed-type loop
# (1M elements: 1.2 ms against 2.1 whole, measured on an AMD EPYC). The same bits either way.
_FMA_BLOCK = 1 << 16


def _fma_in_blocks(a: Any, b: Any, c: Any, out: np.ndarray) -> bool:
    """``out = a*b + c`` for float32 arrays the size of ``out`` (or number ``b``) a block at a
    time; False (nothing done) where the operands are not such arrays. (``_fma`` calls it for
    two blocks or more.)"""
    n = out.size
    if not out.flags.c_contiguous:
        return False
    for v in (a, b, c):
        if isinstance(v, np.ndarray) and (v.dtype != np.float32 or v.size != n
                                          or not v.flags.c_contiguous):
            return False
    if not (isinstance(a, np.ndarray) and isinstance(c, np.ndarray)):
        return False
    o, af, cf = out.reshape(-1), a.reshape(-1), c.reshape(-1)
    bf = b.reshape(-1) if isinstance(b, np.ndarray) else np.float64(b)
    t = np.empty(_FMA_BLOCK, np.float64)
    u = np.empty(_FMA_BLOCK, np.float64)
    for s in range(0, n, _FMA_BLOCK):
        k = min(_FMA_BLOCK, n - s)
        tk, uk = t[:k], u[:k]
        tk[...] = af[s:s + k]
        if isinstance(bf, np.ndarray):
            uk[...] = bf[s:s + k]
            tk *= uk
        else:
            tk *= bf
        uk[...] = cf[s:s + k]
        tk += uk
        o[s:s + k] = tk
    return True


def _w(a: np.ndarray) -> np.ndarray:
    """The working copy of ``a`` in its compute type (itself unless float16/bfloat16)."""
    return a.astype(np.float32) if _is_low(a) else a


def _fma_into(dst: np.ndarray, a: Any, b: Any, c: Any) -> None:
    """``dst = a*b + c`` with torch's rounding for ``dst``'s dtype."""
    if _is_low(dst):
        _store(dst, _fma(a, b, c, np.dtype(np.float32)))
    else:
        _fma(a, b, c, dst.dtype, out=dst)


def mul_(dst: np.ndarray, s: float) -> None:
    """``dst.mul_(s)``."""
    if _is_low(dst):
        _store(dst, np.multiply(_w(dst), _sc(s, dst)))
    else:
        np.multiply(dst, _sc(s, dst), out=dst)


def add_scaled_(dst: np.ndarray, x: np.ndarray, alpha: float) -> None:
    """``dst.add_(x, alpha=alpha)``: ``dst + alpha*x``.

    torch rounds this once (a fused multiply-add), and so does the BLAS's ``axpy``, which does
    it for contiguous float32/float64 arrays where NumPy's BLAS offers it (``_blas``: one pass
    on the BLAS threads, five times faster than NumPy's two). Otherwise float32 computes
    ``alpha*x`` and the sum in float32, two roundings, so an element can differ from torch's
    by an ulp: this is the update of every parameter in every SGD step, and emulating the
    single rounding (through float64) made it as slow as all of an MLP step's matrix products
    together."""
    if alpha == 1:
        if _is_low(dst):
            _store(dst, np.add(_w(dst), _w(x)))
        else:
            np.add(dst, x, out=dst)
        return
    if _blas.axpy(alpha, x, dst):
        return
    if dst.dtype == np.float32:
        np.add(dst, np.multiply(x, np.float32(alpha)), out=dst)
        return
    add_scaled_exact_(dst, x, alpha)


def add_scaled_exact_(dst: np.ndarray, x: np.ndarray, alpha: float) -> None:
    """``dst.add_(x, alpha=alpha)`` rounded once as torch's, float32 included (through float64):
    for RMSprop, whose centered variance ``E[g^2] - E[g]^2`` cancels and would turn a
    parameter's last-bit difference into a visible one a few steps later."""
    if alpha == 1:
        add_scaled_(dst, x, 1)
        return
    _fma_into(dst, _w(x), _sc_add(alpha, dst), _w(dst))


_AXPY_BLOCK = 32  # OpenBLAS's axpy fuses blocks of 32 elements and rounds the rest twice


def add_scaled(g: np.ndarray, x: np.ndarray, alpha: float) -> np.ndarray:
    """``g.add(x, alpha=alpha)`` as a new array.

    float32 arrays of one shape go through the BLAS's ``axpy`` on a copy of ``g`` (one fused
    rounding, torch's), the tail OpenBLAS rounds twice through float64: SGD's weight decay on
    ResNet-18's 11M parameters took 34 of a 518 ms step (one thread) the float64 way, three
    passes and two float64 temporaries per parameter."""
    if _fusable(g, x):
        out = g.copy()
        if _axpy_fused_(out, x, alpha):
            return out
    out = _fma(_w(x), _sc_add(alpha, g), _w(g), _opmath(g))
    return out.astype(g.dtype) if _is_low(g) else out


def _fusable(y: np.ndarray, x: np.ndarray) -> bool:
    """Whether ``y + alpha*x`` can run as :func:`_axpy_fused_` (float32 arrays of one shape,
    contiguous, large enough for the BLAS call to pay)."""
    return (y.size >= 4096 and y.dtype == np.float32 and x.dtype == np.float32
            and y.shape == x.shape and y.flags.c_contiguous and x.flags.c_contiguous)


def _axpy_fused_(y: np.ndarray, x: np.ndarray, alpha: float) -> bool:
    """``y += alpha*x`` rounded once per element, as torch's fused multiply-add: the BLAS's
    ``axpy`` over whole blocks of 32 (which it fuses), the tail through float64; False
    (nothing done) where the BLAS call does not apply."""
    flat, xf = y.reshape(-1), x.reshape(-1)
    main = flat.size - flat.size % _AXPY_BLOCK
    if not _blas.axpy(float(np.float32(alpha)), xf[:main], flat[:main]):
        return False
    if main < flat.size:
        tail = slice(main, None)
        flat[tail] = _fma(xf[tail], _sc_add(alpha, y), flat[tail], _opmath(y))
    return True


def addcmul_(dst: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: float) -> None:
    """``dst.addcmul_(t1, t2, value=value)``: ``fma(value*t1, t2, dst)``."""
    v = np.multiply(_w(t1), _sc(value, dst)) if value != 1 else _w(t1)
    _fma_into(dst, v, _w(t2), _w(dst))


def addcdiv_(dst: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: float) -> None:
    """``dst.addcdiv_(t1, t2, value=value)``: ``dst + (value*t1)/t2``."""
    add_term_(dst, addcdiv_term(t1, t2, value, dst))


def addcdiv_term(t1: np.ndarray, t2: np.ndarray, value: float, dst: np.ndarray) -> np.ndarray:
    """The term ``addcdiv_`` adds to ``dst``: ``(value*t1)/t2`` in ``dst``'s compute type, a
    new array (elementwise: computed on several parameters' values at once, each element
    gets the bits it gets alone)."""
    x = np.multiply(_w(t1), _sc(value, dst)) if value != 1 else _w(t1).copy()
    if type(x) is not np.ndarray:  # a 0-d t1 (a scalar parameter) gives a NumPy scalar
        x = np.asarray(x)
    np.divide(x, _w(t2), out=x)
    return x


def add_term_(dst: np.ndarray, x: np.ndarray) -> None:
    """``dst += x`` for a compute-type term ``x`` (``addcdiv_term``), rounded to ``dst``'s
    dtype once."""
    if _is_low(dst):
        _store(dst, np.add(_w(dst), x))
    else:
        np.add(dst, x, out=dst)


def lerp_(dst: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``dst.lerp_(end, weight)``: ``dst + w*(end-dst)`` (w < 0.5) else
    ``end - (end-dst)*(1-w)``, each with one rounding."""
    op = _opmath(dst)
    w = op.type(weight)
    d, e = _w(dst), _w(end)
    diff = np.subtract(e, d)
    if abs(w) < 0.5:
        if not (_fusable(dst, diff) and _axpy_fused_(dst, diff, float(w))):
            _fma_into(dst, diff, w, d)
    else:
        _fma_into(dst, diff, -(op.type(1) - w), e)


def round_as(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Round a compute-type result to ``like``'s dtype when that is float16/bfloat16 (the end of
    one torch op); other dtypes compute in their own type already."""
    if _is_low(like):
        return x.astype(like.dtype).astype(np.float32)
    return x


def sqrt_add(src: np.ndarray, divisor: float | None, eps: float) -> np.ndarray:
    """``(src.sqrt() / divisor).add_(eps)`` (no division when ``divisor`` is None), in the
    compute type."""
    op = _opmath(src)
    out = np.sqrt(_w(src))
    if type(out) is not np.ndarray:  # a 0-d src (a scalar parameter) gives a NumPy scalar
        out = np.asarray(out)
    if _is_low(src):  # three torch ops, each rounded to the half type
        out = out.astype(src.dtype).astype(np.float32)
        if divisor is not None:
            out = np.divide(out, op.type(divisor)).astype(src.dtype).astype(np.float32)
        return np.add(out, _sc_add(eps, src)).astype(src.dtype).astype(np.float32)
    if divisor is not None:
        np.divide(out, op.type(divisor), out=out)
    np.add(out, op.type(eps), out=out)
    return out


def _capturable_error(holders: str = "params and state_steps",
                      xla: bool = True) -> AssertionError:
    """torch's error when ``capturable=True`` meets a CPU tensor at ``step`` (capturable means
    CUDA-graph capture, which needs an accelerator; tapegrad's tensors live on the CPU)."""
    devices = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if xla else [])
    return AssertionError(f"If capturable=True, {holders} must be on supported devices: "
                          f"{devices}.")


def sqrt_(a: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``a.sqrt_()`` on a compute-type working array, rounded as a tensor of ``like``'s dtype."""
    return round_as(np.sqrt(a, out=a), like)


def add_scalar(a: np.ndarray, x: float, like: np.ndarray) -> np.ndarray:
    """``t.add(x)`` for a number ``x``, on ``t``'s working array ``a``: a new array."""
    return round_as(np.add(a, _sc_add(x, like)), like)


def _check_real(param: Tensor) -> None:
    """The differentiable (autograd-recorded) updates work on real parameters only."""
    if param.is_complex():
        raise NotImplementedError(
            "tapegrad's differentiable optimizer steps do not support complex parameters"
        )
