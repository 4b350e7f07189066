"""``torch.backends.cpu``: tapegrad's kernels are NumPy's, with no dispatch on CPU features."""


def get_cpu_capability() -> str:
    return "DEFAULT"
