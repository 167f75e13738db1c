# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 — Word embeddings
#
# Neural NLP starts by turning words into vectors. This notebook builds *type-based* word vectors —
# one vector per word type, learned from raw, unlabelled text — in the two classic ways: counting
# contexts (co-occurrence → PPMI → SVD) and predicting them (word2vec's skip-gram with negative
# sampling). We train both on a real corpus (WikiText-2), compare them with gensim's word2vec trained
# on the very same tokens, and end with what they cannot do.
#
# **Learning goals**
# - Say why one-hot vectors fail (all words equally far apart, |V|-dimensional and sparse) and use
#   `nn.Embedding` as a lookup table (`padding_idx`, the 10×3 example).
# - Build a co-occurrence matrix, re-weight it with PPMI and compress it with a truncated SVD (LSA).
# - Derive and train skip-gram with negative sampling (SGNS): subsampling, the unigram$^{0.75}$
#   noise distribution, the loss $-\log\sigma(u_o\cdot v_c) - \sum_k \log\sigma(-u_k\cdot v_c)$.
# - Evaluate word vectors by nearest neighbours, analogies (3CosAdd) and word similarity
#   (Spearman ρ on WordSim-353) — always with the coverage — against a gensim baseline.
# - Show concretely the weaknesses that motivate contextual embeddings: OOV words and one vector
#   for all senses of *green*.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from coursekit import data, runtime, text
from coursekit.data import model_dir
from coursekit.embeddings import counts as E
from coursekit.embeddings import sgns as SG
from coursekit.embeddings import word_vectors as WV
from coursekit.exercises import check_analogy, check_ppmi, check_sgns_loss
from coursekit.viz import plots as viz
from coursekit.viz import widgets

S = runtime.sizes(
    quick=dict(lines=1200, min_count=3, dim=50, window=5, epochs=3, lr=0.1, sample=1e-4, save=False,
               curve_fractions=(0.5, 1.0)),
    class_=dict(lines=None, min_count=5, dim=100, window=5, epochs=5, lr=0.1, sample=1e-4, save=True,
                curve_fractions=(0.25, 0.5, 1.0)),
    full=dict(lines=None, min_count=5, dim=100, window=5, epochs=10, lr=0.05, sample=1e-4, save=True,
              curve_fractions=(0.125, 0.25, 0.5, 1.0)),
)
device = runtime.device()
plt.rcParams["figure.dpi"] = 80
VECTORS_PATH = model_dir("embeddings") / "wikitext2_sgns"                       # read by notebook 02
print(S, "on", device)

# %% [markdown]
# ## 1. One-hot vectors and why they fail
#
# The simplest vector for word $i$ of a vocabulary $V$ is the one-hot vector $e_i \in \{0,1\}^{|V|}$.
# Every pair of different words is orthogonal — *hotel* is as far from *motel* as from *banana* —
# and the vectors are as long as the vocabulary and almost entirely zeros.

# %%
# NBVAL_CHECK_OUTPUT
words = ["hotel", "motel", "banana", "king", "queen", "green"]
one_hot = torch.eye(len(words))                              # (|V|, |V|): row i is e_i
cos = F.cosine_similarity(one_hot[:, None, :], one_hot[None, :, :], dim=-1)
print("cosine(hotel, motel) =", cos[0, 1].item(), "  cosine(hotel, banana) =", cos[0, 2].item())
print("non-zeros per vector:", int(one_hot[0].count_nonzero()), "of", one_hot.shape[1])
assert torch.equal(cos, torch.eye(len(words)))               # every distinct pair is orthogonal

# %% [markdown]
# A dense **embedding** gives each word a short vector of real numbers that training can move.
# `nn.Embedding(num_embeddings, embedding_dim)` is nothing but a lookup table: row $i$ of its weight
# matrix is the vector of word $i$, and looking it up is the same as multiplying the one-hot
# vector by the matrix. `padding_idx` marks a row (here 0, the padding token) that stays zero and
# never receives a gradient. The 10×3 example:

# %%
# NBVAL_CHECK_OUTPUT
torch.manual_seed(0)
embedding = nn.Embedding(10, 3, padding_idx=0)                # 10 words, 3 dimensions
ids = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 0]])             # (B=2, T=4); the 0 is padding
vectors = embedding(ids)                                     # (2, 4, 3)
as_matmul = F.one_hot(ids, 10).float() @ embedding.weight    # (2, 4, 10) @ (10, 3)
vectors.sum().backward()
print("weight", tuple(embedding.weight.shape), "ids", tuple(ids.shape), "->", tuple(vectors.shape))
print("padding row:", embedding.weight[0].tolist(), " its gradient:", embedding.weight.grad[0].tolist())
print("gradient of word 4 (looked up twice):", embedding.weight.grad[4].tolist())
assert torch.allclose(vectors, as_matmul)                    # a lookup is a one-hot matmul

# %% [markdown]
# ## 2. The corpus: WikiText-2
#
# Word vectors need a lot of running text. Offline we have the validation and test splits of
# WikiText-2 (Wikipedia Good and Featured articles, ≈ 460k tokens; Merity et al. 2016). We lower-case
# them, drop the section headings and the `<unk>` placeholders for rare words, and keep the words
# seen at least `min_count` times — word2vec's convention, so out-of-vocabulary words simply vanish.

# %%
def wiki_sentences(max_lines=None):
    """WikiText-2 (validation + test, tokenized release) → lower-cased token lists, one per paragraph."""
    wiki = data.load_wikitext2("tokens")
    lines = list(wiki["validation"]["text"]) + list(wiki["test"]["text"])
    sentences = []
    for line in lines[:max_lines]:
        if line.strip().startswith("="):                     # " = Heading = "
            continue
        tokens = [t.lower() for t in line.split() if t != "<unk>"]
        if len(tokens) > 2:
            sentences.append(tokens)
    return sentences


sentences = wiki_sentences(S.lines)
vocab, counts = E.build_vocab(sentences, min_count=S.min_count)
ids = E.encode_sentences(sentences, vocab)
n_tokens = sum(map(len, sentences))
print(f"{len(sentences):,} paragraphs, {n_tokens:,} tokens, {len(set(t for s in sentences for t in s)):,} types; "
      f"{len(vocab):,} words with count ≥ {S.min_count} cover {counts.sum() / n_tokens:.1%} of the tokens")
print("most frequent:", vocab.itos[:12])

# %% [markdown]
# ## 3. Counting: co-occurrence → PPMI → SVD
#
# *You shall know a word by the company it keeps* (Firth 1957). Count, for every word $w$, how often
# each context word $c$ appears within a window of $\pm k$ words. We first do it by hand on a
# two-sentence corpus and check the result against `coursekit.embeddings.counts.cooccurrence_matrix`.

# %%
# NBVAL_CHECK_OUTPUT
toy = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat", "on", "the", "rug"]]
toy_vocab, toy_counts = E.build_vocab(toy, min_count=1)
toy_ids = E.encode_sentences(toy, toy_vocab)
V_toy = len(toy_vocab)
by_hand = torch.zeros(V_toy, V_toy)
for sent in toy_ids:
    for i, w in enumerate(sent):
        for j in range(max(0, i - 1), min(len(sent), i + 2)):       # window ±1, never across sentences
            if j != i:
                by_hand[w, sent[j]] += 1
C_toy = torch.from_numpy(E.cooccurrence_matrix(toy_ids, V_toy, window=1).toarray()).float()
print(toy_vocab.itos)
print(by_hand.int())
assert torch.equal(by_hand, C_toy) and torch.equal(C_toy, C_toy.T)   # a symmetric window gives a symmetric C

# %% [markdown]
# Raw counts are dominated by frequent words (*the* co-occurs with everything). **Pointwise mutual
# information** asks instead whether $w$ and $c$ co-occur *more than chance*:
#
# $$\mathrm{PMI}(w, c) = \log \frac{P(w, c)}{P(w)\,P(c)}, \qquad \mathrm{PPMI}(w, c) = \max(0, \mathrm{PMI}(w, c)),$$
#
# with $P(w,c) = C_{wc}/\sum C$, $P(w) = \sum_c C_{wc} / \sum C$, $P(c) = \sum_w C_{wc}/\sum C$.
# Negative PMI values (rarer than chance) are unreliable on small counts, so PPMI clips them.
# Levy, Goldberg & Dagan (2015) also smooth the context distribution, $P_\alpha(c) \propto
# (\sum_w C_{wc})^{0.75}$, which stops rare contexts from getting huge PMI values.

# %%
# NBVAL_CHECK_OUTPUT
total = C_toy.sum()
P_wc = C_toy / total
P_w = C_toy.sum(1, keepdim=True) / total                   # (V, 1)
P_c = C_toy.sum(0, keepdim=True) / total                   # (1, V)
pmi = torch.log(P_wc / (P_w * P_c))                        # -inf where C = 0
ppmi_by_hand = torch.where(C_toy > 0, pmi.clamp(min=0), torch.zeros_like(pmi))
print("PPMI(cat, sat) = log(", round((P_wc[2, 1] / (P_w[2] * P_c[0, 1])).item(), 4), ") =",
      round(ppmi_by_hand[2, 1].item(), 4), "  PPMI(the, sat) =", round(ppmi_by_hand[0, 1].item(), 4))
assert torch.allclose(ppmi_by_hand, E.ppmi(C_toy))
assert (ppmi_by_hand >= 0).all() and torch.allclose(ppmi_by_hand, ppmi_by_hand.T)

# %% [markdown]
# On the real corpus the matrix is |V| × |V| but sparse, so we keep it in `scipy.sparse`. A
# truncated SVD $M \approx U_d \Sigma_d V_d^\top$ keeps the $d$ directions that explain most of the
# PPMI matrix; the rows of $U_d \Sigma_d^{1/2}$ are the word vectors (Latent Semantic Analysis;
# the square root is the weighting Levy et al. found best). The window counts a word at distance
# $d$ with weight $1/d$, much like word2vec's dynamic window.

# %%
t0 = time.perf_counter()
C = E.cooccurrence_matrix(ids, len(vocab), window=S.window, weighting="harmonic")
M = E.ppmi(C, alpha=0.75)
svd_wv = WV.WordVectors(vocab.itos, E.svd_vectors(M, S.dim, power=0.5))
svd_seconds = time.perf_counter() - t0
print(f"co-occurrence {C.shape}, {C.nnz / np.prod(C.shape):.2%} non-zero; PPMI keeps {M.nnz:,} positive cells; "
      f"SVD to {S.dim} dims in {svd_seconds:.1f} s")
print("SVD neighbours of 'war':", [w for w, _ in svd_wv.nearest("war", 8)])

# %% [markdown]
# ## 4. Predicting: skip-gram with negative sampling
#
# word2vec (Mikolov et al. 2013) learns two vectors per word, $v_w$ when $w$ is the centre and $u_w$
# when it is a context, by making the real (centre, context) pairs of the corpus score high and
# random pairs score low. For a centre $c$, its true context $o$ and $K$ noise words
# $w_1..w_K \sim P_n$, the loss (eq. 4, negated) is
#
# $$\mathcal{L} = -\log \sigma(u_o \cdot v_c) - \sum_{k=1}^{K} \log \sigma(-u_{w_k} \cdot v_c).$$
#
# It is a logistic regression "real pair or noise?", far cheaper than a softmax over the whole
# vocabulary. We compute it once by hand and compare with `coursekit.embeddings.sgns.sgns_loss`.

# %%
# NBVAL_CHECK_OUTPUT
v_c = torch.tensor([[1.0, 0.0]])                            # centre vector (B=1, d=2)
u_o = torch.tensor([[2.0, 1.0]])                            # the true context
u_neg = torch.tensor([[[1.0, 1.0], [-1.0, 3.0]]])           # K = 2 noise words (B, K, d)
sig = torch.sigmoid
by_hand = -torch.log(sig(torch.tensor(2.0))) - torch.log(sig(torch.tensor(-1.0))) - torch.log(sig(torch.tensor(1.0)))
print(f"scores: positive 2.0, noise 1.0 and -1.0 -> loss {by_hand.item():.4f}")
assert torch.allclose(SG.sgns_loss(v_c, u_o, u_neg), by_hand.reshape(1))

# %% [markdown]
# Two tricks from the paper shape *which* pairs we train on:
#
# - **Subsampling frequent words**: an occurrence of a word of relative frequency $f$ is dropped with
#   probability $1 - \sqrt{t/f}$ (the released code uses $(\sqrt{f/t} + 1)\,t/f$ as the keep
#   probability, and so do we and gensim). *the* carries little information and is mostly dropped.
# - **Noise distribution** $P_n(w) \propto \mathrm{count}(w)^{0.75}$: between the unigram distribution
#   (noise would be mostly *the*, *of*, …) and the uniform one.

# %%
keep = SG.keep_probabilities(counts, sample=S.sample)
noise = SG.noise_distribution(counts)
unigram = counts / counts.sum()
rows = []
for w in ["the", "of", "war", "music", "queen", "elephant"]:
    if w in vocab:
        i = vocab.stoi[w]
        rows.append({"word": w, "count": int(counts[i]), "keep prob.": keep[i],
                     "unigram P(w)": unigram[i], "noise P_n(w)": noise[i].item()})
viz.show_table(rows, title="subsampling and the unigram^0.75 noise distribution", floatfmt="{:.4f}")
the = vocab.stoi["the"]
assert keep[the] < 0.2 and noise[the] < unigram[the]       # frequent words: dropped often, sampled less

# %% [markdown]
# Training: every epoch draws a fresh subsample and dynamic windows (each centre picks a window
# size $b \sim U\{1..5\}$), shuffles all (centre, context) pairs, and runs SGD on batches of pairs
# with $K = 5$ noise words each and a learning rate decaying linearly to ~0. The gradient of
# $\mathcal{L}$ is short enough to write by hand — with $s_j = u_j\cdot v_c$ and label $y_j$,
# $\partial\mathcal{L}/\partial s_j = \sigma(s_j) - y_j$ — so `sgns_sgd_step` applies it with
# `index_add_`, which the tests show equals `loss.sum().backward()` + `torch.optim.SGD`.

# %%
model, history = SG.train_sgns(ids, counts, dim=S.dim, window=S.window, negative=5, epochs=S.epochs, lr=S.lr,
                               sample=S.sample, batch_size=1024, seed=0, device=device)
sgns_wv = WV.WordVectors(vocab.itos, model.vectors())
print(f"{history.pairs_seen[-1]:,} pairs in {history.seconds:.1f} s ({history.pairs_per_second:,.0f} pairs/s)")
viz.plot_curves({"SGNS loss": (history.pairs_seen, history.loss)}, xlabel="pairs seen",
                ylabel="loss per pair", title="skip-gram with negative sampling")
plt.show()
assert history.loss[-1] < history.loss[0] - 0.5             # it learned to tell real pairs from noise

# %% [markdown]
# ## 5. The baseline: gensim on the same tokens
#
# gensim's `Word2Vec` (optimised C code, Řehůřek & Sojka 2010) with the same dimension, window,
# epochs, learning rate, subsampling threshold and number of noise words, on exactly our sentences.

# %%
t0 = time.perf_counter()
gensim_wv = WV.train_gensim_word2vec(sentences, dim=S.dim, window=S.window, negative=5, epochs=S.epochs,
                                     min_count=S.min_count, sample=S.sample, lr=S.lr, seed=0, workers=1)
gensim_seconds = time.perf_counter() - t0
print(f"gensim: {len(gensim_wv):,} words in {gensim_seconds:.1f} s")
assert set(gensim_wv.itos) == set(vocab.itos)               # the same vocabulary: a fair comparison

# %% [markdown]
# ## 6. Evaluation
#
# **Word similarity**: WordSim-353 has 353 word pairs with human similarity scores (0–10). We
# correlate them with the cosine similarity of the vectors (Spearman's ρ, a rank correlation).
# **Analogies**: word2vec's 19,544 questions *a : b :: c : ?* (*man : woman :: king : queen*),
# answered by 3CosAdd on unit vectors, $\arg\max_d \cos(d, \hat b - \hat a + \hat c)$ with
# $\hat x = x / \lVert x \rVert$, excluding $a, b, c$. Both are computed only
# on the questions whose words are all in the vocabulary, so the **coverage** belongs next to
# every number: a tiny vocabulary could score well on the few easy questions it covers.

# %%
ws353 = data.load_wordsim353()
analogies = data.load_analogies()
sim_pairs = list(zip(ws353["word1"], ws353["word2"], ws353["score"]))
questions = list(zip(analogies["a"], analogies["b"], analogies["c"], analogies["d"]))
results = {}
for name, wv, seconds in [("PPMI + SVD", svd_wv, svd_seconds), ("our SGNS", sgns_wv, history.seconds),
                          ("gensim Word2Vec (baseline)", gensim_wv, gensim_seconds)]:
    sim, ana = WV.evaluate_similarity(wv, sim_pairs), WV.evaluate_analogies(wv, questions)
    results[name] = {"vectors": name, "WordSim-353 ρ": sim["spearman"], "pairs covered": f"{sim['n']}/{sim['total']}",
                     "analogy acc.": ana["accuracy"], "questions covered": f"{ana['n']}/{ana['total']}",
                     "train s": seconds}
viz.show_table(list(results.values()), title=f"WikiText-2 valid+test, d={S.dim}, window={S.window}, "
               f"{S.epochs} epochs ({S.profile} profile)")
gap = results["our SGNS"]["WordSim-353 ρ"] - results["gensim Word2Vec (baseline)"]["WordSim-353 ρ"]
print(f"our SGNS − gensim: Δρ = {gap:+.3f}")
if S.profile != "quick":       # the quick profile's corpus is too small for a stable ρ
    assert abs(gap) < 0.1, gap

# %% [markdown]
# The numbers are small next to published ones (ρ ≈ 0.6–0.7 and 60–70 % analogies for vectors
# trained on *billions* of words): our corpus has under half a million tokens, half of the
# WordSim pairs and most analogy questions are out of vocabulary, and ρ on ~180 pairs moves by a
# few hundredths from seed to seed. What the table shows is that our from-scratch SGNS and gensim's
# C implementation land in the same place on the same data, and how count-based vectors compare.
#
# ### How corpus size drives these numbers
#
# The course has more English than WikiText: the English side of the Tatoeba pairs (notebooks 05–08),
# the SST-2 training phrases and the rt-polarity sentences (02). We train gensim's word2vec (same
# hyper-parameters; it is fast enough to do it several times) on growing slices of WikiText and then on
# all of it together, and score every question: an analogy whose words have no vector counts as wrong
# here, so the curve shows both effects of more text — more words covered, better vectors for them.

# %%
def tokenized(texts):
    return [t for t in (text.tokenize(x) for x in texts) if len(t) > 2]


more_text = {"Tatoeba (English side)": tokenized(dict.fromkeys(data.load_tatoeba()["en"])),
             "SST-2 train phrases": tokenized(data.load_sst2()["train"]["sentence"]),
             "rt-polarity": tokenized(data.load_rt_polarity()["sentence"])}
for name, extra in more_text.items():
    print(f"{name}: {len(extra):,} sentences, {sum(map(len, extra)):,} tokens")
slices = [(f"WikiText {f:.0%}", sentences[: int(f * len(sentences))]) for f in S.curve_fractions]
slices.append(("WikiText + all the above", sentences + [t for extra in more_text.values() for t in extra]))
curve = []
for name, token_lists in slices:
    wv = WV.train_gensim_word2vec(token_lists, dim=S.dim, window=S.window, negative=5, epochs=S.epochs,
                                  min_count=S.min_count, sample=S.sample, lr=S.lr, seed=0, workers=1)
    ana = WV.evaluate_analogies(wv, questions)
    sim = WV.evaluate_similarity(wv, sim_pairs)
    curve.append({"corpus": name, "tokens": sum(map(len, token_lists)), "vocabulary": len(wv),
                  "questions covered": ana["n"] / ana["total"], "analogy acc. (covered)": ana["accuracy"],
                  "analogy acc. (all questions)": ana["accuracy"] * ana["n"] / ana["total"],
                  "WordSim-353 ρ": sim["spearman"], "pairs covered": sim["n"]})
viz.show_table(curve, title="gensim word2vec on more and more text (same hyper-parameters)")
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot([c["tokens"] for c in curve], [c["analogy acc. (all questions)"] for c in curve], "o-",
        label="analogy accuracy, all questions")
ax.plot([c["tokens"] for c in curve], [c["questions covered"] for c in curve], "s--", label="questions covered")
ax.set(xscale="log", xlabel="training tokens", ylabel="fraction", title="more text: more words, better vectors")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.show()
assert curve[-1]["analogy acc. (all questions)"] > curve[0]["analogy acc. (all questions)"]
assert curve[-1]["questions covered"] > curve[0]["questions covered"]

# %% [markdown]
# Both curves rise with the amount of text (one worker and seed 0, so the "WikiText 100%" row is the
# gensim baseline of the table above), and they are far from flat at our largest corpus, about two million
# tokens: word2vec's published 60–70 % come from a thousand times more text and beyond. The from-scratch
# SGNS above stays on WikiText alone so that it trains in class time; its numbers are the left end of
# this curve.
#
# ### Nearest neighbours

# %%
probe_words = [w for w in ["war", "music", "king", "city", "film", "water", "january", "three"] if w in vocab]
rows = []
for w in probe_words:
    row = {"word": w}
    for name, wv in [("SVD", svd_wv), ("SGNS", sgns_wv), ("gensim", gensim_wv)]:
        row[name] = ", ".join(x for x, _ in wv.nearest(w, 5))
    rows.append(row)
viz.show_table(rows, title="5 nearest neighbours by cosine")

# %% [markdown]
# ### A 2-D picture
#
# Project the vectors of a few chosen words to two dimensions with PCA (the top two principal
# directions of these words' vectors) and plot them. Groups of related words should form clusters.

# %%
groups = {
    "months": ["january", "march", "june", "september", "december"],
    "numbers": ["two", "three", "four", "five", "six"],
    "family": ["father", "mother", "son", "daughter", "brother", "wife"],
    "music": ["album", "song", "band", "guitar", "singer"],
    "war": ["army", "battle", "soldiers", "troops", "navy"],
}
plot_words = [w for ws in groups.values() for w in ws if w in sgns_wv]
X = sgns_wv.unit[[sgns_wv.stoi[w] for w in plot_words]]
mean = X.mean(0)
_, _, Vt = np.linalg.svd(X - mean, full_matrices=False)
basis = Vt[:2].T                                              # (d, 2) principal directions


def project(vecs):
    return (np.atleast_2d(vecs) - mean) @ basis


def plot_words_2d(highlight=None, neighbours=()):
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for g, ws in groups.items():
        ws = [w for w in ws if w in sgns_wv]
        xy = project(sgns_wv.unit[[sgns_wv.stoi[w] for w in ws]])
        ax.scatter(xy[:, 0], xy[:, 1], label=g, alpha=0.7)
        for (x, y), w in zip(xy, ws):
            ax.annotate(w, (x, y), fontsize=8)
    if highlight is not None:
        xy = project(sgns_wv.unit[[sgns_wv.stoi[w] for w in (highlight, *neighbours)]])
        ax.scatter(xy[1:, 0], xy[1:, 1], marker="x", color="k", label="neighbours")
        ax.scatter(xy[:1, 0], xy[:1, 1], marker="*", s=200, color="red", label=highlight)
        for (x, y), w in zip(xy, (highlight, *neighbours)):
            ax.annotate(w, (x, y), fontsize=9, weight="bold" if w == highlight else None)
    ax.legend(fontsize=7, loc="best")
    ax.set_title("SGNS vectors, PCA of the chosen words")
    plt.show()


plot_words_2d()
print(f"{len(plot_words)} of {sum(map(len, groups.values()))} chosen words are in the vocabulary")

# %% [markdown]
# ### Explorer
#
# Type a word: its nearest neighbours (SGNS and SVD) and where it and its neighbours fall in the
# plane of the plot above. Run the notebook live for the text box; the stored notebook shows two
# fixed examples.

# %%
def explore(word="music"):
    word = word.strip().lower()
    if word not in sgns_wv:
        print(f"{word!r} is out of vocabulary: these vectors know {len(sgns_wv):,} words and nothing else.")
        return
    neighbours = [w for w, _ in sgns_wv.nearest(word, 6)]
    print(f"{word}: SGNS → {', '.join(neighbours)} | SVD → {', '.join(w for w, _ in svd_wv.nearest(word, 6))}")
    plot_words_2d(word, neighbours)


widgets.explorer(explore, [{"word": "guitar"}, {"word": "soldiers"}], word="music")

# %% [markdown]
# ## 7. Strengths and weaknesses
#
# **Strength**: nothing above used a label. The vectors come from raw text alone, so they can be
# trained on as much text as we can find and then reused by a model trained on a small labelled set
# — notebook 02 initialises its sentiment classifiers with the SGNS vectors saved here.
#
# **Weakness 1 — out-of-vocabulary words.** A word never seen (or seen fewer than `min_count`
# times) has no vector at all. Which WordSim-353 words are missing here?

# %%
missing = sorted({w.lower() for w in list(ws353["word1"]) + list(ws353["word2"])} - set(sgns_wv.itos))
print(f"{len(missing)} WordSim-353 words have no vector, e.g. {missing[:12]}")
for word in ["transformers", "unbelievably", "covid"]:
    try:
        sgns_wv[word]
        print(f"{word!r}: has a vector")
    except KeyError as err:
        print(f"{word!r}: KeyError {err}")

# %% [markdown]
# **Weakness 2 — one vector per type.** *The shirt is green*, *the recruits are green*
# (inexperienced) and *green policy* (environmental) use three senses of *green*, but a type-based
# embedding looks up the same row every time: the word's vector cannot depend on its sentence.

# %%
# NBVAL_CHECK_OUTPUT
senses = ["the shirt is green", "the recruits are green", "the party backs a green policy"]
green_rows = []
for s in senses:
    tokens = s.split()
    green_rows.append(sgns_wv[tokens[tokens.index("green")]] if "green" in sgns_wv else np.zeros(S.dim))
same = all(np.array_equal(green_rows[0], r) for r in green_rows[1:])
print("the vector of 'green' is identical in all three sentences:", same)
assert same

# %%
if "green" in sgns_wv:
    print("neighbours of 'green':", [w for w, _ in sgns_wv.nearest("green", 10)])
    for sense, probes in [("colour", ["red", "blue", "yellow", "white"]),
                          ("inexperienced", ["young", "new", "inexperienced", "recruits"]),
                          ("environment/politics", ["environmental", "party", "policy", "energy"])]:
        sims = {w: round(sgns_wv.similarity("green", w), 2) for w in probes if w in sgns_wv}
        print(f"{sense:>22}: {sims}")

# %% [markdown]
# The single vector is a frequency-weighted blend of every sense the corpus used (Wikipedia talks
# about green *colours* and the *Green Party* far more than about green recruits), and because we
# lower-cased the text, the surname *Green* is mixed in too — look at the neighbours above. Token-based,
# *contextual* embeddings (ELMo in notebook 04, BERT in notebook 09) give each occurrence its own
# vector computed from the sentence.
#
# ## 8. Saving the vectors for notebook 02
#
# The SGNS vectors go to a small safetensors file (float16) plus the word list as JSON.

# %%
if S.save:
    sgns_wv.save(VECTORS_PATH)
    size_mb = sum(p.stat().st_size for p in VECTORS_PATH.parent.glob(VECTORS_PATH.name + ".*")) / 1e6
    print(f"saved {len(sgns_wv):,} × {sgns_wv.dim} vectors to data/{VECTORS_PATH.parent.name}/{VECTORS_PATH.name}.* "
          f"({size_mb:.1f} MB)")
    back = WV.WordVectors.load(VECTORS_PATH)
    assert back.itos == sgns_wv.itos and np.allclose(back.vectors, sgns_wv.vectors, atol=1e-2)
else:
    print(f"{S.profile} profile: not overwriting the stored vectors at {VECTORS_PATH}")

# %% [markdown]
# ## Summary
#
# - One-hot vectors make all words orthogonal; an embedding is a learned lookup table
#   (`nn.Embedding` = one-hot × matrix, `padding_idx` stays zero).
# - Counting: co-occurrences within a window → PPMI (is the pair more frequent than chance?) →
#   truncated SVD gives dense vectors (LSA).
# - Predicting: skip-gram with negative sampling trains centre and context vectors to tell real
#   pairs from unigram$^{0.75}$ noise; subsampling drops most occurrences of very frequent words.
# - Evaluation needs coverage next to the score; on the same ~0.4M tokens our SGNS and gensim's
#   word2vec reach similar WordSim-353 ρ and analogy accuracy.
# - Static vectors leverage unlabelled text, but have no vector for unseen words and one vector for
#   all senses of a word — the motivation for contextual embeddings.
#
# ## Exercises
#
# Each exercise has a check that says what is wrong and on which input.

# %%
# EXERCISE 1: PPMI
def my_ppmi(C):
    """C: (V_w, V_c) float co-occurrence counts -> PPMI, natural log, plain P(c) (no α smoothing), 0 where C == 0."""
    ### BEGIN SOLUTION
    total = C.sum()
    p_wc = C / total
    p_w = C.sum(dim=1, keepdim=True) / total
    p_c = C.sum(dim=0, keepdim=True) / total
    pmi = torch.log(p_wc / (p_w * p_c))
    return torch.where(C > 0, pmi.clamp(min=0), torch.zeros_like(C))
    ### END SOLUTION


check_ppmi(my_ppmi)


# %%
# EXERCISE 2: the negative-sampling loss
def my_sgns_loss(v_c, u_o, u_neg):
    """v_c (B, d), u_o (B, d), u_neg (B, K, d) -> per-pair loss (B,): −log σ(u_o·v_c) − Σ_k log σ(−u_k·v_c)."""
    ### BEGIN SOLUTION
    positive = F.logsigmoid((u_o * v_c).sum(-1))                                 # (B,)
    negative = F.logsigmoid(-(u_neg * v_c.unsqueeze(1)).sum(-1)).sum(-1)         # (B,)
    return -(positive + negative)
    ### END SOLUTION


check_sgns_loss(my_sgns_loss)


# %%
# EXERCISE 3: analogies by 3CosAdd
def my_analogy(W, a, b, c):
    """W (V, d) vectors; a : b :: c : ? -> the int id w maximising cos(W[w], Û[b] − Û[a] + Û[c]), where Û is
    W with every row scaled to length 1 (3CosAdd on unit vectors); a, b and c are excluded."""
    ### BEGIN SOLUTION
    U = F.normalize(W, dim=1)
    scores = U @ (U[b] - U[a] + U[c])
    scores[[a, b, c]] = float("-inf")
    return int(scores.argmax())
    ### END SOLUTION


check_analogy(my_analogy)
if "king" in sgns_wv and "queen" in sgns_wv:
    W = torch.from_numpy(sgns_wv.vectors)
    answer = my_analogy(W, sgns_wv.stoi["man"], sgns_wv.stoi["woman"], sgns_wv.stoi["king"])
    print("man : woman :: king :", sgns_wv.itos[answer])
