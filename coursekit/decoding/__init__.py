"""Decoding: greedy and beam search (``search``) and sampling with temperature / top-k / top-p (``sampling``)."""

from coursekit.decoding.sampling import *  # noqa: F401,F403
from coursekit.decoding.sampling import __all__ as _sampling_all
from coursekit.decoding.search import *  # noqa: F401,F403
from coursekit.decoding.search import __all__ as _search_all

__all__ = list(_search_all) + list(_sampling_all)
