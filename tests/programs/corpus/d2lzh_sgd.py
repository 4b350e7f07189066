# %matplotlib inline
from d2l import torch as d2l
import math
import torch
torch.manual_seed(0)

def f(x1, x2):  # 目标函数
    return x1 ** 2 + 2 * x2 ** 2

def f_grad(x1, x2):  # 目标函数的梯度
    return 2 * x1, 4 * x2

def sgd(x1, x2, s1, s2, f_grad):
    g1, g2 = f_grad(x1, x2)
    # 模拟有噪声的梯度
    g1 += d2l.normal(0.0, 1, (1,)).item()
    g2 += d2l.normal(0.0, 1, (1,)).item()
    eta_t = eta * lr()
    return (x1 - eta_t * g1, x2 - eta_t * g2, 0, 0)

def constant_lr():
    return 1

eta = 0.1
lr = constant_lr  # 常数学习速度
_cell_value = d2l.show_trace_2d(f, d2l.train_2d(sgd, steps=50, f_grad=f_grad))
if _cell_value is not None:
    print(repr(_cell_value))

def exponential_lr():
    # 在函数外部定义，而在内部更新的全局变量
    global t
    t += 1
    return math.exp(-0.1 * t)

t = 1
lr = exponential_lr
_cell_value = d2l.show_trace_2d(f, d2l.train_2d(sgd, steps=1000, f_grad=f_grad))
if _cell_value is not None:
    print(repr(_cell_value))

def polynomial_lr():
    # 在函数外部定义，而在内部更新的全局变量
    global t
    t += 1
    return (1 + 0.1 * t) ** (-0.5)

t = 1
lr = polynomial_lr
_cell_value = d2l.show_trace_2d(f, d2l.train_2d(sgd, steps=50, f_grad=f_grad))
if _cell_value is not None:
    print(repr(_cell_value))
