"""Trial: BART SST-2 fine-tuning with a mean-pooled encoder head instead of the decoder's last </s> state."""
# Run from the repository root, one process per start: python docs/trials/bart_sst2_mean_head.py pretrained|random
# (1 thread, ~3 min per run on the 2-core CPU)
import json, sys, time, torch
from dataclasses import replace
import coursekit.bart.finetuning as bf
from coursekit.bart.heads import BartForSequenceClassification
from coursekit.bart.corpus import BartVocab
torch.set_num_threads(1)

class MeanHead(BartForSequenceClassification):
    def sentence_representation(self, ids, keep=None):
        memory, keep = self.bart.encode(ids, self.bart._keep(ids, keep, "keep"))
        return (memory * keep[..., None]).sum(1) / keep.sum(1, keepdim=True)   # (B, C)

bf.BartForSequenceClassification = MeanHead
init = sys.argv[1]
vocab = BartVocab()
sst = bf.sst2_data(vocab, 2000, 1000)
for seed in (0, 1):
    for lr in (3e-4, 1e-3):
        t0 = time.monotonic()
        model, _ = bf.starting_model(init, seed, vocab)
        clf, _ = bf.finetune_sst2(model, sst["train_ids"], sst["train_labels"], vocab, recipe=replace(bf.FINETUNE, sst2_lr=lr), seed=seed)
        row = {"init": init, "lr": lr, "seed": seed,
               "select": round(bf.sst2_accuracy(clf, sst["select_ids"], sst["select_labels"], vocab), 4),
               "test": round(bf.sst2_accuracy(clf, sst["test_ids"], sst["test_labels"], vocab), 4),
               "seconds": round(time.monotonic() - t0, 1)}
        print(json.dumps(row), flush=True)
