"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp, built on ``autograd.grad``.

A Jacobian is assembled row by row: one backward pass per output element. ``jvp`` uses the
double-backward trick: ``v -> J^T v`` is linear in ``v``, so differentiating ``<J^T u, v>``
w.r.t. ``u`` gives ``J v``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor


def _tuple(x: Any) -> tuple[tuple, bool]:
    if isinstance(x, Tensor):
        return (x,), True
    return tuple(x), False


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    return tuple(
        (x if create_graph and x._requires_grad else x.detach()).requires_grad_(True)
        for x in inputs
    )


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``."""
    from . import grad
    from .grad_mode import enable_grad

    ins, single_in = _tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, create_graph)
        outs = func(*ins)
        o, single_out = _tuple(outs)
        vs = (None,) * len(o) if v is None else _tuple(v)[0]
        grads = grad(o, ins, vs, create_graph=create_graph, allow_unused=True)
    grads = tuple(g if g is not None else Tensor._make(np.zeros_like(x._data))
                  for g, x in zip(grads, ins, strict=True))
    outs_r = tuple(t if create_graph else t.detach() for t in o)
    return (outs_r[0] if single_out else outs_r), (grads[0] if single_in else grads)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), J v)`` by the double-backward trick."""
    from . import grad
    from .grad_mode import enable_grad

    ins, single_in = _tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, True)
        outs = func(*ins)
        o, single_out = _tuple(outs)
        us = tuple(Tensor._make(np.zeros_like(t._data), requires_grad=True) for t in o)
        gi = grad(o, ins, us, create_graph=True, allow_unused=True)
        vs = (Tensor._make(np.ones_like(ins[0]._data)),) if v is None else _tuple(v)[0]
        pairs = [(g, w) for g, w in zip(gi, vs, strict=True) if g is not None]
        jv = grad([g for g, _ in pairs], us, [w for _, w in pairs], create_graph=create_graph,
                  allow_unused=True)
    jv = tuple(j if j is not None else Tensor._make(np.zeros_like(t._data))
               for j, t in zip(jv, o, strict=True))
    outs_r = tuple(t if create_graph else t.detach() for t in o)
    return (outs_r[0] if single_out else outs_r), (jv[0] if single_out else jv)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``, shaped ``output.shape + input.shape``."""
    from . import grad
    from .grad_mode import enable_grad

    ins, single_in = _tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, create_graph)
        outs = func(*ins)
        o, single_out = _tuple(outs)
        result = []
        for out in o:
            rows: list[list] = [[] for _ in ins]
            flat = out.reshape(-1)
            for k in range(flat.numel()):
                gs = grad(flat[k], ins, retain_graph=True, create_graph=create_graph,
                          allow_unused=True) if out._requires_grad else (None,) * len(ins)
                for j, (g, x) in enumerate(zip(gs, ins, strict=True)):
                    rows[j].append(g if g is not None else Tensor._make(np.zeros_like(x._data)))
            per_input = []
            for j, x in enumerate(ins):
                from ..ops.shape import stack

                if rows[j]:
                    stacked = stack(rows[j], 0).reshape(tuple(out.shape) + tuple(x.shape))
                else:
                    stacked = Tensor._make(np.zeros(tuple(out.shape) + tuple(x.shape),
                                                    dtype=x._data.dtype))
                per_input.append(stacked if create_graph else stacked.detach())
            result.append(per_input[0] if single_in else tuple(per_input))
    return result[0] if single_out else tuple(result)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    from . import grad

    ins, single_in = _tuple(inputs)

    def gradient(*xs: Any) -> Any:
        out = func(*xs)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        gs = tuple(g if g is not None else x * 0 for g, x in zip(gs, xs, strict=True))
        return gs[0] if single_in else gs

    return jacobian(gradient, ins[0] if single_in else ins, create_graph=create_graph)


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)``."""
    from . import grad
    from .grad_mode import enable_grad

    ins, single_in = _tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, True)
        out = func(*ins)
        gs = grad(out, ins, create_graph=True, allow_unused=True)
        vs = _tuple(v)[0] if v is not None else tuple(
            Tensor._make(np.ones_like(x._data)) for x in ins)
        pairs = [(g, w) for g, w in zip(gs, vs, strict=True) if g is not None]
        hv = grad([g for g, _ in pairs], ins, [w for _, w in pairs], create_graph=create_graph,
                  allow_unused=True)
    hv = tuple(h if h is not None else Tensor._make(np.zeros_like(x._data))
               for h, x in zip(hv, ins, strict=True))
    o = out if create_graph else out.detach()
    return o, (hv[0] if single_in else hv)


hvp = vhp  # the Hessian of a scalar function is symmetric
