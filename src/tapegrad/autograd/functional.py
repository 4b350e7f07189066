"""torch.autograd.functional: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``.

Each is a few calls of ``autograd.grad`` on a fresh graph of the user's function::

    vjp(f, x, v)       v^T J    one backward pass from f(x) with grad_outputs v
    jvp(f, x, v)       J v      the double-backward trick: u -> J^T u is linear in u, so
                                differentiating <J^T u, v> with respect to u gives J v
    jacobian(f, x)     J        one backward pass per output element (vectorize=True: the
                                same, as one batched grad); strategy="forward-mode": one
                                forward-mode pass per input element (autograd/forward_ad.py)
    hessian(f, x)      H        the jacobian of the gradient
    vhp(f, x, v)       v^T H    a backward pass through the gradient
    hvp(f, x, v)       H v      the double-backward trick on the gradient

``strict=True`` raises torch's errors where an output or a derivative does not depend on an
input; otherwise such a derivative is zeros. Results are detached unless ``create_graph``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._creation import zeros_like
from .._tensor import Tensor
from ..ops.shape import stack
from . import forward_ad, grad
from .grad_mode import _state, enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---------------------------------------------------------------------------------------------
# Arguments: tuples of tensors in, the caller's structure out
# ---------------------------------------------------------------------------------------------


def _as_tuple(x: Any, arg_name: str | None = None, fn_name: str | None = None) -> Any:
    """``(was_tuple, tuple_of_tensors)``, with torch's TypeError for anything else; without
    names, just the tuple (lists become tuples)."""
    if arg_name is None and fn_name is None:
        return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)
    was_tuple = isinstance(x, tuple)
    items = x if was_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(el)}."
            )
    return was_tuple, items


def _unpack(res: Any, was_tuple: Any) -> Any:
    """Undo the tuple wrapping: ``was_tuple`` is one flag, or (outer, inner) for nested."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
        return res
    return res if was_tuple else res[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh leaves for the function (or, under create_graph, aliases that keep the inputs'
    history so the result can be differentiated further)."""
    out = []
    for x in inputs:
        if create_graph and x._requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(tensors: Any, create_graph: bool) -> Any:
    """Detach the results unless their graph was asked for (nested tuples too)."""
    if isinstance(tensors[0], Tensor):
        return tensors if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_finish(t, create_graph) for t in tensors)


def _check_v(v: tuple, other: tuple, other_is_tuple: bool) -> None:
    if len(other) != len(v):
        if other_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other, strict=True)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """strict mode: every output (or derivative) must depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode."
        )


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
          create_graph: bool = False, retain_graph: bool | None = None,
          is_grads_batched: bool = False) -> tuple:
    """``autograd.grad`` over the outputs that require grad (all None when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph,
                is_grads_batched=is_grads_batched)


_ZERO_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                stage: str) -> tuple:
    """Zeros for the derivatives that do not exist (strict mode: torch's errors instead)."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MESSAGES[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        out.append(g)
    return tuple(out)


def _checked_v(v: Any, other: tuple, other_is_tuple: bool, create_graph: bool, name: str,
               side: str) -> Any:
    """``v`` as a tuple of tensors matching ``other`` (the function's ``side``: its "input" or
    "output"); None only when that side is a single one-element tensor."""
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, other, other_is_tuple)
    elif len(other) != 1 or other[0].nelement() != 1:
        raise RuntimeError(_V_NONE_MESSAGES[side])
    return v


_V_NONE_MESSAGES = {
    "output": "The vector v can only be None if the user-provided function returns a single "
              "Tensor with a single element.",
    "input": "The vector v can only be None if the input to the user-provided function is a "
             "single Tensor with a single element.",
}


def _last_backward(outputs: tuple, inputs: tuple, v: Any, refs: tuple, strict: bool,
                   create_graph: bool, stage: str) -> tuple:
    """The product's last backward (``v`` through ``outputs`` to ``inputs``), recorded only
    with ``create_graph``; zeros (or strict mode's errors) where there is no derivative."""
    with set_grad_enabled(True if create_graph else _state.grad_mode):
        return _fill_zeros(_grad(outputs, inputs, v, create_graph=create_graph), refs, strict,
                           create_graph, stage)


def _results(outs: tuple, outs_tuple: bool, res: tuple, res_tuple: bool,
             create_graph: bool) -> tuple:
    """``(func(inputs), product)``, each unpacked as its argument was given."""
    return (_unpack(_finish(outs, create_graph), outs_tuple),
            _unpack(_finish(res, create_graph), res_tuple))


def _single_output(outputs: tuple, was_tuple: bool, name: str) -> None:
    if was_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {name} should contain a single "
            "element")


# ---------------------------------------------------------------------------------------------
# vjp, jvp
# ---------------------------------------------------------------------------------------------


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    Example:
        >>> import tapegrad as torch
        >>> torch.autograd.functional.vjp(lambda x: x * x, torch.tensor([1., 2.]),
        ...                               torch.ones(2))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        ins_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prepare(ins, create_graph, need_graph=True)
        outs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outs, "outputs", strict)
        v = _checked_v(v, outs, outs_tuple, create_graph, "vjp", "output")
    res = _last_backward(outs, ins, v, ins, strict, create_graph, "back")
    return _results(outs, outs_tuple, res, ins_tuple, create_graph)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick.

    Example:
        >>> import tapegrad as torch
        >>> torch.autograd.functional.jvp(lambda x: x * x, torch.tensor([1., 2.]),
        ...                               torch.ones(2))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        ins_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare(ins, create_graph, need_graph=True)
        v = _checked_v(v, ins, ins_tuple, create_graph, "jvp", "input")
        outs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outs, "outputs", strict)
        us = tuple(zeros_like(o, requires_grad=True) for o in outs)
        grad_inputs = _grad(outs, ins, us, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    res = _last_backward(grad_inputs, us, v, outs, strict, create_graph, "back_trick")
    return _results(outs, outs_tuple, res, outs_tuple, create_graph)


# ---------------------------------------------------------------------------------------------
# jacobian, hessian
# ---------------------------------------------------------------------------------------------


def _construct_standard_basis_for(tensors: tuple, numels: tuple) -> tuple:
    """The identity matrix of size ``sum(numels)``, split by columns into one block per
    tensor (each in that tensor's dtype): the vectors a batched Jacobian is computed on."""
    total = sum(numels)
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, numels, strict=True))
    start = 0
    for chunk, n in zip(chunks, numels, strict=True):
        chunk.diagonal(start).fill_(1)
        start -= n
    return chunks


def _jacfwd(func: Callable, inputs: Any, strict: bool, vectorize: bool) -> Any:
    """The Jacobian by forward mode: one dual-number pass per input element."""
    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            'are not supported together (yet). Please either set `strict=False` or '
            '`strategy="reverse-mode"`.'
        )
    ins_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
            "implemented for `vectorize=True`."
        )
    numels = tuple(x.numel() for x in ins)
    basis = _construct_standard_basis_for(ins, numels)
    columns: list[tuple] = []
    primals: list = []
    outs_tuple = False
    for k in range(sum(numels)):
        with forward_ad.dual_level():
            duals = tuple(forward_ad.make_dual(x, b[k].view_as(x))
                          for x, b in zip(ins, basis, strict=True))
            out = func(*duals)
            outs_tuple = isinstance(out, tuple)
            outs = _as_tuple(out)
            tangents = []
            primals = []
            for o in outs:
                p, t = forward_ad.unpack_dual(o)
                primals.append(p)
                tangents.append(t if t is not None else zeros_like(p))
        columns.append(tuple(tangents))
    result = []  # (lists, not tuples: what torch's forward-mode jacobian returns)
    for i, o in enumerate(primals):
        per_input = []
        col = stack([c[i] for c in columns], 0)  # (sum(numels), *out.shape)
        for jac, x in zip(col.split(numels, dim=0), ins, strict=True):
            per_input.append(jac.permute(*range(1, jac.ndim), 0).reshape(
                (*o.shape, *x.shape)))
        result.append(per_input)
    return _unpack(result, (outs_tuple, ins_tuple))


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``, shaped ``output.shape + input.shape`` (nested
    tuples for several outputs or inputs).

    Example:
        >>> import tapegrad as torch
        >>> torch.autograd.functional.jacobian(lambda x: x * x, torch.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        ins_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph, need_graph=True)
        outs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function",
                                     "jacobian")
        _check_requires_grad(outs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`."
                )
            numels = tuple(o.numel() for o in outs)
            basis = _construct_standard_basis_for(outs, numels)
            flat = tuple(o.reshape(-1) for o in outs)
            rows = list(_grad(flat, ins, basis, create_graph=create_graph,
                              is_grads_batched=True))
            for j, r in enumerate(rows):
                if r is None:
                    rows[j] = zeros_like(ins[j]).expand((sum(numels),) + tuple(ins[j].shape))
            per_input = []
            for r, x in zip(rows, ins, strict=True):
                per_input.append([jac.view(o.shape + x.shape)
                                  for jac, o in zip(r.split(numels, dim=0), outs, strict=True)])
            jac = tuple(zip(*per_input, strict=True))
            return _unpack(_finish(jac, create_graph), (outs_tuple, ins_tuple))
        result = []
        for i, out in enumerate(outs):
            cols: list[list] = [[] for _ in ins]
            flat_out = out.reshape(-1)
            for k in range(out.nelement()):
                gs = _grad((flat_out[k],), ins, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(gs, ins, strict=True)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True."
                            )
                        cols[j].append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode."
                            )
                        cols[j].append(zeros_like(x))
            result.append(tuple(
                stack(c, 0).view(out.size() + ins[j].size()) for j, c in enumerate(cols)))
        return _unpack(_finish(tuple(result), create_graph), (outs_tuple, ins_tuple))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a function with a single-element output: the Jacobian of its gradient.

    Example:
        >>> import tapegrad as torch
        >>> torch.autograd.functional.hessian(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    ins_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*xs: Any) -> Any:
        out = func(*xs)
        out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        _single_output(t_out, out_tuple, "hessian")
        return out.squeeze()

    def jac_func(*xs: Any) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(t.requires_grad_(True) for t in xs)
        jac = jacobian(single_output, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (ins_tuple, ins_tuple))


# ---------------------------------------------------------------------------------------------
# vhp, hvp
# ---------------------------------------------------------------------------------------------


def _gradient_of_scalar(func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool,
                        name: str) -> tuple:
    """Shared start of vhp/hvp: the checked inputs, v, output and gradient."""
    ins_tuple, ins = _as_tuple(inputs, "inputs", name)
    ins = _prepare(ins, create_graph, need_graph=True)
    v = _checked_v(v, ins, ins_tuple, create_graph, name, "input")
    outs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", name)
    _check_requires_grad(outs, "outputs", strict)
    _single_output(outs, outs_tuple, name)
    jac = _grad(outs, ins, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return ins_tuple, ins, v, outs_tuple, outs, jac


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)`` for a function with a single-element output.

    Example:
        >>> import tapegrad as torch
        >>> torch.autograd.functional.vhp(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]),
        ...                               torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        ins_tuple, ins, v, outs_tuple, outs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "vhp")
    res = _last_backward(jac, ins, v, ins, strict, create_graph, "double_back")
    return _results(outs, outs_tuple, res, ins_tuple, create_graph)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), H v)`` for a function with a single-element output, by the
    double-backward trick.

    Example:
        >>> import tapegrad as torch
        >>> torch.autograd.functional.hvp(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]),
        ...                               torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        ins_tuple, ins, v, outs_tuple, outs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(x, requires_grad=True) for x in ins)
        double_back = _grad(jac, ins, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    res = _last_backward(double_back, grad_jac, v, ins, strict, create_graph, "double_back_trick")
    return _results(outs, outs_tuple, res, ins_tuple, create_graph)
