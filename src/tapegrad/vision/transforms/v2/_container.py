"""v2 containers: ``Compose``, ``RandomApply``, ``RandomChoice``, ``RandomOrder``. Unlike v1's,
their random choices draw from the tensor generator (``torch.rand``, ``torch.multinomial``,
``torch.randperm``), and they pass several inputs through as a tuple."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tapegrad
from tapegrad import nn

from ... import transforms as _transforms
from ._transform import Transform


def _in_turn(transforms: Sequence[Callable] | nn.ModuleList, inputs: tuple) -> Any:
    """Each of ``transforms`` applied to what the one before returned: several inputs are passed
    on unpacked, a single one as it is."""
    needs_unpacking = len(inputs) > 1
    outputs: Any = None
    for transform in transforms:
        outputs = transform(*inputs)
        inputs = outputs if needs_unpacking else (outputs,)
    return outputs


class Compose(Transform):
    """Apply ``transforms`` one after the other."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        elif not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs: Any) -> Any:
        return _in_turn(self.transforms, inputs)

    def extra_repr(self) -> str:
        return "\n".join(f"    {t}" for t in self.transforms)


class RandomApply(Transform):
    """Apply all ``transforms`` with probability ``p``."""

    _v1_transform_cls = _transforms.RandomApply

    def __init__(self, transforms: Sequence[Callable] | nn.ModuleList, p: float = 0.5) -> None:
        super().__init__()
        if not isinstance(transforms, (Sequence, nn.ModuleList)):
            raise TypeError("Argument transforms should be a sequence of callables or a "
                            "`nn.ModuleList`")
        elif not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.p = p

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        return {"transforms": self.transforms, "p": self.p}

    def forward(self, *inputs: Any) -> Any:
        needs_unpacking = len(inputs) > 1
        if tapegrad.rand(1) >= self.p:
            return inputs if needs_unpacking else inputs[0]
        return _in_turn(self.transforms, inputs)

    def extra_repr(self) -> str:
        return "\n".join(f"    {t}" for t in self.transforms)


class RandomChoice(Transform):
    """Apply one of ``transforms``, drawn with probabilities proportional to ``p``."""

    def __init__(self, transforms: Sequence[Callable], p: list[float] | None = None) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        elif not transforms:
            raise ValueError("Pass at least one transform")
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError("Length of p doesn't match the number of transforms: "
                             f"{len(p)} != {len(transforms)}")
        super().__init__()
        self.transforms = transforms
        total = sum(p)
        self.p = [prob / total for prob in p]

    def forward(self, *inputs: Any) -> Any:
        idx = int(tapegrad.multinomial(tapegrad.tensor(self.p), 1))
        return self.transforms[idx](*inputs)


class RandomOrder(Transform):
    """Apply ``transforms`` in a random order (``torch.randperm``)."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        elif not transforms:
            raise ValueError("Pass at least one transform")
        super().__init__()
        self.transforms = transforms

    def forward(self, *inputs: Any) -> Any:
        order = tapegrad.randperm(len(self.transforms))
        return _in_turn([self.transforms[int(idx)] for idx in order], inputs)
