"""Can the small discriminator learn from the generator's replacements? (issue 36 trial, 2026-11-27)

400 ELECTRA steps on WikiText-2 with the committed BERT's tokenizer (batch 32, 1 thread, warm-up 50), once per
sampling temperature T of the generator (``PretrainConfig.sample_temperature``; T = 1e9 is a uniform draw over
the vocabulary). Prints the held-out evaluations: a discriminator that learns brings ``rtd`` below ``rtd_prior``,
the loss of always predicting the share of replaced tokens.

    python docs/trials/electra_replacement_diagnostic.py 1 2 4 1e9      # about 2 minutes per temperature
"""
import dataclasses
import sys
import time

from coursekit.bert import corpus as bc
from coursekit.bert import pretraining as bp
from coursekit.bert.checkpoint import load_small_bert

_, tokenizer, _ = load_small_bert()
base = dataclasses.replace(bc.PretrainConfig(), objective="electra", steps=400, batch_size=32, eval_every=100,
                           threads=1, warmup_steps=50)
corpus = bc.build_corpus(base, tokenizer=tokenizer)
for t in map(float, sys.argv[1:] or ["1"]):
    start = time.time()
    _, report = bp.pretrain(dataclasses.replace(base, sample_temperature=t), corpus)
    final = report["final"]
    print(f"T = {t:g}: held-out rtd {final['rtd']:.3f} vs constant predictor {final['rtd_prior']:.3f} "
          f"(generator MLM {final['mlm']:.3f}; {time.time() - start:.0f} s)", flush=True)
