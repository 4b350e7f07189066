from d2l import torch as d2l
import torch
torch.manual_seed(0)

X, W_xh = d2l.normal(0, 1, (3, 1)), d2l.normal(0, 1, (1, 4))
H, W_hh = d2l.normal(0, 1, (3, 4)), d2l.normal(0, 1, (4, 4))
_cell_value = d2l.matmul(X, W_xh) + d2l.matmul(H, W_hh)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = d2l.matmul(d2l.concat((X, H), 1), d2l.concat((W_xh, W_hh), 0))
if _cell_value is not None:
    print(repr(_cell_value))
