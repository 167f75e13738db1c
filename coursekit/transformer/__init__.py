"""The Transformer (Vaswani et al. 2017), the building block of every later family (notebooks 07–08).

* :mod:`~coursekit.transformer.layers` — positions, the feed-forward block, encoder and decoder layers and
  stacks (used by :mod:`coursekit.bert`, :mod:`coursekit.gpt` and :mod:`coursekit.bart`);
* :mod:`~coursekit.transformer.model` — the encoder–decoder translation model, checked against
  ``nn.Transformer``;
* :mod:`~coursekit.transformer.hf` — reading Hugging Face checkpoints into the course's models.
"""
