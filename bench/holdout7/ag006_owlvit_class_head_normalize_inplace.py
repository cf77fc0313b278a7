# source: https://github.com/huggingface/transformers/pull/24529
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""transformers `OwlViTClassPredictionHead.forward`: `image_class_embeds = self.dense0(image_embeds)` and the text
`query_embeds` are normalised in place, `image_class_embeds /= torch.linalg.norm(...) + 1e-6`, after `linalg.norm`
saved them; fine-tuning OWL-ViT for detection then fails in `loss.backward()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class OwlViTConfig:
    vision_hidden_size = 32
    text_hidden_size = 16
    num_patches = 16
    vocab_size = 50


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        out_dim = config.text_hidden_size
        self.query_dim = config.vision_hidden_size
        self.dense0 = nn.Linear(self.query_dim, out_dim)
        self.logit_shift = nn.Linear(self.query_dim, 1)
        self.logit_scale = nn.Linear(self.query_dim, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds, query_mask):
        image_class_embeds = self.dense0(image_embeds)

        # Normalize image and text features
        image_class_embeds /= torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6  # expect: AG006
        query_embeds /= torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6  # expect: AG006

        # Get class predictions
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)

        # Apply a learnable shift and scale to logits
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.logit_scale(image_embeds)
        logit_scale = self.elu(logit_scale) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale

        if query_mask is not None:
            if query_mask.ndim > 1:
                query_mask = torch.unsqueeze(query_mask, dim=-2)
            pred_logits = torch.where(query_mask == 0, torch.finfo(pred_logits.dtype).min, pred_logits)
        return (pred_logits, image_class_embeds)


class OwlViTBoxPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        width = config.vision_hidden_size
        self.dense0 = nn.Linear(width, width)
        self.dense1 = nn.Linear(width, 4)
        self.gelu = nn.GELU()

    def forward(self, image_features):
        return self.dense1(self.gelu(self.dense0(image_features)))


class OwlViTForObjectDetection(nn.Module):
    """Tiny vision and text towers standing in for the CLIP backbone; the two heads are OWL-ViT's."""

    def __init__(self, config):
        super().__init__()
        self.patch_embed = nn.Linear(3 * 8 * 8, config.vision_hidden_size)
        self.layer_norm = nn.LayerNorm(config.vision_hidden_size)
        self.token_embedding = nn.Embedding(config.vocab_size, config.text_hidden_size)
        self.text_projection = nn.Linear(config.text_hidden_size, config.text_hidden_size, bias=False)
        self.class_head = OwlViTClassPredictionHead(config)
        self.box_head = OwlViTBoxPredictionHead(config)

    def forward(self, input_ids, pixel_values, attention_mask=None):
        patches = pixel_values.unfold(2, 8, 8).unfold(3, 8, 8).permute(0, 2, 3, 1, 4, 5).flatten(3).flatten(1, 2)
        image_embeds = self.layer_norm(self.patch_embed(patches))  # [batch, num_patches, hidden]
        query_embeds = self.text_projection(self.token_embedding(input_ids).mean(-2))  # [batch, num_queries, dim]
        query_mask = input_ids[..., 0] > 0
        pred_logits, class_embeds = self.class_head(image_embeds, query_embeds, query_mask)
        pred_boxes = self.box_head(image_embeds).sigmoid()
        return pred_logits, pred_boxes


config = OwlViTConfig()
model = OwlViTForObjectDetection(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    input_ids = torch.randint(1, config.vocab_size, (2, 3, 5))  # 3 text queries per image
    pixel_values = torch.rand(2, 3, 32, 32)
    labels = torch.randint(0, 3, (2, config.num_patches))
    boxes = torch.rand(2, config.num_patches, 4)
    logits, pred_boxes = model(input_ids, pixel_values)
    loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten()) + F.l1_loss(pred_boxes, boxes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} | loss {loss.item():.4f}")
