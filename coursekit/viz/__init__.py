"""How the notebooks show things: static figures (:mod:`~coursekit.viz.plots`: attention heatmaps, curves, PCA
plots) and interactive explorers with a static fallback (:mod:`~coursekit.viz.widgets`)."""
