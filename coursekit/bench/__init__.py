"""Measurements of this machine: :mod:`~coursekit.bench.speed` (a training update of each from-scratch model
next to its torch reference) and :mod:`~coursekit.bench.cost` (time and memory of attention as T grows);
``python -m coursekit.bench`` runs them."""
