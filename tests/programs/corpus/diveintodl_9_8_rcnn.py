import torch
torch.manual_seed(0)
import torchvision

_cell_value = print(torchvision.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

X = torch.arange(16, dtype=torch.float).view(1, 1, 4, 4)
_cell_value = X
if _cell_value is not None:
    print(repr(_cell_value))

rois = torch.tensor([[0, 0, 0, 20, 20], [0, 0, 10, 30, 30]], dtype=torch.float)

_cell_value = torchvision.ops.roi_pool(X, rois, output_size=(2, 2), spatial_scale=0.1)
if _cell_value is not None:
    print(repr(_cell_value))
