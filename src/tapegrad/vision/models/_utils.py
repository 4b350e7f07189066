"""What the model builders share: the old-interface shim (``pretrained=True`` and positional
arguments, deprecated since torchvision 0.13, still accepted with its warnings), the checks that
a keyword agrees with the chosen weights, building a classifier and loading its weights, the
``Weights`` record of an ImageNet-1K classifier (and of the SWAG-pretrained ones), the public
builder of one member of a model family (``_builder``), channel rounding, and
``IntermediateLayerGetter``."""

import copy
import functools
import inspect
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ... import nn
from ..transforms._presets import ImageClassification, InterpolationMode
from ._api import Weights, WeightsEnum, register_model
from ._meta import (
    _IMAGENET_META,
    _SWAG_E2E_DOCS,
    _SWAG_LICENSE,
    _SWAG_LINEAR_DOCS,
    _SWAG_LINEAR_RECIPE,
    _SWAG_RECIPE,
)


def _sequence_to_str(seq: Sequence, separate_last: str = "") -> str:
    """``'a', 'b' and 'c'``: the names quoted, for messages."""
    if not seq:
        return ""
    if len(seq) == 1:
        return f"'{seq[0]}'"
    head = "'" + "', '".join(str(item) for item in seq[:-1]) + "'"
    comma = "" if separate_last and len(seq) == 2 else ","
    return f"{head}{comma} {separate_last}'{seq[-1]}'"


class IntermediateLayerGetter(nn.ModuleDict):
    """The direct children of ``model`` up to the last one named in ``return_layers``, run in
    order; ``forward`` returns an OrderedDict of the outputs of the named ones, under the names
    ``return_layers`` maps them to. Only direct children can be named, and each must be used
    once, in registration order, by the model's own forward."""

    _version = 2
    __annotations__ = {"return_layers": dict[str, str]}

    def __init__(self, model: nn.Module, return_layers: dict[str, str]) -> None:
        if not set(return_layers).issubset([name for name, _ in model.named_children()]):
            raise ValueError("return_layers are not present in model")
        wanted = {str(k): str(v) for k, v in return_layers.items()}
        layers: OrderedDict[str, nn.Module] = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            wanted.pop(name, None)
            if not wanted:
                break
        super().__init__(layers)
        self.return_layers = return_layers

    def forward(self, x: Any) -> OrderedDict:
        out: OrderedDict = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """``v`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``), but never
    more than 10% below ``v`` (the channel rounding of MobileNet's TensorFlow code)."""
    if min_value is None:
        min_value = divisor
    rounded = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if rounded < 0.9 * v:
        rounded += divisor
    return rounded


D = TypeVar("D")


def kwonly_to_pos_or_kw(fn: Callable[..., D]) -> Callable[..., D]:
    """Let ``fn``'s keyword-only parameters be passed by position again, with a warning."""
    names = tuple(inspect.signature(fn).parameters)
    kinds = [p.kind for p in inspect.signature(fn).parameters.values()]
    try:
        first = kinds.index(inspect.Parameter.KEYWORD_ONLY)
    except ValueError:
        raise TypeError(f"Found no keyword-only parameter on function '{fn.__name__}'") from None
    keyword_only = names[first:]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> D:
        args, extra = args[:first], args[first:]
        if extra:
            passed = dict(zip(keyword_only, extra, strict=False))
            warnings.warn(
                f"Using {_sequence_to_str(tuple(passed), separate_last='and ')} as positional "
                "parameter(s) is deprecated since 0.13 and may be removed in the future. Please "
                "use keyword parameter(s) instead.", stacklevel=1)
            kwargs.update(passed)
        return fn(*args, **kwargs)

    return wrapper


W = TypeVar("W", bound=WeightsEnum)
M = TypeVar("M", bound=nn.Module)
V = TypeVar("V")


def handle_legacy_interface(**weights: tuple[str, Any]) -> Callable:
    """Decorate a builder so that the interface before 0.13 keeps working.

    ``weights={"weights": ("pretrained", default)}``: ``pretrained=True`` (by keyword or
    position) becomes ``weights=default`` (``default`` may be a function of the keyword
    arguments), ``pretrained=False`` becomes ``weights=None``; both warn, and a builder without
    pretrained weights (``default`` None) raises. Keyword-only parameters may also be passed by
    position (``kwonly_to_pos_or_kw``).
    """

    def outer(builder: Callable[..., M]) -> Callable[..., M]:
        @kwonly_to_pos_or_kw
        @functools.wraps(builder)
        def inner(*args: Any, **kwargs: Any) -> M:
            for weights_param, (pretrained_param, default) in weights.items():
                missing = object()
                weights_arg = kwargs.get(weights_param, missing)
                if ((weights_param not in kwargs and pretrained_param not in kwargs)
                        or isinstance(weights_arg, WeightsEnum)
                        or (isinstance(weights_arg, str) and weights_arg != "legacy")
                        or weights_arg is None):
                    continue  # the new interface, or nothing to translate
                # a positional ``pretrained`` arrives under the weights parameter's name
                positional = weights_arg is not missing
                if positional:
                    kwargs[pretrained_param] = pretrained_arg = kwargs.pop(weights_param)
                else:
                    pretrained_arg = kwargs[pretrained_param]
                if pretrained_arg:
                    chosen = default(kwargs) if callable(default) else default
                    if not isinstance(chosen, WeightsEnum):
                        raise ValueError(f"No weights available for model {builder.__name__}")
                else:
                    chosen = None
                if not positional:
                    warnings.warn(
                        f"The parameter '{pretrained_param}' is deprecated since 0.13 and may be "
                        f"removed in the future, please use '{weights_param}' instead.",
                        stacklevel=1)
                message = (
                    f"Arguments other than a weight enum or `None` for '{weights_param}' are "
                    "deprecated since 0.13 and may be removed in the future. The current behavior "
                    f"is equivalent to passing `{weights_param}={chosen}`.")
                if pretrained_arg:
                    message += (f" You can also use `{weights_param}={type(chosen).__name__}"
                                ".DEFAULT` to get the most up-to-date weights.")
                warnings.warn(message, stacklevel=1)
                del kwargs[pretrained_param]
                kwargs[weights_param] = chosen
            return builder(*args, **kwargs)

        return inner

    return outer


def _ovewrite_named_param(kwargs: dict[str, Any], param: str, new_value: Any) -> None:
    """Set ``kwargs[param]``; a different value the caller already gave is an error."""
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got "
                             f"{kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def _check_stage_settings(settings: Any, config: type, name: str, listed: str) -> None:
    """The check of a network's list of stage configurations (ConvNeXt's ``block_setting``,
    the MobileNetV3 / EfficientNet ``inverted_residual_setting``): not empty, a sequence of
    ``config`` objects (``listed``: the type the message names)."""
    if not settings:
        raise ValueError(f"The {name} should not be empty")
    if not (isinstance(settings, Sequence) and all(isinstance(s, config) for s in settings)):
        raise TypeError(f"The {name} should be List[{listed}]")


def _init_weights(model: nn.Module, linear_std: float | None = 0.01) -> None:
    """The MobileNet / EfficientNet initialization: convolutions Kaiming-normal (fan out), norms
    one, linear layers normal with std ``linear_std`` or, for None, uniform within
    ``1/sqrt(out_features)``; every bias zero."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            if linear_std is None:
                init_range = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -init_range, init_range)
            else:
                nn.init.normal_(m.weight, 0, linear_std)
            nn.init.zeros_(m.bias)


def _load_weights(model: M, weights: WeightsEnum | None, progress: bool) -> M:
    """``model`` with ``weights``' checkpoint loaded into it (downloaded once, hash checked);
    None leaves it as built."""
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


def _classifier(model_class: Callable[..., M], weights: WeightsEnum | None, progress: bool,
                *args: Any, **kwargs: Any) -> M:
    """``model_class(*args, **kwargs)`` for ``weights``: as many classes as its categories (a
    different ``num_classes`` is an error), then its checkpoint loaded."""
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return _load_weights(model_class(*args, **kwargs), weights, progress)


# where every checkpoint of the model builders is published
_CHECKPOINTS_URL = "https://download.pytorch.org/models/"


def _imagenet1k_weights(checkpoint: str, transforms: Callable[..., Any], common: dict[str, Any],
                        /, **meta: Any) -> Weights:
    """The ``Weights`` of a classifier evaluated on ImageNet-1K, its checkpoint the file
    ``checkpoint`` of ``_CHECKPOINTS_URL``: its ``meta`` is ``common`` (what a model family's
    weights share) followed by ``meta`` in the order given, where ``acc=(top-1, top-5)`` stands
    for ``"_metrics": {"ImageNet-1K": {"acc@1": top-1, "acc@5": top-5}}``."""
    entries = {**common}
    for key, value in meta.items():
        if key == "acc":
            entries["_metrics"] = {"ImageNet-1K": {"acc@1": value[0], "acc@5": value[1]}}
        else:
            entries[key] = value
    return Weights(url=_CHECKPOINTS_URL + checkpoint, transforms=transforms, meta=entries)


def _imagenet1k_v1_enum(name: str, module: str, row: tuple[Any, ...],
                        transforms: Callable[..., Any], common: dict[str, Any], /,
                        **more_meta: Any) -> type[WeightsEnum]:
    """The weights enum ``name`` of ``module`` for a model with one set of ImageNet-1K weights,
    ``row`` = (checkpoint, parameters, (acc@1, acc@5), GFLOPS, file size in MB): the members
    ``IMAGENET1K_V1`` and ``DEFAULT``, the same member, as the class statement
    ``class name(WeightsEnum)`` with ``IMAGENET1K_V1 = ...`` and ``DEFAULT = IMAGENET1K_V1``
    makes them. Their meta: ``common``, num_params, _metrics, _ops, _file_size, ``more_meta``."""
    checkpoint, num_params, acc, ops, file_size = row
    weights = _imagenet1k_weights(checkpoint, transforms, common, num_params=num_params, acc=acc,
                                  _ops=ops, _file_size=file_size, **more_meta)
    members = [("IMAGENET1K_V1", weights), ("DEFAULT", weights)]
    # Enum's functional API, which mypy reads as a lookup of a member by value
    return WeightsEnum(name, members, module=module,  # type: ignore[call-arg,return-value]
                       qualname=name)


def _trained_imagenet1k_v1_enum(name: str, module: str, training: tuple[dict[str, Any], str, str],
                                row: tuple[Any, ...]) -> type[WeightsEnum]:
    """``_imagenet1k_v1_enum`` for a family whose weights come from one of a few trainings:
    ``training`` = (the keywords of ``ImageClassification`` besides ``crop_size=224``, the
    recipe, the docs); the meta is ImageNet's, the recipe, the row's entries, the docs."""
    keywords, recipe, docs = training
    return _imagenet1k_v1_enum(name, module, row,
                               functools.partial(ImageClassification, crop_size=224, **keywords),
                               {**_IMAGENET_META, "recipe": recipe}, _docs=docs)


def _swag_weights(checkpoint: str, crop_size: int, common: dict[str, Any], recipe: str,
                  docs: str, meta: dict[str, Any]) -> Weights:
    """The ImageNet-1K weights of a trunk pretrained by SWAG (RegNet-Y, ViT): evaluated after a
    bicubic resize to ``crop_size``; ``meta`` stands between the SWAG license and ``docs``."""
    transforms = functools.partial(ImageClassification, crop_size=crop_size,
                                   resize_size=crop_size, interpolation=InterpolationMode.BICUBIC)
    return _imagenet1k_weights(checkpoint, transforms, common, recipe=recipe,
                               license=_SWAG_LICENSE, **meta, _docs=docs)


def _swag_e2e_weights(checkpoint: str, crop_size: int, common: dict[str, Any], /,
                      **meta: Any) -> Weights:
    """SWAG weights fine-tuned end to end on ImageNet-1K at ``crop_size``."""
    return _swag_weights(checkpoint, crop_size, common, _SWAG_RECIPE, _SWAG_E2E_DOCS, meta)


def _swag_linear_weights(checkpoint: str, common: dict[str, Any], /, **meta: Any) -> Weights:
    """SWAG weights whose frozen trunk got a linear classifier trained on ImageNet-1K at 224."""
    return _swag_weights(checkpoint, 224, common, _SWAG_LINEAR_RECIPE, _SWAG_LINEAR_DOCS, meta)


def _ovewrite_value_param(param: str, actual: V | None, expected: V) -> V:
    """``expected``; a different ``actual`` (not None) is an error."""
    if actual is not None and actual != expected:
        raise ValueError(f"The parameter '{param}' expected value {expected} but got {actual} "
                         "instead.")
    return expected


class _ModelURLs(dict):
    """The old ``model_urls`` dictionaries: reading one warns."""

    def __getitem__(self, item: Any) -> Any:
        warnings.warn("Accessing the model URLs via the internal dictionary of the module is "
                      "deprecated since 0.13 and may be removed in the future. Please access "
                      "them via the appropriate Weights Enum instead.", stacklevel=1)
        return super().__getitem__(item)


def _builder(name: str, weights_enum: type[WeightsEnum], returns: type[M],
             build: Callable[..., M], *args: Any, doc: str, legacy: str | None = "IMAGENET1K_V1",
             **keywords: Any) -> Callable[..., M]:
    """The public builder of one member of a model family, registered under ``name``:
    ``name(*, weights: weights_enum | None = None, progress: bool = True, **kwargs: Any) ->
    returns``, with the docstring ``doc``.

    It checks ``weights`` against its enum (``verify``), then calls the family's ``build`` with
    the member's architecture the way torchvision's builders do: ``build(*args, weights,
    progress, **kwargs)``, or, where the architecture is given by keyword,
    ``build(**keywords, weights=weights, progress=progress, **kwargs)`` (so a keyword the caller
    repeats is the same TypeError). ``pretrained=True`` of the old interface stands for the
    member named ``legacy`` (None: the model has no such weights).
    """

    def builder(*, weights: WeightsEnum | None = None, progress: bool = True,
                **kwargs: Any) -> M:
        weights = weights_enum.verify(weights)
        # fresh lists every call, as a builder that writes its architecture out makes them (a
        # model may keep one, e.g. ShuffleNetV2's _stage_out_channels)
        fresh_args, fresh_keywords = copy.deepcopy((args, keywords))
        if keywords:
            return build(**fresh_keywords, weights=weights, progress=progress, **kwargs)
        return build(*fresh_args, weights, progress, **kwargs)

    builder.__module__ = returns.__module__  # the family's module, which list_models matches
    builder.__name__ = builder.__qualname__ = name
    # a traceback or a profile names the builder, not this function
    builder.__code__ = builder.__code__.replace(co_name=name)
    builder.__doc__ = doc
    # what the signature shows, and what get_model_weights reads the enum from
    builder.__annotations__ = {"weights": weights_enum | None, "progress": bool, "kwargs": Any,
                               "return": returns}
    old_default = None if legacy is None else weights_enum[legacy]
    return register_model()(handle_legacy_interface(weights=("pretrained", old_default))(builder))
