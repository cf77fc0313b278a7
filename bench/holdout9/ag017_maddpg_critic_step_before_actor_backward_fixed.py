# source: https://github.com/starry-sky6688/MADDPG/issues/27
# symptom: modified by an inplace operation
"""Fixed twin: the maintainer's answer in the thread: to update the critic first, move the critic update up to
where the critic loss is computed, before the actor loss is built, so the actor loss goes through the critic as it is
after its step (the order the reporter wanted, without backpropagating through stale weights).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, args, agent_id):
        super(Actor, self).__init__()
        self.max_action = args.high_action
        self.fc1 = nn.Linear(args.obs_shape[agent_id], 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 64)
        self.action_out = nn.Linear(64, args.action_shape[agent_id])

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        return self.max_action * torch.tanh(self.action_out(x))


class Critic(nn.Module):
    def __init__(self, args):
        super(Critic, self).__init__()
        self.max_action = args.high_action
        self.fc1 = nn.Linear(sum(args.obs_shape) + sum(args.action_shape), 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 64)
        self.q_out = nn.Linear(64, 1)

    def forward(self, state, action):
        state = torch.cat(state, dim=1)
        for i in range(len(action)):
            action[i] /= self.max_action
        action = torch.cat(action, dim=1)
        x = torch.cat([state, action], dim=1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        return self.q_out(x)


class MADDPG:
    def __init__(self, args, agent_id):
        self.args = args
        self.agent_id = agent_id
        self.train_step = 0
        self.actor_network = Actor(args, agent_id)
        self.critic_network = Critic(args)
        self.actor_target_network = Actor(args, agent_id)
        self.critic_target_network = Critic(args)
        self.actor_target_network.load_state_dict(self.actor_network.state_dict())
        self.critic_target_network.load_state_dict(self.critic_network.state_dict())
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=self.args.lr_actor)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=self.args.lr_critic)

    # soft update
    def _soft_update_target_network(self):
        with torch.no_grad():
            for target_param, param in zip(self.actor_target_network.parameters(), self.actor_network.parameters()):
                target_param.copy_((1 - self.args.tau) * target_param + self.args.tau * param)
            for target_param, param in zip(self.critic_target_network.parameters(), self.critic_network.parameters()):
                target_param.copy_((1 - self.args.tau) * target_param + self.args.tau * param)

    # update the network
    def train(self, transitions, other_agents):
        r = transitions['r_%d' % self.agent_id]
        o, u, o_next = [], [], []
        for agent_id in range(self.args.n_agents):
            o.append(transitions['o_%d' % agent_id])
            u.append(transitions['u_%d' % agent_id].clone())
            o_next.append(transitions['o_next_%d' % agent_id])

        # calculate the target Q value function
        u_next = []
        with torch.no_grad():
            index = 0
            for agent_id in range(self.args.n_agents):
                if agent_id == self.agent_id:
                    u_next.append(self.actor_target_network(o_next[agent_id]))
                else:
                    u_next.append(other_agents[index].policy.actor_target_network(o_next[agent_id]))
                    index += 1
            q_next = self.critic_target_network(o_next, u_next).detach()
            target_q = (r.unsqueeze(1) + self.args.gamma * q_next).detach()

        # the q loss, and the critic update right away
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        # the actor loss, built with the updated critic: re-select this agent's action, keep the others' actions
        u[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = - self.critic_network(o, u).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()

        self._soft_update_target_network()
        self.train_step += 1
        return critic_loss.item(), actor_loss.item()


class Agent:
    def __init__(self, agent_id, args):
        self.agent_id = agent_id
        self.policy = MADDPG(args, agent_id)

    def learn(self, transitions, other_agents):
        return self.policy.train(transitions, other_agents)


def sample_transitions(args, batch_size=32):
    transitions = {}
    for i in range(args.n_agents):
        transitions['o_%d' % i] = torch.randn(batch_size, args.obs_shape[i])
        transitions['u_%d' % i] = torch.rand(batch_size, args.action_shape[i]) * 2 - 1
        transitions['r_%d' % i] = torch.randn(batch_size)
        transitions['o_next_%d' % i] = torch.randn(batch_size, args.obs_shape[i])
    return transitions


if __name__ == "__main__":
    args = argparse.Namespace(n_agents=3, obs_shape=[8, 8, 10], action_shape=[2, 2, 2], high_action=1.0,
                              lr_actor=1e-4, lr_critic=1e-3, gamma=0.95, tau=0.01)
    agents = [Agent(i, args) for i in range(args.n_agents)]
    for time_step in range(2):
        transitions = sample_transitions(args)
        for agent in agents:
            other_agents = agents.copy()
            other_agents.remove(agent)
            critic_loss, actor_loss = agent.learn(transitions, other_agents)
        print("step %d critic loss %.4f actor loss %.4f" % (time_step, critic_loss, actor_loss))
