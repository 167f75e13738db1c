"""GPT (Radford et al. 2018, 2019; notebooks 10 and 12), bottom to top.

* :mod:`~coursekit.gpt.model` — the decoder-only Transformer, generation with a KV cache, GPT-1's
  classifier, the GPT-2 importer;
* :mod:`~coursekit.gpt.char` — the character-level recipe of notebook 10 (tokenizer, batches, training);
* :mod:`~coursekit.gpt.prompting` — prompts as text and as tokens, reading the answer;
* :mod:`~coursekit.gpt.icl` — the synthetic task family for in-context learning;
* :mod:`~coursekit.gpt.induction` — induction and previous-token scores of attention heads;
* :mod:`~coursekit.gpt.icl_training` — the committed in-context learner: recipe, checkpoint, evaluations;
* ``python -m coursekit.gpt`` (:mod:`~coursekit.gpt.__main__`) — ``train``, ``train-icl``, ``induction``, ``icl``.
"""
