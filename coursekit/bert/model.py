"""BERT: the encoder-only model and its Hugging Face checkpoint import (notebook 09).

Devlin et al. 2019, *BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding*.

- **The model** (§3, Figure 2): token + segment + position embeddings → LayerNorm → dropout → a stack of
  post-LN encoder layers (GELU, eps 1e-12; the shared :class:`coursekit.transformer.layers.EncoderLayer`) → pooler
  (tanh of a linear map of the ``[CLS]`` vector). Heads: MLM (tied to the token embeddings) and NSP, the
  two pre-training tasks of §3.1.
- **Checkpoints**: :meth:`Bert.from_hf` loads a ``transformers`` BERT (model object or local directory).

The pre-training inputs and loss (masking, NSP pairs, the input format) are :mod:`coursekit.bert.objectives`;
tokenised batches, the fine-tuning heads and frozen features are :mod:`coursekit.bert.heads`; the
pre-trained weights on disk (the committed small BERT, all-MiniLM-L6-v2) are :mod:`coursekit.bert.checkpoint`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import padding_mask
from coursekit.transformer.hf import check_float_dtype, read_checkpoint
from coursekit.transformer.layers import EncoderLayer
from coursekit.validation import (
    check_bool_mask,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)

__all__ = [
    "Bert",
    "BertConfig",
    "BertEmbeddings",
    "BertOutput",
    "MaskedLMHead",
]


# ---------------------------------------------------------------------------------------------
# Input checks of the model, also used by the other coursekit.bert_* modules
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


def _check_bert(model, name: str = "model") -> None:
    if not isinstance(model, Bert):
        raise TypeError(f"{name} must be a coursekit.bert.model.Bert, got {type(model).__name__}")


def _check_config(config) -> None:
    if not isinstance(config, BertConfig):
        raise TypeError(f"config must be a BertConfig, got {type(config).__name__}")


def _check_keep_mask(mask: torch.Tensor, name: str, shape: tuple[int, int]) -> torch.Tensor:
    """A (B, T) keep-mask → bool, True at real tokens. Bool, or integer 0/1 as Hugging Face tokenizers and
    :func:`coursekit.bert.heads.encode_batch` give it. A float mask is refused: an additive mask (0 = keep,
    -inf = drop) cast to bool would be read the wrong way round."""
    check_tensor(mask, name)
    if tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name} must have the shape of input_ids {tuple(shape)}, got {tuple(mask.shape)}")
    if mask.dtype == torch.bool or mask.is_floating_point() or mask.is_complex():
        return check_bool_mask(mask, name)
    if mask.numel() and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(f"{name} must hold 0 (padding) and 1 (real token), got values in "
                         f"[{int(mask.min())}, {int(mask.max())}]")
    return mask.bool()


# ---------------------------------------------------------------------------------------------
# The model
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
        check_probability(self.dropout, "BertConfig.dropout", inclusive_high=False)
        check_probability(self.attention_dropout, "BertConfig.attention_dropout", inclusive_high=False)
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
            raise ValueError("this Hugging Face config is not a BERT that coursekit.bert.model can load: "
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
    post-LN :class:`coursekit.transformer.layers.EncoderLayer` with GELU and eps 1e-12.
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


# Hugging Face's names inside encoder.layer.{i} → the names of coursekit.transformer.layers.EncoderLayer
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
