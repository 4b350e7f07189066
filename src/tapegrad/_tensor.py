"""class Tensor: a NumPy array plus what autograd needs to know about it.

A Tensor holds

* ``_data``: the values, a NumPy array (views share memory with their base, as in torch);
* ``_requires_grad``, ``grad_fn`` (the node that made it, None for a leaf) and ``_output_nr``
  (which output of that node it is);
* ``_version_counter``: one counter per storage, shared with its views and ``detach()``, bumped by
  every in-place op, so a saved tensor can tell it was changed;
* ``_grad``: the gradient a backward accumulated (leaves, or non-leaves after ``retain_grad()``).

Every method is a one-liner that calls the ops (``x.exp()`` -> ``ops.elementwise.exp(x)``):
the arithmetic and its derivative live in ``ops/``, the graph in ``autograd/``.
"""

from __future__ import annotations

import builtins
import copy
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _announce, _dtype, _printing
from . import _device as _device_mod
from . import _layout as _layout_mod
from . import _memory_format as _mf_mod
from ._dtype import dtype as DType
from ._grad_state import _sequence
from ._grad_state import _state as _grad_state
from ._memory_format import contiguous_format as _mf_contiguous
from ._naming import public


@public("")
class Size(tuple):
    """A tensor's shape: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item: Any) -> Any:
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other: Any) -> Size:
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Size:  # (1,) + size is a Size too
        return Size(tuple(other) + tuple(self))


from ._device import CPU, device  # noqa: E402,F401  (torch.device; see _device.py)


class _Version:
    """The version counter of one storage, shared by every tensor that views it."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


_WARNED_ONCE: dict[str, bool] = {}

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information. (Triggered internally at "
    "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)


@public("")
class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

    # What every op reads or writes lives in slots; what only some tensors ever set (hooks, a
    # cached AccumulateGrad, view and inference flags) defaults to the class attributes below
    # and goes in the instance __dict__ when set, so creating a tensor stays cheap.
    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad_fn",
        "_grad",
        "_vc",
        "_output_nr",
        "_base",
        "__dict__",
        "__weakref__",
    )
    if TYPE_CHECKING:  # the slots' types, for type checkers
        _data: np.ndarray
        _requires_grad: builtins.bool  # set by requires_grad_, or with a grad_fn
        _grad_fn: Any  # the node that made it (``grad_fn``, which views may regenerate)
        _grad: Tensor | None
        _vc: _Version | None
        _output_nr: builtins.int
        _base: Tensor | None  # a view's base (ops/_views.py)
    _vv = 0  # a view's: the version its grad_fn is for (set by every view, ops/_views.py)
    _creation = 0  # a view's CreationMeta, when not DEFAULT (ops/_views.py)
    _replay: Any = None  # how to make a view again from its base, when kept (ops/_views.py)
    _fw_root = False  # forward-mode AD: a view whose tangent is its own (make_dual's result)
    _fw_base: Any = None  # a view's base for tangents, when not its base (a view of _fw_root)
    _detached = 0  # detach_() took this non-leaf's history: the node sequence number then
    _accumulator: Any = None  # weakref to the leaf's AccumulateGrad node
    _hooks: Any = None  # leaf tensor hooks
    _post_hooks: Any = None  # post-accumulate-grad hooks
    _retains_grad = False
    _inference = False
    _is_conj = False  # set on conj()'s result (ops/complex.py)
    _is_neg = False  # set on the imaginary part of a conjugate
    _fw_grad: Any = None  # the tangent under forward-mode AD (autograd/forward_ad.py)
    _grad_dtype: Any = False  # a leaf's grad_dtype: False its dtype, None any (engine.py)

    if TYPE_CHECKING:  # tell type checkers about the methods attached from above the ops

        # the method forms of the functional ops (_methods.py) and the rest (_tensor_methods.py)
        def __getattr__(self, name: str) -> Any: ...

        # the legacy constructor and the operators (_tensor_methods.py)
        def __new__(cls, *args: Any, **kwargs: Any) -> Tensor: ...
        def __init__(self, *args: Any, **kwargs: Any) -> None: ...
        def __getitem__(self, index: Any, /) -> Tensor: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __eq__(self, other: Any) -> Any: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Any: ...  # type: ignore[override]
        def __neg__(self) -> Tensor: ...
        __iadd__ = __isub__ = __imul__ = __itruediv__ = __add__
        __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __add__
        __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __add__
        __matmul__ = __rmatmul__ = __lt__ = __le__ = __gt__ = __ge__ = __add__
        __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __add__
        __abs__ = __invert__ = __neg__

    # -- construction ----------------------------------------------------------------------------

    @staticmethod
    def _init(t: Tensor, data: np.ndarray, requires_grad: bool = False) -> None:
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._grad = None
        t._vc = None
        t._output_nr = 0
        t._base = None

    @classmethod
    def _make(cls, data: Any, requires_grad: bool = False) -> Tensor:
        """Wrap an ndarray (no copy). The fast constructor every op uses."""
        t = object.__new__(Tensor)
        if type(data) is not np.ndarray:
            data = np.asarray(data)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._grad = None
        t._vc = None
        t._output_nr = 0
        t._base = None
        return t

    @property
    def _version_counter(self) -> _Version:
        """The storage's version counter, made on first use: most tensors are never changed in
        place, viewed or saved for backward, and then need none (one object less per op)."""
        vc = self._vc
        if vc is None:
            vc = self._vc = _Version()
        return vc

    @_version_counter.setter
    def _version_counter(self, counter: _Version) -> None:
        self._vc = counter

    # -- attributes ------------------------------------------------------------------------------

    @property
    def dtype(self) -> DType:
        return _dtype._FROM_NP[self._data.dtype]

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def device(self) -> device:
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def layout(self) -> Any:
        return _layout_mod.strided

    def stride(self, dim: int | None = None) -> Any:
        a = self._data
        if a.size == 0 and 0 in a.strides:  # (NumPy's strides of an empty array mean nothing:
            st_list = []                       # torch's are the contiguous ones)
            acc = 1
            for n in reversed(a.shape):
                st_list.append(acc)
                acc *= max(n, 1)
            st = tuple(reversed(st_list))
        else:
            st = tuple(s // a.itemsize for s in a.strides)
        return st if dim is None else st[_wrap_dim(dim, a.ndim)]

    def storage_offset(self) -> int:
        """Where this tensor starts in its storage (elements): the memory its array lies in,
        shared with its base and its views (and with ``detach()``, as in torch)."""
        if self._base is None and self._data.base is None:
            return 0
        return _above.storage_bytes(self._data)[1] // self._data.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (0 for an empty tensor, as torch reports)."""
        if self._data.size == 0:
            return 0
        return int(self._data.__array_interface__["data"][0])

    def is_contiguous(self, *, memory_format: Any = _mf_contiguous) -> bool:
        if memory_format is None or memory_format is _mf_contiguous:
            return bool(self._data.flags.c_contiguous)
        return _mf_mod.is_contiguous(self._data, memory_format)  # channels_last, ...

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or self.dtype.name == "bfloat16"

    def is_complex(self) -> bool:
        kind = self._data.dtype.kind
        return kind == "c" or (kind == "V" and self.dtype.is_complex)  # (complex32: _dtype.py)

    @property
    def requires_grad(self) -> bool:
        # a view also requires grad when its base does (torch: even one made under no_grad)
        if self._requires_grad:
            return True
        base = self._base
        return base is not None and base._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "requires_grad=")
        self.requires_grad_(value)

    @property
    def grad_fn(self) -> Any:
        """The node that made this tensor (None for a leaf). A view's is made again, through its
        base's history, when the base or another view of it was changed in place since."""
        if self._base is None:
            return self._grad_fn
        return _above.view_grad_fn(self)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place on a leaf (torch's errors for the rest)."""
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "requires_grad_")
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad:
            if self._data.dtype.kind not in "fc" and self.dtype.name != "bfloat16":
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            if self._inference and not _grad_state.inference:
                raise RuntimeError(
                    "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                    "allowed."
                )
            if self._inference or _grad_state.inference:
                _above.inference_requires_grad()
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        grad = self._grad
        if _announce.listener is not None and grad is not None:
            _announce.listener.grad_read(self, grad)
        return grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if _announce.listener is not None:
            _announce.listener.grad_assigned(self, value)
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            want = self._grad_dtype
            if want is False:
                want = self.dtype
            if want is not None and value.dtype is not want:
                got, wanted = _dtype.cpp_type_name(value.dtype), _dtype.scalar_type_name(want)
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{got}' to a tensor with "
                    f"grad_dtype '{wanted}'. The gradient must match the tensor's "
                    "grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                    "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
                    "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
                    "may break downstream systems that assume they match."
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        if _announce.listener is not None:
            _announce.listener.grad_assigned(self, None)
        self._grad = None

    @property
    def grad_dtype(self) -> DType | None:
        """The dtype a leaf's gradient is given (its own dtype unless set; None: any)."""
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        want = self._grad_dtype
        return self.dtype if want is False else want

    @grad_dtype.setter
    def grad_dtype(self, value: DType | None) -> None:
        if self.grad_fn is not None:
            if not self._retains_grad:  # torch reads .grad on the way (and warns so)
                warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, DType):
            raise RuntimeError("grad_dtype must be a torch.dtype or None, but got "
                               f"{type(value).__name__}")
        self._grad_dtype = value

    @property
    def _version(self) -> int:
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter.value

    @property
    def data(self) -> Tensor:
        """The same values, detached, with a version counter of their own (torch's ``.data``)."""
        t = Tensor._make(self._data)
        t._inference = self._inference
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "data=")
        self._data = value._data

    def _is_view(self) -> builtins.bool:
        return self._base is not None

    def _view_func_unsafe(self, new_base: Tensor) -> Tensor:
        return self._view_func(new_base)

    def is_inference(self) -> bool:
        return self._inference

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def output_nr(self) -> int:
        return self._output_nr

    # -- autograd --------------------------------------------------------------------------------

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Compute the gradient of this tensor w.r.t. the graph leaves (see autograd.backward)."""
        backward = _above.backward
        if _announce.listener is not None:  # (the health monitor watches each backward)
            _announce.listener.run_backward(self, lambda: backward(
                self, gradient, retain_graph, create_graph, inputs=inputs))
            return
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing memory and version counter, cut from the graph."""
        if _announce.listener is not None:
            _announce.listener.detaching(self)
        t = Tensor._make(self._data)
        t._version_counter = self._version_counter
        t._inference = self._inference
        return t

    def detach_(self) -> Tensor:
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedD"
                "ataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
                "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
                "gradients. To fix this error, please refer to the Optimizer.zero_grad() function "
                "in torch/optim/optimizer.py as the solution."
            )
        if self._grad_fn is not None:  # nodes made before now saved it as a non-leaf: they
            self._detached = next(_sequence)  # raise when they unpack it (torch's check)
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        if "_fw_grad" in self.__dict__:  # detached from forward mode too
            del self.__dict__["_fw_grad"]
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "retain_grad")
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self.grad_fn._hook_state().retain[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook: Callable) -> Any:
        """``hook(grad)`` runs when this tensor's gradient is computed; a non-None result
        replaces it. Returns a handle with ``remove()``."""
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "register_hook")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        return _add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> Any:
        """``hook(tensor)`` runs after a leaf's ``.grad`` was accumulated."""
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "register_post_accumulate_grad_hook")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._post_hooks is None:
            self._post_hooks = {}
        return _add_hook(self._post_hooks, hook)

    # -- conversion ------------------------------------------------------------------------------

    def item(self) -> Any:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "item")
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        value = self._data.reshape(()).item()
        return complex(*value) if type(value) is tuple else value  # complex32's (re, im) pair

    def tolist(self) -> Any:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "tolist")
        if self._data.dtype.kind == "V" and self.dtype.is_complex:  # complex32 (_dtype.py)
            return _dtype.from_chalf(self._data).tolist()
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "numpy")
        if not force:
            if self.requires_grad and _grad_state.grad_mode:
                raise RuntimeError(
                    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                    "instead."
                )
            if self._is_conj:
                raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                                   "tensor.resolve_conj().numpy() instead.")
            if self._is_neg:
                raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. Use "
                                   "tensor.resolve_neg().numpy() instead.")
        return self._data

    def __array__(self, dtype: Any = None) -> np.ndarray:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__array__")
        # torch's: no copy keyword (NumPy 2 then warns about it, and copies when asked to)
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return arr

    def __dlpack__(self, *, stream: Any = -1, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """A DLPack capsule over this tensor's memory (NumPy builds it; ``utils/dlpack.py``
        takes one in)."""
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        data = self._data
        if data.dtype.name == "bfloat16":
            raise BufferError(
                "tapegrad cannot export bfloat16 tensors through DLPack (NumPy's DLPack has no "
                "bfloat16 type); convert with .float() first")
        kwargs: dict[str, Any] = {}
        if stream not in (None, -1):  # a CPU tensor has no stream; NumPy says so in its words
            kwargs["stream"] = stream
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[Any, builtins.int]:
        """(device type, device index): always the CPU's."""
        return (_device_mod.DLDeviceType.kDLCPU, 0)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the tensor's ``repr`` with its shape, dtype and grad state
        (``_printing.py``)."""
        return _printing.html_summary(self)

    def _scalar(self, kind: type, stacklevel: int = 3) -> Any:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        # torch warns only with grad mode on (so not inside an optimizer's step)
        if self._requires_grad and not _WARNED_ONCE.get("scalar") and _grad_state.enabled:
            _WARNED_ONCE["scalar"] = True  # torch's TORCH_WARN_ONCE: once per process
            warnings.warn(
                "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                "behavior.\nConsider using tensor.detach() first.",
                UserWarning,
                stacklevel=stacklevel,
            )
        if kind is np.ndarray:  # the one element as a 0-d array (its dtype kept)
            return self._data.reshape(())
        return kind(self._data.reshape(()).item())

    def __float__(self) -> float:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__float__")
        return self._scalar(float)

    def __int__(self) -> int:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__int__")
        return self._scalar(int)

    def __index__(self) -> int:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__index__")
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()).item())

    def __bool__(self) -> bool:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__bool__")
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self._data.reshape(()).item())

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        new = type(self).__new__(type(self))
        Tensor._init(new, self._data.copy(), self._requires_grad)
        if type(self) is not Tensor and hasattr(self, "__dict__"):
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``to(dtype)``, ``to('cpu')``, ``to(other)``: a converted tensor (self if unchanged).
        torch's three forms and when they copy: ``_conversions.py``; ``x.float()``, ``x.long()``,
        ... are its shorthands (``_conversions.SHORTHANDS``)."""
        return _above.to(self, *args, **kwargs)

    def cpu(self, *, memory_format: Any = None) -> Tensor:
        return self

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False, *,
             memory_format: Any = None) -> Tensor:
        """What a CPU-only torch does: AssertionError('Torch not compiled with CUDA enabled')."""
        _device_mod.check_cuda_call(device)
        return self  # (not reached)

    def xpu(self, device: Any = None, non_blocking: builtins.bool = False, *,
            memory_format: Any = None) -> Tensor:
        raise AssertionError(_device_mod.NO_XPU)

    def pin_memory(self, device: Any = None) -> Tensor:
        """Pinned memory needs an accelerator: torch's error on a CPU-only build."""
        if device is not None:
            warnings.warn("The argument 'device' of Tensor.pin_memory() is deprecated. Please do "
                          "not pass this argument.", DeprecationWarning, stacklevel=2)
            self.is_pinned(device)  # torch asks, and warns, once more
            if _device_mod.device(device).type == "cuda":
                raise RuntimeError(_device_mod.NO_ATEN_CUDA)
        raise RuntimeError(_device_mod.NO_ACCELERATOR)

    def is_pinned(self, device: Any = None) -> builtins.bool:
        if device is not None:
            warnings.warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do "
                          "not pass this argument.", DeprecationWarning, stacklevel=2)
        return False

    def get_device(self) -> builtins.int:
        return -1  # the CPU

    is_cpu = property(lambda self: True)
    is_mps = is_meta = is_xpu = is_cuda

    # x.float(), x.long(), x.bool(), ...: _conversions.SHORTHANDS, attached with the op methods

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return _above.clone(self)

    # -- printing --------------------------------------------------------------------------------

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__repr__")
        try:
            fn = self.grad_fn
        except RuntimeError:  # a view whose grad_fn can no longer be made (torch: <Invalid>)
            fn = _INVALID
        tangent = self._fw_grad  # a dual tensor's (autograd/forward_ad.py)
        return _printing.format_tensor(
            self._data,
            self.dtype.name,
            requires_grad=self.requires_grad and fn is None,
            grad_fn_name=None if fn is None else fn.name().split("::")[-1],
            tangent=None if tangent is None else (
                str(tangent._data.item()) if tangent._data.ndim == 0 else repr(tangent)),
        )

    def __str__(self) -> str:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__str__")
        return self.__repr__()

    def __format__(self, format_spec: str) -> str:
        if _announce.listener is not None:
            _announce.listener.tensor_called(self, "__format__")
        if self._data.ndim == 0:
            return self._data.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __pos__(self) -> Tensor:
        return self

    __array_priority__ = 1000  # NumPy scalars defer to our reflected operators
    __array_ufunc__ = None


def _add_hook(hooks: dict, hook: Callable) -> Any:
    """Put ``hook`` into a leaf's ``hooks`` under the id of a new handle, which removes it."""
    handle = _above.RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


class _Above:
    """What the Tensor needs from the layers above it, which it cannot import (they import it):
    each is installed with ``install_above`` by the module that provides it, when imported."""

    # a view's grad_fn, made again through its base's history (ops/_views.py)
    view_grad_fn: Callable[[Tensor], Any]
    # the registry's note that an inference tensor was made to require grad (ops/_registry.py)
    inference_requires_grad: Callable[[], None]
    # Tensor.to's conversion (_conversions.py) and Tensor.clone's op (ops/shape.py)
    to: Callable[..., Tensor]
    clone: Callable[[Tensor], Tensor]
    # Tensor.backward's pass: autograd.backward's checks, then the engine (autograd/__init__.py)
    backward: Callable[..., None]
    # the storage under an array and the array's byte offset in it (Tensor.storage_offset,
    # _storage.py)
    storage_bytes: Callable[[np.ndarray], tuple[np.ndarray, int]]
    # Tensor.resize_'s work (_storage.py; the out= arguments resize through it, _out.py)
    resize_: Callable[..., Tensor]
    # the handle every register_hook returns, which removes the hook (autograd/graph.py)
    RemovableHandle: Callable[[dict], Any]


_above = _Above()


def install_above(**hooks: Callable) -> None:
    """Install hooks of ``_Above`` by name (``install_above(view_grad_fn=...)``)."""
    for name, hook in hooks.items():
        if name not in _Above.__annotations__:
            raise TypeError(f"Tensor has no hook named {name!r}")
        setattr(_above, name, hook)


class _Invalid:
    """What ``repr`` shows as the grad_fn of a view whose history cannot be made again."""

    @staticmethod
    def name() -> str:
        return "Invalid"


_INVALID = _Invalid()


def _type_name(value: Any) -> str:
    """The type of an argument as torch's messages name it (Tensor, torch.dtype, int, ...)."""
    t = type(value)
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, _dtype.dtype):
        return "torch.dtype"
    if isinstance(value, _device_mod.device):
        return "torch.device"
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) made non-negative, or torch's IndexError."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n
