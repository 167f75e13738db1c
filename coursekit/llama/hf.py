"""Importing Hugging Face ``LlamaForCausalLM`` checkpoints into the course's :class:`~coursekit.llama.model.Llama`.

A checkpoint is a ``transformers`` model object or a local folder written by ``save_pretrained`` (read by
:func:`coursekit.transformer.hf.read_checkpoint`; nothing is downloaded). :func:`config_from_hf` maps the
Hugging Face config to a :class:`~coursekit.llama.model.LlamaConfig` and :func:`from_hf` copies the weights.

What is refused, with a ``ValueError`` that names the field and its value, rather than imported into a model that
would compute something else: another family (``model_type`` not ``'llama'``, e.g. a GPT-2 checkpoint) or another
head (not ``LlamaForCausalLM``); RoPE scaling (``rope_scaling``, or a ``rope_parameters`` whose ``rope_type`` is not
``'default'``: Llama 3.1's, linear, dynamic NTK, YaRN …); biases (``attention_bias``, ``mlp_bias``); an activation
other than SiLU (``hidden_act``); a ``head_dim`` other than ``hidden_size / num_attention_heads``; and missing,
unexpected or mis-shaped weights (``transformers`` itself fills a missing tensor with random numbers and only warns).

Both generations of the config file are read: ``rope_theta``/``rope_scaling`` at the top level (``transformers``
4.x) and the ``rope_parameters`` dict (5.x). No permutation of W^Q/W^K is needed: Hugging Face's Llama rotates
the half-split pairs, as :func:`coursekit.llama.rope.apply_rope` does.
"""

from __future__ import annotations

import torch
from torch import nn

from coursekit.llama.model import Llama, LlamaConfig
from coursekit.transformer.hf import check_float_dtype, read_checkpoint

__all__ = ["config_from_hf", "from_hf", "hf_weight_names"]

_SIZES = {  # LlamaConfig field: Hugging Face key (required in the config)
    "vocab_size": "vocab_size",
    "d_model": "hidden_size",
    "n_layers": "num_hidden_layers",
    "n_heads": "num_attention_heads",
    "d_ff": "intermediate_size",
}
_DEFAULTS = {  # what transformers' LlamaConfig assumes when config.json leaves a key out
    "num_key_value_heads": None,        # → num_attention_heads (multi-head attention)
    "head_dim": None,                   # → hidden_size / num_attention_heads
    "max_position_embeddings": 2048,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "rope_scaling": None,
    "rope_parameters": None,
    "hidden_act": "silu",
    "attention_bias": False,
    "mlp_bias": False,
    "tie_word_embeddings": False,
}


def _rope_base(hf: dict) -> float:
    """θ's base from either config generation; RoPE scaling of any kind is refused."""
    if hf["rope_scaling"] is not None:
        raise ValueError(f"rope_scaling={hf['rope_scaling']!r} is set: the course's Llama implements plain RoPE "
                         "only (rope_scaling None)")
    params = hf["rope_parameters"]
    if params is None:
        return hf["rope_theta"]
    if not isinstance(params, dict):
        raise ValueError(f"rope_parameters must be a dict, got {params!r}")
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type != "default":
        raise ValueError(f"rope_scaling is set (rope_parameters rope_type={rope_type!r}): the course's Llama "
                         "implements plain RoPE only (rope_type 'default')")
    return params.get("rope_theta", hf["rope_theta"])


def config_from_hf(hf_config) -> LlamaConfig:
    """The :class:`LlamaConfig` of a Hugging Face Llama config (a ``transformers.LlamaConfig`` or its dict).

    ``hidden_size → d_model``, ``num_hidden_layers → n_layers``, ``num_attention_heads → n_heads``,
    ``num_key_value_heads → n_kv_heads``, ``intermediate_size → d_ff``, ``max_position_embeddings → max_len``,
    ``rope_theta → rope_base``, ``rms_norm_eps → norm_eps``, ``tie_word_embeddings → tie_embeddings``.
    """
    if hasattr(hf_config, "to_dict") and not isinstance(hf_config, dict):
        hf_config = hf_config.to_dict()
    if not isinstance(hf_config, dict):
        raise TypeError(f"hf_config must be a transformers LlamaConfig or a dict, got {type(hf_config).__name__}")
    if hf_config.get("model_type") != "llama":
        raise ValueError(f"expected a Llama checkpoint (model_type 'llama'), got model_type "
                         f"{hf_config.get('model_type')!r}")
    absent = [key for key in _SIZES.values() if key not in hf_config]
    if absent:
        raise ValueError(f"the Llama config lacks {absent}")
    hf = _DEFAULTS | {k: v for k, v in hf_config.items() if k in _DEFAULTS or k in _SIZES.values()}
    rope_base = _rope_base(hf)
    H, C = hf["num_attention_heads"], hf["hidden_size"]
    unsupported = {
        "hidden_act": (hf["hidden_act"], ("silu",)),
        "attention_bias": (hf["attention_bias"], (False,)),
        "mlp_bias": (hf["mlp_bias"], (False,)),
    }
    bad = {k: v for k, (v, ok) in unsupported.items() if v not in ok}
    if hf["head_dim"] is not None and isinstance(H, int) and isinstance(C, int) and H and hf["head_dim"] * H != C:
        bad["head_dim"] = hf["head_dim"]
    if bad:
        raise ValueError(f"this Llama config has settings the course's Llama does not implement: {bad} "
                         f"(it needs hidden_act 'silu', no biases, head_dim = hidden_size / num_attention_heads)")
    sizes = {ours: hf[theirs] for ours, theirs in _SIZES.items()}
    n_kv = hf["num_key_value_heads"] if hf["num_key_value_heads"] is not None else H
    try:
        return LlamaConfig(**sizes, n_kv_heads=n_kv, max_len=hf["max_position_embeddings"], rope_base=rope_base,
                           norm_eps=hf["rms_norm_eps"], tie_embeddings=hf["tie_word_embeddings"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the Hugging Face config does not make a valid LlamaConfig: {exc}") from None


def hf_weight_names(config: LlamaConfig) -> dict[str, str]:
    """Hugging Face's ``LlamaForCausalLM`` state-dict names → ours, for every tensor this config has.

    ``model.embed_tokens → embed``, ``model.layers.{i} → blocks.{i}`` with ``input_layernorm → attn_norm``,
    ``self_attn → attn``, ``post_attention_layernorm → mlp_norm``; ``mlp``, the projections, ``model.norm`` and
    ``lm_head`` keep their names. A tied model has no ``lm_head.weight`` of its own.
    """
    if not isinstance(config, LlamaConfig):
        raise TypeError(f"config must be a coursekit.llama.model.LlamaConfig, got {type(config).__name__}")
    names = {"model.embed_tokens.weight": "embed.weight", "model.norm.weight": "norm.weight"}
    for i in range(config.n_layers):
        hf, ours = f"model.layers.{i}.", f"blocks.{i}."
        names[hf + "input_layernorm.weight"] = ours + "attn_norm.weight"
        names[hf + "post_attention_layernorm.weight"] = ours + "mlp_norm.weight"
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            names[f"{hf}self_attn.{proj}.weight"] = f"{ours}attn.{proj}.weight"
        for proj in ("gate_proj", "up_proj", "down_proj"):
            names[f"{hf}mlp.{proj}.weight"] = f"{ours}mlp.{proj}.weight"
    if not config.tie_embeddings:
        names["lm_head.weight"] = "lm_head.weight"
    return names


def _listed(keys: list[str], n: int = 8) -> str:
    return f"{keys[:n]}{f' and {len(keys) - n} more' if len(keys) > n else ''}"


def from_hf(source, *, dtype: torch.dtype | None = None) -> Llama:
    """A :class:`Llama` with the weights of a Hugging Face ``LlamaForCausalLM`` (object or ``save_pretrained``
    folder), in eval mode, in the checkpoint's dtype unless ``dtype`` is given. See the module docstring for what is
    refused."""
    check_float_dtype(dtype)
    hf_config, state = read_checkpoint(source)
    config = config_from_hf(hf_config)
    if isinstance(source, nn.Module):
        kind = type(source).__name__
    else:
        kind = (hf_config.get("architectures") or ["LlamaForCausalLM"])[0]
    if kind != "LlamaForCausalLM":
        raise ValueError(f"expected a LlamaForCausalLM (the language model with its head), got {kind}")

    state = {k: v for k, v in state.items() if not k.endswith("rotary_emb.inv_freq")}   # a buffer in old files
    names = hf_weight_names(config)
    if config.tie_embeddings and "lm_head.weight" in state:     # the object's state dict lists the tied tensor
        lm_head = state.pop("lm_head.weight")
        embed = state.get("model.embed_tokens.weight")
        if embed is not None and not torch.equal(lm_head, embed):
            raise ValueError("tie_word_embeddings is True but lm_head.weight differs from model.embed_tokens.weight")
    absent = [k for k in names if k not in state]
    if absent:
        raise ValueError(f"weights missing from the Llama checkpoint: {_listed(absent)}")
    unexpected = sorted(set(state) - set(names))
    if unexpected:
        raise ValueError(f"unexpected weights in the Llama checkpoint (config says num_hidden_layers="
                         f"{config.n_layers}): {_listed(unexpected)}")
    model = Llama(config).to(dtype=dtype or state["model.embed_tokens.weight"].dtype)
    mine = model.state_dict()
    wrong = {k: (tuple(state[k].shape), tuple(mine[ours].shape)) for k, ours in names.items()
             if state[k].shape != mine[ours].shape}
    if wrong:
        shown = dict(list(wrong.items())[:4])
        raise ValueError(f"weight shapes differ from the config (checkpoint, expected): {shown}"
                         f"{f' and {len(wrong) - 4} more' if len(wrong) > 4 else ''}")
    with torch.no_grad():
        for theirs, ours in names.items():
            mine[ours].copy_(state[theirs])
    return model.eval()
