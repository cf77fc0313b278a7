# source: https://github.com/Ugenteraan/Deep_Hierarchical_Classification/issues/6
# symptom: beta changes the gradients: False
# model/hierarchical_loss.py's calculate_dloss compares torch.argmax predictions of consecutive levels and builds
# the dependency penalty from torch.where over them: nothing of it is differentiable, so total_loss = lloss + dloss
# trains exactly as lloss alone ("the way the parameters updated are the same without any value of beta").
import torch
import torch.nn as nn

torch.manual_seed(0)


class HierarchicalLossNetwork:
    def __init__(self, hierarchical_labels, total_level=2, alpha=1, beta=0.8, p_loss=3):
        self.total_level = total_level
        self.alpha = alpha
        self.beta = beta
        self.p_loss = p_loss
        self.hierarchical_labels = hierarchical_labels

    def check_hierarchy(self, current_level, previous_level):
        bool_tensor = [not current_level[i].item() in self.hierarchical_labels[previous_level[i].item()]
                       for i in range(previous_level.size()[0])]
        return torch.FloatTensor(bool_tensor)

    def calculate_lloss(self, predictions, true_labels):
        lloss = 0
        for l in range(self.total_level):
            lloss += nn.CrossEntropyLoss()(predictions[l], true_labels[l])
        return self.alpha * lloss

    def calculate_dloss(self, predictions, true_labels):
        dloss = 0
        for l in range(1, self.total_level):
            current_lvl_pred = torch.argmax(nn.Softmax(dim=1)(predictions[l]), dim=1)
            prev_lvl_pred = torch.argmax(nn.Softmax(dim=1)(predictions[l - 1]), dim=1)
            D_l = self.check_hierarchy(current_lvl_pred, prev_lvl_pred)
            l_prev = torch.where(prev_lvl_pred == true_labels[l - 1], torch.FloatTensor([0]), torch.FloatTensor([1]))
            l_curr = torch.where(current_lvl_pred == true_labels[l], torch.FloatTensor([0]), torch.FloatTensor([1]))
            dloss += torch.sum(torch.pow(self.p_loss, D_l * l_prev) * torch.pow(self.p_loss, D_l * l_curr) - 1)
        return self.beta * dloss


class HierarchicalNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.superclass = nn.Linear(8, 2)
        self.subclass = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.superclass(h), self.subclass(h)


def gradients_with(beta):
    model = HierarchicalNet()
    model.load_state_dict(start)
    hloss = HierarchicalLossNetwork({0: [0, 1], 1: [2, 3]}, beta=beta)
    superclass_pred, subclass_pred = model(x)
    prediction = [superclass_pred, subclass_pred]
    dloss = hloss.calculate_dloss(prediction, [y_super, y_sub])
    lloss = hloss.calculate_lloss(prediction, [y_super, y_sub])
    total_loss = lloss + dloss
    total_loss.backward()  # expect: AG010
    return model.body.weight.grad.clone(), dloss.item()


start = HierarchicalNet().state_dict()
x, y_super, y_sub = torch.randn(8, 6), torch.randint(0, 2, (8,)), torch.randint(0, 4, (8,))
g0, d0 = gradients_with(0.0)
g1, d1 = gradients_with(10.0)
print(f"dloss at beta=10: {d1:.2f}")
print("beta changes the gradients:", not torch.equal(g0, g1))
