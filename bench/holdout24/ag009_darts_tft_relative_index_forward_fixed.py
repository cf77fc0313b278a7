# source: https://github.com/unit8co/darts/commit/5d9404e101876d7dfaecd23c582118dad54b0366
# symptom: relative_index left behind by \.double\(\): True
"""darts _TFTModule after the fix of unit8co/darts#3052 (pull request #3053): the cached attention
mask and relative time index are registered in __init__ as non-persistent buffers
(register_buffer(..., None, persistent=False)); forward() still fills them, and module moves now
carry them along."""
import torch
import torch.nn as nn


class InterpretableMultiHeadAttention(nn.Module):
    def __init__(self, n_head, d_model):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_head, batch_first=True)

    def forward(self, q, k, v, mask):
        mask = mask.repeat_interleave(self.attn.num_heads, dim=0)
        return self.attn(q, k, v, attn_mask=mask)


class _TFTModule(nn.Module):
    def __init__(self, input_chunk_length, output_chunk_length, n_past, n_future, hidden_size,
                 num_attention_heads, full_attention, add_relative_index):
        super().__init__()
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.full_attention = full_attention
        self.add_relative_index = add_relative_index
        extra = 1 if add_relative_index else 0
        self.past_proj = nn.Linear(n_past + extra, hidden_size)
        self.future_proj = nn.Linear(n_future + extra, hidden_size)
        self.lstm_encoder = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.lstm_decoder = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.multihead_attn = InterpretableMultiHeadAttention(num_attention_heads, hidden_size)
        self.output_layer = nn.Linear(hidden_size, 1)
        # initialize last batch size to check if new mask needs to be generated
        self.batch_size_last = -1
        self.register_buffer("attention_mask", None, persistent=False)
        self.register_buffer("relative_index", None, persistent=False)

    @staticmethod
    def get_relative_index(encoder_length, decoder_length, batch_size, dtype, device):
        index = torch.arange(encoder_length + decoder_length, dtype=dtype, device=device)
        prediction_index = encoder_length - 1
        index[:encoder_length] = index[:encoder_length] / prediction_index
        index[encoder_length:] = index[encoder_length:] / prediction_index
        return index.reshape(1, len(index), 1).repeat(batch_size, 1, 1)

    @staticmethod
    def get_attention_mask_future(encoder_length, decoder_length, batch_size, device, full_attention):
        if full_attention:
            decoder_mask = torch.zeros((decoder_length, decoder_length), dtype=torch.bool, device=device)
        else:
            attend_step = torch.arange(decoder_length, device=device)
            predict_step = torch.arange(0, decoder_length, device=device)[:, None]
            decoder_mask = attend_step >= predict_step
        encoder_mask = torch.zeros(batch_size, encoder_length, dtype=torch.bool, device=device)
        return torch.cat(
            (
                encoder_mask.unsqueeze(1).expand(-1, decoder_length, -1),
                decoder_mask.unsqueeze(0).expand(batch_size, -1, -1),
            ),
            dim=2,
        )

    def forward(self, x_in):
        x_cont_past, x_cont_future = x_in
        device = x_cont_past.device
        batch_size = x_cont_past.shape[0]
        encoder_length = self.input_chunk_length
        decoder_length = self.output_chunk_length

        # avoid unnecessary regeneration of attention mask
        if batch_size != self.batch_size_last:
            self.attention_mask = self.get_attention_mask_future(
                encoder_length=encoder_length,
                decoder_length=decoder_length,
                batch_size=batch_size,
                device=device,
                full_attention=self.full_attention,
            )
            if self.add_relative_index:
                self.relative_index = self.get_relative_index(
                    encoder_length=encoder_length,
                    decoder_length=decoder_length,
                    batch_size=batch_size,
                    device=device,
                    dtype=x_cont_past.dtype,
                )
            self.batch_size_last = batch_size

        if self.add_relative_index:
            x_cont_past = torch.cat(
                [ts[:, :encoder_length, :] for ts in [x_cont_past, self.relative_index] if ts is not None],
                dim=2,
            )
            x_cont_future = torch.cat(
                [ts[:, -decoder_length:, :] for ts in [x_cont_future, self.relative_index] if ts is not None],
                dim=2,
            )

        enc_out, state = self.lstm_encoder(self.past_proj(x_cont_past))
        dec_out, _ = self.lstm_decoder(self.future_proj(x_cont_future), state)
        lstm_out = torch.cat([enc_out, dec_out], dim=1)
        attn_out, _ = self.multihead_attn(
            q=lstm_out[:, encoder_length:], k=lstm_out, v=lstm_out, mask=self.attention_mask
        )
        return self.output_layer(attn_out + dec_out)


def main():
    torch.manual_seed(0)
    icl, ocl, batch_size = 6, 3, 8
    model = _TFTModule(icl, ocl, n_past=2, n_future=1, hidden_size=16, num_attention_heads=2,
                       full_attention=False, add_relative_index=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    series = torch.sin(torch.linspace(0, 20, 200))
    for epoch in range(3):
        for start in range(0, 160, batch_size * 2):
            idx = torch.arange(start, start + batch_size)
            past = torch.stack([torch.stack([series[i:i + icl], series[i:i + icl] ** 2], -1) for i in idx])
            future = torch.stack([series[i + icl:i + icl + ocl, None] * 0 for i in idx])
            target = torch.stack([series[i + icl:i + icl + ocl, None] for i in idx])
            loss = nn.functional.mse_loss(model((past, future)), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
    # after fitting, the model is moved for prediction (the report: to another device)
    model.double()
    with torch.no_grad():
        past = torch.randn(batch_size, icl, 2, dtype=torch.float64)
        future = torch.zeros(batch_size, ocl, 1, dtype=torch.float64)
        pred = model((past, future))
    print("prediction", tuple(pred.shape), pred.dtype)
    left = model.relative_index.dtype != model.output_layer.weight.dtype
    print(f"relative_index left behind by .double(): {left}")


if __name__ == "__main__":
    main()
