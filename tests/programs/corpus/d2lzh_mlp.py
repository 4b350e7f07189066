# %matplotlib inline
from d2l import torch as d2l
import torch
torch.manual_seed(0)

x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = torch.relu(x)
_cell_value = d2l.plot(x.detach(), y.detach(), 'x', 'relu(x)', figsize=(5, 2.5))
if _cell_value is not None:
    print(repr(_cell_value))

y.backward(torch.ones_like(x), retain_graph=True)
_cell_value = d2l.plot(x.detach(), x.grad, 'x', 'grad of relu', figsize=(5, 2.5))
if _cell_value is not None:
    print(repr(_cell_value))

y = torch.sigmoid(x)
_cell_value = d2l.plot(x.detach(), y.detach(), 'x', 'sigmoid(x)', figsize=(5, 2.5))
if _cell_value is not None:
    print(repr(_cell_value))

# 清除以前的梯度
x.grad.data.zero_()
y.backward(torch.ones_like(x),retain_graph=True)
_cell_value = d2l.plot(x.detach(), x.grad, 'x', 'grad of sigmoid', figsize=(5, 2.5))
if _cell_value is not None:
    print(repr(_cell_value))

y = torch.tanh(x)
_cell_value = d2l.plot(x.detach(), y.detach(), 'x', 'tanh(x)', figsize=(5, 2.5))
if _cell_value is not None:
    print(repr(_cell_value))

# 清除以前的梯度
x.grad.data.zero_()
y.backward(torch.ones_like(x),retain_graph=True)
_cell_value = d2l.plot(x.detach(), x.grad, 'x', 'grad of tanh', figsize=(5, 2.5))
if _cell_value is not None:
    print(repr(_cell_value))
