# source: https://github.com/batra-mlp-lab/lang-emerge/issues/1
# symptom: torch\.range is deprecated
"""Fixed twin: as the repository's later update (commit 308d1fa, "Updates to PyTorch 1.4 and Python 3.6") rewrote
`dataloader.py`: the index vectors are `torch.arange(0, n).long()`, the same values without the deprecated call.
"""
import itertools
import random
from functools import reduce

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


class Dataloader:
    # initialize
    def __init__(self, params):
        # absorb all values from params
        for field, value in params.items():
            setattr(self, field, value)
        self.createDataset()

        numVals = {attr: len(vals) for attr, vals in self.props.items()}
        self.numTasks = len(self.taskDefn)
        self.numAttrs = len(self.attributes)
        self.taskSelect = torch.LongTensor(self.taskDefn)

        # number of single and pair wise tasks
        self.numPairTasks = 6
        self.numSingleTasks = 3

        # create a vocab map for field values
        attrVals = reduce(lambda x, y: x + y, [self.props[ii] for ii in self.attributes])
        self.attrVocab = {value: ii for ii, value in enumerate(attrVals)}
        self.invAttrVocab = {index: attr for attr, index in self.attrVocab.items()}

        # Separate data loading for test/train
        self.data = {}
        for dtype in ['train', 'test']:
            data = torch.LongTensor(self.numInst[dtype], self.numAttrs)
            for ii, attrSet in enumerate(self.split[dtype]):
                data[ii] = torch.LongTensor([self.attrVocab[at] for at in attrSet])
            self.data[dtype] = data

        self.rangeInds = torch.arange(0, self.numInst['train']).long()

    # create the dataset (the repository saves it to json and loads it back)
    def createDataset(self, trainSize=0.8):
        self.attributes = ['colors', 'shapes', 'styles']
        self.props = {'colors': ['red', 'green', 'blue', 'purple'],
                      'shapes': ['square', 'triangle', 'circle', 'star'],
                      'styles': ['dotted', 'solid', 'filled', 'dashed']}
        attrList = [self.props[ii] for ii in self.attributes]
        dataVerbose = list(itertools.product(*attrList))

        numImgs = len(dataVerbose)
        self.numInst = {'train': int(trainSize * numImgs)}
        self.numInst['test'] = numImgs - self.numInst['train']

        self.split = {'test': random.sample(dataVerbose, self.numInst['test'])}
        self.split['train'] = sorted(set(dataVerbose) - set(self.split['test']))

        # six tasks, including the order
        self.taskDefn = [[0, 1], [1, 0], [0, 2], [2, 0], [1, 2], [2, 1], [0, 0], [1, 1], [2, 2]]

    # get a batch
    def getBatch(self, batchSize):
        # sample tasks
        tasks = torch.LongTensor(batchSize).random_(0, self.numPairTasks - 1)
        # sample a batch
        indices = torch.LongTensor(batchSize).random_(0, self.numInst['train'] - 1)
        batch = self.data['train'][indices]

        # now sample predictions based on task
        selectInds = self.taskSelect[tasks]
        labels = batch.gather(1, selectInds)
        return batch, tasks, labels

    # get a batch, mostly from the misclassified training images
    def getBatchSpecial(self, batchSize, currentPred, negFraction=0.8):
        tasks = torch.LongTensor(batchSize).random_(0, self.numPairTasks - 1)
        indices = torch.LongTensor(batchSize).random_(0, self.numInst['train'] - 1)
        # fill the first part based on previously misclassified examples
        negInds = currentPred.view(-1, self.numPairTasks).sum(1) < self.numPairTasks
        negInds = self.rangeInds.masked_select(negInds)
        negBatchSize = int(batchSize * negFraction)
        negSamples = torch.LongTensor(negBatchSize).fill_(0)
        if negInds.size(0) > 1:
            negSamples.random_(0, negInds.size(0) - 1)
        if negInds.size(0) > 0:
            indices[:negBatchSize] = negInds[negSamples]
        batch = self.data['train'][indices]

        selectInds = self.taskSelect[tasks]
        labels = batch.gather(1, selectInds)
        return batch, tasks, labels

    # Get all configurations
    def getCompleteData(self, dtype):
        # expand self.data six folds, along with labels
        batch = self.data[dtype].unsqueeze(0).repeat(1, 1, self.numPairTasks)
        batch = batch.view(-1, self.numAttrs)
        tasks = torch.arange(0, self.numPairTasks).long()
        tasks = tasks.unsqueeze(0).repeat(1, self.numInst[dtype]).view(-1)

        selectInds = self.taskSelect[tasks]
        labels = batch.gather(1, selectInds)
        return batch, tasks, labels


class Team(nn.Module):
    """Supervised stand-in for the questioner/answerer pair: image + task -> the two asked attributes."""

    def __init__(self, numAttrVals, numTasks, hiddenSize=32):
        super().__init__()
        self.imgNet = nn.Embedding(numAttrVals, hiddenSize)
        self.taskNet = nn.Embedding(numTasks, hiddenSize)
        self.predictNet = nn.Sequential(nn.ReLU(), nn.Linear(hiddenSize, 2 * numAttrVals))
        self.numAttrVals = numAttrVals

    def forward(self, batch, tasks):
        h = self.imgNet(batch).sum(1) + self.taskNet(tasks)
        return self.predictNet(h).view(-1, 2, self.numAttrVals)


if __name__ == "__main__":
    data = Dataloader({'batchSize': 100, 'negFraction': 0.8})
    team = Team(numAttrVals=12, numTasks=data.numTasks)
    optimizer = torch.optim.Adam(team.parameters(), lr=0.01)

    matches = {}
    accuracy = {}
    for iterId in range(40):
        if 'train' not in matches:
            batchImg, batchTask, batchLabels = data.getBatch(data.batchSize)
        else:
            batchImg, batchTask, batchLabels = data.getBatchSpecial(data.batchSize, matches['train'],
                                                                    data.negFraction)
        logits = team(batchImg, batchTask)
        loss = F.cross_entropy(logits.reshape(-1, 12), batchLabels.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        with torch.no_grad():
            for dtype in ['train', 'test']:
                img, task, labels = data.getCompleteData(dtype)
                guess = team(img, task).argmax(2)
                firstMatch = guess[:, 0] == labels[:, 0]
                secondMatch = guess[:, 1] == labels[:, 1]
                matches[dtype] = firstMatch & secondMatch
                accuracy[dtype] = 100 * matches[dtype].float().mean().item()
        if iterId % 10 == 0:
            print('[Iter: %d][Tr: %.2f Te: %.2f]' % (iterId, accuracy['train'], accuracy['test']))
