# %matplotlib inline
from d2l import torch as d2l
import torch
torch.manual_seed(0)
from torch.distributions import multinomial

fair_probs = torch.ones([6]) / 6
_cell_value = multinomial.Multinomial(1, fair_probs).sample()
if _cell_value is not None:
    print(repr(_cell_value))

_cell_value = multinomial.Multinomial(10, fair_probs).sample()
if _cell_value is not None:
    print(repr(_cell_value))

# 将结果存储为32位浮点数以进行除法
counts = multinomial.Multinomial(1000, fair_probs).sample()
_cell_value = counts / 1000  # 相对频率作为估计值
if _cell_value is not None:
    print(repr(_cell_value))

counts = multinomial.Multinomial(10, fair_probs).sample((500,))
cum_counts = counts.cumsum(dim=0)
estimates = cum_counts / cum_counts.sum(dim=1, keepdims=True)

d2l.set_figsize((6, 4.5))
for i in range(6):
    d2l.plt.plot(estimates[:, i].numpy(),
                 label=("P(die=" + str(i + 1) + ")"))
d2l.plt.axhline(y=0.167, color='black', linestyle='dashed')
d2l.plt.gca().set_xlabel('Groups of experiments')
d2l.plt.gca().set_ylabel('Estimated probability')
d2l.plt.legend();
