"""The encoder–decoder Transformer: its config, the model and the state of cached decoding (notebook 08).

Vaswani et al. (2017), *Attention Is All You Need*, Fig. 1:

* §3.4  embeddings multiplied by √d_model; the output projection may share the target embedding.

The positional encodings, the FFN, the encoder/decoder layers and their stacks (with the decoder's
KV cache) are in :mod:`coursekit.transformer.layers`; :meth:`Transformer.from_torch` copies a
``torch.nn.Transformer`` weight for weight. Masks are bool, True = may attend (see :mod:`coursekit.attention`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import padding_mask
from coursekit.decoding.search import SearchResult, beam_search, greedy_search
from coursekit.decoding.translate import translator
from coursekit.transformer.layers import (
    Decoder,
    DecoderCache,
    Encoder,
    LearnedPositions,
    SinusoidalPositions,
    _check_activation,
    _torch_activation,
)
from coursekit.validation import (
    check_bool_mask,
    check_choice,
    check_labels,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_row_index,
    check_size,
    check_tensor,
    check_token_ids,
)

__all__ = [
    "Transformer",
    "TransformerConfig",
    "TransformerState",
]


# ----------------------------------------------------------------------------------------------
# The encoder–decoder model
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TransformerConfig:
    """Sizes of an encoder–decoder Transformer (the paper's base model: 512, 8 heads, 6+6 layers, 2048)."""

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = False
    layer_norm_eps: float = 1e-5
    max_len: int = 256
    positions: str = "sinusoidal"      # or "learned"
    tie_output: bool = True            # output projection shares the target embedding (§3.4)
    share_embeddings: bool = False     # one table for source and target too (a shared subword vocabulary)
    final_norm: bool = True            # final LayerNorm on each stack (as in torch.nn.Transformer)
    src_pad_id: int = 0
    tgt_pad_id: int = 0
    bos_id: int = 2                    # target <bos> / <eos> (coursekit.text.Vocab's specials order)
    eos_id: int = 3

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "n_encoder_layers",
                     "n_decoder_layers", "d_ff", "max_len"):
            check_positive_int(getattr(self, name), name)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        for name, vocab_size in (("src_pad_id", self.src_vocab_size), ("tgt_pad_id", self.tgt_vocab_size),
                                 ("bos_id", self.tgt_vocab_size), ("eos_id", self.tgt_vocab_size)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < vocab_size:
                raise ValueError(f"{name} must be an id in [0, {vocab_size}), got {value!r}")
        check_probability(self.dropout, "dropout", inclusive_high=False)
        check_positive_float(self.layer_norm_eps, "layer_norm_eps")
        if self.positions not in ("sinusoidal", "learned"):
            raise ValueError(f"positions must be 'sinusoidal' or 'learned', got {self.positions!r}")
        _check_activation(self.activation)
        if self.share_embeddings and (self.src_vocab_size, self.src_pad_id) != (self.tgt_vocab_size, self.tgt_pad_id):
            raise ValueError("share_embeddings needs one vocabulary: equal vocab sizes and pad ids, got "
                             f"{self.src_vocab_size}/{self.tgt_vocab_size} and {self.src_pad_id}/{self.tgt_pad_id}")


class Transformer(nn.Module):
    """Encoder–decoder Transformer for sequence-to-sequence tasks (Vaswani et al. 2017, Fig. 1).

    ``forward(src, tgt_in, src_keep=None, tgt_keep=None) -> logits (B, T, V_tgt)``, teacher-forced.
    ``encode`` / ``decode`` expose the two halves; :meth:`decode` with a :class:`DecoderCache`
    processes one new target token at a time for fast autoregressive decoding.
    Keep-masks are (B, S) / (B, T) bool, True at real tokens (as ``coursekit.text.pad_batch`` gives);
    when omitted they are derived from the pad ids.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {type(config).__name__}")
        c = self.config = config
        stack = dict(dropout=c.dropout, activation=c.activation, norm_first=c.norm_first,
                     layer_norm_eps=c.layer_norm_eps, final_norm=c.final_norm)
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model)
        Positions = SinusoidalPositions if c.positions == "sinusoidal" else LearnedPositions
        self.positions = Positions(c.max_len, c.d_model)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = Encoder(c.n_encoder_layers, c.d_model, c.n_heads, c.d_ff, **stack)
        self.decoder = Decoder(c.n_decoder_layers, c.d_model, c.n_heads, c.d_ff, **stack)
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        self._init_weights()
        if c.share_embeddings:
            self.src_embed = self.tgt_embed
        if c.tie_output:
            self.out_proj.weight = self.tgt_embed.weight

    def _init_weights(self) -> None:
        """Xavier-uniform matrices (as torch.nn.Transformer), N(0, d^-1/2) embeddings so that ×√d gives unit scale."""
        for name, p in self.named_parameters():
            if p.dim() > 1 and "embed" not in name:
                nn.init.xavier_uniform_(p)
        for emb in (self.src_embed, self.tgt_embed):
            nn.init.normal_(emb.weight, std=self.config.d_model ** -0.5)

    # ---- inputs
    def embed(self, ids: torch.Tensor, which: str, offset: int = 0) -> torch.Tensor:
        """Token embedding × √d_model + position encoding (then dropout): (B, T) -> (B, T, C)."""
        check_choice(which, "which", ("src", "tgt"))
        table = self.src_embed if which == "src" else self.tgt_embed
        check_tensor(ids, f"{which} ids", ndim=2)
        check_token_ids(ids, f"{which} ids", table.num_embeddings)
        if ids.shape[0] == 0:
            raise ValueError(f"{which} ids must hold at least one sentence, got shape {tuple(ids.shape)}")
        if ids.shape[1] == 0:
            raise ValueError(f"{which} ids must hold at least one position, got shape {tuple(ids.shape)}")
        x = table(ids) * math.sqrt(self.config.d_model) + self.positions(ids.shape[1], offset)
        return self.dropout(x)  # (B, T, C)

    def _keep(self, ids: torch.Tensor, keep: torch.Tensor | None, pad_id: int, name: str) -> torch.Tensor:
        if keep is None:
            return ids != pad_id
        check_tensor(keep, name, dtype=torch.bool)
        if keep.shape != ids.shape:
            raise ValueError(f"{name} must have the shape of the ids {tuple(ids.shape)}, got {tuple(keep.shape)}")
        return keep

    # ---- the two halves
    def encode(self, src: torch.Tensor, src_keep: torch.Tensor | None = None, *, need_weights: bool = False):
        """src (B, S) ids -> ``(memory (B, S, C), src_keep (B, S), encoder weights or None)``.

        Every source row needs at least one real token (an all-padding row would have nothing to attend to).
        """
        x = self.embed(src, "src")
        src_keep = self._keep(src, src_keep, self.config.src_pad_id, "src_keep")
        empty = ~src_keep.any(dim=1)
        if bool(empty.any()):
            raise ValueError(f"src_keep: every source row needs at least one real token; "
                             f"row {int(empty.nonzero()[0])} has none")
        memory, weights = self.encoder(x, padding_mask(src_keep), need_weights=need_weights)
        return memory, src_keep, weights

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src_keep: torch.Tensor, *,
               tgt_keep: torch.Tensor | None = None, cache: DecoderCache | None = None, need_weights: bool = False):
        """tgt_in (B, T) ids -> ``(logits (B, T, V), decoder weights or None)``.

        With ``cache``, ``tgt_in`` holds only the new tokens; their positions start at ``cache.length``.
        """
        check_tensor(memory, "memory", ndim=3, floating=True)
        check_bool_mask(src_keep, "src_keep", memory.shape[:2])
        offset = cache.length if cache is not None else 0
        self_mask = None
        if tgt_keep is not None or cache is None:
            self_mask = padding_mask(self._keep(tgt_in, tgt_keep, self.config.tgt_pad_id, "tgt_keep"))
            if cache is not None and offset:
                raise ValueError("tgt_keep cannot be combined with a non-empty cache; decode real tokens only")
        h, weights = self.decoder(self.embed(tgt_in, "tgt", offset), memory, self_mask=self_mask,
                                  memory_mask=padding_mask(src_keep), causal=True, cache=cache,
                                  need_weights=need_weights)
        return self.out_proj(h), weights  # (B, T, V)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, src_keep: torch.Tensor | None = None,
                tgt_keep: torch.Tensor | None = None) -> torch.Tensor:
        """Teacher-forced logits (B, T, V_tgt) for decoder inputs ``tgt_in`` (``<bos>`` + target)."""
        check_tensor(src, "src")
        check_tensor(tgt_in, "tgt_in")
        if src.dim() != 2 or tgt_in.dim() != 2 or src.shape[0] != tgt_in.shape[0]:
            raise ValueError(f"src and tgt_in must be (B, S) and (B, T) with the same B, "
                             f"got {tuple(src.shape)} and {tuple(tgt_in.shape)}")
        memory, src_keep, _ = self.encode(src, src_keep)
        logits, _ = self.decode(tgt_in, memory, src_keep, tgt_keep=tgt_keep)
        return logits

    def attention_maps(self, src: torch.Tensor, tgt_in: torch.Tensor, src_keep: torch.Tensor | None = None,
                       tgt_keep: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """All attention weights, stacked per layer: ``encoder`` (L, B, H, S, S), ``decoder_self``
        (L, B, H, T, T) and ``cross`` (L, B, H, T, S)."""
        memory, src_keep, enc_w = self.encode(src, src_keep, need_weights=True)
        _, dec_w = self.decode(tgt_in, memory, src_keep, tgt_keep=tgt_keep, need_weights=True)
        return {"encoder": torch.stack(enc_w), "decoder_self": torch.stack([w["self"] for w in dec_w]),
                "cross": torch.stack([w["cross"] for w in dec_w])}

    # ---- autoregressive decoding
    def start(self, src: torch.Tensor, src_keep: torch.Tensor | None = None) -> TransformerState:
        """Encode the source once and return the decoding state used by :meth:`step`."""
        memory, src_keep, _ = self.encode(src, src_keep)
        return TransformerState(memory, src_keep, self.decoder.new_cache())

    def step(self, tokens: torch.Tensor, state: TransformerState) -> torch.Tensor:
        """Feed the last tokens (B,) and return next-token log-probabilities (B, V); updates ``state``."""
        if not isinstance(state, TransformerState):
            raise TypeError(f"state must be a TransformerState (from model.start), got {type(state).__name__}")
        check_tensor(tokens, "tokens", ndim=1, dtype=(torch.int64, torch.int32))
        check_size(tokens, "tokens", 0, state.memory.shape[0], "the batch of the state")
        logits, _ = self.decode(tokens[:, None], state.memory, state.src_keep, cache=state.cache)
        return torch.log_softmax(logits[:, -1].float(), dim=-1)  # (B, V)

    def loss(self, batch, *, label_smoothing: float = 0.0) -> torch.Tensor:
        """Mean cross-entropy per real target token of a ``coursekit.translation.TranslationBatch``
        (padding ignored), optionally with label smoothing (§5.4 uses ε = 0.1)."""
        _check_batch(batch, self.config.tgt_vocab_size, self.config.tgt_pad_id)
        check_probability(label_smoothing, "label_smoothing")
        logits = self(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (B, T, V)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.tgt_out.reshape(-1),
                               ignore_index=self.config.tgt_pad_id, label_smoothing=label_smoothing)

    @torch.no_grad()
    def translate(self, src: torch.Tensor, src_keep: torch.Tensor | None = None, *, beam_size: int = 1,
                  max_len: int = 20, length_penalty: float = 0.0) -> SearchResult:
        """Greedy (``beam_size=1``) or beam search through :mod:`coursekit.decoding`, one cached step at a time."""
        check_positive_int(beam_size, "beam_size")
        check_positive_int(max_len, "max_len")
        state = self.start(src, src_keep)

        def step(prefix: torch.Tensor, st: TransformerState):
            return self.step(prefix[:, -1], st), st  # the cache already holds prefix[:, :-1]

        kwargs = dict(batch_size=src.shape[0], bos_id=self.config.bos_id, eos_id=self.config.eos_id,
                      max_len=min(max_len, self.config.max_len), device=src.device)
        if beam_size == 1 and length_penalty == 0.0:
            return greedy_search(step, state, **kwargs)
        return beam_search(step, state, beam_size=beam_size, length_penalty=length_penalty,
                           reorder=TransformerState.reordered, **kwargs)

    def translator(self, *, beam_size: int = 1, max_len: int = 20, length_penalty: float = 0.0):
        """``batch → list of target id lists`` for ``TranslationData.evaluate``."""
        return translator(self, beam_size=beam_size, max_len=max_len, length_penalty=length_penalty)

    @classmethod
    def from_torch(cls, ref: nn.Transformer, src_vocab_size: int, tgt_vocab_size: int, **config) -> Transformer:
        """A model whose encoder and decoder stacks are copies of ``ref``'s (embeddings/output stay freshly
        initialised: ``nn.Transformer`` has none)."""
        if not isinstance(ref, nn.Transformer):
            raise TypeError(f"expected nn.Transformer, got {type(ref).__name__}")
        enc_layer, dec_layer = ref.encoder.layers[0], ref.decoder.layers[0]
        cfg = TransformerConfig(
            src_vocab_size, tgt_vocab_size, d_model=ref.d_model, n_heads=ref.nhead,
            n_encoder_layers=len(ref.encoder.layers), n_decoder_layers=len(ref.decoder.layers),
            d_ff=enc_layer.linear1.out_features, dropout=enc_layer.dropout.p,
            activation=_torch_activation(enc_layer), norm_first=enc_layer.norm_first,
            layer_norm_eps=enc_layer.norm1.eps,
            final_norm=ref.encoder.norm is not None and ref.decoder.norm is not None, **config)
        new = cls(cfg).to(dec_layer.linear1.weight.dtype)
        new.encoder = Encoder.from_torch(ref.encoder)
        new.decoder = Decoder.from_torch(ref.decoder)
        return new.train(ref.training)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in asdict(self.config).items()
                         if k in ("d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "norm_first"))


@dataclass
class TransformerState:
    """What autoregressive decoding carries between steps: the encoder memory, its mask and the caches."""

    memory: torch.Tensor     # (B, S, C)
    src_keep: torch.Tensor   # (B, S) bool
    cache: DecoderCache

    def __post_init__(self) -> None:
        check_tensor(self.memory, "memory", ndim=3, floating=True)
        check_bool_mask(self.src_keep, "src_keep", self.memory.shape[:2])
        if not isinstance(self.cache, DecoderCache):
            raise TypeError(f"cache must be a DecoderCache, got {type(self.cache).__name__}")

    def reorder(self, index: torch.Tensor) -> None:
        """Keep batch rows ``index`` (beam search)."""
        index = check_row_index(index, self.memory.shape[0], self.memory.device)
        self.memory = self.memory.index_select(0, index)
        self.src_keep = self.src_keep.index_select(0, index)
        self.cache._select(index)

    def reordered(self, index: torch.Tensor) -> TransformerState:
        """:meth:`reorder` in place and return the state (the ``reorder=`` hook of beam search)."""
        self.reorder(index)
        return self


def _check_batch(batch, vocab_size: int, pad_id: int) -> None:
    """A ``TranslationBatch`` whose targets are class ids for the loss: cross-entropy would fail deep inside
    torch on anything else (float targets, ids outside the vocabulary)."""
    if not all(hasattr(batch, name) for name in ("src", "src_mask", "tgt_in", "tgt_out", "tgt_mask")):
        raise TypeError(f"batch must be a TranslationBatch (with src, src_mask, tgt_in, tgt_out and tgt_mask), "
                        f"got {type(batch).__name__}")
    check_labels(batch.tgt_out, "batch.tgt_out", vocab_size, ignore_index=pad_id)
    if batch.tgt_out.shape != batch.tgt_in.shape:
        raise ValueError(f"batch.tgt_out must have the shape of batch.tgt_in {tuple(batch.tgt_in.shape)}, "
                         f"got {tuple(batch.tgt_out.shape)}")
