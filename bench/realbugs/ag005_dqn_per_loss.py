# source: https://github.com/BY571/DQN-Atari-Agents/issues/5
# symptom: grad can be implicitly created only for scalar outputs
# DQN_Agent.learn_per computed loss = td_error.pow(2)*weights.mean() (brackets misplaced): a [batch, 1] tensor,
# then loss.backward(). Re-created with the agent class, its step()/learn_per() methods and a prioritized replay buffer.
import random
from collections import deque, namedtuple

import torch
import torch.nn as nn
import torch.optim as optim


class DDQN(nn.Module):
    def __init__(self, state_size, action_size, layer_size=32):
        super().__init__()
        self.head = nn.Linear(state_size, layer_size)
        self.ff = nn.Linear(layer_size, action_size)

    def forward(self, x):
        return self.ff(torch.relu(self.head(x)))


class PrioritizedReplay:
    def __init__(self, capacity, alpha=0.6, beta_start=0.4):
        self.capacity = capacity
        self.alpha = alpha
        self.beta = beta_start
        self.buffer = deque(maxlen=capacity)
        self.priorities = deque(maxlen=capacity)
        self.experience = namedtuple("Experience", ["state", "action", "reward", "next_state", "done"])

    def add(self, state, action, reward, next_state, done):
        max_prio = max(self.priorities, default=1.0)
        self.buffer.append(self.experience(state, action, reward, next_state, done))
        self.priorities.append(max_prio)

    def sample(self, batch_size):
        prios = torch.tensor(list(self.priorities)) ** self.alpha
        probs = prios / prios.sum()
        indices = torch.multinomial(probs, batch_size, replacement=True)
        samples = [self.buffer[i] for i in indices]
        weights = (len(self.buffer) * probs[indices]) ** (-self.beta)
        weights = weights / weights.max()
        states = torch.stack([e.state for e in samples])
        actions = torch.tensor([[e.action] for e in samples])
        rewards = torch.tensor([[e.reward] for e in samples])
        next_states = torch.stack([e.next_state for e in samples])
        dones = torch.tensor([[float(e.done)] for e in samples])
        return states, actions, rewards, next_states, dones, indices, weights

    def update_priorities(self, batch_indices, batch_priorities):
        for idx, prio in zip(batch_indices.tolist(), batch_priorities.tolist()):
            self.priorities[idx] = float(prio)

    def __len__(self):
        return len(self.buffer)


class DQN_Agent:
    def __init__(self, state_size, action_size, batch_size=16, gamma=0.99, lr=1e-3, device="cpu"):
        self.action_size = action_size
        self.batch_size = batch_size
        self.gamma = gamma
        self.device = device
        self.qnetwork_local = DDQN(state_size, action_size).to(device)
        self.qnetwork_target = DDQN(state_size, action_size).to(device)
        self.optimizer = optim.Adam(self.qnetwork_local.parameters(), lr=lr)
        self.memory = PrioritizedReplay(1000)

    def step(self, state, action, reward, next_state, done):
        self.memory.add(state, action, reward, next_state, done)
        if len(self.memory) > self.batch_size:
            experiences = self.memory.sample(self.batch_size)
            return self.learn_per(experiences)
        return None

    def act(self, state, eps=0.1):
        if random.random() > eps:
            with torch.no_grad():
                return int(self.qnetwork_local(state).argmax())
        return random.randrange(self.action_size)

    def learn_per(self, experiences):
        self.optimizer.zero_grad()
        states, actions, rewards, next_states, dones, idx, weights = experiences
        weights = weights.unsqueeze(1)
        Q_targets_next = self.qnetwork_target(next_states).detach().max(1)[0].unsqueeze(1)
        Q_targets = rewards + (self.gamma * Q_targets_next * (1 - dones))
        Q_expected = self.qnetwork_local(states).gather(1, actions)
        td_error = Q_targets - Q_expected
        loss = td_error.pow(2) * weights.mean().to(self.device)
        loss.backward()  # expect: AG005
        self.optimizer.step()
        self.memory.update_priorities(idx, abs(td_error.detach()).squeeze(1) + 1e-5)
        return loss.detach().tolist()


random.seed(0)
torch.manual_seed(0)
agent = DQN_Agent(state_size=4, action_size=2)
state = torch.randn(4)
for frame in range(40):
    action = agent.act(state)
    next_state, reward, done = torch.randn(4), random.random(), random.random() < 0.05
    agent.step(state, action, reward, next_state, done)
    state = next_state
print("done")
