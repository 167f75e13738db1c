"""Llama: the decoder-only Transformer of today's open models, as a few changes to GPT-2 (notebook 13).

Touvron et al. (2023a), *LLaMA: Open and Efficient Foundation Language Models*, §2.2, and (2023b), *Llama 2*, §2.2:
the GPT-2 decoder (Radford et al. 2019; :mod:`coursekit.gpt.model`) with

* pre-normalisation with **RMSNorm** (Zhang & Sennrich 2019) instead of LayerNorm, and a final RMSNorm;
* the **SwiGLU** feed-forward block (Shazeer 2020) instead of GELU, hidden width ≈ ⅔ · 4C;
* **rotary position embeddings** (Su et al. 2021) on queries and keys instead of learned absolute positions;
* **grouped-query attention** (Ainslie et al. 2023; Llama 2's 34B/70B and every Llama 3) to shrink the KV cache;
* no biases anywhere, and (in most sizes) an output layer *not* tied to the embeddings.

One block, pre-norm with two residual branches:

    h   = x + Attention(RMSNorm(x))          (GQA with RoPE, causal)
    out = h + SwiGLU(RMSNorm(h))

:func:`kv_cache_bytes_per_token` is the memory argument for GQA; :func:`n_parameters` the parameter count from a
config. Hugging Face ``LlamaForCausalLM`` checkpoints are imported by :func:`coursekit.llama.hf.from_hf`.

Shapes: ``B`` batch, ``T`` positions, ``C = d_model``, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from coursekit.attention import KVCache
from coursekit.llama.layers import GroupedQueryAttention, RMSNorm, SwiGLU
from coursekit.llama.rope import rope_angles
from coursekit.validation import check_count, check_positive_float, check_positive_int, check_tensor, check_token_ids

__all__ = ["Llama", "LlamaBlock", "LlamaConfig", "kv_cache_bytes_per_token", "n_parameters"]


@dataclass(frozen=True)
class LlamaConfig:
    """Sizes of a Llama. ``d_head = d_model / n_heads``; ``n_kv_heads`` divides ``n_heads`` (= for multi-head
    attention, 1 for multi-query attention). Hugging Face's names: ``hidden_size``, ``num_hidden_layers``,
    ``num_attention_heads``, ``num_key_value_heads``, ``intermediate_size``, ``max_position_embeddings``,
    ``rope_theta``, ``rms_norm_eps``, ``tie_word_embeddings`` (:func:`coursekit.llama.hf.config_from_hf`)."""

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int                        # the SwiGLU hidden width
    max_len: int                     # the context: RoPE tables exist for positions 0 … max_len-1
    rope_base: float = 10000.0       # θ_i = rope_base^(−2i/d_head)
    norm_eps: float = 1e-6
    tie_embeddings: bool = False     # lm_head.weight is embed.weight

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff", "max_len"):
            check_positive_int(getattr(self, name), name)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads={self.n_heads} must be divisible by n_kv_heads={self.n_kv_heads} "
                             f"(each key/value head serves a whole group of query heads)")
        if self.d_head % 2:
            raise ValueError(f"d_head = d_model / n_heads = {self.d_head} must be even (RoPE rotates pairs)")
        check_positive_float(self.rope_base, "rope_base")
        check_positive_float(self.norm_eps, "norm_eps")
        if not isinstance(self.tie_embeddings, bool):
            raise TypeError(f"tie_embeddings must be a bool, got {type(self.tie_embeddings).__name__}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads


def _check_config(config) -> LlamaConfig:
    if not isinstance(config, LlamaConfig):
        raise TypeError(f"config must be a coursekit.llama.model.LlamaConfig, got {type(config).__name__}")
    return config


class LlamaBlock(nn.Module):
    """Pre-norm decoder block: x + GQA(RMSNorm(x)), then h + SwiGLU(RMSNorm(h))."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        c = _check_config(config)
        self.attn_norm = RMSNorm(c.d_model, c.norm_eps)      # HF: input_layernorm
        self.attn = GroupedQueryAttention(c.d_model, c.n_heads, c.n_kv_heads)
        self.mlp_norm = RMSNorm(c.d_model, c.norm_eps)       # HF: post_attention_layernorm
        self.mlp = SwiGLU(c.d_model, c.d_ff)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: KVCache | None = None) -> torch.Tensor:
        h = x + self.attn(self.attn_norm(x), cos, sin, cache)                    # (B, T, C)
        return h + self.mlp(self.mlp_norm(h))                                    # (B, T, C)


class Llama(nn.Module):
    """Token embeddings → n_layers :class:`LlamaBlock` → RMSNorm → output layer (tied to the embeddings or not).

    There is no position embedding: positions enter only through RoPE inside attention. The RoPE tables are
    computed once (``rope_cos``, ``rope_sin``, not saved in the state dict) and shared by every block.
    """

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.config = c = _check_config(config)
        self.embed = nn.Embedding(c.vocab_size, c.d_model)                       # HF: model.embed_tokens
        self.blocks = nn.ModuleList(LlamaBlock(c) for _ in range(c.n_layers))
        self.norm = RMSNorm(c.d_model, c.norm_eps)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        if c.tie_embeddings:
            self.lm_head.weight = self.embed.weight
        cos, sin = rope_angles(c.d_head, c.max_len, c.rope_base)
        self.register_buffer("rope_cos", cos, persistent=False)                  # (max_len, d_head)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        """N(0, 0.02) for every matrix, as Hugging Face initialises a Llama (``initializer_range``); gains at 1."""
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def new_cache(self) -> list[KVCache]:
        """One empty :class:`KVCache` per block; each will hold keys/values (B, n_kv_heads, T, d_head)."""
        return [KVCache() for _ in self.blocks]

    def _check_cache(self, cache) -> None:
        if not isinstance(cache, (list, tuple)) or not all(isinstance(c, KVCache) for c in cache):
            raise TypeError(f"cache must be a list of KVCache (one per block), got {type(cache).__name__}")
        if len(cache) != len(self.blocks):
            raise ValueError(f"cache must hold one KVCache per block ({len(self.blocks)}), got {len(cache)}")

    def forward(self, ids: torch.Tensor, cache: list[KVCache] | None = None) -> torch.Tensor:
        """Logits (B, T, V) of the next token after each position of ``ids`` (B, T).

        With a ``cache`` (:meth:`new_cache`), ``ids`` holds only the new tokens; their positions continue after the
        cached ones, and their keys/values are appended to it.
        """
        check_tensor(ids, "ids", ndim=2)
        check_token_ids(ids, "ids", self.config.vocab_size)
        if cache is not None:
            self._check_cache(cache)
        offset = cache[0].length if cache else 0
        T = ids.shape[1]
        if T == 0:
            raise ValueError(f"ids must hold at least one token per row, got shape {tuple(ids.shape)}")
        if offset + T > self.config.max_len:
            raise ValueError(f"sequence of {offset + T} tokens ({offset} cached + {T} new) is longer than the "
                             f"model's context max_len={self.config.max_len}")
        x = self.embed(ids)                                                      # (B, T, C)
        for i, block in enumerate(self.blocks):
            x = block(x, self.rope_cos, self.rope_sin, cache[i] if cache is not None else None)
        return self.lm_head(self.norm(x))                                        # (B, T, V)

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, max_new_tokens: int, *, use_cache: bool = True,
                 cache: list[KVCache] | None = None) -> torch.Tensor:
        """Greedy decoding: append ``max_new_tokens`` argmax tokens to ``ids`` (B, T) → (B, T + max_new_tokens).

        With ``use_cache`` the prompt is run once and then only the newest token per step, its queries attending
        to the cached keys/values; without it, every step recomputes the whole sequence (same tokens, more work).
        Pass your own empty ``cache`` (:meth:`new_cache`) to look at it afterwards. The result must fit the
        context (T + max_new_tokens ≤ max_len): RoPE has no angles beyond it.
        """
        check_tensor(ids, "ids", ndim=2)
        check_token_ids(ids, "ids", self.config.vocab_size)
        check_count(max_new_tokens, "max_new_tokens")
        if not isinstance(use_cache, bool):
            raise TypeError(f"use_cache must be a bool, got {type(use_cache).__name__}")
        if ids.shape[1] == 0:
            raise ValueError(f"ids must hold at least one token per row (the prompt), got shape {tuple(ids.shape)}")
        if ids.shape[1] + max_new_tokens > self.config.max_len:
            raise ValueError(f"a prompt of {ids.shape[1]} tokens + max_new_tokens={max_new_tokens} is longer than "
                             f"the model's context max_len={self.config.max_len}")
        if cache is not None:
            if not use_cache:
                raise ValueError("a cache was given with use_cache=False")
            self._check_cache(cache)
            if any(c.length for c in cache):
                raise ValueError(f"the cache must be empty (new_cache()), it already holds {cache[0].length} positions")
        elif use_cache:
            cache = self.new_cache()
        was_training = self.training
        self.eval()
        try:
            new = ids                                                            # what the next forward sees
            for _ in range(max_new_tokens):
                logits = self(new, cache) if use_cache else self(ids)            # (B, T', V)
                next_id = logits[:, -1].argmax(dim=-1, keepdim=True)             # (B, 1)
                ids = torch.cat([ids, next_id], dim=1)
                new = next_id
        finally:
            self.train(was_training)
        return ids


def kv_cache_bytes_per_token(config: LlamaConfig, bytes_per_value: int | float = 2) -> int | float:
    """Memory a KV cache needs per token of context, over the whole model:

        2 · n_layers · n_kv_heads · d_head · bytes_per_value

    (2: one key and one value vector per layer and key/value head; ``bytes_per_value`` 2 for bfloat16/float16,
    4 for float32). With multi-head attention n_kv_heads = n_heads, so d_head · n_kv_heads = d_model; GQA divides
    it by n_heads / n_kv_heads. Llama 2 70B (80 layers, 8 of 64 heads, d_head 128) in bfloat16: 320 KiB per token
    instead of 2.5 MiB. Multiply by batch size × context length for the whole cache.
    """
    c = _check_config(config)
    check_positive_float(bytes_per_value, "bytes_per_value")
    return 2 * c.n_layers * c.n_kv_heads * c.d_head * bytes_per_value


def n_parameters(config: LlamaConfig) -> int:
    """The number of parameters of a :class:`Llama` with this config (a tied output layer counted once):

        V·C  +  L · (C·H·d + 2·C·H_kv·d + H·d·C  +  3·C·d_ff  +  2·C)  +  C  (+ V·C untied)

    embeddings; per block W^Q, W^K and W^V (H_kv heads), W^O, SwiGLU's three matrices, two RMSNorm gains; the
    final RMSNorm; the output layer.
    """
    c = _check_config(config)
    C, d = c.d_model, c.d_head
    attention = C * c.n_heads * d + 2 * C * c.n_kv_heads * d + c.n_heads * d * C
    block = attention + 3 * C * c.d_ff + 2 * C
    head = 0 if c.tie_embeddings else c.vocab_size * C
    return c.vocab_size * C + c.n_layers * block + C + head
