# source: https://github.com/openvpi/DiffSinger/commit/09743cce64de5e535eaf6f1a79a114b8e1bc5f13
# symptom: modified by an inplace operation
"""DiffSinger variance model (`DiffSingerVariance.forward`) trained on duration, pitch and variance losses.

Fixed as in the commit: `pitch_cond = condition.clone()`, and the variance condition is a new tensor,
`var_cond = condition + self.pitch_embed(...)` (then `var_cond += ...`), passed to the variance predictor.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

hparams = {'hidden_size': 32}
VARIANCES = ['energy', 'breathiness']


class FastSpeech2Variance(nn.Module):
    def __init__(self, vocab=40, hidden=32):
        super().__init__()
        self.txt_embed = nn.Embedding(vocab, hidden)
        self.midi_embed = nn.Embedding(128, hidden)
        self.encoder = nn.Conv1d(hidden, hidden, 3, padding=1)
        self.dur_predictor = nn.Linear(hidden, 1)

    def forward(self, txt_tokens, midi, ph_dur):
        x = self.txt_embed(txt_tokens) + self.midi_embed(midi)
        encoder_out = torch.tanh(self.encoder(x.transpose(1, 2))).transpose(1, 2)
        dur_pred_out = self.dur_predictor(encoder_out).squeeze(-1)
        return encoder_out, dur_pred_out


class PitchPredictor(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(hidden, hidden, 3, padding=1), nn.SiLU(), nn.Conv1d(hidden, 1, 1))

    def forward(self, cond, delta_pitch=None, infer=True):
        out = self.net(cond.transpose(1, 2)).squeeze(1)
        if infer:
            return out
        return F.mse_loss(out, delta_pitch)


class VarianceAdaptor(nn.Module):
    def __init__(self, hidden, n_var):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(hidden, hidden, 3, padding=1), nn.ReLU(), nn.Conv1d(hidden, n_var, 1))

    def forward(self, condition, variance_inputs, infer=True):
        pred = self.net(condition.transpose(1, 2))
        if infer:
            return pred
        return F.mse_loss(pred, torch.stack(variance_inputs, dim=1))


class DiffSingerVariance(nn.Module):
    def __init__(self):
        super().__init__()
        h = hparams['hidden_size']
        self.fs2 = FastSpeech2Variance(hidden=h)
        self.use_melody_encoder = False
        self.predict_pitch = True
        self.predict_variances = True
        self.variance_prediction_list = VARIANCES
        self.pitch_retake_embed = nn.Embedding(2, h)
        self.base_pitch_embed = nn.Linear(1, h)
        self.pitch_predictor = PitchPredictor(h)
        self.pitch_embed = nn.Linear(1, h)
        self.variance_embeds = nn.ModuleDict({v_name: nn.Linear(1, h) for v_name in self.variance_prediction_list})
        self.variance_predictor = VarianceAdaptor(h, len(VARIANCES))

    def collect_variance_inputs(self, **kwargs):
        return [kwargs.get(name) for name in self.variance_prediction_list]

    def forward(self, txt_tokens, midi, ph_dur=None, mel2ph=None, base_pitch=None, pitch=None,
                pitch_retake=None, variance_retake=None, infer=True, **kwargs):
        encoder_out, dur_pred_out = self.fs2(txt_tokens, midi=midi, ph_dur=ph_dur)

        encoder_out = F.pad(encoder_out, [0, 0, 1, 0])
        mel2ph_ = mel2ph[..., None].repeat([1, 1, hparams['hidden_size']])
        condition = torch.gather(encoder_out, 1, mel2ph_)

        if self.predict_pitch:
            if self.use_melody_encoder:
                raise NotImplementedError
            else:
                pitch_cond = condition.clone()  # preserve the original tensor to avoid further inplace operations

            if pitch_retake is None:
                pitch_retake = torch.ones_like(mel2ph, dtype=torch.bool)
            pitch_retake_embed = self.pitch_retake_embed(pitch_retake.long())
            pitch_cond += pitch_retake_embed
            base_pitch = base_pitch * pitch_retake + pitch * ~pitch_retake
            pitch_cond += self.base_pitch_embed(base_pitch[:, :, None])

            if infer:
                pitch_pred_out = self.pitch_predictor(pitch_cond, infer=True)
            else:
                pitch_pred_out = self.pitch_predictor(pitch_cond, pitch - base_pitch, infer=False)
        else:
            pitch_pred_out = None

        if not self.predict_variances:
            return dur_pred_out, pitch_pred_out, ({} if infer else None)

        if pitch is None:
            pitch = base_pitch + pitch_pred_out
        var_cond = condition + self.pitch_embed(pitch[:, :, None])

        variance_inputs = self.collect_variance_inputs(**kwargs)
        if variance_retake is not None:
            variance_embeds = [
                self.variance_embeds[v_name](v_input[:, :, None]) * ~variance_retake[v_name][:, :, None]
                for v_name, v_input in zip(self.variance_prediction_list, variance_inputs)
            ]
            var_cond += torch.stack(variance_embeds, dim=-1).sum(-1)

        variance_outputs = self.variance_predictor(var_cond, variance_inputs, infer=infer)
        return dur_pred_out, pitch_pred_out, variance_outputs


model = DiffSingerVariance()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
B, T_ph, T_mel = 4, 6, 24

for step in range(5):
    txt_tokens = torch.randint(1, 40, (B, T_ph))
    midi = torch.randint(40, 80, (B, T_ph))
    ph_dur = torch.full((B, T_ph), T_mel // T_ph)
    mel2ph = torch.arange(T_mel).div(T_mel // T_ph, rounding_mode='floor').add(1).repeat(B, 1)
    base_pitch = torch.randn(B, T_mel)
    pitch = base_pitch + 0.1 * torch.randn(B, T_mel)
    variances = {v: torch.rand(B, T_mel) for v in VARIANCES}
    variance_retake = {v: torch.rand(B, T_mel) < 0.5 for v in VARIANCES}
    pitch_retake = torch.rand(B, T_mel) < 0.7

    dur_pred, pitch_loss, var_loss = model(txt_tokens, midi, ph_dur=ph_dur, mel2ph=mel2ph, base_pitch=base_pitch,
                                           pitch=pitch, pitch_retake=pitch_retake, variance_retake=variance_retake,
                                           infer=False, **variances)
    dur_loss = F.mse_loss(dur_pred, torch.log1p(ph_dur.float()))
    loss = dur_loss + pitch_loss + var_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} dur {dur_loss.item():.4f} pitch {pitch_loss.item():.4f} var {var_loss.item():.4f}")
