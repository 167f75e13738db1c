"""Bad calls to coursekit.embeddings (counts, SGNS, word vectors, the classifiers over them): each must
give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
A ``returns=`` row checks a documented convention instead (e.g. a similarity score over fewer than three
covered pairs is NaN, reported with its coverage). Files are damaged in a temporary folder.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from helpers.bad_inputs import NAN, Bad, bad_call_test, cut, i64, tmp
from helpers.tiny_models import toy_vectors
from safetensors.torch import save_file
from torch import nn

from coursekit import text
from coursekit.embeddings import classifiers, sgns, word_vectors
from coursekit.embeddings import counts as embeddings
from coursekit.training import loop as train

EXEMPT = {
    "coursekit.embeddings.sgns.SGNSHistory": "a plain result container filled by train_sgns",
}


# ==============================================================================================
# coursekit.embeddings.classifiers
# ==============================================================================================

def batch(B=2, T=4, V=10):
    ids = torch.randint(1, V, (B, T))
    mask = torch.ones(B, T, dtype=torch.bool)
    mask[1, 2:] = False
    return ids, mask


def feats(B=2, T=4, d=3):
    return torch.randn(B, T, d)


class FakeVectors:
    """Something with ``stoi`` and ``vectors`` (what init_embeddings reads)."""

    def __init__(self, words, vectors):
        self.stoi = {w: i for i, w in enumerate(words)}
        self.vectors = vectors


def embedding(V=4, d=3):
    return nn.Embedding(V, d, padding_idx=0)


ITOS = ["<pad>", "a", "b", "c"]

CLASSIFIERS = [
    Bad("list", classifiers.masked_mean, lambda: classifiers.masked_mean([[0.0]], batch()[1]), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("2-D x", classifiers.masked_mean, lambda: classifiers.masked_mean(torch.randn(2, 4), batch()[1]), ValueError,
        r"x must have 3 dimensions, got shape \(2, 4\)"),
    Bad("integer x", classifiers.masked_mean,
        lambda: classifiers.masked_mean(torch.ones(2, 4, 3, dtype=i64), batch()[1]), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),
    Bad("float mask", classifiers.masked_mean, lambda: classifiers.masked_mean(feats(), torch.ones(2, 4)), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("mask one position too long", classifiers.masked_mean,
        lambda: classifiers.masked_mean(feats(), torch.ones(2, 5, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(2, 5\)"),
    Bad("(T, B) mask", classifiers.masked_mean,
        lambda: classifiers.masked_mean(feats(), torch.ones(4, 2, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(4, 2\)"),
    Bad("(B, T, 1) mask", classifiers.masked_mean,
        lambda: classifiers.masked_mean(feats(), torch.ones(2, 4, 1, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(2, 4, 1\)"),

    Bad("float mask", classifiers.masked_max, lambda: classifiers.masked_max(feats(), torch.ones(2, 4)), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("mask of another length", classifiers.masked_max,
        lambda: classifiers.masked_max(feats(), torch.ones(2, 3, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(2, 3\)"),
    Bad("2-D x", classifiers.masked_max, lambda: classifiers.masked_max(torch.randn(2, 4), batch()[1]), ValueError,
        r"x must have 3 dimensions"),
    Bad("a row without real positions (max would be -inf)", classifiers.masked_max,
        lambda: classifiers.masked_max(feats(), torch.tensor([[True] * 4, [False] * 4])), ValueError,
        r"mask rows \[1\] have no real position"),

    Bad("p = 1", classifiers.word_dropout, lambda: classifiers.word_dropout(batch()[1], 1.0), ValueError,
        r"p must lie in \[0, 1\), got 1.0"),
    Bad("NaN p", classifiers.word_dropout, lambda: classifiers.word_dropout(batch()[1], NAN), ValueError,
        r"p must lie in \[0, 1\), got nan"),
    Bad("p as a string", classifiers.word_dropout, lambda: classifiers.word_dropout(batch()[1], "0.3"), TypeError,
        r"p must be a number, got str"),
    Bad("float mask", classifiers.word_dropout, lambda: classifiers.word_dropout(torch.ones(2, 4), 0.3), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("1-D mask", classifiers.word_dropout,
        lambda: classifiers.word_dropout(torch.ones(4, dtype=torch.bool), 0.3), ValueError,
        r"mask must have 2 dimensions, got shape \(4,\)"),

    Bad("vocab_size 0", classifiers.BOW, lambda: classifiers.BOW(0), ValueError, r"vocab_size must be positive, got 0"),
    Bad("n_classes 0", classifiers.BOW, lambda: classifiers.BOW(10, 0), ValueError, r"n_classes must be positive"),
    Bad("pad_id = vocab_size", classifiers.BOW, lambda: classifiers.BOW(10, pad_id=10), ValueError,
        r"pad_id must lie in \[0, 10\), got 10"),
    Bad("negative pad_id", classifiers.BOW, lambda: classifiers.BOW(10, pad_id=-1), ValueError,
        r"pad_id must lie in \[0, 10\), got -1"),
    Bad("float ids", classifiers.BOW.forward, lambda: classifiers.BOW(10)(batch()[0].float(), batch()[1]), TypeError,
        r"ids must be an integer .*torch.float32"),
    Bad("id past the vocabulary", classifiers.BOW.forward, lambda: classifiers.BOW(10)(batch()[0] + 10, batch()[1]),
        ValueError, r"ids must hold ids in \[0, 10\)"),
    Bad("float mask", classifiers.BOW.forward, lambda: classifiers.BOW(10)(batch()[0], batch()[1].float()), TypeError,
        r"mask must have dtype torch.bool, got torch.float32"),
    Bad("mask shape differs", classifiers.BOW.forward,
        lambda: classifiers.BOW(10)(batch()[0], batch()[1][:, :3]), ValueError,
        r"mask must have the shape of ids \(2, 4\), got \(2, 3\)"),
    Bad("a sentence of padding only", classifiers.BOW.forward,
        lambda: classifiers.BOW(10)(batch()[0], torch.tensor([[True] * 4, [False] * 4])), ValueError,
        r"rows \[1\] are all padding"),

    Bad("unknown pooling", classifiers.CBOW, lambda: classifiers.CBOW(10, pooling="max"), ValueError,
        r"pooling must be one of \['mean', 'sum'\], got 'max'"),
    Bad("n_classes 0", classifiers.CBOW, lambda: classifiers.CBOW(10, 4, 0), ValueError,
        r"n_classes must be positive, got 0"),
    Bad("float embed_dim", classifiers.CBOW, lambda: classifiers.CBOW(10, 4.0), TypeError,
        r"embed_dim must be an int, got float"),
    Bad("1-D ids", classifiers.CBOW.forward, lambda: classifiers.CBOW(10, 4)(batch()[0][0], batch()[1][0]),
        ValueError, r"ids must have 2 dimensions, got shape \(4,\)"),

    Bad("n_layers as a bool", classifiers.DAN, lambda: classifiers.DAN(10, n_layers=True), TypeError,
        r"n_layers must be an int, got bool"),
    Bad("n_layers 0", classifiers.DAN, lambda: classifiers.DAN(10, n_layers=0), ValueError,
        r"n_layers must be positive, got 0"),
    Bad("dropout 1", classifiers.DAN, lambda: classifiers.DAN(10, dropout=1.0), ValueError,
        r"dropout must lie in \[0, 1\), got 1.0"),
    Bad("negative word dropout", classifiers.DAN, lambda: classifiers.DAN(10, word_dropout=-0.1), ValueError,
        r"word_dropout must lie in \[0, 1\), got -0.1"),
    Bad("unknown activation", classifiers.DAN, lambda: classifiers.DAN(10, activation="gelu"), ValueError,
        r"activation must be one of \['relu', 'tanh'\], got 'gelu'"),
    Bad("n_classes 0", classifiers.DAN, lambda: classifiers.DAN(10, 4, 0), ValueError,
        r"n_classes must be positive, got 0"),
    Bad("mask shape differs", classifiers.DAN.forward,
        lambda: classifiers.DAN(10, 4)(batch()[0], batch()[1].T), ValueError, r"mask must have the shape of ids"),

    Bad("no widths", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=()), ValueError,
        r"widths must not be empty"),
    Bad("one int for widths", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=3), TypeError,
        r"widths must be a sequence of ints, got int"),
    Bad("zero width", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=(3, 0)), ValueError,
        r"widths must be positive, got \(3, 0\)"),
    Bad("float width", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=(2.5,)), TypeError,
        r"widths must hold ints, got \[2.5\] \(float\)"),
    Bad("bool width", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=(True, 3)), TypeError,
        r"widths must hold ints, got \[True\] \(bool\)"),
    Bad("n_filters 0", classifiers.KimCNN, lambda: classifiers.KimCNN(10, n_filters=0), ValueError,
        r"n_filters must be positive, got 0"),
    Bad("dropout above 1", classifiers.KimCNN, lambda: classifiers.KimCNN(10, dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("float mask", classifiers.KimCNN.features,
        lambda: classifiers.KimCNN(10, 4, widths=(2,), n_filters=2).features(batch()[0], batch()[1].float()),
        TypeError, r"mask must have dtype torch.bool"),
    Bad("float ids", classifiers.KimCNN.forward,
        lambda: classifiers.KimCNN(10, 4, widths=(2,), n_filters=2)(batch()[0].double(), batch()[1]), TypeError,
        r"ids must be an integer .*torch.float64"),

    Bad("a Linear layer", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(nn.Linear(3, 4), ITOS, FakeVectors(["a"], np.ones((1, 3)))), TypeError,
        r"embedding must be an nn.Embedding, got Linear"),
    Bad("itos shorter than the table", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS[:3], FakeVectors(["a"], np.ones((1, 3)))), ValueError,
        r"itos has 3 words but the embedding has 4 rows"),
    Bad("itos as a string", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), "abcd", FakeVectors(["a"], np.ones((1, 3)))), TypeError,
        r"itos must be a list of words, got str"),
    Bad("vectors of another dimension", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a"], np.ones((1, 5)))), ValueError,
        r"pretrained vectors have dimension 5, the embedding 3; build the model with embed_dim=5"),
    Bad("a dict of vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, {"a": np.ones(3)}), TypeError,
        r"word_vectors must have .stoi and .vectors.*got dict"),
    Bad("NaN in the pretrained vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a", "b"], np.array([[1, 2, 3],
                                                                                             [NAN, 0, 0]]))),
        ValueError, r"word_vectors.vectors must be finite, got 1 NaN"),
    Bad("1-D vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a"], np.ones(3))), ValueError,
        r"word_vectors.vectors must have 2 dimensions, got shape \(3,\)"),
    Bad("more words than vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a", "b", "c"], np.ones((2, 3)))),
        ValueError, r"word_vectors has 3 words but 2 vectors"),

    Bad("unknown kind", classifiers.classifier, lambda: classifiers.classifier("rnn", 10), ValueError,
        r"kind must be one of \['bow', 'cbow', 'cnn', 'dan'\], got 'rnn'"),
    Bad("an option of another model", classifiers.classifier,
        lambda: classifiers.classifier("dan", 10, widths=(3,)), TypeError, r"unexpected keyword argument 'widths'"),
    Bad("vocab_size 0", classifiers.classifier, lambda: classifiers.classifier("cbow", 0), ValueError,
        r"vocab_size must be positive, got 0"),
]


# ==============================================================================================
# coursekit.embeddings.counts
# ==============================================================================================

TINY = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat"]]
TINY_IDS = [[0, 1, 2, 3, 0, 4], [0, 5, 2]]


def tiny_vocab():
    return text.Vocab(["the", "cat", "sat", "on", "mat", "dog"])


EMBEDDINGS = [
    Bad("untokenised sentences", embeddings.build_vocab, lambda: embeddings.build_vocab(["the cat sat"]), TypeError,
        r"sentences must be a list of token lists, got a str inside it"),
    Bad("min_count 0", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY, min_count=0), ValueError,
        r"min_count must be positive, got 0"),
    Bad("min_count above every count", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY, min_count=10),
        ValueError, r"no word occurs 10 times or more; lower min_count"),
    Bad("max_size 0", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY, min_count=1, max_size=0),
        ValueError, r"max_size must be positive, got 0"),
    Bad("ids instead of tokens", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY_IDS, min_count=1),
        TypeError, r"tokens must be str, got 0 \(int\)"),

    Bad("a dict for vocab", embeddings.encode_sentences, lambda: embeddings.encode_sentences(TINY, {"the": 0}),
        TypeError, r"vocab must be a coursekit.text.Vocab, got dict"),
    Bad("one sentence as a string", embeddings.encode_sentences,
        lambda: embeddings.encode_sentences("the cat", tiny_vocab()), TypeError,
        r"sentences must be a list of token lists, got str"),

    Bad("float ids (were truncated)", embeddings.cooccurrence_matrix,
        lambda: embeddings.cooccurrence_matrix([[0.5, 1.7]], 6), TypeError,
        r"id_sentences\[0\] must hold integer word ids, got float64"),
    Bad("bool ids", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix([[True, False]], 6),
        TypeError, r"id_sentences\[0\] must hold integer word ids, got bool"),
    Bad("id past the vocabulary", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix([[0, 7]], 6),
        ValueError, r"word ids must lie in \[0, 6\), got values in \[0, 7\]"),
    Bad("negative id", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix([[0, -1]], 6),
        ValueError, r"word ids must lie in \[0, 6\), got values in \[-1, 0\]"),
    Bad("unknown weighting", embeddings.cooccurrence_matrix,
        lambda: embeddings.cooccurrence_matrix(TINY_IDS, 6, weighting="gaussian"), ValueError,
        r"weighting must be one of \['uniform', 'harmonic'\], got 'gaussian'"),
    Bad("window 0", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix(TINY_IDS, 6, window=0),
        ValueError, r"window must be positive, got 0"),
    Bad("vocab_size 0", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix(TINY_IDS, 0),
        ValueError, r"vocab_size must be positive, got 0"),
    Bad("one flat array", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix(np.arange(3), 6),
        TypeError, r"expected a list of id sequences \(one per sentence\), got ndarray"),

    Bad("list", embeddings.ppmi, lambda: embeddings.ppmi([[1.0, 2.0]]), TypeError,
        r"C must be a torch.Tensor or a scipy.sparse matrix, got list"),
    Bad("integer counts", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2, dtype=i64)), TypeError,
        r"C must be a floating-point tensor, got torch.int64"),
    Bad("NaN count (NaN out)", embeddings.ppmi, lambda: embeddings.ppmi(torch.tensor([[1.0, NAN], [2.0, 1.0]])),
        ValueError, r"C must be finite, got 1 NaN"),
    Bad("NaN in a sparse matrix", embeddings.ppmi,
        lambda: embeddings.ppmi(sp.csr_matrix(np.array([[1.0, NAN], [2.0, 1.0]]))), ValueError,
        r"C must be finite, got 1 NaN"),
    Bad("infinite count", embeddings.ppmi, lambda: embeddings.ppmi(torch.tensor([[1.0, float("inf")], [2.0, 1.0]])),
        ValueError, r"C must be finite, got 0 NaN and 1 infinite"),
    Bad("negative count", embeddings.ppmi, lambda: embeddings.ppmi(torch.tensor([[1.0, -1.0], [0.0, 1.0]])),
        ValueError, r"C must hold non-negative counts"),
    Bad("all zero", embeddings.ppmi, lambda: embeddings.ppmi(torch.zeros(3, 3)), ValueError,
        r"C has no co-occurrences \(all zero\)"),
    Bad("1-D counts", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(3)), ValueError,
        r"C must have 2 dimensions, got shape \(3,\)"),
    Bad("alpha 1.5", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2), alpha=1.5), ValueError,
        r"alpha must be a number in \(0, 1\], got 1.5"),
    Bad("alpha 0", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2), alpha=0), ValueError,
        r"alpha must be a number in \(0, 1\], got 0"),
    Bad("NaN alpha", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2), alpha=NAN), ValueError,
        r"alpha must be a number in \(0, 1\], got nan"),

    Bad("list", embeddings.svd_vectors, lambda: embeddings.svd_vectors([[1.0]], 1), TypeError,
        r"M must be a 2-D matrix \(tensor, array or scipy.sparse\), got list"),
    Bad("1-D array", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.ones(3), 1), ValueError,
        r"M must be a 2-D matrix, got shape \(3,\)"),
    Bad("NaN", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.array([[1.0, NAN], [0, 1], [1, 1]]), 1),
        ValueError, r"M must be finite, got 1 NaN"),
    Bad("dim too large", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.ones((4, 3)), 3), ValueError,
        r"dim=3 must be smaller than min\(M.shape\)=3"),
    Bad("dim 0", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.ones((4, 3)), 0), ValueError,
        r"dim must be positive, got 0"),
    Bad("NaN power", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.eye(4), 2, power=NAN), ValueError,
        r"power must be (an int )?≥ 0 and finite, got nan"),
]


# ==============================================================================================
# coursekit.embeddings.sgns
# ==============================================================================================

COUNTS = np.array([3, 1, 2, 1, 1, 1])


def sgns_step(center=(0, 1, 2), targets=None, lr=0.1, model=None):
    model = model if model is not None else sgns.SkipGramNS(10, 4)
    center = torch.tensor(center) if isinstance(center, tuple) else center
    targets = targets if targets is not None else torch.randint(0, 10, (len(center), 3))
    return sgns.sgns_sgd_step(model, center, targets, lr)


def tiny_sgns(**kw):
    kw = {"dim": 4, "window": 2, "epochs": 1, "sample": 0.0} | kw
    sentences = kw.pop("sentences", TINY_IDS)
    counts = kw.pop("counts", COUNTS)
    return sgns.train_sgns(sentences, counts, **kw)


SGNS = [
    Bad("negative count", sgns.keep_probabilities, lambda: sgns.keep_probabilities([-1, 2]), ValueError,
        r"counts must hold non-negative word counts, got min -1"),
    Bad("NaN count", sgns.keep_probabilities, lambda: sgns.keep_probabilities([NAN, 2.0]), ValueError,
        r"counts must be finite, got 1 NaN"),
    Bad("2-D counts", sgns.keep_probabilities, lambda: sgns.keep_probabilities(np.ones((2, 2))),
        ValueError, r"counts must be a 1-D array of word counts, got shape \(2, 2\)"),
    Bad("all zero", sgns.keep_probabilities, lambda: sgns.keep_probabilities([0, 0]), ValueError,
        r"counts must have a positive sum"),
    Bad("strings", sgns.keep_probabilities, lambda: sgns.keep_probabilities(["a", "b"]), TypeError,
        r"counts must hold numbers, got <U1"),
    Bad("NaN sample (every word dropped)", sgns.keep_probabilities,
        lambda: sgns.keep_probabilities([3, 2], sample=NAN), ValueError,
        r"sample must be (an int )?≥ 0 and finite, got nan"),
    Bad("negative sample", sgns.keep_probabilities, lambda: sgns.keep_probabilities([3, 2], sample=-1e-3),
        ValueError, r"sample must be (an int )?≥ 0 and finite, got -0.001"),

    Bad("all zero", sgns.noise_distribution, lambda: sgns.noise_distribution([0, 0]), ValueError,
        r"counts must have a positive sum"),
    Bad("NaN count", sgns.noise_distribution, lambda: sgns.noise_distribution([1.0, NAN]), ValueError,
        r"counts must be finite, got 1 NaN"),
    Bad("negative power", sgns.noise_distribution, lambda: sgns.noise_distribution([1, 2], power=-1),
        ValueError, r"power must be (an int )?≥ 0 and finite, got -1"),
    Bad("2-D counts", sgns.noise_distribution, lambda: sgns.noise_distribution(np.ones((2, 2))),
        ValueError, r"counts must be a 1-D array of word counts, got shape \(2, 2\)"),

    Bad("float ids (were truncated)", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1.9, 2]], 4), TypeError,
        r"id_sentences\[0\] must hold integer word ids, got float64"),
    Bad("id past the vocabulary", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 4]], 4),
        ValueError, r"word ids must lie in \[0, 4\), got values in \[0, 4\]"),
    Bad("keep_prob of another length", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1]], 4, keep_prob=np.ones(3)), ValueError,
        r"keep_prob must have shape \(4,\), got \(3,\)"),
    Bad("keep_prob above 1", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1]], 4, keep_prob=np.full(4, 1.5)), ValueError,
        r"keep_prob must hold probabilities in \[0, 1\]"),
    Bad("NaN keep_prob", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1]], 4, keep_prob=np.array([1, NAN, 1, 1])), ValueError,
        r"keep_prob must hold probabilities in \[0, 1\]"),
    Bad("an int for rng", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 1]], 4, rng=0), TypeError,
        r"rng must be a numpy.random.Generator \(np.random.default_rng\(seed\)\), got int"),
    Bad("window 0", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 1]], 4, window=0), ValueError,
        r"window must be positive, got 0"),
    Bad("float vocab_size", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 1]], 4.0), TypeError,
        r"vocab_size must be an int, got float"),

    Bad("integer vectors", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.ones(2, 3, dtype=i64), torch.randn(2, 3), torch.randn(2, 4, 3)), TypeError,
        r"v_c must be a floating-point tensor, got torch.int64"),
    Bad("u_neg of another width", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 5, 2)), ValueError,
        r"expected v_c \(B, d\), u_o \(B, d\), u_neg \(B, K, d\); got \(4, 3\), \(4, 3\), \(4, 5, 2\)"),
    Bad("2-D u_neg", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 3)), ValueError,
        r"u_neg must have 3 dimensions"),
    Bad("NaN vector (NaN out)", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.tensor([[NAN, 0.0]]), torch.ones(1, 2), torch.ones(1, 3, 2)), ValueError,
        r"v_c must be finite, got 1 NaN"),
    Bad("list", sgns.sgns_loss, lambda: sgns.sgns_loss([[0.0]], torch.ones(1, 1), torch.ones(1, 1, 1)),
        TypeError, r"v_c must be a torch.Tensor, got list"),

    Bad("vocab_size 0", sgns.SkipGramNS, lambda: sgns.SkipGramNS(0, 4), ValueError,
        r"vocab_size must be positive, got 0"),
    Bad("float dim", sgns.SkipGramNS, lambda: sgns.SkipGramNS(10, 4.0), TypeError,
        r"dim must be an int, got float"),
    Bad("id past the vocabulary", sgns.SkipGramNS.forward,
        lambda: sgns.SkipGramNS(10, 4)(torch.tensor([10]), torch.tensor([0]), torch.tensor([[0]])), ValueError,
        r"center must hold ids in \[0, 10\), got values in \[10, 10\]"),
    Bad("float ids", sgns.SkipGramNS.forward,
        lambda: sgns.SkipGramNS(10, 4)(torch.tensor([1.0]), torch.tensor([0]), torch.tensor([[0]])), TypeError,
        r"center must be an integer .*torch.float32"),
    Bad("1-D negatives", sgns.SkipGramNS.forward,
        lambda: sgns.SkipGramNS(10, 4)(torch.tensor([1, 2]), torch.tensor([0, 3]), torch.tensor([5, 6])),
        ValueError, r"expected center \(B,\), context \(B,\), negatives \(B, K\); got \(2,\), \(2,\), \(2,\)"),

    Bad("center id out of range", sgns.sgns_sgd_step, lambda: sgns_step(center=(0, 12, 2)), ValueError,
        r"center must hold ids in \[0, 10\), got values in \[0, 12\]"),
    Bad("target id out of range", sgns.sgns_sgd_step,
        lambda: sgns_step(targets=torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 10]])), ValueError,
        r"targets must hold ids in \[0, 10\), got values in \[1, 10\]"),
    Bad("negative center id", sgns.sgns_sgd_step, lambda: sgns_step(center=(0, -1, 2)), ValueError,
        r"center must hold ids in \[0, 10\), got values in \[-1, 2\]"),
    Bad("float targets", sgns.sgns_sgd_step, lambda: sgns_step(targets=torch.zeros(3, 3)), TypeError,
        r"targets must be an integer .*torch.float32"),
    Bad("1-D targets", sgns.sgns_sgd_step, lambda: sgns_step(targets=torch.tensor([1, 2, 3])), ValueError,
        r"targets must have 2 dimensions, got shape \(3,\)"),
    Bad("targets for another batch size", sgns.sgns_sgd_step,
        lambda: sgns_step(targets=torch.zeros(2, 3, dtype=i64)), ValueError,
        r"targets must have size 3 in dim 0 \(one row per center\), got shape \(2, 3\)"),
    Bad("2-D center", sgns.sgns_sgd_step, lambda: sgns_step(center=torch.zeros(3, 1, dtype=i64)), ValueError,
        r"center must have 1 dimensions, got shape \(3, 1\)"),
    Bad("NaN lr", sgns.sgns_sgd_step, lambda: sgns_step(lr=NAN), ValueError,
        r"lr must be positive and finite, got nan"),
    Bad("negative lr (gradient ascent)", sgns.sgns_sgd_step, lambda: sgns_step(lr=-0.1), ValueError,
        r"lr must be positive and finite, got -0.1"),
    Bad("another model", sgns.sgns_sgd_step, lambda: sgns_step(model=nn.Linear(2, 2)), TypeError,
        r"model must be a SkipGramNS, got Linear"),

    Bad("no pair in the corpus", sgns.train_sgns, lambda: tiny_sgns(sentences=[[0], [1]]), ValueError,
        r"no \(center, context\) pairs"),
    Bad("id past len(counts)", sgns.train_sgns, lambda: tiny_sgns(counts=COUNTS[:3]), ValueError,
        r"word ids must lie in \[0, 3\), got values in \[0, 5\]"),
    Bad("float ids", sgns.train_sgns, lambda: tiny_sgns(sentences=[[0.0, 1.0, 2.0]]), TypeError,
        r"id_sentences\[0\] must hold integer word ids, got float64"),
    Bad("2-D counts", sgns.train_sgns, lambda: tiny_sgns(counts=np.ones((6, 2))), ValueError,
        r"counts must be a 1-D array of word counts, got shape \(6, 2\)"),
    Bad("lr as a bool", sgns.train_sgns, lambda: tiny_sgns(lr=True), TypeError, r"lr must be a number, got bool"),
    Bad("NaN lr", sgns.train_sgns, lambda: tiny_sgns(lr=NAN), ValueError, r"lr must be positive and finite, got nan"),
    Bad("min_lr above 1", sgns.train_sgns, lambda: tiny_sgns(min_lr=2.0), ValueError,
        r"min_lr must lie in \[0, 1\], got 2.0"),
    Bad("log_every 0", sgns.train_sgns, lambda: tiny_sgns(log_every=0), ValueError,
        r"log_every must be positive, got 0"),
    Bad("dim 0", sgns.train_sgns, lambda: tiny_sgns(dim=0), ValueError, r"dim must be positive, got 0"),
    Bad("negative sample", sgns.train_sgns, lambda: tiny_sgns(sample=-1.0), ValueError,
        r"sample must be (an int )?≥ 0 and finite, got -1.0"),
    Bad("cpu_threads 0", sgns.train_sgns, lambda: tiny_sgns(cpu_threads=0), ValueError,
        r"cpu_threads must be positive, got 0"),
]


# ==============================================================================================
# coursekit.embeddings.word_vectors
# ==============================================================================================

def saved_vectors(damage=None):
    """Save the toy vectors in a fresh folder, damage them, and load them back."""
    folder = tmp()
    toy_vectors().save(folder / "v")
    if damage is not None:
        damage(folder / "v")
    return word_vectors.WordVectors.load(folder / "v")


def vectors_under_another_name(stem: Path) -> None:
    st = stem.with_suffix(".safetensors")
    save_file({"weights": torch.zeros(5, 3)}, str(st))
    train.stamp_content_hash(st)


def vocabulary_not_json(stem: Path) -> None:
    st = stem.with_suffix(".safetensors")
    save_file({"vectors": torch.zeros(5, 3)}, str(st))      # no vocabulary hash to catch the damage first
    train.stamp_content_hash(st)
    stem.with_suffix(".vocab.json").write_text('["man", ')


WORD_VECTORS = [
    Bad("shape mismatch", word_vectors.WordVectors, lambda: word_vectors.WordVectors(["a"], np.ones((2, 3))),
        ValueError, r"vectors must have shape \(len\(itos\)=1, d\), got \(2, 3\)"),
    Bad("duplicate words", word_vectors.WordVectors, lambda: word_vectors.WordVectors(["a", "a"], np.ones((2, 3))),
        ValueError, r"itos must not contain duplicate words"),
    Bad("itos as a string", word_vectors.WordVectors, lambda: word_vectors.WordVectors("ab", np.ones((2, 3))),
        TypeError, r"itos must be a list of words, got str"),
    Bad("a non-str word", word_vectors.WordVectors, lambda: word_vectors.WordVectors(["a", 3], np.ones((2, 3))),
        TypeError, r"itos must hold str words, got 3 \(int\)"),
    Bad("NaN vectors", word_vectors.WordVectors,
        lambda: word_vectors.WordVectors(["a", "b"], np.array([[1.0, NAN], [0.0, 1.0]])), ValueError,
        r"vectors must be finite, got 1 NaN"),
    Bad("out of vocabulary", word_vectors.WordVectors.index, lambda: toy_vectors().index("green"), KeyError,
        r"'green' is out of vocabulary \(OOV\)"),
    Bad("out of vocabulary", word_vectors.WordVectors.similarity, lambda: toy_vectors().similarity("man", "green"),
        KeyError, r"'green' is out of vocabulary"),
    Bad("k 0", word_vectors.WordVectors.nearest, lambda: toy_vectors().nearest("man", 0), ValueError,
        r"k must be positive, got 0"),
    Bad("k above the candidates (excluded words came back)", word_vectors.WordVectors.nearest,
        lambda: toy_vectors().nearest("man", 5), ValueError, r"k=5 is more than the 4 candidate words"),
    Bad("query of another dimension", word_vectors.WordVectors.nearest, lambda: toy_vectors().nearest(np.ones(4)),
        ValueError, r"query vector must have 3 dimensions, got 4"),
    Bad("NaN query", word_vectors.WordVectors.nearest, lambda: toy_vectors().nearest(np.array([1.0, NAN, 0.0])),
        ValueError, r"query vector must be finite"),
    Bad("exclude as one string", word_vectors.WordVectors.nearest,
        lambda: toy_vectors().nearest("man", 1, exclude="king"), TypeError,
        r"exclude must be a list of words, got str"),
    Bad("out of vocabulary", word_vectors.WordVectors.analogy, lambda: toy_vectors().analogy("man", "woman", "prince"),
        KeyError, r"'prince' is out of vocabulary"),
    Bad("k 0", word_vectors.WordVectors.analogy, lambda: toy_vectors().analogy("man", "woman", "king", k=0),
        ValueError, r"k must be positive, got 0"),
    Bad("missing file", word_vectors.WordVectors.load, lambda: word_vectors.WordVectors.load(tmp() / "missing"),
        FileNotFoundError, r"no saved word vectors at .*missing.safetensors \(notebook 01 writes them\)"),
    Bad("truncated vectors", word_vectors.WordVectors.load,
        lambda: saved_vectors(lambda stem: cut(stem.with_suffix(".safetensors"))), ValueError,
        r"v.safetensors is truncated or damaged.*re-run the command that wrote it"),
    Bad("vocabulary of other vectors", word_vectors.WordVectors.load,
        lambda: saved_vectors(lambda stem: stem.with_suffix(".vocab.json").write_text('["a", "b"]')), ValueError,
        r"v.vocab.json does not belong to .*v.safetensors"),
    Bad("a safetensors file without vectors", word_vectors.WordVectors.load,
        lambda: saved_vectors(vectors_under_another_name), ValueError,
        r"v.safetensors holds no 'vectors' tensor: not word vectors saved by WordVectors.save"),
    Bad("vocabulary that is not JSON", word_vectors.WordVectors.load, lambda: saved_vectors(vocabulary_not_json),
        ValueError, r"v.vocab.json is not a JSON list of words"),

    Bad("a dict for wv", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity({}, [("a", "b", 1.0)]), TypeError,
        r"wv must be a WordVectors, got dict"),
    Bad("NaN score (NaN out)", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king", NAN)] * 4), ValueError,
        r"pair 0 \('man', 'king', nan\) has a score that is not a finite number"),
    Bad("a score that is not a number", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king", "high")]), TypeError,
        r"pair 0 \('man', 'king', 'high'\) has a score that is not a finite number"),
    Bad("pairs without scores", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king")]), ValueError,
        r"pairs must yield \(word1, word2, score\), got \('man', 'king'\) at position 0"),
    Bad("no pairs", word_vectors.evaluate_similarity, lambda: word_vectors.evaluate_similarity(toy_vectors(), []),
        ValueError, r"no word pairs given"),
    Bad("fewer than 3 covered pairs: spearman is NaN, with its coverage", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king", 3.0), ("elf", "orc", 1.0)]),
        returns=lambda r: math.isnan(r["spearman"]) and r["n"] == 1 and r["coverage"] == 0.5),

    Bad("no questions", word_vectors.evaluate_analogies, lambda: word_vectors.evaluate_analogies(toy_vectors(), []),
        ValueError, r"no analogy questions given"),
    Bad("three-word questions (were silently regrouped by four)", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("man", "woman", "king")] * 4), ValueError,
        r"questions must yield \(a, b, c, d\), got \('man', 'woman', 'king'\) at position 0"),
    Bad("non-str word", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("man", "woman", "king", 3)]), TypeError,
        r"questions must hold words \(str\), got 3 \(int\) at position 0"),
    Bad("batch_size 0", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("man", "woman", "king", "queen")], batch_size=0),
        ValueError, r"batch_size must be positive, got 0"),
    Bad("a dict for wv", word_vectors.evaluate_analogies, lambda: word_vectors.evaluate_analogies({}, []), TypeError,
        r"wv must be a WordVectors, got dict"),
    Bad("no covered question: accuracy is NaN, with coverage 0", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("elf", "orc", "man", "king")]),
        returns=lambda r: math.isnan(r["accuracy"]) and r["n"] == 0 and r["coverage"] == 0.0),

    Bad("untokenised sentences", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(["the cat"]), TypeError, r"got a str inside it"),
    Bad("dim 0", word_vectors.train_gensim_word2vec, lambda: word_vectors.train_gensim_word2vec(TINY, dim=0),
        ValueError, r"dim must be positive, got 0"),
    Bad("min_count above every count", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(TINY, min_count=10), ValueError,
        r"no word occurs 10 times or more; lower min_count"),
    Bad("negative lr", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(TINY, min_count=1, lr=-0.1), ValueError,
        r"lr must be positive and finite, got -0.1"),
    Bad("workers 0", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(TINY, min_count=1, workers=0), ValueError,
        r"workers must be positive, got 0"),
]


ROWS = CLASSIFIERS + EMBEDDINGS + SGNS + WORD_VECTORS

test_bad_call = bad_call_test(ROWS)
