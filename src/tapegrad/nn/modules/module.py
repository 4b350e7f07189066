"""``nn.Module``: the base class of layers and models.

A Module keeps what it owns in three ordered dicts, filled by plain attribute assignment::

    self.weight = Parameter(...)   ->  self._parameters["weight"]
    self.fc = Linear(2, 3)         ->  self._modules["fc"]
    self.register_buffer("running_mean", torch.zeros(3))  ->  self._buffers["running_mean"]

``__getattr__`` looks names up in those dicts (ordinary attributes never reach it), and every
traversal (``named_parameters``, ``state_dict``, ``train``, ``_apply``, ``__repr__``) walks them
in registration order, which is what gives torch's key order.

Calling a module, ``module(x)``::

    forward pre-hooks  ->  [backward hooks: inputs through BackwardHookFunction]
      ->  forward(x)  ->  forward hooks  ->  [outputs through BackwardHookFunction]

With no hooks registered anywhere, ``__call__`` is just ``self.forward(*args, **kwargs)``.
During backward the output-side node runs the backward pre-hooks (they see grad_output), the
input-side node runs the full backward hooks (grad_input, grad_output).
"""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ... import _announce, _device, _dtype
from ..._creation import empty_like
from ..._tensor import Tensor, device
from ..._torch_functions import typename
from ...autograd.function import Function
from ...autograd.grad_mode import _state, no_grad
from ..parameter import Buffer, Parameter

__all__ = [
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_backward_hook",
    "register_module_full_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
    "Module",
    "RemovableHandle",
]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """What the ``register_*_hook`` methods return: ``handle.remove()`` takes the hook out.

    ``extra_dict`` lists dicts keyed by the same id (e.g. the "with_kwargs" flags) that are
    cleaned up together with the hook.
    """

    next_id = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extra: tuple[Any, ...]
        if extra_dict is None:
            extra = ()
        elif isinstance(extra_dict, list):
            extra = tuple(extra_dict)
        else:
            extra = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _add_hook(hooks: dict[int, Callable], hook: Callable, *, prepend: bool = False,
              extra_dict: Any = None) -> RemovableHandle:
    """Store ``hook`` in the ordered dict ``hooks`` under a new handle's id (first when
    ``prepend``) and return the handle; ``extra_dict`` as for :class:`RemovableHandle`."""
    handle = RemovableHandle(hooks, extra_dict=extra_dict)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
    return handle


def _args_after_pre_hook(result: Any, args: Any, kwargs: Any, hook_kind: str) -> tuple[Any, Any]:
    """The ``(args, kwargs)`` a pre-hook that takes kwargs leaves: the ones it was given when it
    returns None, the pair it returns otherwise; anything else is torch's error, which names the
    hook as ``hook_kind`` (a module's forward pre-hook, an optimizer's step)."""
    if result is None:
        return args, kwargs
    if isinstance(result, tuple) and len(result) == 2:
        return result
    raise RuntimeError(f"{hook_kind} must return None or a tuple of (new_args, new_kwargs), but "
                       f"got {result}.")


class _WrappedHook:
    """A hook that gets the module (held weakly) as its first argument."""

    def __init__(self, hook: Callable, module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)


def _not_installed(module: Module, *args: Any, **kwargs: Any) -> None:
    raise RuntimeError("Module.compile needs tapegrad._compile, which import tapegrad loads")


# Module.compile's work: torch.compile's checks, then the module's calls captured and replayed.
# That is tapegrad._compile's and tapegrad.compiler's, which sit above this module, so
# tapegrad._compile hands it over with ``_register_compile_in_place`` when it is imported.
_compile_in_place: Callable[..., None] = _not_installed


def _register_compile_in_place(compile_in_place: Callable[..., None]) -> None:
    """Install the function that ``Module.compile`` calls: ``(module, *args, **kwargs)``."""
    global _compile_in_place
    _compile_in_place = compile_in_place


# Hooks common to every module (debugging / profiling), run before the module's own.
_global_buffer_registration_hooks: dict[int, Callable] = OrderedDict()
_global_module_registration_hooks: dict[int, Callable] = OrderedDict()
_global_parameter_registration_hooks: dict[int, Callable] = OrderedDict()
_global_backward_pre_hooks: dict[int, Callable] = OrderedDict()
_global_backward_hooks: dict[int, Callable] = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_global_forward_pre_hooks: dict[int, Callable] = OrderedDict()
_global_forward_hooks: dict[int, Callable] = OrderedDict()
_global_forward_hooks_always_called: dict[int, bool] = OrderedDict()
_global_forward_hooks_with_kwargs: dict[int, bool] = OrderedDict()


def _any_global_hooks() -> bool:
    return bool(_global_backward_pre_hooks or _global_backward_hooks
                or _global_forward_hooks or _global_forward_pre_hooks)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, buffer)`` runs on every ``register_buffer``; may return a new one."""
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, submodule)`` runs whenever a submodule is registered."""
    return _add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, param)`` runs on every ``register_parameter``."""
    return _add_hook(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """A forward pre-hook common to all modules."""
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """A forward hook common to all modules."""
    handle = _add_hook(
        _global_forward_hooks, hook,
        extra_dict=[_global_forward_hooks_always_called, _global_forward_hooks_with_kwargs],
    )
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _mixed_backward_hooks_error(where: str) -> RuntimeError:
    """torch's error for registering both non-full and full backward hooks ``where``."""
    return RuntimeError(
        f"Cannot use both regular backward hooks and full backward hooks {where}. "
        "Please use only one of them."
    )


def _backward_hook_kind(current: bool | None, full: bool, where: str) -> bool:
    """The kind of the backward hooks ``where`` once a hook of kind ``full`` (full or not) is
    added to those of kind ``current`` (None: none yet); torch allows one kind in one place."""
    if current is (not full):
        raise _mixed_backward_hooks_error(where)
    return full


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """A (non-full, deprecated) backward hook common to all modules."""
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(_global_is_full_backward_hook, False,
                                                        "as a global Module hook")
    return _add_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """A backward pre-hook common to all modules."""
    return _add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """A full backward hook common to all modules."""
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(_global_is_full_backward_hook, True,
                                                        "as a global Module hook")
    return _add_hook(_global_backward_hooks, hook)


def _check_new_name(module: Module, kind: str, name: Any, registered: dict) -> None:
    """torch's checks of the ``name`` of a new buffer or parameter (``kind``) of ``module``:
    a string, without ".", not empty, and not the name of another attribute."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in registered:
        raise KeyError(f"attribute '{name}' already exists")


def _run_registration_hooks(hooks: dict[int, Callable], module: Module, name: str,
                            value: Any) -> Any:
    """``value`` after the global registration ``hooks``: each may return a replacement."""
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _attribute_at(module: Module, target: str) -> tuple[Module, str, Any]:
    """(owner, name, value) of the attribute at the dotted path ``target`` below ``module``,
    with torch's error when the owner has no such attribute."""
    module_path, _, name = target.rpartition(".")
    owner = module.get_submodule(module_path)
    if not hasattr(owner, name):
        raise AttributeError(owner._get_name() + " has no attribute `" + name + "`")
    return owner, name, getattr(owner, name)


def _call_silenced(call: Callable[[], Any], result: Any, what: str) -> Any:
    """``result`` after the always-called forward hook ``call`` while forward is raising: the
    hook may replace it; an exception of the hook only warns (``what`` names the hook)."""
    try:
        out = call()
        if out is not None:
            result = out
    except Exception as e:  # noqa: BLE001
        warnings.warn(
            f"{what} with ``always_call=True`` raised an exception that was silenced as another "
            f"error was raised in forward: {e}",
            stacklevel=3,
        )
    return result


def _tensor_tuple_or_warn(value: Any, message: str) -> tuple | None:
    """``value`` (a module's output or input) as a tuple of Tensors; None, after ``message``
    (torch's FutureWarning for non-full backward hooks), when it is neither a Tensor nor a
    tuple of them."""
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value):
        return value
    warnings.warn(message, FutureWarning, stacklevel=3)
    return None


def _typename(obj: Any) -> str:
    """``torch.typename``: 'torch.FloatTensor' for tensors, 'module.QualName' otherwise."""
    return typename(obj)


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    rest = [(num_spaces * " ") + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


# ---------------------------------------------------------------------------------------------
# Full backward hooks: identity Functions on the module's inputs and outputs
# ---------------------------------------------------------------------------------------------


class BackwardHookFunction(Function):
    """Identity on tensors; its node is where a module's backward hooks attach."""

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        return grads


class _BackwardHook:
    """Connects the gradients seen at a module's outputs with those at its inputs."""

    def __init__(self, module: Module, user_hooks: list, user_pre_hooks: list) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs: tuple | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple:
        res: list = [None] * size
        for idx, val in zip(indices, values, strict=False):
            res[idx] = val
        return tuple(res)

    def _apply_on_tensors(self, fn: Callable, args: tuple) -> tuple:
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (_state.enabled and any(args[i]._requires_grad for i in idx)):
            return args, None
        new = BackwardHookFunction.apply(*(args[i] for i in idx))
        fn(next(t.grad_fn for t in new if t.grad_fn is not None))
        out = list(args)
        for i, t in zip(idx, new, strict=True):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def setup_input_hook(self, args: tuple) -> tuple:
        def attach(grad_fn: Any) -> None:
            def hook(grad_input: tuple, _: tuple) -> Any:
                if self.grad_outputs is None:
                    return None  # the outputs got no gradient: nothing to report
                res = self._pack_with_none(self.input_tensors_index or [], grad_input,
                                           self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(
                            "Backward hook returned an invalid number of grad_input, got "
                            f"{len(out)}, but expected {len(res)}"
                        )
                    res = out
                self.grad_outputs = None
                return tuple(res[i] for i in self.input_tensors_index or [])

            grad_fn.register_hook(hook)

        res, idx = self._apply_on_tensors(attach, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, args: Any) -> Any:
        def attach(grad_fn: Any) -> None:
            def hook(_: tuple, grad_output: tuple) -> Any:
                index = self.output_tensors_index or []
                grad_output = tuple(grad_output) + (None,) * (len(index) - len(grad_output))
                self.grad_outputs = self._pack_with_none(index, grad_output, self.n_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    new = user_pre_hook(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != len(self.grad_outputs):
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, got "
                            f"{len(new)}, but expected {len(self.grad_outputs)}"
                        )
                    self.grad_outputs = new
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect "
                        "to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch."
                        "nn.Module.register_full_backward_hook for more details.",
                        stacklevel=5,
                    )
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (
                            isinstance(res, tuple) and all(el is None for el in res)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients."
                            )
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, idx = self._apply_on_tensors(attach, args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]


def _forward_unimplemented(self: Module, *input: Any) -> None:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class Module:
    """Base class of all neural-network modules; subclass it and define ``forward``.

    Example:
        >>> import tapegrad as torch
        >>> class Net(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = torch.nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> Net()
        Net(
          (fc): Linear(in_features=2, out_features=1, bias=True)
        )
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False
    if TYPE_CHECKING:  # set in __init__ through object.__setattr__; their types, for checkers
        _parameters: dict[str, Parameter | None]
        _buffers: dict[str, Tensor | None]
        _non_persistent_buffers_set: set[str]
        _backward_pre_hooks: dict[int, Callable]
        _backward_hooks: dict[int, Callable]
        _is_full_backward_hook: bool | None
        _forward_hooks: dict[int, Callable]
        _forward_hooks_with_kwargs: dict[int, bool]
        _forward_hooks_always_called: dict[int, bool]
        _forward_pre_hooks: dict[int, Callable]
        _forward_pre_hooks_with_kwargs: dict[int, bool]
        _state_dict_hooks: dict[int, Callable]
        _state_dict_pre_hooks: dict[int, Callable]
        _load_state_dict_pre_hooks: dict[int, Any]
        _load_state_dict_post_hooks: dict[int, Callable]
        _modules: dict[str, Any]  # Module or None; Any keeps container code cast-free
    _compiled_call_impl: Callable | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # -- registration -----------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter, e.g. BatchNorm's running mean).

        Args:
            name: attribute name of the buffer.
            tensor: the buffer, or None (then it is left out of ``state_dict``).
            persistent: whether the buffer is part of ``state_dict``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_new_name(self, "buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        tensor = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_new_name(self, "parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        param = _run_registration_hooks(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        module = _run_registration_hooks(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` ('' is self)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the submodule at the dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            mod = getattr(parent, atoms[-1])
            if not isinstance(mod, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``."""
        _, param_name, param = _attribute_at(self, target)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
        mod, buffer_name, buffer = _attribute_at(self, target)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self) -> Any:
        """Extra (non-tensor) state for ``state_dict``; override with :meth:`set_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-"
            "report.yml to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore what :meth:`get_extra_state` returned."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-"
            "report.yml to report this bug."
        )

    # -- conversions ------------------------------------------------------------------------

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Apply ``fn`` to every parameter, gradient and buffer, keeping the Parameter objects."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            if type(applied) is Tensor or isinstance(applied, Parameter):
                param.data = applied  # same Parameter object, new values (optimizers keep it)
            else:  # pragma: no cover - fn returned something exotic
                self._parameters[key] = Parameter(applied, param.requires_grad)
            grad = param._grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Cast floating-point parameters and buffers: ``to(dtype)``, ``to('cpu')``,
        ``to(tensor)``, ``to(device, dtype)``. Integer buffers keep their dtype."""
        target = kwargs.get("dtype")
        dev = kwargs.get("device")
        for a in args:
            if isinstance(a, _dtype.dtype):
                target = a
            elif isinstance(a, Tensor):
                target = a.dtype
            elif isinstance(a, (str, device)) or type(a) is int:
                dev = a
            elif isinstance(a, bool):
                continue
            else:
                raise TypeError(
                    "to() received an invalid combination of arguments - got "
                    f"({', '.join(type(x).__name__ for x in args)}, )"
                )
        if dev is not None:
            _device.check(dev)  # a CPU-only build's error for any other device
        if target is not None:
            target = _dtype.to_dtype(target) if not isinstance(target, _dtype.dtype) else target
            if not (target.is_floating_point or target.is_complex):
                raise TypeError(
                    "nn.Module.to only accepts floating point or complex dtypes, but got "
                    f"desired dtype={target}"
                )
            if target.is_complex:
                warnings.warn(
                    "Complex modules are a new feature under active development whose design may "
                    "change, and some modules might not work as expected when using complex "
                    "tensors as parameters or buffers. Please file an issue at https://github.com/"
                    "pytorch/pytorch/issues/new?template=bug-report.yml if a complex module does "
                    "not work as expected.",
                    stacklevel=2,
                )

        def convert(t: Tensor) -> Tensor:
            if target is not None and (t.is_floating_point() or t.is_complex()):
                return t.to(target)
            return t

        return self._apply(convert)

    def cpu(self) -> Module:
        """Nothing to move: tapegrad runs on the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: Any = None) -> Module:
        """What a CPU-only torch does: AssertionError('Torch not compiled with CUDA enabled')."""
        _device.check_cuda_call(device)
        return self  # (not reached)

    def xpu(self, device: Any = None) -> Module:
        raise AssertionError(_device.NO_XPU)

    def type(self, dst_type: Any) -> Module:
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device: Any = None, recurse: bool = True) -> Module:
        """Fresh uninitialised storage for every parameter and buffer (same shapes)."""
        return self._apply(lambda t: empty_like(t), recurse=recurse)

    def share_memory(self) -> Module:
        return self

    # -- hooks ------------------------------------------------------------------------------

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False
                                        ) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients w.r.t. the outputs are known;
        it may return new grad_output."""
        if _announce.listener is not None:
            _announce.listener.module_called(self, "register_full_backward_pre_hook")
        return _add_hook(self._backward_pre_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated: prefer :meth:`register_full_backward_hook`."""
        self._is_full_backward_hook = _backward_hook_kind(self._is_full_backward_hook, False,
                                                          "on a single Module")
        return _add_hook(self._backward_hooks, hook)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False
                                    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t. the module's
        inputs are computed; it may return new grad_input."""
        if _announce.listener is not None:
            _announce.listener.module_called(self, "register_full_backward_hook")
        self._is_full_backward_hook = _backward_hook_kind(self._is_full_backward_hook, True,
                                                          "on a single Module")
        return _add_hook(self._backward_hooks, hook, prepend=prepend)

    def _get_backward_hooks(self) -> tuple[list, list]:
        full: list = []
        non_full: list = []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) runs before ``forward``;
        it may return new args (or ``(args, kwargs)``)."""
        if _announce.listener is not None:
            _announce.listener.module_called(self, "register_forward_pre_hook")
        handle = _add_hook(self._forward_pre_hooks, hook, prepend=prepend,
                           extra_dict=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs after
        ``forward``; it may return a new output."""
        if _announce.listener is not None:
            _announce.listener.module_called(self, "register_forward_hook")
        handle = _add_hook(
            self._forward_hooks, hook, prepend=prepend,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def _maybe_warn_non_full_backward_hook(self, inputs: Any, result: Any, grad_fn: Any) -> None:
        result = _tensor_tuple_or_warn(
            result,
            "Using non-full backward hooks on a Module that does not return a single "
            "Tensor or a tuple of Tensors is deprecated and will be removed in future "
            "versions. This hook will be missing some of the grad_output. Please use "
            "register_full_backward_hook to get the documented behavior.")
        if result is None:
            return
        inputs = _tensor_tuple_or_warn(
            inputs,
            "Using non-full backward hooks on a Module that does not take as input a "
            "single Tensor or a tuple of Tensors is deprecated and will be removed in "
            "future versions. This hook will be missing some of the grad_input. Please "
            "use register_full_backward_hook to get the documented behavior.")
        if inputs is None:
            return
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warnings.warn(
                "Using a non-full backward hook when outputs are nested in python data structure "
                "is deprecated and will be removed in future versions. This hook will be missing "
                "some grad_output.",
                FutureWarning,
                stacklevel=2,
            )
        elif len(out_grad_fn) > 1:
            warnings.warn(
                "Using a non-full backward hook when outputs are generated by different autograd "
                "Nodes is deprecated and will be removed in future versions. This hook will be "
                "missing some grad_output. Please use register_full_backward_hook to get the "
                "documented behavior.",
                FutureWarning,
                stacklevel=2,
            )
        else:
            inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
            next_functions = {n[0] for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warnings.warn(
                    "Using a non-full backward hook when the forward contains multiple autograd "
                    "Nodes is deprecated and will be removed in future versions. This hook will "
                    "be missing some grad_input. Please use register_full_backward_hook to get "
                    "the documented behavior.",
                    FutureWarning,
                    stacklevel=2,
                )

    # -- calling ----------------------------------------------------------------------------

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        forward_call = self.forward
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                or self._forward_pre_hooks or _any_global_hooks()):
            return forward_call(*args, **kwargs)
        if _announce.listener is not None:  # (a module with hooks ends a capture)
            _announce.listener.module_called(self, "__call__")

        result = None
        called_always: set = set()

        try:
            full_hooks: list = []
            non_full_hooks: list = []
            pre_hooks: list = []
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or _global_backward_hooks:
                full_hooks, non_full_hooks = self._get_backward_hooks()

            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    args, kwargs = _args_after_pre_hook(hook(self, args, kwargs), args, kwargs,
                                                        "forward pre-hook")
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)

            bw_hook = None
            if full_hooks or pre_hooks:
                bw_hook = _BackwardHook(self, full_hooks, pre_hooks)
                args = bw_hook.setup_input_hook(args)

            result = forward_call(*args, **kwargs)

            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    called_always.add(hook_id)
                if (hook_id in self._forward_hooks_with_kwargs
                        or hook_id in _global_forward_hooks_with_kwargs):
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out

            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or a "
                        f"tuple of Tensors but received {type(result)}",
                        stacklevel=2,
                    )
                result = bw_hook.setup_output_hook(result)

            if non_full_hooks:
                var = result
                while not isinstance(var, Tensor):
                    if isinstance(var, dict):
                        var = next(v for v in var.values() if isinstance(v, Tensor))
                    else:
                        var = var[0]
                grad_fn = var.grad_fn
                if grad_fn is not None:
                    for hook in non_full_hooks:
                        grad_fn.register_hook(_WrappedHook(hook, self))
                    self._maybe_warn_non_full_backward_hook(args, result, grad_fn)
            return result
        except Exception:
            for hook_id, hook in _global_forward_hooks.items():
                if hook_id in _global_forward_hooks_always_called and hook_id not in called_always:
                    result = _call_silenced(functools.partial(hook, self, args, result), result,
                                            "global module forward hook")
            for hook_id, hook in self._forward_hooks.items():
                if (hook_id in self._forward_hooks_always_called
                        and hook_id not in called_always):
                    if hook_id in self._forward_hooks_with_kwargs:
                        call = functools.partial(hook, self, args, kwargs, result)
                    else:
                        call = functools.partial(hook, self, args, result)
                    result = _call_silenced(call, result, "module forward hook")
            raise

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place (``torch.compile``'s arguments; see there)."""
        _compile_in_place(self, *args, **kwargs)

    # -- attributes -------------------------------------------------------------------------

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        if "_non_persistent_buffers_set" not in self.__dict__:
            self._non_persistent_buffers_set = set()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*dicts_or_sets: Any) -> None:
            for container in dicts_or_sets:
                if name in container:
                    if isinstance(container, dict):
                        del container[name]
                    else:
                        container.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                    name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                    name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    # -- state dict -------------------------------------------------------------------------

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict``."""
        hook._from_public_api = True  # type: ignore[attr-defined]
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict``."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """An OrderedDict of the parameters and persistent buffers, keyed by dotted names
        (detached unless ``keep_vars``)."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                "state_dict for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False
                                           ) -> RemovableHandle:
        return _add_hook(self._load_state_dict_pre_hooks,
                         _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its state."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict``."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        """Copy this module's own parameters and buffers from ``state_dict``."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(input_param)}"
                )
                continue
            if param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                    f"from checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param,
                                                        requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:  # noqa: BLE001 - reported with the others
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{input_param.size()}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module and its children.

        Returns:
            ``_IncompatibleKeys(missing_keys, unexpected_keys)``; with ``strict`` (the default),
            any such key raises torch's "Error(s) in loading state_dict" RuntimeError.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        def load(module: Module, local_state_dict: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items()
                                   if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace."
                    )

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- traversal --------------------------------------------------------------------------

    def _named_members(self, get_members_fn: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        memo: set = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and, with ``recurse``, of all submodules)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, each shared parameter once."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module (and, with ``recurse``, of all submodules)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        """The immediate submodules."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, immediate submodule) pairs, each module once."""
        memo: set = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """Self and every submodule, depth first."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) pairs for self ('') and every submodule, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # -- modes and gradients ----------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=False``: evaluation mode) here and in all submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter in place."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default)."""
        if _announce.listener is not None:  # (a capture records the call as one step)
            _announce.zero_grad(self, Module.zero_grad, _zero_grads, set_to_none)
            return
        _zero_grads(self, set_to_none)

    # -- printing ---------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + key + "): " + _addindent(repr(module), 2)
            for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self) -> list[str]:
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def _replicate_for_data_parallel(self) -> Module:
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica


def _zero_grads(module: Module, set_to_none: bool = True) -> None:
    """``module.zero_grad(set_to_none)``'s work."""
    for p in module.parameters():
        if p._grad is not None:
            if set_to_none:
                p.grad = None
            else:
                g = p._grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()
