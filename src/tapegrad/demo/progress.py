"""The demo's progress bar: tqdm when it is installed, otherwise a small one written here.

tapegrad's only runtime dependencies are NumPy and SciPy; a progress bar is not worth a third, so
``tqdm`` is used when present (the ``demo`` extra installs it) and this module's own bar, one line
redrawn with ``\\r`` on stderr, otherwise. Both show the step, the loss, steps per second and the
time left.
"""

from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["progress_bar"]


class _Bar:
    """``[#####.....]  120/600  loss 2.314  10.2 steps/s  ETA 0:47``, redrawn at most 10 times a
    second."""

    width = 24

    def __init__(self, total: int, initial: int, desc: str) -> None:
        self.total, self.n, self.desc = total, initial, desc
        self.start_n, self.start = initial, time.perf_counter()
        self.last_draw = 0.0
        self.loss = float("nan")

    def update(self, loss: float) -> None:
        self.n += 1
        self.loss = loss
        now = time.perf_counter()
        if now - self.last_draw >= 0.1 or self.n >= self.total:
            self.last_draw = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        done = self.n - self.start_n
        rate = done / max(now - self.start, 1e-9)
        left = (self.total - self.n) / rate if rate > 0 else 0.0
        filled = int(self.width * self.n / max(self.total, 1))
        bar = "#" * filled + "." * (self.width - filled)
        eta = f"{int(left) // 60}:{int(left) % 60:02d}"
        line = (f"\r{self.desc}: [{bar}] {self.n:>{len(str(self.total))}}/{self.total}  "
                f"loss {self.loss:.3f}  {rate:.1f} steps/s  ETA {eta} ")
        sys.stderr.write(line)
        sys.stderr.flush()

    def close(self) -> None:
        self._draw(time.perf_counter())
        sys.stderr.write("\n")
        sys.stderr.flush()


class _TqdmBar:
    def __init__(self, total: int, initial: int, desc: str) -> None:
        from tqdm import tqdm  # tqdm: optional, loaded on first use

        self.bar = tqdm(total=total, initial=initial, desc=desc or "steps", unit="step",
                        dynamic_ncols=True, file=sys.stderr,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                   "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")

    def update(self, loss: float) -> None:
        self.bar.set_postfix_str(f"loss {loss:.3f}", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


class _NoBar:
    def update(self, loss: float) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, initial: int = 0, *, enabled: bool = True, desc: str = "") -> Any:
    """A bar with ``update(loss)`` and ``close()``."""
    if not enabled:
        return _NoBar()
    try:
        return _TqdmBar(total, initial, desc)
    except ImportError:
        return _Bar(total, initial, desc)
