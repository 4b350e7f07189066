"""The model registry and the pretrained-weights enums.

Every model builder (``resnet18``, ``vit_b_16``, ...) is registered under its name by
``@register_model()``, which is what ``get_model("resnet18", num_classes=10)``,
``list_models()`` and ``get_model_builder`` look up. Each builder's ``weights=`` parameter is
annotated with its enum (``ResNet18_Weights``): a ``WeightsEnum`` whose members are ``Weights``
records, the checkpoint's URL, the preprocessing the weights expect (``transforms``, a
constructor called when needed) and ``meta`` (categories, parameter count, accuracies, recipe).
``get_model_weights`` reads that annotation back to find a builder's enum.
"""

import fnmatch
import importlib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from functools import partial
from types import ModuleType
from typing import Any, TypeVar, get_args

from ... import nn

__all__ = ["WeightsEnum", "Weights", "get_model", "get_model_builder", "get_model_weights",
           "get_weight", "list_models"]


@dataclass
class Weights:
    """One set of pretrained weights: where to download it, how to preprocess images for it
    (``transforms()`` builds the preset), and what is known about it (``meta``)."""

    url: str
    transforms: Callable
    meta: dict[str, Any]

    def __eq__(self, other: Any) -> bool:
        # A copied or unpickled enum member is matched against the defined ones by equality;
        # two partials never compare equal, so they are compared by what they would call.
        if not isinstance(other, Weights):
            return NotImplemented
        if self.url != other.url or self.meta != other.meta:
            return False
        mine, theirs = self.transforms, other.transforms
        if isinstance(mine, partial) and isinstance(theirs, partial):
            return (mine.func == theirs.func and mine.args == theirs.args
                    and mine.keywords == theirs.keywords)
        return mine == theirs


class WeightsEnum(Enum):
    """The base of every model's weights enum (``ResNet18_Weights``...); its members' values are
    ``Weights``, and ``DEFAULT`` names the best set."""

    @classmethod
    def verify(cls, obj: Any) -> Any:
        """``obj`` as a member of this enum: a member passes, a name (``"IMAGENET1K_V1"`` or
        ``"ResNet18_Weights.IMAGENET1K_V1"``) is looked up, None stays None."""
        if obj is not None:
            if type(obj) is str:
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but "
                                f"received {obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Download (once, into the hub's cache) and load the checkpoint: the arguments are
        ``torch.hub.load_state_dict_from_url``'s (``progress=``, ``check_hash=``...)."""
        # tapegrad.hub: loaded on first use (downloads)
        from ...hub import load_state_dict_from_url

        return load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self) -> str:
        return self.value.url

    @property
    def transforms(self) -> Callable:
        return self.value.transforms

    @property
    def meta(self) -> dict[str, Any]:
        return self.value.meta


def get_weight(name: str) -> WeightsEnum:
    """The member named by ``"ResNet50_Weights.IMAGENET1K_V1"``."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    package = importlib.import_module(__name__.rsplit(".", 1)[0])
    # the models package itself, then its subpackages (none yet beyond the classifiers)
    places = [package] + [m for _, m in inspect.getmembers(package, inspect.ismodule)
                          if (getattr(m, "__file__", None) or "").endswith("__init__.py")]
    for place in places:
        found = place.__dict__.get(enum_name, None)
        if isinstance(found, type) and issubclass(found, WeightsEnum):
            return found[value_name]
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be "
                     "retrieved.")


def get_model_weights(name: Callable | str) -> type[WeightsEnum]:
    """The weights enum of a builder, given the builder or its registered name."""
    model = get_model_builder(name) if isinstance(name, str) else name
    return _get_enum_from_fn(model)


def _get_enum_from_fn(fn: Callable) -> type[WeightsEnum]:
    """The enum in the annotation of ``fn``'s ``weights`` parameter."""
    sig = inspect.signature(fn, eval_str=True)
    if "weights" not in sig.parameters:
        raise ValueError("The method is missing the 'weights' argument.")
    annotation = sig.parameters["weights"].annotation
    if isinstance(annotation, type) and issubclass(annotation, WeightsEnum):
        return annotation
    for arg in get_args(annotation):  # Optional[X] is Union[X, None]
        if isinstance(arg, type) and issubclass(arg, WeightsEnum):
            return arg
    raise ValueError("The WeightsEnum class for the specific method couldn't be retrieved. Make "
                     "sure the typing info is correct.")


M = TypeVar("M", bound=nn.Module)

BUILTIN_MODELS: dict[str, Callable[..., nn.Module]] = {}


def register_model(name: str | None = None) -> Callable[[Callable[..., M]], Callable[..., M]]:
    """Decorator: register a builder under ``name`` (default: the function's name)."""

    def wrapper(fn: Callable[..., M]) -> Callable[..., M]:
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn

    return wrapper


def list_models(module: ModuleType | None = None,
                include: Iterable[str] | str | None = None,
                exclude: Iterable[str] | str | None = None) -> list[str]:
    """The sorted names of the registered models: those built in ``module`` if given, matching
    any ``include`` pattern (shell wildcards, as ``fnmatch``), then minus any ``exclude`` one."""
    everything = {key for key, fn in BUILTIN_MODELS.items()
                  if module is None or fn.__module__.rsplit(".", 1)[0] == module.__name__}
    if include:
        patterns = [include] if isinstance(include, str) else include
        chosen: set[str] = set()
        for pattern in patterns:
            chosen |= set(fnmatch.filter(everything, pattern))
    else:
        chosen = everything
    if exclude:
        patterns = [exclude] if isinstance(exclude, str) else exclude
        for pattern in patterns:
            chosen -= set(fnmatch.filter(everything, pattern))
    return sorted(chosen)


def get_model_builder(name: str) -> Callable[..., nn.Module]:
    """The builder registered under ``name`` (case-insensitive)."""
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name: str, **config: Any) -> nn.Module:
    """Build the model registered under ``name``; ``config`` goes to its builder."""
    return get_model_builder(name)(**config)
