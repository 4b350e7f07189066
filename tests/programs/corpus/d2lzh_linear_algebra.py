import torch
torch.manual_seed(0)

x = torch.tensor(3.0)
y = torch.tensor(2.0)

_cell_value = x + y, x * y, x / y, x**y
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.arange(4)
_cell_value = x
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = x[3]
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = len(x)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = x.shape
if _cell_value is not None:
    print(repr(_cell_value))

A = torch.arange(20).reshape(5, 4)
_cell_value = A
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A.T
if _cell_value is not None:
    print(repr(_cell_value))

B = torch.tensor([[1, 2, 3], [2, 0, 4], [3, 4, 5]])
_cell_value = B
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = B == B.T
if _cell_value is not None:
    print(repr(_cell_value))

X = torch.arange(24).reshape(2, 3, 4)
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

A = torch.arange(20, dtype=torch.float32).reshape(5, 4)
B = A.clone()  # 通过分配新内存，将A的一个副本分配给B
_cell_value = A, A + B
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A * B
if _cell_value is not None:
    print(repr(_cell_value))

a = 2
X = torch.arange(24).reshape(2, 3, 4)
_cell_value = a + X, (a * X).shape
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.arange(4, dtype=torch.float32)
_cell_value = x, x.sum()
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A.shape, A.sum()
if _cell_value is not None:
    print(repr(_cell_value))

A_sum_axis0 = A.sum(axis=0)
_cell_value = A_sum_axis0, A_sum_axis0.shape
if _cell_value is not None:
    print(repr(_cell_value))

A_sum_axis1 = A.sum(axis=1)
_cell_value = A_sum_axis1, A_sum_axis1.shape
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A.sum(axis=[0, 1])  # 结果和A.sum()相同
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A.mean(), A.sum() / A.numel()
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A.mean(axis=0), A.sum(axis=0) / A.shape[0]
if _cell_value is not None:
    print(repr(_cell_value))

sum_A = A.sum(axis=1, keepdims=True)
_cell_value = sum_A
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A / sum_A
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A.cumsum(axis=0)
if _cell_value is not None:
    print(repr(_cell_value))

y = torch.ones(4, dtype = torch.float32)
_cell_value = x, y, torch.dot(x, y)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.sum(x * y)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = A.shape, x.shape, torch.mv(A, x)
if _cell_value is not None:
    print(repr(_cell_value))

B = torch.ones(4, 3)
_cell_value = torch.mm(A, B)
if _cell_value is not None:
    print(repr(_cell_value))

u = torch.tensor([3.0, -4.0])
_cell_value = torch.norm(u)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.abs(u).sum()
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.norm(torch.ones((4, 9)))
if _cell_value is not None:
    print(repr(_cell_value))
