"""nbtools prose (coursekit.nbtools.execution.sync_prose): a prose-only edit of a notebook's .py reaches its executed
.ipynb without re-executing it, and an edit of its code does not."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from coursekit.nbtools.execution import sync_problems, sync_prose

PY = '''# %% [markdown]
# # 99 — A notebook
#
# It prints {number}.

# %%
print(42)
'''


def _twins(folder, number="42", code="print(42)"):
    (folder / "99_a.py").write_text(PY.format(number=number).replace("print(42)", code), encoding="utf-8")
    nb = new_notebook(cells=[new_markdown_cell("# 99 — A notebook\n\nIt prints 42."),
                             new_code_cell("print(42)", execution_count=1,
                                           outputs=[new_output("stream", name="stdout", text="42\n")])])
    nbformat.write(nb, folder / "99_a.ipynb")
    return folder / "99_a.py"


def test_edited_prose_reaches_the_executed_notebook_with_its_outputs(tmp_path):
    path = _twins(tmp_path, number="forty-two")
    assert sync_problems(tmp_path) != []
    assert sync_prose(path) == 1
    nb = nbformat.read(tmp_path / "99_a.ipynb", as_version=4)
    assert nb.cells[0].source.endswith("It prints forty-two.") and nb.cells[1].outputs[0].text == "42\n"
    assert sync_problems(tmp_path) == [] and sync_prose(path) == 0


def test_edited_code_must_be_executed(tmp_path):
    path = _twins(tmp_path, code="print(43)")
    with pytest.raises(ValueError, match="differ in their code cells .* run `python -m coursekit.nbtools run"):
        sync_prose(path)
