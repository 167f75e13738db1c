"""Attention: score functions (notebook 06) and scaled dot-product / multi-head attention (notebook 07).

``scores`` holds the alignment score functions of Luong and Bahdanau and the attention layers a
recurrent decoder uses; ``masks`` holds the causal, padding and sliding-window masks; ``core`` holds
scaled dot-product attention, sliding-window attention and multi-head attention.
"""

from coursekit.attention.core import *  # noqa: F401,F403
from coursekit.attention.core import __all__ as _core_all
from coursekit.attention.masks import *  # noqa: F401,F403
from coursekit.attention.masks import __all__ as _masks_all
from coursekit.attention.scores import *  # noqa: F401,F403
from coursekit.attention.scores import __all__ as _scores_all

__all__ = list(_core_all) + list(_masks_all) + list(_scores_all)
