"""TorchScript archives: ``torch.jit.save`` and ``torch.jit.load`` for modules built from
torch's standard layers.

tapegrad has no TorchScript compiler, but the forward of torch's standard layers is fixed by
torch, so the TorchScript code of such a module can be written out directly. This module
writes, for a scripted or traced module, the archive real ``torch.jit.load`` reads and runs
with the same results, and reads such archives (written by torch's ``torch.jit.script(m).save``
or by tapegrad) back into a scripted module.

The archive is a zip in the layout of torch's checkpoints (``serialization/_zip.py``), every
record in one folder named after the file::

    data/0, data/1, ...      the storages (raw bytes), as in a torch.save archive
    data.pkl                 the module object graph, pickle protocol 2: each module an object
                             of class ``__torch__.torch.nn.modules.linear.Linear`` (``NEWOBJ``
                             then ``BUILD`` with a dict of its attributes: parameters, buffers,
                             ``training``, submodules), tensors as ``_rebuild_tensor_v2`` with
                             persistent ids naming the storages
    code/__torch__/...py     the TorchScript source of each module class: its attributes'
                             types, the ``__constants__`` as ``name : Final[T] = value`` and
                             ``forward`` written with aten operators
    constants.pkl            the tensor constants of the code (none here: an empty tuple)
    version, byteorder, .data/serialization_id, extra/<name> (``_extra_files``)

Two modules of one class whose constants differ are two TorchScript types: the second and
later ones are named ``___torch_mangle_<n>`` as torch names them.

Supported: ``nn.Sequential`` (nested too) of ``Linear``, ``Conv2d`` (any padding, stride,
dilation, groups, padding mode), ``BatchNorm1d``/``BatchNorm2d`` (affine or not, with or
without running statistics, ``momentum=None``), ``MaxPool2d`` (without ``return_indices``),
``AvgPool2d``, ``ReLU``, ``Sigmoid``, ``Tanh``, ``Softmax``, ``Flatten``, ``Dropout`` and
``Identity``, each exactly that class (not a subclass) and without hooks. Any other module
(a user-defined class, whose forward only a compiler could translate, or another layer) is
refused with a ``NotImplementedError`` naming it before anything is written. ``load`` reads
archives of those modules written by ``torch.jit.script(m).save`` or by tapegrad; archives of
``torch.jit.trace`` keep no constants and are refused, as are archives of any other class.
"""

from __future__ import annotations

import ast
import collections
import io
import os
import pickle
import re
import sys
from collections.abc import Callable
from typing import IO, Any

from . import nn
from ._tensor import Tensor
from .serialization._atomic import atomic_write
from .serialization._errors import CorruptCheckpointError
from .serialization._torch_load import _MINIZ, _FullUnpickler, folder, storage_loader
from .serialization._torch_save import TorchPickler, _Global, _Storages, archive_name
from .serialization._zip import ZipReader, ZipWriter

__all__ = ["save", "load"]

_VERSION = b"3\n"  # the file format version torch 2.13 writes for these operators

# ---------------------------------------------------------------------------------------------
# the layers: their constants, their TorchScript forward, and how to build them back
# ---------------------------------------------------------------------------------------------

Consts = list[tuple[str, Any]]


def _pair(v: Any) -> list[int]:
    return list(v) if isinstance(v, (tuple, list)) else [v, v]


def _lit(v: Any) -> str:
    """``v`` as a TorchScript literal."""
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise NotImplementedError(f"a TorchScript archive cannot hold the constant {v}")
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (tuple, list)):
        inner = ", ".join(_lit(x) for x in v)
        return f"({inner}{',' if len(v) == 1 else ''})" if isinstance(v, tuple) else f"[{inner}]"
    raise NotImplementedError(f"a TorchScript archive cannot hold the constant {v!r}")


# the TorchScript name of each constant's Python type, in the order they are tried (a bool is
# also an int)
_CONSTANT_TYPES: tuple[tuple[type, str], ...] = (
    (Tensor, "Tensor"), (bool, "bool"), (int, "int"), (float, "float"), (str, "str"))


def _type(v: Any) -> str:
    """The TorchScript type of a constant or attribute value."""
    if v is None:
        return "NoneType"
    for cls, name in _CONSTANT_TYPES:
        if isinstance(v, cls):
            return name
    if isinstance(v, tuple):
        return f"Tuple[{', '.join(_type(x) for x in v)}]"
    raise NotImplementedError(f"a TorchScript archive cannot hold the constant {v!r}")


def _raise(message: str, *args: str) -> list[str]:
    """The lines that raise torch's ValueError with ``message`` formatted with ``args``."""
    text = f"torch.format({_lit(message)}, {', '.join(args)})" if args else _lit(message)
    return [f"ops.prim.RaiseException({text}, \"builtins.ValueError\")"]


def _if(cond: str, then: list[str], otherwise: list[str] | None = None) -> list[str]:
    """An ``if`` statement (bodies indented one step more), with the ``else`` torch prints."""
    return ([f"if {cond}:"] + ["  " + line for line in then] + ["else:"]
            + ["  " + line for line in (otherwise or ["pass"])])


class _Layer:
    """One supported class: where torch defines it, its constants, its forward's body (the
    lines after ``def forward(self, input: Tensor) -> Tensor:``), its other attributes, and a
    constructor call from the constants and the loaded tensors."""

    def __init__(self, cls: type, module: str,
                 consts: Callable[[Any], Consts], forward: Callable[[Any], list[str]],
                 build: Callable[[dict[str, Any], dict[str, Any]], Any],
                 attrs: Callable[[Any], Consts] | None = None) -> None:
        self.cls = cls
        self.module = module
        self.consts = consts
        self.forward = forward
        self.build = build
        self.attrs = attrs or (lambda m: [])


def _none(m: Any) -> Consts:
    return []


def _get(m: Any, *names: str) -> Consts:
    return [(n, getattr(m, n)) for n in names]


def _linear_forward(m: Any) -> list[str]:
    return ["weight = self.weight", "bias = self.bias",
            "return torch.linear(input, weight, bias)"]


def _conv_forward(m: Any) -> list[str]:
    padding = m.padding if isinstance(m.padding, str) else _pair(m.padding)
    source = "input"
    if m.padding_mode != "zeros":
        source = (f"torch.pad(input, {_lit(list(m._reversed_padding_repeated_twice))}, "
                  f"{_lit(m.padding_mode)})")
        padding = [0, 0]
    return ["weight = self.weight", "bias = self.bias",
            f"return torch.conv2d({source}, weight, bias, {_lit(_pair(m.stride))}, "
            f"{_lit(padding)}, {_lit(_pair(m.dilation))}, {m.groups})"]


def _conv_consts(m: Any) -> Consts:
    return _get(m, "in_channels", "out_channels", "kernel_size", "stride", "padding",
                "dilation", "output_padding", "groups", "padding_mode")


def _conv_build(c: dict[str, Any], s: dict[str, Any]) -> Any:
    return nn.Conv2d(c["in_channels"], c["out_channels"], c["kernel_size"], c["stride"],
                     c["padding"], c["dilation"], c["groups"], s.get("bias") is not None,
                     c["padding_mode"])


def _batchnorm_forward(dims: tuple[int, ...]) -> Callable[[Any], list[str]]:
    def forward(m: Any) -> list[str]:
        wanted = " or ".join(f"{d}D" for d in dims)
        cond = " and ".join(f"torch.ne(ndim, {d})" for d in dims)
        lines = ["ndim = torch.dim(input)"]
        lines += _if(cond, _raise(f"expected {wanted} input (got {{}}D input)", "ndim"))
        lines += ["training = self.training"]
        tracking = m.track_running_stats
        factor = 0.0 if m.momentum is None else float(m.momentum)
        lines += [f"factor = {_lit(factor)}"]
        if tracking:
            count = ["num_batches_tracked = self.num_batches_tracked",
                     "_0 = torch.add_(num_batches_tracked, 1)"]
            if m.momentum is None:
                count += ["factor = torch.div(1.0, float(num_batches_tracked))"]
            lines += _if("training", count)
            lines += ["bn_training = training"]
        else:
            lines += ["bn_training = True"]
        size_check = ["size = torch.size(input)",
                      "per_channel = torch.floordiv(torch.numel(input), size[1])"]
        size_check += _if("torch.eq(per_channel, 1)", _raise(
            "Expected more than 1 value per channel when training, got input size {}", "size"))
        lines += _if("bn_training", size_check)
        lines += ["running_mean = self.running_mean", "running_var = self.running_var",
                  "weight = self.weight", "bias = self.bias",
                  "return torch.batch_norm(input, weight, bias, running_mean, running_var, "
                  f"bn_training, factor, {_lit(float(m.eps))}, True)"]
        return lines

    return forward


def _batchnorm_build(cls: type) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
    def build(c: dict[str, Any], s: dict[str, Any]) -> Any:
        return cls(c["num_features"], c["eps"], c["momentum"], c["affine"],
                   c["track_running_stats"])
    return build


def _maxpool_forward(m: Any) -> list[str]:
    if m.return_indices:
        raise NotImplementedError(
            "tapegrad writes no TorchScript archive of MaxPool2d(return_indices=True)")
    stride = m.stride if m.stride is not None else m.kernel_size
    return [f"return torch.max_pool2d(input, {_lit(_pair(m.kernel_size))}, "
            f"{_lit(_pair(stride))}, {_lit(_pair(m.padding))}, {_lit(_pair(m.dilation))}, "
            f"{_lit(bool(m.ceil_mode))})"]


def _avgpool_forward(m: Any) -> list[str]:
    stride = m.stride if m.stride is not None else m.kernel_size
    return [f"return torch.avg_pool2d(input, {_lit(_pair(m.kernel_size))}, "
            f"{_lit(_pair(stride))}, {_lit(_pair(m.padding))}, {_lit(bool(m.ceil_mode))}, "
            f"{_lit(bool(m.count_include_pad))}, {_lit(m.divisor_override)})"]


def _softmax_forward(m: Any) -> list[str]:
    if m.dim is not None:
        return [f"return torch.softmax(input, {m.dim})"]
    # torch's implicit dimension (deprecated): 0 for 0-, 1- and 3-dimensional inputs, else 1
    return ["ndim = torch.dim(input)",
            "torch.warn(\"Implicit dimension choice for softmax has been deprecated. Change "
            "the call to include dim=X as an argument.\", 3)",
            *_if("torch.eq(ndim, 0) or torch.eq(ndim, 1) or torch.eq(ndim, 3)",
                 ["dim = 0"], ["dim = 1"]),
            "return torch.softmax(input, dim)"]


def _layers() -> dict[type, _Layer]:
    mods = "torch.nn.modules."
    table = [
        _Layer(nn.Linear, mods + "linear", lambda m: _get(m, "in_features", "out_features"),
               _linear_forward,
               lambda c, s: nn.Linear(c["in_features"], c["out_features"],
                                      s.get("bias") is not None)),
        _Layer(nn.Identity, mods + "linear", _none, lambda m: ["return input"],
               lambda c, s: nn.Identity()),
        _Layer(nn.ReLU, mods + "activation", lambda m: _get(m, "inplace"),
               lambda m: [f"return torch.relu{'_' if m.inplace else ''}(input)"],
               lambda c, s: nn.ReLU(c["inplace"])),
        _Layer(nn.Sigmoid, mods + "activation", _none, lambda m: ["return torch.sigmoid(input)"],
               lambda c, s: nn.Sigmoid()),
        _Layer(nn.Tanh, mods + "activation", _none, lambda m: ["return torch.tanh(input)"],
               lambda c, s: nn.Tanh()),
        _Layer(nn.Softmax, mods + "activation", lambda m: _get(m, "dim"), _softmax_forward,
               lambda c, s: nn.Softmax(c["dim"])),
        _Layer(nn.Flatten, mods + "flatten", lambda m: _get(m, "start_dim", "end_dim"),
               lambda m: [f"return torch.flatten(input, {m.start_dim}, {m.end_dim})"],
               lambda c, s: nn.Flatten(c["start_dim"], c["end_dim"])),
        _Layer(nn.Dropout, mods + "dropout", lambda m: [("p", float(m.p)), ("inplace", m.inplace)],
               lambda m: ["training = self.training",
                          f"return torch.dropout{'_' if m.inplace else ''}(input, "
                          f"{_lit(float(m.p))}, training)"],
               lambda c, s: nn.Dropout(c["p"], c["inplace"])),
        _Layer(nn.Conv2d, mods + "conv", _conv_consts, _conv_forward, _conv_build,
               lambda m: [("transposed", bool(m.transposed)),
                          ("_reversed_padding_repeated_twice",
                           _IntList(m._reversed_padding_repeated_twice))]),
        _Layer(nn.MaxPool2d, mods + "pooling",
               lambda m: _get(m, "kernel_size", "stride", "padding", "dilation",
                              "return_indices", "ceil_mode"),
               _maxpool_forward,
               lambda c, s: nn.MaxPool2d(c["kernel_size"], c["stride"], c["padding"],
                                         c["dilation"], c["return_indices"], c["ceil_mode"])),
        _Layer(nn.AvgPool2d, mods + "pooling",
               lambda m: _get(m, "kernel_size", "stride", "padding", "ceil_mode",
                              "count_include_pad", "divisor_override"),
               _avgpool_forward,
               lambda c, s: nn.AvgPool2d(c["kernel_size"], c["stride"], c["padding"],
                                         c["ceil_mode"], c["count_include_pad"],
                                         c["divisor_override"])),
    ]
    for cls, dims in ((nn.BatchNorm1d, (2, 3)), (nn.BatchNorm2d, (4,))):
        table.append(_Layer(
            cls, mods + "batchnorm",
            lambda m: [("num_features", m.num_features), ("eps", float(m.eps)),
                       ("momentum", None if m.momentum is None else float(m.momentum)),
                       ("affine", m.affine), ("track_running_stats", m.track_running_stats)],
            _batchnorm_forward(dims), _batchnorm_build(cls)))
    return {layer.cls: layer for layer in table}


_LAYERS: dict[type, _Layer] = {}


def _table() -> dict[type, _Layer]:
    if not _LAYERS:
        _LAYERS.update(_layers())
    return _LAYERS


_SEQUENTIAL = "torch.nn.modules.container.Sequential"

# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------


class _IntList:
    """A ``List[int]`` attribute: pickled as ``torch.jit._pickle.build_intlist(list)``."""

    def __init__(self, values: Any) -> None:
        self.values = [int(v) for v in values]


class _Object:
    """A module in ``data.pkl``: an object of the TorchScript class ``cls`` with ``state``."""

    def __init__(self, cls: _Global, state: dict[str, Any]) -> None:
        self.cls = cls
        self.state = state


_BUILD_INTLIST = _Global("torch.jit._pickle", "build_intlist")


class _ArchivePickler(TorchPickler):
    """The pickler of ``data.pkl``: modules as ``NEWOBJ``/``BUILD`` of their TorchScript class,
    ``List[int]`` attributes through ``build_intlist``."""

    dispatch = dict(TorchPickler.dispatch)

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is _IntList:
            return _BUILD_INTLIST, (obj.values,)
        return super().reducer_override(obj)

    def _save_object(self, obj: _Object) -> None:
        self.save(obj.cls)
        self.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
        self.memoize(obj)
        self.save(obj.state)
        self.write(pickle.BUILD)

    dispatch[_Object] = _save_object


def _underlying(module: Any) -> type:
    """The nn class of a module (a scripted or traced module's original class: ``jit``'s
    wrapper classes name it ``_original_class``)."""
    cls = type(module)
    return vars(cls).get("_original_class", cls)


def _class_name(cls: type) -> str:
    module = cls.__module__
    if module.startswith("tapegrad."):
        module = "torch." + module[len("tapegrad."):]
    return f"{module}.{cls.__qualname__}"


class _Writer:
    """Collects the TorchScript classes (deduplicated, mangled as torch mangles them) and the
    object graph of one module tree."""

    def __init__(self) -> None:
        self.types: dict[tuple[str, str], str] = {}  # (qualname, body) -> mangled qualname
        self.taken: set[str] = set()
        self.mangle = 0
        self.files: dict[str, list[str]] = collections.OrderedDict()
        self.globals: dict[str, _Global] = {}

    def _declare(self, qualname: str, body: list[str]) -> str:
        """The qualified name of the class with ``body`` (``SELF`` for its own type)."""
        key = (qualname, "\n".join(body))
        if key in self.types:
            return self.types[key]
        name = qualname
        if name in self.taken:
            path, _, short = qualname.rpartition(".")
            name = f"{path}.___torch_mangle_{self.mangle}.{short}"
            self.mangle += 1
        self.taken.add(name)
        self.types[key] = name
        path, _, short = name.rpartition(".")
        lines = [f"class {short}(Module):"] + ["  " + line.replace("SELF", name)
                                               for line in body]
        self.files.setdefault(path, []).extend(lines)
        return name

    def _global(self, qualname: str) -> _Global:
        if qualname not in self.globals:
            path, _, short = qualname.rpartition(".")
            self.globals[qualname] = _Global(path, short)
        return self.globals[qualname]

    def visit(self, module: Any, where: str) -> _Object:
        """The ``data.pkl`` object of ``module`` (its children visited first)."""
        cls = _underlying(module)
        what = _class_name(cls) + (f" (submodule {where})" if where else "")
        layer = _table().get(cls)
        if layer is None and cls is not nn.Sequential:
            raise NotImplementedError(
                f"tapegrad cannot write a TorchScript archive of {what}: it writes "
                "Sequential containers of torch's standard layers "
                f"({', '.join(sorted(c.__name__ for c in _table()))}) only, as it has no "
                "TorchScript compiler for other code")
        for hooks in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                      "_backward_pre_hooks"):
            if getattr(module, hooks, None):
                raise NotImplementedError(
                    f"tapegrad cannot write a TorchScript archive of {what}: it has hooks")
        params = list(module._parameters.items())
        buffers = list(module._buffers.items())
        body = [f"__parameters__ = [{''.join(_lit(n) + ', ' for n, _ in params)}]",
                f"__buffers__ = [{''.join(_lit(n) + ', ' for n, _ in buffers)}]"]
        state: dict[str, Any] = {}
        for name, value in params + buffers:
            body.append(f"{name} : {_type(value)}")
            state[name] = None if value is None else Tensor._make(
                value._data, value.requires_grad)
        body += ["training : bool", "_is_full_backward_hook : Optional[bool]"]
        state["training"] = bool(module.training)
        state["_is_full_backward_hook"] = module._is_full_backward_hook
        children: list[tuple[str, str]] = []
        if layer is None:  # Sequential
            for key, child in module._modules.items():
                if child is None:
                    raise NotImplementedError(
                        f"tapegrad cannot write a TorchScript archive of {what}: its "
                        f"submodule {key} is None")
                obj = self.visit(child, f"{where}.{key}" if where else key)
                state[key] = obj
                children.append((key, f"{obj.cls.module}.{obj.cls.name}"))
            body += [f"__annotations__[{_lit(k)}] = {t}" for k, t in children]
            forward = [f"_{i} = getattr(self, {_lit(k)})" for i, (k, _) in enumerate(children)]
            value = "input"
            for i in range(len(children)):
                out = f"input{i}"
                forward.append(f"{out} = (_{i}).forward({value}, )")
                value = out
            forward.append(f"return {value}")
            extra = ["def __len__(self: SELF) -> int:", f"  return {len(children)}"]
            qualname = "__torch__." + _SEQUENTIAL
        else:
            if module._modules:
                raise NotImplementedError(
                    f"tapegrad cannot write a TorchScript archive of {what}: it has "
                    "submodules")
            for name, value in layer.attrs(module):
                kind = "List[int]" if isinstance(value, _IntList) else _type(value)
                body.append(f"{name} : {kind}")
                state[name] = value
            for name, value in layer.consts(module):
                body.append(f"{name} : Final[{_type(value)}] = {_lit(value)}")
            forward = layer.forward(module)
            extra = []
            qualname = f"__torch__.{layer.module}.{cls.__name__}"
        body += ["def forward(self: SELF,", "  input: Tensor) -> Tensor:"]
        body += ["  " + line for line in forward] + extra
        return _Object(self._global(self._declare(qualname, body)), state)

    def code_records(self) -> list[tuple[str, bytes]]:
        return [("code/" + path.replace(".", "/") + ".py",
                 ("\n".join(lines) + "\n").encode()) for path, lines in self.files.items()]


def _serialization_id() -> bytes:
    return "".join(f"{int.from_bytes(os.urandom(8), 'little'):020d}" for _ in range(2)).encode()


def _write(module: Any, fh: IO[bytes], name: str, extra_files: Any) -> None:
    writer = _Writer()
    root = writer.visit(module, "")
    storages = _Storages()
    buf = io.BytesIO()
    _ArchivePickler(buf, 2, storages).dump(root)
    constants = io.BytesIO()
    pickle.dump((), constants, protocol=2)
    zipf = ZipWriter(fh, name)
    for key, data in (extra_files or {}).items():
        zipf.write_record(f"extra/{key}", data.encode() if isinstance(data, str) else
                          bytes(data))
    for key, flat, _ in storages.records:
        zipf.write_record(f"data/{key}", flat)
    zipf.write_record("data.pkl", buf.getvalue())
    for path, text in writer.code_records():
        zipf.write_record(path, text)
    zipf.write_record("constants.pkl", constants.getvalue())
    zipf.write_record("version", _VERSION)
    zipf.write_record("byteorder", sys.byteorder.encode())
    zipf.write_record(".data/serialization_id", _serialization_id())
    zipf.close()


def save(module: Any, f: Any, extra_files: Any = None) -> None:
    """Write ``module`` (scripted or traced) to ``f`` (a path or a binary file) as a
    TorchScript archive; an unsupported module raises before anything is written."""
    body = io.BytesIO()
    is_path = isinstance(f, (str, bytes, os.PathLike))
    _write(module, body, archive_name(f) if is_path else "archive", extra_files)
    data = body.getvalue()
    if is_path:
        def write(fh: IO[bytes]) -> None:
            fh.write(data)

        atomic_write(f, write)
        return
    f.write(data)
    if hasattr(f, "flush"):
        f.flush()


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------


class _Stub:
    """A module object of ``data.pkl`` before it is rebuilt: its TorchScript class and state."""

    qualname = ""

    def __setstate__(self, state: Any) -> None:
        self.state = state


_LIST_BUILDERS = {"build_intlist", "build_floatlist", "build_boollist", "build_doublelist",
                  "build_tensorlist"}


class _ArchiveUnpickler(_FullUnpickler):
    """Unpickles ``data.pkl``: ``__torch__`` classes become :class:`_Stub` subclasses."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stubs: dict[str, type] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "__torch__" or module.startswith("__torch__."):
            qualname = f"{module}.{name}"
            if qualname not in self.stubs:
                self.stubs[qualname] = type(name, (_Stub,), {"qualname": qualname})
            return self.stubs[qualname]
        if module == "torch.jit._pickle" and name in _LIST_BUILDERS:
            return list
        return super().find_class(module, name)


_CLASS = re.compile(r"^class (\w+)\(")
_FINAL = re.compile(r"^  (\w+) : Final\[.*\] = (.*)$")
_NAMES = re.compile(r"^  (__parameters__|__buffers__) = (\[.*\])$")


class _ClassInfo:
    def __init__(self) -> None:
        self.consts: dict[str, Any] = {}
        self.parameters: list[str] = []
        self.buffers: list[str] = []


def _parse_code(text: str) -> dict[str, _ClassInfo]:
    """The constants and parameter/buffer names of each class in a code file."""
    classes: dict[str, _ClassInfo] = {}
    current: _ClassInfo | None = None
    for line in text.splitlines():
        found = _CLASS.match(line)
        if found:
            current = classes.setdefault(found.group(1), _ClassInfo())
            continue
        if current is None:
            continue
        final = _FINAL.match(line)
        try:
            if final:
                current.consts[final.group(1)] = ast.literal_eval(final.group(2))
            names = _NAMES.match(line)
            if names:
                value = list(ast.literal_eval(names.group(2)))
                if names.group(1) == "__parameters__":
                    current.parameters = value
                else:
                    current.buffers = value
        except (ValueError, SyntaxError):
            raise CorruptCheckpointError(f"cannot read the TorchScript line {line!r}") from None
    return classes


def _demangle(qualname: str) -> str:
    parts = [p for p in qualname.split(".") if not p.startswith("___torch_mangle_")]
    return ".".join(parts[1:])  # without "__torch__"


class _Reader:
    def __init__(self, reader: ZipReader, prefix: str, records: set[str]) -> None:
        self.reader = reader
        self.prefix = prefix
        self.records = records
        self.files: dict[str, dict[str, _ClassInfo]] = {}
        self.by_name = {f"{layer.module}.{cls.__name__}": layer
                        for cls, layer in _table().items()}

    def info(self, qualname: str) -> _ClassInfo:
        path, _, short = qualname.rpartition(".")
        if path not in self.files:
            record = "code/" + path.replace(".", "/") + ".py"
            if record not in self.records:
                raise CorruptCheckpointError(
                    f"PytorchStreamReader failed locating file {record}: file not found{_MINIZ}")
            self.files[path] = _parse_code(self.reader.read(self.prefix + record).decode())
        found = self.files[path].get(short)
        if found is None:
            raise CorruptCheckpointError(f"the archive's code does not define {qualname}")
        return found

    def build(self, stub: Any, where: str) -> Any:
        if not isinstance(stub, _Stub):
            raise CorruptCheckpointError("the archive's data.pkl does not hold a module")
        name = _demangle(stub.qualname)
        state: dict[str, Any] = stub.state
        what = name + (f" (submodule {where})" if where else "")
        if name != _SEQUENTIAL and name not in self.by_name:
            raise NotImplementedError(
                f"tapegrad cannot load the TorchScript class {name} ({stub.qualname}): it loads "
                "archives of Sequential containers of torch's standard layers "
                f"({', '.join(sorted(n.rpartition('.')[2] for n in self.by_name))}) only")
        info = self.info(stub.qualname)
        module: Any
        if name == _SEQUENTIAL:
            children = [(k, v) for k, v in state.items() if isinstance(v, _Stub)]
            module = nn.Sequential(collections.OrderedDict(
                (k, self.build(v, f"{where}.{k}" if where else k)) for k, v in children))
        else:
            layer = self.by_name[name]
            needed = {n for n, _ in layer.consts(_Defaults())}
            missing = sorted(needed - set(info.consts))
            if missing:
                raise NotImplementedError(
                    f"tapegrad cannot load {what}: the archive's code holds no constant "
                    f"{missing[0]} (an archive written by torch.jit.trace); it loads archives "
                    "of scripted modules")
            module = layer.build(info.consts, state)
        for kind, names in (("_parameters", info.parameters), ("_buffers", info.buffers)):
            table = getattr(module, kind)
            if set(names) != set(table):
                raise CorruptCheckpointError(
                    f"{what}: the archive's {kind[1:]} {names} are not the module's "
                    f"{list(table)}")
            for key in names:
                value = state.get(key)
                if (value is None) != (table[key] is None) or (
                        value is not None and tuple(value.shape) != tuple(table[key].shape)):
                    raise CorruptCheckpointError(
                        f"{what}: the archive's {key} does not fit the module")
                if value is None:
                    continue
                if kind == "_parameters":
                    table[key] = nn.Parameter(value, requires_grad=value.requires_grad)
                else:
                    table[key] = value
        module.training = bool(state.get("training", True))
        return module


class _Defaults:
    """Stands for a module when only the names of a layer's constants are wanted."""

    def __getattr__(self, name: str) -> Any:
        return 0


def load(f: Any, map_location: Any = None, extra_files: Any = None) -> Any:
    """The module a TorchScript archive holds, rebuilt from tapegrad's layers (``jit.load``
    scripts it)."""
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(os.fspath(f))
        if not os.path.exists(path):
            raise ValueError(f"The provided filename {path} does not exist")
        if os.path.isdir(path):
            raise ValueError(f"The provided filename {path} is a directory")
        with open(path, "rb") as fh:
            data = fh.read()
        name = path
    else:
        data = f.read()
        name = str(getattr(f, "name", "<file object>"))
    reader = ZipReader(io.BytesIO(data), name)
    prefix, records = folder(reader, name)
    for needed in ("constants.pkl", "data.pkl"):
        if needed not in records:
            raise CorruptCheckpointError(
                f"PytorchStreamReader failed locating file {needed}: file not found{_MINIZ}")
    persistent_load = storage_loader(reader, prefix, records, map_location)
    unpickler = _ArchiveUnpickler(io.BytesIO(reader.read(prefix + "data.pkl")),
                                  encoding="utf-8")
    unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
    root = unpickler.load()
    module = _Reader(reader, prefix, records).build(root, "")
    if extra_files is not None:
        for key in list(extra_files):
            record = f"extra/{key}"
            extra_files[key] = reader.read(prefix + record) if record in records else b""
    return module
