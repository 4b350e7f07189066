import torch
torch.manual_seed(0)

torch.manual_seed(0)
torch.cuda.manual_seed(0)
_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.empty(5, 3)
_cell_value = print(x)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.rand(5, 3)
_cell_value = print(x)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.zeros(5, 3, dtype=torch.long)
_cell_value = print(x)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.tensor([5.5, 3])
_cell_value = print(x)
if _cell_value is not None:
    print(repr(_cell_value))

x = x.new_ones(5, 3, dtype=torch.float64)      # 返回的tensor默认具有相同的torch.dtype和torch.device
print(x)

x = torch.randn_like(x, dtype=torch.float)    # 指定新的数据类型
_cell_value = print(x)
if _cell_value is not None:
    print(repr(_cell_value))

print(x.size())
_cell_value = print(x.shape)
if _cell_value is not None:
    print(repr(_cell_value))

y = torch.rand(5, 3)
_cell_value = print(x + y)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = print(torch.add(x, y))
if _cell_value is not None:
    print(repr(_cell_value))

result = torch.empty(5, 3)
torch.add(x, y, out=result)
_cell_value = print(result)
if _cell_value is not None:
    print(repr(_cell_value))

# adds x to y
y.add_(x)
_cell_value = print(y)
if _cell_value is not None:
    print(repr(_cell_value))

y = x[0, :]
y += 1
print(y)
_cell_value = print(x[0, :]) # 源tensor也被改了
if _cell_value is not None:
    print(repr(_cell_value))

y = x.view(15)
z = x.view(-1, 5)  # -1所指的维度可以根据其他维度的值推出来
_cell_value = print(x.size(), y.size(), z.size())
if _cell_value is not None:
    print(repr(_cell_value))

x += 1
print(x)
_cell_value = print(y) # 也加了1
if _cell_value is not None:
    print(repr(_cell_value))

x_cp = x.clone().view(15)
x -= 1
print(x)
_cell_value = print(x_cp)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.randn(1)
print(x)
_cell_value = print(x.item())
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.arange(1, 3).view(1, 2)
print(x)
y = torch.arange(1, 4).view(3, 1)
print(y)
_cell_value = print(x + y)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.tensor([1, 2])
y = torch.tensor([3, 4])
id_before = id(y)
y = y + x
_cell_value = print(id(y) == id_before)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.tensor([1, 2])
y = torch.tensor([3, 4])
id_before = id(y)
y[:] = y + x
_cell_value = print(id(y) == id_before)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.tensor([1, 2])
y = torch.tensor([3, 4])
id_before = id(y)
torch.add(x, y, out=y) # y += x, y.add_(x)
_cell_value = print(id(y) == id_before)
if _cell_value is not None:
    print(repr(_cell_value))

a = torch.ones(5)
b = a.numpy()
print(a, b)

a += 1
print(a, b)
b += 1
_cell_value = print(a, b)
if _cell_value is not None:
    print(repr(_cell_value))

import numpy as np
a = np.ones(5)
b = torch.from_numpy(a)
print(a, b)

a += 1
print(a, b)
b += 1
_cell_value = print(a, b)
if _cell_value is not None:
    print(repr(_cell_value))

# 用torch.tensor()转换时不会共享内存
c = torch.tensor(a)
a += 1
_cell_value = print(a, c)
if _cell_value is not None:
    print(repr(_cell_value))

# 以下代码只有在PyTorch GPU版本上才会执行
if torch.cuda.is_available():
    device = torch.device("cuda")          # GPU
    y = torch.ones_like(x, device=device)  # 直接创建一个在GPU上的Tensor
    x = x.to(device)                       # 等价于 .to("cuda")
    z = x + y
    print(z)
    print(z.to("cpu", torch.double))       # to()还可以同时更改数据类型
