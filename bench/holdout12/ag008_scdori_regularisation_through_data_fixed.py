# source: https://github.com/bioFAM/scDORI/issues/19
# symptom: L1/L2 penalty reaches the decoder weights: False
"""scDORI `train_scdori_phases` (and `train_model_grn`): the sparsity penalties are computed as
`torch.norm(model.topic_tf_decoder.data, p=1)` and the like, so `loss_norm` is a constant to autograd
and even L1 = 10 leaves the decoder weights untouched. The program checks whether the penalty term
carries any gradient to the decoders.

Fixed as the issue proposes: the norms are taken of the parameters themselves, without `.data`."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ScDoRI(nn.Module):
    def __init__(self, num_genes=20, num_peaks=30, num_tfs=6, num_topics=4):
        super().__init__()
        self.num_genes = num_genes
        self.encoder = nn.Sequential(nn.Linear(num_genes + num_peaks, 32), nn.ReLU(), nn.Linear(32, num_topics))
        self.topic_peak_decoder = nn.Parameter(torch.rand(num_topics, num_peaks))
        self.topic_tf_decoder = nn.Parameter(torch.rand(num_topics, num_tfs))
        self.gene_peak_factor_learnt = nn.Parameter(torch.rand(num_genes, num_peaks) * 0.1)
        self.tf_alpha_nb = nn.Parameter(torch.ones(num_tfs))

    def forward(self, rna_input, atac_input):
        theta = F.softmax(self.encoder(torch.cat([rna_input, atac_input], dim=1)), dim=1)
        preds_atac = F.softmax(theta @ self.topic_peak_decoder, dim=1)
        mu_tf = F.softplus(theta @ self.topic_tf_decoder)
        mu_rna = F.softplus(preds_atac @ self.gene_peak_factor_learnt.t())
        return {"preds_atac": preds_atac, "mu_nb_tf": mu_tf, "mu_nb_rna": mu_rna}


def train_scdori_phases(model, train_loader, config_file, epochs=3):
    optimizer = torch.optim.Adam(model.parameters(), lr=config_file.learning_rate)
    penalty_has_grad = False
    for epoch in range(epochs):
        model.train()
        running_loss = 0.0
        for rna_input, atac_input, tf_input, log_lib_atac in train_loader:
            out = model(rna_input, atac_input)
            preds_poisson = out["preds_atac"] * torch.exp(log_lib_atac)
            loss_atac = nn.PoissonNLLLoss(log_input=False, reduction="sum")(preds_poisson, atac_input)
            loss_tf = F.mse_loss(out["mu_nb_tf"], tf_input, reduction="sum")
            loss_rna = F.mse_loss(out["mu_nb_rna"], rna_input, reduction="sum")

            # Regularization
            l1_norm_tf = torch.norm(model.topic_tf_decoder, p=1)
            l2_norm_tf = torch.norm(model.topic_tf_decoder, p=2)
            l1_norm_peak = torch.norm(model.topic_peak_decoder, p=1)
            l2_norm_peak = torch.norm(model.topic_peak_decoder, p=2)
            loss_norm = (config_file.l1_penalty_topic_tf * l1_norm_tf
                         + config_file.l2_penalty_topic_tf * l2_norm_tf
                         + config_file.l1_penalty_topic_peak * l1_norm_peak
                         + config_file.l2_penalty_topic_peak * l2_norm_peak)
            penalty_has_grad = penalty_has_grad or loss_norm.requires_grad

            total_loss = (config_file.weight_atac * loss_atac + config_file.weight_tf * loss_tf
                          + config_file.weight_rna * loss_rna + loss_norm)
            optimizer.zero_grad()
            total_loss.backward()
            optimizer.step()
            running_loss += total_loss.item()
        print(f"epoch {epoch}: loss {running_loss / len(train_loader):.3f}")
    print(f"L1/L2 penalty reaches the decoder weights: {penalty_has_grad}")


def main():
    config_file = SimpleNamespace(learning_rate=1e-2, weight_atac=1.0, weight_tf=1.0, weight_rna=1.0,
                                  l1_penalty_topic_tf=10.0, l2_penalty_topic_tf=0.0,
                                  l1_penalty_topic_peak=10.0, l2_penalty_topic_peak=0.0)
    model = ScDoRI()
    loader = [(torch.rand(8, 20), torch.poisson(torch.rand(8, 30) * 2), torch.rand(8, 6), torch.zeros(8, 1))
              for _ in range(4)]
    train_scdori_phases(model, loader, config_file)


if __name__ == "__main__":
    main()
