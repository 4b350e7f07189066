import torch
torch.manual_seed(0)
from time import time

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

a = torch.ones(1000)
b = torch.ones(1000)

start = time()
c = torch.zeros(1000)
for i in range(1000):
    c[i] = a[i] + b[i]
_cell_value = print(time() - start)
if _cell_value is not None:
    print(repr(_cell_value))

start = time()
d = a + b
_cell_value = print(time() - start)
if _cell_value is not None:
    print(repr(_cell_value))

a = torch.ones(3)
b = 10
_cell_value = print(a + b)
if _cell_value is not None:
    print(repr(_cell_value))
