"""Mixed precision: one model trained in float32, float16, float16 with a GradScaler and
bfloat16 autocast, side by side.

What it teaches: float16 has 10 bits of mantissa and stops at 65504; bfloat16 keeps float32's
range with 7 bits of mantissa. The model here is a small ReLU network on raw, unnormalized
features (tens), with the squared error summed over the batch, so its weight gradients are
large numbers. The four runs share the data, the initial weights and plain SGD:

    float32            loss = F.mse_loss(model(x), y, reduction="sum")
    float16            model.half(), x.half(), y.half(): the same loop in float16
    float16 + scaler   with torch.autocast("cpu", dtype=torch.float16): loss = ...
                       scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
    bfloat16           with torch.autocast("cpu", dtype=torch.bfloat16): loss = ...

In float16 a weight gradient overflows to inf on the first step (the gradient health check says
which parameter), the update writes it into the weights and the loss is NaN from then on. The
GradScaler meets the same inf gradients, skips those steps and halves its scale until the
gradients fit, then trains as float32 does. bfloat16 needs no scaling at all. The report prints
the first and last loss of each run, where float16 broke, the steps the scaler skipped and the
time per step; the picture (``OUT_DIR/mixed_precision.png``, needs matplotlib) shows the four loss
curves and the scaler's scale history. ``TAPEGRAD_LANG=zh`` prints the report in Chinese.

    python examples/12_mixed_precision.py [OUT_DIR]     (TAPEGRAD_EXAMPLES_QUICK=1: 20 steps)
    tapegrad precision --plot mixed_precision.png       (the same, from the command line)
"""

import os
import sys

import tapegrad as torch

QUICK = os.environ.get("TAPEGRAD_EXAMPLES_QUICK") == "1"
STEPS = 20 if QUICK else 60
out_dir = sys.argv[1] if len(sys.argv) > 1 else "."

report = torch.show.precision_lab(STEPS)
print(report)

scaler_run = report["float16+scaler"]
print("\nGradScaler's scale after each of the first 20 steps:")
print("  " + " ".join(f"{s:g}" for s in scaler_run.scales[:20]))

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("\n(matplotlib is not installed: no picture)")
else:
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "mixed_precision.png")
    report.plot(path)
    print(f"\npicture: {path}")
