"""``torch.backends.mps``: Apple's Metal backend, neither built nor available."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
