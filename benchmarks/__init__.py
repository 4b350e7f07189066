"""Benchmarks: tapegrad against torch, in the same process, on the same weights.

Run ``python -m benchmarks [--only NAME] [--json FILE] [--quick] [--no-torch] [--profile]``.

Each workload is written once against the ``torch`` API as a function of the library module
(``setup(lib, cfg, bank)``), so the very same code runs with ``lib=tapegrad`` and ``lib=torch``::

    WeightBank ──(NumPy, fixed seed, made once)──► tapegrad params   torch params
                                                    │ first step      │ first step
                                                    └──── losses agree to 1e-5 relative? ────┐
    timed pass: warm-up, repeats of N steps, median per step   (both libraries,    ◄─────────┘
                and tapegrad.compile(step): the "compiled" columns)
    memory pass: one more step, tracemalloc (tapegrad) / torch's profiler (torch)

The workloads (``WORKLOADS``, in the order of the performance issue):

=============  ===========================================================================
op-overhead    forward + backward through a chain of 200 elementwise ops on float32[16] (µs/op)
mlp            784-256-256-10 MLP, ReLU, cross-entropy, batch 64, one SGD step (ms/step)
gpt            2-block GPT, d_model 64, 4 heads, context 32, vocab 65, batch 16, Adam (ms/step)
gpt-bf16       the same GPT step under bfloat16 autocast, with tapegrad's float32 step as a
               reference (ms/step; the notes give tapegrad's bfloat16 / float32 ratio)
cnn            conv 1->16 3x3, ReLU, conv 16->32 3x3, ReLU, linear to 10, batch 32, SGD (ms/step)
matmul         1024x1024 float32 ``a @ b`` forward + backward (GFLOP/s, vs NumPy's bare ``a @ b``)
deep-chain     100,000 scalar ops, then backward (s) and peak memory
char-lstm      embedding, LSTM hidden 128 over 64 steps, linear, batch 32, Adam (ms/step)
mlp-functional the mlp with its parameters in a Python list, ``x @ w + b``, no nn.Module
gpt-functional the gpt the same way: per-block lists, ``F.layer_norm``, ``F.embedding``
cnn-functional the cnn the same way: ``F.conv2d`` with the raw weights
gpt-large      the gpt at d_model 256, 6 blocks, 8 heads, context 128, batch 4, Adam (ms/step;
               the notes give the share of the step inside the matrix products)
resnet18       ResNet-18 on 32x32 RGB images, batch 4, SGD with momentum (ms/step; the notes
               give the share of the step inside the convolutions and matrix products)
lenet-epoch    d2l-zh's LeNet (sigmoid, average pooling), one epoch of 10,000 FashionMNIST images
               in batches of 256 from a shuffled DataLoader, SGD lr 0.9 (s/epoch)
allreduce-1mb  ``dist.all_reduce`` of 1 MiB float32 on 2 ranks, against torch's gloo (ms/op)
allreduce-64mb the same with 64 MiB
ddp-step       a DistributedDataParallel step of the mlp model on 2 ranks, against torch's DDP
=============  ===========================================================================

The distributed workloads (``distributed.py``) start their ranks in processes of their own.

``--quick`` shrinks every size and runs one repeat; it is the CI smoke test
(``tests/test_benchmarks.py``) and asserts no speed ratio.
"""

from __future__ import annotations

from ._harness import Workload
from .char_lstm import WORKLOAD as CHAR_LSTM
from .cnn import WORKLOAD as CNN
from .deep_chain import WORKLOAD as DEEP_CHAIN
from .distributed import ALLREDUCE_1MB, ALLREDUCE_64MB, DDP_STEP
from .functional import CNN as CNN_FUNCTIONAL
from .functional import GPT as GPT_FUNCTIONAL
from .functional import MLP as MLP_FUNCTIONAL
from .gpt import WORKLOAD as GPT
from .gpt_bf16 import WORKLOAD as GPT_BF16
from .gpt_large import WORKLOAD as GPT_LARGE
from .lenet import WORKLOAD as LENET
from .matmul import WORKLOAD as MATMUL
from .mlp import WORKLOAD as MLP
from .op_overhead import WORKLOAD as OP_OVERHEAD
from .resnet18 import WORKLOAD as RESNET18

WORKLOADS: dict[str, Workload] = {
    w.name: w for w in (OP_OVERHEAD, MLP, GPT, CNN, MATMUL, DEEP_CHAIN)
}
WORKLOADS[CHAR_LSTM.name] = CHAR_LSTM
WORKLOADS[GPT_BF16.name] = GPT_BF16
WORKLOADS[LENET.name] = LENET
WORKLOADS.update({w.name: w for w in (MLP_FUNCTIONAL, GPT_FUNCTIONAL, CNN_FUNCTIONAL)})
WORKLOADS[GPT_LARGE.name] = GPT_LARGE
WORKLOADS[RESNET18.name] = RESNET18
WORKLOADS.update({w.name: w for w in (ALLREDUCE_1MB, ALLREDUCE_64MB, DDP_STEP)})

__all__ = ["WORKLOADS", "Workload"]
