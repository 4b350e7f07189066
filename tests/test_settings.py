"""The process-wide switches against torch 2.13: float32 matmul precision, deterministic
algorithms and their debug mode, inter-op threads (once per process: run in fresh
interpreters)."""

from __future__ import annotations

from torchcompare import raised, run_fresh


def test_float32_matmul_precision(compare):
    def scenario(L):
        out = [L.get_float32_matmul_precision()]
        try:
            for p in ("high", "medium", "low", "HIGH", 1, "highest"):
                out += [raised(lambda p=p: L.set_float32_matmul_precision(p)),
                        L.get_float32_matmul_precision()]
            out.append(raised(lambda: L.set_float32_matmul_precision()))
        finally:
            L.set_float32_matmul_precision("highest")
        return out

    compare(scenario)


def test_deterministic_algorithms(compare):
    def scenario(L):
        out = [L.are_deterministic_algorithms_enabled(),
               L.is_deterministic_algorithms_warn_only_enabled(),
               L.get_deterministic_debug_mode()]
        try:
            calls = [lambda: L.use_deterministic_algorithms(True),
                     lambda: L.use_deterministic_algorithms(True, warn_only=True),
                     lambda: L.use_deterministic_algorithms(1),
                     lambda: L.use_deterministic_algorithms("x"),
                     lambda: L.use_deterministic_algorithms(True, 1),
                     lambda: L.use_deterministic_algorithms(True, warn_only=1),
                     lambda: L.use_deterministic_algorithms(),
                     lambda: L.use_deterministic_algorithms(False),
                     lambda: L.set_deterministic_debug_mode("warn"),
                     lambda: L.set_deterministic_debug_mode(2),
                     lambda: L.set_deterministic_debug_mode("x"),
                     lambda: L.set_deterministic_debug_mode(3),
                     lambda: L.set_deterministic_debug_mode(1.5),
                     lambda: L.set_deterministic_debug_mode(0)]
            for call in calls:
                out += [raised(call), L.are_deterministic_algorithms_enabled(),
                        L.is_deterministic_algorithms_warn_only_enabled(),
                        L.get_deterministic_debug_mode()]
        finally:
            L.use_deterministic_algorithms(False)
        return out

    compare(scenario)


def test_interop_threads_are_set_once(lib_name):
    body = """
    for value in ("x", 2.0, True, 0, -1, 3, 3, 4):
        try:
            L.set_num_interop_threads(value)
            note("ok", value, L.get_num_interop_threads())
        except Exception as exc:
            note(type(exc).__name__, exc)
    """
    assert run_fresh(lib_name, body) == run_fresh("torch", body)
