import torch
torch.manual_seed(0)
from torch import nn

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

class CenteredLayer(nn.Module):
    def __init__(self, **kwargs):
        super(CenteredLayer, self).__init__(**kwargs)
    def forward(self, x):
        return x - x.mean()

layer = CenteredLayer()
_cell_value = layer(torch.tensor([1, 2, 3, 4, 5], dtype=torch.float))
if _cell_value is not None:
    print(repr(_cell_value))

net = nn.Sequential(nn.Linear(8, 128), CenteredLayer())

y = net(torch.rand(4, 8))
_cell_value = y.mean().item()
if _cell_value is not None:
    print(repr(_cell_value))

class MyListDense(nn.Module):
    def __init__(self):
        super(MyListDense, self).__init__()
        self.params = nn.ParameterList([nn.Parameter(torch.randn(4, 4)) for i in range(3)])
        self.params.append(nn.Parameter(torch.randn(4, 1)))

    def forward(self, x):
        for i in range(len(self.params)):
            x = torch.mm(x, self.params[i])
        return x
net = MyListDense()
_cell_value = print(net)
if _cell_value is not None:
    print(repr(_cell_value))

class MyDictDense(nn.Module):
    def __init__(self):
        super(MyDictDense, self).__init__()
        self.params = nn.ParameterDict({
                'linear1': nn.Parameter(torch.randn(4, 4)),
                'linear2': nn.Parameter(torch.randn(4, 1))
        })
        self.params.update({'linear3': nn.Parameter(torch.randn(4, 2))}) # 新增

    def forward(self, x, choice='linear1'):
        return torch.mm(x, self.params[choice])

net = MyDictDense()
_cell_value = print(net)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.ones(1, 4)
print(net(x, 'linear1'))
print(net(x, 'linear2'))
_cell_value = print(net(x, 'linear3'))
if _cell_value is not None:
    print(repr(_cell_value))

net = nn.Sequential(
    MyDictDense(),
    MyListDense(),
)
print(net)
_cell_value = print(net(x))
if _cell_value is not None:
    print(repr(_cell_value))
