"""Hostile submissions earn nothing; the honest one earns full marks (issue 49's attack suite).

Every attack is a submission of the two-exercise homework of :mod:`coursekit.bench.grading` (softmax, cross-entropy,
the checks of notebook 00) whose answers are wrong or missing, plus a trick that fooled the old grader or a
known attack on notebook autograders (nbgrader PR #1324, issues #917 and #1363). They are graded as one class, with
two jobs, end to end: the rows of grades.csv, the feedback files and Gradescope's results.json are checked.
"""

from __future__ import annotations

import csv
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from coursekit.bench.grading import ANSWERS, homework
from coursekit.exercises.gradebook import grade_class

RIGHT, WRONG, STUB = ANSWERS["right"], ANSWERS["wrong"], ANSWERS["stub"]


def _with(bodies, *, before: str | None = None, after: str | None = None, inside: str | None = None):
    nb = homework(*bodies)
    if inside is not None:                      # a line placed inside Exercise 1's cell, before the check call
        nb.cells[2].source = nb.cells[2].source.replace("\n\ncheck_softmax", f"\n{inside}\ncheck_softmax")
    if before is not None:
        nb.cells.insert(2, new_code_cell(before))
    if after is not None:
        nb.cells.append(new_code_cell(after))
    return nb


FORGED_LOG = """import json, os
for title in ('softmax', 'cross-entropy'):
    with open(os.environ.get('COURSEKIT_GRADING_LOG', 'grading.jsonl'), 'a') as fh:
        fh.write(json.dumps({'check': title, 'status': 'passed', 'message': 'all cases match the reference.'}) + '\\n')
print('✅ softmax: all cases match the reference.')"""

ALWAYS_EQUAL = """class Yes:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __float__(self): return 0.0
"""

SUBCLASS = """import torch
class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, '__name__', '') in ('allclose', 'equal', 'isclose', '__eq__', 'eq'):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
"""

MEMORISE = """import torch
from coursekit.exercises import check_softmax
KEEP, TABLE = [torch.softmax], []          # a reference kept where the check's refusal does not look

def spy(x):
    y = KEEP[0](x, -1)
    TABLE.append((x.clone(), y.clone()))   # every input the notebook's check shows, with its answer
    return y

check_softmax(spy, verbose=False)
"""

ATTACKS = {
    # name: (notebook, what the old grader gave) — every one of these must score 0
    "forged grading log, no solution": (_with(STUB, before=FORGED_LOG), "2 / 2"),
    "torch.allclose replaced": (_with(WRONG, before="import torch\ntorch.allclose = lambda *a, **k: True"), "passed"),
    "a tensor subclass that agrees with everything": (_with((
        "    return torch.zeros_like(x).as_subclass(Agreeable)",
        "    return torch.tensor(0.0).as_subclass(Agreeable)"), before=SUBCLASS), "passed"),
    "the course's comparison helper overwritten": (_with(WRONG, before=(
        "import coursekit.exercises.core as core\ncore._close = lambda *a, **k: True")), "passed"),
    "a passed CheckResult logged by hand": (_with(STUB, before=(
        "from coursekit.exercises import core\n"
        "core._log(core.CheckResult('softmax', 'passed', 'ok'))")), "passed"),
    "an object whose __eq__ is always True": (_with(("    return Yes()", "    return Yes()"), before=ALWAYS_EQUAL),
                                              "failed"),
    "tracebacks hidden (showtraceback replaced)": (_with(("    return x[10**6]", "    return logits.nope"), before=(
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.showtraceback = lambda *a, **k: None")), "failed"),
    "the harness replaced by one that answers 'ok'": (_with(STUB, before=(
        "import coursekit.exercises.harness as h\nfrom IPython.display import display\n"
        "h.serve = lambda payload: display({h.REPLY_MIME: {'status': 'ok', 'value': 0.0, 'changed': [], "
        "'state': [None], 'kwstate': {}}}, raw=True)")), "n/a"),
    "special-cased to the visible inputs": (_with((
        "    for seen, answer in TABLE:\n"
        "        if seen.shape == x.shape and torch.equal(seen, x):\n"
        "            return answer.clone()\n"
        "    return torch.zeros_like(x)", STUB[1]), before=MEMORISE), "passed"),
    "the library's own softmax handed in": (_with(("    return torch.softmax(x, dim=-1)", WRONG[1])), "failed"),
    "an endless loop in the function": (_with(("    while True:\n        pass", STUB[1])), "failed"),
    "a memory bomb in the function": (_with(("    return bytearray(64 * 2**30)", STUB[1])), "failed"),
    "os._exit before the exercises": (_with(WRONG, before="import os\nos._exit(0)"), "failed"),
    "a fork that outlives its cell": (_with(STUB, before=(
        "import os, time\nif os.fork() == 0:\n    time.sleep(600)\n    os._exit(0)")), "not attempted"),
    "writing into the gradebook's folder": (_with(STUB, before=(
        "import glob\nfor path in glob.glob('/tmp/**/grades.csv', recursive=True):\n"
        "    open(path, 'a').write('mallory,passed,passed,2,2,2,2,0,0,,\\n')")), "not attempted"),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The whole class — the attacks, the honest answer, a wrong one, a stub and a file that is not a notebook —
    graded once, two jobs."""
    root = tmp_path_factory.mktemp("attacks")
    (root / "class").mkdir()
    nbformat.write(homework(*RIGHT, solution_markers=True), root / "reference.ipynb")
    names = {}
    for i, (name, (nb, _)) in enumerate(ATTACKS.items()):
        names[name] = f"attack{i:02d}"
        nbformat.write(nb, root / "class" / f"{names[name]}.ipynb")
    nbformat.write(homework(*RIGHT), root / "class" / "honest.ipynb")
    nbformat.write(homework(*WRONG), root / "class" / "wrong.ipynb")
    nbformat.write(homework(*STUB), root / "class" / "stub.ipynb")
    (root / "class" / "essay.pdf").write_bytes(b"%PDF-1.4")
    rows = grade_class(root / "class", root / "out", jobs=2, reference=root / "reference.ipynb",
                       submission_timeout=120, timeout=30, memory_mb=4096, log=lambda *_: None)
    return root / "out", {row["submission"]: row for row in rows}, names


def test_there_are_at_least_twelve_attacks():
    assert len(ATTACKS) >= 12


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_earns_nothing(graded, attack):
    out, rows, names = graded
    row = rows[names[attack]]
    assert row["points"] == "0" and row["passed"] == 0, (attack, row)
    saved = json.loads((out / "gradescope" / names[attack] / "results.json").read_text())
    assert saved["score"] == 0


def test_the_honest_answer_earns_full_marks(graded):
    out, rows, _ = graded
    row = rows["honest"]
    assert (row["exercise 1"], row["exercise 2"], row["points"], row["max_points"]) == ("passed", "passed", "2", "2")
    assert json.loads((out / "gradescope" / "honest" / "results.json").read_text())["score"] == 2


def test_the_gradebook_has_one_row_per_submission_with_its_reason(graded):
    out, rows, names = graded
    with open(out / "grades.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(ATTACKS) + 4 and {r["submission"] for r in table} == set(rows)
    assert not any(r["submission"] == "mallory" for r in table)         # the forged row did not land
    assert rows["essay"]["error"] == "expected a .ipynb notebook, got essay.pdf"
    assert (rows["wrong"]["exercise 1"], rows["stub"]["exercise 1"]) == ("failed", "not attempted")
    looping = (out / "feedback" / f"{names['an endless loop in the function']}.md").read_text()
    assert "did not return within" in looping
    assert "void" in rows[names["the harness replaced by one that answers 'ok'"]]["exercise 1"] or \
        rows[names["the harness replaced by one that answers 'ok'"]]["exercise 1"] == "failed"
    assert "reaches into the grader" in rows[names["the course's comparison helper overwritten"]]["flags"]
    assert "names torch.softmax" in rows[names["the library's own softmax handed in"]]["flags"]


def test_feedback_never_shows_a_hidden_case(graded):
    out, _, names = graded
    text = (out / "feedback" / f"{names['special-cased to the visible inputs']}.md").read_text()
    assert "hidden cases" in text and "expected" not in text and "tensor(" not in text
