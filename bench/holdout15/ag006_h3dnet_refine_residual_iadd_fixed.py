# source: https://github.com/zaiweizhang/H3DNet/issues/29
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""H3DNet `models/proposal_module_refine.py`, the refinement head's forward: the fused surface/line features go
through `net = F.relu(self.bn_refine1(self.conv_refine1(combine_feature)))` and then `net += original_feature`
adds the first-stage proposal features in place into the ReLU output that autograd saved, so training fails
in backward on recent PyTorch. Written for this set with the module's structure (surface and line feature
convs, the view/cat pooling over 6 surface and 12 line primitives per proposal, the residual refine convs and
`decode_scores`), a stand-in first-stage proposal net and a small objectness + center loss; random points.

Fixed twin: `net = net + original_feature`, the change the issue proposes and the maintainer made ("fixed")."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def decode_scores(net, end_points, mode=""):
    net_transposed = net.transpose(2, 1)  # (batch_size, num_proposal, ..)
    end_points["objectness_scores" + mode] = net_transposed[:, :, 0:2]
    end_points["center" + mode] = net_transposed[:, :, 2:5]
    return end_points


class ProposalModuleRefine(nn.Module):
    def __init__(self, seed_feat_dim=16, num_out=5):
        super().__init__()
        self.conv_surface1 = nn.Conv1d(seed_feat_dim, 8, 1)
        self.conv_surface2 = nn.Conv1d(8, 8, 1)
        self.bn_surface1 = nn.BatchNorm1d(8)
        self.bn_surface2 = nn.BatchNorm1d(8)
        self.conv_line1 = nn.Conv1d(seed_feat_dim, 8, 1)
        self.conv_line2 = nn.Conv1d(8, 8, 1)
        self.bn_line1 = nn.BatchNorm1d(8)
        self.bn_line2 = nn.BatchNorm1d(8)
        self.conv_refine1 = nn.Conv1d(8 * 18, 32, 1)
        self.conv_refine2 = nn.Conv1d(32, 32, 1)
        self.conv_refine3 = nn.Conv1d(32, 32, 1)
        self.conv_refine4 = nn.Conv1d(32, num_out, 1)
        self.bn_refine1 = nn.BatchNorm1d(32)
        self.bn_refine2 = nn.BatchNorm1d(32)
        self.bn_refine3 = nn.BatchNorm1d(32)

    def forward(self, surface_features, line_features, original_feature, end_points):
        batch_size = original_feature.shape[0]
        object_proposal = original_feature.shape[2]

        surface_features = F.relu(self.bn_surface1(self.conv_surface1(surface_features)))
        surface_features = F.relu(self.bn_surface2(self.conv_surface2(surface_features)))
        line_features = F.relu(self.bn_line1(self.conv_line1(line_features)))
        line_features = F.relu(self.bn_line2(self.conv_line2(line_features)))

        surface_features = surface_features.view(batch_size, -1, 6, object_proposal).contiguous()
        line_features = line_features.view(batch_size, -1, 12, object_proposal).contiguous()

        # Combine all surface and line features
        surface_pool_feature = surface_features.view(batch_size, -1, object_proposal).contiguous()
        line_pool_feature = line_features.view(batch_size, -1, object_proposal).contiguous()
        combine_feature = torch.cat((surface_pool_feature, line_pool_feature), dim=1)

        net = F.relu(self.bn_refine1(self.conv_refine1(combine_feature)))
        net = net + original_feature
        net = F.relu(self.bn_refine2(self.conv_refine2(net)))
        net = F.relu(self.bn_refine3(self.conv_refine3(net)))
        net = self.conv_refine4(net)

        return decode_scores(net, end_points, mode="opt")


class FirstStage(nn.Module):
    """Stand-in for the VoteNet-style proposal module: per-proposal features and primitive features."""

    def __init__(self, feat_dim=16, num_proposal=8):
        super().__init__()
        self.num_proposal = num_proposal
        self.point_mlp = nn.Sequential(nn.Conv1d(3, feat_dim, 1), nn.ReLU(), nn.Conv1d(feat_dim, feat_dim, 1))
        self.proposal_feat = nn.Conv1d(feat_dim, 32, 1)

    def forward(self, points):
        feats = self.point_mlp(points.transpose(1, 2))                    # (B, F, N)
        prop = feats[:, :, : self.num_proposal]                           # (B, F, P)
        surface = feats[:, :, : 6 * self.num_proposal]                    # (B, F, 6P)
        line = feats[:, :, : 12 * self.num_proposal]                      # (B, F, 12P)
        return surface, line, self.proposal_feat(prop)


def main():
    torch.manual_seed(0)
    first, refine = FirstStage(), ProposalModuleRefine()
    params = list(first.parameters()) + list(refine.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-3)
    for it in range(2):
        points = torch.randn(2, 128, 3)
        objectness_label = torch.randint(0, 2, (2, 8))
        center_label = torch.randn(2, 8, 3)
        surface, line, original_feature = first(points)
        end_points = refine(surface, line, original_feature, {})
        obj_loss = F.cross_entropy(end_points["objectness_scoresopt"].transpose(2, 1), objectness_label)
        center_loss = F.smooth_l1_loss(end_points["centeropt"], center_label)
        loss = obj_loss + center_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("iter", it, "loss", round(loss.item(), 4))


if __name__ == "__main__":
    main()
