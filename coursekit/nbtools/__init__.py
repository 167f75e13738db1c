"""The maintainers' notebook tools.

* :mod:`~coursekit.nbtools.execution` — build each notebook from its jupytext ``.py`` twin, execute it in a
  fresh kernel in a profile, record its wall time, write the README runtime table, check the twins are in sync;
* :mod:`~coursekit.nbtools.claims` — the claims check: every number the prose states is shown by an output,
  the code or a committed report of the same notebook; no heading hidden in a code cell, no empty markdown cell;
* :mod:`~coursekit.nbtools.figures` — stored PNG outputs re-encoded with a 256-colour palette (``run`` does it to
  every notebook it saves), so the committed notebooks stay within the tracked tree's budget;
* ``python -m coursekit.nbtools run|table|sync-check|claims|compact-figures`` — the command line
  (:mod:`~coursekit.nbtools.__main__`).
"""
