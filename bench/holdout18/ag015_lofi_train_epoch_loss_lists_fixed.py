# source: https://github.com/jacbz/Lofi/issues/14
# symptom: train chord losses keep the graph of every batch: True
"""Lofi `model/train.py` `train`: each training batch's `compute_loss(data)` returns the total loss and its parts;
the parts are kept for the epoch statistics with `ep_train_losses_chords.append(loss_chords)`,
`ep_train_losses_melodies.append(loss_melody)` and `ep_train_losses_kl.append(kl_loss)`, tensors that still hold the
batch's graph, so the whole epoch's graphs stay alive and the epoch averages built from them are graph tensors too:
matplotlib then fails on them ("Can't call numpy() on Tensor that requires grad") when the loss curves are plotted.
This program has no matplotlib; it reports whether the stored chord losses still carry a graph. The Lofi2Lofi VAE
is a small GRU encoder/decoder stand-in with the same heads (chords, melody, tempo, key, mode, valence, energy).

Fixed the way the error message points (the stored thread has only the report, and the repository's train.py was
not changed): the batch values are stored as plain numbers, `float(loss_chords)`, `float(loss_melody)` (which is the
int 0 during the melody delay) and `float(kl_loss)`."""
import torch
from torch import nn
from torch.utils.data import DataLoader

TRAIN_VALIDATION_SPLIT = 0.75
BATCH_SIZE = 4
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-2
NOTES_PER_CHORD = 2
MELODY_EPOCH_DELAY = 1
TEACHER_FORCE = True
CHORD_PREDICTION_LENGTH, MELODY_PREDICTION_LENGTH = 5, 6
MAX_CHORDS, NUM_KEYS, NUM_MODES, HIDDEN = 6, 12, 7, 16
MAX_EPOCHS = 2


def sampling_rate_at_epoch(epoch):
    return max(0.0, min(1.0, epoch / 10))


class Lofi2LofiModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.chord_embedding = nn.Embedding(CHORD_PREDICTION_LENGTH, HIDDEN)
        self.encoder = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.mu, self.logvar = nn.Linear(HIDDEN, HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.decoder = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.chords_out = nn.Linear(HIDDEN, CHORD_PREDICTION_LENGTH)
        self.notes_out = nn.Linear(HIDDEN, MELODY_PREDICTION_LENGTH)
        self.tempo_out, self.key_out, self.mode_out = nn.Linear(HIDDEN, 1), nn.Linear(HIDDEN, NUM_KEYS), nn.Linear(HIDDEN, NUM_MODES)
        self.valence_out, self.energy_out = nn.Linear(HIDDEN, 1), nn.Linear(HIDDEN, 1)

    def forward(self, chords, notes, tempo, key, mode, valence, energy, num_chords, max_num_chords,
                sampling_rate_chords, sampling_rate_melodies):
        _, h = self.encoder(self.chord_embedding(chords))
        mu, logvar = self.mu(h[0]), self.logvar(h[0])
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        dec_in = z.unsqueeze(1).repeat(1, max_num_chords * NOTES_PER_CHORD, 1)
        dec, _ = self.decoder(dec_in)
        pred_chords = self.chords_out(dec[:, ::NOTES_PER_CHORD])
        pred_notes = self.notes_out(dec)
        return (pred_chords, pred_notes, self.tempo_out(z), self.key_out(z), self.mode_out(z), self.valence_out(z),
                self.energy_out(z), kl)


def make_dataset(n):
    data = []
    for _ in range(n):
        data.append({
            "num_chords": torch.tensor(MAX_CHORDS - 1),
            "chords": torch.randint(0, CHORD_PREDICTION_LENGTH, (MAX_CHORDS,)),
            "melody_notes": torch.randint(0, MELODY_PREDICTION_LENGTH, (MAX_CHORDS * NOTES_PER_CHORD,)),
            "tempo": torch.rand(()), "key": torch.randint(0, NUM_KEYS, ()), "mode": torch.randint(0, NUM_MODES, ()),
            "valence": torch.rand(()), "energy": torch.rand(()),
        })
    return data


graph_kept = False


def train(dataset, model, name):
    global graph_kept
    device = "cpu"
    print(f"Using {device} device")

    train_size = int(TRAIN_VALIDATION_SPLIT * len(dataset))
    val_size = len(dataset) - train_size
    train_dataset, val_dataset = torch.utils.data.random_split(dataset, [train_size, val_size])
    train_dataloader = DataLoader(train_dataset, batch_size=BATCH_SIZE, shuffle=True)
    val_dataloader = DataLoader(val_dataset, batch_size=BATCH_SIZE, shuffle=False)

    ce_loss = nn.CrossEntropyLoss(reduction='none')
    l1_loss = nn.L1Loss(reduction='mean')

    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)

    epochs = []
    train_losses_chords, train_losses_melodies, train_losses_kl = [], [], []
    val_losses_chords, val_losses_melodies, val_losses_kl = [], [], []

    def compute_loss(data):
        num_chords = data["num_chords"]
        max_num_chords = num_chords.max()
        max_num_notes = max_num_chords * NOTES_PER_CHORD

        chords_gt = data["chords"].to(device)[:, :max_num_chords]
        notes_gt = data["melody_notes"].to(device)[:, :max_num_notes]
        tempo_gt = data["tempo"].to(device)
        key_gt = data["key"].to(device)
        mode_gt = data["mode"].to(device)
        valence_gt = data["valence"].to(device)
        energy_gt = data["energy"].to(device)

        pred_chords, pred_notes, pred_tempo, pred_key, pred_mode, pred_valence, pred_energy, kl = \
            model(chords_gt, notes_gt, tempo_gt, key_gt, mode_gt, valence_gt, energy_gt, num_chords, max_num_chords,
                  sampling_rate_chords, sampling_rate_melodies)

        def compute_mask(max_length, curr_length):
            arange = torch.arange(max_length, device=device).repeat((chords_gt.shape[0], 1)).permute(0, 1)
            lengths_stacked = curr_length.repeat((max_length, 1)).permute(1, 0)
            return arange <= lengths_stacked

        loss_chords = ce_loss(pred_chords.permute(0, 2, 1), chords_gt)
        mask_chord = compute_mask(max_num_chords, num_chords)
        loss_chords = torch.masked_select(loss_chords, mask_chord).mean()

        num_notes = num_chords * NOTES_PER_CHORD
        loss_melody_notes = ce_loss(pred_notes.permute(0, 2, 1), notes_gt)
        mask_melody = compute_mask(max_num_notes, num_notes)
        loss_melody = torch.masked_select(loss_melody_notes, mask_melody).mean()

        if epoch < MELODY_EPOCH_DELAY:
            loss_melody = 0

        loss_kl = kl
        loss_tempo = l1_loss(pred_tempo[:, 0], tempo_gt) / 5
        loss_key = ce_loss(pred_key, key_gt).mean() / 30
        loss_mode = ce_loss(pred_mode, mode_gt).mean() / 10
        loss_valence = l1_loss(pred_valence[:, 0], valence_gt) / 5
        loss_energy = l1_loss(pred_energy[:, 0], energy_gt) / 5
        loss_total = loss_chords + loss_kl + loss_melody + loss_tempo + loss_key + loss_mode + loss_energy + loss_valence

        tp_chords = torch.masked_select(pred_chords.argmax(dim=2) == chords_gt, mask_chord).tolist()
        tp_melodies = torch.masked_select(pred_notes.argmax(dim=2) == notes_gt, mask_melody).tolist()

        return loss_total, loss_chords, loss_kl, loss_melody, loss_tempo, loss_key, loss_mode, loss_valence, loss_energy, tp_chords, tp_melodies

    print(f"Starting training: {name}")
    epoch = 0
    while epoch < MAX_EPOCHS:
        epochs.append(epoch)
        print(f"== Epoch {epoch} ==")
        ep_train_losses_chords, ep_train_losses_melodies, ep_train_losses_kl, ep_train_tp_chords, ep_train_tp_melodies = [], [], [], [], []
        ep_val_losses_chords, ep_val_losses_melodies, ep_val_losses_kl, ep_val_tp_chords, ep_val_tp_melodies = [], [], [], [], []

        sampling_rate_chords = 0
        sampling_rate_melodies = 0
        if TEACHER_FORCE:
            sampling_rate_chords = sampling_rate_at_epoch(epoch)
            sampling_rate_melodies = sampling_rate_at_epoch(epoch - MELODY_EPOCH_DELAY)

        # TRAINING
        model.train()
        for batch, data in enumerate(train_dataloader):
            loss, loss_chords, kl_loss, loss_melody, \
            loss_tempo, loss_key, loss_mode, loss_valence, loss_energy, \
            batch_tp_chords, batch_tp_melodies = compute_loss(data)

            ep_train_losses_chords.append(float(loss_chords))
            ep_train_losses_melodies.append(float(loss_melody))
            ep_train_losses_kl.append(float(kl_loss))
            ep_train_tp_chords.extend(batch_tp_chords)
            ep_train_tp_melodies.extend(batch_tp_melodies)

            optimizer.zero_grad()
            loss.backward()

            optimizer.step()
            loss = loss.item()
            print(f"\tBatch {batch}:\tLoss {loss:.3f} (C: {loss_chords:.3f} + KL: {kl_loss:.3f} + "
                  f"M: {loss_melody:.3f} + T: {loss_tempo:.3f} + K: {loss_key:.3f} + Mo: {loss_mode:.3f} + "
                  f"V: {loss_valence:.3f} + E: {loss_energy:.3f})")

        graph_kept = graph_kept or any(torch.is_tensor(l) and l.grad_fn is not None for l in ep_train_losses_chords)

        # VALIDATION
        model.eval()
        for batch, data in enumerate(val_dataloader):
            with torch.no_grad():
                loss, loss_chords, kl_loss, loss_melody, \
                loss_tempo, loss_key, loss_mode, loss_valence, loss_energy, \
                batch_tp_chords, batch_tp_melodies = compute_loss(data)

                ep_val_losses_chords.append(loss_chords)
                ep_val_losses_melodies.append(loss_melody)
                ep_val_losses_kl.append(kl_loss)
                ep_val_tp_chords.extend(batch_tp_chords)
                ep_val_tp_melodies.extend(batch_tp_melodies)

        epoch += 1

        ep_train_loss_chord = sum(ep_train_losses_chords) / len(ep_train_losses_chords)
        ep_train_loss_melody = sum(ep_train_losses_melodies) / len(ep_train_losses_melodies)
        ep_train_loss_kl = sum(ep_train_losses_kl) / len(ep_train_losses_kl)
        ep_train_chord_acc = (sum(ep_train_tp_chords) / len(ep_train_tp_chords)) * 100
        ep_val_loss_chord = sum(ep_val_losses_chords) / len(ep_val_losses_chords)
        ep_val_loss_melody = sum(ep_val_losses_melodies) / len(ep_val_losses_melodies)
        ep_val_loss_kl = sum(ep_val_losses_kl) / len(ep_val_losses_kl)

        print(f"Epoch chord loss: {ep_train_loss_chord:.3f}, melody loss: {ep_train_loss_melody:.3f}, "
              f"KL: {ep_train_loss_kl:.3f}, chord accuracy: {ep_train_chord_acc:.3f}")
        print(f"VALIDATION: epoch chord loss: {ep_val_loss_chord:.3f}, melody loss: {ep_val_loss_melody:.3f}, "
              f"KL: {ep_val_loss_kl:.3f}")

        train_losses_chords.append(ep_train_loss_chord)
        train_losses_melodies.append(ep_train_loss_melody)
        train_losses_kl.append(ep_train_loss_kl)
        val_losses_chords.append(ep_val_loss_chord)
        val_losses_melodies.append(ep_val_loss_melody)
        val_losses_kl.append(ep_val_loss_kl)


torch.manual_seed(0)
train(make_dataset(24), Lofi2LofiModel(), "lofi2lofi")
print("train chord losses keep the graph of every batch:", graph_kept)
