# source: https://github.com/zoogzog/chexnet/issues/12
# symptom: validation losstensorMean keeps the graph of every batch: True
"""zoogzog/chexnet ChexnetTrainer.epochVal: the validation loop wraps its inputs in
Variable(..., volatile=True), which no longer does anything, and sums `losstensorMean += losstensor`, so
the mean handed to the ReduceLROnPlateau scheduler keeps the graph of every validation batch (the reporter
ran out of GPU memory at the end of the first epoch).

Written for bench/holdout8 with the structure of the repository's ChexnetTrainer.py (static train /
epochTrain / epochVal, BCELoss over 14 sigmoid outputs, ReduceLROnPlateau on the validation loss); the
DenseNet121 is a small conv net and the X-ray images are random 32x32 tensors.
"""
import warnings

import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable
from torch.optim.lr_scheduler import ReduceLROnPlateau

warnings.filterwarnings("ignore", message=".*volatile.*")


class DenseNet121(nn.Module):
    def __init__(self, classCount, isTrained=False):
        super().__init__()
        self.densenet121 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                         nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(),
                                         nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Sequential(nn.Linear(16, classCount), nn.Sigmoid())

    def forward(self, x):
        return self.classifier(self.densenet121(x))


def make_loader(n_batches, batch_size, classCount):
    return [(torch.rand(batch_size, 3, 32, 32), (torch.rand(batch_size, classCount) > 0.8).float())
            for _ in range(n_batches)]


class ChexnetTrainer:

    @staticmethod
    def train(nnClassCount, trBatchSize, trMaxEpoch):
        model = DenseNet121(nnClassCount, True)
        dataLoaderTrain = make_loader(4, trBatchSize, nnClassCount)
        dataLoaderVal = make_loader(3, trBatchSize, nnClassCount)
        optimizer = optim.Adam(model.parameters(), lr=0.0001, betas=(0.9, 0.999), eps=1e-08, weight_decay=1e-5)
        scheduler = ReduceLROnPlateau(optimizer, factor=0.1, patience=5, mode="min")
        loss = torch.nn.BCELoss(reduction="mean")

        lossMIN = 100000
        for epochID in range(0, trMaxEpoch):
            ChexnetTrainer.epochTrain(model, dataLoaderTrain, optimizer, scheduler, trMaxEpoch, nnClassCount, loss)
            lossVal, losstensor = ChexnetTrainer.epochVal(model, dataLoaderVal, optimizer, scheduler, trMaxEpoch,
                                                          nnClassCount, loss)
            scheduler.step(float(losstensor))
            if lossVal < lossMIN:
                lossMIN = lossVal
                print("Epoch [" + str(epochID + 1) + "] [save] loss= " + str(lossVal))
            else:
                print("Epoch [" + str(epochID + 1) + "] [----] loss= " + str(lossVal))
        print("validation losstensorMean keeps the graph of every batch:",
              isinstance(losstensor, torch.Tensor) and losstensor.grad_fn is not None)

    @staticmethod
    def epochTrain(model, dataLoader, optimizer, scheduler, epochMax, classCount, loss):
        model.train()
        for batchID, (input, target) in enumerate(dataLoader):
            varInput = Variable(input)
            varTarget = Variable(target)
            varOutput = model(varInput)
            lossvalue = loss(varOutput, varTarget)
            optimizer.zero_grad()
            lossvalue.backward()
            optimizer.step()

    @staticmethod
    def epochVal(model, dataLoader, optimizer, scheduler, epochMax, classCount, loss):
        model.eval()
        lossVal = 0
        lossValNorm = 0
        losstensorMean = 0
        for i, (input, target) in enumerate(dataLoader):
            varInput = Variable(input, volatile=True)
            varTarget = Variable(target, volatile=True)
            varOutput = model(varInput)
            losstensor = loss(varOutput, varTarget)
            losstensorMean += losstensor  # expect: AG015
            lossVal += losstensor.item()
            lossValNorm += 1
        outLoss = lossVal / lossValNorm
        losstensorMean = losstensorMean / lossValNorm
        return outLoss, losstensorMean


def main():
    torch.manual_seed(0)
    ChexnetTrainer.train(nnClassCount=14, trBatchSize=4, trMaxEpoch=2)


if __name__ == "__main__":
    main()
