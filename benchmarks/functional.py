"""mlp-functional, gpt-functional, cnn-functional: the mlp, gpt and cnn workloads written in the
functional style, without ``nn.Module``.

The parameters are tensors in Python lists (a GPT's per block: a list per block, in a list),
the layers are written out (``x @ w + b``, ``F.conv2d(x, w, b)`` with the raw weights,
``F.layer_norm``, ``F.embedding``), and the optimizer is given the flat list. The sizes,
optimizers and learning rates are those of the module-style workloads, so the two styles'
ratios to torch can be set side by side: a step that reads its tensors from lists is
compiled as one that reads a module's parameters is (the compiled column).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from . import cnn, gpt, mlp
from ._harness import Step, WeightBank, Workload, training_step


def _weight(lib: ModuleType, bank: WeightBank, name: str, n_in: int, n_out: int) -> Any:
    """A linear layer's weight as ``x @ w`` reads it, (in, out), initialized as the
    module-style workload's ``nn.Linear`` weight (out, in) of the same name."""
    return lib.tensor(bank.param(name, (n_out, n_in)).T.copy(), requires_grad=True)


def _param(lib: ModuleType, bank: WeightBank, name: str, shape: tuple[int, ...]) -> Any:
    return lib.tensor(bank.param(name, shape).copy(), requires_grad=True)


# ------------------------------------------------------------------------------------- mlp


def mlp_setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    batch, sizes = cfg["batch"], cfg["sizes"]
    params = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        params.append(_weight(lib, bank, f"{2 * i}.weight", n_in, n_out))
        params.append(_param(lib, bank, f"{2 * i}.bias", (n_out,)))
    x = bank.tensor(lib, "x", lambda r: r.standard_normal((batch, sizes[0]), dtype=np.float32))
    y = bank.tensor(lib, "y", lambda r: r.integers(0, sizes[-1], batch, dtype=np.int64))
    F = lib.nn.functional

    def net(x: Any) -> Any:
        for i in range(0, len(params), 2):
            x = x @ params[i] + params[i + 1]
            if i + 2 < len(params):
                x = F.relu(x)
        return x

    opt = lib.optim.SGD(params, lr=cfg["lr"])
    return training_step(lambda: F.cross_entropy(net(x), y), opt)


MLP = Workload(
    name="mlp-functional",
    unit="ms/step",
    requires=("nn.functional.relu", "nn.functional.cross_entropy", "optim.SGD"),
    config=mlp.config,
    setup=mlp_setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: ("-".join(map(str, cfg["sizes"])) + " ReLU MLP, parameters in a list, "
                          f"x @ w + b, batch {cfg['batch']}, SGD"),
)


# ------------------------------------------------------------------------------------- gpt


def gpt_setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    d, n_head, vocab, context = cfg["d_model"], cfg["n_head"], cfg["vocab"], cfg["context"]
    F = lib.nn.functional
    wte = _param(lib, bank, "tok.weight", (vocab, d))
    wpe = _param(lib, bank, "pos.weight", (context, d))
    blocks = []
    for i in range(cfg["n_layer"]):
        pre = f"blocks.{i}."
        block = [_param(lib, bank, pre + "ln1.weight", (d,)),
                 _param(lib, bank, pre + "ln1.bias", (d,))]
        for name in ("query", "key", "value", "proj"):
            block += [_weight(lib, bank, f"{pre}attn.{name}.weight", d, d),
                      _param(lib, bank, f"{pre}attn.{name}.bias", (d,))]
        block += [_param(lib, bank, pre + "ln2.weight", (d,)),
                  _param(lib, bank, pre + "ln2.bias", (d,)),
                  _weight(lib, bank, pre + "mlp.0.weight", d, 4 * d),
                  _param(lib, bank, pre + "mlp.0.bias", (4 * d,)),
                  _weight(lib, bank, pre + "mlp.2.weight", 4 * d, d),
                  _param(lib, bank, pre + "mlp.2.bias", (d,))]
        blocks.append(block)
    head = [_param(lib, bank, "ln_f.weight", (d,)), _param(lib, bank, "ln_f.bias", (d,)),
            _weight(lib, bank, "head.weight", d, vocab), _param(lib, bank, "head.bias", (vocab,))]
    params = [wte, wpe, *(p for block in blocks for p in block), *head]

    def net(idx: Any) -> Any:
        b, t = idx.shape
        h = d // n_head
        x = F.embedding(idx, wte) + wpe[:t]
        for (ln1_w, ln1_b, wq, bq, wk, bk, wv, bv, wo, bo,
             ln2_w, ln2_b, w1, b1, w2, b2) in blocks:
            a = F.layer_norm(x, (d,), ln1_w, ln1_b)
            q = (a @ wq + bq).view(b, t, n_head, h).transpose(1, 2)
            k = (a @ wk + bk).view(b, t, n_head, h).transpose(1, 2)
            v = (a @ wv + bv).view(b, t, n_head, h).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + (y.transpose(1, 2).reshape(b, t, d) @ wo + bo)
            m = F.layer_norm(x, (d,), ln2_w, ln2_b)
            x = x + (F.gelu(m @ w1 + b1) @ w2 + b2)
        ln_w, ln_b, w_head, b_head = head
        return F.layer_norm(x, (d,), ln_w, ln_b) @ w_head + b_head

    shape = (cfg["batch"], context)
    idx = bank.tensor(lib, "idx", lambda r: r.integers(0, vocab, shape, dtype=np.int64))
    targets = bank.tensor(lib, "targets", lambda r: r.integers(0, vocab, shape, dtype=np.int64))
    opt = lib.optim.Adam(params, lr=cfg["lr"])
    n = shape[0] * shape[1]
    return training_step(lambda: F.cross_entropy(net(idx).view(n, vocab), targets.view(n)), opt)


GPT = Workload(
    name="gpt-functional",
    unit="ms/step",
    requires=("nn.functional.embedding", "nn.functional.layer_norm", "nn.functional.gelu",
              "nn.functional.scaled_dot_product_attention", "nn.functional.cross_entropy",
              "optim.Adam"),
    config=gpt.config,
    setup=gpt_setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: (f"{cfg['n_layer']} block(s), d {cfg['d_model']}, "
                          f"{cfg['n_head']} heads, ctx {cfg['context']}, vocab {cfg['vocab']}, "
                          f"batch {cfg['batch']}, parameters in lists, Adam"),
)


# ------------------------------------------------------------------------------------- cnn


def cnn_setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    batch, image, classes = cfg["batch"], cfg["image"], cfg["classes"]
    side = image - 4
    params = [_param(lib, bank, "0.weight", (16, 1, 3, 3)), _param(lib, bank, "0.bias", (16,)),
              _param(lib, bank, "2.weight", (32, 16, 3, 3)), _param(lib, bank, "2.bias", (32,)),
              _weight(lib, bank, "5.weight", 32 * side * side, classes),
              _param(lib, bank, "5.bias", (classes,))]
    x = bank.tensor(lib, "x", lambda r: r.standard_normal((batch, 1, image, image),
                                                          dtype=np.float32))
    y = bank.tensor(lib, "y", lambda r: r.integers(0, classes, batch, dtype=np.int64))
    F = lib.nn.functional

    def net(x: Any) -> Any:
        h = F.relu(F.conv2d(x, params[0], params[1]))
        h = F.relu(F.conv2d(h, params[2], params[3]))
        return h.reshape(h.shape[0], -1) @ params[4] + params[5]

    opt = lib.optim.SGD(params, lr=cfg["lr"])
    return training_step(lambda: F.cross_entropy(net(x), y), opt)


CNN = Workload(
    name="cnn-functional",
    unit="ms/step",
    requires=("nn.functional.conv2d", "nn.functional.relu", "nn.functional.cross_entropy",
              "optim.SGD"),
    config=cnn.config,
    setup=cnn_setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: (f"F.conv2d 1->16, 16->32 3x3 with raw weights, x @ w + b to "
                          f"{cfg['classes']}, batch {cfg['batch']} of {cfg['image']}x"
                          f"{cfg['image']}, parameters in a list, SGD"),
)
