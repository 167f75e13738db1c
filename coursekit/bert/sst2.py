"""The SST-2 fine-tuning protocol of notebook 09: which sentences train, which choose the learning rate, which test.

:class:`SST2Protocol` is the budget (sentences, epochs, batch size) and the learning rates each start may
choose from; :func:`sst2_splits` gives the disjoint rows. It sits below the pre-training corpus (which can
leave the selection sentences out of the MLM text) and the fine-tuning comparison
(:mod:`coursekit.bert.finetuning`), which both read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from coursekit import data
from coursekit.validation import check_count, check_positive_int

__all__ = ["PROTOCOL", "SELECT_OFFSET", "SST2Protocol", "sst2_splits"]


@dataclass(frozen=True)
class SST2Protocol:
    """The fine-tuning budget and the learning-rate choice, the same for both starting points."""

    n_train: int = 3000                # SST-2 training sentences to fine-tune on (a fixed shuffled subset)
    n_select: int = 1000               # other training sentences, to choose the learning rate on
    epochs: int = 3
    batch_size: int = 16
    lrs: tuple[float, ...] = (3e-4, 1e-3)
    seeds: tuple[int, ...] = (0, 1)

    def __post_init__(self) -> None:
        for name in ("n_train", "n_select", "epochs", "batch_size"):
            check_positive_int(getattr(self, name), name)
        if not self.lrs or not all(isinstance(x, float) and x > 0 for x in self.lrs):
            raise ValueError(f"lrs must be positive floats, got {self.lrs!r}")
        if not self.seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in self.seeds):
            raise ValueError(f"seeds must be a non-empty tuple of ints, got {self.seeds!r}")


PROTOCOL = SST2Protocol()
SELECT_OFFSET = 60_000   # the selection sentences are rows 60,000… of the shuffled training split


def sst2_splits(n_train: int, n_select: int) -> dict:
    """``{"train", "select", "test"}``: disjoint rows of SST-2 train (shuffled with seed 0) and the
    validation split (the test set here: GLUE's test labels are not public)."""
    check_positive_int(n_train, "n_train")
    check_count(n_select, "n_select")
    if n_train > SELECT_OFFSET:
        raise ValueError(f"n_train must be ≤ {SELECT_OFFSET} (the selection sentences start there), got {n_train}")
    sst = data.load_sst2()
    shuffled = sst["train"].shuffle(seed=0)
    if SELECT_OFFSET + n_select > len(shuffled):
        raise ValueError(f"n_train must be ≤ {SELECT_OFFSET} and n_select ≤ {len(shuffled) - SELECT_OFFSET}, "
                         f"got {n_train} and {n_select}")
    return {"train": shuffled.select(range(n_train)),
            "select": shuffled.select(range(SELECT_OFFSET, SELECT_OFFSET + n_select)),
            "test": sst["validation"]}
