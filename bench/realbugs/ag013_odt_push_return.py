# source: https://github.com/2024-poka-science-war-ai/OnlineDecisionTransformer/blob/b20d174d7377f99beea3fb918476d95caf0c3469/OnlineDecisionTransformer/agent.py
# symptom: 'builtin_function_or_method' object is not subscriptable
# An online decision-transformer agent keeps per-episode return-to-go buffers; push_R, called from act() on every
# frame after the first, appends the new return-to-go with torch.tensor[[RtG]] and raises a TypeError.
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

torch.manual_seed(0)


class Decision_transformer(nn.Module):
    def __init__(self, s_dim, a_dim, hidden_dim, K):
        super().__init__()
        self.K = K
        self.embed = nn.Linear(1 + s_dim, hidden_dim)
        self.head = nn.Linear(hidden_dim, a_dim)

    def forward(self, R, s):
        h = torch.tanh(self.embed(torch.cat((R, s), dim=-1)))
        return torch.softmax(self.head(h), dim=-1)


class OnlineDecisionTransformerAgent:
    def __init__(self, s_dim=6, a_dim=5, K=4):
        self.s_dim, self.a_dim, self.K = s_dim, a_dim, K
        self.objective_R = 1.0
        self.timestep = 0
        self.model = Decision_transformer(s_dim, a_dim, hidden_dim=16, K=K)
        self.temp_buffer = {"R": None, "s": None, "a": None}

    def act(self, observation):
        obs, reward, done, info = observation
        self.push_R(reward)
        self.push_s(obs)
        R, s = self.get_Rs_seq()
        a_preds = self.model(R, s)
        self.timestep += 1
        a_pred = Categorical(probs=a_preds[-1]).sample().detach()
        self.push_a(a_pred)
        return a_pred

    def push_R(self, r):
        if self.temp_buffer["R"] is None:
            self.temp_buffer["R"] = torch.tensor([[self.objective_R]])
        else:
            RtG = self.temp_buffer["R"][-1].item() - r
            self.temp_buffer["R"] = torch.cat((self.temp_buffer["R"], torch.tensor[[RtG]]), dim=0)  # expect: AG013

    def push_s(self, s):
        s = s.unsqueeze(0)
        self.temp_buffer["s"] = s if self.temp_buffer["s"] is None else torch.cat((self.temp_buffer["s"], s), dim=0)

    def push_a(self, a):
        a = a.unsqueeze(0)
        self.temp_buffer["a"] = a if self.temp_buffer["a"] is None else torch.cat((self.temp_buffer["a"], a), dim=0)

    def get_Rs_seq(self):
        i = max(self.timestep - self.K + 1, 0)
        return self.temp_buffer["R"][i:], self.temp_buffer["s"][i:]


agent = OnlineDecisionTransformerAgent()
for frame in range(3):
    action = agent.act((torch.randn(6), 0.1 * frame, False, {}))
    print("frame", frame, "action", int(action))
