"""torch.accelerator with no accelerator, against torch 2.13 (a CPU-only build)."""

from __future__ import annotations

from torchcompare import raised

CALLS = ["is_available()", "current_accelerator()", "current_accelerator(check_available=True)",
         "device_count()", "current_device_index()", "current_device_idx()",
         "set_device_index(0)", "set_device_idx(0)", "synchronize()", "current_stream()",
         "set_stream(None)", "empty_cache()", "memory_allocated()", "max_memory_allocated()",
         "memory_stats()", "reset_peak_memory_stats()", "get_memory_info()", "memory_reserved()",
         "device_index(0).__enter__()", "device_index(None).__enter__()",
         "device_index(-1).__enter__()", "device_index(0).__exit__(None, None, None)",
         "get_device_capability()", "max_memory_reserved()",
         "reset_accumulated_memory_stats()", "empty_host_cache()"]


def test_accelerator_calls(compare):
    def scenario(L):
        env = {"A": L.accelerator}
        return [(c, raised(lambda c=c: repr(eval("A." + c, env)))) for c in CALLS]

    compare(scenario)


def test_device_agnostic_idiom(compare):
    def scenario(L):
        acc = L.accelerator.current_accelerator()
        device = acc if acc is not None else L.device("cpu")
        with L.accelerator.device_index(None):
            x = L.ones(2, device=device)
        return repr(device), x
    compare(scenario)
