# source: https://github.com/BY571/DQN-Atari-Agents/issues/5
# symptom: grad can be implicitly created only for scalar outputs
"""DQN-Atari-Agents, `dqn+per`: `DQN_Agent.learn_per` weights the squared TD errors with the prioritized-replay
importance weights as `td_error.pow(2) * weights.mean()`; the missing brackets make the loss a
`[batch_size, 1]` vector, and `loss.backward()` fails."""
import random
import torch
import torch.nn as nn
import torch.optim as optim
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)
random.seed(0)


class DDQN(nn.Module):
    def __init__(self, state_size, action_size, layer_size):
        super().__init__()
        self.head = nn.Linear(state_size, layer_size)
        self.ff = nn.Linear(layer_size, layer_size)
        self.out = nn.Linear(layer_size, action_size)

    def forward(self, x):
        return self.out(torch.relu(self.ff(torch.relu(self.head(x)))))


class PrioritizedReplay:
    def __init__(self, capacity, batch_size, alpha=0.6, beta_start=0.4, beta_frames=1000):
        self.capacity, self.batch_size = capacity, batch_size
        self.alpha, self.beta_start, self.beta_frames = alpha, beta_start, beta_frames
        self.frame = 1
        self.buffer, self.priorities = [], []
        self.pos = 0

    def beta_by_frame(self, frame_idx):
        return min(1.0, self.beta_start + frame_idx * (1.0 - self.beta_start) / self.beta_frames)

    def add(self, state, action, reward, next_state, done):
        max_prio = max(self.priorities) if self.buffer else 1.0
        item = (state, action, reward, next_state, done)
        if len(self.buffer) < self.capacity:
            self.buffer.append(item)
            self.priorities.append(max_prio)
        else:
            self.buffer[self.pos] = item
            self.priorities[self.pos] = max_prio
        self.pos = (self.pos + 1) % self.capacity

    def sample(self):
        prios = torch.tensor(self.priorities)
        probs = prios ** self.alpha
        probs = probs / probs.sum()
        indices = torch.multinomial(probs, self.batch_size, replacement=True)
        beta = self.beta_by_frame(self.frame)
        self.frame += 1
        weights = (len(self.buffer) * probs[indices]) ** (-beta)
        weights = weights / weights.max()
        batch = [self.buffer[i] for i in indices.tolist()]
        states, actions, rewards, next_states, dones = zip(*batch)
        return (torch.stack(states), torch.tensor(actions), torch.tensor(rewards), torch.stack(next_states),
                torch.tensor(dones, dtype=torch.float32), indices, weights)

    def update_priorities(self, batch_indices, batch_priorities):
        for idx, prio in zip(batch_indices.tolist(), batch_priorities.flatten().tolist()):
            self.priorities[idx] = abs(prio) + 1e-5

    def __len__(self):
        return len(self.buffer)


class DQN_Agent:
    def __init__(self, state_size, action_size, layer_size=32, BATCH_SIZE=8, BUFFER_SIZE=200, LR=1e-3,
                 TAU=1e-2, GAMMA=0.99, UPDATE_EVERY=2):
        self.action_size = action_size
        self.TAU, self.GAMMA, self.UPDATE_EVERY, self.BATCH_SIZE = TAU, GAMMA, UPDATE_EVERY, BATCH_SIZE
        self.qnetwork_local = DDQN(state_size, action_size, layer_size)
        self.qnetwork_target = DDQN(state_size, action_size, layer_size)
        self.optimizer = optim.RMSprop(self.qnetwork_local.parameters(), lr=LR, alpha=0.95, eps=0.01)
        self.memory = PrioritizedReplay(BUFFER_SIZE, BATCH_SIZE)
        self.t_step = 0
        self.Q_updates = 0

    def step(self, state, action, reward, next_state, done):
        self.memory.add(state, action, reward, next_state, done)
        self.t_step = (self.t_step + 1) % self.UPDATE_EVERY
        if self.t_step == 0 and len(self.memory) > self.BATCH_SIZE:
            loss = self.learn_per(self.memory.sample())
            self.Q_updates += 1
            return loss
        return None

    def act(self, state, eps=0.1):
        with torch.no_grad():
            action_values = self.qnetwork_local(state.unsqueeze(0))
        if random.random() > eps:
            return int(action_values.argmax())
        return random.randrange(self.action_size)

    def learn_per(self, experiences):
        self.optimizer.zero_grad()
        states, actions, rewards, next_states, dones, idx, weights = experiences
        actions = actions.unsqueeze(1)
        rewards = rewards.unsqueeze(1)
        dones = dones.unsqueeze(1)
        weights = weights.unsqueeze(1)
        Q_targets_next = self.qnetwork_target(next_states).detach().max(1)[0].unsqueeze(1)
        Q_targets = rewards + (self.GAMMA * Q_targets_next * (1 - dones))
        Q_expected = self.qnetwork_local(states).gather(1, actions)
        td_error = Q_targets - Q_expected
        loss = td_error.pow(2) * weights.mean()
        loss.backward()  # expect: AG005
        clip_grad_norm_(self.qnetwork_local.parameters(), 1)
        self.optimizer.step()
        self.soft_update(self.qnetwork_local, self.qnetwork_target)
        self.memory.update_priorities(idx, td_error.detach())
        return loss.item()

    def soft_update(self, local_model, target_model):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(self.TAU * local_param.data + (1.0 - self.TAU) * target_param.data)


class ToyEnv:
    """A 4-dimensional random walk with two actions; reward for keeping the first coordinate near zero."""

    def reset(self):
        self.state = torch.randn(4) * 0.1
        self.t = 0
        return self.state

    def step(self, action):
        self.state = self.state + 0.1 * torch.randn(4) + (0.05 if action == 1 else -0.05)
        self.t += 1
        reward = float(1.0 - self.state[0].abs())
        return self.state, reward, self.t >= 20


def run(frames=60):
    env, agent = ToyEnv(), DQN_Agent(state_size=4, action_size=2)
    state, score = env.reset(), 0.0
    for frame in range(1, frames + 1):
        action = agent.act(state)
        next_state, reward, done = env.step(action)
        loss = agent.step(state, action, reward, next_state, done)
        state, score = next_state, score + reward
        if done:
            print(f"frame {frame} | score {score:.2f} | last loss {loss}")
            state, score = env.reset(), 0.0


run()
