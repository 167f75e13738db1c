"""The tiny pre-training world the BERT recipe tests share (tests/bert/test_pretraining.py, test_electra.py and
test_finetuning.py): a 24-word vocabulary, a synthetic WikiText-like corpus and a two-layer recipe of width 16."""

from __future__ import annotations

import random

from coursekit.bert import corpus as bcorp

WORDS = ("river bank water boat fish stone city road king queen army war song album film music game team "
         "player season goal match year town church school").split()


def tiny_text(n_articles=16, seed=0, sentence_words=(4, 9), in_domain_words=(2, 6)):
    """``(lines, in_domain)``: ``n_articles`` WikiText-style articles of three paragraphs of four sentences of
    ``sentence_words`` random WORDS each, and 50 in-domain texts of ``in_domain_words`` words."""
    rng = random.Random(seed)
    lines = []
    for a in range(n_articles):
        lines.append(f" = Article {a} = \n")
        for _ in range(3):
            sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(*sentence_words))).capitalize() + "."
                         for _ in range(4)]
            lines.append(" " + " ".join(sentences) + " \n")
    in_domain = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(*in_domain_words))) for _ in range(50)]
    return lines, in_domain


TINY = bcorp.PretrainConfig(vocab_size=120, d_model=16, n_layers=2, n_heads=2, d_ff=32, max_len=24,
                            batch_size=8, steps=6, warmup_steps=2, eval_every=3, held_out_articles=3, held_out_pairs=16)
