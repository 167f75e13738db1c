"""BART's sequence-classification head (§3.1) and its Hugging Face import (notebook 11).

Lewis et al. 2020, *BART: Denoising Sequence-to-Sequence Pre-training for Natural Language Generation,
Translation, and Comprehension*.

:class:`BartForSequenceClassification` feeds the *same* input to encoder and decoder and classifies the
decoder's final state at the last ``</s>``; :meth:`BartForSequenceClassification.from_hf` loads a
``transformers.BartForSequenceClassification`` (model object or local directory).

The model is :mod:`coursekit.bart.model`; fine-tuning it on SST-2 is :mod:`coursekit.bart.finetuning`.
"""

from __future__ import annotations

import torch
from torch import nn

from coursekit.bart.batches import shift_tokens_right
from coursekit.bart.model import Bart, BartConfig, _strip_prefix
from coursekit.transformer.hf import check_float_dtype, read_checkpoint
from coursekit.validation import check_positive_int, check_probability, check_tensor, check_token_ids

__all__ = ["BartForSequenceClassification"]


# ---------------------------------------------------------------------------------------------
# Sequence classification (§3.1)
# ---------------------------------------------------------------------------------------------

class BartForSequenceClassification(nn.Module):
    """"The same input is fed into the encoder and decoder, and the final hidden state of the final decoder
    token is fed into a new multi-class linear classifier" (§3.1): the decoder state at the last ``</s>``
    of the input → dense → tanh → dropout → out_proj (as ``BartForSequenceClassification``)."""

    def __init__(self, bart: Bart, n_classes: int, *, dropout: float | None = None) -> None:
        super().__init__()
        if not isinstance(bart, Bart):
            raise TypeError(f"bart must be a coursekit.bart.model.Bart, got {type(bart).__name__}")
        check_positive_int(n_classes, "n_classes")
        if dropout is not None:
            check_probability(dropout, "dropout", inclusive_high=False)
        self.bart = bart
        d = bart.config.d_model
        self.dense = nn.Linear(d, d)
        self.dropout = nn.Dropout(bart.config.classifier_dropout if dropout is None else dropout)
        self.out_proj = nn.Linear(d, n_classes)
        for layer in (self.dense, self.out_proj):
            bart._init_weights(layer)

    def sentence_representation(self, ids: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        """Decoder state (B, C) at the position of each row's last ``</s>``.

        As in ``transformers``, the decoder reads the shifted input under its causal mask alone: no padding
        mask. Right padding comes after the last ``</s>`` and is never seen; in a left-padded row the
        pads are part of what the decoder reads (``keep`` masks them in the encoder and cross-attention).
        """
        c = self.bart.config
        check_tensor(ids, "ids", ndim=2)
        check_token_ids(ids, "ids", c.vocab_size)
        is_eos = ids == c.eos_id                                                    # (B, T)
        if not bool(is_eos.any(1).all()):
            rows = (~is_eos.any(1)).nonzero().flatten().tolist()
            raise ValueError(f"every input must contain an </s> (id {c.eos_id}) to classify; rows {rows} have none")
        keep = self.bart._keep(ids, keep, "keep")
        memory, keep = self.bart.encode(ids, keep)
        tgt_in = shift_tokens_right(ids, c.pad_id, c.decoder_start_id)              # same input, shifted
        every = torch.ones_like(tgt_in, dtype=torch.bool)                            # causal mask only
        h = self.bart.decode(tgt_in, memory, keep, tgt_keep=every)                  # (B, T, C)
        last = (is_eos * torch.arange(ids.shape[1], device=ids.device)).argmax(1)  # (B,) last </s>
        return h[torch.arange(ids.shape[0], device=ids.device), last]              # (B, C)

    def forward(self, ids: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        x = self.dropout(self.sentence_representation(ids, keep))
        return self.out_proj(self.dropout(torch.tanh(self.dense(x))))              # (B, n_classes)

    @classmethod
    def from_hf(cls, source, *, dtype: torch.dtype | None = None) -> BartForSequenceClassification:
        """Load a ``transformers.BartForSequenceClassification`` (object or local directory)."""
        check_float_dtype(dtype)
        hf_config, state = read_checkpoint(source)
        config = BartConfig.from_hf_config(hf_config)
        n_classes = len(hf_config.get("id2label") or {}) or hf_config.get("num_labels") or 2
        model = cls(Bart(config), n_classes)
        if dtype is not None:
            model.to(dtype)           # before copying: float64 weights must not pass through float32
        key_map = model.bart.hf_key_map(prefix="bart.")
        key_map |= {f"classification_head.{n}.{p}": f"{n}.{p}"
                    for n in ("dense", "out_proj") for p in ("weight", "bias")}
        model.bart._load_hf(_strip_prefix(state), key_map, allowed_extra=set(), module=model)
        return model.eval()
