# source: https://github.com/styalai/xLSTM-pytorch/issues/2
# symptom: nt_1 on cpu, weights on (meta|cuda)
# sLSTMblock.__init__ calls self.init_states(x_example), which sets self.nt_1/ct_1/ht_1/mt_1 = torch.zeros(...) as plain
# attributes, so model.to(device) leaves the recurrent states behind. Re-created with the block's gates (simplified).
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalConv1D(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1):
        super().__init__()
        self.padding = (kernel_size - 1) * dilation
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=self.padding, dilation=dilation)

    def forward(self, x):
        x = self.conv(x)
        return x[:, :, :-self.padding] if self.padding else x


class sLSTMblock(nn.Module):
    def __init__(self, x_example, depth, dropout=0.2):
        super().__init__()
        self.input_size = x_example.shape[2]
        self.ln = nn.LayerNorm(self.input_size)
        self.conv = CausalConv1D(self.input_size, self.input_size, int(self.input_size / 8))
        self.drop = nn.Dropout(dropout)
        self.i_gate = nn.Linear(self.input_size, self.input_size)
        self.f_gate = nn.Linear(self.input_size, self.input_size)
        self.o_gate = nn.Linear(self.input_size, self.input_size)
        self.z_gate = nn.Linear(self.input_size, self.input_size)
        self.ri_gate = nn.Linear(self.input_size, self.input_size, bias=False)
        self.rf_gate = nn.Linear(self.input_size, self.input_size, bias=False)
        self.ro_gate = nn.Linear(self.input_size, self.input_size, bias=False)
        self.rz_gate = nn.Linear(self.input_size, self.input_size, bias=False)
        self.ln_c = nn.LayerNorm(self.input_size)
        self.ln_n = nn.LayerNorm(self.input_size)
        self.ln_h = nn.LayerNorm(self.input_size)
        self.proj = nn.Linear(self.input_size, self.input_size)
        self.init_states(x_example)

    def init_states(self, x):
        self.nt_1 = torch.zeros(1, 1, x.shape[2])  # expect: AG009
        self.ct_1 = torch.zeros(1, 1, x.shape[2])  # expect: AG009
        self.ht_1 = torch.zeros(1, 1, x.shape[2])  # expect: AG009
        self.mt_1 = torch.zeros(1, 1, x.shape[2])  # expect: AG009

    def forward(self, x):
        x = self.ln(x)
        x_conv = F.silu(self.drop(self.conv(x.transpose(1, 2)).transpose(1, 2)))
        ht_1 = self.ht_1
        i = torch.exp(self.i_gate(x_conv) + self.ri_gate(ht_1))
        f = torch.exp(self.f_gate(x_conv) + self.rf_gate(ht_1))
        m = torch.max(torch.log(f) + self.mt_1, torch.log(i))
        i = torch.exp(torch.log(i) - m)
        f = torch.exp(torch.log(f) + self.mt_1 - m)
        self.mt_1 = m.detach().mean([0, 1], keepdim=True)
        o = torch.sigmoid(self.o_gate(x) + self.ro_gate(ht_1))
        z = torch.tanh(self.z_gate(x) + self.rz_gate(ht_1))
        ct = torch.mean(self.ln_c(f * self.ct_1 + i * z), [0, 1], keepdim=True)
        self.ct_1 = ct.detach()
        nt = torch.mean(self.ln_n(f * self.nt_1 + i), [0, 1], keepdim=True)
        self.nt_1 = nt.detach()
        ht = torch.mean(self.ln_h(o * (ct / nt)), [0, 1], keepdim=True)
        self.ht_1 = ht.detach()
        return self.proj(ht)


torch.manual_seed(0)
x_example = torch.zeros(4, 8, 16)
model = sLSTMblock(x_example, depth=4)
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("meta")
model.to(device)
print(f"nt_1 on {model.nt_1.device}, weights on {model.i_gate.weight.device}")
print(model(torch.randn(4, 8, 16, device=device)).shape)
