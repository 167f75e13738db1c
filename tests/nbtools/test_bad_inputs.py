"""Bad calls to coursekit.nbtools.claims (the notebooks' claims check) and coursekit.nbtools.figures: each must
give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
Damaged notebooks are written in a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from helpers.bad_inputs import Bad, bad_call_test, tmp

from coursekit.nbtools import claims, figures

EXEMPT = {
    "coursekit.nbtools.claims.Claim": "a plain result container filled by prose_numbers",
}


# ==============================================================================================
# coursekit.nbtools.claims
# ==============================================================================================

def notebook_file(text: str | None = None, suffix=".ipynb") -> Path:
    """A notebook file in a temporary folder: a one-cell markdown notebook, or ``text`` as it is."""
    path = tmp() / f"nb{suffix}"
    if text is None:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("It reaches 43.9 BLEU.")])
        nbformat.write(nb, str(path))
    else:
        path.write_text(text)
    return path


CLAIMS = [
    Bad("bytes", claims.prose_numbers, lambda: claims.prose_numbers(b"43.9 BLEU"), TypeError,
        r"text must be a str, got bytes"),
    Bad("a markdown cell, not its source", claims.prose_numbers,
        lambda: claims.prose_numbers(nbformat.v4.new_markdown_cell("43.9")), TypeError,
        r"text must be a str, got NotebookNode"),
    Bad("float cell index", claims.prose_numbers, lambda: claims.prose_numbers("43.9 BLEU", 1.0), TypeError,
        r"cell must be an int, got float"),
    Bad("negative cell index", claims.prose_numbers, lambda: claims.prose_numbers("43.9 BLEU", -1), ValueError,
        r"cell must be an int ≥ 0, got -1"),

    Bad("None", claims.printed_numbers, lambda: claims.printed_numbers(None), TypeError,
        r"text must be a str, got NoneType"),
    Bad("a list of outputs", claims.printed_numbers, lambda: claims.printed_numbers(["0.5", "1.5"]), TypeError,
        r"text must be a str, got list"),

    Bad("an int", claims.claim_problems, lambda: claims.claim_problems(7), TypeError,
        r"notebook must be an .ipynb path or an nbformat notebook, got int"),
    Bad("a plain dict", claims.claim_problems, lambda: claims.claim_problems({"cells": []}), TypeError,
        r"notebook must be an .ipynb path or an nbformat notebook, got dict"),
    Bad("the .py twin", claims.claim_problems, lambda: claims.claim_problems(notebook_file("# %%\n", ".py")),
        ValueError, r"the claims check reads an executed .ipynb \(its outputs back the prose\), got .*nb\.py"),
    Bad("a missing notebook", claims.claim_problems, lambda: claims.claim_problems(tmp() / "gone.ipynb"),
        FileNotFoundError, r"no notebook at .*gone\.ipynb"),
    Bad("a notebook that is not JSON", claims.claim_problems,
        lambda: claims.claim_problems(notebook_file("{not json")), ValueError,
        r"nb\.ipynb is not a readable notebook"),
    Bad("a number for data_dir", claims.claim_problems,
        lambda: claims.claim_problems(notebook_file(), data_dir=3), TypeError,
        r"data_dir must be a folder path \(str or Path\) or None, got int"),

    Bad("a list of problems", claims.report_json, lambda: claims.report_json(["cell 1: '43.9'"]), TypeError,
        r"problems_by_notebook must be a dict of notebook name -> list of problems, got list"),
]


# ==============================================================================================
# coursekit.nbtools.figures
# ==============================================================================================

FIGURES = [
    Bad("a notebook's path instead of the notebook", figures.compact_figures,
        lambda: figures.compact_figures("notebooks/07_self_attention.ipynb"), TypeError,
        r"nb must be a notebook read with nbformat \(NotebookNode\), got str"),
    Bad("the .py twin instead of the executed notebook", figures.compact_file,
        lambda: figures.compact_file(notebook_file("# %%\n", suffix=".py")), ValueError,
        r"path must be an existing \.ipynb file, got '.*nb\.py'"),
    Bad("a notebook that does not exist", figures.compact_file,
        lambda: figures.compact_file(tmp() / "missing.ipynb"), ValueError,
        r"path must be an existing \.ipynb file, got '.*missing\.ipynb'"),
]


ROWS = CLAIMS + FIGURES

test_bad_call = bad_call_test(ROWS)
