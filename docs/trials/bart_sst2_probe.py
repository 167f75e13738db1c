"""Diagnostic: does the pre-trained BART carry sentiment? Frozen features + logistic regression."""
# Run from the repository root: python docs/trials/bart_sst2_probe.py  (1 thread, ~2 min on the 2-core CPU)
import json, sys, torch, numpy as np
from sklearn.linear_model import LogisticRegression
from coursekit.bart.heads import BartForSequenceClassification
from coursekit.bart.finetuning import sst2_data, starting_model
from coursekit.bart.corpus import BartVocab
from coursekit.text import pad_batch
torch.set_num_threads(1)
vocab = BartVocab()
sst = sst2_data(vocab, 2000, 1000)

@torch.no_grad()
def feats(model, ids):
    clf = BartForSequenceClassification(model, 2).eval()
    enc, dec = [], []
    for s in range(0, len(ids), 128):
        x, keep, _ = pad_batch(ids[s:s + 128], vocab.pad_id)
        mem, k = model.encode(x, keep)
        enc.append(((mem * k[..., None]).sum(1) / k.sum(1, keepdim=True)).numpy())
        dec.append(clf.sentence_representation(x, keep).numpy())
    return np.concatenate(enc), np.concatenate(dec)

for init, seed in (("pretrained", 0), ("random", 0), ("random", 1)):
    model, _ = starting_model(init, seed, vocab)
    model.eval()
    tr, te = feats(model, sst["train_ids"]), feats(model, sst["test_ids"])
    for i, name in enumerate(("encoder_mean", "decoder_eos")):
        best = None
        for C in (0.01, 0.1, 1.0, 10.0):
            lr = LogisticRegression(C=C, max_iter=3000).fit(tr[i], sst["train_labels"])
            acc = lr.score(te[i], sst["test_labels"])
            print(json.dumps({"init": init, "seed": seed, "features": name, "C": C, "test": round(acc, 4)}), flush=True)
