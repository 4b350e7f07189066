"""tapegrad: PyTorch's autograd, and the parts of PyTorch that training needs, on NumPy.

    import tapegrad as torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    print(x.grad)                      # tensor([2., 4.])

This module only gathers the public names; read ``_tensor.py``, then ``ops/_registry.py``, the
``ops/*`` families, ``autograd/graph.py`` and ``autograd/engine.py``.
"""

from __future__ import annotations

import importlib as _importlib
import math as _math
import sys as _sys
from typing import Any as _Any

from . import _allocator, _dtype
from . import _methods, _tensor_methods  # noqa: F401  (the Tensor's methods, attached)
from ._blas import get_num_threads, set_num_threads
from ._creation import (
    allclose,
    arange,
    as_tensor,
    asarray,
    empty,
    empty_like,
    equal,
    eye,
    from_numpy,
    full,
    full_like,
    is_floating_point,
    is_nonzero,
    is_tensor,
    isclose,
    linspace,
    logspace,
    numel,
    ones,
    ones_like,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from ._dtype import (
    bool_ as bool,  # noqa: A004 - torch.bool
)
from ._dtype import (
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from ._dtype import bfloat16 as _bf16
from ._dtype import uint16, uint32, uint64  # noqa: E402  (limited support, as in torch)
from ._dtype import complex32  # noqa: E402  (held exactly; no arithmetic: _dtype.py)
from ._finfo import finfo, iinfo
from ._printing import get_printoptions, printoptions, set_printoptions
from ._tensor import Size, Tensor, device


def detach(input: Tensor) -> Tensor:
    return input.detach()


from .autograd import (  # anomaly mode's switches (torch.is_anomaly_enabled, ...)
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops.elementwise import (
    abs,
    absolute,
    acos,
    add,
    addcdiv,
    addcmul,
    asin,
    atan,
    ceil,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    cos,
    cosh,
    div,
    divide,
    eq,
    exp,
    expm1,
    floor,
    floor_divide,
    fmod,
    ge,
    greater,
    greater_equal,
    gt,
    isfinite,
    isinf,
    isnan,
    le,
    lerp,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    multiply,
    ne,
    neg,
    negative,
    not_equal,
    pow,
    reciprocal,
    relu,
    remainder,
    round,
    rsqrt,
    sigmoid,
    sign,
    signbit,
    sin,
    sinh,
    sqrt,
    square,
    sub,
    tan,
    tanh,
    trunc,
    where,
)
from .ops.indexing import (
    gather,
    index_put,
    index_select,
    masked_fill,
    nonzero,
    scatter,
    scatter_add,
    take_along_dim,
)
from .ops.linalg import einsum, ger, inner, matmul, mv, outer, vdot
from .ops.reduction import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    argsort,
    count_nonzero,
    cumprod,
    cumsum,
    logsumexp,
    max,
    mean,
    min,
    nansum,
    prod,
    sort,
    std,
    std_mean,
    sum,
    topk,
    var,
    var_mean,
)
from .ops.shape import (
    alias,
    as_strided,
    broadcast_to,
    cat,
    chunk,
    clone,
    concat,
    concatenate,
    flatten,
    fliplr,
    flipud,
    hstack,
    meshgrid,
    moveaxis,
    movedim,
    narrow,
    repeat_interleave,
    roll,
    select,
    split,
    squeeze,
    stack,
    swapdims,
    t,
    transpose,
    tril,
    triu,
    unbind,
    unflatten,
    unsqueeze,
    vstack,
)
from .ops.special import (  # noqa: E402
    digamma,
    erf,
    erfc,
    erfinv,
    i0,
    lgamma,
    logit,
    mvlgamma,
    polygamma,
    sinc,
    xlogy,
)
from .ops.elementwise_math import (  # noqa: E402
    acosh,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    asinh,
    atan2,
    atanh,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    copysign,
    deg2rad,
    exp2,
    fix,
    float_power,
    fmax,
    fmin,
    frac,
    frexp,
    gcd,
    heaviside,
    hypot,
    lcm,
    ldexp,
    logaddexp,
    logaddexp2,
    nan_to_num,
    nextafter,
    positive,
    rad2deg,
    sgn,
)
from ._faces import dot, flip, log_softmax, norm, permute, reshape, rsub, softmax  # noqa: E402
from ._faces import addmm, baddbmm, bmm, mm, subtract, tensor_split, true_divide  # noqa: E402
from .ops.shape import swapaxes  # noqa: E402
from .ops.complex import (  # noqa: E402
    adjoint,
    angle,
    complex,
    conj,
    conj_physical,
    conj_physical_,
    imag,
    is_conj,
    is_neg,
    polar,
    real,
    resolve_conj,
    resolve_neg,
    view_as_complex,
    view_as_real,
)
from .ops.elementwise_math import isneginf, isposinf, isreal  # noqa: E402
from .ops.reduction import nanmean  # noqa: E402
from .ops.shape_composite import (  # noqa: E402
    argwhere,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    tril_indices,
    triu_indices,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    diag,
    diag_embed,
    diagflat,
    diagonal,
    dsplit,
    dstack,
    hsplit,
    ravel,
    rot90,
    row_stack,
    tile,
    trace,
    vsplit,
)
from .ops.scatter import (  # noqa: E402
    index_add,
    index_copy,
    index_fill,
    index_reduce,
    masked_scatter,
    masked_select,
    nonzero_static,
    put,
    scatter_reduce,
    take,
)
from .ops.view_scatter import (  # noqa: E402
    as_strided_scatter,
    diagonal_scatter,
    select_scatter,
    slice_scatter,
)
from .ops.sorting import (  # noqa: E402
    aminmax,
    cummax,
    cummin,
    kthvalue,
    logcumsumexp,
    median,
    mode,
    msort,
    nanmedian,
    unique,
    unique_consecutive,
)
from .ops.histograms import (  # noqa: E402
    bincount,
    bucketize,
    histc,
    histogram,
    histogramdd,
    isin,
    searchsorted,
    unravel_index,
)
from .ops.statistics import nanquantile, quantile  # noqa: E402
from .ops.spectral import istft, stft  # noqa: E402
from .ops.view_copies import split_with_sizes, unsafe_chunk, unsafe_split  # noqa: E402
from .ops.view_copies import detach_copy, narrow_copy, unsafe_split_with_sizes  # noqa: E402
from .ops.hashing import hash_tensor  # noqa: E402
from .ops.view_copies import COPIES as _COPIES  # noqa: E402

globals().update(_COPIES)  # alias_copy, permute_copy, view_copy, unbind_copy, ...
from .ops.filling import fill, fill_, zero_  # noqa: E402
from . import special  # noqa: E402
from . import _random  # noqa: E402  (installs Tensor.uniform_, normal_, ...)
from ._random import (  # noqa: E402
    Generator,
    _dirichlet_grad,
    _sample_dirichlet,
    _standard_gamma,
    _standard_gamma_grad,
    bernoulli,
    binomial,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from . import autograd  # noqa: E402
from .autograd import functional as _autograd_functional  # noqa: E402, F401  (see autograd/)
from . import linalg  # noqa: E402
from . import fft  # noqa: E402
from .ops.factorizations import geqrf, matrix_exp  # noqa: E402
from .ops.factorizations import orgqr  # noqa: E402
from .ops.decompositions import lu_unpack  # noqa: E402
from ._faces import lu  # noqa: E402
from .ops.decompositions import torch_lu_solve as lu_solve  # noqa: E402
from .ops.decompositions import torch_svd as svd  # noqa: E402
from .ops.linalg import addbmm, addmv, addr, tensordot  # noqa: E402
from .ops.linalg import inner  # noqa: E402, F811
from .ops.linalg_legacy import cholesky, matrix_power, ormqr, pca_lowrank, qr  # noqa: E402
from .ops.linalg_legacy import svd_lowrank  # noqa: E402
from .ops.solvers import cholesky_inverse, cholesky_solve, logdet, pinverse  # noqa: E402
from .ops.solvers import inverse, triangular_solve  # noqa: E402
from .ops.solvers import torch_det as det  # noqa: E402
from .ops.solvers import torch_slogdet as slogdet  # noqa: E402
from .ops.weight_norm import _weight_norm, norm_except_dim  # noqa: E402
from . import nn, optim, utils  # noqa: E402
from .ops.distance import cdist, pdist  # noqa: E402
from .nn._native import (  # noqa: E402
    grid_sampler, grid_sampler_2d, grid_sampler_3d, native_batch_norm, native_group_norm,
    native_layer_norm,
)
from .nn._native import batch_norm_update_stats  # noqa: E402
from ._storage import (  # noqa: E402  (storages; tensors on given strides; resize_)
    LEGACY_STORAGES as _LEGACY_STORAGES,
    TypedStorage,
    UntypedStorage,
    as_strided_,
    empty_permuted,
    empty_strided,
    from_file,
    resize_as_,
    slice_inverse,
)
from ._tensor_surface import index_put_, is_complex, is_distributed  # noqa: E402
from ._random import thread_safe_generator  # noqa: E402


for _storage_cls in _LEGACY_STORAGES.values():  # torch.FloatStorage, torch.LongStorage, ...
    globals()[_storage_cls.__name__] = _storage_cls
Storage = globals()["FloatStorage"]  # (torch.Storage is torch.FloatStorage)

if _bf16 is not None:
    bfloat16 = _bf16

half = float16
float = float32  # noqa: A001 - torch.float
double = float64
short = int16
int = int32  # noqa: A001 - torch.int
long = int64
cfloat = complex64
cdouble = complex128
chalf = complex32
from ._layout import layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc  # noqa: E402
from ._layout import jagged, sparse_csr, strided  # noqa: E402
# torch's constants: math's, and what this build has (LAPACK and FFTs through NumPy; neither
# MKL nor OpenMP: backends.mkl and backends.openmp say the same)
e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False
from ._memory_format import (  # noqa: E402  (torch.channels_last, ...)
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)

legacy_contiguous_format = contiguous_format  # (torch's is the same object)

from .torch_version import __version__  # noqa: E402  (2.13.0+tapegrad0.1.0, a TorchVersion)

_allocator.configure()


def result_type(tensor: object = None,  # noqa: F811 - torch's parameter name
                other: object = None, *, scalar: object = None, scalar1: object = None,
                scalar2: object = None) -> dtype:
    """The dtype an op on two operands gives (tensors, or numbers: ``scalar``, ``scalar1``,
    ``scalar2`` are torch's names for a number in either place)."""
    first = tensor if scalar1 is None else scalar1
    second = other if scalar2 is None else scalar2
    if scalar is not None:  # result_type(scalar, tensor)
        first, second = scalar, tensor if other is None else other
    return _dtype.result_type(first, second)


def can_cast(from_: dtype, to: dtype) -> object:
    """True when a value of ``from_`` may be cast to ``to`` (no category downgrade)."""
    return from_._rank <= to._rank


# -- a CPU-only PyTorch: devices, torch.cuda & co., settings, compile -----------------------

from ._compile import compile  # noqa: E402, A001 - torch.compile
from ._device import get_default_device, get_device_module, set_default_device  # noqa: E402
from ._device import AcceleratorError, Event, FatalError, Stream  # noqa: E402
from ._settings import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_num_interop_threads,
    use_deterministic_algorithms,
)

# -- the legacy typed tensor classes: torch.FloatTensor(2, 3), isinstance(x, torch.LongTensor) --

from ._legacy import TYPES as _LEGACY_TYPES  # noqa: E402
from ._legacy import set_default_tensor_type  # noqa: E402

FloatTensor = _LEGACY_TYPES["FloatTensor"]
DoubleTensor = _LEGACY_TYPES["DoubleTensor"]
HalfTensor = _LEGACY_TYPES["HalfTensor"]
LongTensor = _LEGACY_TYPES["LongTensor"]
IntTensor = _LEGACY_TYPES["IntTensor"]
ShortTensor = _LEGACY_TYPES["ShortTensor"]
CharTensor = _LEGACY_TYPES["CharTensor"]
ByteTensor = _LEGACY_TYPES["ByteTensor"]
BoolTensor = _LEGACY_TYPES["BoolTensor"]
if "BFloat16Tensor" in _LEGACY_TYPES:
    BFloat16Tensor = _LEGACY_TYPES["BFloat16Tensor"]

# Submodules imported on first use, so that ``import tapegrad`` does not pay for them.
_LAZY_MODULES = frozenset({"accelerator", "amp", "backends", "cuda", "distributions", "jit",
                           "version"})
_LAZY_MODULES = _LAZY_MODULES | {"show"}  # tapegrad.show: graph, trace, gradient health
_LAZY_MODULES = _LAZY_MODULES | {"cpu"}  # tapegrad.cpu: torch.cpu.amp.autocast
_LAZY_MODULES = _LAZY_MODULES | {"compiler"}  # tapegrad.compiler: capture and replay (compile)
_LAZY_MODULES = _LAZY_MODULES | {"_dynamo"}  # torch._dynamo's names, backed by tapegrad.compiler
_LAZY_MODULES = _LAZY_MODULES | {"func", "serialization"}  # torch.func; torch.save's formats
_LAZY_MODULES = _LAZY_MODULES | {"random", "testing", "profiler", "types", "return_types",
                                 "storage", "functional"}  # torch's modules of these names
_LAZY_MODULES = _LAZY_MODULES | {"hub"}  # torch.hub: checkpoints and hubconf.py models by URL
_LAZY_MODULES = _LAZY_MODULES | {"distributed"}  # torch.distributed (on MPI, when used)
_LAZY_NAMES = {"autocast": ("amp", "autocast"), "is_autocast_enabled": ("amp",
               "is_autocast_enabled"), "OutOfMemoryError": ("cuda", "OutOfMemoryError")}
_LAZY_NAMES["lobpcg"] = ("ops.lobpcg", "lobpcg")  # torch.lobpcg, loaded on first use
_LAZY_NAMES["GradScaler"] = ("amp", "GradScaler")  # torch.GradScaler is torch.amp's
_LAZY_NAMES.update(vmap=("func", "vmap"), load=("serialization", "load"),
                   save=("serialization", "save"), from_dlpack=("utils.dlpack", "from_dlpack"),
                   to_dlpack=("utils.dlpack", "to_dlpack"))
_LAZY_NAMES.update({name: ("_autocast", name) for name in (  # torch.autocast's state
    "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache",
    "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype",
    "get_autocast_ipu_dtype", "get_autocast_xla_dtype", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_autocast_ipu_enabled", "is_autocast_xla_enabled",
    "set_autocast_cache_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
    "set_autocast_dtype", "set_autocast_enabled", "set_autocast_gpu_dtype",
    "set_autocast_ipu_dtype", "set_autocast_ipu_enabled", "set_autocast_xla_dtype",
    "set_autocast_xla_enabled")})


def __getattr__(name: str) -> _Any:
    if name in _LAZY_MODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        module, attr = _LAZY_NAMES[name]
        return getattr(_importlib.import_module(f"{__name__}.{module}"), attr)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES))


from ._torch_alias import install as _alias_torch  # noqa: E402
from ._torch_alias import install_hints as _install_hints  # noqa: E402

_install_hints()  # `import torchvision` with none installed says what to write instead


def install_torch_alias() -> None:
    """Make ``import torch`` (and ``import torch.nn as nn``, ``from torch.utils.data import
    DataLoader``, ...) import tapegrad from now on in this process: for notebooks and the REPL,
    what ``tapegrad run`` does for a script. Calling it again does nothing more.

    Call it before anything imports the real torch. Where a real ``torch`` (or
    ``torchvision``) is already imported, it raises ``RuntimeError`` and changes nothing: the
    real torch's own code imports ``torch`` as it runs (printing a tensor does), so it would
    load tapegrad's modules and break; restart the interpreter (the notebook's kernel) and call
    this first, or write ``import tapegrad as torch``.

    Example:
        >>> import tapegrad
        >>> tapegrad.install_torch_alias()
        >>> import torch
        >>> torch.__name__
        'tapegrad'
    """
    for name in ("torch", "torchvision"):
        module = _sys.modules.get(name)
        if module is not None and not getattr(module, "__name__", "").startswith("tapegrad"):
            raise RuntimeError(
                f"install_torch_alias(): the real {name} is already imported in this process "
                f"({getattr(module, '__file__', None) or name}); tapegrad cannot stand in for "
                f"`{name}` now without breaking it (its own code imports `{name}` as it runs). "
                "Restart the interpreter (in Jupyter: the kernel) and call "
                "tapegrad.install_torch_alias() before anything imports torch, or write "
                "`import tapegrad as torch`.")
    _alias_torch()


# -- torch.conv2d, torch.batch_norm, torch.lstm, ...: nn ops under their ATen signatures ------

from .nn import _toplevel as _nn_toplevel  # noqa: E402

globals().update({_name: getattr(_nn_toplevel, _name) for _name in _nn_toplevel.__all__})

from . import signal  # noqa: E402  (torch.signal.windows)
from ._window_functions import (  # noqa: E402
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)

# -- torch.typename, is_signed, range, frombuffer, ... and Tensor.new, apply_, fill_diagonal_ --

from . import _torch_functions  # noqa: E402

for _name, _fn in _torch_functions.METHODS.items():
    if not hasattr(Tensor, _name):  # a family's own definition (adjoint: ops/complex) wins
        setattr(Tensor, _name, _fn)
for _name, _fn in _torch_functions.FUNCTIONS.items():
    globals().setdefault(_name, _fn)
from .ops.special import igamma, igammac  # noqa: E402

# -- differences and integrals, covariances, kron & block_diag, dist & renorm, eig, ... ------

from .ops.calculus import cumulative_trapezoid, diff, gradient, trapezoid, trapz  # noqa: E402
from .ops.statistics import corrcoef, cov  # noqa: E402
from .ops.shape_composite import block_diag, combinations, constant_pad_nd, kron  # noqa: E402
from .ops.linalg import torch_cross as cross  # noqa: E402
from .ops.norms import dist, frobenius_norm, native_norm, nuclear_norm, renorm  # noqa: E402
from .ops.linalg_legacy import chain_matmul, vander  # noqa: E402
from .ops.linalg_legacy import eig, lstsq, matrix_rank, solve, symeig  # noqa: E402  (removed)
from ._methods import METHODS as _METHODS  # noqa: E402

addmv_ = _METHODS["addmv_"]  # torch.addmv_(input, mat, vec, *, beta=1, alpha=1)
from ._control_flow import cond, while_loop  # noqa: E402  (eager torch.cond, torch.while_loop)
from .ops.segments import segment_reduce  # noqa: E402

# -- torch.abs_(x), torch.sin_(x), ...: the in-place function forms (ops/inplace.py) ----------

from .ops import inplace as _inplace  # noqa: E402

globals().update(_inplace.functions(Tensor))

# -- out=: torch.add(x, y, out=t) & co. (one seam for every function: _out.py) -----------------

from . import _out  # noqa: E402

# which dtypes out may have (default: one the result casts to; several results: theirs)
_out.rule(*"sum nansum prod cumsum cumprod".split(), dtype="any")
_out.rule(*"""mm bmm mv matmul addmm addmv addr addbmm baddbmm cross diag tril triu softmax
    log_softmax argmax argmin inverse cholesky cholesky_inverse orgqr ormqr lu_solve
    triangular_solve qr svd slogdet geqrf matrix_power""".split(), dtype="exact")
_out.install(globals(), """
    abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr alias_copy all amax amin mm
    aminmax angle any arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort
    as_strided_copy asin asinh atan atan2 atanh baddbmm bitwise_and bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil cholesky
    cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip column_stack complex concat
    concatenate conj_physical copysign cos cosh cross cummax cummin cumprod cumsum deg2rad
    detach_copy diag diagonal_copy diff digamma div divide dot dstack eq erf erfc erfinv exp exp2
    expand_copy expm1 fix float_power floor floor_divide fmax fmin fmod frac frexp frobenius_norm
    gather gcd ge geqrf ger greater greater_equal gt hash_tensor heaviside histc histogram hstack
    hypot i0 igamma igammac index_add index_copy index_reduce index_select inner inverse isin
    isneginf isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma log log10 log1p log2
    log_softmax logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor
    logit logsumexp lt lu_solve lu_unpack masked_select matmul matrix_power max maximum mean
    median min minimum mode msort mul multiply mv mvlgamma nan_to_num nanmean nanmedian
    nanquantile nansum narrow_copy native_batch_norm ne neg negative nextafter nonzero
    nonzero_static not_equal nuclear_norm orgqr ormqr outer permute_copy polar polygamma pow
    prod qr quantile rad2deg reciprocal remainder renorm round row_stack rsqrt scatter
    scatter_add scatter_reduce searchsorted select_copy sgn sigmoid sign signbit sin sinc sinh
    slice_copy slice_scatter slogdet softmax sort split_copy split_with_sizes_copy sqrt square
    squeeze_copy stack std sub subtract sum svd t_copy take take_along_dim tan tanh threshold
    topk transpose_copy triangular_solve tril triu true_divide trunc unbind_copy unfold_copy
    unsqueeze_copy var vdot view_as_complex_copy view_as_real_copy view_copy vstack where xlogy
""")
_out.install(globals(), "arange empty eye full linspace logspace ones range zeros", factory=True)

newaxis: None = None  # torch.newaxis (NumPy's: indexing with it adds a dimension)

# -- NumPy's names for a dimension: x.sum(axis=0), torch.argmax(x, axis=1, keepdims=True) -----

from . import _numpy_names  # noqa: E402
from types import FunctionType as _FunctionType  # noqa: E402

for _name, _fn in list(vars(Tensor).items()):
    if isinstance(_fn, _FunctionType) and not _name.startswith("_"):
        setattr(Tensor, _name, _numpy_names.accept(_fn, _name, method=True))
for _name, _fn in list(globals().items()):
    if isinstance(_fn, _FunctionType) and not _name.startswith("_"):
        globals()[_name] = _numpy_names.accept(_fn, _name)
del _name, _fn
