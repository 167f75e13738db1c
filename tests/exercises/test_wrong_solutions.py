"""Every exercise check is tested against at least five realistic wrong solutions (issue: homework that holds).

The tables live next to each check's tests (``tests/exercises/checks/test_<topic>.py``): ``<NAME>_WRONG`` dicts
(one per check) or one ``WRONG`` dict keyed by ``(check name, mistake)``. This test only counts them, so that a
new check cannot land without its table.
"""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import TESTS, load_test_module

from coursekit.exercises.checks import (
    attention,
    attention_scores,
    bart,
    basics,
    bert,
    classifiers,
    embeddings,
    gpt,
    llama,
    lstm,
    multihead,
    posttrain,
    prompting,
    rnn,
    seq2seq,
    transformer,
)

# test module of tests/exercises/checks/ -> the check modules whose checks it feeds wrong solutions
TABLES = {
    "test_attention": (attention, multihead, transformer),
    "test_attention_scores": (attention_scores,),
    "test_bart": (bart,),
    "test_basics": (basics,),
    "test_bert": (bert,),
    "test_embeddings": (embeddings, classifiers),
    "test_gpt": (gpt,),
    "test_llama": (llama,),
    "test_posttrain": (posttrain,),
    "test_prompting": (prompting,),
    "test_rnn": (rnn, lstm),
    "test_seq2seq": (seq2seq,),
}
MINIMUM = 5


def test_every_check_module_is_listed():
    from coursekit import exercises

    listed = {name for modules in TABLES.values() for m in modules for name in m.__all__}
    assert listed == set(exercises.all_checks())


@pytest.mark.parametrize("test_module", sorted(TABLES))
def test_each_check_has_at_least_five_wrong_solutions(test_module):
    module = load_test_module(TESTS / "exercises" / "checks" / f"{test_module}.py")
    checks = [name for m in TABLES[test_module] for name in m.__all__]
    keyed = getattr(module, "WRONG", None)
    if isinstance(keyed, dict) and keyed:
        per_check = Counter(check for check, _ in keyed)
        short = {c: per_check.get(c, 0) for c in checks if per_check.get(c, 0) < MINIMUM}
        assert not short, f"checks with fewer than {MINIMUM} wrong solutions: {short}"
        return
    tables = {name: table for name, table in vars(module).items()
              if name.endswith("_WRONG") and isinstance(table, dict)}
    assert len(tables) == len(checks), f"{len(checks)} checks {checks} but {len(tables)} tables {sorted(tables)}"
    short = {name: len(t) for name, t in tables.items() if len(t) < MINIMUM}
    assert not short, f"tables with fewer than {MINIMUM} wrong solutions: {short}"
