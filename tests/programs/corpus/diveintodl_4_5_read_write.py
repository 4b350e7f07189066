import torch
torch.manual_seed(0)
from torch import nn

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.ones(3)
_cell_value = torch.save(x, 'x.pt')
if _cell_value is not None:
    print(repr(_cell_value))

x2 = torch.load('x.pt')
_cell_value = x2
if _cell_value is not None:
    print(repr(_cell_value))

y = torch.zeros(4)
torch.save([x, y], 'xy.pt')
xy_list = torch.load('xy.pt')
_cell_value = xy_list
if _cell_value is not None:
    print(repr(_cell_value))

torch.save({'x': x, 'y': y}, 'xy_dict.pt')
xy = torch.load('xy_dict.pt')
_cell_value = xy
if _cell_value is not None:
    print(repr(_cell_value))

class MLP(nn.Module):
    def __init__(self):
        super(MLP, self).__init__()
        self.hidden = nn.Linear(3, 2)
        self.act = nn.ReLU()
        self.output = nn.Linear(2, 1)

    def forward(self, x):
        a = self.act(self.hidden(x))
        return self.output(a)

net = MLP()
_cell_value = net.state_dict()
if _cell_value is not None:
    print(repr(_cell_value))

optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
_cell_value = optimizer.state_dict()
if _cell_value is not None:
    print(repr(_cell_value))

X = torch.randn(2, 3)
Y = net(X)

PATH = "./net.pt"
torch.save(net.state_dict(), PATH)

net2 = MLP()
net2.load_state_dict(torch.load(PATH))
Y2 = net2(X)
_cell_value = Y2 == Y
if _cell_value is not None:
    print(repr(_cell_value))
