import torch
torch.manual_seed(0)
_cell_value = print(dir(torch.distributions))
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = help(torch.ones)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = torch.ones(4)
if _cell_value is not None:
    print(repr(_cell_value))
