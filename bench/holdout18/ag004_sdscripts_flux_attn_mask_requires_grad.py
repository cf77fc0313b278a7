# source: https://github.com/kohya-ss/sd-scripts/issues/1509
# symptom: floating point.*can require gradients
"""sd-scripts (sd3 branch) `FluxNetworkTrainer.get_noise_pred_and_target`: with gradient checkpointing on, every cached
text-encoder output is made to require grad (`for t in text_encoder_conds: t.requires_grad_(True)`), but the tuple
also holds the T5 attention mask, an integer tensor, and the LoRA training step dies with "only Tensors of floating
point dtype can require gradients"."""
import argparse

import torch
import torch.nn as nn


class TinyFlux(nn.Module):
    def __init__(self, c=4, d=16):
        super().__init__()
        self.img_in = nn.Linear(c, d)
        self.txt_in = nn.Linear(d, d)
        self.vec_in = nn.Linear(d, d)
        self.out = nn.Linear(d, c)

    def forward(self, img, txt, y, timesteps, txt_mask=None):
        h = self.img_in(img)
        t = self.txt_in(txt)
        if txt_mask is not None:
            t = t * txt_mask.unsqueeze(-1).to(t.dtype)
        h = h + t.mean(dim=1, keepdim=True) + self.vec_in(y).unsqueeze(1) + timesteps.view(-1, 1, 1)
        return self.out(h)


def get_noisy_model_input_and_timesteps(latents, noise):
    bsz = latents.shape[0]
    sigmas = torch.rand(bsz).view(-1, 1, 1)
    noisy = (1.0 - sigmas) * latents + sigmas * noise
    return noisy, sigmas.view(-1) * 1000.0, sigmas


class FluxNetworkTrainer:
    def get_noise_pred_and_target(self, args, latents, text_encoder_conds, unet):
        noise = torch.randn_like(latents)
        noisy_model_input, timesteps, sigmas = get_noisy_model_input_and_timesteps(latents, noise)

        # ensure the hidden state will require grad
        if args.gradient_checkpointing:
            noisy_model_input.requires_grad_(True)
            for t in text_encoder_conds:
                t.requires_grad_(True)  # expect: AG004

        l_pooled, t5_out, txt_ids, t5_attn_mask = text_encoder_conds
        if not args.apply_t5_attn_mask:
            t5_attn_mask = None
        model_pred = unet(noisy_model_input, t5_out + txt_ids.sum(-1, keepdim=True), l_pooled, timesteps / 1000.0,
                          t5_attn_mask)
        target = noise - latents
        return model_pred, target

    def train(self, args, unet, batches):
        optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-3)
        for step, (latents, text_encoder_conds) in enumerate(batches):
            model_pred, target = self.get_noise_pred_and_target(args, latents, text_encoder_conds, unet)
            loss = torch.nn.functional.mse_loss(model_pred, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print("step", step, "loss {:.4f}".format(loss.item()))


torch.manual_seed(0)
args = argparse.Namespace(gradient_checkpointing=True, apply_t5_attn_mask=True)
bsz, seq, n_tok, d = 2, 6, 5, 16
batches = []
for _ in range(2):
    latents = torch.randn(bsz, seq, 4)
    l_pooled = torch.randn(bsz, d)
    t5_out = torch.randn(bsz, n_tok, d)
    txt_ids = torch.zeros(bsz, n_tok, 3)
    t5_attn_mask = torch.ones(bsz, n_tok, dtype=torch.long)  # tokenizer attention mask
    batches.append((latents, (l_pooled, t5_out, txt_ids, t5_attn_mask)))
FluxNetworkTrainer().train(args, TinyFlux(d=d), batches)
