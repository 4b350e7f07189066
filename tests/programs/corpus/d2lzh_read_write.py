import torch
torch.manual_seed(0)
from torch import nn
from torch.nn import functional as F

x = torch.arange(4)
_cell_value = torch.save(x, 'x-file')
if _cell_value is not None:
    print(repr(_cell_value))

x2 = torch.load('x-file')
_cell_value = x2
if _cell_value is not None:
    print(repr(_cell_value))

y = torch.zeros(4)
torch.save([x, y],'x-files')
x2, y2 = torch.load('x-files')
_cell_value = (x2, y2)
if _cell_value is not None:
    print(repr(_cell_value))

mydict = {'x': x, 'y': y}
torch.save(mydict, 'mydict')
mydict2 = torch.load('mydict')
_cell_value = mydict2
if _cell_value is not None:
    print(repr(_cell_value))

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(20, 256)
        self.output = nn.Linear(256, 10)

    def forward(self, x):
        return self.output(F.relu(self.hidden(x)))

net = MLP()
X = torch.randn(size=(2, 20))
Y = net(X)

_cell_value = torch.save(net.state_dict(), 'mlp.params')
if _cell_value is not None:
    print(repr(_cell_value))

clone = MLP()
clone.load_state_dict(torch.load('mlp.params'))
_cell_value = clone.eval()
if _cell_value is not None:
    print(repr(_cell_value))

Y_clone = clone(X)
_cell_value = Y_clone == Y
if _cell_value is not None:
    print(repr(_cell_value))
