"""torch.cuda on a CPU-only build, call for call against torch 2.13 (a CPU-only build): what
answers, what does nothing, what raises (type and message), and torch.cuda.amp."""

from __future__ import annotations

from torchcompare import raised

CALLS = [
    "is_available()", "device_count()", "manual_seed(0)", "manual_seed_all(0)", "seed()",
    "seed_all()", "initial_seed()", "empty_cache()", "synchronize()", "synchronize('cpu')",
    "is_initialized()", "init()", "current_device()", "get_device_name()", "get_device_name(0)",
    "get_device_name(None)", "get_device_name('cpu')", "get_device_properties(0)",
    "get_device_capability()", "get_device_capability(0)", "memory_allocated()",
    "memory_allocated('cpu')", "max_memory_allocated()", "memory_reserved()",
    "max_memory_reserved()", "reset_peak_memory_stats()", "memory_summary()", "memory_stats()",
    "set_device(0)", "set_device('cuda:0')", "set_device(-1)", "set_device('cpu')",
    "set_device('cuda')", "set_device(None)", "set_device('x')", "set_device(1.5)",
    "Stream()", "Stream(priority=0)", "Event()", "Event(enable_timing=True)",
    "current_stream()", "default_stream()", "get_rng_state()", "get_rng_state_all()",
    "set_rng_state(L.ByteTensor(8))", "set_rng_state_all([])", "is_bf16_supported()",
    "get_arch_list()", "get_gencode_flags()", "mem_get_info()", "ipc_collect()",
    "utilization()", "_initialized", "reset_max_memory_allocated()",
    "caching_allocator_alloc(1)", "set_per_process_memory_fraction(0.5)",
    "can_device_access_peer(0, 1)", "cudart()", "list_gpu_processes()", "current_blas_handle()",
    "set_stream(None)", "is_tf32_supported()", "manual_seed('x')", "manual_seed(1.5)",
    "memory_cached()", "max_memory_cached()", "host_memory_stats()", "mem_get_info(0)",
    "set_sync_debug_mode(0)", "get_sync_debug_mode()", "is_bf16_supported(False)",
    "__name__", "OutOfMemoryError.__mro__[1:]", "issubclass(L.cuda.OutOfMemoryError, "
    "RuntimeError)", "L.OutOfMemoryError is L.cuda.OutOfMemoryError",
]


def test_cuda_calls(compare):
    def scenario(L):
        env = {"L": L}
        return [(c, raised(lambda c=c: repr(eval(c if c.startswith(("L.", "issubclass"))
                                                 else "L.cuda." + c, env))))
                for c in CALLS]

    compare(scenario)


def test_device_and_stream_contexts(compare):
    def scenario(L):
        C = L.cuda
        out = [raised(lambda: C.device(0).__enter__()), C.device(0).__exit__(None, None, None),
               C.device("cuda:1").idx, raised(lambda: C.device(-1).__enter__()),
               raised(lambda: C.device(None).__enter__()), raised(lambda: C.device("cpu")),
               C.device(L.device("cuda:2")).idx, raised(lambda: C.device("cuda").__enter__()),
               C.device_of(L.ones(1)).idx, raised(lambda: C.device_of(L.ones(1)).__enter__()),
               raised(lambda: C.stream(None).__enter__()),
               raised(lambda: C.StreamContext(None).__exit__(None, None, None))]
        with C.device(-1):
            out.append("inside")
        with C.stream(None):
            out.append("inside")
        return out

    compare(scenario)


def test_typical_program_preamble(compare):
    def scenario(L):
        device = "cuda" if L.cuda.is_available() else "cpu"
        L.manual_seed(0)
        L.cuda.manual_seed_all(0)
        model = L.nn.Linear(3, 2).to(device)
        x = L.randn(4, 3, device=device)
        y = model(x).sum()
        y.backward()
        L.cuda.empty_cache()
        return device, y, model.weight.grad, L.cuda.device_count(), L.cuda.memory_allocated()

    compare(scenario)


def test_amp_namespace(compare):
    def scenario(L):
        out = []
        a = L.cuda.amp.autocast()
        out += [type(a).__name__, a.__enter__() is a, a.__exit__(None, None, None),
                str(a.fast_dtype), a.device, a._enabled]
        s = L.cuda.amp.GradScaler()
        m = L.nn.Linear(1, 1)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        with L.cuda.amp.autocast():
            loss = m(L.ones(1)).sum()
        out += [s.is_enabled(), s.scale(loss) is loss, s.get_scale(), s.unscale_(opt),
                s.step(opt), s.update(), s.state_dict(), s.load_state_dict({}),
                raised(s.get_growth_factor), m.weight.grad is None]
        out.append(type(L.cuda.amp.autocast(enabled=False)).__name__)
        out.append(type(L.cuda.amp.GradScaler(enabled=False)).__name__)
        return out

    compare(scenario)
