"""The ``weights_only`` unpickler: a pickle interpreter that can only build data.

A pickle is a small stack-machine program. Python's own unpickler runs every instruction of
it, and two of them run code: ``GLOBAL`` imports any module and fetches any name from it
(``os.system``), ``REDUCE`` calls what is on the stack. This interpreter knows the same
instructions as torch's ``weights_only`` unpickler (the ones protocol 2 uses), and

* ``GLOBAL`` never imports: it looks the name up in an allow-list of tapegrad objects
  (:func:`_rebuild.torch_globals`: the tensor rebuild functions, storage types, dtypes,
  ``torch.Size``, ``OrderedDict``, ``set``, ...) and in what the user allowed with
  :func:`add_safe_globals`; any other name stops the load with torch's ``UnpicklingError``;
* ``REDUCE`` and ``NEWOBJ`` only call what ``GLOBAL`` gave; ``BUILD`` only sets the state of
  tensors, Parameters, OrderedDicts and allowed types; ``APPEND``/``SETITEM`` only fill real
  lists and dicts;
* ``BINPERSID`` hands ``('storage', ...)`` records to the loader, nothing else.

The messages are torch's, word for word, so a crafted file reads the same on both.
"""

from __future__ import annotations

import pickletools
import struct
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable
from pickle import UnpicklingError
from typing import Any

from .._tensor import Tensor
from ..nn import Parameter
from ._rebuild import _view, torch_globals

__all__ = ["Unpickler", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "user_globals", "UNSAFE_MESSAGE", "explain"]

# modules no allow-list can open
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

# the Python 2 names a protocol-2 pickle may use, as torch maps them
_IMPORT_MAPPING = {
    "__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue", "repr": "reprlib",
    "_abcoll": "collections.abc", "UserDict": "collections", "UserList": "collections",
    "UserString": "collections", "whichdb": "dbm", "StringIO": "io", "cStringIO": "io",
}
_NAME_MAPPING = {
    ("__builtin__", "xrange"): ("builtins", "range"),
    ("__builtin__", "reduce"): ("functools", "reduce"),
    ("__builtin__", "intern"): ("sys", "intern"),
    ("__builtin__", "unichr"): ("builtins", "chr"),
    ("__builtin__", "unicode"): ("builtins", "str"),
    ("__builtin__", "long"): ("builtins", "int"),
    ("itertools", "izip"): ("builtins", "zip"),
    ("itertools", "imap"): ("builtins", "map"),
    ("itertools", "ifilter"): ("builtins", "filter"),
    ("itertools", "ifilterfalse"): ("itertools", "filterfalse"),
    ("itertools", "izip_longest"): ("itertools", "zip_longest"),
    ("UserDict", "IterableUserDict"): ("collections", "UserDict"),
    ("UserList", "UserList"): ("collections", "UserList"),
    ("UserString", "UserString"): ("collections", "UserString"),
    ("__builtin__", "basestring"): ("builtins", "str"),
    ("exceptions", "StandardError"): ("builtins", "Exception"),
    ("UserDict", "UserDict"): ("collections", "UserDict"),
}

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)
_DOCS = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def explain(message: str) -> str:
    """torch's full text for a ``weights_only`` failure whose unpickler said ``message``."""
    if " was not an allowed global by default." in message:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the checkpoint"
            f"\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            f"message.\n\tWeightsUnpickler error: {message}{_DOCS}"
        )
    if " must be imported to load" in message:
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n{_DOCS}"
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return f"{text}\n\n{message}{_DOCS}"


# ---------------------------------------------------------------------------------------------
# the user's allow-list
# ---------------------------------------------------------------------------------------------

_safe: set[Any] = set()


def add_safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> None:
    """Allow ``weights_only`` loads to use these classes and functions (as torch's
    ``torch.serialization.add_safe_globals``). An entry is the object, or ``(object, "its
    module.name in the file")``.

    Example:
        >>> import tapegrad as torch
        >>> torch.serialization.add_safe_globals([complex])
        >>> torch.serialization.clear_safe_globals()
    """
    _safe.update(safe_globals)


def get_safe_globals() -> list[Callable | tuple[Callable, str]]:
    """What :func:`add_safe_globals` allowed."""
    return list(_safe)


def clear_safe_globals() -> None:
    """Forget everything :func:`add_safe_globals` allowed."""
    _safe.clear()


class safe_globals:
    """A context manager that allows ``safe_globals`` for ``weights_only`` loads inside it.

    Example:
        >>> import tapegrad as torch
        >>> with torch.serialization.safe_globals([complex]):
        ...     pass
    """

    def __init__(self, safe_globals: list[Callable | tuple[Callable, str]]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        _safe.update(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _safe.difference_update(self.safe_globals)


def user_globals() -> dict[str, Any]:
    """``"module.name"`` -> object, for everything the user allowed."""
    out: dict[str, Any] = {}
    for entry in _safe:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(entry[1])}")
            out[entry[1]] = entry[0]
        else:
            out[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return out


def unsafe_globals(data: bytes) -> list[str]:
    """The names a pickle's GLOBAL instructions use that a weights_only load would refuse,
    found by reading the program, not running it."""
    allowed = set(torch_globals()) | set(user_globals())
    found = []
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name == "GLOBAL":
                module, name = str(arg).split(" ", 1)
                if (module, name) in _NAME_MAPPING:
                    module, name = _NAME_MAPPING[(module, name)]
                elif module in _IMPORT_MAPPING:
                    module = _IMPORT_MAPPING[module]
                full = f"{module}.{name}"
                if full not in allowed and full not in found:
                    found.append(full)
    except ValueError as exc:
        raise UnpicklingError(str(exc)) from None
    return found


# ---------------------------------------------------------------------------------------------
# the interpreter
# ---------------------------------------------------------------------------------------------


class Unpickler:
    """Runs one pickle program from ``data`` (bytes) starting at ``pos``, building only data.

    ``persistent_load(pid)`` is called for each ``('storage', ...)`` record."""

    def __init__(self, data: bytes, persistent_load: Callable[[Any], Any] | None = None, *,
                 pos: int = 0, encoding: str = "utf-8") -> None:
        self.data = data
        self.pos = pos
        self.encoding = encoding
        self.persistent_load = persistent_load or self._no_persistent_load
        self.memo: dict[int, Any] = {}
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.allowed = torch_globals()
        self.user = user_globals()
        self.callable_ids = {id(v) for v in self.allowed.values()} | {
            id(v) for v in self.user.values()}
        self.user_types = tuple(v for v in self.user.values() if isinstance(v, type))

    @staticmethod
    def _no_persistent_load(pid: Any) -> Any:
        raise UnpicklingError("unsupported persistent id encountered")

    # -- reading the program -------------------------------------------------------------------

    def _read(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        if len(out) < n:
            raise UnpicklingError("pickle data was truncated")
        self.pos += n
        return out

    def _readline(self) -> bytes:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise UnpicklingError("pickle data was truncated")
        line = self.data[self.pos:end]
        self.pos = end + 1
        return line

    # (an instruction on an empty stack fails as in torch's unpickler: an IndexError)
    def _pop(self) -> Any:
        if not self.stack:
            raise IndexError("pop from empty list")
        return self.stack.pop()

    def _top(self) -> Any:
        if not self.stack:
            raise IndexError("list index out of range")
        return self.stack[-1]

    def _pop_mark(self) -> list[Any]:
        if not self.metastack:
            raise IndexError("pop from empty list")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def load(self) -> Any:
        """Run the program to its STOP and return what it built."""
        ops = self._OPS
        while True:
            if self.pos >= len(self.data):
                raise EOFError
            code = self.data[self.pos]
            self.pos += 1
            op = ops.get(code)
            if op is None:
                raise UnpicklingError(f"Unsupported operand {code}")
            if op is Unpickler._stop:
                return self._pop()
            op(self)

    # -- the risky instructions, restricted ------------------------------------------------------

    def _global(self) -> None:
        module = self._readline().decode("utf-8")
        name = self._readline().decode("utf-8")
        if (module, name) in _NAME_MAPPING:
            module, name = _NAME_MAPPING[(module, name)]
        elif module in _IMPORT_MAPPING:
            module = _IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        if full in self.allowed:
            self.stack.append(self.allowed[full])
            return
        if full in self.user:
            self.stack.append(self.user[full])
            return
        if full in ("torch.nested._internal.nested_tensor.NestedTensor",
                    "torch.nested._internal.nested_tensor._rebuild_njt",
                    "torch._dynamo.decorators._DimRange"):
            raise UnpicklingError("``torch.nested`` and ``torch._dynamo`` must be imported to load "
                                  "nested jagged tensors (NJTs)")
        if full.startswith("torch.distributed.") and full.rsplit(".", 1)[-1] in (
                "DeviceMesh", "DTensorSpec", "TensorMeta", "DTensor", "Partial", "Replicate",
                "Shard"):
            raise UnpicklingError("``torch.distributed.tensor`` must be imported to load DTensors")
        if full.startswith("builtins"):
            rest = full[len("builtins"):]
            full = rest[1:] if rest.startswith(".") else "builtins" + rest
        raise UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{full}])` or the "
            f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
            "global if you trust this class/function."
        )

    def _newobj(self) -> None:
        args = self._pop()
        cls = self._pop()
        if cls is Parameter:
            self.stack.append(Parameter(*args))
        elif id(cls) in self.callable_ids and isinstance(cls, type):
            self.stack.append(cls.__new__(cls, *args))
        else:
            raise UnpicklingError("Can only create new object for nn.Parameter or classes "
                                  f"allowlisted via `add_safe_globals` but got {cls}")

    def _reduce(self) -> None:
        args = self._pop()
        func = self._top()
        if id(func) not in self.callable_ids:
            message = f"Trying to call reduce for unrecognized function {func}"
            if _has_self(func):
                message += f" which belongs to {func.__self__}"
            raise UnpicklingError(message)
        self.stack[-1] = func(*args)

    def _build(self) -> None:
        state = self._pop()
        inst = self._top()
        kind = type(inst)
        if kind is Tensor:
            if not isinstance(state, tuple) or len(state) != 4:
                raise UnpicklingError("Tensor state must be (storage, offset, size, stride)")
            inst._data = _view(*state)
        elif kind is Parameter or kind is OrderedDict:
            if not isinstance(state, dict):
                raise UnpicklingError(f"the state of {kind.__name__} must be a dict")
            inst.__dict__.update(state)
        elif kind in self.user_types or (id(kind) in self.callable_ids):
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
            else:
                slots = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slots = state
                if state:
                    inst.__dict__.update(state)
                if slots:
                    for k, v in slots.items():
                        setattr(inst, k, v)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {kind}")

    def _binpersid(self) -> None:
        pid = self._pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(
                f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and pid:
            tag = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
            if tag != "storage":
                raise UnpicklingError(
                    f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self.stack.append(self.persistent_load(pid))

    # -- containers ------------------------------------------------------------------------------

    def _check_list(self, action: str) -> list:
        """The list on top of the stack, which APPEND ("append to") or APPENDS ("extend")
        adds to."""
        target = self._top()
        if type(target) is not list:
            raise UnpicklingError(f"Can only {action} lists, but got {type(target)}")
        return target

    def _append(self) -> None:
        item = self._pop()
        self._check_list("append to").append(item)

    def _appends(self) -> None:
        items = self._pop_mark()
        self._check_list("extend").extend(items)

    def _check_mapping(self, opcode: str) -> Any:
        target = self._top()
        if type(target) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(target)}")
        return target

    def _setitem(self) -> None:
        value = self._pop()
        key = self._pop()
        self._check_mapping("SETITEM")[key] = value

    def _setitems(self) -> None:
        items = self._pop_mark()
        target = self._check_mapping("SETITEMS")
        if len(items) % 2:
            raise UnpicklingError("odd number of items for SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _mark(self) -> None:
        self.metastack.append(self.stack)
        self.stack = []

    def _tuple(self) -> None:
        items = tuple(self._pop_mark())  # (before naming self.stack: MARK changes it)
        self.stack.append(items)

    def _tuple_n(self, n: int) -> None:
        if len(self.stack) < n:
            raise IndexError("list index out of range")
        items = tuple(self.stack[len(self.stack) - n:])
        del self.stack[len(self.stack) - n:]
        self.stack.append(items)

    # -- memo ------------------------------------------------------------------------------------

    def _get(self, index: int) -> None:
        if index not in self.memo:
            raise KeyError(index)
        self.stack.append(self.memo[index])

    def _put(self, index: int) -> None:
        self.memo[index] = self._top()

    # -- values ----------------------------------------------------------------------------------

    def _binunicode(self) -> None:
        (n,) = struct.unpack("<I", self._read(4))
        self.stack.append(str(self._read(n), "utf-8", "surrogatepass"))

    def _short_binstring(self) -> None:
        n = self._read(1)[0]
        raw = self._read(n)
        self.stack.append(raw if self.encoding == "bytes" else raw.decode(self.encoding))

    def _long1(self) -> None:
        n = self._read(1)[0]
        self.stack.append(int.from_bytes(self._read(n), "little", signed=True))

    def _proto(self) -> None:
        proto = self._read(1)[0]
        if proto != 2:
            warnings.warn(
                f"Detected pickle protocol {proto} in the checkpoint, which was not the default "
                "pickle protocol used by `torch.load` (2). The weights_only Unpickler might not "
                "support all instructions implemented by this protocol, please file an issue "
                "for adding support if you encounter this.",
                stacklevel=4,
            )

    def _stop(self) -> None:  # handled in load()
        pass

    _OPS: dict[int, Callable[[Unpickler], None]] = {}


def _has_self(func: Any) -> bool:
    try:
        return hasattr(func, "__self__")
    except Exception:  # noqa: BLE001 - a hostile object's attribute lookup
        return False


def _install(table: dict[bytes, Callable[[Unpickler], None]]) -> None:
    Unpickler._OPS.update({code[0]: fn for code, fn in table.items()})


def _const(value: Any) -> Callable[[Unpickler], None]:
    return lambda u: u.stack.append(value)


def _fresh(factory: Callable[[], Any]) -> Callable[[Unpickler], None]:
    return lambda u: u.stack.append(factory())


_install({
    b"c": Unpickler._global, b"\x81": Unpickler._newobj, b"R": Unpickler._reduce,
    b"b": Unpickler._build, b"Q": Unpickler._binpersid,
    b"a": Unpickler._append, b"e": Unpickler._appends,
    b"s": Unpickler._setitem, b"u": Unpickler._setitems,
    b"(": Unpickler._mark, b"t": Unpickler._tuple,
    b"\x85": lambda u: u._tuple_n(1), b"\x86": lambda u: u._tuple_n(2),
    b"\x87": lambda u: u._tuple_n(3),
    b"N": _const(None), b"\x89": _const(False), b"\x88": _const(True), b")": _const(()),
    b"]": _fresh(list), b"}": _fresh(dict), b"\x8f": _fresh(set),
    b"J": lambda u: u.stack.append(struct.unpack("<i", u._read(4))[0]),
    b"K": lambda u: u.stack.append(u._read(1)[0]),
    b"M": lambda u: u.stack.append(struct.unpack("<H", u._read(2))[0]),
    b"G": lambda u: u.stack.append(struct.unpack(">d", u._read(8))[0]),
    b"X": Unpickler._binunicode, b"U": Unpickler._short_binstring,
    b"h": lambda u: u._get(u._read(1)[0]),
    b"j": lambda u: u._get(struct.unpack("<I", u._read(4))[0]),
    b"q": lambda u: u._put(u._read(1)[0]),
    b"r": lambda u: u._put(struct.unpack("<I", u._read(4))[0]),
    b"\x8a": Unpickler._long1, b"\x80": Unpickler._proto, b".": Unpickler._stop,
})

