# source: written for bench/holdout17 from RULES.md AG017 (domain adaptation on tabular data: shared encoder features feed a domain critic that is updated first, then the task loss is backpropagated through the same features)
# symptom: Trying to backward through the graph a second time|modified by an inplace operation
"""ADDA-like alternation: a domain critic on shared features, then the encoder+classifier on the task loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(14, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
classifier = nn.Linear(16, 2)
domain_critic = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
task_opt = torch.optim.Adam(list(encoder.parameters()) + list(classifier.parameters()), lr=1e-3)
critic_opt = torch.optim.Adam(domain_critic.parameters(), lr=1e-3)

src_x, src_y = torch.randn(128, 14), torch.randint(0, 2, (128,))
tgt_x = torch.randn(128, 14) + 0.5
for epoch in range(2):
    for i in range(0, 128, 32):
        f_src = encoder(src_x[i:i + 32])
        f_tgt = encoder(tgt_x[i:i + 32])
        d_logits = domain_critic(torch.cat([f_src, f_tgt]).detach())
        d_labels = torch.cat([torch.ones(32, 1), torch.zeros(32, 1)])
        critic_loss = F.binary_cross_entropy_with_logits(d_logits, d_labels)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()

        confusion = F.binary_cross_entropy_with_logits(domain_critic(f_tgt), torch.ones(32, 1))
        task_loss = F.cross_entropy(classifier(f_src), src_y[i:i + 32]) + 0.1 * confusion
        task_opt.zero_grad()
        task_loss.backward()
        task_opt.step()
    print("epoch", epoch, round(task_loss.item(), 4))
