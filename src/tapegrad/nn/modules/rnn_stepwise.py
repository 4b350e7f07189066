"""Recurrent layers step by step in tapegrad ops: the path for autocast and for float16/bfloat16.

The fused layer entries (ops/rnn.py) compute a whole layer in float32 NumPy with one node.
Under ``torch.autocast("cpu", ...)``, or with float16/bfloat16 weights, torch's CPU runs its
reference implementation instead: each step is a handful of ATen ops, each rounding its result
to its own dtype, and autocast casts the operands of every ``linear`` to the low type. The
output dtypes then follow from the order of the ops, and differ between the layers:

    RNN   h' = tanh(linear(h, w_hh, b_hh) + gi)         low type: every state after the first
    GRU   r, z = sigmoid(gh + gi); n = tanh(gi_n + gh_n r)
          h' = (h - n) z + n                            float32 with a float32 h0: h - n promotes
    LSTM  i, f, g, o = s, s, tanh, s of linear(h, w_hh, b_hh) + gi
          c' = f c + i g;  h' = o tanh(c')              float32 with a float32 c0: f c promotes
          (h' = matmul(h', w_hr^T) with a projection)   the projection makes h' the low type

    gi = linear(x, w_ih, b_ih), for all steps at once before the loop (the cells take it
    per step).

This module runs exactly that sequence of tapegrad ops, so autocast's casts, the low-precision
kernels' rounding after every op, and autograd (gradients reach float32 parameters through
their casts, in float32) come out as torch's. The loops over layers, directions and the steps
of a packed sequence follow torch's: a padded layer stacks its step outputs, a packed one
concatenates them; a bidirectional layer concatenates the two directions' outputs.

torch's padded LSTM takes oneDNN's fused layer (``mkldnn_rnn_layer``) when oneDNN supports the
input's dtype: float32 always, bfloat16 and float16 only on CPUs with the matching instructions
(AVX512-BF16, AMX); without them torch 2.13 under autocast raises "could not create a primitive
descriptor for the LSTM forward propagation primitive". tapegrad takes the reference path
there, the one torch takes for packed sequences, with projections, or with
``torch.backends.mkldnn`` disabled: float32 outputs, low-precision gates.
"""

from __future__ import annotations

import sys
from typing import Any

from ...ops import shape as sh
from .. import functional as F

_LOW_CHARS = "eE"  # NumPy's float16, ml_dtypes' bfloat16


def autocast_on() -> bool:
    """Whether CPU autocast is on in this thread (nothing to read until it was first used)."""
    ac = sys.modules.get("tapegrad._autocast")
    return ac is not None and ac._state.cpu and not ac._state.excluded


def any_autocast_on() -> bool:
    """torch's ``_is_any_autocast_enabled``: autocast on for any device in this thread."""
    ac = sys.modules.get("tapegrad._autocast")
    return ac is not None and any(ac._state.enabled.values())


def wanted(weight: Any, input: Any) -> bool:
    """Whether a layer or cell runs step by step: CPU autocast on, or a 2-byte float."""
    return (weight._data.dtype.char in _LOW_CHARS or input._data.dtype.char in _LOW_CHARS
            or autocast_on())


# ---------------------------------------------------------------------------------------------
# Cells: one step. ``gi`` is the input's product (precomputed), or the input itself when
# ``precomputed`` is False (torch's cells then compute it after the hidden side's product).
# ---------------------------------------------------------------------------------------------


def _cell(mode: str, gi: Any, hidden: Any, w: tuple, precomputed: bool) -> Any:
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    if mode == "GRU":
        gi = gi if precomputed else F.linear(gi, w_ih, b_ih)
        gh = F.linear(hidden, w_hh, b_hh)
        gi_r, gi_z, gi_n = gi.chunk(3, 1)
        gh_r, gh_z, gh_n = gh.chunk(3, 1)
        r = (gh_r + gi_r).sigmoid()
        z = (gh_z + gi_z).sigmoid()
        n = (gi_n + gh_n * r).tanh()
        return (hidden - n) * z + n
    if mode == "LSTM":
        hx, cx = hidden
        gates = F.linear(hx, w_hh, b_hh)
        gates = gates + (gi if precomputed else F.linear(gi, w_ih, b_ih))
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        cy = f * cx + i * g
        hy = o * cy.tanh()
        if w_hr is not None:
            hy = hy.matmul(w_hr.t())
        return hy, cy
    pre = F.linear(hidden, w_hh, b_hh)
    pre = pre + (gi if precomputed else F.linear(gi, w_ih, b_ih))
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def cell_step(mode: str, input: Any, hx: tuple, w: tuple) -> tuple:
    """One step of a cell module: (h',) or (h', c')."""
    out = _cell(mode, input, hx if mode == "LSTM" else hx[0], w, False)
    return out if mode == "LSTM" else (out,)


# ---------------------------------------------------------------------------------------------
# Layers: one direction over all steps
# ---------------------------------------------------------------------------------------------


def _output(hidden: Any) -> Any:
    return hidden[0] if isinstance(hidden, tuple) else hidden


def _slice(hidden: Any, start: int, stop: int) -> Any:
    if isinstance(hidden, tuple):
        return tuple(h[start:stop] for h in hidden)
    return hidden[start:stop]


def _concat(parts: list) -> Any:
    if isinstance(parts[0], tuple):
        return tuple(sh.cat([p[k] for p in parts], 0) for k in range(len(parts[0])))
    return sh.cat(parts, 0)


def _padded(mode: str, x: Any, hidden: Any, w: tuple, reverse: bool) -> tuple:
    """(T, B, I) time-major: the step outputs stacked (T, B, H), and the final state."""
    gi = F.linear(x, w[0], w[2])
    steps = gi.unbind(0)
    if reverse:
        steps = steps[::-1]
    outs = []
    for s in steps:
        hidden = _cell(mode, s, hidden, w, True)
        outs.append(_output(hidden))
    if reverse:
        outs.reverse()
    return sh.stack(outs, 0), hidden


def _packed(mode: str, data: Any, hidden: Any, w: tuple, sizes: tuple) -> tuple:
    """A packed sequence's data (N, I), forward in time: sequences that end leave their state
    behind; the final states in the batch's order."""
    gi = F.linear(data, w[0], w[2])
    outs = []
    ended = []
    offset = 0
    last = sizes[0]
    for b in sizes:
        if b < last:
            ended.append(_slice(hidden, b, last))
            hidden = _slice(hidden, 0, b)
        last = b
        hidden = _cell(mode, gi[offset:offset + b], hidden, w, True)
        offset += b
        outs.append(_output(hidden))
    ended.append(hidden)
    return sh.cat(outs, 0), _concat(ended[::-1])


def _packed_reversed(mode: str, data: Any, h0: Any, w: tuple, sizes: tuple) -> tuple:
    """A packed sequence's data, last step first: a sequence starts from its initial state at
    its own last step."""
    gi = F.linear(data, w[0], w[2])
    offset = data.shape[0]
    last = sizes[-1]
    hidden = _slice(h0, 0, last)
    outs = []
    for b in sizes[::-1]:
        if b > last:
            hidden = _concat([hidden, _slice(h0, last, b)])
        offset -= b
        last = b
        hidden = _cell(mode, gi[offset:offset + b], hidden, w, True)
        outs.append(_output(hidden))
    outs.reverse()
    return sh.cat(outs, 0), hidden


def run(module: Any, input: Any, h0: Any, c0: Any, batch_sizes: tuple | None) -> tuple:
    """All layers and directions of ``module`` (RNNBase): (output, h_n, c_n or None), with
    ``input`` time-major (T, B, I), or a packed sequence's data when ``batch_sizes`` is given."""
    mode = module.mode

    def direction(layer_input: Any, k: int, reverse: bool) -> tuple:
        w = module._direction_weights(k)
        hidden = (h0[k], c0[k]) if mode == "LSTM" else h0[k]
        if batch_sizes is None:
            return _padded(mode, layer_input, hidden, w, reverse)
        if not reverse:
            return _packed(mode, layer_input, hidden, w, batch_sizes)
        return _packed_reversed(mode, layer_input, hidden, w, batch_sizes)

    layer_input, finals = module._layers(input, direction)
    if mode == "LSTM":
        return (layer_input, sh.stack([h for h, _ in finals], 0),
                sh.stack([c for _, c in finals], 0))
    return layer_input, sh.stack(finals, 0), None
