"""coursekit: the companion package of the attention & Transformers course.

One module per concept; notebooks derive each idea in their own cells and then
check that the derivation equals the version here.
"""

__version__ = "0.1.0"
