"""The steps of Adam (and AdamW), SGD and RMSprop at replay: the optimizers' own arithmetic,
called on small parameters' values together.

A captured training step records ``optimizer.step()`` as one opaque call (capture.py): its
Python runs again at each replay, on the live state, since the bias corrections change with
every step and a scheduler may change ``lr``. For these optimizers that Python is most of a
replayed step's own work: per parameter some tens of small calls (dtype tests, scalar
conversions, version bumps, the update helpers) around a handful of NumPy kernels.

``replay_of(step)`` gives what a program calls instead (``adam_step``, ``sgd_step``,
``rmsprop_step``), when every parameter with a gradient and its state are float32 and the
groups take the plain path (no maximize, capturable, fused or differentiable, no amsgrad; no
step hooks; the state already made by a first eager step). Each reads the hyper-parameters
and step counts from the live optimizer at each call, as ``step`` does, and calls the same
array functions ``step`` calls (``optim/_single_tensor.py``: ``gradient_for_step``,
``adam_moments_array_``, ``adam_step_term``, ``sgd_momentum_array_``, ``sgd_direction``,
``square_average_array_``, ``rmsprop_denominator``, ...; the arithmetic is written once,
there), so the parameters, state and step counts are the same bits. Any other case calls the
real ``step``.

Most of a model's parameters are small (biases, norms, heads, embeddings), and for them the
cost of a NumPy call, not its loop, is the step's time. So the small parameters of a group are
updated together: their state tensors are moved once into flat buffers (each state tensor's
array becomes a view of its piece), their gradients gathered into one array, and each array
function runs once per bucket of parameters. The functions are elementwise with the same
scalars for every element, so each element gets the bits it gets alone; what is added to each
parameter is then added per parameter, as ``step`` adds it (the benchmark GPT under Adam: 34
of its 38 parameters go into one bucket). SGD's buffers are bucketed only without dampening:
its ``add_`` with a scale other than 1 goes through the BLAS's ``axpy`` on a large array and
not on a small one, and those round differently.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..optim import _single_tensor as single
from ..optim import optimizer as optim_mod
from ..optim.adam import Adam
from ..optim.rmsprop import RMSprop
from ..optim.sgd import SGD

F32 = np.dtype(np.float32)


def replay_of(fn: Any) -> Callable | None:
    """The replayed form of an optimizer's ``step`` method (under the wrappers the optimizer
    classes put around it: the step hooks, a subclass's own wrapper), or None."""
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return _replays().get(fn)


_REPLAYS: dict = {}


def _replays() -> dict:
    if not _REPLAYS:
        for cls, replay in ((Adam, adam_step), (SGD, sgd_step), (RMSprop, rmsprop_step)):
            fn = cls.__dict__["step"]
            while hasattr(fn, "__wrapped__"):
                fn = fn.__wrapped__
            _REPLAYS[fn] = replay
    return _REPLAYS


# ---------------------------------------------------------------------------------------------
# What every replayed step shares: the checks, the plan, the buckets
# ---------------------------------------------------------------------------------------------

def _hooked(opt: Any) -> bool:
    return bool(optim_mod._global_pre_hooks or optim_mod._global_post_hooks
                or opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks)


_OFF = ("maximize", "capturable", "fused", "differentiable", "amsgrad")


def _plan(opt: Any, keys: Callable[[dict], tuple], counted: bool) -> list | None:
    """Per group, ``(group, items)`` with one item per parameter with a gradient:
    ``(p, its state tensors for keys(group), its step count tensor or None)``; None when the
    real step must run (a group option the replay does not take, a state not made yet or
    made otherwise, a dtype other than float32)."""
    plan = []
    state = opt.state
    for group in opt.param_groups:
        for k in _OFF:
            if group.get(k):
                return None
        names = keys(group)
        n_state = len(names) + counted
        items = []
        for p in group["params"]:
            grad_t = p._grad
            if grad_t is None:
                continue
            if p._data.dtype != F32 or grad_t._data.dtype != F32:
                return None
            tensors: tuple = ()
            step_t = None
            if n_state:
                s = state.get(p)
                if not s or len(s) != n_state:
                    return None
                tensors = tuple([s.get(k) for k in names])
                for t in tensors:
                    if type(t) is not Tensor or t._data.dtype != F32:
                        return None
                if counted:
                    step_t = s.get("step")
                    if type(step_t) is not Tensor:
                        return None
            items.append((p, tensors, step_t))
        plan.append((group, items))
    return plan


def _run(opt: Any, step: Callable, keys: Callable[[dict], tuple], counted: bool,
         group_step: Callable) -> Any:
    """``opt.step()``: the replayed form where the plan allows it, else the real one."""
    if _hooked(opt):
        return step(opt)
    plan = _plan(opt, keys, counted)
    if plan is None:
        return step(opt)
    for group, items in plan:
        if items:
            group_step(opt, group, items)
    return None


def _grads(items: list, weight_decay: float, lr: float = 0.0,
           decoupled: bool = False) -> list:
    """Each item's gradient as the update uses it (``gradient_for_step``: the weight decay,
    in place on the parameter when decoupled)."""
    out = []
    for p, _, _ in items:
        out.append(single.gradient_for_step(p, False, lr, weight_decay, decoupled))
    return out


def _bump_all(items: list, index: Any, counts: tuple) -> None:
    """The version bumps ``step`` makes: the parameter once, each state tensor its count."""
    for i in index:
        p, tensors, _ = items[i]
        p._version_counter.value += 1
        for t, n in zip(tensors, counts, strict=True):
            t._version_counter.value += n


# Parameters up to _SMALL elements go into buckets of up to _BUCKET elements; a larger one is
# updated alone (its calls' cost is small beside its loops').
_SMALL = 8192
_BUCKET = 65536


class _Bucket:
    """Small parameters updated together: their state tensors' arrays are views of ``flats``
    (one flat buffer per state key)."""

    __slots__ = ("index", "shapes", "offsets", "flats", "parts_of", "g")

    def __init__(self, index: list, items: list) -> None:
        self.index = index
        self.shapes = [items[i][0]._data.shape for i in index]
        sizes = [items[i][0]._data.size for i in index]
        self.offsets = [sum(sizes[:j]) for j in range(len(sizes) + 1)]
        n_keys = len(items[index[0]][1])
        self.flats = [np.concatenate([items[i][1][k]._data.reshape(-1) for i in index])
                      for k in range(n_keys)]
        self.parts_of = [self.parts(f) for f in self.flats]
        for k, parts in enumerate(self.parts_of):
            for i, part in zip(index, parts, strict=True):
                items[i][1][k]._data = part  # the state tensors now read and write the buffers
        self.g = np.empty(self.offsets[-1], F32)

    def parts(self, flat: np.ndarray) -> list:
        o = self.offsets
        return [flat[o[j]:o[j + 1]].reshape(s) for j, s in enumerate(self.shapes)]

    def gather(self, grads: list) -> np.ndarray:
        """The bucket's gradients, one flat array."""
        return np.concatenate([grads[i].reshape(-1) for i in self.index], out=self.g)

    def holds(self, items: list) -> bool:
        return all(items[i][1][k]._data is part
                   for k, parts in enumerate(self.parts_of)
                   for i, part in zip(self.index, parts, strict=True))


# optimizer -> {id(group): (the ids of the group's parameters and state tensors, those
# objects (kept, so that their ids stay theirs), its buckets)}
_BUCKETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _buckets(opt: Any, group: dict, items: list) -> list:
    """The group's buckets of small parameters, made (the state moved) at the first replayed
    step and again whenever the parameters with gradients, their state tensors or the state's
    arrays are not those the buckets were made for (a loaded state dict, a frozen layer)."""
    per_opt = _BUCKETS.setdefault(opt, {})
    objects = [(p, *tensors) for p, tensors, _ in items]
    ids = tuple([tuple(map(id, o)) for o in objects])
    known = per_opt.get(id(group))
    if known is not None and known[0] == ids and all(b.holds(items) for b in known[2]):
        return known[2]
    small = [i for i, (p, tensors, _) in enumerate(items)
             if p._data.size <= _SMALL and tensors and all(
                 t._data.flags.c_contiguous and t._data.shape == p._data.shape
                 for t in tensors)]
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
    per_opt[id(group)] = (ids, objects, made)
    return made


def _each(items: list, buckets: list | None) -> tuple[list, list[int]]:
    """The buckets to update together and the items' indices to update one by one."""
    if not buckets:
        return [], list(range(len(items)))
    done = {i for b in buckets for i in b.index}
    return buckets, [i for i in range(len(items)) if i not in done]


# ---------------------------------------------------------------------------------------------
# Adam and AdamW
# ---------------------------------------------------------------------------------------------

def adam_step(opt: Any, step: Callable) -> Any:
    """``opt.step()`` of an Adam or AdamW (module docstring); ``step`` is the real method."""
    return _run(opt, step, lambda group: ("exp_avg", "exp_avg_sq"), True, _adam_group)


def _adam_group(opt: Any, group: dict, items: list) -> None:
    to_scalar = optim_mod._to_scalar
    lr = to_scalar(group["lr"])
    beta1, beta2 = (to_scalar(b) for b in group["betas"])
    weight_decay = to_scalar(group["weight_decay"])
    eps = group["eps"]
    steps = [optim_mod._increment_step(step_t) for _, _, step_t in items]
    grads = _grads(items, weight_decay, lr, group["decoupled_weight_decay"])
    buckets, alone = _each(items, _buckets(opt, group, items) if len(set(steps)) == 1
                           else None)
    for b in buckets:
        g = b.gather(grads)
        m, v = b.flats
        single.adam_moments_array_(m, v, g, beta1, beta2)
        x = single.adam_step_term(m, v, steps[0], lr, beta1, beta2, eps, m)
        for i, part in zip(b.index, b.parts(x), strict=True):
            optim_mod.add_term_(items[i][0]._data, part)
        _bump_all(items, b.index, (1, 2))
    for i in alone:
        p, (m_t, v_t), _ = items[i]
        m, v = m_t._data, v_t._data
        single.adam_moments_array_(m, v, grads[i], beta1, beta2)
        optim_mod.add_term_(p._data, single.adam_step_term(m, v, steps[i], lr, beta1, beta2,
                                                           eps, p._data))
    _bump_all(items, alone, (1, 2))


# ---------------------------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------------------------

def sgd_step(opt: Any, step: Callable) -> Any:
    """``opt.step()`` of an SGD (module docstring); ``step`` is the real method. With
    momentum, the buffers are made by the first (real) step."""
    return _run(opt, step, _sgd_keys, False, _sgd_group)


def _sgd_keys(group: dict) -> tuple:
    return ("momentum_buffer",) if group["momentum"] != 0 else ()


def _sgd_group(opt: Any, group: dict, items: list) -> None:
    to_scalar = optim_mod._to_scalar
    lr = to_scalar(group["lr"])
    momentum = group["momentum"]
    dampening = group["dampening"]
    nesterov = group["nesterov"]
    grads = _grads(items, to_scalar(group["weight_decay"]))
    add_scaled_ = optim_mod.add_scaled_
    if momentum == 0:
        for (p, _, _), g in zip(items, grads, strict=True):
            add_scaled_(p._data, g, -lr)
            p._version_counter.value += 1
        return
    buckets, alone = _each(items, _buckets(opt, group, items) if 1 - dampening == 1
                           else None)
    for b in buckets:
        g = b.gather(grads)
        (buf,) = b.flats
        single.sgd_momentum_array_(buf, g, momentum, dampening)
        d = single.sgd_direction(g, buf, momentum, nesterov)
        for i, part in zip(b.index, b.parts(d), strict=True):
            add_scaled_(items[i][0]._data, part, -lr)
        _bump_all(items, b.index, (2,))
    for i in alone:
        p, (buf_t,), _ = items[i]
        buf = buf_t._data
        single.sgd_momentum_array_(buf, grads[i], momentum, dampening)
        add_scaled_(p._data, single.sgd_direction(grads[i], buf, momentum, nesterov), -lr)
    _bump_all(items, alone, (2,))


# ---------------------------------------------------------------------------------------------
# RMSprop
# ---------------------------------------------------------------------------------------------

def rmsprop_step(opt: Any, step: Callable) -> Any:
    """``opt.step()`` of an RMSprop (module docstring); ``step`` is the real method."""
    return _run(opt, step, _rmsprop_keys, True, _rmsprop_group)


def _rmsprop_keys(group: dict) -> tuple:
    return (("square_avg",) + (("momentum_buffer",) if group["momentum"] > 0 else ())
            + (("grad_avg",) if group["centered"] else ()))


def _rmsprop_group(opt: Any, group: dict, items: list) -> None:
    lr = optim_mod._to_scalar(group["lr"])
    alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
    centered = group["centered"]
    for _, _, step_t in items:
        optim_mod._increment_step(step_t)
    grads = _grads(items, group["weight_decay"])
    counts = (2,) + ((2,) if momentum > 0 else ()) + ((1,) if centered else ())

    def update(arrays: tuple, g: np.ndarray, params: list) -> None:
        """The update of one parameter, or of a bucket's (``params``: its pieces' arrays,
        each with the slice of the flat arrays it takes)."""
        square_avg = arrays[0]
        single.square_average_array_(square_avg, g, alpha)
        grad_avg = None
        if centered:
            grad_avg = arrays[-1]
            optim_mod.lerp_(grad_avg, g, 1 - alpha)
        avg = single.rmsprop_denominator(square_avg, grad_avg, eps, square_avg)
        if momentum > 0:
            buf = arrays[1]
            single.rmsprop_momentum_array_(buf, g, avg, momentum)
            for param, piece in params:
                optim_mod.add_scaled_exact_(param, piece(buf), -lr)
        else:
            x = optim_mod.addcdiv_term(g, avg, -lr, square_avg)
            for param, piece in params:
                optim_mod.add_term_(param, piece(x))

    buckets, alone = _each(items, _buckets(opt, group, items))
    for b in buckets:
        pieces = [(items[i][0]._data, _piece(b, j)) for j, i in enumerate(b.index)]
        update(tuple(b.flats), b.gather(grads), pieces)
        _bump_all(items, b.index, counts)
    for i in alone:
        p, tensors, _ = items[i]
        update(tuple(t._data for t in tensors), grads[i], [(p._data, _whole)])
    _bump_all(items, alone, counts)


def _whole(a: np.ndarray) -> np.ndarray:
    return a


def _piece(b: _Bucket, j: int) -> Callable:
    """The ``j``-th parameter's piece of one of a bucket's flat arrays."""
    lo, hi, shape = b.offsets[j], b.offsets[j + 1], b.shapes[j]
    return lambda flat: flat[lo:hi].reshape(shape)
