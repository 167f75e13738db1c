"""Decoding: greedy and beam search (``search``), sampling with temperature / top-k / top-p (``sampling``), and
an encoder–decoder's ``translate`` as the callable evaluation expects (``translate``)."""

from coursekit.decoding.sampling import *  # noqa: F401,F403
from coursekit.decoding.sampling import __all__ as _sampling_all
from coursekit.decoding.search import *  # noqa: F401,F403
from coursekit.decoding.search import __all__ as _search_all
from coursekit.decoding.translate import *  # noqa: F401,F403
from coursekit.decoding.translate import __all__ as _translate_all

__all__ = list(_search_all) + list(_sampling_all) + list(_translate_all)
