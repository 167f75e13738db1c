"""Using a pre-trained BERT for a task: tokenised batches, heads for fine-tuning, frozen features (notebook 09).

Devlin et al. 2019, *BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding*.

Read top to bottom:

1. **Tokenised batches**: :func:`encode_batch` and :func:`sentence_batches` turn sentences (or sentence
   pairs) into ``(input_ids, token_type_ids, attention_mask[, labels])`` with a WordPiece
   ``tokenizers.Tokenizer``, whose post-processor adds ``[CLS]``, ``[SEP]`` and the segment ids.
2. **Fine-tuning** (§4, Figure 4): :class:`BertForSequenceClassification` puts a linear layer on one
   vector per sequence (the pooled ``[CLS]``, or the mean of the token vectors),
   :class:`BertForTokenClassification` one on every token; :func:`fine_tune` trains body and head
   (AdamW, warm-up + cosine), optionally with the lowest layers frozen (:func:`freeze_bottom`), and
   :func:`classifier_accuracy` scores the result.
3. **The feature-based approach** (§5.3, Table 7): :func:`combine_layers` builds token features from the
   frozen hidden states, :func:`mean_pool` averages them over the real tokens, and
   :func:`sentence_features` does both for every choice in ``FEATURE_CHOICES`` in one forward pass.

The model is :mod:`coursekit.bert.model`; pre-trained weights to start from are in :mod:`coursekit.bert.checkpoint`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.bert.model import Bert, _check_bert, _check_keep_mask
from coursekit.runtime import device as pick_device
from coursekit.training.loop import fit, warmup_cosine
from coursekit.validation import (
    check_choice,
    check_int_sequence,
    check_labels,
    check_non_empty,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_tensor,
)

__all__ = [
    "BertForSequenceClassification",
    "BertForTokenClassification",
    "FEATURE_CHOICES",
    "classifier_accuracy",
    "combine_layers",
    "encode_batch",
    "fine_tune",
    "freeze_bottom",
    "mean_pool",
    "sentence_batches",
    "sentence_features",
]


# ---------------------------------------------------------------------------------------------
# Input checks shared by this module and its callers (the generic ones are in coursekit.validation)
# ---------------------------------------------------------------------------------------------

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
# 1. Tokenised batches
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# 2. Heads for fine-tuning
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# 3. Frozen features
# ---------------------------------------------------------------------------------------------

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
