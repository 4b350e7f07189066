"""``torch.backends.openmp``: tapegrad has no OpenMP (see ``set_num_threads`` for the BLAS's)."""


def is_available() -> bool:
    return False
