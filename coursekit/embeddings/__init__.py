"""Word vectors (notebooks 01–02).

* :mod:`~coursekit.embeddings.counts` — the vocabulary, co-occurrence counts, PPMI and truncated SVD;
* :mod:`~coursekit.embeddings.sgns` — skip-gram with negative sampling (Mikolov et al. 2013);
* :mod:`~coursekit.embeddings.word_vectors` — a vector table, similarity and analogy benchmarks, the gensim
  baseline;
* :mod:`~coursekit.embeddings.classifiers` — sentence classifiers over word vectors: BOW, CBOW, the Deep
  Averaging Network and Kim's CNN (notebook 02).
"""
