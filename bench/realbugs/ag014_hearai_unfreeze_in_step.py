# source: https://github.com/hearai/hearai/pull/84
# symptom: step 0: feature extractor requires_grad=True, grad=None
# The PR unfreezes the whole GlossTranslationModel inside training_step, after predictions and loss were computed,
# to hit memory limits early; the pending graph was built while the feature extractor was frozen, so it gets no
# gradient that step (backward runs after training_step returns, as Lightning does).
import torch
import torch.nn as nn

torch.manual_seed(0)


def summary_loss(predictions, targets):
    loss = nn.CrossEntropyLoss()
    loss_sum = 0
    for prediction, target in zip(predictions, targets):
        loss_sum = loss_sum + loss(prediction, target)
    return loss_sum


class GlossTranslationModel(nn.Module):
    def __init__(self, representation_size=16, transformer_output_size=8, num_classes=(5, 3)):
        super().__init__()
        self.global_step = 0
        self.feature_extractor = nn.Sequential(nn.Linear(12, representation_size), nn.ReLU())
        self.transformer = nn.Linear(representation_size, transformer_output_size)
        self.cls_head = nn.ModuleList(nn.Linear(transformer_output_size, n) for n in num_classes)
        self.freeze_feature_extractor()

    def freeze_feature_extractor(self):
        for param in self.feature_extractor.parameters():
            param.requires_grad = False

    def unfreeze_all(self):
        for param in self.parameters():
            param.requires_grad = True  # expect: AG014

    def forward(self, input):
        x = self.transformer(self.feature_extractor(input))
        return [head(x) for head in self.cls_head]

    def training_step(self, batch, batch_idx):
        input, targets = batch
        predictions = self(input)
        loss = summary_loss(predictions, targets)
        if self.global_step < 2:
            self.unfreeze_all()  # expect: AG014
        return {"loss": loss}


def fit(model, batches, optimizer):
    for batch_idx, batch in enumerate(batches):
        optimizer.zero_grad()
        out = model.training_step(batch, batch_idx)
        out["loss"].backward()
        fe = model.feature_extractor[0].weight
        print(f"step {model.global_step}: feature extractor requires_grad={fe.requires_grad}, grad={None if fe.grad is None else 'set'}")
        optimizer.step()
        model.global_step += 1


model = GlossTranslationModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randn(4, 12), [torch.randint(0, 5, (4,)), torch.randint(0, 3, (4,))]) for _ in range(2)]
fit(model, batches, optimizer)
