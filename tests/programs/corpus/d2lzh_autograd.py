import torch
torch.manual_seed(0)

x = torch.arange(4.0)
_cell_value = x
if _cell_value is not None:
    print(repr(_cell_value))

x.requires_grad_(True)  # 等价于x=torch.arange(4.0,requires_grad=True)
_cell_value = x.grad  # 默认值是None
if _cell_value is not None:
    print(repr(_cell_value))

y = 2 * torch.dot(x, x)
_cell_value = y
if _cell_value is not None:
    print(repr(_cell_value))

y.backward()
_cell_value = x.grad
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = x.grad == 4 * x
if _cell_value is not None:
    print(repr(_cell_value))

# 在默认情况下，PyTorch会累积梯度，我们需要清除之前的值
x.grad.zero_()
y = x.sum()
y.backward()
_cell_value = x.grad
if _cell_value is not None:
    print(repr(_cell_value))

# 对非标量调用backward需要传入一个gradient参数，该参数指定微分函数关于self的梯度。
# 本例只想求偏导数的和，所以传递一个1的梯度是合适的
x.grad.zero_()
y = x * x
# 等价于y.backward(torch.ones(len(x)))
y.sum().backward()
_cell_value = x.grad
if _cell_value is not None:
    print(repr(_cell_value))

x.grad.zero_()
y = x * x
u = y.detach()
z = u * x

z.sum().backward()
_cell_value = x.grad == u
if _cell_value is not None:
    print(repr(_cell_value))

x.grad.zero_()
y.sum().backward()
_cell_value = x.grad == 2 * x
if _cell_value is not None:
    print(repr(_cell_value))

def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c

a = torch.randn(size=(), requires_grad=True)
d = f(a)
_cell_value = d.backward()
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = a.grad == d / a
if _cell_value is not None:
    print(repr(_cell_value))
