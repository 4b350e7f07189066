"""``tapegrad.func``: function transforms, ``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
``hessian``, ``vmap`` and ``functional_call``, as ``torch.func`` has them.

Each transform is built on the tape the library already has, so they compose:

    grad(f)(x)      run f on a fresh alias of x that requires grad, then autograd.grad
                    (create_graph=True, so an enclosing transform can differentiate again)
    vjp(f, x)       the same, with the cotangent given later
    jvp(f, x, v)    forward mode: f on dual tensors (autograd.forward_ad); inside another
                    jvp, the double-vjp trick on the tape (d/du <J^T u, v> = J v)
    jacrev / jacfwd one vjp per output element / one jvp per input element, stacked
    hessian(f)      jacfwd(jacrev(f))
    vmap(f)         f run once per element of the mapped dimension, the results stacked:
                    the same values as torch's vectorized vmap (random ops draw per element,
                    like ``randomness='different'``), in a Python loop

Example:
    >>> import tapegrad as torch
    >>> from tapegrad.func import grad
    >>> grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd import grad as autograd_grad
from ..autograd.function import TRANSFORMS
from ..autograd.grad_mode import _state, enable_grad
from ..ops.shape import stack

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "vjp", "vmap"]


class _Nesting:
    depth = 0  # how many transforms are running: inner ones keep their graphs for outer ones


# ---------------------------------------------------------------------------------------------
# Trees of tensors (tuples, lists, dicts, and leaves)
# ---------------------------------------------------------------------------------------------


def _flatten(tree: Any) -> tuple[list, Any]:
    if isinstance(tree, (tuple, list)):
        leaves: list = []
        specs = []
        for x in tree:
            sub, spec = _flatten(x)
            leaves += sub
            specs.append((len(sub), spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, keyed = [], []
        for k, x in tree.items():
            sub, spec = _flatten(x)
            leaves += sub
            keyed.append((k, len(sub), spec))
        return leaves, (dict, keyed)
    return [tree], None


def _unflatten(leaves: Sequence, spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind is dict:
        out, i = {}, 0
        for k, n, sub in specs:
            out[k] = _unflatten(leaves[i:i + n], sub)
            i += n
        return out
    items, i = [], 0
    for n, sub in specs:
        items.append(_unflatten(leaves[i:i + n], sub))
        i += n
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # a namedtuple


def _map(fn: Callable, tree: Any) -> Any:
    leaves, spec = _flatten(tree)
    return _unflatten([fn(x) for x in leaves], spec)


def _with_fresh(args: tuple, nums: tuple) -> list:
    """``args`` with the differentiated ones (positions ``nums``) replaced by fresh aliases
    (``_fresh``) of their tensors."""
    new_args = list(args)
    for a in nums:
        new_args[a] = _map(_fresh, args[a])
    return new_args


def _call_on_fresh(func: Callable, args: tuple, kwargs: dict, nums: tuple, has_aux: bool,
                   name: str) -> tuple:
    """Reverse mode's call, inside a transform: ``func`` on ``args`` with fresh aliases at
    positions ``nums``. Returns its output and aux, each differentiated argument's
    (leaves, spec) and all their leaves in order (what the gradients are taken with respect
    to)."""
    new_args = _with_fresh(args, nums)
    out, aux = _split_aux(func(*new_args, **kwargs), has_aux, name)
    ins = [_flatten(new_args[a]) for a in nums]
    return out, aux, ins, [x for sub, _ in ins for x in sub]


def _fresh(t: Any) -> Any:
    """What a transform differentiates with respect to: an alias of ``t`` requiring grad (a
    view when ``t`` has history of its own, so that outer transforms see through it)."""
    if not isinstance(t, Tensor):
        return t
    if t._requires_grad:
        return t.view_as(t)
    fresh = t.detach().requires_grad_(True)
    if t._fw_grad is not None:  # a dual tensor keeps its tangent (forward over reverse)
        forward_ad._set_tangent(fresh, t._fw_grad)
    return fresh


def _zeros(t: Tensor) -> Tensor:
    return Tensor._make(np.zeros(t._data.shape, t._data.dtype))


def _needs_graph(*trees: Any) -> bool:
    """Should the results keep a graph? Inside another transform, or when an input has one."""
    if _Nesting.depth > 0:
        return True
    return _state.enabled and any(
        isinstance(x, Tensor) and (x._requires_grad or x._fw_grad is not None)
        for tree in trees for x in _flatten(tree)[0])


def _argnums_tuple(argnums: Any, n_args: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(
                f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(
                f"Got argnums={a}, but only {n_args} positional inputs")
    return tuple(a % n_args for a in nums)


def _split_aux(out: Any, has_aux: bool, name: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{name}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
            "if has_aux is True")
    return out


def _detached(tree: Any, keep: bool) -> Any:
    if keep:
        return tree
    return _map(lambda x: x.detach() if isinstance(x, Tensor) else x, tree)


class _transform:
    """Count nesting while a transform runs (and run it with grad mode on)."""

    def __enter__(self) -> None:
        _Nesting.depth += 1
        TRANSFORMS["active"] += 1  # custom Functions inside must support transforms
        self.grad = enable_grad()
        self.grad.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.grad.__exit__(*exc)
        TRANSFORMS["active"] -= 1
        _Nesting.depth -= 1


# ---------------------------------------------------------------------------------------------
# Reverse mode
# ---------------------------------------------------------------------------------------------


def grad_and_value(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """``(gradient, value)`` of a scalar-valued ``func`` with respect to ``args[argnums]``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args))
        keep = _needs_graph(args, kwargs)
        with _transform():
            out, aux, ins, flat = _call_on_fresh(func, args, kwargs, nums, has_aux,
                                                 "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}")
            if out.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {out.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?")
            gs: Any
            if out._requires_grad:
                gs = autograd_grad(out, flat, create_graph=True, allow_unused=True)
            else:
                gs = (None,) * len(flat)
        gs = [_zeros(x) if g is None else g for g, x in zip(gs, flat, strict=True)]
        grads, i = [], 0
        for sub, spec in ins:
            grads.append(_unflatten(gs[i:i + len(sub)], spec))
            i += len(sub)
        result = grads[0] if isinstance(argnums, int) else tuple(grads)
        result = _detached(result, keep)
        value = _detached(out, keep)
        if has_aux:
            return result, (value, _detached(aux, keep))
        return result, value

    return wrapper


def grad(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar-valued ``func`` with respect to ``args[argnums]``.

    Example:
        >>> import tapegrad as torch
        >>> torch.func.grad(torch.sin)(torch.tensor(0.0))
        tensor(1.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = inner(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn[, aux])``; ``vjp_fn(cotangents)`` gives ``J^T cotangents``,
    one entry per primal."""
    keep = _needs_graph(primals)
    with _transform():
        fresh = [_map(_fresh, p) for p in primals]
        out, aux = _split_aux(func(*fresh), has_aux, "vjp")
    flat_in, in_spec = _flatten(fresh)
    flat_out, out_spec = _flatten(out)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"vjp(f, *primals): Expected f(*primals) to return only tensors, got "
                f"unsupported type {type(o)}")

    def vjp_fn(*cotangents: Any) -> tuple:
        cts = cotangents[0] if len(cotangents) == 1 else cotangents
        flat_ct, ct_spec = _flatten(cts)
        if len(flat_ct) != len(flat_out):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {cts}, primal output: {out}")
        inner_keep = keep or _needs_graph(cts)
        pairs = [(o, c) for o, c in zip(flat_out, flat_ct, strict=True) if o._requires_grad]
        gs: Any
        with _transform():
            if pairs:
                gs = autograd_grad([o for o, _ in pairs], flat_in, [c for _, c in pairs],
                                   retain_graph=True, create_graph=True, allow_unused=True)
            else:
                gs = (None,) * len(flat_in)
        gs = [_zeros(x) if g is None else g for g, x in zip(gs, flat_in, strict=True)]
        return _detached(tuple(_unflatten(gs, in_spec)), inner_keep)

    result = _detached(out, keep)
    if has_aux:
        return result, vjp_fn, _detached(aux, keep)
    return result, vjp_fn


def _into_argnums(jac: list, pieces: Any, argnums: Any) -> Any:
    """One output's Jacobians, one per input leaf in order, back into the structure of the
    differentiated arguments: ``pieces`` are each argument's (leaves, spec); one argument (an
    int ``argnums``) gives its structure, several a tuple of them."""
    parts, i = [], 0
    for sub, spec in pieces:
        parts.append(_unflatten(jac[i:i + len(sub)], spec))
        i += len(sub)
    return parts[0] if isinstance(argnums, int) else tuple(parts)


def _jacobian_result(per_out: list, out_spec: Any, keep: bool, has_aux: bool, aux: Any) -> Any:
    """jacrev's and jacfwd's result: the Jacobians in the output's structure, with ``aux``."""
    result = _detached(_unflatten(per_out, out_spec), keep)
    if has_aux:
        return result, _detached(aux, keep)
    return result


def jacrev(func: Callable, argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` by reverse mode: one vjp per output element."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args))
        keep = _needs_graph(args, kwargs)
        with _transform():
            out, aux, ins, flat_in = _call_on_fresh(func, args, kwargs, nums, has_aux, "jacrev")
            flat_out, out_spec = _flatten(out)
            per_out = []
            for o in flat_out:
                rows: list[list] = [[] for _ in flat_in]
                flat_o = o.reshape(-1)
                for k in range(flat_o.numel()):
                    if o._requires_grad:
                        gs = autograd_grad(flat_o[k], flat_in, retain_graph=True,
                                           create_graph=True, allow_unused=True)
                    else:
                        gs = (None,) * len(flat_in)
                    for j, (g, x) in enumerate(zip(gs, flat_in, strict=True)):
                        rows[j].append(_zeros(x) if g is None else g)
                jac = []
                for j, x in enumerate(flat_in):
                    shape = tuple(o.shape) + tuple(x.shape)
                    jac.append(stack(rows[j]).reshape(shape) if rows[j] else
                               Tensor._make(np.zeros(shape, x._data.dtype)))
                per_out.append(_into_argnums(jac, ins, argnums))
        return _jacobian_result(per_out, out_spec, keep, has_aux, aux)

    return wrapper


# ---------------------------------------------------------------------------------------------
# Forward mode
# ---------------------------------------------------------------------------------------------


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """``(func(*primals), J tangents[, aux])`` by forward mode."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be "
            "valid to call f(*primals).")
    flat_p, p_spec = _flatten(primals)
    flat_t, t_spec = _flatten(tangents if isinstance(tangents, tuple) else (tangents,))
    if len(flat_p) != len(flat_t) or p_spec != t_spec:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must "
            f"be. Got primals with structure {p_spec} and tangents with structure {t_spec}")
    for p, t in zip(flat_p, flat_t, strict=True):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to have the same "
                f"shape. Got primal of shape {tuple(p.shape)} and tangent of shape "
                f"{tuple(t.shape)}")
    keep = _needs_graph(primals, tangents)
    if forward_ad._Levels.level is None:
        result = _jvp_dual(func, flat_p, flat_t, p_spec, has_aux)
    else:  # already inside forward mode: reverse mode on the tape gives J v
        result = _jvp_double_vjp(func, flat_p, flat_t, p_spec, has_aux)
    return tuple(_detached(r, keep) for r in result)


def _jvp_dual(func: Callable, flat_p: list, flat_t: list, p_spec: Any, has_aux: bool) -> tuple:
    with _transform(), forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_p, flat_t, strict=True)]
        out, aux = _split_aux(func(*_unflatten(duals, p_spec)), has_aux, "jvp")
        flat_o, o_spec = _flatten(out)
        values, tans = [], []
        for o in flat_o:
            primal, tangent = forward_ad.unpack_dual(o)
            values.append(primal)
            tans.append(_zeros(o) if tangent is None else tangent)
        aux_plain = _map(lambda x: forward_ad.unpack_dual(x).primal if isinstance(x, Tensor)
                         else x, aux) if has_aux else None
    result = (_unflatten(values, o_spec), _unflatten(tans, o_spec))
    return result + (aux_plain,) if has_aux else result


def _jvp_double_vjp(func: Callable, flat_p: list, flat_t: list, p_spec: Any,
                    has_aux: bool) -> tuple:
    with _transform():
        fresh = [_fresh(p) for p in flat_p]
        out, aux = _split_aux(func(*_unflatten(fresh, p_spec)), has_aux, "jvp")
        flat_o, o_spec = _flatten(out)
        diff = [o for o in flat_o if o._requires_grad]
        us = [Tensor._make(np.zeros(o._data.shape, o._data.dtype), requires_grad=True)
              for o in diff]
        gs = autograd_grad(diff, fresh, us, create_graph=True, allow_unused=True) if diff \
            else (None,) * len(fresh)
        pairs = [(g, t) for g, t in zip(gs, flat_t, strict=True) if g is not None]
        jv = autograd_grad([g for g, _ in pairs], us, [t for _, t in pairs], create_graph=True,
                           allow_unused=True) if pairs and us else (None,) * len(us)
        it = iter(jv)
        tans = [(next(it) if o._requires_grad else None) for o in flat_o]
        tans = [_zeros(o) if t is None else t for t, o in zip(tans, flat_o, strict=True)]
    result = (_unflatten(flat_o, o_spec), _unflatten(tans, o_spec))
    return result + (aux,) if has_aux else result


def jacfwd(func: Callable, argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` by forward mode: one jvp per input element."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args))
        keep = _needs_graph(args, kwargs)
        flat_in: list = []
        specs = []
        for a in nums:
            sub, spec = _flatten(args[a])
            flat_in.append(sub)
            specs.append(spec)
        leaves = [x for sub in flat_in for x in sub]

        def f_of_leaves(*xs: Any) -> Any:
            new_args = list(args)
            i = 0
            for a, sub, spec in zip(nums, flat_in, specs, strict=True):
                new_args[a] = _unflatten(xs[i:i + len(sub)], spec)
                i += len(sub)
            return func(*new_args, **kwargs)

        columns: list[list] = [[] for _ in leaves]  # per input leaf: one jvp per element
        out = aux = None
        for j, x in enumerate(leaves):
            for k in range(x.numel()):
                basis = np.zeros(x._data.size, x._data.dtype)
                basis[k] = 1
                ts = tuple(Tensor._make(basis.reshape(x._data.shape)) if m == j else _zeros(y)
                           for m, y in enumerate(leaves))
                res = jvp(f_of_leaves, tuple(leaves), ts, has_aux=has_aux)
                out, tan = res[0], res[1]
                if has_aux:
                    aux = res[2]
                columns[j].append(tan)
        if out is None:  # no input elements: evaluate once for the output's shape
            out = f_of_leaves(*leaves)
            if has_aux:
                out, aux = out
        flat_o, o_spec = _flatten(out)
        per_out = []
        for oi, o in enumerate(flat_o):
            jac = []
            for j, x in enumerate(leaves):
                shape = tuple(o.shape) + tuple(x.shape)
                cols = [_flatten(c)[0][oi] for c in columns[j]]
                jac.append(stack(cols, -1).reshape(shape) if cols else
                           Tensor._make(np.zeros(shape, o._data.dtype)))
            per_out.append(_into_argnums(jac, zip(flat_in, specs, strict=True), argnums))
        return _jacobian_result(per_out, o_spec, keep, has_aux, aux)

    return wrapper


def hessian(func: Callable, argnums: Any = 0) -> Callable:
    """The Hessian of a scalar-valued ``func``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------------------------


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Map ``func`` over a dimension of its inputs.

    tapegrad runs ``func`` once per element of the mapped dimension and stacks the results
    (along ``out_dims``): the values torch's vectorized vmap gives, computed in a loop. Random
    ops inside draw afresh for each element (torch's ``randomness='different'``).
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(
                f"vmap(func, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
                f"or a (potentially nested) tuple matching the structure of inputs, got: "
                f"{type(in_dims)}.")
        if len(dims) != len(args):
            raise ValueError(
                f"vmap(func, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
                f"the structure of `inputs`. in_dims has structure {dims} but inputs has "
                f"structure {args}.")
        mapped: list = []  # (leaf position, dim) per mapped leaf
        flat_args, arg_spec = _flatten(list(args))
        flat_dims: list = []
        for a, d in zip(args, dims, strict=True):
            n = len(_flatten(a)[0])
            if isinstance(d, (tuple, list, dict)):
                sub = _flatten(d)[0]
                if len(sub) != n:
                    raise ValueError(
                        f"vmap(func, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                        "compatible with the structure of `inputs`.")
                flat_dims += sub
            else:
                flat_dims += [d] * n
        sizes = []
        for i, (x, d) in enumerate(zip(flat_args, flat_dims, strict=True)):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(
                    f"vmap(func, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                    f"input but the input is of type {type(x)}. We cannot vmap over non-Tensor "
                    "arguments, please use None as the respective in_dim")
            if not -x.dim() <= d < max(x.dim(), 1) or x.dim() == 0:
                raise ValueError(
                    f"vmap(func, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                    f"input, but that input is a Tensor of dimensionality {x.dim()} so expected "
                    f"in_dim to satisfy -{x.dim()} <= in_dim < {x.dim()}.")
            mapped.append((i, d % x.dim()))
            sizes.append(x.shape[d])
        if not mapped:
            raise ValueError(
                f"vmap(func, in_dims={in_dims}, ...)(<inputs>): at least one input must be a "
                "Tensor mapped over (in_dims must not be all None)")
        if len(set(sizes)) != 1:
            raise ValueError(
                f"vmap(func, in_dims={in_dims}, ...)(<inputs>): Expected all tensors to have "
                "the same size in the mapped dimension, got sizes "
                f"{sizes} for the mapped dimension")
        results = []
        TRANSFORMS["active"] += 1
        TRANSFORMS["vmap"] += 1
        try:
            for b in range(sizes[0]):
                leaves = list(flat_args)
                for i, d in mapped:
                    leaves[i] = leaves[i].select(d, b)
                results.append(func(*_unflatten(leaves, arg_spec), **kwargs))
        finally:
            TRANSFORMS["active"] -= 1
            TRANSFORMS["vmap"] -= 1
        flat_rs = [_flatten(r) for r in results]
        o_spec = flat_rs[0][1]
        n_out = len(flat_rs[0][0])
        od = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * n_out
        if len(od) != n_out:
            od = _flatten(out_dims)[0]
        outs = []
        for k in range(n_out):
            items = [fr[0][k] for fr in flat_rs]
            if od[k] is None:
                outs.append(items[0])
                continue
            items = [x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))
                     for x in items]
            outs.append(stack(items, od[k]))
        return _unflatten(outs, o_spec)

    return wrapper


# ---------------------------------------------------------------------------------------------
# functional_call
# ---------------------------------------------------------------------------------------------


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with its parameters and buffers replaced by the given tensors."""
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        merged = {}
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, dict):
                raise ValueError(
                    "Expected all elements of parameter_and_buffer_dicts to be dictionaries")
            for k, v in d.items():
                if k in merged:
                    raise ValueError(
                        f"{k} appeared in multiple dictionaries; behavior of functional call is "
                        "ambiguous")
                merged[k] = v
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}

    owned = dict(module.named_parameters(remove_duplicate=False))
    owned.update(dict(module.named_buffers(remove_duplicate=False)))
    if tie_weights:  # a tied name follows its twin's replacement
        by_id: dict[int, list[str]] = {}
        for name, t in owned.items():
            by_id.setdefault(id(t), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in merged]
            if len(given) > 1 and any(merged[n] is not merged[given[0]] for n in given):
                raise ValueError(
                    f"functional_call got multiple values for keys {given}, which are tied. "
                    "Consider using tie_weights=False")
            if given:
                for n in names:
                    merged.setdefault(n, merged[given[0]])
    if strict:
        missing = [k for k in owned if k not in merged]
        unexpected = [k for k in merged if k not in owned]
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                msg.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(
                    type(module).__name__, "\n\t".join(msg)))

    saved = []
    try:
        for name, value in merged.items():
            *path, attr = name.split(".")
            owner = module
            for p in path:
                owner = getattr(owner, p)
            d = owner.__dict__
            if attr in d.get("_parameters", {}):
                saved.append((d["_parameters"], attr, d["_parameters"][attr]))
                d["_parameters"][attr] = value
            elif attr in d.get("_buffers", {}):
                saved.append((d["_buffers"], attr, d["_buffers"][attr]))
                d["_buffers"][attr] = value
            else:
                saved.append((d, attr, d.get(attr, _MISSING)))
                d[attr] = value
        return module(*args, **kwargs)
    finally:
        for store, attr, old in reversed(saved):
            if old is _MISSING:
                store.pop(attr, None)
            else:
                store[attr] = old


_MISSING = object()
