"""``detach`` in a KV-cache-like setting: reuse values without sending gradients into them.

What it teaches: when a model generates one token at a time, the keys and values computed for
earlier tokens are cached and reused. Those cached tensors came out of a graph; using them as
they are would keep that whole graph alive and send gradients back into it. ``detach()`` keeps
the numbers (sharing the same memory) and cuts the link: backward stops there, so the cached
tensor's source gets no gradient while the new query does. ``.numpy()`` needs the same cut.

    python examples/04_detach_kv_cache.py
"""

import tapegrad as torch

torch.manual_seed(0)
heads, dim = 2, 4
proj_k = torch.nn.Linear(dim, heads * dim)

past_tokens = torch.randn(1, 5, dim)
past_k = proj_k(past_tokens).view(1, 5, heads, dim).transpose(1, 2)   # (1, heads, 5, dim)
print("past_k is in a graph:", past_k.grad_fn is not None)

cache = past_k.detach()              # the numbers, no history
print("cache is in a graph:", cache.grad_fn is not None, " requires_grad:", cache.requires_grad)
print("same memory:", cache.data_ptr() == past_k.data_ptr())

values = torch.randn(1, heads, 5, dim)
new_q = torch.randn(1, heads, 1, dim, requires_grad=True)
scores = new_q @ cache.transpose(-2, -1) / dim ** 0.5                 # (1, heads, 1, 5)
(scores.softmax(-1) @ values).sum().backward()
print("new_q.grad shape:", tuple(new_q.grad.shape))
print("proj_k.weight.grad after backward through the cache:", proj_k.weight.grad)

# without detach, the same backward reaches the projection that made the keys
scores = new_q @ past_k.transpose(-2, -1) / dim ** 0.5
(scores.softmax(-1) @ values).sum().backward()
print("... and through past_k itself: a gradient of shape", tuple(proj_k.weight.grad.shape))

try:
    past_k.numpy()
except RuntimeError as err:
    print("past_k.numpy():", err)
print("past_k.detach().numpy().shape:", past_k.detach().numpy().shape)
