# source: https://github.com/kashif/firedup/issues/11
# symptom: modified by an inplace operation
"""firedup (Spinning Up in PyTorch) `fireup/algos/ddpg/ddpg.py`: at the end of each trajectory, for every update
`_, q, q_pi = main(obs1, acts)` computes both Q values in one forward of the actor-critic, the DDPG losses
`pi_loss = -q_pi.mean()` and `q_loss = F.mse_loss(q, backup)` are built, the Q network is stepped, and only then
`pi_loss.backward()` runs, through the Q network whose weights `q_optimizer.step()` has just changed in place
("ddpg torch error" on torch 1.6). The same loop also hands the loss tensors themselves to `logger.store`, which
appends them to per-epoch lists. A small deterministic point-mass environment stands in for gym.

Fixed as the maintainer's commit b658ae5 ("fix loss update order") does: the Q loss is built from its own forward
`_, q, _ = main(obs1, acts)`, the Q network is stepped, and only then the policy loss is built from a fresh forward
`_, _, q_pi = main(obs1, acts)`; the logger receives `q_loss.item()` and `pi_loss.item()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def count_vars(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


class MLP(nn.Module):
    def __init__(self, layers, activation=torch.tanh, output_activation=None, output_scale=1, output_squeeze=False):
        super(MLP, self).__init__()
        self.layers = nn.ModuleList()
        self.activation = activation
        self.output_activation = output_activation
        self.output_scale = output_scale
        self.output_squeeze = output_squeeze
        for i, layer in enumerate(layers[1:]):
            self.layers.append(nn.Linear(layers[i], layer))
            nn.init.zeros_(self.layers[i].bias)

    def forward(self, inputs):
        x = inputs
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        if self.output_activation is None:
            x = self.layers[-1](x) * self.output_scale
        else:
            x = self.output_activation(self.layers[-1](x)) * self.output_scale
        return x.squeeze() if self.output_squeeze else x


class ActorCritic(nn.Module):
    def __init__(self, in_features, action_dim, action_scale, hidden_sizes=(32, 32), activation=torch.relu,
                 output_activation=torch.tanh):
        super(ActorCritic, self).__init__()
        self.policy = MLP(layers=[in_features] + list(hidden_sizes) + [action_dim], activation=activation,
                          output_activation=output_activation, output_scale=action_scale)
        self.q = MLP(layers=[in_features + action_dim] + list(hidden_sizes) + [1], activation=activation,
                     output_squeeze=True)

    def forward(self, x, a):
        pi = self.policy(x)
        q = self.q(torch.cat((x, a), dim=1))
        q_pi = self.q(torch.cat((x, pi), dim=1))
        return pi, q, q_pi


class ReplayBuffer:
    def __init__(self, obs_dim, act_dim, size):
        self.obs1_buf = torch.zeros(size, obs_dim)
        self.obs2_buf = torch.zeros(size, obs_dim)
        self.acts_buf = torch.zeros(size, act_dim)
        self.rews_buf = torch.zeros(size)
        self.done_buf = torch.zeros(size)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done):
        self.obs1_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.acts_buf[self.ptr] = act
        self.rews_buf[self.ptr] = rew
        self.done_buf[self.ptr] = float(done)
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_batch(self, batch_size=32):
        idxs = torch.randint(0, self.size, (batch_size,))
        return dict(obs1=self.obs1_buf[idxs], obs2=self.obs2_buf[idxs], acts=self.acts_buf[idxs],
                    rews=self.rews_buf[idxs], done=self.done_buf[idxs])


class EpochLogger:
    def __init__(self):
        self.epoch_dict = dict()

    def store(self, **kwargs):
        for k, v in kwargs.items():
            if not (k in self.epoch_dict.keys()):
                self.epoch_dict[k] = []
            self.epoch_dict[k].append(v)


class PointEnv:
    """move a point towards the origin; observation (x, y, t), action a 1-d push"""

    def reset(self):
        self.state = torch.tensor([1.0, -0.5])
        self.t = 0
        return torch.cat([self.state, torch.tensor([0.0])])

    def step(self, a):
        self.state = self.state + 0.1 * torch.cat([a, -a])
        self.t += 1
        r = -float(self.state.pow(2).sum())
        return torch.cat([self.state, torch.tensor([self.t / 10.0])]), r, self.t >= 10, {}


def ddpg(seed=0, epochs=2, steps_per_epoch=20, replay_size=1000, gamma=0.99, polyak=0.995, pi_lr=1e-3, q_lr=1e-3,
         batch_size=16, start_steps=10, act_noise=0.1, max_ep_len=10):
    torch.manual_seed(seed)
    env = PointEnv()
    obs_dim, act_dim, act_limit = 3, 1, 1.0
    logger = EpochLogger()

    main = ActorCritic(obs_dim, act_dim, act_limit)
    target = ActorCritic(obs_dim, act_dim, act_limit)
    target.eval()
    replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=replay_size)
    var_counts = tuple(count_vars(module) for module in [main.policy, main.q, main])
    print("\nNumber of parameters: \t pi: %d, \t q: %d, \t total: %d\n" % var_counts)

    pi_optimizer = torch.optim.Adam(main.policy.parameters(), lr=pi_lr)
    q_optimizer = torch.optim.Adam(main.q.parameters(), lr=q_lr)
    target.load_state_dict(main.state_dict())

    def get_action(o, noise_scale):
        with torch.no_grad():
            pi = main.policy(o.reshape(1, -1))
        a = pi[0] + noise_scale * torch.randn(act_dim)
        return a.clamp(-act_limit, act_limit)

    o, r, d, ep_ret, ep_len = env.reset(), 0, False, 0, 0
    total_steps = steps_per_epoch * epochs
    for t in range(total_steps):
        main.eval()
        if t > start_steps:
            a = get_action(o, act_noise)
        else:
            a = torch.rand(act_dim) * 2 - 1
        o2, r, d, _ = env.step(a)
        ep_ret += r
        ep_len += 1
        d = False if ep_len == max_ep_len else d
        replay_buffer.store(o, a, r, o2, d)
        o = o2

        if d or (ep_len == max_ep_len):
            main.train()
            for _ in range(ep_len):
                batch = replay_buffer.sample_batch(batch_size)
                (obs1, obs2, acts, rews, done) = (batch["obs1"], batch["obs2"], batch["acts"], batch["rews"],
                                                  batch["done"])
                _, _, q_pi_targ = target(obs2, acts)

                # Bellman backup for Q function
                backup = (rews + gamma * (1 - done) * q_pi_targ).detach()

                # DDPG Q loss
                _, q, _ = main(obs1, acts)
                q_loss = F.mse_loss(q, backup)

                # Q-learning update
                q_optimizer.zero_grad()
                q_loss.backward()
                q_optimizer.step()
                logger.store(LossQ=q_loss.item(), QVals=q.detach())

                # DDPG Policy loss
                _, _, q_pi = main(obs1, acts)
                pi_loss = -q_pi.mean()

                # Policy update
                pi_optimizer.zero_grad()
                pi_loss.backward()
                pi_optimizer.step()
                logger.store(LossPi=pi_loss.item())

                # Polyak averaging for target parameters
                with torch.no_grad():
                    for p_main, p_target in zip(main.parameters(), target.parameters()):
                        p_target.mul_(polyak).add_((1 - polyak) * p_main)

            logger.store(EpRet=ep_ret, EpLen=ep_len)
            print("episode return {:.3f}".format(ep_ret))
            o, r, d, ep_ret, ep_len = env.reset(), 0, False, 0, 0


ddpg()
