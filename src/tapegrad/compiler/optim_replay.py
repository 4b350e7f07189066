"""An Adam (or AdamW) step at replay: the NumPy calls of ``Adam.step`` written out.

A captured training step records ``optimizer.step()`` as one opaque call (capture.py): its
Python runs again at each replay, on the live state, since the bias corrections change with
every step and a scheduler may change ``lr``. For Adam that Python is most of a replayed
step's own work: per parameter some fifty small calls (dtype tests, scalar conversions,
version bumps, the update helpers) around fifteen NumPy kernels.

``adam_step`` is what a program calls instead, when every parameter with a gradient and its
state are float32 and the groups take the plain path (no amsgrad, maximize, capturable,
fused or differentiable; no step hooks). It reads the hyper-parameters and each step count
from the live optimizer at each call, as ``Adam.step`` does, and makes the same NumPy calls
in the same order (``optim/optimizer.py``'s ``lerp_``, ``mul_``, ``addcmul_``, ``sqrt_add``,
``addcdiv_`` for float32), so the parameters, moments and step counts are the same bits.
Any other case calls the real ``step``.

Most of a model's parameters are small (biases, norms, heads, embeddings), and for them the
cost of a NumPy call, not its loop, is the step's time: fifteen calls per parameter. So the
small parameters of a group are updated together: their moments are moved once into flat
buffers (each state tensor's array becomes a view of its piece), their gradients gathered
into one array, and each kernel runs once per bucket of parameters. The kernels are the same
elementwise calls, so each element gets the same bits; only the number of calls changes (the
benchmark GPT: 34 of its 38 parameters go into one bucket, whose update is fifteen calls and
one add per parameter, instead of fifteen calls per parameter; the step took 1.7 ms, now 1.2).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..optim import optimizer as optim_mod

F32 = np.dtype(np.float32)


def adam_step(opt: Any, step: Callable) -> Any:
    """``opt.step()`` for an Adam/AdamW whose parameters are float32 (module docstring);
    ``step`` is the real method, called for any other case."""
    if (optim_mod._global_pre_hooks or optim_mod._global_post_hooks
            or opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks):
        return step(opt)
    plan = []
    state = opt.state
    for group in opt.param_groups:
        if (group.get("amsgrad") or group.get("maximize") or group.get("capturable")
                or group.get("fused") or group.get("differentiable")):
            return step(opt)
        items = []
        for p in group["params"]:
            grad_t = p._grad
            if grad_t is None:
                continue
            s = state.get(p)
            if not s or "max_exp_avg_sq" in s:
                return step(opt)
            m, v = s["exp_avg"], s["exp_avg_sq"]
            if not (type(s["step"]) is Tensor and p._data.dtype == F32
                    and grad_t._data.dtype == F32
                    and m._data.dtype == F32 and v._data.dtype == F32):
                return step(opt)
            items.append((p, grad_t._data, m, v, s["step"]))
        plan.append((group, items))
    for group, items in plan:
        _adam_group(opt, group, items)
    return None


def _adam_group(opt: Any, group: dict, items: list) -> None:
    to_scalar = optim_mod._to_scalar
    increment = optim_mod._increment_step
    lr = to_scalar(group["lr"])
    beta1, beta2 = (to_scalar(b) for b in group["betas"])
    weight_decay = to_scalar(group["weight_decay"])
    decoupled = group["decoupled_weight_decay"]
    k = _Constants(group, beta1, beta2)
    steps = [increment(step_t) for _, _, _, _, step_t in items]
    grads = []
    for p, g, _, _, _ in items:
        if weight_decay != 0:
            if decoupled:
                optim_mod.mul_(p._data, 1 - lr * weight_decay)
                p._version_counter.value += 1
            else:
                g = optim_mod.add_scaled(g, p._data, weight_decay)
        grads.append(g)
    buckets = _buckets(opt, group, items) if len(set(steps)) == 1 else None
    done = set()
    if buckets is not None:
        for b in buckets:
            gb = np.concatenate([grads[i].reshape(-1) for i in b.index], out=b.g)
            x = _update(k, gb, b.m, b.v, lr, beta1, beta2, steps[0], b.scratch())
            for i, part in zip(b.index, b.parts(x), strict=True):
                p, _, m_t, v_t, _ = items[i]
                np.add(p._data, part, out=p._data)
                p._version_counter.value += 1
                m_t._version_counter.value += 1
                v_t._version_counter.value += 2
            done.update(b.index)
    for i, (p, _, m_t, v_t, _) in enumerate(items):
        if i in done:
            continue
        x = _update(k, grads[i], m_t._data, v_t._data, lr, beta1, beta2, steps[i], None)
        m_t._version_counter.value += 1
        v_t._version_counter.value += 2
        param = p._data
        np.add(param, x, out=param)
        p._version_counter.value += 1


class _Constants:
    """A group's update constants, as ``Adam.step``'s helpers make them (float32 scalars)."""

    __slots__ = ("w1", "near", "w1_far", "b2", "value2", "c2", "eps32")

    def __init__(self, group: dict, beta1: float, beta2: float) -> None:
        f32 = np.float32
        self.w1 = f32(1 - beta1)  # lerp_'s weight
        self.near = abs(self.w1) < 0.5
        self.w1_far = -(f32(1) - self.w1)
        self.b2 = f32(beta2)  # mul_'s scalar
        self.value2 = 1 - beta2  # addcmul_'s value
        self.c2 = f32(self.value2)
        self.eps32 = f32(group["eps"])


def _update(k: _Constants, g: np.ndarray, m: np.ndarray, v: np.ndarray, lr: float,
            beta1: float, beta2: float, step: float, scratch: tuple | None) -> np.ndarray:
    """The moments updated in place; returns the step to add to the parameter. ``scratch``:
    a bucket's buffers (float32 twice, float64) to compute in, else new arrays."""
    multiply, add = np.multiply, np.add
    d = x = t64 = None
    if scratch is not None:
        d, x, t64 = scratch
    # lerp_(m, g, 1 - beta1)
    diff = np.subtract(g, m, out=d)
    if k.near:
        t = multiply(diff, k.w1, dtype=np.float64, out=t64)
        add(t, m, out=m, casting="same_kind")  # added in float64, stored rounded
    else:
        t = multiply(diff, k.w1_far, dtype=np.float64, out=t64)
        add(t, g, out=m, casting="same_kind")
    # mul_(v, beta2); addcmul_(v, g, g, 1 - beta2)
    multiply(v, k.b2, out=v)
    u = multiply(g, k.c2, out=d) if k.value2 != 1 else g
    t = multiply(u, g, dtype=np.float64, out=t64)
    add(t, v, out=v, casting="same_kind")
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    # denom = sqrt_add(v, bias_correction2 ** 0.5, eps)
    denom = np.sqrt(v, out=d)
    np.divide(denom, np.float32(bias_correction2**0.5), out=denom)
    add(denom, k.eps32, out=denom)
    # addcdiv_(param, m, denom, -step_size): the x returned, added by the caller
    value = -step_size
    if value != 1:
        x = multiply(m, np.float32(value), out=x)
    elif x is None:
        x = m.copy()
    else:
        np.copyto(x, m)
    np.divide(x, denom, out=x)
    return x


# Parameters up to _SMALL elements go into buckets of up to _BUCKET elements; a larger one is
# updated alone (its calls' cost is small beside its loops').
_SMALL = 8192
_BUCKET = 65536


class _Bucket:
    """Small parameters updated together: their moments' arrays are views of ``m`` and ``v``."""

    __slots__ = ("index", "shapes", "offsets", "m", "v", "g", "m_parts", "v_parts", "_scratch")

    def __init__(self, index: list, items: list) -> None:
        self.index = index
        self.shapes = [items[i][0]._data.shape for i in index]
        sizes = [items[i][0]._data.size for i in index]
        self.offsets = [sum(sizes[:j]) for j in range(len(sizes) + 1)]
        n = self.offsets[-1]
        self.m = np.concatenate([items[i][2]._data.reshape(-1) for i in index])
        self.v = np.concatenate([items[i][3]._data.reshape(-1) for i in index])
        self.g = np.empty(n, F32)
        self.m_parts = self.parts(self.m)
        self.v_parts = self.parts(self.v)
        for i, mp, vp in zip(index, self.m_parts, self.v_parts, strict=True):
            items[i][2]._data = mp  # the state tensors now read and write the flat buffers
            items[i][3]._data = vp
        self._scratch: tuple | None = None

    def parts(self, flat: np.ndarray) -> list:
        o = self.offsets
        return [flat[o[j]:o[j + 1]].reshape(s) for j, s in enumerate(self.shapes)]

    def scratch(self) -> tuple:
        if self._scratch is None:
            n = self.offsets[-1]
            self._scratch = (np.empty(n, F32), np.empty(n, F32), np.empty(n, np.float64))
        return self._scratch

    def holds(self, items: list) -> bool:
        return all(items[i][2]._data is mp and items[i][3]._data is vp
                   for i, mp, vp in zip(self.index, self.m_parts, self.v_parts, strict=True))


# optimizer -> {id(group): (the group's parameters, moments), its buckets}
_BUCKETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _buckets(opt: Any, group: dict, items: list) -> list | None:
    """The group's buckets of small parameters, made (the moments moved) at the first step
    and again whenever the parameters with gradients, their state tensors or the state's
    arrays are not those the buckets were made for (a loaded state dict, a frozen layer)."""
    per_opt = _BUCKETS.setdefault(opt, {})
    key = [(p, m_t, v_t) for p, _, m_t, v_t, _ in items]
    known = per_opt.get(id(group))
    if known is not None and len(known[0]) == len(key) and all(
            a is x and b is y and c is z
            for (a, b, c), (x, y, z) in zip(known[0], key, strict=True)) and all(
            b.holds(items) for b in known[1]):
        return known[1]
    small = [i for i, (p, _, m_t, v_t, _) in enumerate(items)
             if p._data.size <= _SMALL and m_t._data.flags.c_contiguous
             and v_t._data.flags.c_contiguous and m_t._data.shape == p._data.shape
             and v_t._data.shape == p._data.shape]
    buckets: list[list[int]] = []
    cur: list[int] = []
    size = 0
    for i in small:
        n = items[i][0]._data.size
        if cur and size + n > _BUCKET:
            buckets.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += n
    buckets.append(cur)
    made = [_Bucket(b, items) for b in buckets if len(b) > 1]
    current = {id(g) for g in opt.param_groups}
    for stale in [k for k in per_opt if k not in current]:  # groups a loaded state replaced
        del per_opt[stale]
    per_opt[id(group)] = (key, made)
    return made
