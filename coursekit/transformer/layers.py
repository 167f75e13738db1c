"""The Transformer's building blocks: positional encodings, the FFN, encoder/decoder layers and stacks (notebook 08).

Vaswani et al. (2017), *Attention Is All You Need*:

* §3.1  encoder layer: self-attention → add & LayerNorm → position-wise FFN → add & LayerNorm;
        decoder layer: masked self-attention, encoder–decoder (cross) attention, FFN, each with
        add & LayerNorm. This "post-LN" order is the paper's; ``norm_first=True`` gives the "pre-LN"
        order x + Sublayer(LN(x)) (Xiong et al. 2020) that GPT-2 and most later models use.
* §3.3  FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (ReLU; BERT/GPT use GELU).
* §3.5  PE(pos, 2i) = sin(pos / 10000^{2i/d}),  PE(pos, 2i+1) = cos(pos / 10000^{2i/d}).

The layers are configurable enough to build BERT (post-LN, GELU, eps 1e-12), GPT-2 (pre-LN,
tanh-GELU, ``DecoderLayer(cross_attention=False)``) and BART (post-LN, GELU, learned positions),
and they mirror ``torch.nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer`` weight for
weight (``from_torch``). Masks are bool, True = may attend (see :mod:`coursekit.attention`).
The encoder–decoder model assembled from them is :mod:`coursekit.transformer.model`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import KVCache, MultiHeadAttention
from coursekit.validation import (
    check_positive_float,
    check_positive_int,
    check_probability,
    check_row_index,
    check_same_dtype,
    check_tensor,
)

__all__ = [
    "ACTIVATIONS",
    "Decoder",
    "DecoderCache",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "FeedForward",
    "LearnedPositions",
    "SinusoidalPositions",
    "sinusoidal_positions",
]


# ----------------------------------------------------------------------------------------------
# Positional encodings, §3.5
# ----------------------------------------------------------------------------------------------

def sinusoidal_positions(T: int, d: int, *, base: float = 10000.0) -> torch.Tensor:
    """The ``(T, d)`` table PE[pos, 2i] = sin(pos / base^{2i/d}), PE[pos, 2i+1] = cos(pos / base^{2i/d})."""
    check_positive_int(T, "T")
    check_positive_int(d, "d")
    check_positive_float(base, "base")
    pos = torch.arange(T, dtype=torch.float64).unsqueeze(1)            # (T, 1)
    two_i = torch.arange(0, d, 2, dtype=torch.float64)                 # (ceil(d/2),) = 0, 2, 4, …
    angle = pos / base ** (two_i / d)                                  # (T, ceil(d/2))
    pe = torch.empty(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe.to(torch.get_default_dtype())  # (T, d)


class SinusoidalPositions(nn.Module):
    """Fixed sinusoidal encodings (a buffer, no parameters): ``forward(T, offset=0) -> (T, d)``."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = check_positive_int(max_len, "max_len")
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model), persistent=False)

    def forward(self, T: int, offset: int = 0) -> torch.Tensor:
        _check_positions(T, offset, self.max_len)
        return self.pe[offset:offset + T]  # (T, d)


class LearnedPositions(nn.Module):
    """Learned absolute position embeddings (BERT, GPT-2, BART): ``forward(T, offset=0) -> (T, d)``."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = check_positive_int(max_len, "max_len")
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, T: int, offset: int = 0) -> torch.Tensor:
        _check_positions(T, offset, self.max_len)
        return self.embedding.weight[offset:offset + T]  # (T, d)


def _check_positions(T: int, offset: int, max_len: int) -> None:
    check_positive_int(T, "T")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a non-negative int, got {offset!r}")
    if T + offset > max_len:
        raise ValueError(f"positions {offset}..{offset + T - 1} exceed the model's context of max_len={max_len}")


# ----------------------------------------------------------------------------------------------
# Position-wise feed-forward network, §3.3
# ----------------------------------------------------------------------------------------------

ACTIVATIONS = {
    "relu": F.relu,
    "gelu": F.gelu,                                                     # exact, erf-based (BERT, BART)
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),               # GPT-2's approximation
}


def _check_activation(activation: str) -> str:
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    return activation


class FeedForward(nn.Module):
    """FFN(x) = act(x W_1 + b_1) W_2 + b_2, applied at each position independently: (B, T, C) -> (B, T, C)."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", dropout: float = 0.0,
                 bias: bool = True) -> None:
        super().__init__()
        self.d_model = check_positive_int(d_model, "d_model")
        check_positive_int(d_ff, "d_ff")
        check_probability(dropout, "dropout", inclusive_high=False)
        self.activation = _check_activation(activation)
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor(x, "x", floating=True)
        if x.dim() == 0 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dim d_model={self.d_model}, got {tuple(x.shape)}")
        check_same_dtype(x, "x", self.linear1.weight)
        return self.linear2(self.dropout(ACTIVATIONS[self.activation](self.linear1(x))))  # (B, T, C)


# ----------------------------------------------------------------------------------------------
# Encoder and decoder layers, §3.1
# ----------------------------------------------------------------------------------------------

class EncoderLayer(nn.Module):
    """Self-attention and FFN sublayers, each wrapped in a residual connection and LayerNorm.

    post-LN (``norm_first=False``, the paper): x = LN(x + Dropout(Sublayer(x)))
    pre-LN  (``norm_first=True``):             x = x + Dropout(Sublayer(LN(x)))
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, dropout: float = 0.0, activation: str = "relu",
                 norm_first: bool = False, layer_norm_eps: float = 1e-5, bias: bool = True) -> None:
        super().__init__()
        check_positive_float(layer_norm_eps, "layer_norm_eps")
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout, bias=bias)
        self.ff = FeedForward(d_model, d_ff, activation, dropout, bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False,
                need_weights: bool = False):
        """x (B, T, C); ``mask`` bool broadcastable to (B, H, T, T). Returns ``(x, weights or None)``."""
        check_tensor(x, "x", ndim=3, floating=True)

        def attend(h):
            out, w = self.self_attn(h, mask=mask, causal=causal, need_weights=need_weights)
            return self.dropout(out), w

        if self.norm_first:
            a, w = attend(self.norm1(x))
            x = x + a
            x = x + self.dropout(self.ff(self.norm2(x)))
        else:
            a, w = attend(x)
            x = self.norm1(x + a)
            x = self.norm2(x + self.dropout(self.ff(x)))
        return x, w  # (B, T, C)

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> EncoderLayer:
        """A copy of ``nn.TransformerEncoderLayer`` (batch-first or not: the weights are the same)."""
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise TypeError(f"expected nn.TransformerEncoderLayer, got {type(layer).__name__}")
        new = cls(layer.self_attn.embed_dim, layer.self_attn.num_heads, layer.linear1.out_features,
                  dropout=layer.dropout.p, activation=_torch_activation(layer), norm_first=layer.norm_first,
                  layer_norm_eps=layer.norm1.eps, bias=layer.linear1.bias is not None)
        new.self_attn = MultiHeadAttention.from_torch(layer.self_attn)
        _copy_ff_and_norms(new, layer, n_norms=2)
        return new.to(layer.linear1.weight.dtype).train(layer.training)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder memory, FFN; residual + LayerNorm around each.

    With ``cross_attention=False`` the layer is a decoder-only (GPT) block: self-attention and FFN.
    The decoder's self-attention is causal by default (``causal=True``).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, dropout: float = 0.0, activation: str = "relu",
                 norm_first: bool = False, layer_norm_eps: float = 1e-5, bias: bool = True,
                 cross_attention: bool = True) -> None:
        super().__init__()
        check_positive_float(layer_norm_eps, "layer_norm_eps")
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout, bias=bias)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout, bias=bias) if cross_attention else None
        self.ff = FeedForward(d_model, d_ff, activation, dropout, bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias) if cross_attention else None
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None, *, self_mask: torch.Tensor | None = None,
                memory_mask: torch.Tensor | None = None, causal: bool = True, self_cache: KVCache | None = None,
                cross_cache: KVCache | None = None, need_weights: bool = False):
        """x (B, T, C), memory (B, S, C). Returns ``(x, {"self": w, "cross": w} or None)``.

        ``self_mask`` (True = attend) is combined with the causal mask; ``memory_mask`` masks the
        encoder's padding, e.g. ``padding_mask(src_keep)`` of shape (B, 1, 1, S). With caches, ``x``
        holds only the new positions (see :class:`coursekit.attention.KVCache`).
        """
        check_tensor(x, "x", ndim=3, floating=True)
        if memory is not None:
            check_tensor(memory, "memory", ndim=3, floating=True)
        if self.cross_attn is not None and memory is None and not (cross_cache is not None and cross_cache.length):
            raise ValueError("this decoder layer has cross-attention: pass the encoder output as memory")
        if self.cross_attn is None and memory is not None:
            raise ValueError("this decoder layer has no cross-attention (cross_attention=False); memory must be None")
        weights = {}

        def self_block(h):
            out, weights["self"] = self.self_attn(h, mask=self_mask, causal=causal, cache=self_cache,
                                                  need_weights=need_weights)
            return self.dropout(out)

        def cross_block(h):
            out, weights["cross"] = self.cross_attn(h, memory, mask=memory_mask, cache=cross_cache,
                                                    need_weights=need_weights)
            return self.dropout(out)

        if self.norm_first:
            x = x + self_block(self.norm1(x))
            if self.cross_attn is not None:
                x = x + cross_block(self.norm2(x))
            x = x + self.dropout(self.ff(self.norm3(x)))
        else:
            x = self.norm1(x + self_block(x))
            if self.cross_attn is not None:
                x = self.norm2(x + cross_block(x))
            x = self.norm3(x + self.dropout(self.ff(x)))
        return x, (weights if need_weights else None)  # (B, T, C)

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> DecoderLayer:
        """A copy of ``nn.TransformerDecoderLayer``."""
        if not isinstance(layer, nn.TransformerDecoderLayer):
            raise TypeError(f"expected nn.TransformerDecoderLayer, got {type(layer).__name__}")
        new = cls(layer.self_attn.embed_dim, layer.self_attn.num_heads, layer.linear1.out_features,
                  dropout=layer.dropout.p, activation=_torch_activation(layer), norm_first=layer.norm_first,
                  layer_norm_eps=layer.norm1.eps, bias=layer.linear1.bias is not None)
        new.self_attn = MultiHeadAttention.from_torch(layer.self_attn)
        new.cross_attn = MultiHeadAttention.from_torch(layer.multihead_attn)
        _copy_ff_and_norms(new, layer, n_norms=3)
        return new.to(layer.linear1.weight.dtype).train(layer.training)


def _torch_activation(layer) -> str:
    act = layer.activation
    if act is F.relu or isinstance(act, nn.ReLU):
        return "relu"
    if act is F.gelu or (isinstance(act, nn.GELU) and act.approximate == "none"):
        return "gelu"
    if isinstance(act, nn.GELU) and act.approximate == "tanh":
        return "gelu_tanh"
    raise ValueError(f"unsupported activation {act!r}: expected relu or gelu")


def _copy_ff_and_norms(new: nn.Module, layer: nn.Module, n_norms: int) -> None:
    with torch.no_grad():
        pairs = [(new.ff.linear1, layer.linear1), (new.ff.linear2, layer.linear2)]
        pairs += [(getattr(new, f"norm{i}"), getattr(layer, f"norm{i}")) for i in range(1, n_norms + 1)]
        for ours, theirs in pairs:
            ours.weight.copy_(theirs.weight)
            if theirs.bias is not None:
                ours.bias.copy_(theirs.bias)


def _copy_norm(ours: nn.LayerNorm | None, theirs: nn.LayerNorm | None) -> nn.LayerNorm | None:
    if theirs is None:
        return None
    if ours is None:
        ours = nn.LayerNorm(theirs.normalized_shape, eps=theirs.eps, bias=theirs.bias is not None)
    ours.load_state_dict(theirs.state_dict())
    return ours.to(theirs.weight.dtype)


# ----------------------------------------------------------------------------------------------
# Stacks
# ----------------------------------------------------------------------------------------------

class Encoder(nn.Module):
    """``n_layers`` :class:`EncoderLayer` s; a final LayerNorm when ``final_norm`` (default: with pre-LN).

    A pre-LN stack needs the final LayerNorm (its residual stream is never normalised otherwise);
    ``torch.nn.Transformer`` adds one to post-LN stacks too, so ``from_torch`` keeps it.
    """

    def __init__(self, n_layers: int, d_model: int, n_heads: int, d_ff: int, *, dropout: float = 0.0,
                 activation: str = "relu", norm_first: bool = False, layer_norm_eps: float = 1e-5,
                 bias: bool = True, final_norm: bool | None = None) -> None:
        super().__init__()
        check_positive_int(n_layers, "n_layers")
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, n_heads, d_ff, dropout=dropout, activation=activation, norm_first=norm_first,
                         layer_norm_eps=layer_norm_eps, bias=bias) for _ in range(n_layers))
        final_norm = norm_first if final_norm is None else final_norm
        self.norm = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias) if final_norm else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, need_weights: bool = False):
        """x (B, S, C), ``mask`` e.g. ``padding_mask(src_keep)``. Returns ``(memory, [weights per layer])``."""
        all_weights = []
        for layer in self.layers:
            x, w = layer(x, mask, need_weights=need_weights)
            all_weights.append(w)
        if self.norm is not None:
            x = self.norm(x)
        return x, (all_weights if need_weights else None)  # (B, S, C)

    @classmethod
    def from_torch(cls, encoder: nn.TransformerEncoder) -> Encoder:
        if not isinstance(encoder, nn.TransformerEncoder):
            raise TypeError(f"expected nn.TransformerEncoder, got {type(encoder).__name__}")
        first = encoder.layers[0]
        new = cls(len(encoder.layers), first.self_attn.embed_dim, first.self_attn.num_heads,
                  first.linear1.out_features, final_norm=False)
        new.layers = nn.ModuleList(EncoderLayer.from_torch(layer) for layer in encoder.layers)
        new.norm = _copy_norm(None, encoder.norm)
        return new.train(encoder.training)


class Decoder(nn.Module):
    """``n_layers`` :class:`DecoderLayer` s and an optional final LayerNorm (default: with pre-LN)."""

    def __init__(self, n_layers: int, d_model: int, n_heads: int, d_ff: int, *, dropout: float = 0.0,
                 activation: str = "relu", norm_first: bool = False, layer_norm_eps: float = 1e-5,
                 bias: bool = True, cross_attention: bool = True, final_norm: bool | None = None) -> None:
        super().__init__()
        check_positive_int(n_layers, "n_layers")
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, n_heads, d_ff, dropout=dropout, activation=activation, norm_first=norm_first,
                         layer_norm_eps=layer_norm_eps, bias=bias, cross_attention=cross_attention)
            for _ in range(n_layers))
        final_norm = norm_first if final_norm is None else final_norm
        self.norm = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias) if final_norm else None

    def new_cache(self) -> DecoderCache:
        return DecoderCache(len(self.layers))

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None, *, self_mask: torch.Tensor | None = None,
                memory_mask: torch.Tensor | None = None, causal: bool = True, cache: DecoderCache | None = None,
                need_weights: bool = False):
        """x (B, T, C), memory (B, S, C). Returns ``(x, [{"self", "cross"} weights per layer] or None)``."""
        if cache is not None and (not isinstance(cache, DecoderCache) or len(cache.layers) != len(self.layers)):
            raise ValueError(f"cache must be a DecoderCache for {len(self.layers)} layers (use decoder.new_cache())")
        all_weights = []
        for i, layer in enumerate(self.layers):
            self_cache, cross_cache = cache.layers[i] if cache is not None else (None, None)
            x, w = layer(x, memory, self_mask=self_mask, memory_mask=memory_mask, causal=causal,
                         self_cache=self_cache, cross_cache=cross_cache, need_weights=need_weights)
            all_weights.append(w)
        if self.norm is not None:
            x = self.norm(x)
        return x, (all_weights if need_weights else None)  # (B, T, C)

    @classmethod
    def from_torch(cls, decoder: nn.TransformerDecoder) -> Decoder:
        if not isinstance(decoder, nn.TransformerDecoder):
            raise TypeError(f"expected nn.TransformerDecoder, got {type(decoder).__name__}")
        first = decoder.layers[0]
        new = cls(len(decoder.layers), first.self_attn.embed_dim, first.self_attn.num_heads,
                  first.linear1.out_features, final_norm=False)
        new.layers = nn.ModuleList(DecoderLayer.from_torch(layer) for layer in decoder.layers)
        new.norm = _copy_norm(None, decoder.norm)
        return new.train(decoder.training)


class DecoderCache:
    """Per decoder layer: a self-attention :class:`KVCache` and a static cross-attention one."""

    def __init__(self, n_layers: int) -> None:
        check_positive_int(n_layers, "n_layers")
        self.layers = [(KVCache(), KVCache(static=True)) for _ in range(n_layers)]

    @property
    def length(self) -> int:
        """How many target positions have been decoded (the offset of the next position)."""
        return self.layers[0][0].length

    def reorder(self, index: torch.Tensor) -> None:
        """Keep batch rows ``index`` in every cache (beam search)."""
        rows = [cache.k.shape[0] for pair in self.layers for cache in pair if cache.k is not None]
        self._select(check_row_index(index, rows[0] if rows else None))

    def _select(self, index: torch.Tensor) -> None:
        """:meth:`reorder` with an index already checked (once for all the layers)."""
        for self_cache, cross_cache in self.layers:
            self_cache._select(index)
            cross_cache._select(index)
