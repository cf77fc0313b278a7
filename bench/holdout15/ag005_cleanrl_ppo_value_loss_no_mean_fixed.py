# source: https://github.com/vwxyzjn/cleanrl/issues/22
# symptom: grad can be implicitly created only for scalar outputs
"""CleanRL `ppo_continuous_action.py` (2020): with `--clip-vloss False` the value loss is
`v_loss = 0.5 * ((new_values - b_returns[minibatch_ind]) ** 2)` with no `.mean()`, so
`loss = pg_loss - ent_coef * entropy_loss + v_loss * vf_coef` is a vector of minibatch size and
`loss.backward()` fails. Written for this set with the script's structure (argparse flags, the Agent with
critic / actor_mean / actor_logstd, a rollout buffer, returns, flattened batch, update epochs over shuffled
minibatches); a toy continuous environment in torch replaces gym.

Fixed twin: `.mean()` on the unclipped value loss, the maintainer's quick fix for the issue (commit bf5f87a4)."""
import argparse
import random

import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions.normal import Normal

parser = argparse.ArgumentParser(description="PPO agent")
parser.add_argument("--learning-rate", type=float, default=3e-4)
parser.add_argument("--num-steps", type=int, default=64)
parser.add_argument("--n-minibatch", type=int, default=4)
parser.add_argument("--update-epochs", type=int, default=2)
parser.add_argument("--gamma", type=float, default=0.99)
parser.add_argument("--clip-coef", type=float, default=0.2)
parser.add_argument("--ent-coef", type=float, default=0.0)
parser.add_argument("--vf-coef", type=float, default=0.5)
parser.add_argument("--max-grad-norm", type=float, default=0.5)
parser.add_argument("--norm-adv", type=lambda x: x.lower() in ("1", "true"), default=True)
parser.add_argument("--clip-vloss", type=lambda x: x.lower() in ("1", "true"), default=True)
args = parser.parse_args(["--clip-vloss", "False"])
args.batch_size = args.num_steps
args.minibatch_size = int(args.batch_size // args.n_minibatch)

OBS_DIM, ACT_DIM = 3, 1
random.seed(1)
torch.manual_seed(1)


class ToyEnv:
    """Reward: stay close to the sum of the observation."""

    def reset(self):
        self.obs = torch.randn(OBS_DIM)
        self.t = 0
        return self.obs

    def step(self, action):
        reward = -float((action.sum() - self.obs.sum()) ** 2)
        self.t += 1
        done = self.t >= 16
        self.obs = torch.randn(OBS_DIM)
        return self.obs, reward, done


def layer_init(layer, std=2 ** 0.5, bias_const=0.0):
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(OBS_DIM, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(OBS_DIM, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, ACT_DIM), std=0.01),
        )
        self.actor_logstd = nn.Parameter(torch.zeros(1, ACT_DIM))

    def get_action(self, x, action=None):
        action_mean = self.actor_mean(x)
        action_logstd = self.actor_logstd.expand_as(action_mean)
        action_std = torch.exp(action_logstd)
        probs = Normal(action_mean, action_std)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1)

    def get_value(self, x):
        return self.critic(x)


env = ToyEnv()
agent = Agent()
optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

obs = torch.zeros((args.num_steps, OBS_DIM))
actions = torch.zeros((args.num_steps, ACT_DIM))
logprobs = torch.zeros(args.num_steps)
rewards = torch.zeros(args.num_steps)
dones = torch.zeros(args.num_steps)
values = torch.zeros(args.num_steps)

for update in range(1, 3):
    next_obs = env.reset()
    for step in range(args.num_steps):
        obs[step] = next_obs
        with torch.no_grad():
            values[step] = agent.get_value(obs[step:step + 1]).flatten()[0]
            action, logproba, _ = agent.get_action(obs[step:step + 1])
        actions[step] = action[0]
        logprobs[step] = logproba[0]
        next_obs, rs, done = env.step(action[0])
        rewards[step], dones[step] = rs, float(done)
        if done:
            next_obs = env.reset()

    with torch.no_grad():
        last_value = agent.get_value(next_obs[None]).reshape(1)
        returns = torch.zeros_like(rewards)
        for t in reversed(range(args.num_steps)):
            if t == args.num_steps - 1:
                nextnonterminal = 1.0 - dones[t]
                next_return = last_value
            else:
                nextnonterminal = 1.0 - dones[t]
                next_return = returns[t + 1]
            returns[t] = rewards[t] + args.gamma * nextnonterminal * next_return
        advantages = returns - values

    b_obs, b_logprobs, b_actions = obs, logprobs, actions
    b_advantages, b_returns, b_values = advantages, returns, values

    inds = list(range(args.batch_size))
    for i_epoch_pi in range(args.update_epochs):
        random.shuffle(inds)
        for start in range(0, args.batch_size, args.minibatch_size):
            minibatch_ind = torch.tensor(inds[start:start + args.minibatch_size])
            mb_advantages = b_advantages[minibatch_ind]
            if args.norm_adv:
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

            _, newlogproba, entropy = agent.get_action(b_obs[minibatch_ind], b_actions[minibatch_ind])
            ratio = (newlogproba - b_logprobs[minibatch_ind]).exp()

            # Policy loss
            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            entropy_loss = entropy.mean()

            # Value loss
            new_values = agent.get_value(b_obs[minibatch_ind]).view(-1)
            if args.clip_vloss:
                v_loss_unclipped = (new_values - b_returns[minibatch_ind]) ** 2
                v_clipped = b_values[minibatch_ind] + torch.clamp(
                    new_values - b_values[minibatch_ind], -args.clip_coef, args.clip_coef)
                v_loss_clipped = (v_clipped - b_returns[minibatch_ind]) ** 2
                v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
                v_loss = 0.5 * v_loss_max.mean()
            else:
                v_loss = 0.5 * ((new_values - b_returns[minibatch_ind]) ** 2).mean()

            loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
    print("update", update, "value_loss", round(v_loss.mean().item(), 4), "policy_loss", round(pg_loss.item(), 4))
