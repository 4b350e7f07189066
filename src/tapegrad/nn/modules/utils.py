"""Small helpers shared by the layers: turn ``3`` into ``(3, 3)`` (``_pair``) and friends."""

from __future__ import annotations

import collections.abc
import math
import types
from itertools import repeat
from typing import Any, TypeVar

from ..._creation import empty
from .. import init
from ..parameter import Parameter

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Any:
    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_Base = TypeVar("_Base", bound=type)


def _functional_layer(name: str, base: _Base, fn: Any, doc: str, module: str,
                      own: tuple[str, ...] = ("forward",), **attrs: Any) -> _Base:
    """The layer class ``name``, a subclass of ``base`` that differs from its siblings only in
    the ``nn.functional`` op ``fn`` its forward runs (``base.forward`` calls ``self._fn``), its
    docstring and the class attributes ``attrs``. ``module`` is the defining module's
    ``__name__``, so that the class prints and pickles as if written there.

    The class gets its own copy of each of ``base``'s methods named in ``own``, named
    ``<name>.<method>``: Python names the method's qualified name in its argument errors
    (``ReLU.__init__() takes from 1 to 2 positional arguments ...``), as torch, whose layers
    write these methods out one by one, does."""
    return _layer_class(name, (base,), doc, module, own,  # type: ignore[no-any-return]
                        {"_fn": staticmethod(fn), **attrs})


def _layer_class(name: str, bases: tuple[type, ...], doc: str, module: str,
                 own: tuple[str, ...], attrs: dict[str, Any]) -> Any:
    """The class ``name`` of ``_functional_layer`` and ``_per_dimension_classes``: ``bases``,
    ``doc``, the class attributes ``attrs``, and its own copies of the methods named in
    ``own`` (those of ``bases[0]``)."""
    namespace = {"__module__": module, "__qualname__": name, "__doc__": doc, **attrs}
    for method in own:
        namespace[method] = _renamed_copy(bases[0].__dict__[method], f"{name}.{method}")
    return type(name, bases, namespace)


def _renamed_copy(fn: Any, qualname: str) -> Any:
    """A copy of the function ``fn`` (same code, defaults and closure) with ``qualname``."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__annotations__ = fn.__annotations__
    copy.__doc__ = fn.__doc__
    copy.__qualname__ = qualname
    return copy


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _per_dimension_classes(name: str, bases: Any, doc: str, module: str, attrs: Any,
                           own: tuple[str, ...] = ()) -> tuple[Any, Any, Any]:
    """The 1-, 2- and 3-d classes of a family of layers that differ only in their number of
    spatial dims ``nd``: class ``name.format(nd=nd)`` with bases ``bases(nd)``, docstring
    ``doc.format(...)`` (given ``nd``, ``dims``: "dim", "two dims" or "three dims", and
    ``spatial``: "L", "H, W" or "D, H, W"), the class attributes ``attrs(nd)`` and (see
    ``_functional_layer``) their own copies of the methods named in ``own``; ``module`` is the
    defining module's ``__name__``, so that the classes print and pickle as if written there."""
    made = []
    for nd, dims, spatial in ((1, "dim", "L"), (2, "two dims", "H, W"),
                              (3, "three dims", "D, H, W")):
        made.append(_layer_class(name.format(nd=nd), bases(nd),
                                 doc.format(nd=nd, dims=dims, spatial=spatial), module, own,
                                 attrs(nd)))
    return made[0], made[1], made[2]


def _add_weight_and_bias(module: Any, weight_shape: tuple, bias: bool, bias_size: int,
                         device: Any, dtype: Any) -> None:
    """``module.weight``, an uninitialised Parameter of ``weight_shape``, and ``module.bias`` of
    ``bias_size`` (a registered None without ``bias``), in this order, as torch's layers make
    them before ``reset_parameters``."""
    module.weight = Parameter(empty(weight_shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(empty(bias_size, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _register_affine(module: Any, shape: Any, affine: bool, bias: bool, dtype: Any,
                     device: Any = None) -> None:
    """Register ``weight`` and ``bias`` of ``shape`` (None when not ``affine`` / no ``bias``),
    uninitialised (the batch, layer and group norms)."""
    if affine:
        _add_weight_and_bias(module, shape, bias, shape, device, dtype)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_bias(weight: Any, bias: Any) -> None:
    """torch's default init of the bias of Linear and the convolutions, after the weight's
    kaiming_uniform_(a=sqrt(5)): U(-b, b) with b = 1 / sqrt(fan_in) (0 for an empty weight)."""
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


def _reverse_repeat_tuple(t: tuple, n: int) -> tuple:
    """``(1, 2)`` -> ``(2, 2, 1, 1)`` for n=2: conv padding in F.pad's order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: list[int]) -> Any:
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d
            for v, d in zip(out_size, defaults[-len(out_size):], strict=False)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and its metadata) in place."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    if hasattr(state_dict, "_metadata"):
        for key in list(state_dict._metadata.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                state_dict._metadata[key[len(prefix):]] = state_dict._metadata.pop(key)
