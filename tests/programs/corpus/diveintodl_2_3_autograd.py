import torch
torch.manual_seed(0)

_cell_value = print(torch.__version__)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.ones(2, 2, requires_grad=True)
print(x)
_cell_value = print(x.grad_fn)
if _cell_value is not None:
    print(repr(_cell_value))

y = x + 2
print(y)
_cell_value = print(y.grad_fn)
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = print(x.is_leaf, y.is_leaf)
if _cell_value is not None:
    print(repr(_cell_value))

z = y * y * 3
out = z.mean()
_cell_value = print(z, out)
if _cell_value is not None:
    print(repr(_cell_value))

a = torch.randn(2, 2) # 缺失情况下默认 requires_grad = False
a = ((a * 3) / (a - 1))
print(a.requires_grad) # False
a.requires_grad_(True)
print(a.requires_grad) # True
b = (a * a).sum()
_cell_value = print(b.grad_fn)
if _cell_value is not None:
    print(repr(_cell_value))

out.backward() # 等价于 out.backward(torch.tensor(1.))
_cell_value = print(x.grad)
if _cell_value is not None:
    print(repr(_cell_value))

# 再来反向传播一次，注意grad是累加的
out2 = x.sum()
out2.backward()
print(x.grad)

out3 = x.sum()
x.grad.data.zero_()
out3.backward()
_cell_value = print(x.grad)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = 2 * x
z = y.view(2, 2)
_cell_value = print(z)
if _cell_value is not None:
    print(repr(_cell_value))

v = torch.tensor([[1.0, 0.1], [0.01, 0.001]], dtype=torch.float)
z.backward(v)

_cell_value = print(x.grad)
if _cell_value is not None:
    print(repr(_cell_value))

x = torch.tensor(1.0, requires_grad=True)
y1 = x ** 2 
with torch.no_grad():
    y2 = x ** 3
y3 = y1 + y2
    
print(x, x.requires_grad)
print(y1, y1.requires_grad)
print(y2, y2.requires_grad)
_cell_value = print(y3, y3.requires_grad)
if _cell_value is not None:
    print(repr(_cell_value))

y3.backward()
_cell_value = print(x.grad)
if _cell_value is not None:
    print(repr(_cell_value))

# y2.backward() # 会报错 RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

x = torch.ones(1,requires_grad=True)

print(x.data) # 还是一个tensor
print(x.data.requires_grad) # 但是已经是独立于计算图之外

y = 2 * x
x.data *= 100 # 只改变了值，不会记录在计算图，所以不会影响梯度传播

y.backward()
print(x) # 更改data的值也会影响tensor的值
_cell_value = print(x.grad)
if _cell_value is not None:
    print(repr(_cell_value))
