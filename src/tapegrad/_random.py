"""Random tensors: ``Generator``, the default generator, and rand/randn/randint/... over it.

Every draw goes to ``_rng.Engine`` (torch's CPU generator, bit for bit), so a seeded program
prints torch's numbers. In-place fills (``x.normal_()``) write the engine's values in the order
torch fills the destination's memory, so non-contiguous destinations match too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype
from ._creation import _new, _size
from ._rng import STATE_SIZE, Engine, place
from ._tensor import Tensor


class Generator:
    """``torch.Generator``: an independent stream of random numbers.

    Example:
        >>> import tapegrad as torch
        >>> g = torch.Generator().manual_seed(0)
        >>> torch.rand(2, generator=g)
        tensor([0.4963, 0.7682])
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.engine = Engine()
        self.device = device

    def manual_seed(self, seed: int) -> Generator:
        self.engine.manual_seed(seed)
        return self

    def seed(self) -> int:
        return self.engine.seed()

    def initial_seed(self) -> int:
        return self.engine.initial_seed()

    def get_state(self) -> Tensor:
        return Tensor._make(self.engine.get_state().copy())

    def set_state(self, new_state: Tensor) -> Generator:
        if not isinstance(new_state, Tensor):
            raise TypeError(
                f"expected a torch.ByteTensor, but got {type(new_state).__name__}"
            )
        if new_state._data.dtype != np.uint8:
            raise TypeError(
                "expected a torch.ByteTensor, but got torch."
                + _dtype.LEGACY_NAMES[new_state.dtype.name]
            )
        self.engine.set_state(new_state._data)
        return self


default_generator = Generator()


def _engine(generator: Generator | None) -> Engine:
    return (generator or default_generator).engine


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (``torch.manual_seed``)."""
    default_generator.manual_seed(seed)
    return default_generator


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state: 5056 bytes, torch's layout."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def _float_dtype(dtype: Any) -> _dtype.dtype:
    return _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None, layout: Any = None,
         pin_memory: bool = False) -> Tensor:
    """Uniform values in [0, 1)."""
    d = _float_dtype(dtype)
    return _new(_engine(generator).uniform(_size(size), d.np), requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, out: Any = None, layout: Any = None,
          pin_memory: bool = False) -> Tensor:
    """Standard normal values."""
    d = _float_dtype(dtype)
    return _new(_engine(generator).normal(_size(size), d.np), requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, generator: Generator | None = None,
              requires_grad: bool = False, **_: Any) -> Tensor:
    return rand(input.shape, dtype=dtype or input.dtype, generator=generator,
                requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, generator: Generator | None = None,
               requires_grad: bool = False, **_: Any) -> Tensor:
    return randn(input.shape, dtype=dtype or input.dtype, generator=generator,
                 requires_grad=requires_grad)


def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False,
            **_: Any) -> Tensor:
    """Integers in [low, high) (``randint(high, size)`` starts at 0)."""
    if size is None:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint() missing 1 required positional arguments: \"size\"")
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    shape = _size((size,) if isinstance(size, int) else tuple(size))
    return _new(_engine(generator).randint(int(low), int(high), shape, d.np), requires_grad)


def randint_like(input: Tensor, low: int = 0, high: Any = None, *, dtype: Any = None,
                 generator: Generator | None = None, **_: Any) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   generator=generator)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    return _new(_engine(generator).randperm(int(n), d.np), requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, dtype: Any = None, **_: Any) -> Tensor:
    """Normal values with the given mean and std (numbers or tensors)."""
    eng = _engine(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        return _new(eng.normal_tensor(m, s, ref._data.dtype))
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments")
    d = _float_dtype(dtype)
    return _new(eng.normal(_size((size,) if isinstance(size, int) else tuple(size)), d.np,
                           float(mean), float(std)))


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (elementwise), else 0, in input's dtype."""
    probs = input._data if p is None else p
    return _new(_engine(generator).bernoulli(probs, input._data.shape, input._data.dtype))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    return _new(_engine(generator).multinomial(input._data, num_samples, replacement))


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    raise NotImplementedError("poisson is not supported by tapegrad")


# ---------------------------------------------------------------------------------------------
# In-place fills: Tensor.uniform_, normal_, random_, bernoulli_, exponential_
# ---------------------------------------------------------------------------------------------

def _strides(t: Tensor) -> tuple:
    return tuple(s // t._data.itemsize for s in t._data.strides)


def _fill(t: Tensor, draw: Any) -> Tensor:
    """Write freshly drawn values into ``t`` in torch's fill order; in-place rules apply."""
    from .ops._registry import check_inplace
    from .ops.elementwise import _fill as fill_op

    check_inplace(t, False)
    if t._requires_grad and t.grad_fn is None:
        from .autograd.grad_mode import _state

        if _state.enabled:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
    shape = t._data.shape
    contiguous = bool(t._data.flags.c_contiguous)
    values = draw(shape, contiguous)
    if not contiguous:
        values = place(values, shape, _strides(t))
    if t.grad_fn is not None or t._base is not None:
        from .ops._registry import apply_

        apply_(fill_op, t, value=0.0)  # record the overwrite in the graph (FillBackward0)
    np.copyto(t._data, values.reshape(shape), casting="unsafe")
    t._version_counter.value += 1
    return t


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *,
             generator: Generator | None = None) -> Tensor:
    eng = _engine(generator)
    return _fill(t, lambda shape, c: eng.uniform(shape, t._data.dtype, a, b))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    eng = _engine(generator)
    return _fill(t, lambda shape, c: eng.normal(shape, t._data.dtype, mean, std, contiguous=c))


def random_(t: Tensor, from_: Any = None, to: Any = None, *,
            generator: Generator | None = None) -> Tensor:
    eng = _engine(generator)
    if from_ is not None and to is None:
        from_, to = 0, from_
    return _fill(t, lambda shape, c: eng.random_(shape, t._data.dtype, from_, to))


def bernoulli_(t: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    eng = _engine(generator)
    probs = p._data if isinstance(p, Tensor) else p
    return _fill(t, lambda shape, c: eng.bernoulli(probs, shape, t._data.dtype))


def exponential_(t: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    eng = _engine(generator)
    return _fill(t, lambda shape, c: eng.exponential(shape, t._data.dtype, lambd))


Tensor.uniform_ = uniform_  # type: ignore[attr-defined]
Tensor.normal_ = normal_  # type: ignore[attr-defined]
Tensor.random_ = random_  # type: ignore[attr-defined]
Tensor.bernoulli_ = bernoulli_  # type: ignore[attr-defined]
Tensor.exponential_ = exponential_  # type: ignore[attr-defined]
Tensor.bernoulli = lambda self, p=None, *, generator=None: bernoulli(  # type: ignore
    self, p, generator=generator)
Tensor.multinomial = lambda self, num_samples, replacement=False, *, generator=None: (  # type: ignore
    multinomial(self, num_samples, replacement, generator=generator))

__all__ = ["STATE_SIZE"]
