import torch


class BaseRunner(object):
    def __init__(self, config, logger):
        self.config = config
        self.logger = logger
        self.loss = {}
        self.models = None
        self.optimizers = None

    def build_models(self):
        self.models = self.config["model_fn"]()
        self.optimizers = torch.optim.Adam(self.models.parameters(), lr=1e-3)

    def train(self, loader, epochs=1):
        self.build_models()
        self.build_train_loss()
        for epoch in range(epochs):
            for idx, data in enumerate(loader):
                self.train_step((idx, (None, None, None, data)))
