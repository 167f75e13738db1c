"""BART: a denoising sequence-to-sequence model, its generation and Hugging Face import (notebook 11).

Lewis et al. 2020, *BART: Denoising Sequence-to-Sequence Pre-training for Natural Language Generation,
Translation, and Comprehension*.

BART = a **bidirectional encoder** (like BERT) + an **autoregressive decoder** (like GPT), trained to
reconstruct a document from a corrupted copy (the corruptions are in :mod:`coursekit.bart.noising`).

Read top to bottom:

1. **The model** (§2.1): "the standard sequence-to-sequence Transformer architecture … except,
   following GPT, that we modify ReLU activation functions to GeLUs". As in the released code: learned
   absolute positions (with an offset of 2: position ``t`` reads row ``t + 2`` of the table), a LayerNorm
   on the embeddings of each stack, post-LN layers (the shared
   :class:`coursekit.transformer.layers.EncoderLayer` / :class:`~coursekit.transformer.layers.DecoderLayer`, no final
   LayerNorm), one token embedding shared by encoder, decoder and the output projection, plus a
   ``final_logits_bias``. Optionally the embeddings are scaled by √d_model (``scale_embedding``).
2. **Generation**: the decoder is fed its own outputs (greedy or beam search from
   :mod:`coursekit.decoding`, with the KV cache of :mod:`coursekit.transformer.layers`).
3. **Checkpoints**: :meth:`Bart.from_hf` loads a ``transformers`` BART (model object or local directory);
   a config or key mismatch is a ``ValueError`` that lists the keys.

The decoder inputs (§2.1: the target shifted one place to the right, starting with ``decoder_start_id``),
the padded batches and the denoising loss (§2.2) are :mod:`coursekit.bart.batches`; the sequence-
classification head (§3.1) is :mod:`coursekit.bart.heads`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import padding_mask
from coursekit.bart.batches import shift_tokens_right
from coursekit.decoding import SearchResult, beam_search, greedy_search
from coursekit.transformer.hf import check_float_dtype, read_checkpoint
from coursekit.transformer.layers import ACTIVATIONS, Decoder, Encoder, LearnedPositions
from coursekit.transformer.model import TransformerState
from coursekit.validation import (
    check_bool_mask,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)

__all__ = ["POSITION_OFFSET", "Bart", "BartConfig"]

POSITION_OFFSET = 2  # BART's position table has 2 extra rows at the top: position t reads row t + 2


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BartConfig:
    """Sizes of a BART. The defaults are bart-base (6 + 6 layers, d_model 768, 12 heads, FFN 3072: 140M
    parameters); bart-large is 12 + 12 layers, 1024, 16 heads, 4096 (400M). ``decoder_n_heads`` /
    ``decoder_d_ff`` default to the encoder's. Special ids follow fairseq's dictionary:
    ``<s>`` = 0, ``<pad>`` = 1, ``</s>`` = 2, and the decoder starts with ``</s>``."""

    vocab_size: int
    d_model: int = 768
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    n_heads: int = 12
    d_ff: int = 3072
    decoder_n_heads: int | None = None
    decoder_d_ff: int | None = None
    max_len: int = 1024
    dropout: float = 0.1
    attention_dropout: float = 0.0
    activation_dropout: float = 0.0
    activation: str = "gelu"
    scale_embedding: bool = False
    pad_id: int = 1
    bos_id: int = 0
    eos_id: int = 2
    decoder_start_id: int = 2
    classifier_dropout: float = 0.0
    init_std: float = 0.02

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_encoder_layers", "n_decoder_layers", "n_heads", "d_ff", "max_len"):
            check_positive_int(getattr(self, name), f"BartConfig.{name}")
        for name in ("decoder_n_heads", "decoder_d_ff"):
            if getattr(self, name) is not None:
                check_positive_int(getattr(self, name), f"BartConfig.{name}")
        for heads in (self.n_heads, self.dec_heads):
            if self.d_model % heads:
                raise ValueError(f"BartConfig: d_model={self.d_model} must be divisible by the heads ({heads})")
        for name in ("dropout", "attention_dropout", "activation_dropout", "classifier_dropout"):
            check_probability(getattr(self, name), f"BartConfig.{name}", inclusive_high=False)
        check_positive_float(self.init_std, "BartConfig.init_std")
        if not isinstance(self.scale_embedding, bool):
            raise TypeError(f"BartConfig.scale_embedding must be a bool, got {type(self.scale_embedding).__name__}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"BartConfig.activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        for name in ("pad_id", "bos_id", "eos_id", "decoder_start_id"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < self.vocab_size:
                raise ValueError(f"BartConfig.{name} must be an id in [0, {self.vocab_size}), got {value!r}")

    @property
    def dec_heads(self) -> int:
        return self.n_heads if self.decoder_n_heads is None else self.decoder_n_heads

    @property
    def dec_d_ff(self) -> int:
        return self.d_ff if self.decoder_d_ff is None else self.decoder_d_ff

    # ---- Hugging Face configs
    _HF_FIELDS = {"vocab_size": "vocab_size", "d_model": "d_model", "n_encoder_layers": "encoder_layers",
                  "n_decoder_layers": "decoder_layers", "n_heads": "encoder_attention_heads",
                  "d_ff": "encoder_ffn_dim", "decoder_n_heads": "decoder_attention_heads",
                  "decoder_d_ff": "decoder_ffn_dim", "max_len": "max_position_embeddings", "dropout": "dropout",
                  "attention_dropout": "attention_dropout", "activation_dropout": "activation_dropout",
                  "activation": "activation_function", "scale_embedding": "scale_embedding",
                  "pad_id": "pad_token_id", "bos_id": "bos_token_id", "eos_id": "eos_token_id",
                  "decoder_start_id": "decoder_start_token_id", "classifier_dropout": "classifier_dropout",
                  "init_std": "init_std"}
    _HF_ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh"}
    _HF_REQUIRED = {"model_type": ("bart",), "normalize_before": (False,), "add_final_layer_norm": (False,),
                    "normalize_embedding": (True,), "static_position_embeddings": (False,)}

    @classmethod
    def from_hf_config(cls, hf) -> BartConfig:
        """Translate a ``transformers.BartConfig`` (or its ``config.json`` dict); unsupported → ValueError."""
        if not isinstance(hf, dict) and not callable(getattr(hf, "to_dict", None)):
            raise TypeError(f"hf must be a transformers.BartConfig or a config.json dict, got {type(hf).__name__}")
        d = hf if isinstance(hf, dict) else hf.to_dict()
        problems = [f"{key}={d[key]!r} (supported: {', '.join(map(repr, ok))})"
                    for key, ok in cls._HF_REQUIRED.items() if key in d and d[key] not in ok]
        act = d.get("activation_function", "gelu")
        if act not in cls._HF_ACTIVATIONS:
            problems.append(f"activation_function={act!r} (supported: {', '.join(map(repr, cls._HF_ACTIVATIONS))})")
        needed = ("vocab_size", "d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
                  "encoder_ffn_dim", "max_position_embeddings")
        missing = [k for k in needed if d.get(k) is None]
        if problems or missing:
            raise ValueError("this Hugging Face config is not a BART that coursekit.bart.model can load: "
                             + "; ".join(problems + [f"missing field {m!r}" for m in missing]))
        values = {ours: d[theirs] for ours, theirs in cls._HF_FIELDS.items() if d.get(theirs) is not None}
        values["activation"] = cls._HF_ACTIVATIONS[act]
        return cls(**values)

    def to_hf_dict(self) -> dict:
        """Keyword arguments of the equivalent ``transformers.BartConfig``."""
        d = {theirs: getattr(self, ours) for ours, theirs in self._HF_FIELDS.items()}
        d["decoder_attention_heads"], d["decoder_ffn_dim"] = self.dec_heads, self.dec_d_ff
        d["activation_function"] = {v: k for k, v in self._HF_ACTIVATIONS.items()}[self.activation]
        return d


class Bart(nn.Module):
    """The BART encoder–decoder with the language-modelling head (``BartForConditionalGeneration``).

    ``forward(src, tgt_in=None, src_keep=None, tgt_keep=None) -> logits (B, T, V)``; without ``tgt_in``
    the decoder reads ``shift_tokens_right(src)`` (the same text on both sides). Keep-masks are (B, S) /
    (B, T) bool, True at real tokens; when omitted they are ``ids != pad_id``.
    """

    def __init__(self, config: BartConfig) -> None:
        super().__init__()
        if not isinstance(config, BartConfig):
            raise TypeError(f"config must be a BartConfig, got {type(config).__name__}")
        c = self.config = config
        self.shared = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)   # tokens, both stacks + output
        self.embed_scale = math.sqrt(c.d_model) if c.scale_embedding else 1.0
        self.encoder_positions = LearnedPositions(c.max_len + POSITION_OFFSET, c.d_model)
        self.decoder_positions = LearnedPositions(c.max_len + POSITION_OFFSET, c.d_model)
        self.encoder_embed_norm = nn.LayerNorm(c.d_model)   # "layernorm_embedding"
        self.decoder_embed_norm = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)
        common = dict(dropout=c.dropout, activation=c.activation, norm_first=False, final_norm=False)
        self.encoder = Encoder(c.n_encoder_layers, c.d_model, c.n_heads, c.d_ff, **common)
        self.decoder = Decoder(c.n_decoder_layers, c.d_model, c.dec_heads, c.dec_d_ff, **common)
        for layer in (*self.encoder.layers, *self.decoder.layers):   # BART's separate dropout rates
            layer.ff.dropout.p = c.activation_dropout                  # after the GELU
            for attn in (layer.self_attn, getattr(layer, "cross_attn", None)):
                if attn is not None:
                    attn.dropout = c.attention_dropout                 # on the attention weights
        self.register_buffer("final_logits_bias", torch.zeros(1, c.vocab_size))
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        """N(0, init_std) for linear maps and embeddings, zero biases (as ``BartPreTrainedModel``)."""
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=self.config.init_std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=self.config.init_std)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, LearnedPositions):
            nn.init.normal_(module.embedding.weight, std=self.config.init_std)

    # ---- inputs
    def embed(self, ids: torch.Tensor, which: str, offset: int = 0) -> torch.Tensor:
        """LayerNorm(token · scale + position) then dropout: (B, T) → (B, T, C); positions start at ``offset``."""
        check_tensor(ids, f"{which} ids", ndim=2)
        if ids.numel() == 0:
            raise ValueError(f"{which} ids must hold at least one sequence of at least one token, "
                             f"got shape {tuple(ids.shape)}")
        check_token_ids(ids, f"{which} ids", self.config.vocab_size)
        positions, norm = ((self.encoder_positions, self.encoder_embed_norm) if which == "encoder"
                           else (self.decoder_positions, self.decoder_embed_norm))
        if ids.shape[1] + offset > self.config.max_len:
            raise ValueError(f"{which} sequence of {ids.shape[1] + offset} positions exceeds "
                             f"max_len={self.config.max_len}")
        x = self.shared(ids) * self.embed_scale + positions(ids.shape[1], offset + POSITION_OFFSET)  # (B, T, C)
        return self.dropout(norm(x))

    def _keep(self, ids: torch.Tensor, keep: torch.Tensor | None, name: str) -> torch.Tensor:
        if keep is None:
            return ids != self.config.pad_id
        check_bool_mask(keep, name)
        if keep.shape != ids.shape:
            raise ValueError(f"{name} must have the shape of the ids {tuple(ids.shape)}, got {tuple(keep.shape)}")
        return keep

    # ---- the two halves
    def encode(self, src: torch.Tensor, src_keep: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """src (B, S) → ``(memory (B, S, C), src_keep (B, S))``: the bidirectional encoder."""
        src_keep = self._keep(src, src_keep, "src_keep")
        memory, _ = self.encoder(self.embed(src, "encoder"), padding_mask(src_keep))
        return memory, src_keep

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src_keep: torch.Tensor, *,
               tgt_keep: torch.Tensor | None = None, cache=None) -> torch.Tensor:
        """tgt_in (B, T) → decoder states (B, T, C): causal self-attention + cross-attention to ``memory``.

        With a ``cache`` (:meth:`coursekit.transformer.layers.Decoder.new_cache`) ``tgt_in`` holds the new tokens only.
        """
        check_tensor(memory, "memory", ndim=3, floating=True)
        check_size(memory, "memory", 2, self.config.d_model, "d_model")
        check_bool_mask(src_keep, "src_keep", memory.shape[:2])
        offset = cache.length if cache is not None else 0
        self_mask = None if cache is not None else padding_mask(self._keep(tgt_in, tgt_keep, "tgt_keep"))
        h, _ = self.decoder(self.embed(tgt_in, "decoder", offset), memory, self_mask=self_mask,
                            memory_mask=padding_mask(src_keep), causal=True, cache=cache)
        return h  # (B, T, C)

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        """Tied output projection: logits = h Eᵀ + final_logits_bias, (B, T, C) → (B, T, V)."""
        check_tensor(h, "h", floating=True)
        check_size(h, "h", -1, self.config.d_model, "d_model")
        return F.linear(h, self.shared.weight) + self.final_logits_bias

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor | None = None, src_keep: torch.Tensor | None = None,
                tgt_keep: torch.Tensor | None = None) -> torch.Tensor:
        if tgt_in is None:
            tgt_in = shift_tokens_right(src, self.config.pad_id, self.config.decoder_start_id)
        if src.dim() != 2 or tgt_in.dim() != 2 or src.shape[0] != tgt_in.shape[0]:
            raise ValueError(f"src and tgt_in must be (B, S) and (B, T) with the same B, "
                             f"got {tuple(src.shape)} and {tuple(tgt_in.shape)}")
        memory, src_keep = self.encode(src, src_keep)
        return self.lm_head(self.decode(tgt_in, memory, src_keep, tgt_keep=tgt_keep))  # (B, T, V)

    # ---- generation through coursekit.decoding
    def start(self, src: torch.Tensor, src_keep: torch.Tensor | None = None) -> TransformerState:
        """Encode once; the state carries the memory, its mask and the decoder's KV caches."""
        memory, src_keep = self.encode(src, src_keep)
        return TransformerState(memory, src_keep, self.decoder.new_cache())

    def step(self, prefix: torch.Tensor, state: TransformerState) -> tuple[torch.Tensor, TransformerState]:
        """The ``step(prefix, state)`` of :mod:`coursekit.decoding`: only the last token is new (KV cache)."""
        h = self.decode(prefix[:, -1:], state.memory, state.src_keep, cache=state.cache)  # (N, 1, C)
        return torch.log_softmax(self.lm_head(h[:, -1]).float(), dim=-1), state            # (N, V)

    @torch.no_grad()
    def generate(self, src: torch.Tensor, src_keep: torch.Tensor | None = None, *, max_len: int = 50,
                 beam_size: int = 1, length_penalty: float = 0.0) -> SearchResult:
        """Greedy (``beam_size=1``) or beam search from ``decoder_start_id`` until ``</s>`` or ``max_len``."""
        check_positive_int(max_len, "max_len")
        check_positive_int(beam_size, "beam_size")
        if isinstance(length_penalty, bool) or not isinstance(length_penalty, (int, float)):
            raise TypeError(f"length_penalty must be a number, got {type(length_penalty).__name__}")
        max_len = min(max_len, self.config.max_len)
        state = self.start(src, src_keep)
        common = dict(batch_size=src.shape[0], bos_id=self.config.decoder_start_id, eos_id=self.config.eos_id,
                      max_len=max_len, device=src.device)
        if beam_size == 1:
            return greedy_search(self.step, state, **common)
        return beam_search(self.step, state, beam_size=beam_size, length_penalty=length_penalty,
                           reorder=TransformerState.reordered, **common)

    # ---- checkpoints
    @classmethod
    def from_hf(cls, source, *, dtype: torch.dtype | None = None) -> Bart:
        """Load a ``transformers`` ``BartForConditionalGeneration`` / ``BartModel`` (object or local directory)."""
        check_float_dtype(dtype)
        hf_config, state = read_checkpoint(source)
        model = cls(BartConfig.from_hf_config(hf_config))
        if dtype is not None:
            model.to(dtype)           # before copying: float64 weights must not pass through float32
        state = _strip_prefix(state)
        model._load_hf(state, model.hf_key_map(), allowed_extra=set())
        return model.eval()

    def hf_key_map(self, prefix: str = "") -> dict[str, str]:
        """``{Hugging Face key (``model.`` dropped): our key}`` for every parameter and buffer."""
        m = {"shared.weight": f"{prefix}shared.weight", "final_logits_bias": f"{prefix}final_logits_bias"}
        for stack in ("encoder", "decoder"):
            m[f"{stack}.embed_positions.weight"] = f"{prefix}{stack}_positions.embedding.weight"
            for p in ("weight", "bias"):
                m[f"{stack}.layernorm_embedding.{p}"] = f"{prefix}{stack}_embed_norm.{p}"
        for stack, n_layers, names in (("encoder", self.config.n_encoder_layers, _HF_ENCODER_LAYER),
                                       ("decoder", self.config.n_decoder_layers, _HF_DECODER_LAYER)):
            for i in range(n_layers):
                for theirs, ours in names.items():
                    for p in ("weight", "bias"):
                        m[f"{stack}.layers.{i}.{theirs}.{p}"] = f"{prefix}{stack}.layers.{i}.{ours}.{p}"
        return m

    def _load_hf(self, state: dict[str, torch.Tensor], key_map: dict[str, str], allowed_extra: set[str],
                 module: nn.Module | None = None) -> None:
        """Copy ``state`` through ``key_map``; tied copies of the token embedding must equal it."""
        module = self if module is None else module
        state = dict(state)
        tied = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")
        if "shared.weight" not in state:   # safetensors files keep one name of a tied tensor
            for k in tied:
                if k in state:
                    state["shared.weight"] = state[k]
                    break
        optional = {"final_logits_bias"}   # BartModel / BartForSequenceClassification have none (zeros)
        missing = sorted(k for k in key_map if k not in state and k not in optional)
        unexpected = sorted(k for k in state if k not in key_map and k not in tied and k not in allowed_extra)
        if missing or unexpected:
            raise ValueError("the checkpoint's keys do not match a BART of this config:\n"
                             f"  missing from the checkpoint: {missing}\n"
                             f"  in the checkpoint but not in the model: {unexpected}")
        for k in tied:
            if k in state and not torch.equal(state[k], state["shared.weight"]):
                raise ValueError(f"{k} differs from shared.weight: the course's BART ties the token embeddings of "
                                 "encoder, decoder and output projection")
        ours = module.state_dict()
        wrong = [f"{k}: checkpoint {tuple(state[k].shape)} vs model {tuple(ours[v].shape)}"
                 for k, v in key_map.items() if k in state and state[k].shape != ours[v].shape]
        if wrong:
            raise ValueError("the checkpoint's tensor shapes do not match its config:\n  " + "\n  ".join(wrong))
        with torch.no_grad():
            for theirs, mine in key_map.items():
                if theirs in state:
                    ours[mine].copy_(state[theirs])

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in asdict(self.config).items()
                         if k in ("vocab_size", "d_model", "n_encoder_layers", "n_decoder_layers", "n_heads"))


# Hugging Face's names inside {encoder,decoder}.layers.{i} → the layer names of coursekit.transformer.layers
_HF_ENCODER_LAYER = {
    "self_attn.q_proj": "self_attn.q_proj", "self_attn.k_proj": "self_attn.k_proj",
    "self_attn.v_proj": "self_attn.v_proj", "self_attn.out_proj": "self_attn.out_proj",
    "self_attn_layer_norm": "norm1",          # LN(x + SelfAttn(x))
    "fc1": "ff.linear1", "fc2": "ff.linear2",
    "final_layer_norm": "norm2",              # LN(x + FFN(x))
}
_HF_DECODER_LAYER = {
    **{k: v for k, v in _HF_ENCODER_LAYER.items() if k != "final_layer_norm"},
    "encoder_attn.q_proj": "cross_attn.q_proj", "encoder_attn.k_proj": "cross_attn.k_proj",
    "encoder_attn.v_proj": "cross_attn.v_proj", "encoder_attn.out_proj": "cross_attn.out_proj",
    "encoder_attn_layer_norm": "norm2",       # LN(x + CrossAttn(x, memory))
    "final_layer_norm": "norm3",
}


def _strip_prefix(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k.removeprefix("model."): v for k, v in state.items()}
