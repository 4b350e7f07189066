"""Draw the health plots the README shows, from real training runs on tapegrad.

    python docs/make_health_pictures.py     (needs matplotlib: pip install 'tapegrad[viz]')

Two 10-layer MLPs learn the same 10-class problem for 40 SGD steps with a
``tapegrad.show.Monitor`` attached: one with sigmoids between the layers (the gradient norm falls
by about ten from each layer to the one before it: vanishing), one with ReLU and He
initialization (the layers' norms stay together). Writes docs/img/health_plot.png (the
sigmoid network, the README's picture) and docs/img/health_plot_relu.png, and prints the two
reports.
"""

from __future__ import annotations

from pathlib import Path

import tapegrad as torch
from tapegrad import nn
from tapegrad.show import Monitor

OUT = Path(__file__).resolve().parent / "img"


def mlp(activation: type, he: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(10):
        linear = nn.Linear(32, 32 if i < 9 else 10)
        if he:
            nn.init.kaiming_normal_(linear.weight, nonlinearity="relu")
            nn.init.zeros_(linear.bias)
        layers.append(linear)
        if i < 9:
            layers.append(activation())
    return nn.Sequential(*layers)


def run(name: str, activation: type, he: bool, filename: str) -> None:
    torch.manual_seed(0)
    model = mlp(activation, he)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(128, 32), torch.randint(0, 10, (128,))
    with Monitor(model, opt, lang="en") as monitor:
        for _ in range(40):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    print(monitor.report())
    fig = monitor.plot()
    fig.axes[0].set_title(f"Gradient norm per layer over training: {name}")
    fig.savefig(OUT / filename, dpi=80)


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    run("sigmoid MLP, 10 layers", nn.Sigmoid, he=False, filename="health_plot.png")
    run("ReLU MLP, 10 layers, He init", nn.ReLU, he=True, filename="health_plot_relu.png")
