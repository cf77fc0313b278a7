# source: https://github.com/wz0919/waypoint-predictor/issues/4
# symptom: gradients accumulated across steps: True
"""waypoint-predictor `predict_waypoints(args)`: frozen RGB and depth encoders feed the `BinaryDistPredictor_TRM`
through `TRM_predict`; every batch computes the MSE heatmap loss, `total_loss.backward()` and `optimizer.step()`,
and `optimizer.zero_grad()` is never called in the training loop."""
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device('cpu')


class Args:
    ANGLES = 12
    NUM_IMGS = 12
    NUM_CLASSES = 12
    EPOCH = 2
    BATCH_SIZE = 2
    LEARNING_RATE = 1e-4
    WEIGHT = 0
    HIDDEN_DIM = 32


class RGBEncoder(nn.Module):
    def __init__(self, trainable=False):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.requires_grad_(trainable)

    def forward(self, x):
        return self.net(x)


class DepthEncoder(nn.Module):
    def __init__(self, trainable=False):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 4, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.requires_grad_(trainable)

    def forward(self, x):
        return self.net(x)


class BinaryDistPredictor_TRM(nn.Module):
    def __init__(self, args, hidden_dim=32, n_classes=12):
        super().__init__()
        self.num_angles = args.ANGLES
        self.visual_fc_rgb = nn.Linear(8, hidden_dim)
        self.visual_fc_depth = nn.Linear(16, hidden_dim)
        self.visual_merge = nn.Linear(2 * hidden_dim, hidden_dim)
        layer = nn.TransformerEncoderLayer(hidden_dim, nhead=2, dim_feedforward=64, batch_first=True)
        self.waypoint_TRM = nn.TransformerEncoder(layer, num_layers=1)
        self.vis_classifier = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, n_classes))

    def forward(self, rgb_feats, depth_feats):
        bsi = rgb_feats.size(0) // self.num_angles
        rgb_x = self.visual_fc_rgb(rgb_feats).reshape(bsi, self.num_angles, -1)
        depth_x = self.visual_fc_depth(depth_feats.flatten(1)).reshape(bsi, self.num_angles, -1)
        vis_x = self.visual_merge(torch.cat((rgb_x, depth_x), dim=-1))
        return self.vis_classifier(self.waypoint_TRM(vis_x))


def TRM_predict(mode, args, predictor, rgb_feats, depth_feats):
    vis_logits = predictor(rgb_feats, depth_feats)
    if mode == 'train':
        return vis_logits
    return torch.sigmoid(vis_logits), vis_logits


def get_gt_nav_map(num_angles, batch_size, num_classes):
    target = (torch.rand(batch_size, num_angles, num_classes) > 0.8).float()
    weight = torch.ones_like(target)
    return target, weight


accumulated = False


def predict_waypoints(args, trainloader):
    global accumulated
    rgb_encoder = RGBEncoder(trainable=False).to(device)
    depth_encoder = DepthEncoder(trainable=False).to(device)
    predictor = BinaryDistPredictor_TRM(args=args, hidden_dim=args.HIDDEN_DIM, n_classes=args.NUM_CLASSES).to(device)

    criterion_mse = torch.nn.MSELoss(reduction='none')
    params = list(predictor.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.LEARNING_RATE)

    for epoch in range(args.EPOCH):
        sum_loss = 0.0
        rgb_encoder.eval()
        depth_encoder.eval()
        predictor.train()
        for i, data in enumerate(trainloader):
            rgb_imgs = data['rgb'].to(device)
            depth_imgs = data['depth'].to(device)
            rgb_feats = rgb_encoder(rgb_imgs)  # (BATCH_SIZE*ANGLES, 8)
            depth_feats = depth_encoder(depth_imgs)  # (BATCH_SIZE*ANGLES, 4, 2, 2)

            target, weight = get_gt_nav_map(args.ANGLES, args.BATCH_SIZE, args.NUM_CLASSES)
            vis_logits = TRM_predict('train', args, predictor, rgb_feats, depth_feats)
            loss_vis = criterion_mse(vis_logits, target)
            if args.WEIGHT:
                loss_vis = loss_vis * weight
            total_loss = loss_vis.sum() / vis_logits.size(0) / args.ANGLES

            if any(p.grad is not None and p.grad.abs().sum() > 0 for p in predictor.parameters()):
                accumulated = True
            total_loss.backward()
            optimizer.step()  # expect: AG016
            sum_loss += total_loss.item()
        print('Epoch %d | Train Loss: %.5f' % (epoch + 1, sum_loss / (i + 1)))


args = Args()
n = args.BATCH_SIZE * args.ANGLES
loader = [{'rgb': torch.rand(n, 3, 16, 16), 'depth': torch.rand(n, 1, 16, 16)} for _ in range(3)]
predict_waypoints(args, loader)
print(f"gradients accumulated across steps: {accumulated}")
