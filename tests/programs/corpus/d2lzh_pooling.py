from d2l import torch as d2l
import torch
torch.manual_seed(0)
from torch import nn

def pool2d(X, pool_size, mode='max'):
    p_h, p_w = pool_size
    Y = d2l.zeros((X.shape[0] - p_h + 1, X.shape[1] - p_w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            if mode == 'max':
                Y[i, j] = X[i: i + p_h, j: j + p_w].max()
            elif mode == 'avg':
                Y[i, j] = X[i: i + p_h, j: j + p_w].mean()
    return Y

X = d2l.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
_cell_value = pool2d(X, (2, 2))
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = pool2d(X, (2, 2), 'avg')
if _cell_value is not None:
    print(repr(_cell_value))

X = d2l.reshape(d2l.arange(16, dtype=d2l.float32), (1, 1, 4, 4))
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

pool2d = nn.MaxPool2d(3)
_cell_value = pool2d(X)
if _cell_value is not None:
    print(repr(_cell_value))

pool2d = nn.MaxPool2d(3, padding=1, stride=2)
_cell_value = pool2d(X)
if _cell_value is not None:
    print(repr(_cell_value))

pool2d = nn.MaxPool2d((2, 3), stride=(2, 3), padding=(0, 1))
_cell_value = pool2d(X)
if _cell_value is not None:
    print(repr(_cell_value))

X = d2l.concat((X, X + 1), 1)
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

pool2d = nn.MaxPool2d(3, padding=1, stride=2)
_cell_value = pool2d(X)
if _cell_value is not None:
    print(repr(_cell_value))
