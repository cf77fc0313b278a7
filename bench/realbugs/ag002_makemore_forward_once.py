# source: https://github.com/karpathy/nn-zero-to-hero/issues/31
# symptom: Trying to backward through the graph a second time
# In the makemore bigram notebook the user ran the forward pass (logits = xenc @ W ... loss) once and then repeated only
# the backward/update cells (W.grad = None; loss.backward(); W.data += -0.1 * W.grad). Re-created as that loop.
import torch
import torch.nn.functional as F

words = ["emma", "olivia", "ava", "isabella", "sophia"]
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
V = len(stoi)

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((V, V), generator=g, requires_grad=True)

# Forward pass
xenc = F.one_hot(xs, num_classes=V).float()
logits = xenc @ W
counts = logits.exp()
prob = counts / counts.sum(1, keepdim=True)
loss = -prob[torch.arange(num), ys].log().mean()
print(loss.item())

for k in range(10):
    # Backward pass
    W.grad = None
    loss.backward()  # expect: AG002
    # update the weights
    W.data += -0.1 * W.grad
    print(k, loss.item())
