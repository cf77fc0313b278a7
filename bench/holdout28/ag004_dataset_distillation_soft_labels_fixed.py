# source: written for holdout28 (pattern: dataset-distillation script initialises learnable soft labels from F.one_hot of the class ids and calls requires_grad_() on the integer one-hot tensor)
# symptom: [Oo]nly Tensors of floating point (and complex )?dtype can require gradients
"""Dataset distillation with learnable synthetic images *and* learnable labels.

A few synthetic points per class are optimised so that a linear model trained
on them for one step does well on real data.

Fixed: the one-hot labels are cast to float before requires_grad_().
"""
import torch
import torch.nn.functional as F


def real_batch(centers, n=128):
    y = torch.randint(0, centers.shape[0], (n,))
    return centers[y] + 0.5 * torch.randn(n, centers.shape[1]), y


def init_synthetic(n_classes, per_class, dim):
    class_ids = torch.arange(n_classes).repeat_interleave(per_class)
    syn_x = torch.randn(n_classes * per_class, dim, requires_grad=True)
    syn_y = F.one_hot(class_ids, n_classes).float().requires_grad_()
    return syn_x, syn_y


def inner_train(syn_x, syn_y, dim, n_classes, lr=0.5):
    w = torch.zeros(dim, n_classes, requires_grad=True)
    logits = syn_x @ w
    loss = torch.sum(-F.softmax(syn_y, dim=1) * F.log_softmax(logits, dim=1), dim=1).mean()
    (g,) = torch.autograd.grad(loss, w, create_graph=True)
    return w - lr * g


torch.manual_seed(0)
n_classes, dim = 3, 5
centers = torch.randn(n_classes, dim) * 2
syn_x, syn_y = init_synthetic(n_classes, per_class=2, dim=dim)
meta_opt = torch.optim.Adam([syn_x, syn_y], lr=0.05)

for it in range(60):
    w_trained = inner_train(syn_x, syn_y, dim, n_classes)
    x, y = real_batch(centers)
    outer = F.cross_entropy(x @ w_trained, y)
    meta_opt.zero_grad()
    outer.backward()
    meta_opt.step()
    if it % 20 == 0:
        print(f"iter {it} real-data loss {outer.item():.3f}")

x, y = real_batch(centers, 500)
acc = ((x @ inner_train(syn_x, syn_y, dim, n_classes)).argmax(1) == y).float().mean()
print(f"accuracy of model trained on 6 synthetic points: {acc:.3f}")
