"""torch's values handed to the package under test where torch's scalar CPU kernels compute their
last bits their own way (``ATEN_CPU_CAPABILITY=default``; conftest.py installs
:class:`TorchValues` for every transform test there, and nothing under the vectorized kernels,
where the tests compare tapegrad's own values bit for bit).

Under those kernels torch rounds twice what the vectorized kernels fuse into one rounding
(docs/float32.md, "Other CPU kernels"): the random draws with bounds (``uniform_(a, b)``),
``linspace``, antialiased resampling's weighted terms, ``grid_sample``'s bilinear positions and
terms and ``a + alpha*b``; and it draws float32 normal numbers through libm. The last bits of a
transform's float results move with them, and so can a uint8 pixel that torch rounds or
truncates from float32 (a rotation by the angle drawn, a blend by a factor from AutoAugment's
bins, a resize done in float32). Each such value of the package under test is checked against
torch's within the bound documented for it, and then replaced by torch's, so that the rest of
what a transform does is compared bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from cpu_kernels import (
    GRID_SAMPLE_ULPS,
    assert_draws,
    assert_fused,
    note,
    resample_terms,
)

# the modules of the package under test that import interpolate and grid_sample by name
_RESAMPLING = ("transforms._functional_tensor", "transforms.v2.functional._geometry")


class TorchValues:
    """Installed on both sides for one test (``monkeypatch``):

    * random draws: the draws torch makes after ``theirs.seed(s)`` (``Tensor.uniform_``,
      ``Tensor.normal_``, ``randn_like``) are recorded; after ``ours.seed(s)`` the package
      under test makes its own (its generator moves on as it does), each is checked against
      torch's (``uniform_``: one rounding more of the product, ``cpu_kernels.assert_fused``;
      normal draws: ``cpu_kernels.assert_draws``) and replaced by torch's. Draws after a seed
      torch has not drawn with are left alone (a test of the draws themselves runs ``ours``
      first and checks them itself);
    * ``linspace``, antialiased ``interpolate`` (float), bilinear ``grid_sample`` and
      ``Tensor.add_(other, alpha=...)``: torch computes the same call on the same values, the
      package's result is checked against it within the documented bound and replaced by it.
    """

    def __init__(self, theirs: Any, ours: Any, monkeypatch: Any) -> None:
        import importlib

        self.torch, self.lib = theirs.L, ours.L
        self.recorded: dict[int, list] = {}
        self.recording: list | None = None
        self.replaying: list | None = None
        for name in ("uniform_", "normal_"):
            monkeypatch.setattr(theirs.L.Tensor, name,
                                self._record(getattr(theirs.L.Tensor, name), name))
            monkeypatch.setattr(ours.L.Tensor, name,
                                self._replay(getattr(ours.L.Tensor, name), name))
        monkeypatch.setattr(theirs.L, "randn_like",
                            self._record(theirs.L.randn_like, "randn_like"))
        monkeypatch.setattr(ours.L, "randn_like", self._replay(ours.L.randn_like, "randn_like"))
        monkeypatch.setattr(ours.L, "linspace", self._linspace(ours.L.linspace))
        monkeypatch.setattr(ours.L.Tensor, "add_", self._add_(ours.L.Tensor.add_))
        for name in _RESAMPLING:
            module = importlib.import_module(f"{ours.tv.__name__}.{name}")
            monkeypatch.setattr(module, "interpolate", self._interpolate(module.interpolate))
            monkeypatch.setattr(module, "grid_sample", self._grid_sample(module.grid_sample))

    # ---------------------------------------------------------------------------------------
    # random draws, recorded on torch's side and replayed on ours after the same seed

    def seeded(self, side: Any, seed: int) -> None:
        if side.L is self.torch:
            self.recording = self.recorded[seed] = []
        else:
            self.recording = None
            self.replaying = list(self.recorded[seed]) if seed in self.recorded else None

    def _record(self, draw: Any, name: str) -> Any:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            out = draw(*args, **kwargs)
            if self.recording is not None:
                self.recording.append((name, _numbers(args[1:]), kwargs,
                                       out.detach().numpy().copy()))
            return out
        return recorded

    def _replay(self, draw: Any, name: str) -> Any:
        def replayed(*args: Any, **kwargs: Any) -> Any:
            out = draw(*args, **kwargs)
            if self.replaying is None:
                return out
            numbers = _numbers(args[1:])
            what = f"{name}{numbers}{kwargs or ''}"
            assert self.replaying, f"{what}: a draw torch did not make"
            their_name, their_numbers, their_kwargs, theirs = self.replaying.pop(0)
            assert (name, len(numbers), kwargs.keys()) == (
                their_name, len(their_numbers), their_kwargs.keys()), (
                f"{what} where torch drew {their_name}{their_numbers}{their_kwargs or ''}")
            mine = out.detach().numpy()
            assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, what
            if name == "uniform_":
                _check_uniform(mine, theirs, _bounds(numbers, kwargs),
                               _bounds(their_numbers, their_kwargs), what)
            else:
                assert (numbers, kwargs) == (their_numbers, their_kwargs), what
                assert_draws(mine, theirs, what)
            self._set(out, theirs)
            return out
        return replayed

    # ---------------------------------------------------------------------------------------
    # deterministic kernels: torch's result on the same values

    def _linspace(self, linspace: Any) -> Any:
        def torchs(start: Any, end: Any, steps: Any, *, dtype: Any = None,
                   **kwargs: Any) -> Any:
            out = linspace(start, end, steps, dtype=dtype, **kwargs)
            d = None if dtype is None else getattr(self.torch, str(dtype).split(".")[-1])
            expected = self.torch.linspace(start, end, steps, dtype=d).numpy()
            mine, n = out.numpy(), int(steps)
            what = f"linspace({start}, {end}, {steps})"
            if n > 1:  # torch's scalar kernel rounds step*i (or step*(n - 1 - i)) before adding
                i, step = np.arange(n), (float(end) - float(start)) / (n - 1)
                assert_fused(mine, expected, np.abs(step * np.where(i < n // 2, i, n - 1 - i)),
                             what)
            else:
                np.testing.assert_array_equal(mine, expected, err_msg=what)
            return self._like(out, expected)
        return torchs

    def _add_(self, add_: Any) -> Any:
        def torchs(tensor: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
            alpha = kwargs.get("alpha", args[0] if args else 1)
            if alpha == 1:
                return add_(tensor, other, *args, **kwargs)
            a = _np(tensor).copy()
            b = _np(other) if hasattr(other, "numpy") else other
            out = add_(tensor, other, *args, **kwargs)
            expected = self.torch.from_numpy(a).add_(
                self.torch.from_numpy(np.ascontiguousarray(b)) if isinstance(b, np.ndarray)
                else b, alpha=alpha).numpy()
            if expected.dtype.kind == "f":  # torch's scalar kernel rounds alpha*b, then the sum
                products = np.broadcast_to(np.abs(float(alpha) * np.asarray(b, np.float64)),
                                           expected.shape)
                assert_fused(_np(out), expected, products, f"add_(alpha={alpha})")
            else:
                np.testing.assert_array_equal(_np(out), expected)
            self._set(out, expected)
            return out
        return torchs

    def _interpolate(self, interpolate: Any) -> Any:
        def torchs(x: Any, *args: Any, **kwargs: Any) -> Any:
            out = interpolate(x, *args, **kwargs)
            mode = kwargs.get("mode", "nearest")
            if not kwargs.get("antialias") or x.dtype.name not in ("float32", "float64"):
                # uint8 resampling computes torch's integers under every kernel; the modes
                # without antialiasing are held to float32's tolerances anyway
                return out
            expected = self.torch.nn.functional.interpolate(
                self.torch.from_numpy(_np(x).copy()), *args, **kwargs).numpy()
            mine = _np(out)
            assert mine.dtype == expected.dtype and mine.shape == expected.shape
            # torch's scalar kernels round each weighted term before adding it: one unit in the
            # last place of the largest value per term, over the terms of both passes
            (h, w), (oh, ow) = x.shape[-2:], expected.shape[-2:]
            terms = resample_terms(mode, h, oh) + resample_terms(mode, w, ow)
            atol = terms * float(np.finfo(expected.dtype).eps) * float(np.abs(_np(x)).max())
            np.testing.assert_allclose(mine, expected, rtol=0, atol=atol, err_msg=(
                f"antialiased {mode} {tuple(x.shape)} -> {(oh, ow)} ({note()}: one rounding "
                "more a term)"))
            return self._like(out, expected)
        return torchs

    def _grid_sample(self, grid_sample: Any) -> Any:
        def torchs(x: Any, grid: Any, *args: Any, **kwargs: Any) -> Any:
            out = grid_sample(x, grid, *args, **kwargs)
            if kwargs.get("mode", "bilinear") != "bilinear":
                return out  # (nearest: no arithmetic on the values)
            expected = self.torch.nn.functional.grid_sample(
                self.torch.from_numpy(_np(x).copy()), self.torch.from_numpy(_np(grid).copy()),
                *args, **kwargs).numpy()
            mine = _np(out)
            assert mine.dtype == expected.dtype and mine.shape == expected.shape
            # the positions and the four terms rounded twice (cpu_kernels.GRID_SAMPLE_ULPS)
            atol = GRID_SAMPLE_ULPS * float(np.finfo(expected.dtype).eps) * float(
                np.abs(_np(x)).max(initial=0.0))
            np.testing.assert_allclose(mine, expected, rtol=0, atol=atol, err_msg=(
                f"grid_sample {tuple(x.shape)} ({note()}: positions rounded twice)"))
            return self._like(out, expected)
        return torchs

    def _like(self, out: Any, values: np.ndarray) -> Any:
        """``values`` as a tensor of the package under test, where ``out`` was."""
        return self.lib.from_numpy(values.copy()).to(device=out.device)

    def _set(self, out: Any, values: np.ndarray) -> None:
        with self.lib.no_grad():
            out.copy_(self.lib.from_numpy(values.copy()))


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _numbers(args: tuple) -> tuple:
    """A draw's arguments as Python numbers (torchvision passes some as 0-d tensors)."""
    return tuple(float(a) if hasattr(a, "item") else a for a in args)


def _bounds(numbers: tuple, kwargs: dict) -> tuple[float, float]:
    """``uniform_``'s (from, to)."""
    low = numbers[0] if numbers else kwargs.get("from", 0.0)
    high = numbers[1] if len(numbers) > 1 else kwargs.get("to", 1.0)
    return float(low), float(high)


def _check_uniform(mine: np.ndarray, theirs: np.ndarray, bounds: tuple[float, float],
                   their_bounds: tuple[float, float], what: str) -> None:
    """A draw ``low + (high - low)*u`` of the package under test against torch's, the same
    ``u``: torch's scalar kernel rounds the product before adding (one unit in the last place
    of the result plus one of the product, as ``cpu_kernels.assert_fused``). Bounds each
    library computed itself (RandomResizedCrop's float32 ``log`` of the aspect ratios, a
    transcendental function: within float32's tolerances of torch's) move the draw by as much
    as they differ."""
    np.testing.assert_allclose(bounds, their_bounds, rtol=1.3e-6, atol=0,
                               err_msg=f"{what}: the bounds")
    product = np.abs(theirs.astype(np.float64) - their_bounds[0])
    if bounds == their_bounds:
        assert_fused(mine, theirs, product, what)
        return
    moved = max(abs(a - b) for a, b in zip(bounds, their_bounds, strict=True))
    bound = (np.spacing(np.abs(theirs)).astype(np.float64)
             + float(np.finfo(theirs.dtype).eps) * product + moved)
    diff = np.abs(mine.astype(np.float64) - theirs.astype(np.float64))
    assert (diff <= bound).all(), (
        f"{what}: {mine} vs torch's {theirs} with bounds {their_bounds} ({note()})")
