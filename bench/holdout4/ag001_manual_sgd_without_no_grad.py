# source: https://hao-yiwen.github.io/yiwen-blog-website/en/docs/ai/frameworks/pytorch/common-errors
# symptom: a leaf Variable that requires grad is being used in an in-place operation
# "PyTorch common errors": hand-written gradient descent over model.parameters() updates each parameter in place
# (`p -= lr * p.grad`) outside torch.no_grad(), so autograd refuses the in-place change of a leaf that requires grad.
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
    for p in model.parameters():
        p -= lr * p.grad  # expect: AG001
        p.grad.zero_()
    print(f"loss {loss.item():.4f}")
