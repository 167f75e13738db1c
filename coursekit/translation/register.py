"""Formal or informal "you": which register a French translation chose (notebook 14's behaviour).

French must choose where English says "you": *vous* (formal, or plural) or *tu* (informal, one person). The
choice is read off the second-person forms of the sentence:

* informal: *tu*, *toi*, *te*, *t'* (before a vowel: *je t'aime*), the possessives *ton*, *ta*, *tes*;
* formal: *vous* and the possessives *votre*, *vos*.

A sentence can hold both (*tu sais, vous deux…*) or neither (an impersonal translation); the rate of *vous*
(:func:`vous_rate`) is taken among the sentences that hold exactly one register, and says how many those are.
The forms are matched as whole words, case-insensitively, on the detokenised text.

The data of notebook 14 comes from the benchmark's pairs (:func:`you_pairs`): English sentences that address
someone (:func:`addresses_you`: *you*, *your*, *yours*, *yourself*, *yourselves*, with contractions such as
*you're*), sorted by the register of their French. Tatoeba often holds both translations of one English
sentence; those give the preference pairs (*vous* chosen, *tu* rejected) of DPO. A *register tag* — the words
``formal :`` or ``informal :`` before the English (:func:`tag_source`) — is how a model is asked for one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from coursekit.validation import check_choice, received

__all__ = ["REGISTERS", "RegisterCount", "YouPairs", "addresses_you", "register_of", "tag_source", "vous_rate",
           "you_pairs"]

#: The two registers a translation can be asked for, and the register each one's French uses.
REGISTERS = {"formal": "vous", "informal": "tu"}

_INFORMAL = re.compile(r"(?<![\w'’])(?:tu|toi|te|ton|ta|tes)(?![\w'’])|(?<![\w'’])t['’](?=\w)", re.IGNORECASE)
_FORMAL = re.compile(r"(?<![\w'’])(?:vous|votre|vos)(?![\w'’])", re.IGNORECASE)
_YOU = re.compile(r"(?:you|your|yours|yourself|yourselves)(?:'\w+)?", re.IGNORECASE)   # one normalised token


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


def _check_tokens(tokens, name: str) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"{name} must be a list of word tokens (split_tokens gives them), got {received(tokens)}")
    return list(tokens)


def addresses_you(english: Sequence[str]) -> bool:
    """Whether a normalised English sentence (its word tokens) says *you*, *your*, *yours*, *yourself*,
    *yourselves*, or a contraction of them (*you're*, *you'll*): the sentences whose French must choose."""
    return any(_YOU.fullmatch(token) for token in _check_tokens(english, "english"))


def tag_source(english: Sequence[str], register: str) -> list[str]:
    """The English tokens with the register tag in front: ``["formal", ":", *english]`` (or ``informal``).

    The tag is made of ordinary English words, so the committed BPE writes it without a new token: asking for
    a register is an instruction in the source text, as in instruction tuning."""
    check_choice(register, "register", list(REGISTERS))
    return [register, ":", *_check_tokens(english, "english")]


@dataclass(frozen=True)
class YouPairs:
    """The training pairs whose English says *you*, by the register of their French.

    ``vous`` / ``tu``: ``(english_tokens, french_tokens)`` pairs with exactly that register; ``preferences``:
    ``(english_tokens, vous_french, tu_french)`` for every English sentence that has both translations (its
    first of each, in file order), the pairs a preference method learns from."""

    vous: list
    tu: list
    preferences: list

    def summary(self) -> dict:
        return {"vous_pairs": len(self.vous), "tu_pairs": len(self.tu), "preference_pairs": len(self.preferences),
                "english_sentences": len({tuple(e) for e, _ in self.vous} | {tuple(e) for e, _ in self.tu})}


def you_pairs(pairs: Sequence) -> YouPairs:
    """Sort ``pairs`` (``(english_tokens, french_tokens)``, e.g. a benchmark's ``train``) whose English addresses
    someone into *vous* and *tu* pairs (:func:`register_of`; a French with both registers or neither is left out),
    and pair up the English sentences that have both."""
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise TypeError(f"pairs must be a list of (english_tokens, french_tokens), got {received(pairs)}")
    vous, tu = [], []
    first: dict[tuple, dict[str, list[str]]] = {}
    for pair in pairs:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"pairs must hold (english_tokens, french_tokens) pairs, got {received(pair)}")
        english, french = _check_tokens(pair[0], "english"), _check_tokens(pair[1], "french")
        if not addresses_you(english):
            continue
        register = register_of(" ".join(french))
        if register not in ("vous", "tu"):
            continue
        (vous if register == "vous" else tu).append((english, french))
        first.setdefault(tuple(english), {}).setdefault(register, french)
    preferences = [(list(e), found["vous"], found["tu"]) for e, found in first.items() if len(found) == 2]
    return YouPairs(vous, tu, preferences)
