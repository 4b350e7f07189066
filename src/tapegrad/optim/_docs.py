"""The parts of the optimizers' docstrings that read the same in each, written once.

An optimizer's class builds its ``__doc__`` with :func:`optimizer_doc` from a summary, its
``Args`` lines (``params`` reads the same in each; the other common lines are the constants
and functions below) and the one-step example every optimizer shows: ``help(torch.optim.Adam)``
reads as an ordinary docstring.
"""

from __future__ import annotations

PARAMS = "params: tensors or parameter groups to optimize."
MAXIMIZE = "maximize: maximize the objective (default False)."
L2_PENALTY = "weight_decay: L2 penalty (default 0)."
L2_OR_DECOUPLED = ("weight_decay: L2 penalty, or decoupled decay when ``decoupled_weight_decay``\n"
                   "(default 0).")
# the flags of the optimizers built on optim._single_tensor.SingleTensorOptimizer
SINGLE_TENSOR_FLAGS = ("foreach, capturable, differentiable, maximize: torch's flags, documented "
                       "once in\n``optim._single_tensor.SingleTensorOptimizer``.")


def learning_rate(default: str) -> str:
    """The ``lr`` line, with its default as written."""
    return f"lr: learning rate (default {default})."


def eps_denominator(default: str) -> str:
    """The ``eps`` line of the optimizers that divide by ``sqrt(...) + eps``."""
    return f"eps: term added to the denominator (default {default})."


def optimizer_doc(summary: str, args: list[str], call: str, result: str,
                  w: str = "[1.0, -2.0]") -> str:
    """A class docstring: ``summary``; the ``Args``, ``params``'s line then ``args``, one
    string each (a newline in one starts its indented continuation line); and the example that
    creates ``w = torch.tensor(w)``, takes one step of ``torch.optim.<call>`` on
    ``(w ** 2).sum()`` and prints ``w`` (``tensor(<result>, requires_grad=True)``)."""
    arg_lines = "".join("        " + a.replace("\n", "\n            ") + "\n"
                        for a in [PARAMS, *args])
    return (f"{summary}\n\n    Args:\n{arg_lines}\n    Example:\n"
            "        >>> import tapegrad as torch\n"
            f"        >>> w = torch.tensor({w}, requires_grad=True)\n"
            f"        >>> opt = torch.optim.{call}\n"
            "        >>> (w ** 2).sum().backward()\n"
            "        >>> opt.step()\n"
            "        >>> w\n"
            f"        tensor({result}, requires_grad=True)\n    ")
