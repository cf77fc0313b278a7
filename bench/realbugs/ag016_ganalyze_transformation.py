# source: https://github.com/LoreGoetschalckx/GANalyze/issues/7
# symptom: gradients accumulated across \d+ steps: True
# GANalyze's PyTorch training script: a frozen generator and assessor, a trainable latent `transformation`;
# the batch loop computes the loss, calls loss.backward() and optimizer.step(), but never zero_grad().
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class GradWatch:
    """Records, for one parameter, each backward's own gradient (tensor hook) and the .grad left after it."""

    def __init__(self, param):
        self.param, self.fresh, self.after = param, [], []
        param.register_hook(lambda g: self.fresh.append(g.clone()))

    def record(self):
        self.after.append(self.param.grad.clone())

    def report(self):
        accumulated = torch.allclose(self.after[-1], torch.stack(self.fresh).sum(0)) and len(self.fresh) > 1
        print(f"gradients accumulated across {len(self.fresh)} steps: {accumulated}")


class OneDirection(nn.Module):
    def __init__(self, dim_z, vocab_size):
        super().__init__()
        self.w = nn.Parameter(torch.randn(1, dim_z) * 0.01)

    def transform(self, z, y, step_sizes):
        return z + step_sizes * self.w

    def compute_loss(self, current, target):
        return torch.mean((current - target) ** 2)


dim_z, vocab_size, batch_size, num_samples = 8, 5, 4, 12
train_alpha_a, train_alpha_b = -0.5, 0.5
generator = nn.Linear(dim_z + vocab_size, 12)
assessor = nn.Linear(12, 1)
for p in generator.parameters():
    p.requires_grad = False
for p in assessor.parameters():
    p.requires_grad = False
transformation = OneDirection(dim_z, vocab_size)
optimizer = optim.Adam(transformation.parameters(), lr=0.0002)
watch = GradWatch(transformation.w)

truncation = 1
zs = torch.randn(num_samples, dim_z).clamp(-2 * truncation, 2 * truncation)
ys = torch.randint(0, vocab_size, (num_samples,))


def one_hot(y):
    return torch.eye(vocab_size)[y]


for batch_start in range(0, num_samples, batch_size):
    s = slice(batch_start, min(num_samples, batch_start + batch_size))
    z = zs[s]
    y = ys[s]
    step_sizes = (train_alpha_b - train_alpha_a) * torch.rand(batch_size, 1) + train_alpha_a  # sample step sizes
    gan_images = generator(torch.cat([z, one_hot(y)], 1))
    out_scores = assessor(gan_images)
    target_scores = out_scores + step_sizes
    z_transformed = transformation.transform(z, one_hot(y), step_sizes)
    gan_images_transformed = generator(torch.cat([z_transformed, one_hot(y)], 1))
    out_scores_transformed = assessor(gan_images_transformed)
    loss = transformation.compute_loss(out_scores_transformed, target_scores)
    loss.backward()
    optimizer.step()  # expect: AG016
    watch.record()
    print(f"[{batch_start}/{num_samples}] loss {loss.item():.5f}")
watch.report()
