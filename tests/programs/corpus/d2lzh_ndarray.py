import torch
torch.manual_seed(0)

x = torch.arange(12)
_cell_value = x
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = x.shape
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = x.numel()
if _cell_value is not None:
    print(repr(_cell_value))

X = x.reshape(3, 4)
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.zeros((2, 3, 4))
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.ones((2, 3, 4))
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.randn(3, 4)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.tensor([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.tensor([1.0, 2, 4, 8])
y = torch.tensor([2, 2, 2, 2])
_cell_value = x + y, x - y, x * y, x / y, x ** y  # **运算符是求幂运算
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.exp(x)
if _cell_value is not None:
    print(repr(_cell_value))

X = torch.arange(12, dtype=torch.float32).reshape((3,4))
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
_cell_value = torch.cat((X, Y), dim=0), torch.cat((X, Y), dim=1)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = X == Y
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = X.sum()
if _cell_value is not None:
    print(repr(_cell_value))

a = torch.arange(3).reshape((3, 1))
b = torch.arange(2).reshape((1, 2))
_cell_value = a, b
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = a + b
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = X[-1], X[1:3]
if _cell_value is not None:
    print(repr(_cell_value))

X[1, 2] = 9
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

X[0:2, :] = 12
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

before = id(Y)
Y = Y + X
_cell_value = id(Y) == before
if _cell_value is not None:
    print(repr(_cell_value))

Z = torch.zeros_like(Y)
print('id(Z):', id(Z))
Z[:] = X + Y
_cell_value = print('id(Z):', id(Z))
if _cell_value is not None:
    print(repr(_cell_value))

before = id(X)
X += Y
_cell_value = id(X) == before
if _cell_value is not None:
    print(repr(_cell_value))

A = X.numpy()
B = torch.tensor(A)
_cell_value = type(A), type(B)
if _cell_value is not None:
    print(repr(_cell_value))

a = torch.tensor([3.5])
_cell_value = a, a.item(), float(a), int(a)
if _cell_value is not None:
    print(repr(_cell_value))
