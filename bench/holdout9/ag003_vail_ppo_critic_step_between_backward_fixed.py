# source: https://github.com/reinforcement-learning-kr/lets-do-irl/issues/9
# symptom: modified by an inplace operation
"""Fixed twin: the issue is unanswered; as the single combined loss suggests, both optimizers' gradients are cleared,
the loss is backpropagated once, and then the critic and the actor step.
"""
import argparse
import math
import random

import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)
random.seed(0)


class Actor(nn.Module):
    def __init__(self, num_inputs, num_outputs, args):
        super(Actor, self).__init__()
        self.fc1 = nn.Linear(num_inputs, args.hidden_size)
        self.fc2 = nn.Linear(args.hidden_size, args.hidden_size)
        self.fc3 = nn.Linear(args.hidden_size, num_outputs)
        with torch.no_grad():
            self.fc3.weight.mul_(0.1)
            self.fc3.bias.mul_(0.0)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        mu = self.fc3(x)
        logstd = torch.zeros_like(mu)
        std = torch.exp(logstd)
        return mu, std


class Critic(nn.Module):
    def __init__(self, num_inputs, args):
        super(Critic, self).__init__()
        self.fc1 = nn.Linear(num_inputs, args.hidden_size)
        self.fc2 = nn.Linear(args.hidden_size, args.hidden_size)
        self.fc3 = nn.Linear(args.hidden_size, 1)
        with torch.no_grad():
            self.fc3.weight.mul_(0.1)
            self.fc3.bias.mul_(0.0)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


def get_entropy(mu, std):
    dist = Normal(mu, std)
    return dist.entropy().mean()


def log_prob_density(x, mu, std):
    log_prob_density = -(x - mu).pow(2) / (2 * std.pow(2)) - 0.5 * math.log(2 * math.pi)
    return log_prob_density.sum(1, keepdim=True)


def train_actor_critic(actor, critic, memory, actor_optim, critic_optim, args):
    states = torch.stack([m[0] for m in memory])
    actions = torch.stack([m[1] for m in memory])
    rewards = [m[2] for m in memory]
    masks = [m[3] for m in memory]

    old_values = critic(states)
    returns, advants = get_gae(rewards, masks, old_values, args)

    mu, std = actor(states)
    old_policy = log_prob_density(actions, mu, std)

    criterion = torch.nn.MSELoss()
    n = len(states)
    arr = list(range(n))

    for _ in range(args.ppo_update_num):
        random.shuffle(arr)
        for i in range(n // args.batch_size):
            batch_index = torch.LongTensor(arr[args.batch_size * i: args.batch_size * (i + 1)])

            inputs = states[batch_index]
            actions_samples = actions[batch_index]
            returns_samples = returns.unsqueeze(1)[batch_index]
            advants_samples = advants.unsqueeze(1)[batch_index]
            oldvalue_samples = old_values[batch_index].detach()

            values = critic(inputs)
            clipped_values = oldvalue_samples + torch.clamp(values - oldvalue_samples,
                                                            -args.clip_param, args.clip_param)
            critic_loss1 = criterion(clipped_values, returns_samples)
            critic_loss2 = criterion(values, returns_samples)
            critic_loss = torch.max(critic_loss1, critic_loss2).mean()

            loss, ratio, entropy = surrogate_loss(actor, advants_samples, inputs, old_policy.detach(),
                                                  actions_samples, batch_index)
            clipped_ratio = torch.clamp(ratio, 1.0 - args.clip_param, 1.0 + args.clip_param)
            clipped_loss = clipped_ratio * advants_samples
            actor_loss = -torch.min(loss, clipped_loss).mean()

            loss = actor_loss + 0.5 * critic_loss - 0.001 * entropy

            critic_optim.zero_grad()
            actor_optim.zero_grad()
            loss.backward()
            critic_optim.step()
            actor_optim.step()


def get_gae(rewards, masks, values, args):
    rewards = torch.Tensor(rewards)
    masks = torch.Tensor(masks)
    returns = torch.zeros_like(rewards)
    advants = torch.zeros_like(rewards)

    running_returns = 0
    previous_value = 0
    running_advants = 0
    for t in reversed(range(0, len(rewards))):
        running_returns = rewards[t] + (args.gamma * running_returns * masks[t])
        returns[t] = running_returns
        running_delta = rewards[t] + (args.gamma * previous_value * masks[t]) - values.detach()[t]
        previous_value = values.detach()[t]
        running_advants = running_delta + (args.gamma * args.lamda * running_advants * masks[t])
        advants[t] = running_advants

    advants = (advants - advants.mean()) / advants.std()
    return returns, advants


def surrogate_loss(actor, advants, states, old_policy, actions, batch_index):
    mu, std = actor(states)
    new_policy = log_prob_density(actions, mu, std)
    old_policy = old_policy[batch_index]

    ratio = torch.exp(new_policy - old_policy)
    surrogate_loss = ratio * advants
    entropy = get_entropy(mu, std)
    return surrogate_loss, ratio, entropy


if __name__ == "__main__":
    args = argparse.Namespace(hidden_size=32, gamma=0.99, lamda=0.98, clip_param=0.2, ppo_update_num=2,
                              batch_size=16, learning_rate=3e-4, l2_rate=1e-3)
    num_inputs, num_actions = 6, 2
    actor = Actor(num_inputs, num_actions, args)
    critic = Critic(num_inputs, args)
    actor_optim = torch.optim.Adam(actor.parameters(), lr=args.learning_rate)
    critic_optim = torch.optim.Adam(critic.parameters(), lr=args.learning_rate, weight_decay=args.l2_rate)

    for iteration in range(2):
        memory = []
        for step in range(64):
            state = torch.randn(num_inputs)
            with torch.no_grad():
                mu, std = actor(state[None])
            action = torch.normal(mu, std)[0]
            reward = -float(action.pow(2).sum())
            mask = 0.0 if step % 32 == 31 else 1.0
            memory.append((state, action, reward, mask))
        actor.train(), critic.train()
        train_actor_critic(actor, critic, memory, actor_optim, critic_optim, args)
        print("iteration %d: mean reward %.3f" % (iteration, sum(m[2] for m in memory) / len(memory)))
