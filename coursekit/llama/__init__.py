"""Llama (Touvron et al. 2023; notebook 13): from GPT-2 to today's decoders, bottom to top.

* :mod:`~coursekit.llama.rope` — rotary position embeddings (Su et al. 2021), the half-split form of Hugging Face
  and the paper's interleaved form, and the permutation between them;
* :mod:`~coursekit.llama.layers` — RMSNorm, the SwiGLU feed-forward block, ``repeat_kv`` and grouped-query
  attention (multi-query and multi-head as its two ends) with a KV cache;
* :mod:`~coursekit.llama.flash` — FlashAttention's tiled, exact attention with the online softmax, in plain PyTorch;
* :mod:`~coursekit.llama.model` — the config, the pre-norm block, the model with greedy generation, the KV-cache
  and parameter arithmetic;
* :mod:`~coursekit.llama.hf` — importing Hugging Face ``LlamaForCausalLM`` checkpoints (and refusing the ones the
  course's model would compute differently).
"""
