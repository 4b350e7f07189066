import torch
torch.manual_seed(0)
from torch import nn
from d2l import torch as d2l

def trans_conv(X, K):
    h, w = K.shape
    Y = d2l.zeros((X.shape[0] + h - 1, X.shape[1] + w - 1))
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            Y[i: i + h, j: j + w] += X[i, j] * K
    return Y

X = d2l.tensor([[0.0, 1.0], [2.0, 3.0]])
K = d2l.tensor([[0.0, 1.0], [2.0, 3.0]])
_cell_value = trans_conv(X, K)
if _cell_value is not None:
    print(repr(_cell_value))

X, K = X.reshape(1, 1, 2, 2), K.reshape(1, 1, 2, 2)
tconv = nn.ConvTranspose2d(1, 1, kernel_size=2, bias=False)
tconv.weight.data = K
_cell_value = tconv(X)
if _cell_value is not None:
    print(repr(_cell_value))

tconv = nn.ConvTranspose2d(1, 1, kernel_size=2, padding=1, bias=False)
tconv.weight.data = K
_cell_value = tconv(X)
if _cell_value is not None:
    print(repr(_cell_value))

tconv = nn.ConvTranspose2d(1, 1, kernel_size=2, stride=2, bias=False)
tconv.weight.data = K
_cell_value = tconv(X)
if _cell_value is not None:
    print(repr(_cell_value))

X = torch.rand(size=(1, 10, 16, 16))
conv = nn.Conv2d(10, 20, kernel_size=5, padding=2, stride=3)
tconv = nn.ConvTranspose2d(20, 10, kernel_size=5, padding=2, stride=3)
_cell_value = tconv(conv(X)).shape == X.shape
if _cell_value is not None:
    print(repr(_cell_value))

X = d2l.arange(9.0).reshape(3, 3)
K = d2l.tensor([[1.0, 2.0], [3.0, 4.0]])
Y = d2l.corr2d(X, K)
_cell_value = Y
if _cell_value is not None:
    print(repr(_cell_value))

def kernel2matrix(K):
    k, W = d2l.zeros(5), d2l.zeros((4, 9))
    k[:2], k[3:5] = K[0, :], K[1, :]
    W[0, :5], W[1, 1:6], W[2, 3:8], W[3, 4:] = k, k, k, k
    return W

W = kernel2matrix(K)
_cell_value = W
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = Y == d2l.matmul(W, d2l.reshape(X, -1)).reshape(2, 2)
if _cell_value is not None:
    print(repr(_cell_value))

Z = trans_conv(Y, K)
_cell_value = Z == d2l.matmul(W.T, d2l.reshape(Y, -1)).reshape(3, 3)
if _cell_value is not None:
    print(repr(_cell_value))
