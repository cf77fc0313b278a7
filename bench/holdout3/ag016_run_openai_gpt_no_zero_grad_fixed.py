# source: https://github.com/huggingface/transformers/issues/340
# symptom: gradients accumulated across steps: True
# Clean twin: optimizer.zero_grad() after each step, the fix on master.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class OpenAIGPTDoubleHeadsModel(nn.Module):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.transformer = nn.Embedding(vocab, hidden)
        self.lm_head = nn.Linear(hidden, vocab)
        self.multiple_choice_head = nn.Linear(hidden, 1)

    def forward(self, input_ids, mc_token_ids, lm_labels, mc_labels):
        h = self.transformer(input_ids)
        lm_loss = nn.functional.cross_entropy(self.lm_head(h).flatten(0, 2), lm_labels.flatten())
        mc_h = h.gather(2, mc_token_ids[..., None, None].expand(-1, -1, 1, h.size(-1))).squeeze(2)
        mc_loss = nn.functional.cross_entropy(self.multiple_choice_head(mc_h).squeeze(-1), mc_labels)
        return [lm_loss, mc_loss]


def main(lm_coef=0.9, num_train_epochs=1):
    torch.manual_seed(0)
    model = OpenAIGPTDoubleHeadsModel()
    n = 4
    input_ids = torch.randint(0, 20, (n, 2, 6))
    train_data = TensorDataset(input_ids, torch.full((n, 2), 5), input_ids.clone(), torch.zeros(n, dtype=torch.long))
    train_dataloader = DataLoader(train_data, batch_size=1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    model.train()
    grads = []
    for _ in range(num_train_epochs):
        tr_loss = 0
        nb_tr_steps = 0
        for step, batch in enumerate(train_dataloader):
            input_ids, mc_token_ids, lm_labels, mc_labels = batch
            losses = model(input_ids, mc_token_ids, lm_labels, mc_labels)
            loss = lm_coef * losses[0] + losses[1]
            loss.backward()
            grads.append(model.lm_head.bias.grad.abs().sum().item())
            optimizer.step()
            optimizer.zero_grad()
            tr_loss += loss.item()
            nb_tr_steps += 1
        print(f"Training loss: {tr_loss / nb_tr_steps:.2e}")
    print("gradients accumulated across steps:", grads[-1] > 2 * grads[0])


main()
