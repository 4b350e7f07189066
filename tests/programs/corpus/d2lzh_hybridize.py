def add(a, b):
    return a + b

def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g

_cell_value = print(fancy_func(1, 2, 3, 4))
if _cell_value is not None:
    print(repr(_cell_value))

def add_():
    return '''
def add(a, b):
    return a + b
'''

def fancy_func_():
    return '''
def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g
'''

def evoke_():
    return add_() + fancy_func_() + 'print(fancy_func(1, 2, 3, 4))'

prog = evoke_()
print(prog)
y = compile(prog, '', 'exec')
_cell_value = exec(y)
if _cell_value is not None:
    print(repr(_cell_value))

from d2l import torch as d2l
import torch
torch.manual_seed(0)
from torch import nn

# 生产网络的工厂模式
def get_net():
    net = nn.Sequential(nn.Linear(512, 256),
            nn.ReLU(),
            nn.Linear(256, 128),
            nn.ReLU(),
            nn.Linear(128, 2))
    return net

x = torch.randn(size=(1, 512))
net = get_net()
_cell_value = net(x)
if _cell_value is not None:
    print(repr(_cell_value))

net = torch.jit.script(net)
_cell_value = net(x)
if _cell_value is not None:
    print(repr(_cell_value))

#@save
class Benchmark:
    """用于测量运行时间"""
    def __init__(self, description='Done'):
        self.description = description

    def __enter__(self):
        self.timer = d2l.Timer()
        return self

    def __exit__(self, *args):
        print(f'{self.description}: {self.timer.stop():.4f} sec')

net = get_net()
with Benchmark('无torchscript'):
    for i in range(1000): net(x)

net = torch.jit.script(net)
with Benchmark('有torchscript'):
    for i in range(1000): net(x)

_cell_value = net.save('my_mlp')
# !ls -lh my_mlp*
if _cell_value is not None:
    print(repr(_cell_value))
