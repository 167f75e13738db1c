"""Which register a French translation chose (coursekit.translation.register): formal vous, informal tu."""

import math

import pytest

from coursekit.translation.register import RegisterCount, register_of, vous_rate


@pytest.mark.parametrize("french, register", [
    ("Vous êtes fatigué.", "vous"),
    ("Où est votre voiture ?", "vous"),
    ("J'aime vos chaussures.", "vous"),
    ("Tu es fatigué.", "tu"),
    ("Je t'aime.", "tu"),
    ("Je t’attends.", "tu"),
    ("C'est pour toi.", "tu"),
    ("Où sont tes clés ?", "tu"),
    ("Ta sœur est là ?", "tu"),
    ("Je te le dis.", "tu"),
    ("Tu sais, vous deux, vous êtes drôles.", "both"),
    ("Il fait beau.", None),
    ("Elle est tenace et têtue.", None),           # te, ta inside words are not forms
    ("Tutoyer n'est pas vouvoyer.", None),
    ("La tour Montparnasse.", None),
])
def test_register_of(french, register):
    assert register_of(french) == register


def test_vous_rate_counts_only_sentences_with_one_register():
    count = vous_rate(["Vous êtes là.", "Tu es là.", "Vous venez ?", "Il pleut.", "Tu sais, vous deux."])
    assert count == RegisterCount(vous=2, tu=1, both=1, neither=1)
    assert math.isclose(count.rate, 2 / 3)
    assert math.isnan(vous_rate(["Il pleut."]).rate)
