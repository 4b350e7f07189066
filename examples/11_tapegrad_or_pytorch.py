"""One file, two libraries: the same training script on tapegrad and on PyTorch, and a checkpoint
written by one and loaded by the other.

What it teaches: tapegrad is used as ``import tapegrad as torch``; after that line the program is
plain PyTorch, so choosing the library is a one-line switch (here ``--backend`` or the environment
variable ``TAPEGRAD_EXAMPLE_BACKEND``). With the same seed both print the same losses, because
tapegrad draws the same random numbers as PyTorch's CPU generator. ``torch.save`` writes PyTorch's
zip format in both, so a checkpoint saved by either loads into the other with
``torch.load(..., weights_only=True)``, and the loaded model predicts what the saving one did.

    python examples/11_tapegrad_or_pytorch.py --backend tapegrad --save a.pt
    python examples/11_tapegrad_or_pytorch.py --backend torch --load a.pt      # PyTorch reads it
    python examples/11_tapegrad_or_pytorch.py --backend torch --save b.pt
    python examples/11_tapegrad_or_pytorch.py --load b.pt                      # and back
"""

import argparse
import importlib
import os

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--backend", choices=["tapegrad", "torch"],
                    default=os.environ.get("TAPEGRAD_EXAMPLE_BACKEND", "tapegrad"))
parser.add_argument("--save", metavar="PATH", help="train, then save a checkpoint here")
parser.add_argument("--load", metavar="PATH", help="load a checkpoint and check its predictions")
args = parser.parse_args()

torch = importlib.import_module(args.backend)   # the one line that differs: the library
nn = torch.nn


def make_model():
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))


torch.manual_seed(0)
x = torch.randn(64, 4)
y = x[:, :1] * 2 - x[:, 1:2] + 0.5
probe = torch.linspace(-1, 1, 12).view(3, 4)      # fixed inputs to compare predictions on

if args.load:
    ckpt = torch.load(args.load, weights_only=True)
    model = make_model()
    model.load_state_dict(ckpt["model"])           # strict: every name and shape must match
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.load_state_dict(ckpt["optimizer"])   # the momentum buffers come along
    with torch.no_grad():
        diff = (model(probe) - ckpt["predictions"]).abs().max().item()
    print(f"{args.backend} loaded a checkpoint written by {ckpt['written_by']} "
          f"(step {ckpt['step']}): predictions differ by at most {diff:.1e}")
    assert diff < 1e-6
else:
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(1, 51):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step}  loss {loss.item():.6f}")
    with torch.no_grad():
        predictions = model(probe)
    print("predictions:", [round(v, 5) for v in predictions.flatten().tolist()])
    if args.save:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "predictions": predictions, "step": 50, "written_by": args.backend},
                   args.save)
        print(f"saved {args.save}")
