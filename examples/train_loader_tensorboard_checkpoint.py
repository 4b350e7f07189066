"""A PyTorch training script as tutorials write it, run unchanged on tapegrad.

What it shows: the device chosen with ``torch.cuda.is_available()``, a ``DataLoader`` with two
worker processes, TensorBoard logging, an optimizer with a learning-rate schedule, and a
checkpoint written with ``torch.save`` that real PyTorch can load.

    tapegrad run examples/train_loader_tensorboard_checkpoint.py OUT_DIR
    python examples/train_loader_tensorboard_checkpoint.py OUT_DIR      # the same, on torch
"""

import os
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter


def main(out_dir: str) -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print("device:", device)
    torch.manual_seed(0)

    x = torch.randn(512, 10)
    y = (x[:, :3].sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, num_workers=2)

    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    writer = SummaryWriter(os.path.join(out_dir, "runs"))

    step = 0
    for epoch in range(4):
        model.train()
        total = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            writer.add_scalar("train/loss", loss.item(), step)
            total += loss.item()
            step += 1
        scheduler.step()
        model.eval()
        with torch.no_grad():
            accuracy = (model(x.to(device)).argmax(dim=1) == y.to(device)).float().mean()
        writer.add_scalar("train/accuracy", accuracy.item(), epoch)
        print(f"epoch {epoch}: loss {total / len(loader):.6f}, accuracy {accuracy.item():.4f}")
    writer.close()

    path = os.path.join(out_dir, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": 4}, path)
    print("saved", os.path.basename(path))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
