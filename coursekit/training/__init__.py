"""Training loops shared by every model family.

* :mod:`~coursekit.training.loop` — ``fit`` (a small loop with history, evaluation hook and progress bar),
  schedules, safetensors checkpoints with a content hash, ``config_from_json`` for the training CLIs;
* :mod:`~coursekit.training.resumable` — the loops of the committed models: a checkpoint every few minutes
  in a work folder, an exact ``--resume``, a JSON-lines log.
"""
