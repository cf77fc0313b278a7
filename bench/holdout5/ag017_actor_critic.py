# source: written for bench/holdout5 (short training program, actor-critic with a shared encoder and two optimisers)
# symptom: backward through the graph a second time|modified by an inplace operation
import torch
from torch import nn

torch.manual_seed(32)


class ActorCritic:
    def __init__(self, obs_dim=6, n_actions=3):
        self.encoder = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
        self.actor = nn.Linear(32, n_actions)
        self.critic = nn.Linear(32, 1)
        actor_params = list(self.encoder.parameters()) + list(self.actor.parameters())
        self.actor_opt = torch.optim.Adam(actor_params, lr=1e-3)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def update(self, obs, actions, returns):
        feats = self.encoder(obs)
        values = self.critic(feats).squeeze(-1)  # expect: AG017
        critic_loss = ((returns - values) ** 2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        logp = torch.log_softmax(self.actor(feats), dim=-1)
        chosen = logp.gather(1, actions.unsqueeze(1)).squeeze(1)
        advantage = (returns - values).detach()
        actor_loss = -(chosen * advantage).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        return critic_loss.item(), actor_loss.item()


agent = ActorCritic()
for batch in range(10):
    obs = torch.randn(32, 6)
    actions = torch.randint(0, 3, (32,))
    returns = obs[:, 0] + 0.1 * torch.randn(32)
    c_loss, a_loss = agent.update(obs, actions, returns)
    print(f"batch {batch}: critic {c_loss:.3f} actor {a_loss:.3f}")
