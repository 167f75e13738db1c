"""Tests of coursekit.embeddings.counts, sgns and word_vectors: counts by hand, PPMI properties, the SGNS loss and its
gradient, evaluation."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.embeddings import counts as E
from coursekit.embeddings import sgns as SG
from coursekit.embeddings import word_vectors as WV
from coursekit.text import Vocab

# "the cat sat on the mat" / "the dog sat": ids the=0 cat=1 sat=2 on=3 mat=4 dog=5
TINY = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat"]]
TINY_IDS = [[0, 1, 2, 3, 0, 4], [0, 5, 2]]


def tiny_vocab():
    return Vocab(["the", "cat", "sat", "on", "mat", "dog"])


# --------------------------------------------------------------------------- vocabulary


def test_build_vocab_counts_and_order():
    vocab, counts = E.build_vocab(TINY, min_count=2)
    assert vocab.itos == ["the", "sat"]
    assert counts.tolist() == [3, 2]
    ids = E.encode_sentences(TINY, vocab)
    assert [a.tolist() for a in ids] == [[0, 1, 0], [0, 1]]   # OOV words dropped


def test_build_vocab_bad_input():
    with pytest.raises(TypeError, match="token lists"):
        E.build_vocab(["the cat sat"])
    with pytest.raises(ValueError, match="min_count"):
        E.build_vocab(TINY, min_count=10)


# --------------------------------------------------------------------------- co-occurrence and PPMI


def test_cooccurrence_by_hand_window1():
    C = E.cooccurrence_matrix(TINY_IDS, 6, window=1).toarray()
    want = np.zeros((6, 6))
    # sentence 1 neighbours: the-cat, cat-sat, sat-on, on-the, the-mat; sentence 2: the-dog, dog-sat
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (0, 5), (5, 2)]:
        want[a, b] += 1
        want[b, a] += 1
    np.testing.assert_array_equal(C, want)
    assert C.sum() == 2 * 7


def test_cooccurrence_window2_harmonic_and_no_cross_sentence():
    C = E.cooccurrence_matrix(TINY_IDS, 6, window=2, weighting="harmonic").toarray()
    assert C[0, 2] == pytest.approx(0.5 + 0.5 + 0.5)   # the_sat at d=2 (s1), sat_the d=2 (s1), the_sat d=2 (s2)
    assert C[0, 3] == pytest.approx(1.0)                # on-the at d=1; the first "the" is 3 away (outside)
    assert C[4, 5] == 0                                  # mat (end of s1) and dog (s2) never co-occur
    np.testing.assert_allclose(C, C.T)


def test_cooccurrence_bad_inputs():
    with pytest.raises(ValueError, match=r"\[0, 6\)"):
        E.cooccurrence_matrix([[0, 7]], 6)
    with pytest.raises(ValueError, match="weighting"):
        E.cooccurrence_matrix(TINY_IDS, 6, weighting="gaussian")
    with pytest.raises(ValueError, match="window"):
        E.cooccurrence_matrix(TINY_IDS, 6, window=0)
    with pytest.raises(TypeError, match="list of id sequences"):
        E.cooccurrence_matrix(np.array([0, 1, 2]), 6)


def test_ppmi_by_hand():
    C = torch.tensor([[0.0, 2.0], [2.0, 4.0]])
    P = E.ppmi(C)
    # total 8; P(w)=P(c)=(2/8, 6/8); PMI(0,1)=log((2/8)/(2/8*6/8)) = log(4/3); PMI(1,1)=log((4/8)/(36/64)) < 0
    assert P[0, 0] == 0
    assert P[0, 1].item() == pytest.approx(math.log(4 / 3))
    assert P[1, 1].item() == 0
    # the sparse path gives the same numbers
    np.testing.assert_allclose(E.ppmi(sp.csr_matrix(C.numpy())).toarray(), P.numpy(), atol=1e-7)


def test_ppmi_alpha_smoothing_raises_rare_context_pmi_less():
    C = torch.tensor([[10.0, 1.0], [1.0, 10.0], [5.0, 1.0]])
    plain, smooth = E.ppmi(C), E.ppmi(C, alpha=0.75)
    col = C.sum(0) ** 0.75
    p_c = col / col.sum()
    want = math.log((1 / C.sum()) / (C[0].sum() / C.sum() * p_c[1]))
    assert smooth[0, 1].item() == pytest.approx(max(want, 0.0), abs=1e-6)
    assert not torch.allclose(plain, smooth)


def test_ppmi_bad_inputs():
    with pytest.raises(ValueError, match="non-negative"):
        E.ppmi(torch.tensor([[1.0, -1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="all zero"):
        E.ppmi(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="alpha"):
        E.ppmi(torch.ones(2, 2), alpha=1.5)
    with pytest.raises(TypeError, match="floating"):
        E.ppmi(torch.ones(2, 2, dtype=torch.long))


@settings(max_examples=60, deadline=None)
@given(sentences=st.lists(st.lists(st.integers(0, 7), min_size=2, max_size=12), min_size=1, max_size=6),
       window=st.integers(1, 4), harmonic=st.booleans())
def test_ppmi_properties(sentences, window, harmonic):
    C = E.cooccurrence_matrix(sentences, 8, window=window, weighting="harmonic" if harmonic else "uniform")
    Ct = torch.from_numpy(C.toarray())
    if Ct.sum() == 0:
        return
    P = E.ppmi(Ct)
    assert torch.isfinite(P).all()
    assert (P >= 0).all()                                   # positive PMI
    assert torch.allclose(P, P.T, atol=1e-9)                # symmetric window → symmetric PPMI (α = 1)
    assert ((P > 0) <= (Ct > 0)).all()                      # no association without co-occurrence
    assert (E.ppmi(Ct, alpha=0.75) >= 0).all()
    np.testing.assert_allclose(E.ppmi(C).toarray(), P.numpy(), atol=1e-9)


def test_svd_vectors_reconstruct_low_rank():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(20, 3)) @ rng.normal(size=(3, 15))
    W = E.svd_vectors(A, 3, power=1.0)
    assert W.shape == (20, 3)
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(np.abs(W), np.abs(U[:, :3] * s[:3]), atol=1e-8)
    Whalf = E.svd_vectors(torch.from_numpy(A), 2, power=0.5)
    np.testing.assert_allclose(np.abs(Whalf), np.abs(U[:, :2] * np.sqrt(s[:2])), atol=1e-8)
    with pytest.raises(ValueError, match="smaller than"):
        E.svd_vectors(A, 15)
    with pytest.raises(TypeError, match="2-D matrix"):
        E.svd_vectors([[1.0]], 1)


# --------------------------------------------------------------------------- skip-gram with negative sampling


def test_keep_probabilities_and_noise():
    counts = np.array([1000, 100, 10, 0])
    keep = SG.keep_probabilities(counts, sample=1e-2)
    f = counts[0] / counts.sum()
    assert keep[0] == pytest.approx((math.sqrt(f / 1e-2) + 1) * 1e-2 / f)
    assert keep[2] == 1.0 and keep[3] == 0.0
    assert (np.diff(keep[:3]) >= 0).all()                   # frequent words are dropped more
    assert (SG.keep_probabilities(counts, sample=0) == 1).all()
    p = SG.noise_distribution(counts)
    assert p.sum().item() == pytest.approx(1.0)
    assert p[0] / p[1] == pytest.approx(10**0.75)
    with pytest.raises(ValueError, match="non-negative"):
        SG.keep_probabilities([-1, 2])


def test_skipgram_pairs_fixed_window_by_hand():
    c, o = SG.skipgram_pairs([[0, 1, 2], [3, 4]], 5, window=1, dynamic_window=False)
    assert sorted(zip(c.tolist(), o.tolist())) == sorted([(0, 1), (1, 2), (1, 0), (2, 1), (3, 4), (4, 3)])
    c, o = SG.skipgram_pairs([[0, 1, 2, 3]], 4, window=5, dynamic_window=True, rng=np.random.default_rng(1))
    allowed = {(i, j) for i in range(4) for j in range(4) if i != j}
    assert len(c) == len(o) and set(zip(c.tolist(), o.tolist())) <= allowed
    keep = np.array([0.0, 1.0, 1.0, 1.0])
    c, o = SG.skipgram_pairs([[0, 1, 0, 2]], 4, window=1, keep_prob=keep, dynamic_window=False)
    assert sorted(zip(c.tolist(), o.tolist())) == [(1, 2), (2, 1)]     # word 0 subsampled away, window closes up
    with pytest.raises(ValueError, match="keep_prob"):
        SG.skipgram_pairs([[0, 1]], 4, keep_prob=np.ones(3))


def test_sgns_loss_by_hand():
    v_c = torch.tensor([[1.0, 0.0]])
    u_o = torch.tensor([[2.0, 1.0]])
    u_neg = torch.tensor([[[1.0, 1.0], [-1.0, 3.0]]])
    sig = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    want = -math.log(sig(2.0)) - math.log(sig(-1.0)) - math.log(sig(1.0))
    assert SG.sgns_loss(v_c, u_o, u_neg).item() == pytest.approx(want, rel=1e-6)
    # stable for large scores (no log(0) = -inf)
    big = SG.sgns_loss(torch.tensor([[100.0]]), torch.tensor([[-100.0]]), torch.tensor([[[100.0]]]))
    assert torch.isfinite(big).all() and big.item() == pytest.approx(2 * 10_000, rel=1e-6)


def test_sgns_loss_shapes_and_errors():
    out = SG.sgns_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 5, 3))
    assert out.shape == (4,)
    with pytest.raises(ValueError, match=r"u_neg \(B, K, d\)"):
        SG.sgns_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 5, 2))
    with pytest.raises(ValueError, match="3 dimensions"):
        SG.sgns_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 3))


def test_skipgram_module_forward_and_errors():
    torch.manual_seed(0)
    m = SG.SkipGramNS(10, 4)
    assert (m.out_embed.weight == 0).all() and m.in_embed.weight.abs().max() <= 0.5 / 4
    c, o, n = torch.tensor([1, 2]), torch.tensor([3, 4]), torch.tensor([[5, 6], [7, 8]])
    loss = m(c, o, n)
    assert loss.shape == (2,)
    assert torch.allclose(loss, torch.full((2,), 3 * math.log(2)))   # zero output vectors: σ(0) = 1/2 three times
    with pytest.raises(ValueError, match=r"\[0, 10\)"):
        m(torch.tensor([10]), torch.tensor([0]), torch.tensor([[0]]))
    with pytest.raises(ValueError, match="negatives"):
        m(c, o, torch.tensor([5, 6]))
    assert m.vectors().shape == (10, 4)


def test_manual_sgd_step_equals_autograd_sgd():
    torch.manual_seed(0)
    a, b = SG.SkipGramNS(12, 5), SG.SkipGramNS(12, 5)
    for m in (a, b):
        torch.nn.init.normal_(m.out_embed.weight, std=0.3)
    b.load_state_dict(a.state_dict())
    center = torch.tensor([0, 1, 1, 3, 0])                          # repeated rows must accumulate
    targets = torch.tensor([[2, 4, 4], [3, 0, 5], [2, 2, 7], [1, 9, 0], [2, 4, 11]])
    loss_manual = SG.sgns_sgd_step(a, center, targets, lr=0.1)
    opt = torch.optim.SGD(b.parameters(), lr=0.1)
    loss = b(center, targets[:, 0], targets[:, 1:]).sum()
    loss.backward()
    opt.step()
    assert loss_manual == pytest.approx(loss.item(), rel=1e-6)
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa, pb, atol=1e-6, rtol=1e-5)


def toy_corpus(n_sent=300, seed=0):
    """Two topics that never mix: words 0-4 co-occur, words 5-9 co-occur."""
    rng = np.random.default_rng(seed)
    sents = []
    for i in range(n_sent):
        base = 0 if i % 2 == 0 else 5
        sents.append((base + rng.integers(0, 5, size=8)).tolist())
    return sents


def test_train_sgns_learns_topics():
    sents = toy_corpus()
    counts = np.bincount(np.concatenate(sents), minlength=10)
    model, hist = SG.train_sgns(sents, counts, dim=8, window=2, negative=3, epochs=5, batch_size=64,
                                sample=0, seed=0, log_every=10)
    assert hist.loss[-1] < hist.loss[0]
    assert hist.pairs_seen[-1] > 0 and hist.seconds > 0
    wv = WV.WordVectors([f"w{i}" for i in range(10)], model.vectors())
    same = np.mean([wv.similarity("w0", f"w{j}") for j in range(1, 5)])
    other = np.mean([wv.similarity("w0", f"w{j}") for j in range(5, 10)])
    assert same > other + 0.3
    with pytest.raises(ValueError, match="dim"):
        SG.train_sgns(sents, counts, dim=0)


def test_train_sgns_is_reproducible():
    sents = toy_corpus(50)
    counts = np.bincount(np.concatenate(sents), minlength=10)
    m1, _ = SG.train_sgns(sents, counts, dim=4, window=2, epochs=1, batch_size=32, seed=3)
    m2, _ = SG.train_sgns(sents, counts, dim=4, window=2, epochs=1, batch_size=32, seed=3)
    np.testing.assert_array_equal(m1.vectors(), m2.vectors())


# --------------------------------------------------------------------------- evaluation


def toy_vectors():
    itos = ["man", "woman", "king", "queen", "apple"]
    vecs = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, -1]], dtype=np.float32)
    return WV.WordVectors(itos, vecs)


def test_word_vectors_nearest_and_analogy():
    wv = toy_vectors()
    assert wv.nearest("king", 1)[0][0] in {"man", "queen"}
    assert "king" not in [w for w, _ in wv.nearest("king", 4)]
    assert wv.analogy("man", "woman", "king")[0][0] == "queen"
    assert wv.similarity("man", "man") == pytest.approx(1.0)
    with pytest.raises(KeyError, match="out of vocabulary"):
        wv["green"]
    with pytest.raises(ValueError, match="3 dimensions"):
        wv.nearest(np.ones(4))
    with pytest.raises(ValueError, match="shape"):
        WV.WordVectors(["a"], np.ones((2, 3)))


def test_evaluate_analogies_accuracy_and_coverage():
    wv = toy_vectors()
    qs = [("man", "woman", "king", "queen"), ("Man", "King", "woman", "queen"),
          ("man", "woman", "king", "apple"), ("man", "woman", "prince", "princess")]
    r = WV.evaluate_analogies(wv, qs)
    assert r["n"] == 3 and r["total"] == 4 and r["coverage"] == pytest.approx(0.75)
    assert r["correct"] == 2 and r["accuracy"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no analogy"):
        WV.evaluate_analogies(wv, [])


def test_evaluate_similarity_spearman_and_coverage():
    wv = toy_vectors()
    pairs = [("man", "woman", 8.0), ("man", "king", 7.0), ("man", "apple", 0.5), ("king", "queen", 9.0),
             ("green", "grass", 5.0)]
    r = WV.evaluate_similarity(wv, pairs)
    from scipy.stats import spearmanr

    cos = [wv.similarity(a, b) for a, b, _ in pairs[:4]]
    assert r["spearman"] == pytest.approx(spearmanr(cos, [8.0, 7.0, 0.5, 9.0]).statistic)
    assert r["n"] == 4 and r["coverage"] == pytest.approx(0.8)


def test_word_vectors_save_load(tmp_path):
    wv = toy_vectors()
    wv.save(tmp_path / "vecs")
    back = WV.WordVectors.load(tmp_path / "vecs")
    assert back.itos == wv.itos
    np.testing.assert_allclose(back.vectors, wv.vectors, atol=1e-3)     # stored as float16
    with pytest.raises(FileNotFoundError, match="notebook 01"):
        WV.WordVectors.load(tmp_path / "missing")


def test_gensim_baseline_same_tokens():
    sents = [[f"w{i}" for i in s] for s in toy_corpus(200)]
    wv = WV.train_gensim_word2vec(sents, dim=8, window=2, epochs=5, min_count=1, sample=0)
    assert len(wv) == 10 and wv.dim == 8
    same = np.mean([wv.similarity("w0", f"w{j}") for j in range(1, 5)])
    other = np.mean([wv.similarity("w0", f"w{j}") for j in range(5, 10)])
    assert same > other
