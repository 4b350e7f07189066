"""CPU autocast against torch 2.13: the context manager and decorator, nested and disabled
regions, the cast cache, the state functions, custom_fwd/custom_bwd, gradients reaching float32
parameters, and GradScaler + autocast training loops (loss values and the scale sequence).

The dtype of every op under autocast is checked over torch's OpInfo samples in
tests/ops/test_autocast_ops.py.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from torchcompare import raised

BF16_TOL = {"rtol": 1.6e-2, "atol": 1e-5}  # torch.testing's defaults for bfloat16
FP16_TOL = {"rtol": 1e-3, "atol": 1e-5}


def _restore(L):
    L.set_autocast_enabled("cpu", False)
    L.set_autocast_dtype("cpu", L.bfloat16)
    L.set_autocast_cache_enabled(True)


def test_state_functions(compare):
    def scenario(L):
        out = [L.is_autocast_enabled(), L.is_autocast_enabled("cpu"),
               L.is_autocast_enabled(device_type="cpu"), L.get_autocast_dtype("cpu"),
               L.get_autocast_dtype("cuda"), L.get_autocast_dtype("xpu"),
               L.get_autocast_dtype("xla"), L.get_autocast_dtype("hpu"),
               L.is_autocast_cache_enabled(), L.amp.is_autocast_available("cpu"),
               L.amp.is_autocast_available("meta"), L.amp.is_autocast_available("xla")]
        out += [L.autocast_increment_nesting(), L.autocast_increment_nesting(),
                L.autocast_decrement_nesting(), L.autocast_decrement_nesting()]
        L.set_autocast_dtype("cpu", L.float16)
        out.append(L.get_autocast_dtype("cpu"))
        L.set_autocast_enabled("cpu", True)
        out.append(L.is_autocast_enabled("cpu"))
        out.append((L.ones(2, 2) @ L.ones(2, 2)).dtype)  # autocast without a context manager
        L.set_autocast_enabled("cpu", False)
        out.append((L.ones(2, 2) @ L.ones(2, 2)).dtype)
        L.set_autocast_enabled(True)  # one argument: cuda
        out.append((L.is_autocast_enabled(), L.is_autocast_enabled("cpu")))
        L.set_autocast_enabled(False)
        L.set_autocast_cache_enabled(False)
        out.append(L.is_autocast_cache_enabled())
        L.clear_autocast_cache()
        for bad in (lambda: L.is_autocast_enabled("meta"), lambda: L.get_autocast_dtype("meta"),
                    lambda: L.is_autocast_enabled("foo"), lambda: L.is_autocast_enabled(1),
                    lambda: L.set_autocast_enabled("cpu", 1),
                    lambda: L.set_autocast_enabled("meta", True)):
            out.append(raised(bad))
        _restore(L)
        return out

    compare(scenario)


def test_deprecated_state_functions_warn(compare):
    def scenario(L):
        out = [L.is_autocast_cpu_enabled(), L.get_autocast_cpu_dtype(),
               L.get_autocast_gpu_dtype(), L.get_autocast_ipu_dtype(),
               L.get_autocast_xla_dtype(), L.is_autocast_ipu_enabled(),
               L.is_autocast_xla_enabled()]
        L.set_autocast_cpu_enabled(True)
        out.append(L.is_autocast_enabled("cpu"))
        L.set_autocast_cpu_enabled(False)
        L.set_autocast_cpu_dtype(L.float16)
        out.append(L.get_autocast_dtype("cpu"))
        L.set_autocast_cpu_dtype(L.bfloat16)
        L.set_autocast_gpu_dtype(L.bfloat16)
        out.append(L.get_autocast_dtype("cuda"))
        L.set_autocast_gpu_dtype(L.float16)
        L.set_autocast_ipu_enabled(True)
        out.append(L.is_autocast_enabled("ipu"))
        L.set_autocast_ipu_enabled(False)
        L.set_autocast_xla_enabled(True)
        out.append(L.is_autocast_enabled("xla"))
        L.set_autocast_xla_enabled(False)
        L.set_autocast_ipu_dtype(L.float16)
        L.set_autocast_xla_dtype(L.bfloat16)
        return out

    compare(scenario)


def test_constructor_and_spellings(compare):
    def scenario(L):
        out = []
        for make in (lambda: L.autocast("cpu"), lambda: L.autocast("cpu", dtype=L.float16),
                     lambda: L.amp.autocast("cpu", enabled=False),
                     lambda: L.autocast("cpu", cache_enabled=False),
                     lambda: L.autocast("cpu", dtype=L.float32),
                     lambda: L.autocast("cpu", dtype=L.float64),
                     lambda: L.cpu.amp.autocast(), lambda: L.cpu.amp.autocast(dtype=L.float16),
                     lambda: L.cuda.amp.autocast(), lambda: L.autocast("xpu")):
            a = make()
            out.append((a.fast_dtype, a.device, a._enabled, a._cache_enabled))
        out += [L.cpu.is_available(), L.cpu.device_count(), L.cpu.synchronize()]
        with L.autocast("cpu", dtype=L.float32):
            out.append((L.ones(2, 2) @ L.ones(2, 2)).dtype)  # warned and disabled
        for bad in (lambda: L.autocast("meta"), lambda: L.autocast("foo"),
                    lambda: L.autocast(L.device("cpu")),
                    lambda: L.autocast("meta", dtype=L.bfloat16),
                    lambda: L.autocast("cpu")(3)):
            out.append(raised(bad))
        return out

    compare(scenario)


def test_linear_model_forward_and_gradients(compare):
    def scenario(L):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Linear(6, 8), L.nn.ReLU(), L.nn.Linear(8, 3))
        x = L.randn(5, 6)
        target = L.tensor([0, 2, 1, 1, 0])
        out = []
        for dtype in (L.bfloat16, L.float16):
            model.zero_grad()
            with L.autocast("cpu", dtype=dtype):
                logits = model(x)
                loss = L.nn.functional.cross_entropy(logits, target)
                out += [logits, logits.grad_fn.next_functions[0][0],
                        logits.grad_fn.next_functions[2][0],
                        logits.grad_fn.next_functions[2][0].next_functions[0][0], loss]
            loss.backward()
            out += [(p.grad.dtype, p.dtype) for p in model.parameters()]
            out += [p.grad for p in model.parameters()]
        return out

    compare(scenario, **BF16_TOL)


def test_backward_inside_the_region(compare):
    """A backward run inside the region (as many training loops do): its ops see autocast too,
    and the parameters' gradients are float32."""

    def scenario(L):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Conv2d(1, 2, 3), L.nn.Flatten(), L.nn.Linear(8, 3))
        x = L.randn(2, 1, 4, 4)
        with L.autocast("cpu"):
            loss = L.nn.functional.cross_entropy(model(x), L.tensor([0, 2]))
            loss.backward()
        return [loss] + [p.grad for p in model.parameters()]

    compare(scenario, **BF16_TOL)


def test_internal_calls_are_cast_at_the_listed_op(compare):
    """torch casts at the aten op: nn.Linear runs one bf16 ``linear``, a conv module one
    ``conv2d``, CrossEntropyLoss in float32; ops inside a listed composite see no autocast."""

    def scenario(L):
        L.manual_seed(0)
        conv = L.nn.Conv2d(2, 3, 3, padding=1)
        attn = L.nn.MultiheadAttention(4, 2, batch_first=True)
        x = L.randn(2, 2, 5, 5)
        q = L.randn(2, 3, 4)
        ce = L.nn.functional.cross_entropy  # a reference saved before the region
        with L.autocast("cpu"):
            y = conv(x)
            a, w = attn(q, q, q)
            out = [y, y.grad_fn, a.dtype, w.dtype,
                   L.nn.CrossEntropyLoss()(y.flatten(1), L.tensor([1, 0])),
                   ce(y.flatten(1), L.tensor([1, 0])),
                   L.einsum("ij,jk->ik", x[0, 0], x[0, 1]), L.einsum("ij,ij->ij", x[0, 0], x[0, 1]),
                   L.tensordot(x[0], x[1], dims=([1, 2], [1, 2])),
                   L.tensordot(x[0, 0], x[0, 1], dims=2), L.matmul(x[0, 0, 0], x[0, 0, 1]),
                   L.prod(y.flatten()[:4]), L.fft.rfft(y.flatten()[:8]),
                   L.nn.functional.pad(y, (1, 1), mode="reflect").dtype,
                   L.nn.functional.mse_loss(y, y.detach() * 0.5),
                   L.stack([y.float(), y]).dtype, L.cat([y, y]).dtype,
                   L.mm(x[0, 0].double(), x[0, 1].double()),
                   (x[0, 0] + y[0, 0]).dtype, L.layer_norm(y, (5,)).dtype,
                   L.nn.functional.softmax(y, -1).dtype]
        return out

    compare(scenario, **BF16_TOL)


def test_promotion_of_mixed_low_types(compare):
    def scenario(L):
        a = L.ones(2, 2)
        out = []
        with L.autocast("cpu", dtype=L.bfloat16):
            out.append(L.cat([a, a.bfloat16()]).dtype)
            out.append(L.cat([a.bfloat16(), a.bfloat16()]).dtype)
            out.append(L.cat([a.double(), a.bfloat16()]).dtype)
            out.append(raised(lambda: L.cat([a.half(), a.half()])))
            out.append(raised(lambda: L.stack([a.half(), a.bfloat16()])))
            out.append(L.mm(a.half(), a.bfloat16()).dtype)
        with L.autocast("cpu", dtype=L.float16):
            out.append(L.cat([a.half(), a.float()]).dtype)
            out.append(raised(lambda: L.cat([a.bfloat16(), a.half()])))
        return out

    compare(scenario)


def test_nested_and_disabled_regions(compare):
    def scenario(L):
        a = L.ones(3, 3)
        out = []
        with L.autocast("cpu"):
            out.append((a @ a).dtype)
            with L.autocast("cpu", enabled=False):
                out += [(a @ a).dtype, L.is_autocast_enabled("cpu"), L.get_autocast_dtype("cpu")]
                with L.autocast("cpu", dtype=L.float16):
                    out += [(a @ a).dtype, L.is_autocast_enabled("cpu")]
                out.append((a @ a).dtype)
            with L.autocast("cpu", dtype=L.float16):
                out += [(a @ a).dtype, L.get_autocast_dtype("cpu")]
            out += [(a @ a).dtype, L.get_autocast_dtype("cpu")]
            try:
                with L.autocast("cpu", enabled=False):
                    raise ValueError("inside")
            except ValueError:
                pass
            out += [(a @ a).dtype, L.is_autocast_enabled("cpu")]
        out += [(a @ a).dtype, L.is_autocast_enabled("cpu"), L.get_autocast_dtype("cpu")]
        return out

    compare(scenario)


def test_weight_cast_cache(compare):
    """Within a region, a float32 leaf that requires grad is cast once (both products use one
    ToCopyBackward0 node); other tensors are cast at each use; leaving the outermost region
    clears the cache."""

    def scenario(L):
        w = L.randn(3, 3, requires_grad=True)
        x = L.randn(3, 3)
        v = w * 1  # not a leaf

        def copies(a, b):
            return a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]

        out = []
        with L.autocast("cpu"):
            a, b = L.mm(x, w), L.mm(x, w)
            out += [copies(a, b), copies(L.mm(x, v), L.mm(x, v)), L.is_autocast_cache_enabled()]
            with L.autocast("cpu", enabled=False):
                pass  # an inner region's exit keeps the cache
            c = L.mm(x, w)
            out.append(copies(a, c))
        with L.autocast("cpu"):
            out.append(copies(a, L.mm(x, w)))  # cleared on the outer exit
        with L.autocast("cpu", cache_enabled=False):
            out += [copies(L.mm(x, w), L.mm(x, w)), L.is_autocast_cache_enabled()]
        out.append(L.is_autocast_cache_enabled())
        (a.sum() + b.sum() + c.sum()).backward()
        out += [w.grad, w.grad.dtype]
        return out

    compare(scenario, **BF16_TOL)


def test_decorators(compare):
    def scenario(L):
        @L.autocast("cpu")
        def product(a, b):
            """Doc kept."""
            return a @ b

        @L.amp.autocast("cpu", dtype=L.float16)
        def product16(a, b):
            return a @ b

        a = L.ones(2, 2)
        out = [product(a, a).dtype, product16(a, a).dtype, product.__name__, product.__doc__,
               (a @ a).dtype, L.is_autocast_enabled("cpu")]
        with L.autocast("cpu", enabled=False):
            out.append(product(a, a).dtype)
        cpu_amp = L.cpu.amp.autocast()(lambda x: x @ x)
        out.append(cpu_amp(a).dtype)
        return out

    compare(scenario)


def test_custom_fwd_and_bwd(compare):
    def scenario(L):
        seen = []

        class Square(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, x, scale):
                seen.append(("fwd", x.dtype, scale.dtype, L.is_autocast_enabled("cpu")))
                ctx.save_for_backward(x)
                return (x @ x) * scale

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                seen.append(("bwd", g.dtype, L.is_autocast_enabled("cpu"),
                             L.get_autocast_dtype("cpu")))
                return g @ x.T + x.T @ g, None

        class Plain(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu")
            def forward(ctx, x):
                seen.append(("plain fwd", x.dtype, L.is_autocast_enabled("cpu"),
                             (x @ x).dtype))
                return x @ x

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                seen.append(("plain bwd", g.dtype, L.is_autocast_enabled("cpu")))
                return g

        x = L.ones(2, 2, requires_grad=True)
        with L.autocast("cpu"):
            h = (x @ x).sum(0, keepdim=True).expand(2, 2)  # bfloat16
            y = Square.apply(h, L.ones(1, dtype=L.bfloat16))
            z = Plain.apply(x)
        (y.float().sum() + z.float().sum()).backward()
        y2 = Square.apply(x, L.ones(1))  # outside a region: no casts
        return [y, z, y2, x.grad, seen,
                raised(lambda: L.amp.custom_fwd(device_type=1)),
                raised(lambda: L.amp.custom_bwd(device_type=1))]

    compare(scenario, **BF16_TOL)


def test_cuda_spellings_of_custom_fwd_and_bwd(compare):
    """torch.cuda.amp's deprecated decorators: on a CPU-only build, no autocast to apply."""

    def scenario(L):
        class Double(L.autograd.Function):
            @staticmethod
            @L.cuda.amp.custom_fwd(cast_inputs=L.float32)
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @L.cuda.amp.custom_bwd
            def backward(ctx, g):
                return g * 2

        x = L.ones(2, requires_grad=True)
        with L.autocast("cpu"):
            y = Double.apply(x.bfloat16())
        y.sum().backward()
        return [y, x.grad]

    compare(scenario)


def test_state_is_per_thread(compare):
    def scenario(L):
        a = L.ones(2, 2)
        seen = []

        def work():
            seen.append(((a @ a).dtype, L.is_autocast_enabled("cpu")))
            with L.autocast("cpu", dtype=L.float16):
                seen.append((a @ a).dtype)

        with L.autocast("cpu"):
            t = threading.Thread(target=work)
            t.start()
            t.join()
            seen.append((a @ a).dtype)
        return seen

    compare(scenario)


def _mlp(L, dtype, steps, scaler_kwargs, lr=0.1):
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(8, 16), L.nn.Tanh(), L.nn.Linear(16, 4))
    opt = L.optim.SGD(model.parameters(), lr=lr)
    scaler = L.amp.GradScaler("cpu", **scaler_kwargs) if scaler_kwargs is not None else None
    x = L.randn(32, 8)
    y = L.randint(0, 4, (32,))
    losses, scales = [], []
    for _ in range(steps):
        opt.zero_grad()
        with L.autocast("cpu", dtype=dtype):
            loss = L.nn.functional.cross_entropy(model(x), y)
        losses.append(loss.item())
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scales.append(scaler.get_scale())
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    return losses, scales, [p.dtype for p in model.parameters()]


# tapegrad silences NumPy's overflow warnings by a warnings filter, which pytest's own per-test
# filters replace; torch's kernels never warn
@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")
def test_float16_training_with_grad_scaler(lib, oracle):
    """The scale starts far too large (float16 gradients overflow), backs off until they fit,
    then grows every 3 good steps: the sequence of scales equals torch's. (Run outside the
    ``compare`` fixture, which records every warning, NumPy's overflow warnings included.)"""
    kwargs = {"init_scale": 2.0**24, "growth_interval": 3}
    losses_t, scales_t, dtypes_t = _mlp(oracle, oracle.float16, 14, kwargs)
    losses, scales, dtypes = _mlp(lib, lib.float16, 14, kwargs)
    assert scales == scales_t
    assert scales_t[0] > scales_t[1] and max(scales_t[4:]) > min(scales_t)  # backs off, grows
    np.testing.assert_allclose(losses, losses_t, **FP16_TOL)
    assert [str(d) for d in dtypes] == [str(d) for d in dtypes_t]


def test_bfloat16_training_without_scaling(compare):
    def scenario(L):
        losses, _, dtypes = _mlp(L, L.bfloat16, 8, None)
        return L.tensor(losses), dtypes

    record = compare(scenario, **BF16_TOL)
    losses = record.result[0].values
    assert losses[-1] < losses[0]


def test_autocast_leaves_nothing_behind(lib_name):
    """Outside every region the library runs its own code: the listed functions' code and
    the registry entries' class are the originals again."""
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's mechanism (torch's is its dispatcher)")
    import tapegrad as L
    from tapegrad import _autocast
    from tapegrad.ops._registry import REGISTRY, OpDef

    linear = L.nn.functional.linear
    code = linear.__code__
    classes = {name: type(op) for name, op in REGISTRY.items()}  # OpDef, or NondiffDef
    with L.autocast("cpu"):
        assert linear.__code__ is not code
        assert type(REGISTRY["mm"]) is not OpDef
        with L.autocast("cpu", enabled=False):
            assert (L.ones(2, 2) @ L.ones(2, 2)).dtype is L.float32
    assert linear.__code__ is code
    assert {name: type(op) for name, op in REGISTRY.items()} == classes
    assert all(isinstance(op, OpDef) for op in REGISTRY.values())
    assert not _autocast._CACHE and _autocast._threads_on == 0


def test_lists_name_real_functions(lib_name):
    """Every public function and registry entry the lists name exists in tapegrad (a rename
    would otherwise drop its cast silently)."""
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's lists")
    import types

    from tapegrad import _autocast, _autocast_lists
    from tapegrad._tensor import Tensor
    from tapegrad.ops._registry import REGISTRY

    not_in_tapegrad = {"linalg.eig", "linalg.eigvals"}  # on the API TODO list
    missing = []
    for path in _autocast_lists.PUBLIC_POLICY:
        owner, name = _autocast._resolve(path)
        fn = owner.__dict__.get(name) if owner is Tensor else getattr(owner, name, None)
        if not isinstance(fn, types.FunctionType) and path not in not_in_tapegrad:
            missing.append(path)
    missing += [name for name in _autocast_lists.REGISTRY_POLICY if name not in REGISTRY]
    assert not missing
    assert set(_autocast_lists.UNLISTED_WHEN) <= set(_autocast_lists.PUBLIC_POLICY)
