"""A course model's ``translate`` as the callable that evaluation expects.

The encoder–decoders of the course (the RNN seq2seq of notebooks 05–06, the Transformer of 08) share one
decoding interface, ``translate(src, src_mask, beam_size=, max_len=, length_penalty=)`` returning an object with
``.tokens``. :func:`translator` turns a model into ``batch → list of target id lists`` for
:meth:`coursekit.translation.TranslationData.evaluate`. It lives below the model families and the translation
task, so that both can use it (the models' ``.translator()`` methods, the task's evaluation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coursekit.validation import check_positive_float, check_positive_int

__all__ = ["check_translation_model", "translator"]


def check_translation_model(model) -> None:
    """Raise a ``TypeError`` unless ``model`` has a ``translate(src, src_mask, ...)`` method."""
    if not callable(getattr(model, "translate", None)):
        raise TypeError(f"model must have a translate(src, src_mask, ...) method, got {type(model).__name__}")


def translator(model, *, beam_size: int = 1, max_len: int = 20, length_penalty: float = 0.0
               ) -> Callable[[Any], list[list[int]]]:
    """``batch → list of target id lists``, the callable :meth:`TranslationData.evaluate` expects.

    ``model`` is any course model with ``translate(src, src_mask, beam_size=, max_len=, length_penalty=)``
    returning an object with ``.tokens`` (the RNN seq2seq, the Transformer); ``batch`` is anything with ``.src``
    and ``.src_mask`` (a ``TranslationBatch``). It decodes in eval mode and puts the model back in the mode it
    was in.
    """
    check_translation_model(model)
    check_positive_int(beam_size, "beam_size")
    check_positive_int(max_len, "max_len")
    check_positive_float(length_penalty, "length_penalty", allow_zero=True)

    def translate(batch) -> list[list[int]]:
        was_training = model.training
        model.eval()
        try:
            return model.translate(batch.src, batch.src_mask, beam_size=beam_size, max_len=max_len,
                                   length_penalty=length_penalty).tokens
        finally:
            model.train(was_training)

    return translate
