"""``torch.device`` and what a CPU-only build of torch does when asked for another device.

tapegrad computes on the CPU only, and behaves as a CPU-only torch build does: a
``device`` object can name any device type torch knows (``device("cuda:1")`` builds), but
putting a tensor there raises the error that build raises::

    device("cuda")                  -> device(type='cuda')            (only a name)
    x.to("cuda"), zeros(2, device="cuda"), model.cuda()
                                    -> AssertionError: Torch not compiled with CUDA enabled
    x.to("mps")                     -> RuntimeError: PyTorch is not linked with support for mps
                                       devices
    x.to(0), x.cuda(0)              -> RuntimeError: Cannot access accelerator device when none is
                                       available.

``check`` is the one place a tensor-making call asks "may a tensor live on this device?";
it returns at once for ``None``, ``"cpu"`` and CPU devices, so the common call costs nothing.
``set_default_device`` (and ``with device(...)``) changes the device the factories use when
they are given none; a CUDA default makes every factory raise, as in torch.
"""

from __future__ import annotations

import enum
import importlib
import warnings
from typing import Any

from ._naming import public

# Every device type torch's parser accepts, in the order its error message lists them.
DEVICE_TYPES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
    "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)
_EXPECTED = (
    "Expected one of " + ", ".join(DEVICE_TYPES) + " device type at start of device string: "
)
NO_ACCELERATOR = "Cannot access accelerator device when none is available."
NO_CUDA = "Torch not compiled with CUDA enabled"
NO_XPU = "Torch not compiled with XPU enabled"
NO_MTIA = (
    "Torch not compiled with MTIA enabled. Ensure you have `import mtia.host_runtime.torch_mtia."
    "dynamic_library` in your python src file and include `//mtia/host_runtime/torch_mtia:"
    "torch_mtia` as your target dependency!"
)
NO_PINNED = (
    "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator "
    "is available on this system."
)
NO_ATEN_CUDA = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library."
)

_MISSING: Any = object()  # device() called without a type


def _type_name(value: Any) -> str:
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _index_arg(index: Any, position: str) -> int:
    """An explicit index argument as torch's parser takes it: an int (or integer-like)."""
    if isinstance(index, bool) or not hasattr(index, "__index__"):
        raise TypeError(f"device(): argument 'index'{position} must be int, not "
                        f"{_type_name(index)}")
    return int(index.__index__())


def _parse(text: str) -> tuple[str, int | None]:
    """'cuda:1' -> ('cuda', 1), with torch's errors for what its parser refuses."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    name, colon, rest = text.partition(":")
    if not name or not all(c.isalpha() or c == "_" for c in name):
        raise RuntimeError(f"Invalid device string: '{text}'")
    if name not in DEVICE_TYPES:
        raise RuntimeError(_EXPECTED + name)
    if not colon:
        index = None
    elif not rest or not rest.isdigit() or not rest.isascii() or (len(rest) > 1
                                                                      and rest[0] == "0"):
        raise RuntimeError(f"Invalid device string: '{text}'")
    else:
        if len(rest) > 9:
            raise RuntimeError(
                f"Could not parse device index '{rest}' in device string '{text}'"
            )
        index = int(rest)
    if name == "mkldnn" and not _warned_mkldnn:
        _warn_mkldnn_once()
    return name, index


_warned_mkldnn = False


def _warn_mkldnn_once() -> None:
    global _warned_mkldnn
    _warned_mkldnn = True  # torch's TORCH_WARN_ONCE: once per process
    warnings.warn(
        "'mkldnn' is no longer used as device type. So torch.device('mkldnn') will be "
        "deprecated and removed in the future. Please use other valid device types instead.",
        UserWarning,
        stacklevel=5,
    )


@public("")
class device:
    """``torch.device``: a device type and an optional index.

    Any device type torch knows can be named; tensors live on the CPU only (see ``check``).
    Used as a context manager, it sets the default device of the factories inside.

    Example:
        >>> import tapegrad as torch
        >>> torch.device("cuda:1")
        device(type='cuda', index=1)
        >>> torch.device("cpu", 0)
        device(type='cpu', index=0)
    """

    __slots__ = ("_type", "_index", "_previous")
    _type: str
    _index: int | None

    def __init__(self, type: Any = _MISSING, index: Any = None, *args: Any,
                 **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"device() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if type is _MISSING or args:
            given = [] if type is _MISSING else [type, index, *args]
            raise TypeError(
                "device() received an invalid combination of arguments - got "
                f"({', '.join(_type_name(a) for a in given)}), but expected one of:\n"
                " * (torch.device device)\n * (str type, int index = -1)\n"
            )
        self._previous: Any = None
        if isinstance(type, device):
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, str):
            name, parsed = _parse(type)
            if index is not None:
                value = _index_arg(index, " (position 2)")
                if parsed is not None:
                    raise RuntimeError(
                        "type (string) must not include an index because index was passed "
                        f"explicitly: {type}"
                    )
                if value < 0:
                    raise RuntimeError("Device index must not be negative")
                parsed = value
            self._type, self._index = name, parsed
            return
        if hasattr(type, "__index__") and not isinstance(type, bool):
            if int(type.__index__()) < 0:
                raise RuntimeError("Device index must not be negative")
            raise RuntimeError(NO_ACCELERATOR)  # an ordinal means the accelerator: none here
        raise TypeError(
            f"device() received an invalid combination of arguments - got ({_type_name(type)}), "
            "but expected one of:\n * (torch.device device)\n      didn't match because some of "
            f"the arguments have invalid types: (!{_type_name(type)}!)\n"
            " * (str type, int index = -1)\n"
        )

    @property
    def type(self) -> str:
        return self._type

    @type.setter
    def type(self, value: Any) -> None:
        raise AttributeError("attribute 'type' of 'torch.device' objects is not writable")

    @property
    def index(self) -> int | None:
        return self._index

    @index.setter
    def index(self, value: Any) -> None:
        raise AttributeError("attribute 'index' of 'torch.device' objects is not writable")

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return False  # torch: device("cpu") == "cpu" is False
        return other._type == self._type and other._index == self._index

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __lt__(self, other: object) -> bool:
        raise TypeError("comparison not implemented")

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __reduce__(self) -> tuple:
        args = (self._type,) if self._index is None else (self._type, self._index)
        return (device, args)

    def __enter__(self) -> device:
        self._previous = _default[0]
        set_default_device(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        set_default_device(self._previous)
        self._previous = None


CPU = device("cpu")

# The default device of the factories: None (the CPU) or what set_default_device was given.
_default: list[device | None] = [None]


def get_default_device() -> device:
    """The device factories use when given none (``cpu`` unless set otherwise)."""
    dev = _default[0]
    if dev is None:
        return CPU
    if dev._index is None and dev._type != "cpu":
        check(dev)  # torch asks the backend for its current index: raises on this build
    return dev


_DEVICE = device  # (set_default_device's parameter is named device, as torch's)


def set_default_device(device: Any) -> None:
    """Set the device factories use when given none (``None`` goes back to the CPU).

    Example:
        >>> import tapegrad as torch
        >>> torch.set_default_device("cpu")
        >>> torch.get_default_device()
        device(type='cpu')
        >>> torch.set_default_device(None)
    """
    if device is None:
        _default[0] = None
        return
    dev = device if isinstance(device, _DEVICE) else _DEVICE(device)
    _default[0] = None if (dev._type == "cpu" and dev._index is None) else dev


# torch's dispatcher names of the backends whose factories fail with NotImplementedError.
_BACKENDS = {"mps": "MPS", "ipu": "IPU", "xla": "XLA", "hip": "HIP", "ve": "VE", "fpga": "FPGA",
             "maia": "MAIA", "vulkan": "Vulkan", "lazy": "Lazy"}


def _refuse(dev: device, *, factory: bool = False) -> None:
    """Raise what a CPU-only torch raises for a tensor on ``dev`` (a non-CPU device);
    ``factory``: for a new tensor (zeros, randn, ...) rather than a copy (``to``, ``tensor``)."""
    name = dev._type
    if name in _BACKENDS and (factory or name == "lazy"):
        raise NotImplementedError(
            f"Could not run 'aten::empty.memory_format' with arguments from the "
            f"'{_BACKENDS[name]}' backend. This could be because the operator doesn't exist for "
            "this backend, or was omitted during the selective/custom build process (if using "
            "custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
            "https://fburl.com/ptmfixes for possible resolutions. 'aten::empty.memory_format' is "
            "only available for these backends: [CPU, Meta, ...]."
        )
    if name == "cuda":
        raise AssertionError(NO_CUDA)
    if name == "xpu":
        raise AssertionError(NO_XPU)
    if name == "mtia":
        raise AssertionError(NO_MTIA)
    if name in ("hpu", "privateuseone"):
        raise ModuleNotFoundError(f"No module named 'torch.{name}'")
    if name == "meta":
        raise NotImplementedError(
            "tapegrad has no meta tensors (shapes without storage): create the tensor on the "
            "CPU"
        )
    raise RuntimeError(f"PyTorch is not linked with support for {name} devices")


def check(dev: Any, factory: bool = False) -> None:
    """Raise torch's CPU-only error unless a tensor may live on ``dev`` (None: the default).

    Accepts None, a device, a device string or an ordinal, as the factories' ``device=`` does;
    ``factory``: the tensor is made from nothing (zeros, randn, ...), not copied.
    """
    if dev is None:
        dev = _default[0]
        if dev is None:
            return
    elif dev == "cpu":
        return
    if not isinstance(dev, device):
        dev = device(dev)
    if dev._type != "cpu":
        _refuse(dev, factory=factory)


def check_pin_memory(pin_memory: Any) -> None:
    """``pin_memory=True`` needs an accelerator, which a CPU-only build has not."""
    if pin_memory:
        raise RuntimeError(NO_PINNED)


def check_cuda_call(dev: Any) -> None:
    """What ``tensor.cuda(device)`` and ``module.cuda(device)`` raise on a CPU-only build."""
    if dev is None:
        raise AssertionError(NO_CUDA)
    if isinstance(dev, str) or isinstance(dev, device):
        d = dev if isinstance(dev, device) else device(dev)
        if d._type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        raise AssertionError(NO_CUDA)
    if hasattr(dev, "__index__") and int(dev.__index__()) < 0:
        raise RuntimeError("Device index must not be negative")
    raise RuntimeError(NO_ACCELERATOR)


def check_generator_device(dev: Any) -> device:
    """The device of a new ``Generator``: the CPU, or torch's error for one it cannot make."""
    d = dev if isinstance(dev, device) else device(dev)
    if d._type == "cpu":
        return CPU
    raise RuntimeError({
        "cuda": NO_ATEN_CUDA.replace("Cannot initialize CUDA", "Cannot get CUDA generator"),
        "xpu": "Cannot get XPU generator without ATen_xpu library.",
        "mps": "Cannot execute getNewGenerator() without MPS backend.",
        "meta": "META device type not an accelerator.",
    }.get(d._type, "Backend doesn`t support getNewGenerator()"))


def get_device_module(device: Any = None) -> Any:
    """The module of a device type (``torch.cuda`` for "cuda"; the CPU's, ``torch.cpu``, by
    default: this build's only accelerator is none)."""
    if device is None:
        kind = "cpu"
    elif isinstance(device, _DEVICE):
        kind = device.type
    elif isinstance(device, str):
        kind = _DEVICE(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    package = __name__.split(".")[0]
    try:
        return importlib.import_module(f"{package}.{kind}")
    except ImportError:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                           f"'torch.{kind}'.") from None


# -- torch.Stream, torch.Event: the device-generic queue and marker ----------------------------
# On the CPU, work runs in order as it is called: a stream has nothing to queue and an event
# nothing to mark; torch's CPU backend answers as these do (queries done, waits return, and
# recording an event is refused).

_NO_EVENTS = "cpu backend doesn't support events."


@public("")
class Stream:
    """``torch.Stream(device=None, *, priority=0)``: an in-order queue of work on a device;
    the CPU's runs everything as it is called."""

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        dev = globals()["device"](device if device is not None else "cpu")
        self.device_type = dev.type
        self.device_index = -1 if dev.index is None else dev.index
        self.stream_id = 0
        self.priority = priority

    @property
    def device(self) -> device:
        return globals()["device"](self.device_type)

    def query(self) -> bool:
        """Whether all work queued on the stream is done: always."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: done already."""

    def wait_event(self, event: Any) -> None:
        """Make later work wait for ``event``: nothing to wait for."""

    def wait_stream(self, stream: Any) -> None:
        raise RuntimeError(_NO_EVENTS)

    def record_event(self, event: Any = None) -> Any:
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self) -> Any:
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (
            (self.device_type, self.device_index, self.stream_id)
            == (other.device_type, other.device_index, other.stream_id))

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device_type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


@public("")
class Event:
    """``torch.Event(device=None, *, enable_timing=False, blocking=False,
    interprocess=False)``: a marker in a stream's work; the CPU's have nothing to mark."""

    def __init__(self, device: Any = None, *, enable_timing: bool = False,
                 blocking: bool = False, interprocess: bool = False) -> None:
        dev = globals()["device"](device if device is not None else "cpu")
        self.device_type = dev.type
        self.device_index = -1 if dev.index is None else dev.index
        self.event_id = 0
        self.enable_timing = enable_timing
        self.event_flag = int(enable_timing)

    @property
    def device(self) -> device:
        return globals()["device"](self.device_type)

    def record(self, stream: Any = None) -> None:
        raise RuntimeError(_NO_EVENTS)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Wait until the event is reached: it is."""

    def wait(self, stream: Any = None) -> None:
        """Make ``stream``'s later work wait for the event: nothing to wait for."""

    def elapsed_time(self, end_event: Any) -> float:
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError(_NO_EVENTS)

    def ipc_handle(self) -> Any:
        raise RuntimeError(_NO_EVENTS)

    @classmethod
    def from_ipc_handle(cls, device: Any, ipc_handle: Any) -> Event:
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self.device_type}, device_index="
                f"{self.device_index}, event_flag={self.event_flag}, event_id={self.event_id}")


@public("")
class AcceleratorError(RuntimeError):
    """An error an accelerator reported (none run here)."""


@public("")
class FatalError(Exception):
    """An unrecoverable error of torch's C++ core."""


@public(".utils.dlpack")
class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (``dlpack.h``); tapegrad's tensors live on ``kDLCPU``
    (``tapegrad.utils.dlpack.DLDeviceType``, kept beside the device for the Tensor's
    ``__dlpack_device__``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
