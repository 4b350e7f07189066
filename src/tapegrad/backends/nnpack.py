"""``torch.backends.nnpack``: not used by tapegrad."""


def is_available() -> bool:
    return False
