"""BERT's pre-training data and loss: masked LM, next-sentence pairs, the input format (notebook 09).

Devlin et al. 2019, *BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding*.

Read top to bottom:

1. **Masked LM** (§3.1, Task #1): select 15% of the (non-special, non-padding) positions; of those,
   80% become ``[MASK]``, 10% a random token, 10% stay unchanged; the loss is computed only at the
   selected positions (label ``-100`` elsewhere). :func:`mask_tokens` draws a fresh mask on every call
   (*dynamic* masking, RoBERTa, Liu et al. 2019); :class:`StaticMasking` draws the masks once and
   replays them (*static* masking, the original BERT with ``dupe_factor`` copies).
2. **Next-sentence prediction** (§3.1, Task #2): sentence pairs (A, B) where B follows A half of the
   time (IsNext) and is a random sentence from another document otherwise (NotNext). :func:`build_pair`
   writes a pair in BERT's input format ``[CLS] A [SEP] B [SEP]`` with its segment ids (§3,
   Input/Output Representations).
3. **The pre-training loss** (§3.1, Appendix A.2): :func:`pretraining_loss` adds the mean MLM
   cross-entropy at the selected positions and the NSP cross-entropy.

The model is :mod:`coursekit.bert.model`; :mod:`coursekit.bert.corpus` and :mod:`coursekit.bert.pretraining` are
the recipe that uses all three.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence

import torch
import torch.nn.functional as F

from coursekit.bert.model import Bert, _check_bert, _check_id
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_generator as _check_generator
from coursekit.validation import (
    check_int_sequence,
    check_labels,
    check_non_empty,
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
    "pretraining_loss",
    "split_sentences",
    "wikitext_documents",
]

IGNORE_INDEX = -100  # label of positions the MLM loss ignores (the default of F.cross_entropy)

# What happens to each position under the 15% / 80-10-10 rule (the output of :func:`mlm_actions`).
NOT_SELECTED, REPLACE_MASK, REPLACE_RANDOM, KEEP = 0, 1, 2, 3

# Hugging Face's convention for next_sentence_label: 0 = B continues A, 1 = B is random.
IS_NEXT, NOT_NEXT = 0, 1


# ---------------------------------------------------------------------------------------------
# Input checks shared by this module (the generic ones are in coursekit.validation)
# ---------------------------------------------------------------------------------------------

def _check_id_list(values, name: str, vocab_size: int) -> list[int]:
    """A collection of token ids (list, tuple, set or 1-D tensor) → ``list[int]``, each in ``[0, vocab_size)``."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Iterable, torch.Tensor)):
        raise TypeError(f"{name} must be a list of int token ids, got {type(values).__name__}")
    ids = check_int_sequence(values if isinstance(values, torch.Tensor) else list(values), name)
    outside = [i for i in ids if not 0 <= i < vocab_size]
    if outside:
        raise ValueError(f"{name} must hold token ids in [0, {vocab_size}), got {outside}")
    return ids


# ---------------------------------------------------------------------------------------------
# 1. Masked language modelling
# ---------------------------------------------------------------------------------------------

def _maskable(input_ids: torch.Tensor, special_ids: Iterable[int], pad_id: int | None,
              special_mask: torch.Tensor | None) -> torch.Tensor:
    """Bool (B, T): True where a position may be selected (not special, not padding)."""
    can = torch.ones_like(input_ids, dtype=torch.bool)
    for sid in set(special_ids) | ({pad_id} if pad_id is not None else set()):
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
    _check_generator(generator)
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
    ``IGNORE_INDEX`` (-100) everywhere else. Random replacements are drawn uniformly from the ids of
    ``[0, vocab_size)`` other than ``special_ids``, ``mask_id`` and ``pad_id`` (``special_mask`` protects
    positions only: pass the ids of the special tokens in ``special_ids`` too). Every call draws a fresh
    mask (dynamic masking); pass a seeded ``generator`` for reproducible draws. The input is not modified.
    """
    check_positive_int(vocab_size, "vocab_size")
    check_tensor(input_ids, "input_ids", ndim=(1, 2))
    check_token_ids(input_ids, "input_ids", vocab_size)
    if input_ids.numel() == 0:
        raise ValueError(f"input_ids must hold at least one token, got shape {tuple(input_ids.shape)}")
    _check_id(mask_id, "mask_id", vocab_size)
    if pad_id is not None:
        _check_id(pad_id, "pad_id", vocab_size)
    specials = set(_check_id_list(special_ids, "special_ids", vocab_size)) | {mask_id}
    can = _maskable(input_ids, specials, pad_id, special_mask)
    actions = mlm_actions(can, mlm_probability=mlm_probability, mask_frac=mask_frac,
                          random_frac=random_frac, generator=generator)

    labels = torch.where(actions != NOT_SELECTED, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
    corrupted = input_ids.clone()
    corrupted[actions == REPLACE_MASK] = mask_id
    # random replacements: uniform over the ids of [0, vocab_size) that are not special tokens or padding
    allowed = torch.ones(vocab_size, dtype=torch.bool)
    allowed[sorted(specials | ({pad_id} if pad_id is not None else set()))] = False
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
        _check_count(epoch, "epoch")
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
    if not isinstance(paragraph, str):
        raise TypeError(f"paragraph must be a string, got {type(paragraph).__name__}")
    return [s.strip() for s in _SENTENCE_END.split(paragraph.strip()) if s.strip()]


def wikitext_documents(lines: Iterable[str], *, min_sentences: int = 2) -> list[list[str]]:
    """Group WikiText lines into documents (articles), each a list of sentences.

    An article starts at a top-level heading `` = Title = ``; section headings `` = = Sub = = `` and
    blank lines are dropped; each paragraph line is split with :func:`split_sentences`. Articles with
    fewer than ``min_sentences`` sentences are left out.
    """
    if isinstance(lines, str):
        raise TypeError("lines must be a list of strings (the lines of a file), got one string")
    check_positive_int(min_sentences, "min_sentences")
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


def make_nsp_pairs(documents: Sequence[Sequence], n_pairs: int, *, p_next: float = 0.5,
                   rng: random.Random | int | None = None) -> list[tuple]:
    """Draw ``n_pairs`` next-sentence-prediction examples ``(A, B, label)`` (BERT §3.1, Task #2).

    ``documents`` is a list of documents, each a list of sentences (strings, or token-id lists).

    A is a random sentence (not the last) of a random document. With probability ``p_next`` (50%) B
    is the sentence that follows A and the label is ``IS_NEXT`` (0); otherwise B is a random sentence
    of a *different* document and the label is ``NOT_NEXT`` (1).
    """
    check_positive_int(n_pairs, "n_pairs")
    check_probability(p_next, "p_next")
    if isinstance(documents, str) or not isinstance(documents, Sequence):
        raise TypeError(f"documents must be a list of documents, got {type(documents).__name__}")
    for i, doc in enumerate(documents):
        # lists and tuples first: an ABC isinstance per document costs more than the sampling on 70k reviews
        if not isinstance(doc, (list, tuple)) and (isinstance(doc, str) or not isinstance(doc, Sequence)):
            raise TypeError(f"documents[{i}] must be a list of sentences, got {type(doc).__name__}")
    if not (rng is None or isinstance(rng, random.Random) or (isinstance(rng, int) and not isinstance(rng, bool))):
        raise TypeError(f"rng must be a random.Random, an int seed or None, got {type(rng).__name__}")
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
    _check_id(cls_id, "cls_id")
    _check_id(sep_id, "sep_id")
    a = check_non_empty(check_int_sequence(ids_a, "ids_a"), "ids_a")
    b = check_non_empty(check_int_sequence(ids_b, "ids_b"), "ids_b") if ids_b is not None else None
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


# ---------------------------------------------------------------------------------------------
# 3. The pre-training loss
# ---------------------------------------------------------------------------------------------

def pretraining_loss(model: Bert, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                     attention_mask: torch.Tensor, mlm_labels: torch.Tensor,
                     nsp_labels: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """BERT's pre-training loss: mean MLM cross-entropy at the selected positions + NSP cross-entropy.

    Returns ``(loss, {"mlm": …, "nsp": …})``; without ``nsp_labels`` only the MLM term. Labels are ``-100``
    (``IGNORE_INDEX``) where there is nothing to predict. Two conventions keep a rare batch from giving NaN:
    when no position is masked (possible in a tiny batch: each is drawn with 15%), the MLM term is 0; when
    every ``nsp_labels`` is -100 (single sentences only), the NSP term is left out, as without ``nsp_labels``.
    """
    _check_bert(model)
    if model.mlm is None:
        raise ValueError("pretraining_loss needs a model with an MLM head")
    check_tensor(input_ids, "input_ids", ndim=2)
    check_labels(mlm_labels, "mlm_labels", model.config.vocab_size, ignore_index=IGNORE_INDEX)
    if mlm_labels.shape != input_ids.shape:
        raise ValueError(f"mlm_labels must have the shape of input_ids {tuple(input_ids.shape)}, "
                         f"got {tuple(mlm_labels.shape)}")
    if nsp_labels is not None:
        if model.nsp is None:
            raise ValueError("nsp_labels were given but the model has no NSP head (Bert(config, nsp_head=True))")
        check_labels(nsp_labels, "nsp_labels", 2, ignore_index=IGNORE_INDEX)
        if tuple(nsp_labels.shape) != (input_ids.shape[0],):
            raise ValueError(f"nsp_labels must have shape ({input_ids.shape[0]},) (one per sequence), "
                             f"got {tuple(nsp_labels.shape)}")
    selected = mlm_labels != IGNORE_INDEX  # (B, T)
    out = model(input_ids, token_type_ids, attention_mask, mlm_positions=selected)
    if selected.any():
        mlm = F.cross_entropy(out.mlm_logits, mlm_labels[selected])
    else:
        mlm = out.mlm_logits.sum() * 0.0  # nothing masked: no MLM term (0, still part of the graph)
    parts = {"mlm": mlm.item()}
    loss = mlm
    if nsp_labels is not None and bool((nsp_labels != IGNORE_INDEX).any()):
        nsp = F.cross_entropy(out.nsp_logits, nsp_labels)
        parts["nsp"] = nsp.item()
        loss = loss + nsp
    return loss, parts
