"""``torch.backends.mha``: the fast path switch of ``nn.MultiheadAttention`` (kept as set)."""

_fastpath = [True]


def get_fastpath_enabled() -> bool:
    return _fastpath[0]


def set_fastpath_enabled(value: bool) -> None:
    _fastpath[0] = bool(value)
