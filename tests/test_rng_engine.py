"""tapegrad._rng against torch's CPU generator: every value compared bit for bit.

Each test runs the same calls on an :class:`Engine` and on a ``torch.Generator`` seeded alike,
compares the raw bits of every result (``np.array_equal`` on unsigned views, never closeness) and
usually the 5056 state bytes afterwards.

Some last bits depend on torch's CPU capability: float32/float16/bfloat16 ``normal_`` with 16 or
more elements (avx_mathfun vs libm) and every ``uniform_``/``normal_`` with non-trivial bounds,
mean or std (FMA contraction). The engine reproduces the x86-64 AVX2/AVX-512 build. On a machine
whose torch reports another capability, those values are compared with a reference recorded on an
AVX-512 machine (tests/data/rng_avx2_reference.npz) instead of with the local torch, which still
runs to keep its stream and state in step. Re-record it on an AVX2/AVX-512 machine with::

    TAPEGRAD_RECORD_RNG=1 python -m pytest tests/test_rng_engine.py
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tapegrad import _rng  # noqa: E402
from tapegrad._rng import DEFAULT_SEED, STATE_SIZE, Engine, place  # noqa: E402

CAPABILITY = torch.backends.cpu.get_cpu_capability()
FUSED = CAPABILITY in ("AVX2", "AVX512")
REFERENCE_PATH = Path(__file__).parent / "data" / "rng_avx2_reference.npz"
RECORD = bool(os.environ.get("TAPEGRAD_RECORD_RNG"))
_recorded: dict[str, np.ndarray | str] = {}
_reference: dict[str, np.ndarray | str] | None = None

SEEDS = [0, 1, 42, 2**32 + 5, 2**63 + 12345]
SIZES = [1, 15, 16, 17, 100, 4096, 100003]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
TORCH_DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


def np_dtype(name: str):
    """NumPy dtype for the engine; bfloat16 is passed by name (ml_dtypes or uint16 bits)."""
    return "bfloat16" if name == "bfloat16" else np.dtype(name)


def raw(a) -> np.ndarray:
    """The bits of an ndarray or tensor as unsigned integers (bool stays bool)."""
    if isinstance(a, torch.Tensor):
        a = a.detach()
        if a.dtype == torch.bfloat16:
            a = a.view(torch.int16)
        a = a.contiguous().numpy()
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return a
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def assert_bits(ours, theirs, what: str = "") -> None:
    o, t = raw(ours), raw(theirs)
    assert o.shape == t.shape, f"{what}: shape {o.shape} != {t.shape}"
    assert o.dtype == t.dtype, f"{what}: dtype {o.dtype} != {t.dtype}"
    if not np.array_equal(o, t):
        bad = np.flatnonzero(o != t)
        pytest.fail(f"{what}: {bad.size}/{o.size} values differ, first at {bad[:5].tolist()}")


def _digest(a: np.ndarray) -> np.ndarray | str:
    """A recorded value: the bits themselves when small, else shape, dtype and SHA-256."""
    if a.size <= 64:
        return a
    return f"{a.shape} {a.dtype} {hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}"


def _save_reference(values: dict[str, np.ndarray | str]) -> None:
    """All values in two arrays (an index as JSON and one byte blob), to keep the file small."""
    index, blobs, offset = {}, [], 0
    for key, v in values.items():
        if isinstance(v, str):
            index[key] = v
        else:
            index[key] = [v.dtype.str, list(v.shape), offset, v.nbytes]
            blobs.append(v.tobytes())
            offset += v.nbytes
    REFERENCE_PATH.parent.mkdir(exist_ok=True)
    np.savez_compressed(
        REFERENCE_PATH,
        index=np.array(json.dumps(index)),
        blob=np.frombuffer(b"".join(blobs), np.uint8),
    )


def _load_reference() -> dict[str, np.ndarray | str]:
    with np.load(REFERENCE_PATH) as data:
        index, blob = json.loads(str(data["index"])), data["blob"]
    out: dict[str, np.ndarray | str] = {}
    for key, v in index.items():
        if isinstance(v, str):
            out[key] = v
        else:
            dtype, shape, offset, nbytes = v
            out[key] = blob[offset : offset + nbytes].view(dtype).reshape(shape)
    return out


def check(key: str, ours, theirs, dependent: bool = False) -> None:
    """Compare with torch's value, or, for capability-dependent values on a machine that is not
    AVX2/AVX-512, with the recorded AVX reference (torch has still run, to keep in step)."""
    global _reference
    if dependent and RECORD:
        _recorded[key] = _digest(raw(theirs))
    if dependent and not FUSED:
        if _reference is None:
            _reference = _load_reference()
        assert key in _reference, f"{key} is missing from {REFERENCE_PATH.name}"
        ref = _reference[key]
        key += f" (recorded AVX reference; this torch is {CAPABILITY})"
        if isinstance(ref, str):
            assert _digest(raw(ours)) == ref, f"{key}: bits differ from the reference"
            return
        theirs = ref
    assert_bits(ours, theirs, key)


def check_state(e: Engine, g) -> None:
    assert_bits(e.get_state(), g.get_state(), "state bytes")


def pair(seed: int) -> tuple[Engine, torch.Generator]:
    return Engine(seed), torch.Generator().manual_seed(seed)


@pytest.fixture(scope="module", autouse=True)
def _record_reference():
    yield
    if RECORD:
        assert FUSED, "record the reference on an AVX2/AVX-512 machine"
        _save_reference(_recorded)


@pytest.fixture
def global_rng():
    """Tests that use torch's default generator leave it as they found it."""
    saved = torch.get_rng_state()
    yield
    torch.set_rng_state(saved)


def test_capability_note():
    if not FUSED:
        pytest.skip(
            f"torch reports CPU capability {CAPABILITY}: capability-dependent float values are "
            f"compared with the AVX reference in {REFERENCE_PATH.name}, not with this torch"
        )


# -- engine, seeding, state ---------------------------------------------------------------------


def test_default_seed_and_state():
    g = torch.Generator()
    assert DEFAULT_SEED == g.initial_seed() == Engine().initial_seed()
    assert_bits(Engine().get_state(), g.get_state(), "default state")
    assert Engine().get_state().shape == (STATE_SIZE,)


@pytest.mark.parametrize("seed", SEEDS + [-1, -(2**63), 2**64 - 1, 2**32, 7 * 2**32 + 3])
def test_manual_seed_and_state_bytes(seed):
    e, g = pair(seed)
    assert e.initial_seed() == g.initial_seed()
    check_state(e, g)
    # draw across several 624-word twists, ending on and just after block boundaries
    for n in [1, 622, 1, 624, 1248, 3, 2000]:
        check(f"rand {n}", e.uniform((n,), np.float32), torch.rand(n, generator=g))
        check_state(e, g)


def _error(fn: Callable[[], object]) -> tuple[type, str]:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc), str(exc)
    raise AssertionError("no error raised")


@pytest.mark.parametrize("bad", [2**64, -(2**63) - 1, 3.0, True, "7"])
def test_manual_seed_errors_like_torch(bad):
    ours = _error(lambda: Engine().manual_seed(bad))
    theirs = _error(lambda: torch.Generator().manual_seed(bad))
    assert ours == theirs


def test_seed_is_random_64_bit_and_reproducible():
    e = Engine()
    seeds = {e.seed() for _ in range(8)}
    assert len(seeds) == 8 and all(0 <= s < 2**64 for s in seeds)
    s = e.seed()
    assert e.initial_seed() == s
    check_state(e, torch.Generator().manual_seed(s))


def test_reseeding_clears_the_cached_normal():
    e, g = pair(3)
    check("randn 3", e.normal((3,), np.float64), torch.randn(3, generator=g, dtype=torch.float64))
    e.manual_seed(3)
    g.manual_seed(3)
    check_state(e, g)
    check("randn 1", e.normal((1,), np.float64), torch.randn(1, generator=g, dtype=torch.float64))


def test_set_state_from_torch_continues_the_stream():
    g = torch.Generator().manual_seed(11)
    torch.randn(3, generator=g)  # leaves a cached normal in the state
    torch.rand(1000, generator=g)
    e = Engine()
    e.set_state(g.get_state().numpy())
    check_state(e, g)
    assert e.initial_seed() == 11
    check("cached", e.normal((5,), np.float64), torch.randn(5, generator=g, dtype=torch.float64))
    check("rand", e.uniform((700,), np.float32), torch.rand(700, generator=g))
    # and back: torch continues from the engine's state
    g2 = torch.Generator()
    g2.set_state(torch.from_numpy(e.get_state()))
    check(
        "randn", e.normal((100,), np.float64), torch.randn(100, generator=g2, dtype=torch.float64)
    )
    check_state(e, g2)


def _put(state: np.ndarray, offset: int, value, dtype) -> np.ndarray:
    out = state.copy()
    b = np.frombuffer(np.array(value, dtype).tobytes(), np.uint8)
    out[offset : offset + b.size] = b
    return out


@pytest.mark.parametrize(
    "left,nxt", [(1, 0), (5, 0), (624, 1), (10, 100), (1, 624), (624, 0), (2, 623), (1, 2**32 + 5)]
)
def test_set_state_hand_made_left_next(left, nxt):
    g = torch.Generator().manual_seed(3)
    torch.randn(3, generator=g)
    state = _put(_put(g.get_state().numpy(), 8, left, "<i4"), 16, nxt, "<u8")
    g.set_state(torch.from_numpy(state))
    e = Engine()
    e.set_state(state)
    for m in [0, 1, 3, 4, 9, 20, 700, 2]:
        check_state(e, g)
        check(f"randint {m}", e.randint(0, 2**20, (m,)), torch.randint(0, 2**20, (m,), generator=g))
    check_state(e, g)


def test_set_state_flags_and_float_cache_round_trip():
    g = torch.Generator().manual_seed(5)
    torch.randn(1, generator=g)
    state = g.get_state().numpy()
    state = _put(state, 5040, 2, "<i4")  # any non-zero flag counts as valid
    state = _put(_put(state, 5048, 7.5, "<f4"), 5052, 3, "u1")  # float cache, unused by draws
    state = _put(state, 12, 9, "<i4")  # 'seeded': any non-zero value
    g.set_state(torch.from_numpy(state))
    e = Engine()
    e.set_state(state)
    check_state(e, g)
    check("randn", e.normal((3,), np.float32), torch.randn(3, generator=g))
    check_state(e, g)


def test_set_state_errors_like_torch():
    e, g = pair(0)
    for n in [0, 5055, 5057]:
        ours = _error(lambda n=n: e.set_state(np.zeros(n, np.uint8)))
        theirs = _error(lambda n=n: g.set_state(torch.zeros(n, dtype=torch.uint8)))
        assert ours == theirs
    ok = g.get_state().numpy()
    for bad in [_put(ok, 12, 0, "<i4"), _put(ok, 8, 0, "<i4"), _put(ok, 8, 625, "<i4")]:
        ours = _error(lambda bad=bad: e.set_state(bad))
        theirs = _error(lambda bad=bad: g.set_state(torch.from_numpy(bad)))
        assert ours == theirs
    with pytest.raises(TypeError, match="ByteTensor"):
        e.set_state(np.zeros(STATE_SIZE, np.int64))


# -- uniform ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_rand(seed, dtype):
    e, g = pair(seed)
    for n in SIZES:
        ours = e.uniform((n,), np_dtype(dtype))
        check(f"rand {n}", ours, torch.rand(n, generator=g, dtype=TORCH_DTYPES[dtype]))
    check_state(e, g)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_uniform_bounds(seed, dtype):
    e, g = pair(seed)
    for lo, hi in [(-0.3, 0.3), (2.5, 3.75), (-1.7, 2.9), (0.1, 0.3), (-1e-3, 5.0)]:
        for n in [17, 1000]:
            ours = e.uniform((n,), np_dtype(dtype), lo, hi)
            t = torch.empty(n, dtype=TORCH_DTYPES[dtype]).uniform_(lo, hi, generator=g)
            check(f"uniform {seed} {dtype} {lo} {hi} {n}", ours, t, dependent=True)
    check_state(e, g)


def test_uniform_value_equal_to_high_becomes_low():
    # bfloat16 values near 1 round up to 1.0 and come back as 0
    e, g = pair(0)
    ours = e.uniform((20000,), "bfloat16")
    theirs = torch.rand(20000, generator=g, dtype=torch.bfloat16)
    check("bf16 rand", ours, theirs)
    assert (raw(ours) == 0).sum() > 0


def test_uniform_errors_like_torch():
    pairs = [
        (lambda: Engine().uniform((3,), np.float32, 1, 0), lambda: torch.empty(3).uniform_(1, 0)),
        (
            lambda: Engine().uniform((3,), np.int64),
            lambda: torch.empty(3, dtype=torch.long).uniform_(),
        ),
        (
            lambda: Engine().uniform((3,), np.float32, -3e38, 3e38),
            lambda: torch.empty(3).uniform_(-3e38, 3e38),
        ),
    ]
    for ours, theirs in pairs:
        assert _error(ours) == _error(theirs)


# -- normal -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_randn(seed, dtype):
    e, g = pair(seed)
    for n in SIZES:
        ours = e.normal((n,), np_dtype(dtype))
        theirs = torch.randn(n, generator=g, dtype=TORCH_DTYPES[dtype])
        # float32/16/bf16 with >= 16 elements: avx_mathfun on AVX2, libm elsewhere
        check(f"randn {seed} {dtype} {n}", ours, theirs, dependent=dtype != "float64" and n >= 16)
    check_state(e, g)


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_mean_std(dtype):
    e, g = pair(7)
    for mean, std in [(0.5, 0.02), (-3.0, 2.5), (0.0, 0.1), (1.5, 1.0)]:
        for n in [5, 16, 17, 1000]:
            ours = e.normal((n,), np_dtype(dtype), mean, std)
            t = torch.empty(n, dtype=TORCH_DTYPES[dtype]).normal_(mean, std, generator=g)
            fill_fma_explicit = dtype == "float64" and n >= 16  # std::fma on every capability
            check(f"normal {dtype} {mean} {std} {n}", ours, t, dependent=not fill_fma_explicit)
    check_state(e, g)


def test_normal_cache_crosses_calls_dtypes_and_paths():
    e, g = pair(1)
    ops = [
        (1, "float64", 0.0, 1.0),
        (3, "float32", 0.0, 1.0),
        (100, "float32", 0.0, 1.0),  # the fill path leaves the cache alone
        (1, "float16", 0.0, 1.0),
        (2, "float64", 10.0, 1.0),
        (7, "float64", 0.0, 1.0),
        (20, "float64", 0.0, 1.0),
        (5, "bfloat16", 0.0, 1.0),
    ]
    for i, (n, dtype, mean, std) in enumerate(ops):
        ours = e.normal((n,), np_dtype(dtype), mean, std)
        t = torch.empty(n, dtype=TORCH_DTYPES[dtype]).normal_(mean, std, generator=g)
        check(f"cache op {i}", ours, t, dependent=dtype != "float64" and n >= 16)
        check_state(e, g)


def test_normal_zero_radius_sign():
    # word 24739640 of seed 1 has 24 zero bits: u1 = 1, radius = -0.0, and cos, sin > 0, so
    # radius * cos = -0.0; torch's fmaf(v, std, mean) turns it into +0.0
    for dtype in ["float32", "float16"]:
        e, g = pair(1)
        e.uniform((24739640,), np.float32)
        torch.rand(24739640, generator=g)
        ours = e.normal((16,), np_dtype(dtype))
        check(
            f"zero radius {dtype}",
            ours,
            torch.randn(16, generator=g, dtype=TORCH_DTYPES[dtype]),
            dependent=True,
        )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_tensor_args(dtype):
    e, g = pair(5)
    rng = np.random.default_rng(2)
    for shape in [(5,), (40,), (3, 7)]:
        m = rng.standard_normal(shape).astype(dtype)
        s = (rng.random(shape) * 3).astype(dtype)
        tm, ts = torch.from_numpy(m), torch.from_numpy(s)
        dep = dtype != "float64" and math.prod(shape) >= 16
        check(
            f"normal(T,T) {dtype} {shape}",
            e.normal_tensor(m, s, dtype),
            torch.normal(tm, ts, generator=g),
            dependent=dep,
        )
        check(
            f"normal(T,f) {dtype} {shape}",
            e.normal_tensor(m, 0.7, dtype),
            torch.normal(tm, 0.7, generator=g),
            dependent=True,
        )
        check(
            f"normal(f,T) {dtype} {shape}",
            e.normal_tensor(0.3, s, dtype),
            torch.normal(0.3, ts, generator=g),
            dependent=dep,
        )
        s1 = np.ascontiguousarray(s[..., :1])
        check(
            f"normal(T,T) bcast {dtype} {shape}",
            e.normal_tensor(m, s1, dtype),
            torch.normal(tm, torch.from_numpy(s1), generator=g),
            dependent=dep,
        )
    check_state(e, g)


# -- non-contiguous destinations ------------------------------------------------------------------

STRIDED = [
    ("t()", lambda: torch.empty(8, 4).t()),
    ("[:, ::2]", lambda: torch.empty(6, 10)[:, ::2]),
    ("permute", lambda: torch.empty(3, 4, 5).permute(2, 0, 1)),
    ("big t()", lambda: torch.empty(50, 30).t()),
    ("size-1 dims", lambda: torch.empty(5, 1, 7).transpose(0, 2)),
    ("3-d steps", lambda: torch.empty(6, 7, 8)[::2, :, 1::3]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name,make", STRIDED, ids=[s[0] for s in STRIDED])
def test_strided_fill_order(name, make, dtype, global_rng):
    torch.manual_seed(9)
    e = Engine(9)
    base = make()
    x = torch.empty(base.untyped_storage().nbytes() // 4, dtype=TORCH_DTYPES[dtype])
    x = x.as_strided(base.shape, base.stride(), base.storage_offset())
    shape, strides, n, contig = tuple(x.shape), x.stride(), x.numel(), x.is_contiguous()
    dt = np_dtype(dtype)
    x.normal_()
    check(
        f"normal_ {name}",
        place(e.normal((n,), dt, contiguous=contig), shape, strides),
        x,
        dependent=contig and dtype != "float64" and n >= 16,
    )
    x.uniform_()
    check(f"uniform_ {name}", place(e.uniform((n,), dt), shape, strides), x)
    x.bernoulli_(0.3)
    check(f"bernoulli_ {name}", place(e.bernoulli(0.3, (n,), dt), shape, strides), x)
    x.exponential_(2.0)
    check(f"exponential_ {name}", place(e.exponential((n,), dt, 2.0), shape, strides), x)
    x.random_(0, 100)
    check(f"random_ {name}", place(e.random_((n,), dt, 0, 100), shape, strides), x)
    check_state(e, torch.default_generator)


def test_fill_order_is_memory_order():
    order = _rng.fill_order((4, 8), (1, 4))  # empty(8, 4).t()
    assert order.tolist() == np.arange(32).reshape(4, 8).T.ravel().tolist()
    assert _rng.fill_order((3, 5), (5, 1)).tolist() == list(range(15))


# -- integers -----------------------------------------------------------------------------------

RANGES = [
    (0, 10),
    (-5, 5),
    (0, 2**28 - 1),
    (0, 2**28),
    (0, 2**28 + 1),
    (0, 2**31),
    (0, 2**32),
    (0, 2**32 + 1),
    (-(2**40), 2**40),
    (-(2**62), 2**62),
    (-(2**63), 2**63 - 1),
    (3, 2**63 - 1),
]


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_randint_ranges(seed):
    e, g = pair(seed)
    for lo, hi in RANGES:
        check(
            f"randint {lo} {hi}",
            e.randint(lo, hi, (50,)),
            torch.randint(lo, hi, (50,), generator=g),
        )
    check_state(e, g)


DTYPE_RANGES = [
    ("int32", -100, 100),
    ("int16", 0, 1000),
    ("uint8", 0, 256),
    ("int8", -128, 128),
    ("int32", -(2**31), 2**31),
    ("bool", 0, 2),
    ("float32", 0, 10),
    ("float64", -7, 2**40),
    ("float16", 0, 100),
    ("bfloat16", -3, 30),
    ("float32", 2**30, 2**30 + 1000),  # beyond the mantissa: from/to are nudged
    ("float32", -(2**40), 2**40),
    ("float64", 2**60, 2**62),
    ("float16", 1000, 5000),
    ("bfloat16", -1000, 3000),
]


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_randint_dtypes(seed):
    e, g = pair(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype, lo, hi in DTYPE_RANGES:
            ours = e.randint(lo, hi, (40,), np_dtype(dtype))
            theirs = torch.randint(lo, hi, (40,), generator=g, dtype=TORCH_DTYPES[dtype])
            check(f"randint {dtype} {lo} {hi}", ours, theirs)
    check_state(e, g)


def test_randint_float_range_warns_like_torch():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        Engine().randint(0, 2**30, (3,), np.float32)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_random_(seed):
    e, g = pair(seed)
    for name in TORCH_DTYPES:
        dt, td = np_dtype(name), TORCH_DTYPES[name]
        check(
            f"random_() {name}",
            e.random_((30,), dt),
            torch.empty(30, dtype=td).random_(generator=g),
        )
        if name != "bool":
            ours = e.random_((30,), dt, 5)
            check(
                f"random_(5, None) {name}",
                ours,
                torch.empty(30, dtype=td).random_(5, None, generator=g),
            )
            ours = e.random_((30,), dt, 0, 7)
            check(f"random_(7) {name}", ours, torch.empty(30, dtype=td).random_(7, generator=g))
    for name in ["int64", "float64", "float32", "bfloat16"]:
        td = TORCH_DTYPES[name]
        theirs = torch.empty(30, dtype=td).random_(-(2**63), None, generator=g)
        check(f"random_ full {name}", e.random_((30,), np_dtype(name), -(2**63)), theirs)
    check_state(e, g)


def test_integer_errors_like_torch():
    pairs = [
        (lambda: Engine().randint(5, 5, (3,)), lambda: torch.randint(5, 5, (3,))),
        (
            lambda: Engine().randint(0, 300, (3,), np.uint8),
            lambda: torch.randint(0, 300, (3,), dtype=torch.uint8),
        ),
        (
            lambda: Engine().randint(-1, 3, (3,), np.uint8),
            lambda: torch.randint(-1, 3, (3,), dtype=torch.uint8),
        ),
        (lambda: Engine().randperm(-1), lambda: torch.randperm(-1)),
    ]
    for ours, theirs in pairs:
        assert _error(ours) == _error(theirs)


@pytest.mark.parametrize("seed", SEEDS)
def test_randperm(seed):
    e, g = pair(seed)
    for n in [0, 1, 2, 5, 10, 100, 1000, 30000, 100003]:
        check(f"randperm {n}", e.randperm(n), torch.randperm(n, generator=g))
    check("int32", e.randperm(77, np.int32), torch.randperm(77, generator=g, dtype=torch.int32))
    check_state(e, g)


def _swap_reference(words: np.ndarray, n: int) -> np.ndarray:
    r = list(range(n))
    for i in range(n - 1):
        j = i + int(words[i]) % (n - i)
        r[i], r[j] = r[j], r[i]
    return np.array(r, dtype=np.int64)


def _inside_out_reference(r64: np.ndarray, n: int) -> np.ndarray:
    r = [0] * n
    for i in range(n):
        z = int(r64[i]) % (i + 1)
        r[i] = r[z]
        r[z] = i
    return np.array(r, dtype=np.int64)


def test_vectorised_shuffles_match_the_sequential_loops():
    rng = np.random.default_rng(0)
    assert _rng._RANDPERM_64BIT_FROM == 214748364
    for n in list(range(1, 30)) + [100, 2000]:
        for trial in range(12):
            hi = 3 if trial < 6 else 2**32  # small words: many self-swaps and long chains
            w = rng.integers(0, hi, max(n - 1, 0), dtype=np.uint64).astype(np.uint32)
            assert np.array_equal(_rng._swap_shuffle(w, n), _swap_reference(w, n))
            r64 = rng.integers(0, 2**63 if trial >= 6 else 3, n, dtype=np.uint64)
            assert np.array_equal(_rng._inside_out_shuffle(r64, n), _inside_out_reference(r64, n))


# -- bernoulli, dropout, exponential, multinomial ----------------------------------------------


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_bernoulli(seed):
    e, g = pair(seed)
    for p in [0.0, 0.3, 0.5, 1.0]:
        check(
            f"p={p}",
            e.bernoulli(p, (100,), np.float32),
            torch.empty(100).bernoulli_(p, generator=g),
        )
    check(
        "bool",
        e.bernoulli(0.4, (100,), np.bool_),
        torch.empty(100, dtype=torch.bool).bernoulli_(0.4, generator=g),
    )
    for name in FLOATS:
        if name == "bfloat16" and _rng._bf16() is None:
            continue  # a bfloat16 probability array needs ml_dtypes
        p = np.random.default_rng(seed).random(200).astype(np.float32)
        tp = torch.from_numpy(p).to(TORCH_DTYPES[name])
        pn = tp.float().numpy().astype(name) if name != "bfloat16" else _to_engine_bf16(tp)
        check(
            f"bernoulli(p {name})",
            e.bernoulli(pn, None, pn.dtype if name != "bfloat16" else "bfloat16"),
            torch.bernoulli(tp, generator=g),
        )
        check(
            f"bernoulli_(p {name})",
            e.bernoulli(pn, (200,), np.float32),
            torch.empty(200).bernoulli_(tp, generator=g),
        )
    check_state(e, g)


def _to_engine_bf16(t) -> np.ndarray:
    bits = t.view(torch.int16).numpy().view(np.uint16)
    bf16 = _rng._bf16()
    return bits.view(bf16) if bf16 is not None else bits


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("p", [0.1, 0.25, 0.5])
def test_dropout(p, dtype, global_rng):
    torch.manual_seed(3)
    e = Engine(3)
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(dtype)
    ours = x * e.dropout_noise(x.shape, dtype, p)
    check("dropout", ours, torch.nn.functional.dropout(torch.from_numpy(x), p))
    y = np.ones((4, 6, 3, 3), np.float32)
    ours = y * e.dropout_noise((4, 6, 1, 1), np.float32, p)
    check("dropout2d", ours, torch.nn.functional.dropout2d(torch.from_numpy(y), p))
    check_state(e, torch.default_generator)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_exponential(dtype):
    e, g = pair(4)
    for lambd in [1.0, 2.5, 0.1]:
        ours = e.exponential((300,), np_dtype(dtype), lambd)
        theirs = torch.empty(300, dtype=TORCH_DTYPES[dtype]).exponential_(lambd, generator=g)
        check(f"exponential {lambd}", ours, theirs)
    check_state(e, g)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_multinomial(seed, dtype):
    e, g = pair(seed)
    rng = np.random.default_rng(seed)
    p1 = rng.random(20).astype(dtype)
    p1[3] = 0
    p2 = rng.random((4, 9)).astype(dtype)
    for probs in (p1, p2):
        tp = torch.from_numpy(probs)
        check("k=1", e.multinomial(probs, 1), torch.multinomial(tp, 1, generator=g))
        check("k=3", e.multinomial(probs, 3), torch.multinomial(tp, 3, generator=g))
        check("rep", e.multinomial(probs, 30, True), torch.multinomial(tp, 30, True, generator=g))
    check_state(e, g)


def test_multinomial_errors_like_torch():
    bad = [np.array([0.0, 0.0]), np.array([1.0, -1.0]), np.array([1.0, np.inf])]
    for p in bad:
        assert _error(lambda p=p: Engine().multinomial(p, 1)) == _error(
            lambda p=p: torch.multinomial(torch.from_numpy(p), 1)
        )


# -- initializers, data loading -----------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_layer_initializers(seed, global_rng):
    torch.manual_seed(seed)
    e = Engine(seed)
    for i, o in [(64, 32), (784, 128), (3, 1)]:
        lin = torch.nn.Linear(i, o)
        wb, bb = _rng.linear_init_bounds(i)
        check(
            f"Linear({i},{o}).weight {seed}",
            e.uniform((o, i), np.float32, -wb, wb),
            lin.weight,
            dependent=True,
        )
        check(
            f"Linear({i},{o}).bias {seed}",
            e.uniform((o,), np.float32, -bb, bb),
            lin.bias,
            dependent=True,
        )
    conv = torch.nn.Conv2d(3, 16, 3)
    wb, bb = _rng.linear_init_bounds(27)
    check(
        f"conv.weight {seed}",
        e.uniform((16, 3, 3, 3), np.float32, -wb, wb),
        conv.weight,
        dependent=True,
    )
    check(f"conv.bias {seed}", e.uniform((16,), np.float32, -bb, bb), conv.bias, dependent=True)
    emb = torch.nn.Embedding(10, 7)
    check(f"embedding {seed}", e.normal((10, 7), np.float32), emb.weight, dependent=True)
    w = torch.empty(20, 30)
    torch.nn.init.xavier_uniform_(w)
    b = math.sqrt(3.0) * (1.0 * math.sqrt(2.0 / (30 + 20)))
    check(f"xavier {seed}", e.uniform((20, 30), np.float32, -b, b), w, dependent=True)
    torch.nn.init.kaiming_uniform_(w, a=0.1)
    b = _rng.kaiming_uniform_bound(30, 0.1)
    check(f"kaiming_uniform {seed}", e.uniform((20, 30), np.float32, -b, b), w, dependent=True)
    torch.nn.init.kaiming_normal_(w)
    ours = e.normal((20, 30), np.float32, 0, math.sqrt(2.0) / math.sqrt(30))
    check(f"kaiming_normal {seed}", ours, w, dependent=True)
    check_state(e, torch.default_generator)


def test_dataloader_shuffle_and_random_split(global_rng):
    from torch.utils.data import DataLoader, TensorDataset, random_split

    for seed in [0, 7]:
        torch.manual_seed(seed)
        e = Engine(seed)
        ds = TensorDataset(torch.arange(37))
        for _ in range(3):
            order = torch.cat([b[0] for b in DataLoader(ds, batch_size=5, shuffle=True)])
            check("epoch", _rng.shuffle_permutation(e, 37), order)
        parts = random_split(range(20), [5, 15])
        check("random_split", e.randperm(20)[:5], np.array(parts[0].indices, dtype=np.int64))
        check_state(e, torch.default_generator)


# -- long mixed sequences -----------------------------------------------------------------------


def _mixed_ops(e: Engine, g, rnd: random.Random, key: str) -> None:
    """One random op on both sides; sizes small enough for the recorded reference."""
    kind = rnd.randrange(12)
    n = rnd.choice([1, 2, 3, 7, 15, 16, 17, 31, 64, 250])
    dtype = rnd.choice(FLOATS)
    td, dt = TORCH_DTYPES[dtype], np_dtype(dtype)
    key = f"{key} op{kind} {dtype} {n}"
    if kind == 0:
        check(key, e.uniform((n,), dt), torch.rand(n, generator=g, dtype=td))
    elif kind == 1:
        lo = rnd.uniform(-3, 1)
        hi = lo + rnd.uniform(0.01, 4)
        t = torch.empty(n, dtype=td).uniform_(lo, hi, generator=g)
        check(key, e.uniform((n,), dt, lo, hi), t, dependent=True)
    elif kind == 2:
        dep = dtype != "float64" and n >= 16
        check(key, e.normal((n,), dt), torch.randn(n, generator=g, dtype=td), dependent=dep)
    elif kind == 3:
        mean, std = rnd.uniform(-2, 2), rnd.uniform(0, 3)
        t = torch.empty(n, dtype=td).normal_(mean, std, generator=g)
        dep = not (dtype == "float64" and n >= 16)
        check(key, e.normal((n,), dt, mean, std), t, dependent=dep)
    elif kind == 4:
        hi = rnd.choice([2, 10, 1000, 2**28, 2**33, 2**62])
        check(key, e.randint(0, hi, (n,)), torch.randint(0, hi, (n,), generator=g))
    elif kind == 5:
        check(key, e.randperm(n), torch.randperm(n, generator=g))
    elif kind == 6:
        p = rnd.random()
        t = torch.empty(n, dtype=td).bernoulli_(p, generator=g)
        check(key, e.bernoulli(p, (n,), dt), t)
    elif kind == 7:
        t = torch.empty(n, dtype=td).exponential_(1.5, generator=g)
        check(key, e.exponential((n,), dt, 1.5), t)
    elif kind == 8:
        probs = np.arange(1, n + 2, dtype=np.float32)
        k = rnd.randint(1, n + 1)
        tp = torch.from_numpy(probs)
        check(key, e.multinomial(probs, k), torch.multinomial(tp, k, generator=g))
    elif kind == 9:
        check(key, e.random_((n,), np.int64), torch.empty(n, dtype=torch.long).random_(generator=g))
    elif kind == 10:
        x = torch.empty(n, 3, dtype=td).t()
        x.normal_(generator=g)
        ours = place(e.normal((3 * n,), dt, contiguous=x.is_contiguous()), x.shape, x.stride())
        check(key, ours, x, dependent=x.is_contiguous() and dtype != "float64" and 3 * n >= 16)
    else:
        probs = np.random.default_rng(n).random((2, 5))
        tp = torch.from_numpy(probs)
        check(key, e.multinomial(probs, 4, True), torch.multinomial(tp, 4, True, generator=g))


@pytest.mark.parametrize("seed", [0, 1, 42, 2**32 + 5, 2**63 + 12345, 99])
def test_long_mixed_sequences(seed):
    e, g = pair(seed)
    rnd = random.Random(seed)
    for i in range(60):
        _mixed_ops(e, g, rnd, f"mixed {seed} {i}")
    check_state(e, g)


# -- building blocks ----------------------------------------------------------------------------


def test_fma_emulation_rounds_once():
    from fractions import Fraction

    # a*b + c lands, in float64, exactly on a float32 midpoint that the exact sum is just below
    a, b = np.float32([1 + 2**-23]), np.float32([2**-24 * (1 - 2**-23)])
    c = np.float32(1 + 2**-23)
    assert (a.astype(np.float64) * b + c).astype(np.float32)[0] == np.float32(1 + 2**-22)
    assert _rng._fma32(a, b, c)[0] == np.float32(1 + 2**-23)
    rng = np.random.default_rng(0)
    x, y, z = rng.standard_normal((3, 2000))
    z *= 1e-3
    exact = [
        float(Fraction(p) * Fraction(q) + Fraction(r)) for p, q, r in zip(x, y, z, strict=True)
    ]
    assert_bits(_rng._fma64(x, y, z), np.array(exact), "fma64")


def test_libm_emulation_matches_math():
    rng = np.random.default_rng(1)
    u = rng.integers(0, 2**53, 200_000) * 2.0**-53
    x = 2 * math.pi * u
    sin, cos = _rng._libm_sincos(x)
    assert_bits(sin, np.array([math.sin(v) for v in x.tolist()]), "sin")
    assert_bits(cos, np.array([math.cos(v) for v in x.tolist()]), "cos")
    y = 1.0 - u
    assert_bits(_rng._libm("log", y), np.array([math.log(v) for v in y.tolist()]), "log")


def test_engine_module_does_not_import_torch():
    import importlib.util
    import subprocess
    import sys

    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('_rng', {_rng.__file__!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "mod.Engine(0).normal((100,), 'float32')\n"
        "assert 'torch' not in sys.modules\n"
    )
    assert importlib.util.find_spec("numpy") is not None
    subprocess.run([sys.executable, "-c", code], check=True)
