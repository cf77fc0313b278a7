# source: https://github.com/philtabor/Multi-Agent-Deep-Deterministic-Policy-Gradients/issues/2
# symptom: modified by an inplace operation
"""Multi-Agent-Deep-Deterministic-Policy-Gradients `MADDPG.learn`: the target actions of all agents
(`new_actions`) and the current policies' actions (`mu`) are built once, before the loop over agents.
Each agent then runs `critic_loss.backward(retain_graph=True)`, `critic.optimizer.step()`,
`actor_loss.backward(retain_graph=True)`, `actor.optimizer.step()` and a soft target update
(`load_state_dict`, which copies into the target weights in place). The second agent's
`critic_loss.backward(retain_graph=True)` goes back through the retained `new_actions` graph, whose
target-actor weights the first agent's update already rewrote: the version error of the issue (torch
1.8; the author had run it on 1.4)."""
import torch as T
import torch.nn as nn
import torch.nn.functional as F

T.manual_seed(0)


class CriticNetwork(nn.Module):
    def __init__(self, beta, input_dims, fc1, fc2, n_agents, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims + n_agents * n_actions, fc1)
        self.fc2 = nn.Linear(fc1, fc2)
        self.q = nn.Linear(fc2, 1)
        self.optimizer = T.optim.Adam(self.parameters(), lr=beta)

    def forward(self, state, action):
        x = F.relu(self.fc1(T.cat([state, action], dim=1)))
        return self.q(F.relu(self.fc2(x)))


class ActorNetwork(nn.Module):
    def __init__(self, alpha, input_dims, fc1, fc2, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims, fc1)
        self.fc2 = nn.Linear(fc1, fc2)
        self.pi = nn.Linear(fc2, n_actions)
        self.optimizer = T.optim.Adam(self.parameters(), lr=alpha)

    def forward(self, state):
        x = F.relu(self.fc2(F.relu(self.fc1(state))))
        return T.softmax(self.pi(x), dim=1)


class Agent:
    def __init__(self, actor_dims, critic_dims, n_actions, n_agents, alpha=0.01, beta=0.01,
                 fc1=32, fc2=32, gamma=0.95, tau=0.01):
        self.gamma = gamma
        self.tau = tau
        self.actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.target_actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.target_critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.update_network_parameters(tau=1)

    def update_network_parameters(self, tau=None):
        tau = self.tau if tau is None else tau
        for net, target in ((self.actor, self.target_actor), (self.critic, self.target_critic)):
            source = dict(net.named_parameters())
            current = dict(target.named_parameters())
            for name in source:
                source[name] = tau * source[name].clone() + (1 - tau) * current[name].clone()
            target.load_state_dict(source)


class MADDPG:
    def __init__(self, actor_dims, critic_dims, n_agents, n_actions):
        self.agents = [Agent(actor_dims[i], critic_dims, n_actions, n_agents) for i in range(n_agents)]

    def learn(self, batch):
        actor_states, states, actions, rewards, actor_new_states, states_, dones = batch
        all_agents_new_actions = []
        all_agents_new_mu_actions = []
        old_agents_actions = []
        for agent_idx, agent in enumerate(self.agents):
            new_pi = agent.target_actor.forward(actor_new_states[agent_idx])
            all_agents_new_actions.append(new_pi)
            pi = agent.actor.forward(actor_states[agent_idx])
            all_agents_new_mu_actions.append(pi)
            old_agents_actions.append(actions[agent_idx])
        new_actions = T.cat(all_agents_new_actions, dim=1)
        mu = T.cat(all_agents_new_mu_actions, dim=1)
        old_actions = T.cat(old_agents_actions, dim=1)

        for agent_idx, agent in enumerate(self.agents):
            critic_value_ = agent.target_critic.forward(states_, new_actions).flatten()
            critic_value_[dones[:, 0]] = 0.0
            critic_value = agent.critic.forward(states, old_actions).flatten()
            target = rewards[:, agent_idx] + agent.gamma * critic_value_
            critic_loss = F.mse_loss(target, critic_value)
            agent.critic.optimizer.zero_grad()
            critic_loss.backward(retain_graph=True)  # expect: AG003
            agent.critic.optimizer.step()

            actor_loss = -T.mean(agent.critic.forward(states, mu).flatten())
            agent.actor.optimizer.zero_grad()
            actor_loss.backward(retain_graph=True)  # expect: AG003
            agent.actor.optimizer.step()

            agent.update_network_parameters()


def sample_batch(n_agents, actor_dims, n_actions, batch_size=16):
    actor_states = [T.randn(batch_size, d) for d in actor_dims]
    actor_new_states = [T.randn(batch_size, d) for d in actor_dims]
    states = T.cat(actor_states, dim=1)
    states_ = T.cat(actor_new_states, dim=1)
    actions = [T.softmax(T.randn(batch_size, n_actions), dim=1) for _ in range(n_agents)]
    rewards = T.randn(batch_size, n_agents)
    dones = T.rand(batch_size, n_agents) < 0.1
    return actor_states, states, actions, rewards, actor_new_states, states_, dones


def main():
    n_agents, n_actions, actor_dims = 3, 5, [8, 10, 10]
    maddpg = MADDPG(actor_dims, sum(actor_dims), n_agents, n_actions)
    for step in range(3):
        maddpg.learn(sample_batch(n_agents, actor_dims, n_actions))
        print(f"learn step {step} done")


if __name__ == "__main__":
    main()
