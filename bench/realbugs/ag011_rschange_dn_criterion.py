# source: https://github.com/xwmaxwma/rschange/pull/29
# symptom: UserWarning: torch\.range is deprecated
# SetCriterion_mp.forward, in DN (denoising) training mode, builds the matched target indices of every image
# with torch.range(0, len(labels) - 1) inside the per-target loop, so the deprecation warning fires each step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SetCriterion_mp(nn.Module):
    def __init__(self, num_classes, dn_scalar=2):
        super().__init__()
        self.num_classes = num_classes
        self.scalar = dn_scalar

    def prep_for_dn(self, mask_dict, targets):
        single_pad = mask_dict["pad_size"] // self.scalar
        dn_pos_idx = []
        for i in range(len(targets)):
            if len(targets[i]["labels"]) > 0:
                t = torch.range(0, len(targets[i]["labels"]) - 1).long()  # expect: AG011
                t = t.unsqueeze(0).repeat(self.scalar, 1)
                tgt_idx = t.flatten()
                output_idx = (torch.tensor(range(self.scalar)) * single_pad).long().unsqueeze(1) + t
                output_idx = output_idx.flatten()
            else:
                output_idx = tgt_idx = torch.tensor([]).long()
            dn_pos_idx.append((output_idx, tgt_idx))
        return dn_pos_idx

    def forward(self, outputs, targets, mask_dict):
        dn_pos_idx = self.prep_for_dn(mask_dict, targets)
        losses = []
        for b, (output_idx, tgt_idx) in enumerate(dn_pos_idx):
            logits = outputs["dn_pred_logits"][b, output_idx]
            labels = targets[b]["labels"][tgt_idx]
            losses.append(F.cross_entropy(logits, labels))
        return torch.stack(losses).mean()


criterion = SetCriterion_mp(num_classes=4)
targets = [{"labels": torch.tensor([1, 3, 0])}, {"labels": torch.tensor([2, 2])}]
mask_dict = {"pad_size": 2 * 3}
decoder = nn.Linear(8, 4)
optimizer = torch.optim.SGD(decoder.parameters(), lr=0.1)
for step in range(2):
    optimizer.zero_grad()
    outputs = {"dn_pred_logits": decoder(torch.randn(2, 6, 8))}
    loss = criterion(outputs, targets, mask_dict)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
