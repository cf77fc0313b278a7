# source: https://github.com/watchernyu/REDQ/pull/2
# symptom: modified by an inplace operation
"""REDQ `redq/algos/redq_sac.py` `REDQSACAgent.train`: each of the `utd_ratio` updates builds the ensemble Q loss
`q_loss_all` and, every `policy_update_delay` updates, the policy loss through the same Q ensemble
(`q_a_tilda = self.q_net_list[i](torch.cat([obs_tensor, a_tilda], 1))`) and the alpha loss (stepped at once). Then
the "update networks" block zeroes, backpropagates and steps every Q network, and only afterwards calls
`policy_loss.backward()`, through Q networks whose weights were just changed in place: the error the pull request
reports with torch 1.8.1. (The pull request blames the alpha update; the policy loss uses alpha only as a float, so
the in-place change its backward trips over is the Q step.)"""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch import Tensor
from torch.distributions import Normal

LOG_SIG_MAX, LOG_SIG_MIN = 2, -20


def get_probabilistic_num_min(num_mins):
    floored_num_mins = math.floor(num_mins)
    if num_mins - floored_num_mins > 0.001:
        prob_for_higher_value = num_mins - floored_num_mins
        if random.uniform(0, 1) < prob_for_higher_value:
            return int(floored_num_mins + 1)
        return int(floored_num_mins)
    return num_mins


class Mlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_sizes):
        super().__init__()
        self.hidden_layers = nn.ModuleList()
        in_size = input_size
        for next_size in hidden_sizes:
            self.hidden_layers.append(nn.Linear(in_size, next_size))
            in_size = next_size
        self.last_fc_layer = nn.Linear(in_size, output_size)

    def forward(self, h):
        for fc_layer in self.hidden_layers:
            h = F.relu(fc_layer(h))
        return self.last_fc_layer(h)


class TanhGaussianPolicy(Mlp):
    def __init__(self, obs_dim, action_dim, hidden_sizes, action_limit=1.0):
        super().__init__(obs_dim, action_dim, hidden_sizes)
        self.last_fc_log_std = nn.Linear(hidden_sizes[-1], action_dim)
        self.action_limit = action_limit

    def forward(self, obs, deterministic=False, return_log_prob=True):
        h = obs
        for fc_layer in self.hidden_layers:
            h = F.relu(fc_layer(h))
        mean = self.last_fc_layer(h)
        log_std = torch.clamp(self.last_fc_log_std(h), LOG_SIG_MIN, LOG_SIG_MAX)
        std = torch.exp(log_std)
        normal = Normal(mean, std)
        pre_tanh_value = mean if deterministic else normal.rsample()
        action = torch.tanh(pre_tanh_value)
        log_prob = None
        if return_log_prob:
            log_prob = normal.log_prob(pre_tanh_value) - torch.log(1 - action.pow(2) + 1e-6)
            log_prob = log_prob.sum(1, keepdim=True)
        return action * self.action_limit, mean, log_std, log_prob, std, pre_tanh_value


def soft_update_model1_with_model2(model1, model2, rou):
    with torch.no_grad():
        for model1_param, model2_param in zip(model1.parameters(), model2.parameters()):
            model1_param.mul_(rou).add_((1 - rou) * model2_param)


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


class Logger:
    def __init__(self):
        self.epoch_dict = {}

    def store(self, **kwargs):
        for k, v in kwargs.items():
            self.epoch_dict.setdefault(k, []).append(v)


class REDQSACAgent(object):
    def __init__(self, obs_dim, act_dim, act_limit, hidden_sizes=(32, 32), replay_size=1000, batch_size=16,
                 lr=3e-4, gamma=0.99, polyak=0.995, alpha=0.2, auto_alpha=True, target_entropy='auto',
                 start_steps=20, utd_ratio=4, num_Q=4, num_min=2, policy_update_delay=2):
        self.policy_net = TanhGaussianPolicy(obs_dim, act_dim, hidden_sizes, action_limit=act_limit)
        self.q_net_list, self.q_target_net_list = [], []
        for q_i in range(num_Q):
            new_q_net = Mlp(obs_dim + act_dim, 1, hidden_sizes)
            self.q_net_list.append(new_q_net)
            new_q_target_net = Mlp(obs_dim + act_dim, 1, hidden_sizes)
            new_q_target_net.load_state_dict(new_q_net.state_dict())
            self.q_target_net_list.append(new_q_target_net)
        self.policy_optimizer = optim.Adam(self.policy_net.parameters(), lr=lr)
        self.q_optimizer_list = []
        for q_i in range(num_Q):
            self.q_optimizer_list.append(optim.Adam(self.q_net_list[q_i].parameters(), lr=lr))
        self.auto_alpha = auto_alpha
        if auto_alpha:
            self.target_entropy = -act_dim
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optim = optim.Adam([self.log_alpha], lr=lr)
            self.alpha = self.log_alpha.exp().item()
        else:
            self.alpha = alpha
            self.target_entropy, self.log_alpha, self.alpha_optim = None, None, None
        self.replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=replay_size)
        self.mse_criterion = nn.MSELoss()
        self.start_steps = start_steps
        self.gamma = gamma
        self.polyak = polyak
        self.batch_size = batch_size
        self.num_min = num_min
        self.num_Q = num_Q
        self.utd_ratio = utd_ratio
        self.delay_update_steps = self.start_steps
        self.policy_update_delay = policy_update_delay

    def get_exploration_action(self, obs):
        with torch.no_grad():
            if self.replay_buffer.size > self.start_steps:
                return self.policy_net.forward(obs.unsqueeze(0), deterministic=False, return_log_prob=False)[0][0]
            return torch.rand(1) * 2 - 1

    def store_data(self, o, a, r, o2, d):
        self.replay_buffer.store(o, a, r, o2, d)

    def sample_data(self, batch_size):
        batch = self.replay_buffer.sample_batch(batch_size)
        return (batch['obs1'], batch['obs2'], batch['acts'], batch['rews'].unsqueeze(1),
                batch['done'].unsqueeze(1))

    def get_redq_q_target_no_grad(self, obs_next_tensor, rews_tensor, done_tensor):
        num_mins_to_use = get_probabilistic_num_min(self.num_min)
        sample_idxs = torch.randperm(self.num_Q)[:num_mins_to_use].tolist()
        with torch.no_grad():
            a_tilda_next, _, _, log_prob_a_tilda_next, _, _ = self.policy_net.forward(obs_next_tensor)
            q_prediction_next_list = []
            for sample_idx in sample_idxs:
                q_prediction_next = self.q_target_net_list[sample_idx](torch.cat([obs_next_tensor, a_tilda_next], 1))
                q_prediction_next_list.append(q_prediction_next)
            q_prediction_next_cat = torch.cat(q_prediction_next_list, 1)
            min_q, min_indices = torch.min(q_prediction_next_cat, dim=1, keepdim=True)
            next_q_with_log_prob = min_q - self.alpha * log_prob_a_tilda_next
            y_q = rews_tensor + self.gamma * (1 - done_tensor) * next_q_with_log_prob
        return y_q, sample_idxs

    def train(self, logger):
        num_update = 0 if self.replay_buffer.size <= self.delay_update_steps else self.utd_ratio
        for i_update in range(num_update):
            obs_tensor, obs_next_tensor, acts_tensor, rews_tensor, done_tensor = self.sample_data(self.batch_size)

            """Q loss"""
            y_q, sample_idxs = self.get_redq_q_target_no_grad(obs_next_tensor, rews_tensor, done_tensor)
            q_prediction_list = []
            for q_i in range(self.num_Q):
                q_prediction = self.q_net_list[q_i](torch.cat([obs_tensor, acts_tensor], 1))
                q_prediction_list.append(q_prediction)
            q_prediction_cat = torch.cat(q_prediction_list, dim=1)
            y_q = y_q.expand((-1, self.num_Q)) if y_q.shape[1] == 1 else y_q
            q_loss_all = self.mse_criterion(q_prediction_cat, y_q) * self.num_Q

            """policy and alpha loss"""
            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == num_update - 1:
                a_tilda, mean_a_tilda, log_std_a_tilda, log_prob_a_tilda, _, pretanh = self.policy_net.forward(obs_tensor)
                q_a_tilda_list = []
                for sample_idx in range(self.num_Q):
                    q_a_tilda = self.q_net_list[sample_idx](torch.cat([obs_tensor, a_tilda], 1))
                    q_a_tilda_list.append(q_a_tilda)
                q_a_tilda_cat = torch.cat(q_a_tilda_list, 1)
                ave_q = torch.mean(q_a_tilda_cat, dim=1, keepdim=True)
                policy_loss = (self.alpha * log_prob_a_tilda - ave_q).mean()

                if self.auto_alpha:
                    alpha_loss = -(self.log_alpha * (log_prob_a_tilda + self.target_entropy).detach()).mean()
                    self.alpha_optim.zero_grad()
                    alpha_loss.backward()
                    self.alpha_optim.step()
                    self.alpha = self.log_alpha.exp().item()
                else:
                    alpha_loss = Tensor([0])

            """update networks"""
            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].zero_grad()
            q_loss_all.backward()
            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].step()

            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == num_update - 1:
                self.policy_optimizer.zero_grad()
                policy_loss.backward()  # expect: AG017
                self.policy_optimizer.step()

            for q_i in range(self.num_Q):
                soft_update_model1_with_model2(self.q_target_net_list[q_i], self.q_net_list[q_i], self.polyak)

            if i_update == num_update - 1:
                logger.store(LossPi=policy_loss.item(), LossQ1=q_loss_all.item() / self.num_Q,
                             LossAlpha=alpha_loss.item(), Alpha=self.alpha)

        if num_update == 0:
            logger.store(LossPi=0, LossQ1=0, LossAlpha=0, Alpha=0)


torch.manual_seed(0)
random.seed(0)
agent = REDQSACAgent(obs_dim=3, act_dim=1, act_limit=1.0)
logger = Logger()
state, t = torch.tensor([1.0, -0.5]), 0
o = torch.cat([state, torch.zeros(1)])
for step in range(40):
    a = agent.get_exploration_action(o)
    state = state + 0.1 * torch.cat([a, -a])
    t += 1
    r = -float(state.pow(2).sum())
    d = t >= 10
    o2 = torch.cat([state, torch.tensor([t / 10.0])])
    agent.store_data(o, a, r, o2, d)
    agent.train(logger)
    o = o2
    if d:
        state, t = torch.tensor([1.0, -0.5]), 0
        o = torch.cat([state, torch.zeros(1)])
print("last losses", {k: round(float(v[-1]), 4) for k, v in logger.epoch_dict.items()})
