"""GPT: a decoder-only Transformer language model in the GPT-2 layout (notebook 10).

Radford et al. (2018), *Improving Language Understanding by Generative Pre-Training* (GPT-1), and
Radford et al. (2019), *Language Models are Unsupervised Multitask Learners* (GPT-2):

* next-token objective  L(U) = Σ_i log P(u_i | u_{i-k}, …, u_{i-1}; Θ)          (GPT-1, Eq. 1)
* h_0 = U W_e + W_p;  h_l = block(h_{l-1});  P(u) = softmax(h_n W_eᵀ)           (GPT-1, Eq. 2)
  — token embeddings W_e plus *learned* positions W_p, and an output layer tied to W_e;
* GPT-2's changes: LayerNorm moved to the input of each sub-block (pre-LN), a final LayerNorm
  after the last block, residual projections initialised with std 0.02/√(2·n_layers), GELU (tanh
  approximation), a 1,024-token context and a 50,257-token byte-level BPE vocabulary.

The blocks are :class:`coursekit.transformer.layers.DecoderLayer` with ``cross_attention=False,
norm_first=True, activation="gelu_tanh"`` — the same layer as the Transformer decoder of notebook
08, minus cross-attention. :meth:`GPT.from_hf` imports Hugging Face ``GPT2LMHeadModel`` weights.

GPT-1's fine-tuning (§3.2) is :func:`with_extra_tokens` (start, delimiter and extract tokens) and
:class:`GPTClassifier` (a linear head on the last token, the LM loss as an auxiliary). The training recipe
of notebook 10 (character-level Tiny Shakespeare, nanoGPT's split and evaluation) is
:mod:`coursekit.gpt.char`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import KVCache
from coursekit.decoding.sampling import sample_next
from coursekit.transformer.hf import read_checkpoint
from coursekit.transformer.layers import DecoderLayer, LearnedPositions
from coursekit.validation import check_count as _check_count
from coursekit.validation import (
    check_labels,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)

__all__ = ["GPTConfig", "GPT", "GPTClassifier", "with_extra_tokens"]


def _check_gpt(model, name: str = "model") -> None:
    if not isinstance(model, GPT):
        raise TypeError(f"{name} must be a coursekit.gpt.model.GPT, got {type(model).__name__}")


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of a GPT. The defaults are GPT-2 small (124M).

    The names are the course's (``d_model``, ``n_heads``, ``n_layers``, ``max_len``, as in every other
    config); nanoGPT and Hugging Face's ``GPT2Config`` call them ``n_embd``, ``n_head``, ``n_layer`` and
    ``block_size`` / ``n_positions`` (:meth:`GPT.from_hf` maps them).
    """

    vocab_size: int = 50257
    max_len: int = 1024         # the context: learned positions exist for 0 … max_len-1
    n_layers: int = 12
    n_heads: int = 12
    d_model: int = 768
    dropout: float = 0.0
    bias: bool = True           # biases in Linear and LayerNorm (GPT-2 has them)
    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("vocab_size", "max_len", "n_layers", "n_heads", "d_model"):
            check_positive_int(getattr(self, name), name)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        check_probability(self.dropout, "dropout", inclusive_high=False)
        check_positive_float(self.layer_norm_eps, "layer_norm_eps")
        if not isinstance(self.bias, bool):
            raise TypeError(f"bias must be a bool, got {type(self.bias).__name__}")


class GPT(nn.Module):
    """Token + learned position embeddings → n_layers pre-LN decoder blocks → LayerNorm → tied output layer."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"config must be a GPTConfig, got {type(config).__name__}")
        self.config = c = config
        self.wte = nn.Embedding(c.vocab_size, c.d_model)          # W_e
        self.wpe = LearnedPositions(c.max_len, c.d_model)      # W_p
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            DecoderLayer(c.d_model, c.n_heads, 4 * c.d_model, dropout=c.dropout, activation="gelu_tanh",
                         norm_first=True, layer_norm_eps=c.layer_norm_eps, bias=c.bias, cross_attention=False)
            for _ in range(c.n_layers))
        self.ln_f = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps, bias=c.bias)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight                     # tied: P(u) = softmax(h W_eᵀ)
        self.apply(self._init_weights)
        for name, p in self.named_parameters():                   # GPT-2: scale the residual projections
            if name.endswith(("out_proj.weight", "ff.linear2.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layers))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_params(self, non_embedding: bool = True) -> int:
        """Parameter count; by default without the position embeddings (the token embeddings are
        the output layer too, so they count — the convention of nanoGPT and the GPT-2 paper)."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.wpe.embedding.weight.numel() if non_embedding else n

    def new_cache(self) -> list[KVCache]:
        """One empty :class:`KVCache` per block, for incremental decoding."""
        return [KVCache() for _ in self.blocks]

    def hidden_states(self, idx: torch.Tensor, cache: list[KVCache] | None = None) -> torch.Tensor:
        """Final-LayerNorm hidden states h_n (B, T, C) of token ids ``idx`` (B, T).

        With a ``cache``, ``idx`` holds only the new tokens; their positions continue after the cache.
        """
        check_tensor(idx, "idx", ndim=2)
        check_token_ids(idx, "idx", self.config.vocab_size)
        if cache is not None:
            if not isinstance(cache, (list, tuple)) or not all(isinstance(c, KVCache) for c in cache):
                raise TypeError(f"cache must be a list of KVCache (one per block), got {type(cache).__name__}")
            if len(cache) != len(self.blocks):
                raise ValueError(f"cache must hold one KVCache per block ({len(self.blocks)}), got {len(cache)}")
        offset = cache[0].length if cache else 0
        T = idx.shape[1]
        if T == 0:
            raise ValueError("idx must hold at least one token per row, got shape " f"{tuple(idx.shape)}")
        if offset + T > self.config.max_len:
            raise ValueError(f"sequence of {offset + T} tokens ({offset} cached + {T} new) is longer than the "
                             f"model's context max_len={self.config.max_len}; crop it")
        x = self.drop(self.wte(idx) + self.wpe(T, offset))                      # (B, T, C)
        for i, block in enumerate(self.blocks):
            x, _ = block(x, causal=True, self_cache=cache[i] if cache is not None else None)
        return self.ln_f(x)                                                     # (B, T, C)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None,
                cache: list[KVCache] | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Return ``(logits (B, T, V), loss or None)``; ``loss`` is the mean next-token cross-entropy
        when ``targets`` (B, T) is given (ids, -1 to ignore a position)."""
        logits = self.lm_head(self.hidden_states(idx, cache))                   # (B, T, V)
        loss = None
        if targets is not None:
            check_tensor(targets, "targets", ndim=2)
            if targets.shape != idx.shape:
                raise ValueError(f"targets must have the shape of idx {tuple(idx.shape)}, got {tuple(targets.shape)}")
            check_labels(targets, "targets", self.config.vocab_size, ignore_index=-1)
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, use_cache: bool = True,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Append ``max_new_tokens`` tokens to ``idx`` (B, T) and return (B, T + max_new_tokens).

        Each step conditions on the last ``max_len`` tokens and draws from
        :func:`coursekit.decoding.sample_next` (``temperature=0`` is greedy). With ``use_cache`` the
        keys/values of earlier positions are kept in a :class:`KVCache` per block, so each step
        feeds only the newest token; once the sequence outgrows the context the window slides and
        the cache is rebuilt from the cropped window (the same result as without a cache).
        """
        check_tensor(idx, "idx", ndim=2)
        check_token_ids(idx, "idx", self.config.vocab_size)
        _check_count(max_new_tokens, "max_new_tokens")
        if idx.shape[1] > self.config.max_len:
            raise ValueError(f"the prompt has {idx.shape[1]} tokens but the context is max_len="
                             f"{self.config.max_len}; crop the prompt to its last {self.config.max_len} tokens")
        was_training = self.training
        self.eval()
        cache = None
        try:                                            # a refused step (e.g. NaN logits) restores the mode too
            for _ in range(max_new_tokens):
                if use_cache and cache is not None and idx.shape[1] <= self.config.max_len:
                    logits, _ = self(idx[:, -1:], cache=cache)                  # only the newest token
                else:
                    window = idx[:, -self.config.max_len:]
                    cache = self.new_cache() if use_cache else None
                    logits, _ = self(window, cache=cache)                       # the whole (cropped) window
                next_id = sample_next(logits[:, -1, :], temperature, top_k, top_p, generator)  # (B,)
                idx = torch.cat([idx, next_id.unsqueeze(1)], dim=1)
                if cache is not None and idx.shape[1] > self.config.max_len:
                    cache = None                                                # slide: rebuild next step
        finally:
            self.train(was_training)
        return idx

    # ------------------------------------------------------------------ Hugging Face GPT-2 import

    @classmethod
    def from_hf(cls, source, *, dtype: torch.dtype | None = None) -> GPT:
        """A GPT with the weights of a Hugging Face GPT-2 (``GPT2LMHeadModel`` object or local directory).

        HF's GPT-2 stores its projections as ``Conv1D`` with weights of shape (in, out), the transpose
        of ``nn.Linear``; the fused ``c_attn`` (C, 3C) is split into W^Q, W^K, W^V. A checkpoint of
        another family, one with a missing tensor, or one whose config disagrees with its weights is
        refused (``transformers`` itself would fill the gaps with random numbers and only warn).

        A bare ``GPT2Model`` (no LM head) is accepted only when its config ties the head to the token
        embeddings (``tie_word_embeddings``, GPT-2's default): then ``GPT2LMHeadModel``'s head *is* ``wte``
        and the language model is complete. With an untied head, the head's weights are not in a
        ``GPT2Model``: that is refused rather than filled in with ``wte``.
        """
        from transformers import GPT2Config

        if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            got = dtype if isinstance(dtype, torch.dtype) else type(dtype).__name__
            raise TypeError(f"dtype must be a floating-point torch.dtype or None, got {got}")
        hf_config, state = read_checkpoint(source)
        if hf_config.get("model_type") != "gpt2":
            raise ValueError(f"expected a GPT-2 checkpoint (model_type 'gpt2'), got model_type "
                             f"{hf_config.get('model_type')!r}")
        kind = type(source).__name__ if isinstance(source, nn.Module) else (hf_config.get("architectures") or [""])[0]
        if kind == "GPT2Model" and not hf_config.get("tie_word_embeddings", True):
            raise ValueError("this is a GPT2Model (no LM head) whose config unties the head from the token "
                             "embeddings (tie_word_embeddings=False): the head's weights are not in it. Load the "
                             "GPT2LMHeadModel it came from")
        hc = GPT2Config.from_dict(hf_config)                       # defaults for keys config.json leaves out
        unsupported = {
            "activation_function": (hc.activation_function, ("gelu_new", "gelu_pytorch_tanh")),
            "n_inner": (hc.n_inner, (None, 4 * hc.n_embd)),
            "scale_attn_weights": (hc.scale_attn_weights, (True,)),
            "scale_attn_by_inverse_layer_idx": (hc.scale_attn_by_inverse_layer_idx, (False,)),
        }
        bad = {k: v for k, (v, ok) in unsupported.items() if v not in ok}
        if bad:
            raise ValueError(f"this GPT-2 config has settings the course's GPT does not implement: {bad}")
        config = GPTConfig(vocab_size=hc.vocab_size, max_len=hc.n_positions, n_layers=hc.n_layer,
                           n_heads=hc.n_head, d_model=hc.n_embd, dropout=0.0, bias=True,
                           layer_norm_eps=hc.layer_norm_epsilon)
        wte = state.get("transformer.wte.weight", state.get("wte.weight"))
        model = cls(config).to(dtype=dtype or (wte.dtype if wte is not None else torch.float32))
        model.load_hf_state_dict(state)
        return model.eval()

    def _hf_shapes(self) -> dict[str, tuple[int, ...]]:
        """The GPT-2 tensors this config needs, with their shapes (``Conv1D`` weights are (in, out))."""
        c, C = self.config, self.config.d_model
        shapes = {"wte.weight": (c.vocab_size, C), "wpe.weight": (c.max_len, C), "ln_f.weight": (C,),
                  "ln_f.bias": (C,)}
        for i in range(c.n_layers):
            p = f"h.{i}."
            shapes |= {p + "ln_1.weight": (C,), p + "ln_1.bias": (C,),
                       p + "attn.c_attn.weight": (C, 3 * C), p + "attn.c_attn.bias": (3 * C,),
                       p + "attn.c_proj.weight": (C, C), p + "attn.c_proj.bias": (C,),
                       p + "ln_2.weight": (C,), p + "ln_2.bias": (C,),
                       p + "mlp.c_fc.weight": (C, 4 * C), p + "mlp.c_fc.bias": (4 * C,),
                       p + "mlp.c_proj.weight": (4 * C, C), p + "mlp.c_proj.bias": (C,)}
        return shapes

    def load_hf_state_dict(self, sd: dict[str, torch.Tensor]) -> None:
        """Copy a GPT-2 ``state_dict`` (``transformer.*`` / ``lm_head.weight`` names) into this model."""
        if not isinstance(sd, dict):
            raise TypeError(f"sd must be a dict of tensors (a GPT-2 state_dict), got {type(sd).__name__}")
        if not self.config.bias:
            raise ValueError("a GPT-2 checkpoint has biases: load it into a model with bias=True")
        sd = {k.removeprefix("transformer."): v for k, v in sd.items()
              if not k.endswith((".attn.bias", ".attn.masked_bias"))}          # causal-mask buffers
        expected = self._hf_shapes()
        empty = [i for i in range(self.config.n_layers) if not any(k.startswith(f"h.{i}.") for k in sd)]
        if empty:
            raise ValueError(f"checkpoint has no block {empty[0]} (no h.{empty[0]}.* weights); the config asks for "
                             f"n_layers={self.config.n_layers}")
        absent = [k for k in expected if k not in sd]
        if absent:
            raise ValueError(f"weights missing from the GPT-2 checkpoint: {absent[:8]}"
                             f"{f' and {len(absent) - 8} more' if len(absent) > 8 else ''}")
        wrong = {k: (tuple(sd[k].shape), shape) for k, shape in expected.items() if tuple(sd[k].shape) != shape}
        if wrong:
            shown = dict(list(wrong.items())[:4])
            raise ValueError(f"weight shapes differ from the config (checkpoint, expected): {shown}"
                             f"{f' and {len(wrong) - 4} more' if len(wrong) > 4 else ''}")
        C = self.config.d_model
        ours: dict[str, torch.Tensor] = {"wte.weight": sd.pop("wte.weight"),
                                         "wpe.embedding.weight": sd.pop("wpe.weight"),
                                         "ln_f.weight": sd.pop("ln_f.weight"), "ln_f.bias": sd.pop("ln_f.bias")}
        lm_head = sd.pop("lm_head.weight", None)
        if lm_head is not None and not torch.equal(lm_head, ours["wte.weight"]):
            raise ValueError("lm_head.weight differs from wte.weight: the course's GPT ties them")
        for i in range(self.config.n_layers):
            p = f"h.{i}."
            wq, wk, wv = sd.pop(f"{p}attn.c_attn.weight").t().split(C, dim=0)   # Conv1D (C, 3C) → 3 × (C, C)
            bq, bk, bv = sd.pop(f"{p}attn.c_attn.bias").split(C, dim=0)
            q = f"blocks.{i}."
            ours.update({
                f"{q}norm1.weight": sd.pop(f"{p}ln_1.weight"), f"{q}norm1.bias": sd.pop(f"{p}ln_1.bias"),
                f"{q}self_attn.q_proj.weight": wq, f"{q}self_attn.q_proj.bias": bq,
                f"{q}self_attn.k_proj.weight": wk, f"{q}self_attn.k_proj.bias": bk,
                f"{q}self_attn.v_proj.weight": wv, f"{q}self_attn.v_proj.bias": bv,
                f"{q}self_attn.out_proj.weight": sd.pop(f"{p}attn.c_proj.weight").t(),
                f"{q}self_attn.out_proj.bias": sd.pop(f"{p}attn.c_proj.bias"),
                f"{q}norm3.weight": sd.pop(f"{p}ln_2.weight"), f"{q}norm3.bias": sd.pop(f"{p}ln_2.bias"),
                f"{q}ff.linear1.weight": sd.pop(f"{p}mlp.c_fc.weight").t(),
                f"{q}ff.linear1.bias": sd.pop(f"{p}mlp.c_fc.bias"),
                f"{q}ff.linear2.weight": sd.pop(f"{p}mlp.c_proj.weight").t(),
                f"{q}ff.linear2.bias": sd.pop(f"{p}mlp.c_proj.bias"),
            })
        if sd:
            raise ValueError(f"unexpected weights in the GPT-2 checkpoint (config says n_layers="
                             f"{self.config.n_layers}): {sorted(sd)[:8]}")
        mine = self.state_dict()
        missing = set(mine) - set(ours) - {"lm_head.weight"}
        if missing:
            raise ValueError(f"weights missing from the checkpoint: {sorted(missing)}")
        with torch.no_grad():
            for k, v in ours.items():
                mine[k].copy_(v)


# ================================================================================================
# GPT-1 fine-tuning: input transformations + a linear head on the last token
# ================================================================================================

def with_extra_tokens(model: GPT, n_new: int) -> GPT:
    """A copy of ``model`` whose vocabulary has ``n_new`` extra ids at the end (GPT-1's start,
    delimiter and extract tokens), initialised like the other embeddings (N(0, 0.02))."""
    _check_gpt(model)
    check_positive_int(n_new, "n_new")
    config = dataclasses.replace(model.config, vocab_size=model.config.vocab_size + n_new)
    new = GPT(config)
    sd = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    wte = sd.pop("wte.weight")
    with torch.no_grad():
        new.wte.weight[: wte.shape[0]].copy_(wte)
    new.load_state_dict(sd, strict=False)
    return new.to(wte.device)


class GPTClassifier(nn.Module):
    """GPT-1 §3.2: P(y | x¹…xᵐ) = softmax(h_l^m W_y), h_l^m the final hidden state of the last
    (``extract``) token; the loss is L₂ + λ·L₁ with the language-model loss L₁ as an auxiliary."""

    def __init__(self, gpt: GPT, n_classes: int, lm_weight: float = 0.5) -> None:
        super().__init__()
        _check_gpt(gpt, "gpt")
        self.gpt = gpt
        self.head = nn.Linear(gpt.config.d_model, check_positive_int(n_classes, "n_classes"))   # W_y
        self.lm_weight = check_positive_float(lm_weight, "lm_weight", allow_zero=True)

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """idx (B, T) ending with the extract token → (class logits (B, K), LM logits (B, T, V))."""
        h = self.gpt.hidden_states(idx)                                          # (B, T, C)
        return self.head(h[:, -1]), self.gpt.lm_head(h)

    def loss(self, idx: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        check_tensor(idx, "idx", ndim=2)
        check_tensor(labels, "labels", ndim=1)
        check_size(labels, "labels", 0, idx.shape[0], "one per row of idx")
        check_labels(labels, "labels", self.head.out_features)
        class_logits, lm_logits = self(idx)
        task = F.cross_entropy(class_logits, labels)                             # L₂
        if not self.lm_weight:
            return task
        lm = F.cross_entropy(lm_logits[:, :-1].flatten(0, 1), idx[:, 1:].flatten())   # L₁ on the input
        return task + self.lm_weight * lm
