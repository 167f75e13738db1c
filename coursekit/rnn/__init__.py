"""Recurrent networks (notebooks 03–06), from the cell up.

* :mod:`~coursekit.rnn.cells` — Elman and LSTM cells written out;
* :mod:`~coursekit.rnn.layers` — cells unrolled over sequences, stacked and bidirectional, checked against
  ``nn.RNN`` / ``nn.LSTM``;
* :mod:`~coursekit.rnn.bptt` — backpropagation through time by hand;
* :mod:`~coursekit.rnn.char_lm` — the character-level language model of notebooks 03–04;
* :mod:`~coursekit.rnn.elmo` — ELMo's scalar mix of layers;
* :mod:`~coursekit.rnn.seq2seq` — the GRU encoder–decoder, with or without attention (notebooks 05–06).
"""
