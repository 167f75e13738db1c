"""The grader's remote calls, on the notebooks' own solutions: every check passes them through the wire on the
visible and the hidden variants, and every hidden variant gives the student's function inputs it has not seen."""

from __future__ import annotations

import base64
import json
import re

import cloudpickle
import pytest
import torch
from helpers.exercises import ROOT, notebook_solutions
from helpers.remote_session import _PAYLOAD, LocalSession

from coursekit.exercises import all_checks
from coursekit.exercises.core import FAILED, PASSED, case_variant
from coursekit.exercises.remote import RemoteFunction, grade_check
from coursekit.exercises.wire import Unusable, decode, encode

CHECKS = all_checks()
CALLS = [(path.stem, check, fn) for path in sorted((ROOT / "notebooks").glob("*.py"))
         for check, fn in re.findall(r"^(check_\w+)\((\w+)\)", path.read_text(encoding="utf-8"), flags=re.M)]


def test_every_check_is_called_by_a_notebook():
    assert {check for _, check, _ in CALLS} == set(CHECKS)


@pytest.mark.parametrize("notebook, check, fn", CALLS, ids=[c for _, c, _ in CALLS])
def test_the_notebook_solution_passes_through_the_wire_on_every_variant(notebook, check, fn):
    outcome = grade_check(CHECKS[check], RemoteFunction(LocalSession(dict(notebook_solutions(notebook))), fn))
    assert outcome.result.status == PASSED and outcome.variant == 2, outcome


class _Spy(LocalSession):
    def __init__(self, namespace):
        super().__init__(namespace)
        self.inputs = set()

    def run(self, code, timeout):
        args = cloudpickle.loads(base64.b64decode(_PAYLOAD.search(code)[1]))["args"]
        self.inputs.add(tuple(json.dumps(encode(a.state_dict() if isinstance(a, torch.nn.Module) else
                                                vars(a.__self__) if hasattr(a, "__self__") else a), sort_keys=True)
                              for a in args))
        return super().run(code, timeout)


@pytest.mark.parametrize("notebook, check, fn", CALLS, ids=[c for _, c, _ in CALLS])
def test_a_hidden_variant_shows_the_function_inputs_the_notebook_never_showed(notebook, check, fn):
    seen = {}
    for variant in (0, 1):
        spy = _Spy(dict(notebook_solutions(notebook)))
        with case_variant(variant):
            CHECKS[check](RemoteFunction(spy, fn), verbose=False)
        seen[variant] = spy.inputs
    assert seen[1] - seen[0], f"{check}: its hidden cases are the visible ones"


def test_a_function_special_cased_to_the_visible_cases_fails_without_showing_them():
    table, keep = [], [torch.softmax]     # a reference the check's refusal does not replace

    def spy(x):
        table.append((x.clone(), keep[0](x, -1)))
        return table[-1][1]

    with case_variant(0):
        CHECKS["check_softmax"](spy, verbose=False)

    def memorised(x):
        return next((y for seen, y in table if seen.shape == x.shape and torch.equal(seen, x)), torch.zeros_like(x))

    outcome = grade_check(CHECKS["check_softmax"], RemoteFunction(LocalSession({"memorised": memorised}), "memorised"))
    assert (outcome.result.status, outcome.variant) == (FAILED, 1)
    assert "hidden cases" in outcome.result.message and "expected" not in outcome.result.message


def test_only_plain_values_come_back():
    class Yes(torch.Tensor):
        def __eq__(self, other):
            return True

    value = decode(json.loads(json.dumps(encode(torch.ones(2).as_subclass(Yes)))))
    assert type(value) is torch.Tensor and torch.equal(value, torch.ones(2))
    assert isinstance(decode(json.loads(json.dumps(encode(object())))), Unusable)
    assert decode(encode({"a": (1, 2.5, float("nan"), None, "s", torch.tensor([True, False]))}))["a"][4] == "s"
