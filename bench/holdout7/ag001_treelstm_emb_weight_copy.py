# source: https://github.com/dasguptar/treelstm.pytorch/pull/26
# symptom: a leaf Variable that requires grad (is being|has been) used in an in-place operation
"""treelstm.pytorch after the move to PyTorch 0.4 (`.data` removed everywhere): `SimilarityTreeLSTM.__init__` plugs the
GloVe vectors into the embedding with `self.emb.weight.copy_(init_emb)`; when the embedding is not frozen
(`--freeze_embed` off) its weight is a leaf that requires grad and the in-place copy raises."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
PAD = 0


class Tree(object):
    def __init__(self, idx):
        self.idx = idx
        self.children = []
        self.num_children = 0

    def add_child(self, child):
        self.children.append(child)
        self.num_children += 1


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super(ChildSumTreeLSTM, self).__init__()
        self.in_dim = in_dim
        self.mem_dim = mem_dim
        self.ioux = nn.Linear(self.in_dim, 3 * self.mem_dim)
        self.iouh = nn.Linear(self.mem_dim, 3 * self.mem_dim)
        self.fx = nn.Linear(self.in_dim, self.mem_dim)
        self.fh = nn.Linear(self.mem_dim, self.mem_dim)

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = torch.sum(child_h, dim=0, keepdim=True)
        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)
        f = torch.sigmoid(self.fh(child_h) + self.fx(inputs).repeat(len(child_h), 1))
        fc = torch.mul(f, child_c)
        c = torch.mul(i, u) + torch.sum(fc, dim=0, keepdim=True)
        h = torch.mul(o, torch.tanh(c))
        return c, h

    def forward(self, tree, inputs):
        for idx in range(tree.num_children):
            self.forward(tree.children[idx], inputs)
        if tree.num_children == 0:
            child_c = inputs[0].detach().new(1, self.mem_dim).fill_(0.)
            child_h = inputs[0].detach().new(1, self.mem_dim).fill_(0.)
        else:
            child_c, child_h = zip(*map(lambda x: x.state, tree.children))
            child_c, child_h = torch.cat(child_c, dim=0), torch.cat(child_h, dim=0)
        tree.state = self.node_forward(inputs[tree.idx].unsqueeze(0), child_c, child_h)
        return tree.state


class Similarity(nn.Module):
    def __init__(self, mem_dim, hidden_dim, num_classes):
        super(Similarity, self).__init__()
        self.wh = nn.Linear(2 * mem_dim, hidden_dim)
        self.wp = nn.Linear(hidden_dim, num_classes)

    def forward(self, lvec, rvec):
        mult_dist = torch.mul(lvec, rvec)
        abs_dist = torch.abs(torch.add(lvec, -rvec))
        vec_dist = torch.cat((mult_dist, abs_dist), 1)
        out = torch.sigmoid(self.wh(vec_dist))
        return F.log_softmax(self.wp(out), dim=1)


class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size, in_dim, mem_dim, hidden_dim, num_classes, sparsity, freeze, init_emb):
        super(SimilarityTreeLSTM, self).__init__()
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=PAD, sparse=sparsity)
        if freeze:
            self.emb.weight.requires_grad = False
        self.emb.weight.copy_(init_emb)  # expect: AG001
        self.childsumtreelstm = ChildSumTreeLSTM(in_dim, mem_dim)
        self.similarity = Similarity(mem_dim, hidden_dim, num_classes)

    def forward(self, ltree, linputs, rtree, rinputs):
        linputs = self.emb(linputs)
        rinputs = self.emb(rinputs)
        lstate, lhidden = self.childsumtreelstm(ltree, linputs)
        rstate, rhidden = self.childsumtreelstm(rtree, rinputs)
        return self.similarity(lstate, rstate)


def map_label_to_target(label, num_classes):
    target = torch.zeros(1, num_classes, dtype=torch.float)
    ceil = int(math.ceil(label))
    floor = int(math.floor(label))
    if ceil == floor:
        target[0, floor - 1] = 1
    else:
        target[0, floor - 1] = ceil - label
        target[0, ceil - 1] = label - floor
    return target


class Trainer(object):
    def __init__(self, args, model, criterion, optimizer):
        self.args, self.model, self.criterion, self.optimizer = args, model, criterion, optimizer
        self.epoch = 0

    def train(self, dataset):
        self.model.train()
        self.optimizer.zero_grad()
        total_loss = 0.0
        for idx, (ltree, linput, rtree, rinput, label) in enumerate(dataset):
            target = map_label_to_target(label, self.args.num_classes)
            output = self.model(ltree, linput, rtree, rinput)
            loss = self.criterion(output, target)
            total_loss += loss.item()
            loss.backward()
            if idx % self.args.batchsize == 0 and idx > 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
        self.epoch += 1
        return total_loss / len(dataset)


class Args:
    input_dim, mem_dim, hidden_dim, num_classes = 8, 12, 10, 5
    sparse, freeze_embed, batchsize, lr, wd = False, False, 2, 0.01, 1e-4


def random_tree(n):
    nodes = [Tree(i) for i in range(n)]
    for i in range(1, n):
        nodes[(i - 1) // 2].add_child(nodes[i])
    return nodes[0]


args = Args()
vocab_size = 20
emb = torch.randn(vocab_size, args.input_dim)  # stands in for the GloVe vectors loaded in main.py
emb[PAD].zero_()
model = SimilarityTreeLSTM(vocab_size, args.input_dim, args.mem_dim, args.hidden_dim, args.num_classes,
                           args.sparse, args.freeze_embed, emb)
criterion = nn.KLDivLoss(reduction='batchmean')
optimizer = torch.optim.Adagrad(filter(lambda p: p.requires_grad, model.parameters()), lr=args.lr, weight_decay=args.wd)
trainer = Trainer(args, model, criterion, optimizer)
dataset = [(random_tree(5), torch.randint(1, vocab_size, (5,)), random_tree(4), torch.randint(1, vocab_size, (4,)),
            1 + 4 * torch.rand(()).item()) for _ in range(4)]
for epoch in range(2):
    print(f"epoch {epoch} | train loss {trainer.train(dataset):.4f}")
