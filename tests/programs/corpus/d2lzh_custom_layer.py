import torch
torch.manual_seed(0)
from torch import nn
import torch.nn.functional as F

class CenteredLayer(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return X - X.mean()

layer = CenteredLayer()
_cell_value = layer(torch.FloatTensor([1, 2, 3, 4, 5]))
if _cell_value is not None:
    print(repr(_cell_value))

net = nn.Sequential(nn.Linear(8, 128), CenteredLayer())

Y = net(torch.rand(4, 8))
_cell_value = Y.mean()
if _cell_value is not None:
    print(repr(_cell_value))

class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units,))
    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return F.relu(linear)

linear = MyLinear(5, 3)
_cell_value = linear.weight
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = linear(torch.rand(2, 5))
if _cell_value is not None:
    print(repr(_cell_value))

net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
_cell_value = net(torch.rand(2, 64))
if _cell_value is not None:
    print(repr(_cell_value))
