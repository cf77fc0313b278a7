# source: https://github.com/huggingface/diffusers/commit/e2d9a9bea071d4826a231c0a933351949a837958
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""huggingface/diffusers src/diffusers/models/unet_2d_condition.py before #2586: with ControlNet
residuals, UNet2DConditionModel.forward adds them in place, `down_block_res_sample +=
down_block_additional_residual` (and `sample += mid_block_additional_residual`); the first
down residual is `conv_in`'s output, which the first down block's ResnetBlock2D (GroupNorm) saved.
Training the UNet together with the ControlNet then fails in backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, groups=4, output_scale_factor=1.0):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.conv_shortcut = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else None
        self.output_scale_factor = output_scale_factor

    def forward(self, input_tensor, temb):
        hidden_states = self.conv1(F.silu(self.norm1(input_tensor)))
        hidden_states = hidden_states + self.time_emb_proj(F.silu(temb))[:, :, None, None]
        hidden_states = self.conv2(F.silu(self.norm2(hidden_states)))
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        return (input_tensor + hidden_states) / self.output_scale_factor


class DownBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, add_downsample=True):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D(in_channels, out_channels, temb_channels)])
        self.downsampler = nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1) if add_downsample else None

    def forward(self, hidden_states, temb=None):
        output_states = ()
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb)
            output_states += (hidden_states,)
        if self.downsampler is not None:
            hidden_states = self.downsampler(hidden_states)
            output_states += (hidden_states,)
        return hidden_states, output_states


class UpBlock2D(nn.Module):
    def __init__(self, in_channels, prev_output_channel, out_channels, temb_channels, num_layers, add_upsample):
        super().__init__()
        self.resnets = nn.ModuleList()
        for i in range(num_layers):
            res_skip_channels = in_channels if (i == num_layers - 1) else out_channels
            resnet_in_channels = prev_output_channel if i == 0 else out_channels
            self.resnets.append(ResnetBlock2D(resnet_in_channels + res_skip_channels, out_channels, temb_channels))
        self.upsampler = nn.Conv2d(out_channels, out_channels, 3, padding=1) if add_upsample else None

    def forward(self, hidden_states, res_hidden_states_tuple, temb=None):
        for resnet in self.resnets:
            res_hidden_states = res_hidden_states_tuple[-1]
            res_hidden_states_tuple = res_hidden_states_tuple[:-1]
            hidden_states = torch.cat([hidden_states, res_hidden_states], dim=1)
            hidden_states = resnet(hidden_states, temb)
        if self.upsampler is not None:
            hidden_states = self.upsampler(F.interpolate(hidden_states, scale_factor=2.0, mode='nearest'))
        return hidden_states


class UNet2DConditionModel(nn.Module):
    def __init__(self, in_channels=4, ch=(8, 16), temb=16):
        super().__init__()
        self.time_embedding = nn.Sequential(nn.Linear(1, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(in_channels, ch[0], 3, padding=1)
        self.down_blocks = nn.ModuleList([DownBlock2D(ch[0], ch[0], temb, True), DownBlock2D(ch[0], ch[1], temb, False)])
        self.mid_block = ResnetBlock2D(ch[1], ch[1], temb)
        self.up_blocks = nn.ModuleList([UpBlock2D(ch[0], ch[1], ch[1], temb, 2, True), UpBlock2D(ch[0], ch[1], ch[0], temb, 2, False)])
        self.conv_norm_out = nn.GroupNorm(4, ch[0])
        self.conv_out = nn.Conv2d(ch[0], in_channels, 3, padding=1)

    def forward(self, sample, timestep, down_block_additional_residuals=None, mid_block_additional_residual=None):
        emb = self.time_embedding(timestep.float()[:, None])
        # 2. pre-process
        sample = self.conv_in(sample)
        # 3. down
        down_block_res_samples = (sample,)
        for downsample_block in self.down_blocks:
            sample, res_samples = downsample_block(hidden_states=sample, temb=emb)
            down_block_res_samples += res_samples

        if down_block_additional_residuals is not None:
            new_down_block_res_samples = ()
            for down_block_res_sample, down_block_additional_residual in zip(
                down_block_res_samples, down_block_additional_residuals
            ):
                down_block_res_sample += down_block_additional_residual  # expect: AG006
                new_down_block_res_samples += (down_block_res_sample,)
            down_block_res_samples = new_down_block_res_samples

        # 4. mid
        sample = self.mid_block(sample, emb)
        if mid_block_additional_residual is not None:
            sample += mid_block_additional_residual

        # 5. up
        for upsample_block in self.up_blocks:
            res_samples = down_block_res_samples[-len(upsample_block.resnets):]
            down_block_res_samples = down_block_res_samples[: -len(upsample_block.resnets)]
            sample = upsample_block(hidden_states=sample, temb=emb, res_hidden_states_tuple=res_samples)
        return self.conv_out(F.silu(self.conv_norm_out(sample)))


class ControlNetModel(nn.Module):
    """a small stand-in: one zero-initialised 1x1 conv per UNet skip and for the mid block"""

    def __init__(self, in_channels=4, cond_channels=3, ch=(8, 8, 8, 16), mid=16):
        super().__init__()
        self.cond_embedding = nn.Conv2d(cond_channels, in_channels, 3, padding=1)
        self.enc = nn.Conv2d(in_channels, ch[0], 3, padding=1)
        self.zero_convs = nn.ModuleList([nn.Conv2d(ch[0], c, 1) for c in ch])
        self.mid_zero_conv = nn.Conv2d(ch[0], mid, 1)
        for m in list(self.zero_convs) + [self.mid_zero_conv]:
            nn.init.normal_(m.weight, std=1e-3)
            nn.init.zeros_(m.bias)

    def forward(self, sample, controlnet_cond):
        h = F.silu(self.enc(sample + self.cond_embedding(controlnet_cond)))
        sizes = [h, h, F.avg_pool2d(h, 2), F.avg_pool2d(h, 2)]
        down = [zc(s) for zc, s in zip(self.zero_convs, sizes)]
        mid = self.mid_zero_conv(F.avg_pool2d(h, 2))
        return down, mid


def main():
    torch.manual_seed(0)
    unet = UNet2DConditionModel()
    controlnet = ControlNetModel()
    params = list(controlnet.parameters()) + list(unet.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    for step in range(2):
        latents = torch.randn(2, 4, 8, 8)
        noise = torch.randn_like(latents)
        timesteps = torch.randint(0, 1000, (2,))
        noisy_latents = latents + 0.1 * noise
        controlnet_image = torch.rand(2, 3, 8, 8)
        down_block_res_samples, mid_block_res_sample = controlnet(noisy_latents, controlnet_image)
        model_pred = unet(noisy_latents, timesteps,
                          down_block_additional_residuals=down_block_res_samples,
                          mid_block_additional_residual=mid_block_res_sample)
        loss = F.mse_loss(model_pred.float(), noise.float(), reduction='mean')
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print('loss', loss.item())


if __name__ == '__main__':
    main()
