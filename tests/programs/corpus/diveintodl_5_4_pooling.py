import torch
torch.manual_seed(0)
from torch import nn

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

def pool2d(X, pool_size, mode='max'):
    X = X.float()
    p_h, p_w = pool_size
    Y = torch.zeros(X.shape[0] - p_h + 1, X.shape[1] - p_w + 1)
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            if mode == 'max':
                Y[i, j] = X[i: i + p_h, j: j + p_w].max()
            elif mode == 'avg':
                Y[i, j] = X[i: i + p_h, j: j + p_w].mean()       
    return Y

X = torch.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
_cell_value = pool2d(X, (2, 2))
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = pool2d(X, (2, 2), 'avg')
if _cell_value is not None:
    print(repr(_cell_value))

X = torch.arange(16, dtype=torch.float).view((1, 1, 4, 4))
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

pool2d = nn.MaxPool2d((2, 4), padding=(1, 2), stride=(2, 3))
_cell_value = pool2d(X)
if _cell_value is not None:
    print(repr(_cell_value))

X = torch.cat((X, X + 1), dim=1)
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

pool2d = nn.MaxPool2d(3, padding=1, stride=2)
_cell_value = pool2d(X)
if _cell_value is not None:
    print(repr(_cell_value))
