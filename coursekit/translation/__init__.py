"""The English→French translation task of the course (notebooks 05, 06, 08 and 11).

* :mod:`~coursekit.translation.core` — normalise, split and batch Tatoeba pairs, evaluate a translator;
* :mod:`~coursekit.translation.scoring` — corpus BLEU and chrF, BLEU by source length, the report;
* :mod:`~coursekit.translation.subword` — one shared BPE vocabulary for both languages;
* :mod:`~coursekit.translation.benchmark` — the course's fixed EN→FR benchmark (split, tokenizer,
  showcase sentences) that every translation model is measured on;
* :mod:`~coursekit.translation.recipes` — the recipes of the three committed models (GRU encoder–decoder,
  GRU with Bahdanau attention, Transformer): training with checkpoints and ``--resume``, evaluation;
* :mod:`~coursekit.translation.register` — formal or informal "you": which register a French sentence chose;
* ``python -m coursekit.translation`` — ``train`` / ``evaluate`` / ``translate`` from the command line.
"""

from coursekit.translation.core import *  # noqa: F403
from coursekit.translation.core import __all__ as _core_all
from coursekit.translation.core import _hash  # noqa: F401  (used by tests)
from coursekit.translation.scoring import *  # noqa: F403
from coursekit.translation.scoring import __all__ as _scoring_all
from coursekit.translation.subword import SubwordVocab

__all__ = [*_core_all, *_scoring_all, "SubwordVocab"]
