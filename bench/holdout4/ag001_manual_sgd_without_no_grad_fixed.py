# source: https://hao-yiwen.github.io/yiwen-blog-website/en/docs/ai/frameworks/pytorch/common-errors
# symptom: a leaf Variable that requires grad is being used in an in-place operation
# Clean twin: the in-place update runs under torch.no_grad(), the post's recommended hand-written step.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
criterion = nn.MSELoss()
lr = 0.05
data = [(torch.randn(16, 3), torch.randn(16, 1)) for _ in range(3)]

for x, y in data:
    pred = model(x)
    loss = criterion(pred, y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
            p.grad.zero_()
    print(f"loss {loss.item():.4f}")
