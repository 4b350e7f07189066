"""Keep freed memory in the process, so a training step does not page-fault its buffers back.

A training step frees and allocates the same large buffers every iteration (activations, their
gradients, the im2col matrix of a convolution). NumPy takes them from the C library's malloc.
glibc's malloc gives blocks above its ``M_MMAP_THRESHOLD`` (128 KiB to start with) their own
mapping and returns it to the kernel on free, and it trims the top of its heap whenever more
than ``M_TRIM_THRESHOLD`` is free there. The next step then touches fresh pages, and every 4 KiB
page costs a page fault: measured on the 2-core benchmark machines, about 1.4 us each, some 3,000
(a third of the step) in the CNN benchmark and 1,500 in the GPT one.

So on glibc, importing tapegrad raises both thresholds (``mallopt``) once:

    M_MMAP_THRESHOLD  32 MiB   blocks below this come from the heap and are reused
    M_TRIM_THRESHOLD 256 MiB   free memory kept at the top of the heap before it is returned

The cost is that up to 256 MiB of freed memory stays with the process instead of going back to
the system, which is what a caching allocator (torch's on the GPU) does on purpose. Set the
environment variable ``TAPEGRAD_MALLOC_TUNING=0`` before importing tapegrad to leave malloc as
it is. Elsewhere (macOS, Windows, musl) nothing changes.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's upper limit for this parameter on 64-bit systems
TRIM_THRESHOLD = 256 << 20

tuned = False  # whether configure() changed malloc's settings


def on_glibc() -> bool:
    """Whether this process runs on Linux with the GNU C library (whose malloc this tunes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError):
        return False


def configure() -> bool:
    """Raise glibc malloc's mmap and trim thresholds (see the module docstring); True if done."""
    global tuned
    if tuned:
        return True
    if os.environ.get("TAPEGRAD_MALLOC_TUNING", "1") == "0" or not on_glibc():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # (setting either threshold also stops glibc from moving them by itself)
    tuned = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return tuned
