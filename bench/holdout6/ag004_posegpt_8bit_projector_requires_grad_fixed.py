# source: https://github.com/yfeng95/PoseGPT/issues/15
# symptom: only Tensors of floating point and complex dtype can require gradients
"""Twin (the issue's expected behaviour: quantized, non-float parameters are not switched to requires_grad). ChatPose / PoseGPT `main_chat.py --load_in_8bit`: the LLaVA-style model is loaded with its linear layers
quantized to int8 weights; `model.get_model().initialize_vision_modules(...)` then re-enables training of the
multimodal projector with `p.requires_grad = True` on every parameter (\"in case it is frozen by LoRA\"), including
the int8 weights."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Linear8bit(nn.Module):
    """Weight-only int8 linear layer, as a load_in_8bit loader leaves it: int8 weight + float per-row scale."""

    def __init__(self, linear):
        super().__init__()
        w = linear.weight.detach()
        scale = w.abs().amax(dim=1, keepdim=True) / 127.0
        self.weight = nn.Parameter(torch.round(w / scale).to(torch.int8), requires_grad=False)
        self.weight_scale = nn.Parameter(scale, requires_grad=False)
        self.bias = nn.Parameter(linear.bias.detach().clone(), requires_grad=False) if linear.bias is not None else None

    def forward(self, x):
        out = x @ (self.weight.float() * self.weight_scale).t()
        return out + self.bias if self.bias is not None else out


def quantize_8bit(module, skip=("lm_head",)):
    for name, child in module.named_children():
        if isinstance(child, nn.Linear) and name not in skip:
            setattr(module, name, Linear8bit(child))
        else:
            quantize_8bit(child, skip)
    return module


class VisionTower(nn.Module):
    hidden_size = 24

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, self.hidden_size, 8, 8)

    def forward(self, images):
        return self.patch(images).flatten(2).transpose(1, 2)


class Config:
    hidden_size = 32
    mm_hidden_size = VisionTower.hidden_size
    vocab_size = 50


class LlavaMetaModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([nn.Linear(config.hidden_size, config.hidden_size) for _ in range(2)])
        self.vision_tower = VisionTower()
        self.mm_projector = nn.Sequential(nn.Linear(config.mm_hidden_size, config.hidden_size), nn.GELU(),
                                          nn.Linear(config.hidden_size, config.hidden_size))

    def get_vision_tower(self):
        return self.vision_tower

    def initialize_vision_modules(self, model_args):
        self.config.mm_vision_select_layer = model_args.get("mm_vision_select_layer", -1)
        self.config.use_mm_proj = True
        vision_tower = self.get_vision_tower()
        for p in vision_tower.parameters():
            p.requires_grad = False
        # In case it is frozen by LoRA
        for p in self.mm_projector.parameters():
            if p.is_floating_point():
                p.requires_grad = True


class ChatPoseForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.model = LlavaMetaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)

    def get_model(self):
        return self.model

    def forward(self, input_ids, images):
        m = self.model
        image_tokens = m.mm_projector(m.vision_tower(images))
        h = torch.cat([image_tokens, m.embed_tokens(input_ids)], dim=1)
        for layer in m.layers:
            h = h + torch.tanh(layer(h))
        return self.lm_head(h)


def load_model(load_in_8bit):
    model = ChatPoseForCausalLM(Config())
    for p in model.parameters():
        p.requires_grad = False
    if load_in_8bit:
        quantize_8bit(model)
    return model


model = load_model(load_in_8bit=True)
model.get_model().initialize_vision_modules({"mm_vision_select_layer": -2})
with torch.no_grad():
    logits = model(torch.randint(0, 50, (1, 6)), torch.rand(1, 3, 16, 16))
print("logits", tuple(logits.shape), "next token", int(logits[0, -1].argmax()))
