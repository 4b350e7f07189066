# %matplotlib inline
import torch
torch.manual_seed(0)
import numpy as np
import matplotlib.pylab as plt
import sys
sys.path.append("..") 
import d2lzh_pytorch as d2l

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

def xyplot(x_vals, y_vals, name):
    d2l.set_figsize(figsize=(5, 2.5))
    d2l.plt.plot(x_vals.detach().numpy(), y_vals.detach().numpy())
    d2l.plt.xlabel('x')
    d2l.plt.ylabel(name + '(x)')

x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = x.relu()
_cell_value = xyplot(x, y, 'relu')
if _cell_value is not None:
    print(repr(_cell_value))

y.sum().backward()
_cell_value = xyplot(x, x.grad, 'grad of relu')
if _cell_value is not None:
    print(repr(_cell_value))

y = x.sigmoid()
_cell_value = xyplot(x, y, 'sigmoid')
if _cell_value is not None:
    print(repr(_cell_value))

x.grad.zero_()
y.sum().backward()
_cell_value = xyplot(x, x.grad, 'grad of sigmoid')
if _cell_value is not None:
    print(repr(_cell_value))

y = x.tanh()
_cell_value = xyplot(x, y, 'tanh')
if _cell_value is not None:
    print(repr(_cell_value))

x.grad.zero_()
y.sum().backward()
_cell_value = xyplot(x, x.grad, 'grad of tanh')
if _cell_value is not None:
    print(repr(_cell_value))
