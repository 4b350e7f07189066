"""A rank's standard output and error: the labels on its lines, silence, and its last words.

The launcher's ranks (``_rank.py``) label their output as torchrun's ``--tee`` does
(``label_output``: each line of fd 1 and 2 starts with ``[default<local rank>]:``, copied by two
small forked processes from pipes that replace the file descriptors, so the labels hold for C
code and child processes too), or send it to /dev/null (``silence_output``, a rank that
``--local-ranks-filter`` leaves out). ``write_last_words`` writes the message printed before
``MPI_Abort`` (``_mpi.abort``) past the copier, to the stderr ``mpiexec`` reads, and waits until
``mpiexec`` has read it.
"""

from __future__ import annotations

import array
import os
import signal
import stat
import sys
import time


def _copy_lines(src: int, dst: int, prefix: bytes) -> None:
    """Copy what arrives on ``src`` to ``dst``, each line preceded by ``prefix``."""
    tail = b""
    while True:
        try:
            chunk = os.read(src, 65536)
        except InterruptedError:
            continue
        if not chunk:
            break
        *lines, tail = (tail + chunk).split(b"\n")
        if lines:
            os.write(dst, b"".join(prefix + line + b"\n" for line in lines))
    if tail:
        os.write(dst, prefix + tail)


# fd 2 as mpiexec gave it (before label_output), and the label: see write_last_words
_last_words: tuple[int, bytes] | None = None


def write_last_words(message: str) -> None:
    """Write a line to mpiexec's stderr and wait (up to 2 s) until mpiexec has read it: for
    the message printed just before ``MPI_Abort``, after which mpiexec may end the job without
    reading what is left in its pipes. A labelled rank writes it past the copier (which
    could be too late), with its label."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd, prefix = _last_words if _last_words is not None else (2, b"")
    os.write(fd, prefix + message.encode() + b"\n")
    try:
        # fcntl, termios: POSIX only, loaded on first use
        import fcntl
        import termios  # (with fcntl)
    except ImportError:  # not a POSIX system
        return
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return  # a file or a terminal: written
    count = array.array("i", [0])
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        fcntl.ioctl(fd, termios.FIONREAD, count)  # the bytes in the pipe, not read yet
        if count[0] == 0:
            return
        time.sleep(0.005)


def label_output(prefix: str) -> None:
    """Make every line this process (and its children) writes to fd 1 and 2 start with
    ``prefix``."""
    global _last_words
    sys.stdout.flush()
    sys.stderr.flush()
    _last_words = (os.dup(2), prefix.encode())
    for fd in (1, 2):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copier: ignores Ctrl-C and the job's signals, ends at EOF
            try:
                os.setsid()
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                os.close(write_end)
                if fd == 2:
                    os.close(1)  # the stdout pipe's write end, inherited from the rank
                _copy_lines(read_end, fd, prefix.encode())
            finally:
                os._exit(0)
        os.close(read_end)
        os.dup2(write_end, fd)
        os.close(write_end)


def silence_output() -> None:
    """Send fd 1 and 2 to /dev/null (a rank left out by ``--local-ranks-filter``)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
