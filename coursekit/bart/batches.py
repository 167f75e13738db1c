"""BART's decoder inputs, padded sequence-to-sequence batches and the denoising objective (notebook 11).

Lewis et al. 2020, *BART: Denoising Sequence-to-Sequence Pre-training for Natural Language Generation,
Translation, and Comprehension*.

1. **Decoder inputs** (§2.1): teacher forcing feeds the decoder the target shifted one place to the
   right, starting with ``decoder_start_id`` (:func:`shift_tokens_right`).
2. **Batches**: :func:`seq2seq_batch` pads (source, target) id sequences into a :class:`Seq2SeqBatch`;
   :func:`denoising_batch` builds (corrupted → original) pairs with a noise function of
   :mod:`coursekit.bart.noising` (§2.2).
3. **The objective** (§2.2): :func:`denoising_loss` is the cross-entropy between the decoder's outputs and
   the *original* document.

The model is :mod:`coursekit.bart.model`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.text import pad_batch
from coursekit.validation import check_bool_mask, check_int_sequence, check_labels, check_tensor

__all__ = ["Seq2SeqBatch", "denoising_batch", "denoising_loss", "seq2seq_batch", "shift_tokens_right"]


# ---------------------------------------------------------------------------------------------
# Input checks shared by this module (the generic ones are in coursekit.validation)
# ---------------------------------------------------------------------------------------------

def _check_id(value, name: str) -> int:
    """One token id: an int ≥ 0 (a float would be truncated into the ids)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int token id, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be a token id ≥ 0, got {value}")
    return value


def _id_list(ids, name: str) -> list[int]:
    """One sequence of token ids (a list of ints or a 1-D integer tensor) → a non-empty ``list[int]`` of ids ≥ 0."""
    ids = check_int_sequence(ids, name)
    if not ids:
        raise ValueError(f"{name} is empty")
    if min(ids) < 0:
        raise ValueError(f"{name} must hold token ids ≥ 0, got {min(ids)}")
    return ids


# ---------------------------------------------------------------------------------------------
# Decoder inputs and the denoising objective
# ---------------------------------------------------------------------------------------------

def shift_tokens_right(ids: torch.Tensor, pad_id: int, decoder_start_id: int) -> torch.Tensor:
    """Decoder inputs for teacher forcing: ``[start, y_0, …, y_{T-2}]`` from the targets ``y`` (B, T).

    The last target token is dropped (nothing is predicted after it); label padding ``-100`` that
    slides in becomes ``pad_id``. Same as ``transformers.models.bart.modeling_bart.shift_tokens_right``.
    """
    check_tensor(ids, "ids", ndim=2)
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"ids must be integer token ids, got {ids.dtype}")
    if ids.shape[1] == 0:
        raise ValueError(f"ids must hold at least one token per row, got shape {tuple(ids.shape)}")
    _check_id(pad_id, "pad_id")
    _check_id(decoder_start_id, "decoder_start_id")
    wrong = (ids < 0) & (ids != -100)
    if wrong.any():
        raise ValueError(f"ids must hold token ids ≥ 0 (or -100 for label padding), got {int(ids[wrong][0])}")
    shifted = ids.new_empty(ids.shape)
    shifted[:, 1:] = ids[:, :-1]
    shifted[:, 0] = decoder_start_id
    return shifted.masked_fill(shifted == -100, pad_id)  # (B, T)


@dataclass
class Seq2SeqBatch:
    """One padded batch of a sequence-to-sequence task. Masks are True at real tokens.

    ``src`` (B, S): encoder input (for denoising: the corrupted documents); ``tgt_out`` (B, T): what the
    decoder must produce (the original documents, or a translation); ``tgt_in`` = ``shift_tokens_right(tgt_out)``.
    """

    src: torch.Tensor
    src_keep: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_keep: torch.Tensor

    def __post_init__(self) -> None:
        check_tensor(self.src, "src", ndim=2)
        check_tensor(self.tgt_in, "tgt_in", ndim=2)
        check_bool_mask(self.src_keep, "src_keep", self.src.shape)
        check_tensor(self.tgt_out, "tgt_out")
        if self.tgt_out.shape != self.tgt_in.shape:
            raise ValueError(f"tgt_out must have the shape of tgt_in {tuple(self.tgt_in.shape)}, "
                             f"got {tuple(self.tgt_out.shape)}")
        check_bool_mask(self.tgt_keep, "tgt_keep", self.tgt_in.shape)
        if self.src.shape[0] != self.tgt_in.shape[0]:
            raise ValueError(f"src has {self.src.shape[0]} rows but tgt_in has {self.tgt_in.shape[0]}: "
                             f"one source per target")

    def to(self, device) -> Seq2SeqBatch:
        return Seq2SeqBatch(*(getattr(self, f.name).to(device) for f in fields(self)))

    def __len__(self) -> int:
        return self.src.shape[0]


def seq2seq_batch(sources: Sequence[Sequence[int] | torch.Tensor], targets: Sequence[Sequence[int] | torch.Tensor],
                  *, pad_id: int, decoder_start_id: int) -> Seq2SeqBatch:
    """Pad (source, target) id sequences and build the teacher-forced decoder inputs."""
    if len(sources) != len(targets) or len(sources) == 0:
        raise ValueError(f"need as many sources as targets (at least one), got {len(sources)} and {len(targets)}")
    _check_id(pad_id, "pad_id")
    _check_id(decoder_start_id, "decoder_start_id")
    src, src_keep, _ = pad_batch([_id_list(s, f"sources[{i}]") for i, s in enumerate(sources)], pad_id)
    tgt_out, tgt_keep, _ = pad_batch([_id_list(t, f"targets[{i}]") for i, t in enumerate(targets)], pad_id)
    return Seq2SeqBatch(src, src_keep, shift_tokens_right(tgt_out, pad_id, decoder_start_id), tgt_out, tgt_keep)


def denoising_batch(documents: Sequence[Sequence[int] | torch.Tensor], noise: Callable[..., torch.Tensor], *,
                    pad_id: int, decoder_start_id: int, generator: torch.Generator | None = None) -> Seq2SeqBatch:
    """Corrupt each document with ``noise(ids, generator=...)``: (corrupted → original) pairs (§2.2)."""
    if len(documents) == 0:
        raise ValueError("denoising_batch needs at least one document")
    if not callable(noise):
        raise TypeError(f"noise must be a function noise(ids, *, generator) -> ids, got {type(noise).__name__}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    originals = [torch.tensor(_id_list(d, f"documents[{i}]"), dtype=torch.long) for i, d in enumerate(documents)]
    corrupted = [noise(d, generator=generator) for d in originals]
    return seq2seq_batch(corrupted, originals, pad_id=pad_id, decoder_start_id=decoder_start_id)


def denoising_loss(model: nn.Module, batch: Seq2SeqBatch) -> torch.Tensor:
    """Mean cross-entropy −log p(target | source) over the real target tokens (for denoising: the
    reconstruction loss of the original document from its corrupted copy)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(batch, Seq2SeqBatch):
        raise TypeError(f"batch must be a Seq2SeqBatch, got {type(batch).__name__}")
    if not batch.tgt_keep.any():
        raise ValueError("batch.tgt_keep marks no target token: the loss is undefined")
    logits = model(batch.src, batch.tgt_in, src_keep=batch.src_keep, tgt_keep=batch.tgt_keep)  # (B, T, V)
    targets = check_labels(batch.tgt_out[batch.tgt_keep], "batch.tgt_out", logits.shape[-1])
    return F.cross_entropy(logits[batch.tgt_keep], targets)
