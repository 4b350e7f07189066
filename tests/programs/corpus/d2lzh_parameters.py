import torch
torch.manual_seed(0)
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
X = torch.rand(size=(2, 4))
_cell_value = net(X)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = print(net[2].state_dict())
if _cell_value is not None:
    print(repr(_cell_value))

print(type(net[2].bias))
print(net[2].bias)
_cell_value = print(net[2].bias.data)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = net[2].weight.grad == None
if _cell_value is not None:
    print(repr(_cell_value))

print(*[(name, param.shape) for name, param in net[0].named_parameters()])
_cell_value = print(*[(name, param.shape) for name, param in net.named_parameters()])
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = net.state_dict()['2.bias'].data
if _cell_value is not None:
    print(repr(_cell_value))

def block1():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                         nn.Linear(8, 4), nn.ReLU())

def block2():
    net = nn.Sequential()
    for i in range(4):
        # 在这里嵌套
        net.add_module(f'block {i}', block1())
    return net

rgnet = nn.Sequential(block2(), nn.Linear(4, 1))
_cell_value = rgnet(X)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = print(rgnet)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = rgnet[0][1][0].bias.data
if _cell_value is not None:
    print(repr(_cell_value))

def init_normal(m):
    if type(m) == nn.Linear:
        nn.init.normal_(m.weight, mean=0, std=0.01)
        nn.init.zeros_(m.bias)
net.apply(init_normal)
_cell_value = net[0].weight.data[0], net[0].bias.data[0]
if _cell_value is not None:
    print(repr(_cell_value))

def init_constant(m):
    if type(m) == nn.Linear:
        nn.init.constant_(m.weight, 1)
        nn.init.zeros_(m.bias)
net.apply(init_constant)
_cell_value = net[0].weight.data[0], net[0].bias.data[0]
if _cell_value is not None:
    print(repr(_cell_value))

def init_xavier(m):
    if type(m) == nn.Linear:
        nn.init.xavier_uniform_(m.weight)
def init_42(m):
    if type(m) == nn.Linear:
        nn.init.constant_(m.weight, 42)

net[0].apply(init_xavier)
net[2].apply(init_42)
print(net[0].weight.data[0])
_cell_value = print(net[2].weight.data)
if _cell_value is not None:
    print(repr(_cell_value))

def my_init(m):
    if type(m) == nn.Linear:
        print("Init", *[(name, param.shape)
                        for name, param in m.named_parameters()][0])
        nn.init.uniform_(m.weight, -10, 10)
        m.weight.data *= m.weight.data.abs() >= 5

net.apply(my_init)
_cell_value = net[0].weight[:2]
if _cell_value is not None:
    print(repr(_cell_value))

net[0].weight.data[:] += 1
net[0].weight.data[0, 0] = 42
_cell_value = net[0].weight.data[0]
if _cell_value is not None:
    print(repr(_cell_value))

# 我们需要给共享层一个名称，以便可以引用它的参数
shared = nn.Linear(8, 8)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                    shared, nn.ReLU(),
                    shared, nn.ReLU(),
                    nn.Linear(8, 1))
net(X)
# 检查参数是否相同
print(net[2].weight.data[0] == net[4].weight.data[0])
net[2].weight.data[0, 0] = 100
# 确保它们实际上是同一个对象，而不只是有相同的值
_cell_value = print(net[2].weight.data[0] == net[4].weight.data[0])
if _cell_value is not None:
    print(repr(_cell_value))
