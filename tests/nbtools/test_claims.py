"""The claims check (coursekit.nbtools.claims): every number of the prose is shown by its notebook.

It runs on all 13 executed notebooks and their student versions, and its own tests show that it catches a
stale number, a heading hidden in a code cell and an empty markdown cell — and lets through what is not a
claim (references, bounds, citations, exercises, a setting restated from the code).
"""

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from coursekit.exercises.student import student_notebook
from coursekit.nbtools.claims import claim_problems, printed_numbers, prose_numbers
from coursekit.nbtools.execution import NOTEBOOKS

EXECUTED = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _nb(markdown: str, printed: str = "", code: str = "x = 1") -> nbformat.NotebookNode:
    cell = new_code_cell(code, outputs=[new_output("stream", name="stdout", text=printed)] if printed else [])
    return new_notebook(cells=[new_markdown_cell("# 99 — T"), cell, new_markdown_cell(markdown)])


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.stem)
def test_every_number_of_the_prose_is_shown(path):
    assert claim_problems(path) == []


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.stem)
def test_student_versions_pass_too(path):
    student, _ = student_notebook(nbformat.read(str(path), as_version=4), path.name)
    assert claim_problems(student, data_dir=NOTEBOOKS.parent / "data") == []


def test_a_stale_number_is_caught():
    nb = _nb("The Transformer reaches **43.9 BLEU** after 4,000 updates.", printed="BLEU 41.27 after 4000 updates")
    problems = claim_problems(nb)
    assert len(problems) == 1 and "'43.9'" in problems[0] and "cell 2" in problems[0]
    assert claim_problems(_nb("It reaches 41.3 BLEU after 4,000 updates.", printed="BLEU 41.27 after 4000")) == []


def test_precision_percent_minutes_and_sizes():
    printed = "acc 0.8624, 3428.2 s, 1612345 parameters, lr 0.0003"
    for ok in ("86 % of the sentences", "accuracy 0.86", "57 min of training", "1.6M parameters", "lr 3e-4"):
        assert claim_problems(_nb(ok, printed=printed)) == [], ok
    for stale in ("87 % of the sentences", "accuracy 0.87", "50 min of training", "1.7M parameters", "lr 3e-5"):
        assert len(claim_problems(_nb(stale, printed=printed))) == 1, stale


def test_what_is_not_a_claim():
    for text in ("As §3.1 and Table 2.5 say.", "Quick runs in ≤ 45 s.", "The paper reports 28.4 BLEU.",
                 "Vaswani et al. (2017) report 41.8.", "A tokenizer with 8,000 pieces.",
                 "<!-- claims: cited -->\n| SQuAD | 84.4 |", "**Exercise 2 (written).** Why 10,000 tokens?"):
        assert claim_problems(_nb(text, code="vocab_size = 8000")) == [], text
    nb = _nb("## Exercises\n\nTry a rate of 0.37.")
    assert claim_problems(nb) == []


def test_hidden_headings_and_empty_cells_are_caught():
    nb = _nb("Fine.", code="y = 2\n\n# ## 6. Which noise? The ablation\n#\n# We repeat the experiment.")
    problems = claim_problems(nb)
    assert len(problems) == 1 and "heading hidden in a code cell" in problems[0] and "6. Which noise?" in problems[0]
    assert claim_problems(_nb("Fine.", code="# a comment\n#\n# another")) == []
    nb.cells[1].source = "y = 2"
    nb.cells.append(new_markdown_cell("  \n"))
    assert claim_problems(nb) == ["cell 3: an empty markdown cell"]


def test_a_verdict_written_into_a_printed_string_is_caught():
    problems = claim_problems(_nb("Fine.", code='print("reloaded model gives identical outputs: True")'))
    assert len(problems) == 1 and "verdict written into its string" in problems[0] and "cell 1" in problems[0]
    for fine in ('print("identical outputs:", same)', 'print(f"identical outputs: {same}")',
                 'print("True positives are counted")'):
        assert claim_problems(_nb("Fine.", code=fine)) == [], fine


def test_blank_printed_output_is_caught():
    for blank in ("\n\n\nvocabulary 512", "  \n"):
        problems = claim_problems(_nb("Fine.", printed=blank))
        assert problems == ["cell 1: its printed output starts with an empty line or is only whitespace"], blank
    assert claim_problems(_nb("Fine.", printed="vocabulary 512\n\nper token 2.57\n")) == []


def test_universal_words_need_an_assert_in_their_section():
    for claim in ("The model always attends most to itself.", "Attention never hurts.",
                  "The Llama block beats the GPT-2 block.", "It is better on every seed than the baseline."):
        problems = claim_problems(_nb(claim))
        assert len(problems) == 1 and "universal claim with no assert" in problems[0], claim
        assert claim_problems(_nb(claim, code="assert wins > 0")) == [], claim
    assert claim_problems(_nb("Attention never hurts (asserted in §3).")) == []
    assert claim_problems(_nb("Vaswani et al. (2017) say it always helps.")) == []
    nb = _nb("Fine.")
    nb.cells[0].source = "# 99 — T\n\n**Learning goals**: always report the coverage."   # goals are not claims
    assert claim_problems(nb) == []


def test_reports_the_code_reads_back_the_prose(tmp_path):
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "report.json").write_text(json.dumps({"mlm": [6.94, 6.3]}))
    prose = "Still at 6.94 after 500 steps."
    assert len(claim_problems(_nb(prose, code="x = 1"), data_dir=tmp_path)) == 1
    assert claim_problems(_nb(prose, code="from coursekit.bert import model"), data_dir=tmp_path) == []
    assert claim_problems(_nb(prose, code='d = model_dir("bert")'), data_dir=tmp_path) == []


def test_number_parsing():
    kinds = [(c.text, c.kind) for c in prose_numbers("Up 1.9 points (0.749 vs 0.731), 133,694 pairs, 86 %, 70 s.")]
    assert kinds == [("1.9", "number"), ("0.749", "number"), ("0.731", "number"), ("133,694", "number"),
                     ("86 %", "percent"), ("70 s", "seconds")]
    assert printed_numbers("BLEU 43.87, 133,694 pairs, lr 1e-3, -0.5") == [43.87, 133694.0, 1e-3, -0.5]
    with pytest.raises(TypeError, match="text must be a str"):
        prose_numbers(None)
    with pytest.raises(ValueError, match="reads an executed .ipynb"):
        claim_problems(NOTEBOOKS / "00_setup.py")
