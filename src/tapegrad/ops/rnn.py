"""Recurrent layers as fused entries: one node runs a whole layer (one direction) over time.

An LSTM layer over 64 steps composed of small ops would record about 15 nodes a step; here the
layer is one entry whose forward loops over the steps in NumPy and whose backward rule is the
backpropagation through time written out by hand::

    lstm_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)  ->  (output, h_n, c_n)
      forward:  gx = x @ w_ih^T + b_ih + b_hh           one product for every step at once
                for each step t: gates = h @ w_hh^T + gx[t]; i, f, g, o; c, h  (h @ w_hr^T)
      backward: for each step, last to first: d gates from dh, dc; dh_prev = d gates @ w_hh
                then dx = dG @ w_ih, dw_ih = dG^T x, dw_hh = dG^T h_prev: one product each

``gru_layer`` and ``rnn_tanh_layer`` / ``rnn_relu_layer`` are the same loop with their cells.
The formulas are written once against a backend ``B`` (see ops/nn_common.py): on ndarrays in the
layers' fast first-order paths (ops/fast_paths.py; the forward leaves its gates in
``params["_cache"]``), on Tensors in their rules, which run when the backward is differentiated
(``create_graph=True``): they recompute the forward with Tensor ops and their backward lines
record a graph, so second derivatives work.

Inputs are time-major. ``batch_sizes`` None: ``x`` is (T, B, I) and every step has B rows.
Otherwise ``x`` is a packed sequence's data (N, I), step t holding ``batch_sizes[t]`` rows
(non-increasing): a sequence that has ended keeps its last state as its final state, and in
the reverse direction a sequence starts from its initial state at its own last step.

Cells follow torch's CPU formulas and its order of additions:
    LSTM  i, f, g, o = s(.), s(.), tanh(.), s(.) of h w_hh^T + b_hh + x w_ih^T + b_ih
          c' = f c + i g;  h' = o tanh(c')  (then h' w_hr^T with a projection)
    GRU   r, z = s(.) of gh + gi;  n = tanh(gi_n + r gh_n);  h' = (h - n) z + n
    RNN   h' = tanh or relu of h w_hh^T + b_hh + x w_ih^T + b_ih

``pack_padded`` and ``pad_packed`` move rows between a padded (T, B, *) batch and a packed
sequence's data; each one's backward is the other.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import elementwise as ew
from ._registry import REGISTRY, defop
from .factories import zeros_like
from .nn_common import _Arrays, _fast_sum, _Tensors

_BEFORE = set(REGISTRY)


# ---------------------------------------------------------------------------------------------
# The steps of a layer: which rows each step holds
# ---------------------------------------------------------------------------------------------


def _steps(sizes: tuple, reverse: bool) -> list:
    """(row start, row stop) of each step, in the order the layer runs them."""
    spans = []
    start = 0
    for b in sizes:
        spans.append((start, start + b))
        start += b
    return spans[::-1] if reverse else spans


def _cat(B: Any, parts: list, dim: int = 0) -> Any:
    return parts[0] if len(parts) == 1 else B.cat(parts, dim)


def _relu(B: Any, x: Any) -> Any:
    return ew.relu(x) if B.tensors else np.maximum(x, 0)


def _matmul_t(B: Any, a: Any, w: Any) -> Any:
    """a @ w^T"""
    return B.matmul(a, B.mT(w))


# ---------------------------------------------------------------------------------------------
# Forward: one layer, one direction
# ---------------------------------------------------------------------------------------------


def _forward(B: Any, mode: str, x: Any, h0: Any, c0: Any, w_ih: Any, w_hh: Any, b_ih: Any,
             b_hh: Any, w_hr: Any, sizes: tuple, reverse: bool) -> tuple:
    """Run the layer; returns (output rows (N, H_out), h_n, c_n, record), where ``record``
    holds what the backward needs, per step in the order the steps ran."""
    hid = w_hh.shape[0] // {"lstm": 4, "gru": 3}.get(mode, 1)
    gx = _matmul_t(B, x, w_ih)  # every step's input product at once
    if b_ih is not None:
        gx = gx + b_ih
        if mode != "gru":  # torch adds b_hh to h w_hh^T first; a sum is a sum (to rounding)
            gx = gx + b_hh
    spans = _steps(sizes, reverse)
    n_first = spans[0][1] - spans[0][0]
    h = h0[:n_first] if reverse else h0
    c = (c0[:n_first] if reverse else c0) if mode == "lstm" else None
    outs: list = []
    rec: dict = {"hprev": [], "cprev": [], "acts": [], "tc": [], "hraw": []}
    done_h: list = []  # forward direction: rows whose sequence ended, (h, c) at their end
    done_c: list = []
    for r0, r1 in spans:
        b = r1 - r0
        n = h.shape[0]
        if n > b:  # sequences b.. have ended (forward direction)
            done_h.append(h[b:])
            h = h[:b]
            if c is not None:
                done_c.append(c[b:])
                c = c[:b]
        elif n < b:  # sequences n..b start here (reverse direction)
            h = _cat(B, [h, h0[n:b]])
            if c is not None:
                c = _cat(B, [c, c0[n:b]])
        rec["hprev"].append(h)
        g_in = gx[r0:r1]
        if mode == "lstm":
            rec["cprev"].append(c)
            gates = _matmul_t(B, h, w_hh) + g_in
            s = B.sigmoid(gates)  # i, f, o from here (the g block's sigmoid goes unused)
            g = B.tanh(gates[:, 2 * hid:3 * hid])
            i, f, o = s[:, :hid], s[:, hid:2 * hid], s[:, 3 * hid:]
            c = f * c + i * g
            tc = B.tanh(c)
            h = o * tc
            rec["acts"].append((i, f, g, o))
            rec["tc"].append(tc)
            if w_hr is not None:
                rec["hraw"].append(h)
                h = _matmul_t(B, h, w_hr)
        elif mode == "gru":
            gh = _matmul_t(B, h, w_hh)
            if b_hh is not None:
                gh = gh + b_hh
            rz = B.sigmoid(gh[:, :2 * hid] + g_in[:, :2 * hid])
            r, z = rz[:, :hid], rz[:, hid:]
            ghn = gh[:, 2 * hid:]
            nn = B.tanh(g_in[:, 2 * hid:] + ghn * r)
            h = (h - nn) * z + nn
            rec["acts"].append((r, z, nn, ghn))
        else:
            pre = _matmul_t(B, h, w_hh) + g_in
            h = B.tanh(pre) if mode == "tanh" else _relu(B, pre)
            rec["acts"].append(h)
        outs.append(h)
    order = outs[::-1] if reverse else outs
    out = _cat(B, order)
    h_n = _cat(B, [h] + done_h[::-1])
    c_n = _cat(B, [c] + done_c[::-1]) if c is not None else None
    return out, h_n, c_n, rec


# ---------------------------------------------------------------------------------------------
# Backward: through time, last step first
# ---------------------------------------------------------------------------------------------


def _backward(B: Any, mode: str, x: Any, h0: Any, c0: Any, w_ih: Any, w_hh: Any, w_hr: Any,
              rec: dict, gout: Any, gh_n: Any, gc_n: Any, sizes: tuple, reverse: bool,
              needs: tuple, zeros: Any) -> tuple:
    """Gradients (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr) from those of the outputs."""
    spans = _steps(sizes, reverse)
    n_last = spans[-1][1] - spans[-1][0]
    if gh_n is None:
        gh_n = zeros(h0)
    lstm = mode == "lstm"
    if lstm and gc_n is None:
        gc_n = zeros(c0)
    # the state's gradient after the last step that ran
    dh = gh_n if reverse else gh_n[:n_last]
    dc: Any = (gc_n if reverse else gc_n[:n_last]) if lstm else None
    d_in: list = []  # d (input-side gate pre-activations) per step, last step first
    d_hid: list = []  # the same for the hidden side (GRU's differ in the n block)
    d_proj: list = []  # d (projected h) per step (LSTM with projections)
    h0_parts: list = []  # reverse direction: h0 rows whose sequence started at a later step
    c0_parts: list = []
    k = len(spans)
    for j in range(k - 1, -1, -1):
        r0, r1 = spans[j]
        b = r1 - r0
        n = dh.shape[0]
        if n < b:  # forward direction: rows whose sequence ended at this step join
            dh = _cat(B, [dh, gh_n[n:b]])
            if lstm:
                dc = _cat(B, [dc, gc_n[n:b]])
        if gout is not None:
            dh = dh + gout[r0:r1]
        hprev = rec["hprev"][j]
        if lstm:
            i, f, g, o = rec["acts"][j]
            tc = rec["tc"][j]
            if w_hr is not None:
                d_proj.append(dh)
                dh = B.matmul(dh, w_hr)
            do = dh * tc
            dc = dc + dh * o * (1 - tc * tc)  # d tanh(c) = 1 - tanh^2
            dgates = _cat(B, [dc * g * i * (1 - i), dc * rec["cprev"][j] * f * (1 - f),
                              dc * i * (1 - g * g), do * o * (1 - o)], 1)
            dc = dc * f
            d_in.append(dgates)
            dh = B.matmul(dgates, w_hh)
        elif mode == "gru":
            r, z, nn, ghn = rec["acts"][j]
            dn = dh * (1 - z) * (1 - nn * nn)  # through h' = (h - n) z + n and n = tanh(.)
            dz = dh * (hprev - nn) * z * (1 - z)
            dr = dn * ghn * r * (1 - r)
            d_in.append(_cat(B, [dr, dz, dn], 1))
            dgh = _cat(B, [dr, dz, dn * r], 1)
            d_hid.append(dgh)
            dh = dh * z + B.matmul(dgh, w_hh)
        else:
            y = rec["acts"][j]
            dpre = dh * (1 - y * y) if mode == "tanh" else dh * (y > 0)
            d_in.append(dpre)
            dh = B.matmul(dpre, w_hh)
        if j > 0:
            nb = spans[j - 1][1] - spans[j - 1][0]
            if nb < b:  # reverse direction: rows nb..b started from h0 at this step
                h0_parts.append(dh[nb:])
                dh = dh[:nb]
                if lstm:
                    c0_parts.append(dc[nb:])
                    dc = dc[:nb]
    gh0 = _cat(B, [dh] + h0_parts[::-1])
    gc0 = _cat(B, [dc] + c0_parts[::-1]) if lstm else None
    # d_in runs last step first; rows of x run in time order
    time_order = d_in if reverse else d_in[::-1]
    dG = _cat(B, time_order)
    need_x, need_w_ih, need_w_hh, need_b_ih, need_b_hh, need_w_hr = needs
    gx = B.matmul(dG, w_ih) if need_x else None
    gw_ih = B.matmul(B.mT(dG), x) if need_w_ih else None
    gb_ih = B.sum(dG, (0,), False) if need_b_ih else None
    hprev_rows = _cat(B, rec["hprev"][::-1] if reverse else rec["hprev"])
    if mode == "gru":
        dGh = _cat(B, d_hid if reverse else d_hid[::-1])
    else:
        dGh = dG
    gw_hh = B.matmul(B.mT(dGh), hprev_rows) if need_w_hh else None
    gb_hh = B.sum(dGh, (0,), False) if need_b_hh else None
    gw_hr = None
    if need_w_hr:
        dP = _cat(B, d_proj if reverse else d_proj[::-1])
        hraw = _cat(B, rec["hraw"][::-1] if reverse else rec["hraw"])
        gw_hr = B.matmul(B.mT(dP), hraw)
    return gx, gh0, gc0, gw_ih, gw_hh, gb_ih, gb_hh, gw_hr


# ---------------------------------------------------------------------------------------------
# LSTM on the arrays: the same formulas as above, in preallocated buffers
#
# The first-order path of the layer that char-RNNs train. The forward writes every step's
# gates, c, tanh(c) and output into buffers that cover all steps (about 12 NumPy calls a
# step); the backward writes each step's gate gradients into one (N, 4H) buffer with in-place
# products on the step's rows (about 25 calls a step, each on a (B, H) block that stays in
# cache: computing the factors for all steps at once in whole-array passes was slower), and
# the weights' gradients are then one product each over all steps.
# ---------------------------------------------------------------------------------------------


def _lstm_forward_arrays(x: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_ih: np.ndarray,
                         w_hh: np.ndarray, b_ih: Any, b_hh: Any, w_hr: Any, sizes: tuple,
                         reverse: bool) -> tuple:
    hid = w_hh.shape[0] // 4
    n_rows = x.shape[0]
    acts = x @ w_ih.T  # (N, 4H): the input products, then the gates of every step
    if b_ih is not None:
        acts += b_ih
        acts += b_hh
    w_hh_t = w_hh.T
    dtype = acts.dtype
    c_all = np.empty((n_rows, hid), dtype=dtype)
    tc_all = np.empty((n_rows, hid), dtype=dtype)
    out = np.empty((n_rows, hid if w_hr is None else w_hr.shape[0]), dtype=dtype)
    hraw = np.empty((n_rows, hid), dtype=dtype) if w_hr is not None else None
    spans = _steps(sizes, reverse)
    n_first = spans[0][1] - spans[0][0] if spans else 0
    h, c = (h0[:n_first], c0[:n_first]) if reverse else (h0, c0)
    hprev: list = []
    cprev: list = []
    done_h: list = []
    done_c: list = []
    for r0, r1 in spans:
        b = r1 - r0
        n = h.shape[0]
        if n > b:
            done_h.append(h[b:])
            done_c.append(c[b:])
            h, c = h[:b], c[:b]
        elif n < b:
            h = np.concatenate([h, h0[n:b]])
            c = np.concatenate([c, c0[n:b]])
        hprev.append(h)
        cprev.append(c)
        a = acts[r0:r1]
        a += h @ w_hh_t
        g = np.tanh(a[:, 2 * hid:3 * hid])
        np.negative(a, out=a)  # s(a) = 1 / (1 + e^-a), in place
        np.exp(a, out=a)
        a += 1.0
        np.reciprocal(a, out=a)
        a[:, 2 * hid:3 * hid] = g
        cn = np.multiply(a[:, hid:2 * hid], c, out=c_all[r0:r1])  # f c
        g *= a[:, :hid]  # i g
        cn += g
        tc = np.tanh(cn, out=tc_all[r0:r1])
        if hraw is not None:
            hr = np.multiply(a[:, 3 * hid:], tc, out=hraw[r0:r1])
            h = np.matmul(hr, w_hr.T, out=out[r0:r1])
        else:
            h = np.multiply(a[:, 3 * hid:], tc, out=out[r0:r1])
        c = cn
    h_n = np.concatenate([h] + done_h[::-1])
    c_n = np.concatenate([c] + done_c[::-1])
    rec = {"acts": acts, "c": c_all, "tc": tc_all, "hraw": hraw, "hprev": hprev,
           "cprev": cprev}
    return out, h_n, c_n, rec


def _lstm_backward_arrays(x: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_ih: np.ndarray,
                          w_hh: np.ndarray, w_hr: Any, rec: dict, gout: Any, gh_n: Any,
                          gc_n: Any, sizes: tuple, reverse: bool, needs: tuple) -> tuple:
    hid = w_hh.shape[0] // 4
    acts, tc_all = rec["acts"], rec["tc"]
    n_rows = acts.shape[0]
    time_order = (lambda seq: seq[::-1]) if reverse else (lambda seq: seq)
    d_gates = np.empty_like(acts)
    d_proj = np.empty((n_rows, w_hr.shape[0]), dtype=acts.dtype) if w_hr is not None else None
    spans = _steps(sizes, reverse)
    n_last = spans[-1][1] - spans[-1][0] if spans else 0
    if gh_n is None:
        gh_n = np.zeros_like(h0)
    if gc_n is None:
        gc_n = np.zeros_like(c0)
    dh = gh_n if reverse else gh_n[:n_last]
    dc = np.array(gc_n if reverse else gc_n[:n_last])  # updated in place below
    h0_parts: list = []
    c0_parts: list = []
    for j in range(len(spans) - 1, -1, -1):
        r0, r1 = spans[j]
        b = r1 - r0
        n = dh.shape[0]
        if n < b:
            dh = np.concatenate([dh, gh_n[n:b]])
            dc = np.concatenate([dc, gc_n[n:b]])
        if gout is not None:
            dh = dh + gout[r0:r1]
        if d_proj is not None:
            d_proj[r0:r1] = dh
            dh = dh @ w_hr
        i, f, g, o = (acts[r0:r1, k * hid:(k + 1) * hid] for k in range(4))
        tc = tc_all[r0:r1]
        t = tc * tc  # dc += dh o (1 - tanh^2 c)
        np.subtract(1.0, t, out=t)
        t *= o
        t *= dh
        dc += t
        rows = d_gates[r0:r1]
        di, df, dg, do = (rows[:, k * hid:(k + 1) * hid] for k in range(4))
        np.subtract(1.0, i, out=di)  # dc g i (1 - i)
        di *= i
        di *= g
        di *= dc
        np.subtract(1.0, f, out=df)  # dc c_prev f (1 - f)
        df *= f
        df *= rec["cprev"][j]
        df *= dc
        np.multiply(g, g, out=dg)  # dc i (1 - g^2)
        np.subtract(1.0, dg, out=dg)
        dg *= i
        dg *= dc
        np.subtract(1.0, o, out=do)  # dh tanh(c) o (1 - o)
        do *= o
        do *= tc
        do *= dh
        dc *= f
        dh = rows @ w_hh
        if j > 0:
            nb = spans[j - 1][1] - spans[j - 1][0]
            if nb < b:
                h0_parts.append(dh[nb:])
                c0_parts.append(dc[nb:])
                dh, dc = dh[:nb], dc[:nb]
    gh0 = np.concatenate([dh] + h0_parts[::-1])
    gc0 = np.concatenate([dc] + c0_parts[::-1])
    need_x, need_w_ih, need_w_hh, need_b_ih, need_b_hh, need_w_hr = needs
    gx = d_gates @ w_ih if need_x else None
    gw_ih = d_gates.T @ x if need_w_ih else None
    gb = _fast_sum(d_gates, (0,), False) if (need_b_ih or need_b_hh) else None
    gw_hh = None
    if need_w_hh:
        gw_hh = d_gates.T @ np.concatenate(time_order(rec["hprev"]))
    gw_hr = d_proj.T @ rec["hraw"] if need_w_hr and d_proj is not None else None
    return (gx, gh0, gc0, gw_ih, gw_hh, gb if need_b_ih else None,
            None if gb is None or not need_b_hh else gb.copy(), gw_hr)


# ---------------------------------------------------------------------------------------------
# The entries
# ---------------------------------------------------------------------------------------------


def _layer_forward(mode: str) -> Any:
    def forward(x: np.ndarray, h0: np.ndarray, c0: Any, w_ih: np.ndarray, w_hh: np.ndarray,
                b_ih: Any, b_hh: Any, w_hr: Any, *, batch_sizes: Any, reverse: bool,
                _cache: dict) -> tuple:
        shape = x.shape
        if batch_sizes is None:  # padded (T, B, I): every step holds B rows
            sizes = (shape[1],) * shape[0]
            x = x.reshape(shape[0] * shape[1], shape[2])
        else:
            sizes = batch_sizes
        with np.errstate(over="ignore"):
            run = _lstm_forward_arrays if mode == "lstm" else partial(_forward, _Arrays, mode)
            out, h_n, c_n, rec = run(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, sizes, reverse)
        _cache["rec"] = rec
        if len(sizes) == 1:  # the one step's state, kept for the backward: not the output
            out = out.copy()
        if batch_sizes is None:
            out = out.reshape(shape[0], shape[1], out.shape[-1])
        # the final states are the last steps' states (or views of them): their own memory
        if h_n.base is not None or h_n is h0 or np.may_share_memory(h_n, out):
            h_n = h_n.copy()
        if mode == "lstm":
            if c_n.base is not None or c_n is c0:
                c_n = c_n.copy()
            return out, h_n, c_n
        return out, h_n

    forward.__name__ = f"_{mode}_layer"
    return forward


def layer_cotangents(mode: str, grads: list, batch_sizes: Any) -> tuple:
    """(d output as rows, d h_n, d c_n) of a layer's node; None for an output no gradient
    reached."""
    grads = list(grads) + [None] * (3 - len(grads))
    gout = grads[0]
    if gout is not None and batch_sizes is None:
        gout = gout.reshape(-1, gout.shape[-1])
    return gout, grads[1], (grads[2] if mode == "lstm" else None)


def layer_rows(x: Any, batch_sizes: Any) -> tuple:
    """(x's shape, the rows of each step, x as rows): B rows a step for a padded (T, B, I)
    input, else ``batch_sizes``."""
    shape = tuple(x.shape)
    sizes = (shape[1],) * shape[0] if batch_sizes is None else batch_sizes
    return shape, sizes, x.reshape(-1, shape[-1])


def layer_needs(ctx: Any) -> tuple:
    """Which of (x, w_ih, w_hh, b_ih, b_hh, w_hr) want a gradient (``_backward``'s order)."""
    need = ctx.needs_input_grad
    return (need[0], need[3], need[4], need[5], need[6], need[7])


def layer_input_grads(ctx: Any, grads: tuple, shape: tuple) -> tuple:
    """``_backward``'s gradients as the node's inputs take them."""
    need = ctx.needs_input_grad
    gx, gh0, gc0, gw_ih, gw_hh, gb_ih, gb_hh, gw_hr = grads
    if gx is not None:
        gx = gx.reshape(shape)
    return (gx, gh0 if need[1] else None, gc0 if need[2] else None, gw_ih, gw_hh, gb_ih, gb_hh,
            gw_hr)


def _layer_rule(mode: str) -> Any:
    def layer_backward(ctx: Any, grads: list) -> tuple:
        # the forward recomputed in Tensor ops, then backpropagation through time in them
        saved = ctx.saved
        p = ctx.params
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = saved[:8]
        gout, gh_n, gc_n = layer_cotangents(mode, grads, p["batch_sizes"])
        shape, sizes, xa = layer_rows(x, p["batch_sizes"])
        rec = _forward(_Tensors, mode, xa, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, sizes,
                       p["reverse"])[3]
        with np.errstate(over="ignore"):
            g = _backward(_Tensors, mode, xa, h0, c0, w_ih, w_hh, w_hr, rec, gout, gh_n, gc_n,
                          sizes, p["reverse"], layer_needs(ctx), zeros_like)
        return layer_input_grads(ctx, g, shape)

    return layer_backward


# torch's CPU LSTM layer (float32, oneDNN) records one MkldnnRnnLayerBackward0 per layer and
# direction; it has no single node for a GRU or plain RNN layer (it composes them), so these
# are named after the layer.
# The LSTM's array path keeps its states in the output's memory: the output is saved too, so
# that changing it in place before backward raises torch's error instead of a wrong gradient.
lstm_layer = defop("lstm_layer", node="MkldnnRnnLayerBackward0", save="all", outputs=3,
                   save_output=True)(
    _layer_forward("lstm"))
lstm_layer.backward(_layer_rule("lstm"))
gru_layer = defop("gru_layer", node="GruLayerBackward0", save="all", outputs=2)(
    _layer_forward("gru"))
gru_layer.backward(_layer_rule("gru"))
rnn_tanh_layer = defop("rnn_tanh_layer", node="RnnTanhLayerBackward0", save="all",
                       outputs=2)(_layer_forward("tanh"))
rnn_tanh_layer.backward(_layer_rule("tanh"))
rnn_relu_layer = defop("rnn_relu_layer", node="RnnReluLayerBackward0", save="all",
                       outputs=2)(_layer_forward("relu"))
rnn_relu_layer.backward(_layer_rule("relu"))

LAYERS = {"LSTM": lstm_layer, "GRU": gru_layer, "RNN_TANH": rnn_tanh_layer,
          "RNN_RELU": rnn_relu_layer}


# ---------------------------------------------------------------------------------------------
# Packing: rows of a padded batch <-> a packed sequence's data
# ---------------------------------------------------------------------------------------------


def _packed_rows(batch_sizes: tuple, batch: int, steps: int, batch_first: bool) -> np.ndarray:
    """For each packed row, its row in the padded batch seen as (T*B, *) or (B*T, *)."""
    idx = []
    for t, b in enumerate(batch_sizes):
        j = np.arange(b)
        idx.append(j * steps + t if batch_first else t * batch + j)
    return np.concatenate(idx) if idx else np.zeros(0, dtype=np.int64)


@defop("pack_padded", node="PackPaddedSequenceBackward0")
def _pack_padded(x: np.ndarray, *, batch_sizes: tuple, batch_first: bool) -> np.ndarray:
    lead = x.shape[:2]
    batch, steps = (lead[0], lead[1]) if batch_first else (lead[1], lead[0])
    rows = _packed_rows(batch_sizes, batch, steps, batch_first)
    return x.reshape((lead[0] * lead[1],) + x.shape[2:])[rows]


@_pack_padded.backward
def pack_padded_backward(ctx: Any, grad: Tensor) -> tuple:
    # rows go back where they came from; padding gets 0
    p = ctx.params
    shape = ctx.input_shapes[0]
    total = shape[1] if p["batch_first"] else shape[0]
    return (_pad_packed(grad, batch_sizes=p["batch_sizes"], batch_first=p["batch_first"],
                        padding_value=0.0, total_length=total),)


@defop("pad_packed", node="PadPackedSequenceBackward0")
def _pad_packed(data: np.ndarray, *, batch_sizes: tuple, batch_first: bool,
                padding_value: float, total_length: int) -> np.ndarray:
    batch = batch_sizes[0] if batch_sizes else 0
    lead = (batch, total_length) if batch_first else (total_length, batch)
    out = np.full((lead[0] * lead[1],) + data.shape[1:], padding_value, dtype=data.dtype)
    out[_packed_rows(batch_sizes, batch, total_length, batch_first)] = data
    return out.reshape(lead + data.shape[1:])


@_pad_packed.backward
def pad_packed_backward(ctx: Any, grad: Tensor) -> tuple:  # the packed rows of the gradient
    p = ctx.params
    return (_pack_padded(grad, batch_sizes=p["batch_sizes"], batch_first=p["batch_first"]),)


NAMES = tuple(name for name in REGISTRY if name not in _BEFORE)

__all__ = ["LAYERS", "NAMES", "gru_layer", "lstm_layer", "rnn_relu_layer", "rnn_tanh_layer"]
