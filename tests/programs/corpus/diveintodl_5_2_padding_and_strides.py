import torch
torch.manual_seed(0)
from torch import nn

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

# 定义一个函数来计算卷积层。它对输入和输出做相应的升维和降维
def comp_conv2d(conv2d, X):
    # (1, 1)代表批量大小和通道数（“多输入通道和多输出通道”一节将介绍）均为1
    X = X.view((1, 1) + X.shape)
    Y = conv2d(X)
    return Y.view(Y.shape[2:])  # 排除不关心的前两维：批量和通道

# 注意这里是两侧分别填充1行或列，所以在两侧一共填充2行或列
conv2d = nn.Conv2d(in_channels=1, out_channels=1, kernel_size=3, padding=1)

X = torch.rand(8, 8)
_cell_value = comp_conv2d(conv2d, X).shape
if _cell_value is not None:
    print(repr(_cell_value))

# 使用高为5、宽为3的卷积核。在高和宽两侧的填充数分别为2和1
conv2d = nn.Conv2d(in_channels=1, out_channels=1, kernel_size=(5, 3), padding=(2, 1))
_cell_value = comp_conv2d(conv2d, X).shape
if _cell_value is not None:
    print(repr(_cell_value))

conv2d = nn.Conv2d(1, 1, kernel_size=3, padding=1, stride=2)
_cell_value = comp_conv2d(conv2d, X).shape
if _cell_value is not None:
    print(repr(_cell_value))

conv2d = nn.Conv2d(1, 1, kernel_size=(3, 5), padding=(0, 1), stride=(3, 4))
_cell_value = comp_conv2d(conv2d, X).shape
if _cell_value is not None:
    print(repr(_cell_value))
