# %matplotlib inline
from d2l import torch as d2l
import torch
torch.manual_seed(0)

x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = torch.sigmoid(x)
y.backward(torch.ones_like(x))

_cell_value = d2l.plot(x.detach().numpy(), [y.detach().numpy(), x.grad.numpy()],
         legend=['sigmoid', 'gradient'], figsize=(4.5, 2.5))
if _cell_value is not None:
    print(repr(_cell_value))

M = torch.normal(0, 1, size=(4,4))
print('一个矩阵 \n',M)
for i in range(100):
    M = torch.mm(M,torch.normal(0, 1, size=(4, 4)))

_cell_value = print('乘以100个矩阵后\n', M)
if _cell_value is not None:
    print(repr(_cell_value))
