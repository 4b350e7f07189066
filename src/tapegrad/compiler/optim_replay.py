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
"""

from __future__ import annotations

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
        _adam_group(group, items)
    return None


def _adam_group(group: dict, items: list) -> None:
    to_scalar = optim_mod._to_scalar
    increment = optim_mod._increment_step
    lr = to_scalar(group["lr"])
    beta1, beta2 = (to_scalar(b) for b in group["betas"])
    eps = group["eps"]
    weight_decay = to_scalar(group["weight_decay"])
    decoupled = group["decoupled_weight_decay"]
    f32 = np.float32
    w1 = f32(1 - beta1)  # lerp_'s weight
    near = abs(w1) < 0.5
    w1_far = -(f32(1) - w1)
    b2 = f32(beta2)  # mul_'s scalar
    value2 = 1 - beta2  # addcmul_'s value
    c2 = f32(value2)
    eps32 = f32(eps)
    multiply, add, copyto = np.multiply, np.add, np.copyto
    for p, g, m_t, v_t, step_t in items:
        param = p._data
        step = increment(step_t)
        if weight_decay != 0:
            if decoupled:
                optim_mod.mul_(param, 1 - lr * weight_decay)
                p._version_counter.value += 1
            else:
                g = optim_mod.add_scaled(g, param, weight_decay)
        m, v = m_t._data, v_t._data
        # lerp_(m, g, 1 - beta1)
        diff = np.subtract(g, m)
        if near:
            t = multiply(diff, w1, dtype=np.float64)
            add(t, m, out=t)
        else:
            t = multiply(diff, w1_far, dtype=np.float64)
            add(t, g, out=t)
        copyto(m, t, casting="same_kind")
        m_t._version_counter.value += 1
        # mul_(v, beta2); addcmul_(v, g, g, 1 - beta2)
        multiply(v, b2, out=v)
        u = multiply(g, c2) if value2 != 1 else g
        t = multiply(u, g, dtype=np.float64)
        add(t, v, out=t)
        copyto(v, t, casting="same_kind")
        v_t._version_counter.value += 2
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        # denom = sqrt_add(v, bias_correction2 ** 0.5, eps)
        denom = np.sqrt(v)
        np.divide(denom, f32(bias_correction2**0.5), out=denom)
        add(denom, eps32, out=denom)
        # addcdiv_(param, m, denom, -step_size)
        value = -step_size
        x = multiply(m, f32(value)) if value != 1 else m.copy()
        np.divide(x, denom, out=x)
        add(param, x, out=param)
        p._version_counter.value += 1
