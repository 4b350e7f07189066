"""Whole programs under tapegrad.compile: small realistic training and inference loops, run
eagerly and compiled on twin copies (same seed, same initial state) and compared bit for bit
after every step (``replay_checks.run_twins``): returned values, parameters, gradients,
buffers, optimizer state, learning rates, scheduler state and the default generator.

Each program is meant to replay (its entries hold a program, not an eager reason) unless a
test says why it cannot; then the compiled function must still give eager's results."""

from __future__ import annotations

import math

import pytest
from replay_checks import batch, replayed, run_twins

import tapegrad as torch
import tapegrad.nn.functional as F
from tapegrad import nn
from tapegrad.optim import lr_scheduler

# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------

def classes(i):
    """Call ``i``'s batch for the classifiers: 6 inputs of 8 features, targets in 0..3."""
    return batch(i, 6, 8), batch(i, 6, seed=1, kind="randint", high=4)


def mlp(n_in=8, hidden=16, n_out=4, dropout=0.0):
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(hidden, n_out))


class SmallCNN(nn.Module):
    """conv -> batch norm -> relu -> pool -> linear, on 3x8x8 images."""

    def __init__(self, n_out=5):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, n_out)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


class TinyGPT(nn.Module):
    """Token and position embeddings, one causal self-attention block, an MLP, a head. The
    positions (``arange``) and the causal mask (``ones``/``tril``) are made inside forward."""

    def __init__(self, vocab=11, dim=8, context=6, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(context, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        mask = torch.tril(torch.ones(t, t)) == 0
        att = self.drop(att.masked_fill(mask, float("-inf")).softmax(-1))
        x = x + self.proj(att @ v)
        x = x + self.drop(self.ff(self.ln2(x)))
        return self.head(x)


class RNNClassifier(nn.Module):
    """An LSTM or GRU over a sequence, classified from its last hidden state."""

    def __init__(self, cell=nn.LSTM, n_in=5, hidden=7, n_out=3):
        super().__init__()
        self.rnn = cell(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_out)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def train_program(model_fn, opt_fn, x_shape, n_classes, *, loss=F.cross_entropy, sched_fn=None,
                  sched_inside=True, clip=None, kind="randn"):
    """``make`` for a classifier's training step: the batch passed as arguments, new each
    call; an optional scheduler stepped inside the step or after it; optional clipping."""

    def make():
        model = model_fn()
        opt = opt_fn(model.parameters())
        sched = sched_fn(opt) if sched_fn is not None else None

        def step(x, y):
            opt.zero_grad()
            out = loss(model(x), y)
            out.backward()
            if clip is not None:
                nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            if sched is not None and sched_inside:
                sched.step()
            return out

        prog = {"step": step, "model": model, "opt": opt,
                "inputs": lambda i: (batch(i, *x_shape, high=11, kind=kind),
                                     batch(i, x_shape[0], seed=1, kind="randint",
                                           high=n_classes))}
        if sched is not None:
            prog["scheds"] = [sched]
            if not sched_inside:
                prog["after"] = lambda i: sched.step()
        return prog

    return make


# ---------------------------------------------------------------------------------------------
# Optimizers on an MLP, a CNN, a GPT-like model, an LSTM and a GRU
# ---------------------------------------------------------------------------------------------

OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd_nesterov_wd": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True,
                                                  weight_decay=1e-2),
    "adam": lambda ps: torch.optim.Adam(ps, lr=1e-2),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
    "rmsprop": lambda ps: torch.optim.RMSprop(ps, lr=1e-2, momentum=0.5),
    "adagrad": lambda ps: torch.optim.Adagrad(ps, lr=0.1),
}


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_mlp_with_each_optimizer(opt):
    replayed(run_twins(train_program(mlp, OPTIMIZERS[opt], (6, 8), 4)))


@pytest.mark.parametrize("opt", ["sgd_momentum", "adam"])
def test_cnn_with_batchnorm2d_trains(opt):
    replayed(run_twins(train_program(SmallCNN, OPTIMIZERS[opt], (4, 3, 8, 8), 5)))


@pytest.mark.parametrize("opt", ["adamw", "sgd_nesterov_wd"])
def test_gpt_like_model_trains(opt):
    def loss(logits, y):
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))

    def make():
        model = TinyGPT()
        o = OPTIMIZERS[opt](model.parameters())

        def step(idx, tgt):
            o.zero_grad()
            out = loss(model(idx), tgt)
            out.backward()
            o.step()
            return out

        return {"step": step, "model": model, "opt": o,
                "inputs": lambda i: (batch(i, 3, 6, kind="randint", high=11),
                                     batch(i, 3, 6, seed=1, kind="randint", high=11))}

    replayed(run_twins(make))


def test_transformer_step_backward_runs_on_arrays():
    """A pre-norm transformer block with the fused attention (the benchmark GPT's layers): its
    backward rules all have a fast path on arrays (ops/fast_paths.py), so the replayed step makes
    no Tensor until it returns the loss."""

    class Block(nn.Module):
        def __init__(self, vocab=11, dim=8, heads=2):
            super().__init__()
            self.heads = heads
            self.tok = nn.Embedding(vocab, dim)
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
            self.head = nn.Linear(dim, vocab)

        def forward(self, idx):
            b, t = idx.shape
            x = self.tok(idx)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2)
                       for z in self.qkv(self.ln1(x)).chunk(3, dim=-1))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, -1))
            x = x + self.ff(self.ln2(x))
            return self.head(x)

    def make():
        model = Block()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)

        def step(idx, tgt):
            opt.zero_grad()
            loss = F.cross_entropy(model(idx).view(-1, 11), tgt.view(-1))
            loss.backward()
            opt.step()
            return loss

        return {"step": step, "model": model, "opt": opt,
                "inputs": lambda i: (batch(i, 3, 6, kind="randint", high=11),
                                     batch(i, 3, 6, seed=1, kind="randint", high=11))}

    c = replayed(run_twins(make))
    body = [ln for ln in c.listing().splitlines() if not ln.lstrip().startswith("return")]
    assert not [ln for ln in body if "T(" in ln], c.listing()
    for name in ("addmm", "layer_norm", "gelu", "sdpa", "embedding", "view", "transpose"):
        assert f"{name}_fast_backward(" in c.listing(), name


@pytest.mark.parametrize("cell", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("opt", ["adam", "rmsprop"])
def test_recurrent_classifier_trains(cell, opt):
    replayed(run_twins(train_program(lambda: RNNClassifier(cell), OPTIMIZERS[opt], (4, 5, 5),
                                     3, clip=1.0)))


# ---------------------------------------------------------------------------------------------
# LR schedulers, inside and outside the step
# ---------------------------------------------------------------------------------------------

SCHEDULERS = {
    "step": lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5),
    "cosine": lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4),
    "onecycle": lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=10),
    "lambda": lambda o: lr_scheduler.LambdaLR(o, lambda epoch: 1.0 / (1 + epoch)),
}


@pytest.mark.parametrize("inside", [True, False], ids=["inside", "outside"])
@pytest.mark.parametrize("sched", sorted(SCHEDULERS))
def test_lr_scheduler(sched, inside):
    opt = OPTIMIZERS["adam" if sched == "onecycle" else "sgd_momentum"]
    replayed(run_twins(train_program(mlp, opt, (6, 8), 4, sched_fn=SCHEDULERS[sched],
                                     sched_inside=inside)))


# ---------------------------------------------------------------------------------------------
# Batch norm: train and eval mode; the model passed, closed over, global, an attribute
# ---------------------------------------------------------------------------------------------

def bn_model():
    return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_batchnorm1d_model_passed_as_argument(train):
    def make():
        model = bn_model()
        model.train(train)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(m, x, y):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss

        return {"step": step, "model": model, "opt": opt,
                "inputs": lambda i: (model, batch(i, 5, 6),
                                     batch(i, 5, seed=1, kind="randint", high=3))}

    replayed(run_twins(make))


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_batchnorm2d_closed_over(train):
    def make():
        model = SmallCNN()
        model.train(train)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return {"step": step, "model": model, "opt": opt,
                "inputs": lambda i: (batch(i, 2, 3, 8, 8),
                                     batch(i, 2, seed=1, kind="randint", high=5))}

    replayed(run_twins(make))


_GLOBAL_STEP = '''
def step():
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss
'''


def test_model_optimizer_and_batch_as_globals():
    """The step reads module globals; the loop rebinds the batch globals before each call."""

    def make():
        model = bn_model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        g = {"torch": torch, "F": F, "model": model, "opt": opt}
        exec(_GLOBAL_STEP, g)  # noqa: S102 - a step function with globals of its own

        def feed(i):
            g["x"] = batch(i, 5, 6)
            g["y"] = batch(i, 5, seed=1, kind="randint", high=3)

        return {"step": g["step"], "model": model, "opt": opt, "before": feed}

    replayed(run_twins(make))


class Trainer:
    """A training loop's object: the step reads ``self.model``, ``self.opt`` and the batch
    held in ``self.x`` and ``self.y``."""

    def __init__(self, model, opt, sched=None):
        self.model = model
        self.opt = opt
        self.sched = sched
        self.x = self.y = None

    def step(self):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        if self.sched is not None:
            self.sched.step()
        return {"loss": loss, "n": self.x.shape[0]}

    def step_with_lr(self):
        """The step, also returning the learning rate it used."""
        lr = self.opt.param_groups[0]["lr"]
        return self.step()["loss"], lr

    def set_batch(self, i):
        self.x = batch(i, 5, 6)
        self.y = batch(i, 5, seed=1, kind="randint", high=3)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_trainer_object_attributes(train):
    def make():
        model = bn_model()
        model.train(train)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        t = Trainer(model, opt, lr_scheduler.StepLR(opt, step_size=2, gamma=0.5))
        return {"step": t.step, "model": model, "opt": opt, "scheds": [t.sched],
                "before": t.set_batch}

    replayed(run_twins(make))


def test_returning_the_learning_rate_runs_eagerly_with_a_reason():
    """A Python float read from a param group after a scheduler step would be a stale
    constant in a program: the call runs eagerly, with eager's results."""

    def make():
        model = bn_model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        t = Trainer(model, opt, lr_scheduler.StepLR(opt, step_size=2, gamma=0.5))
        return {"step": t.step_with_lr, "model": model, "opt": opt, "scheds": [t.sched],
                "before": t.set_batch}

    c = run_twins(make, steps=8)
    (e,) = c.entries
    assert e.program is None and "float" in e.eager


def test_batchnorm_switching_modes_recompiles():
    """train() and eval() calls between steps: each mode has its own program."""

    def make():
        model = bn_model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return {"step": step, "model": model, "opt": opt,
                "before": lambda i: model.train(i % 4 < 2 or i >= 8),
                "inputs": lambda i: (batch(i, 5, 6),
                                     batch(i, 5, seed=1, kind="randint", high=3))}

    replayed(run_twins(make, steps=12), n=2)


def test_batchnorm_eval_inference_no_grad():
    def make():
        model = bn_model()
        with torch.no_grad():  # running statistics of a trained model
            model[1].running_mean.add_(0.5)
            model[1].running_var.mul_(2.0)
        model.eval()

        @torch.no_grad()
        def predict(x):
            return F.softmax(model(x), dim=-1)

        return {"step": predict, "model": model, "inputs": lambda i: (batch(i, 5, 6),)}

    replayed(run_twins(make))


# ---------------------------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------------------------

def test_mlp_with_dropout_keeps_the_rng_stream():
    replayed(run_twins(train_program(lambda: mlp(dropout=0.3), OPTIMIZERS["adam"], (6, 8), 4)))


def test_dropout_on_transposed_input():
    """Dropout of a non-contiguous (transposed) tensor, and functional dropout on a slice."""

    def make():
        lin = nn.Linear(6, 5)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            h = F.dropout(lin(x).t(), p=0.4, training=True)
            h2 = F.dropout(x[:, ::2], p=0.2)
            loss = h.pow(2).mean() + h2.sum()
            loss.backward()
            opt.step()
            return loss, h

        return {"step": step, "model": lin, "opt": opt, "inputs": lambda i: (batch(i, 4, 6),)}

    replayed(run_twins(make))


def test_alpha_dropout_draws_are_replayed():
    """AlphaDropout and FeatureAlphaDropout in a SELU network: their draw (a scale and a shift)
    is recorded on the default generator, so the step replays and the stream advances as
    eager code advances it."""

    def make():
        model = nn.Sequential(nn.Linear(8, 16), nn.SELU(), nn.AlphaDropout(0.2),
                              nn.Linear(16, 6), nn.SELU(), nn.FeatureAlphaDropout(0.3),
                              nn.Linear(6, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return {"step": step, "model": model, "opt": opt, "inputs": classes}

    c = replayed(run_twins(make))
    assert "alpha_dropout_noise" in c.listing()


# ---------------------------------------------------------------------------------------------
# Losses and targets
# ---------------------------------------------------------------------------------------------

def _loss_program(loss, y_shape=(6,), y_kind="randint", n_out=4, opt="sgd_momentum"):
    def make():
        model = mlp(n_out=n_out)
        o = OPTIMIZERS[opt](model.parameters())

        def step(x, y):
            o.zero_grad()
            out = loss(model(x), y)
            out.backward()
            o.step()
            return out

        return {"step": step, "model": model, "opt": o,
                "inputs": lambda i: (batch(i, 6, 8),
                                     batch(i, *y_shape, seed=1, kind=y_kind, high=4))}

    return make


def test_cross_entropy_target_sliced_from_argument():
    replayed(run_twins(_loss_program(lambda out, y: F.cross_entropy(out, y[:, 0]),
                                     y_shape=(6, 2))))


def test_cross_entropy_target_viewed_from_argument():
    replayed(run_twins(_loss_program(lambda out, y: F.cross_entropy(out, y.view(-1)),
                                     y_shape=(2, 3))))


def test_cross_entropy_target_transposed_and_flattened():
    replayed(run_twins(_loss_program(lambda out, y: F.cross_entropy(out, y.t().reshape(-1)),
                                     y_shape=(3, 2))))


def test_cross_entropy_label_smoothing():
    replayed(run_twins(_loss_program(lambda out, y: F.cross_entropy(out, y,
                                                                    label_smoothing=0.1))))


def test_cross_entropy_ignore_index():
    replayed(run_twins(_loss_program(lambda out, y: F.cross_entropy(out, y, ignore_index=2))))


def test_cross_entropy_class_weights():
    w = torch.tensor([1.0, 2.0, 0.5, 1.5])
    replayed(run_twins(_loss_program(lambda out, y: F.cross_entropy(out, y, weight=w))))


def test_cross_entropy_loss_module_with_weights_and_smoothing():
    crit = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.5]), label_smoothing=0.05)
    replayed(run_twins(_loss_program(crit, opt="adam")))


def test_nll_loss_on_log_softmax():
    replayed(run_twins(_loss_program(lambda out, y: F.nll_loss(F.log_softmax(out, -1), y))))


def test_mse_regression():
    replayed(run_twins(_loss_program(F.mse_loss, y_shape=(6, 4), y_kind="randn", opt="adam")))


def test_bce_with_logits_and_targets_from_a_comparison():
    """Targets made in the step from the argument's values (``y > 0`` as floats)."""
    replayed(run_twins(_loss_program(
        lambda out, y: F.binary_cross_entropy_with_logits(out, (y > 0).float()),
        y_shape=(6, 4), y_kind="randn", opt="rmsprop")))


def test_gradient_clipping_with_sgd():
    replayed(run_twins(train_program(mlp, OPTIMIZERS["sgd"], (6, 8), 4, clip=0.05)))


# ---------------------------------------------------------------------------------------------
# Tensors made inside the step, masks from comparisons
# ---------------------------------------------------------------------------------------------

def _regression(body, opt="sgd", n=5):
    """A linear model's step whose loss is ``body(pred, x)``."""

    def make():
        lin = nn.Linear(4, 3)
        o = OPTIMIZERS[opt](lin.parameters())

        def step(x):
            o.zero_grad()
            loss = body(lin(x), x)
            loss.backward()
            o.step()
            return loss

        return {"step": step, "model": lin, "opt": o, "inputs": lambda i: (batch(i, n, 4),)}

    return make


def test_zeros_and_ones_made_inside_the_step():
    def body(pred, x):
        acc = torch.zeros(pred.shape[1])
        acc += pred.sum(0)  # written in place: each call needs its own zeros
        return (acc * torch.ones(3)).pow(2).sum()

    replayed(run_twins(_regression(body)))


def test_returned_zeros_are_fresh_at_each_call():
    """A tensor made in the step and returned is the caller's to keep and modify: a later
    call must neither share nor see it."""
    lin = nn.Linear(4, 3)

    @torch.no_grad()
    def step(x):
        out = torch.zeros(2, 3)
        out[0] = lin(x).sum(0)
        return out

    c = torch.compile(step)
    results = []
    for i in range(5):
        r = c(batch(i, 2, 4))
        results.append(r.clone())
        r.add_(100.0)  # the caller writes into the result
    replayed(c)
    for i, r in enumerate(results):
        assert torch.equal(r, step(batch(i, 2, 4)))


def test_arange_positions_and_full():
    def body(pred, x):
        pos = torch.arange(pred.shape[0]).float().unsqueeze(1)
        return ((pred - torch.full((1, 3), 0.5)) * pos).abs().mean()

    replayed(run_twins(_regression(body, opt="adam")))


def test_randn_noise_from_the_default_generator():
    """Noise drawn inside the step with ``torch.randn``: drawn outside the recorded kernels,
    so it differs from capture to capture and the step runs eagerly (the RNG stream and every
    value as eager's, checked by run_twins)."""

    def body(pred, x):
        return (pred + 0.1 * torch.randn(pred.shape)).pow(2).mean()

    c = run_twins(_regression(body))
    (e,) = c.entries
    assert e.program is None and "change from call to call" in e.eager


def test_mask_from_comparison_and_where():
    def body(pred, x):
        mask = x[:, :3] > 0
        return torch.where(mask, pred, -pred).pow(2).sum() / mask.sum().clamp(min=1)

    replayed(run_twins(_regression(body, opt="adam")))


def test_masks_with_logical_and_and_isnan():
    def body(pred, x):
        bad = torch.isnan(x[:, :3]) | torch.isinf(x[:, :3])
        keep = torch.logical_and(x[:, :3] < 1.0, ~bad)
        keep = torch.logical_and(keep, torch.isfinite(pred))
        return (pred * keep).pow(2).sum()

    replayed(run_twins(_regression(body)))


def test_nan_inputs_masked_out_with_isnan():
    """Some inputs are NaN; the step replaces them and masks their loss terms."""

    def make():
        lin = nn.Linear(4, 1)
        o = torch.optim.Adam(lin.parameters(), lr=1e-2)

        def step(x, y):
            o.zero_grad()
            ok = ~torch.isnan(y)
            pred = lin(torch.nan_to_num(x)).squeeze(1)
            err = torch.where(ok, pred - torch.nan_to_num(y), torch.zeros_like(pred))
            loss = err.pow(2).sum() / ok.sum()
            loss.backward()
            o.step()
            return loss

        def inputs(i):
            y = batch(i, 6, seed=1)
            y[i % 6] = float("nan")
            x = batch(i, 6, 4)
            x[(i + 1) % 6, 0] = float("nan")
            return x, y

        return {"step": step, "model": lin, "opt": o, "inputs": inputs}

    replayed(run_twins(make))


def test_comparison_of_integer_tensor_with_float_scalar():
    def body(pred, x):
        idx = torch.arange(pred.shape[0])
        w = (idx >= 1.5).float() + (idx == 0).float() * 0.5
        return (pred.sum(1) * w).pow(2).mean()

    replayed(run_twins(_regression(body)))


# ---------------------------------------------------------------------------------------------
# Inference, return values, batches, shapes
# ---------------------------------------------------------------------------------------------

def test_no_grad_inference_returns_a_tuple():
    def make():
        model = mlp(dropout=0.5)
        model.eval()

        def predict(x):
            with torch.no_grad():
                logits = model(x)
                probs = logits.softmax(-1)
                return logits, probs, probs.max(-1).values

        return {"step": predict, "model": model, "inputs": lambda i: (batch(i, 6, 8),)}

    replayed(run_twins(make))


def test_training_step_returns_a_dict():
    def make():
        model = mlp()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward()
            opt.step()
            return {"loss": loss.detach(), "logits": logits.detach(), "n": x.shape[0]}

        return {"step": step, "model": model, "opt": opt,
                "inputs": classes}

    replayed(run_twins(make))


def test_batch_rebound_in_a_closure_variable_each_step():
    """The loop writes each new batch into a list the step closes over."""

    def make():
        model = mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        data = {}

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(data["x"]), data["y"])
            loss.backward()
            opt.step()
            return loss

        def feed(i):
            data["x"] = batch(i, 6, 8)
            data["y"] = batch(i, 6, seed=1, kind="randint", high=4)

        return {"step": step, "model": model, "opt": opt, "before": feed}

    c = replayed(run_twins(make))  # a new tensor in a dict item at each call: read through
    assert "['data']['x']" not in c.listing()  # the dict's item at each replay, guarded
    assert "cell_contents['x']._data" in c.listing()


def test_tensor_in_a_dict_kept_for_a_few_calls_then_replaced():
    """The same batch object for the first calls (both captures see it), then a new one: a
    program reading the first tensor live would miss the replacement."""

    def make():
        lin = nn.Linear(3, 2)
        data = {}

        @torch.no_grad()
        def step():
            return lin(data["x"]).sum(0)

        def feed(i):
            if i in (0, 4):
                data["x"] = batch(i, 4, 3)

        return {"step": step, "model": lin, "before": feed}

    c = replayed(run_twins(make))  # the program reads data['x'] at each call
    assert "cell_contents['x']._data" in c.listing()


def test_tensor_in_an_object_inside_a_dict_runs_eagerly():
    """A tensor held by a plain object inside a dict: no guard follows it there, so a program
    reading the first tensor would miss its replacement; the function runs eagerly."""

    class Holder:
        pass

    def make():
        lin = nn.Linear(3, 2)
        data = {"h": Holder()}

        @torch.no_grad()
        def step():
            return lin(data["h"].x).sum(0)

        def feed(i):
            if i in (0, 4):
                data["h"].x = batch(i, 4, 3)

        return {"step": step, "model": lin, "before": feed}

    c = run_twins(make)
    (e,) = c.entries
    assert e.program is None and "no guard watches" in e.eager


def test_shape_change_recompiles():
    """Batches of 6, then 4 (a last, smaller batch), then 6 again: two programs."""

    def make():
        model = mlp()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        def inputs(i):
            n = 4 if 4 <= i < 8 else 6
            return batch(i, n, 8), batch(i, n, seed=1, kind="randint", high=4)

        return {"step": step, "model": model, "opt": opt, "inputs": inputs}

    c = replayed(run_twins(make, steps=12), n=2)
    assert c.recompiles == 1


def test_sequence_length_change_recompiles_gpt():
    def make():
        model = TinyGPT(dropout=0.0)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)

        def step(idx, tgt):
            opt.zero_grad()
            logits = model(idx)
            loss = F.cross_entropy(logits.reshape(-1, 11), tgt.reshape(-1))
            loss.backward()
            opt.step()
            return loss

        def inputs(i):
            t = 6 if i < 4 else 4
            return (batch(i, 2, t, kind="randint", high=11),
                    batch(i, 2, t, seed=1, kind="randint", high=11))

        return {"step": step, "model": model, "opt": opt, "inputs": inputs}

    replayed(run_twins(make, steps=9), n=2)


def test_eval_loop_and_train_loop_share_a_model():
    """A compiled train step and a compiled eval step, alternating on one model."""

    def make():
        model = bn_model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        evaluate = torch.compile(lambda x: model(x).argmax(-1) if False else model(x))

        def step(x, y):
            model.train()
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                val = evaluate(x * 2)
            return loss, val

        return {"step": step, "model": model, "opt": opt,
                "inputs": lambda i: (batch(i, 5, 6),
                                     batch(i, 5, seed=1, kind="randint", high=3))}

    run_twins(make)


def test_grad_accumulation_over_micro_batches():
    def make():
        model = mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            total = 0.0
            for k in range(2):
                loss = F.cross_entropy(model(x[3 * k:3 * k + 3]), y[3 * k:3 * k + 3]) / 2
                loss.backward()
                total = total + loss.detach()
            opt.step()
            return total

        return {"step": step, "model": model, "opt": opt,
                "inputs": classes}

    replayed(run_twins(make))


def test_item_in_the_step_runs_eagerly_with_a_reason():
    """Reading the loss into Python is a graph break: the call runs eagerly (same results)."""

    def make():
        model = mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        history = []

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            history.append(loss.item())
            return loss

        return {"step": step, "model": model, "opt": opt,
                "inputs": classes}

    c = run_twins(make)
    (e,) = c.entries
    assert e.program is None and "item" in e.eager


def test_scalar_parameter_broadcast_over_the_batch():
    """A learnable 0-d temperature: its gradient is a broadcast gradient summed to a scalar
    (torch's summation order for a short float32 sum), in the replay as eagerly."""

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = mlp()
            self.temperature = nn.Parameter(torch.tensor(1.5))
            self.offset = nn.Parameter(torch.zeros(1, 4))

        def forward(self, x):
            return self.body(x) / self.temperature + self.offset

    replayed(run_twins(train_program(Scaled, OPTIMIZERS["adam"], (6, 8), 4)))


def test_seed_health_check_loop_with_the_step_compiled():
    """The gradient health check's loop (seed003_3): the step compiled, the gradient norms
    read and the optimizer stepped outside it, as the tutorial does (the gradients the norms
    are read from are compared bit for bit after each step)."""

    def make():
        model = nn.Sequential(nn.Linear(64, 32), nn.Sigmoid(), nn.Sigmoid(), nn.Linear(32, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))

        def step():
            opt.zero_grad()
            loss = nn.CrossEntropyLoss()(model(x), y)
            loss.backward()
            return loss

        def after(i):
            for layer in model:
                if hasattr(layer, "weight"):
                    assert layer.weight.grad.norm().item() > 0
            opt.step()

        return {"step": step, "model": model, "opt": opt, "after": after}

    c = replayed(run_twins(make, steps=5))
    assert "grad_fn=<CompiledFunctionBackward>" in repr(c())  # as torch.compile's loss
