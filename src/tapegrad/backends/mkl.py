"""``torch.backends.mkl``: tapegrad does not use Intel MKL (NumPy's BLAS does its products)."""


def is_available() -> bool:
    return False
