# source: https://github.com/OpenBMB/MiniCPM-V/issues/730
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
"""MiniCPM-o LoRA fine-tuning (LLaMA-Factory): the LLM is frozen and `enable_input_require_grads()` makes the
input-embedding output require grad through a forward hook, which turns that output into a leaf. In
`get_vllm_embedding`, the per-sample row `cur_vllm_emb = vllm_embedding[i]` (a view of it) receives the
resampled vision features with `scatter_`, in place."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALinear(nn.Module):
    def __init__(self, base, rank=4):
        super().__init__()
        self.base = base
        self.lora_a = nn.Linear(base.in_features, rank, bias=False)
        self.lora_b = nn.Linear(rank, base.out_features, bias=False)
        nn.init.zeros_(self.lora_b.weight)

    def forward(self, x):
        return self.base(x) + self.lora_b(self.lora_a(x))


class TinyLLM(nn.Module):
    def __init__(self, vocab=40, dim=32):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.q_proj = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def get_input_embeddings(self):
        return self.embed_tokens

    def forward(self, inputs_embeds):
        h = inputs_embeds + torch.tanh(self.q_proj(inputs_embeds))
        h = h + torch.relu(self.mlp(h))
        return self.lm_head(h)


class Resampler(nn.Module):
    def __init__(self, vision_dim=16, dim=32, num_queries=4):
        super().__init__()
        self.query = nn.Parameter(torch.randn(num_queries, dim) * 0.02)
        self.kv_proj = nn.Linear(vision_dim, dim)

    def forward(self, patches):
        kv = self.kv_proj(patches)
        attn = torch.softmax(self.query @ kv.transpose(-1, -2) / kv.size(-1) ** 0.5, dim=-1)
        return attn @ kv


class MiniCPMV(nn.Module):
    def __init__(self):
        super().__init__()
        self.llm = TinyLLM()
        self.vpm = nn.Sequential(nn.Conv2d(3, 16, 4, 4), nn.Flatten(2))
        self.resampler = Resampler()

    def get_vision_embedding(self, pixel_values):
        patches = self.vpm(pixel_values).transpose(1, 2)
        return self.resampler(patches)

    def get_vllm_embedding(self, data):
        vision_hidden_states = self.get_vision_embedding(data["pixel_values"])
        vllm_embedding = self.llm.get_input_embeddings()(data["input_ids"])
        for i in range(vllm_embedding.size(0)):
            cur_vllm_emb = vllm_embedding[i]
            cur_vs_hs = vision_hidden_states[i]
            start, end = data["image_bound"][i]
            image_indices = torch.arange(start, end)
            cur_vllm_emb.scatter_(  # expect: AG001
                0,
                image_indices.view(-1, 1).repeat(1, cur_vllm_emb.shape[-1]),
                cur_vs_hs.view(-1, cur_vs_hs.shape[-1]),
            )
        return vllm_embedding, vision_hidden_states

    def forward(self, data):
        vllm_embedding, _ = self.get_vllm_embedding(data)
        return self.llm(inputs_embeds=vllm_embedding)


def enable_input_require_grads(model):
    """As transformers' `PreTrainedModel.enable_input_require_grads` (used with gradient checkpointing + LoRA)."""

    def make_inputs_require_grads(module, input, output):
        output.requires_grad_(True)

    return model.llm.get_input_embeddings().register_forward_hook(make_inputs_require_grads)


def prepare_lora(model):
    for p in model.llm.parameters():
        p.requires_grad_(False)
    model.llm.q_proj = LoRALinear(model.llm.q_proj)
    enable_input_require_grads(model)


model = MiniCPMV()
prepare_lora(model)
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(trainable, lr=1e-3)
for step in range(2):
    input_ids = torch.randint(5, 40, (2, 12))
    input_ids[:, 1:5] = 0
    batch = {"input_ids": input_ids, "pixel_values": torch.rand(2, 3, 8, 8), "image_bound": [(1, 5), (1, 5)]}
    labels = torch.randint(5, 40, (2, 12))
    logits = model(batch)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
