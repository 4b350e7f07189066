import torch
torch.manual_seed(0)

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

X, W_xh = torch.randn(3, 1), torch.randn(1, 4)
H, W_hh = torch.randn(3, 4), torch.randn(4, 4)
_cell_value = torch.matmul(X, W_xh) + torch.matmul(H, W_hh)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.matmul(torch.cat((X, H), dim=1), torch.cat((W_xh, W_hh), dim=0))
if _cell_value is not None:
    print(repr(_cell_value))
