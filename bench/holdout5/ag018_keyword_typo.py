# source: written for bench/holdout5 (short training program, temperature scaling of a fixed classifier's logits)
# symptom: TypeError
import torch
import torch.nn.functional as F

torch.manual_seed(35)

logits = torch.randn(200, 4) * 3
labels = torch.randint(0, 4, (200,))


def calibrate(logits, labels, steps=50):
    temperature = torch.ones(1, requires_grads=True)  # expect: AG018
    opt = torch.optim.LBFGS([temperature], lr=0.1, max_iter=steps)

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(logits / temperature, labels)
        loss.backward()
        return loss

    opt.step(closure)
    return temperature.item()


T = calibrate(logits, labels)
before = F.cross_entropy(logits, labels).item()
after = F.cross_entropy(logits / T, labels).item()
print(f"fitted temperature: {T:.3f}")
print(f"nll before {before:.3f} after {after:.3f}")
