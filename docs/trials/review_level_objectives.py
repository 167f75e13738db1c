"""Trial (issue 36): can a review-level objective, added for a few hundred steps, teach the small BERT sentiment?

Continue a pre-trained small BERT on IMDB reviews with one of two objectives that can only be solved by knowing
what a whole review is about — its film, and its verdict — then fine-tune with notebook 09's protocol (3,000
SST-2 sentences, 3 epochs, batch 16, lr 1e-3) for seeds 0, 1, 2 and print the dev accuracies:

* ``contrastive``: two disjoint spans of one review are a positive pair, the other 63 reviews of the batch the
  negatives; InfoNCE on the cosine of the mean-pooled last layer at temperature ``--tau`` (the span-contrastive
  objective of DeCLUTR, Giorgi et al. 2021, without its MLM term);
* ``bow``: from one span, predict the bag of pieces of the rest of its review (cross-entropy against the
  normalised counts), through the tied input embeddings — the paragraph-vector idea (Le & Mikolov 2014)
  with the transformer as the span encoder — plus the masked LM on the span.

Kept out of the package: neither moved the fine-tuned accuracy (docs/PRETRAINING_TRIALS.md has the numbers).
Run: ``python docs/trials/review_level_objectives.py MODEL_DIR --objective bow --steps 500 --lr 3e-4``
(20,000 unlabelled reviews; ~0.2–0.4 s per step on 2 threads).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import time

import torch
import torch.nn.functional as F

from coursekit import data
from coursekit.bert.checkpoint import load_small_bert
from coursekit.bert.corpus import review_documents
from coursekit.bert.finetuning import finetune_once
from coursekit.bert.heads import mean_pool
from coursekit.bert.objectives import IGNORE_INDEX, mask_tokens
from coursekit.bert.sst2 import sst2_splits
from coursekit.text import pad_batch

BUDGET = 62       # pieces per span, [CLS] and [SEP] excluded
BATCH = 64        # reviews per step


def span(sentences, i, sep):
    """Sentences i, i+1, … of a review joined by [SEP], as many as fit in BUDGET; (pieces, index after)."""
    row, j = list(sentences[i][:BUDGET]), i + 1
    while j < len(sentences) and len(row) + 1 + len(sentences[j]) <= BUDGET:
        row += [sep, *sentences[j]]
        j += 1
    return row, j


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a small BERT directory (load_small_bert)")
    parser.add_argument("--objective", choices=("contrastive", "bow"), required=True)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--tau", type=float, default=0.05)
    args = parser.parse_args()
    torch.set_num_threads(2)
    model, tok, _ = load_small_bert(args.model)
    vocab = tok.get_vocab_size()
    cls, sep, pad, msk = (tok.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]", "[MASK]"))
    docs = review_documents(list(data.load_imdb("unsup")["text"])[:20000], min_sentences=4)
    reviews = [d for d in ([e.ids for e in tok.encode_batch(d, add_special_tokens=False) if e.ids] for d in docs)
               if len(d) >= 4]
    rng, gen = random.Random(0), torch.Generator().manual_seed(0)

    def batch():
        rows, targets = [], torch.zeros(BATCH, vocab)
        for k, review in enumerate(rng.sample(reviews, BATCH)):
            if args.objective == "contrastive":         # a span before a random cut and one after it
                cut = rng.randrange(2, len(review) - 1)
                before, after = review[:cut], review[cut:]
                rows.append(span(before, rng.randrange(len(before)), sep)[0])
                rows.append(span(after, rng.randrange(len(after)), sep)[0])
            else:                                       # a span, and the pieces of the rest of the review
                i = rng.randrange(len(review))
                row, j = span(review, i, sep)
                rest = [t for s in review[:i] + review[j:] for t in s] or [t for s in review for t in s]
                targets[k].index_add_(0, torch.tensor(rest), torch.ones(len(rest)))
                rows.append(row)
        if args.objective == "contrastive":             # anchors first, then their positives
            rows = rows[0::2] + rows[1::2]
        ids, keep, _ = pad_batch([[cls, *r, sep] for r in rows], pad)
        return ids, keep.long(), targets / targets.sum(1, keepdim=True).clamp_min(1)

    bow_bias = torch.nn.Parameter(torch.zeros(vocab))
    proj = torch.nn.Linear(model.config.d_model, model.config.d_model)
    params = list(model.parameters()) + ([bow_bias, *proj.parameters()] if args.objective == "bow" else [])
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    start = time.time()
    for step in range(1, args.steps + 1):
        for g in opt.param_groups:                      # 50 warm-up steps, then cosine to 0
            g["lr"] = args.lr * min(1.0, step / 50) * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        model.train()
        ids, keep, targets = batch()
        if args.objective == "contrastive":
            h = model(ids, None, keep, heads=False).last_hidden_state
            z = F.normalize(mean_pool(h, keep), dim=-1)                          # (2B, C)
            sim = z[:BATCH] @ z[BATCH:].T / args.tau                             # (B, B)
            target = torch.arange(BATCH)
            loss = 0.5 * (F.cross_entropy(sim, target) + F.cross_entropy(sim.T, target))
            shown = {"infonce": loss.item(), "pair_acc": (sim.argmax(-1) == target).float().mean().item()}
        else:
            inputs, labels = mask_tokens(ids, vocab_size=vocab, mask_id=msk, special_ids=(cls, sep), pad_id=pad,
                                         generator=gen)
            selected = labels != IGNORE_INDEX
            out = model(inputs, None, keep, mlm_positions=selected)
            logits = proj(mean_pool(out.last_hidden_state, keep)) @ model.embeddings.token.weight.T + bow_bias
            bow = -(targets * logits.log_softmax(-1)).sum(-1).mean()
            mlm = F.cross_entropy(out.mlm_logits, labels[selected])
            loss, shown = bow + mlm, {"bow": bow.item(), "mlm": mlm.item()}
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 50 == 0:
            print(json.dumps({"step": step, **{k: round(v, 3) for k, v in shown.items()},
                              "seconds": round(time.time() - start)}), flush=True)
    splits = sst2_splits(3000, 1000)
    for seed in (0, 1, 2):
        result = finetune_once(copy.deepcopy(model), tok, splits, lr=1e-3, seed=seed, epochs=3, batch_size=16)
        print(json.dumps({"seed": seed, **result}), flush=True)


if __name__ == "__main__":
    main()
