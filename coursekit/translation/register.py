"""Formal or informal "you": which register a French translation chose (notebook 14's behaviour).

French must choose where English says "you": *vous* (formal, or plural) or *tu* (informal, one person). The
choice is read off the second-person forms of the sentence:

* informal: *tu*, *toi*, *te*, *t'* (before a vowel: *je t'aime*), the possessives *ton*, *ta*, *tes*;
* formal: *vous* and the possessives *votre*, *vos*.

A sentence can hold both (*tu sais, vous deux…*) or neither (an impersonal translation); the rate of *vous*
(:func:`vous_rate`) is taken among the sentences that hold exactly one register, and says how many those are.
The forms are matched as whole words, case-insensitively, on the detokenised text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RegisterCount", "register_of", "vous_rate"]

_INFORMAL = re.compile(r"(?<![\w'’])(?:tu|toi|te|ton|ta|tes)(?![\w'’])|(?<![\w'’])t['’](?=\w)", re.IGNORECASE)
_FORMAL = re.compile(r"(?<![\w'’])(?:vous|votre|vos)(?![\w'’])", re.IGNORECASE)


def register_of(french: str) -> str | None:
    """``"vous"``, ``"tu"``, ``"both"`` or ``None`` (no second-person form) for one French sentence."""
    if not isinstance(french, str):
        raise TypeError(f"french must be a str (one sentence), got {type(french).__name__}")
    formal, informal = bool(_FORMAL.search(french)), bool(_INFORMAL.search(french))
    if formal and informal:
        return "both"
    return "vous" if formal else "tu" if informal else None


@dataclass(frozen=True)
class RegisterCount:
    """How a set of translations addressed the reader."""

    vous: int
    tu: int
    both: int
    neither: int

    @property
    def rate(self) -> float:
        """The share of *vous* among the sentences with exactly one register (NaN when there are none)."""
        decided = self.vous + self.tu
        return self.vous / decided if decided else float("nan")


def vous_rate(translations: Sequence[str]) -> RegisterCount:
    """Count the registers of ``translations`` (a list of French sentences); ``.rate`` is the *vous* share."""
    if isinstance(translations, str) or not isinstance(translations, Sequence):
        raise TypeError(f"translations must be a list of French sentences, got {type(translations).__name__}")
    found = [register_of(t) for t in translations]
    return RegisterCount(vous=found.count("vous"), tu=found.count("tu"), both=found.count("both"),
                         neither=found.count(None))
