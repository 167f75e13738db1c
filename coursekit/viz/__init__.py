"""How the notebooks show things: static figures (:mod:`~coursekit.viz.plots`: attention heatmaps, curves, PCA
plots), interactive explorers with a static fallback (:mod:`~coursekit.viz.widgets`), figures saved as compact
palette PNGs (:mod:`~coursekit.viz.png`) and counts in words (:mod:`~coursekit.viz.wording`: "1 thread",
"2 threads")."""
