# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 — Neural text classifiers
#
# Sentence classification maps a whole sentence to a label — here the sentiment of a movie review
# sentence (SST-2: positive or negative). We build four classifiers on top of word embeddings, each
# with more parameters than the last (most of them in the embedding table; §6 measures whether they
# buy accuracy here), train the three whose embeddings are 100-dimensional vectors with random and with
# pretrained (notebook 01) embeddings, and then try to *break* them with sentences whose sentiment depends on
# how words combine.
#
# **Learning goals**
# - Build a bag-of-words (BOW) classifier, a continuous bag of words (CBOW: sum/average of
#   embeddings → linear), a Deep CBOW / Deep Averaging Network (Iyyer et al. 2015) and a 1-D CNN over
#   words (Kim 2014: filters as n-gram detectors, max-over-time pooling).
# - Handle padding with masks so that padding does not change a prediction (checked on short sentences,
#   for every model, untrained and trained).
# - See why *combination features* need a non-linearity (negation) on a toy task, and see on probes that
#   our trained models still miss them.
# - Compare random vs pretrained embedding initialisation, with accuracy, parameters and training
#   time, next to the published numbers.
#
# The figures quoted in the text are those of the stored run in the `class` profile; the `quick`
# profile, which CI runs, trains less and prints other numbers.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from coursekit import data, runtime, text
from coursekit.data import model_dir
from coursekit.embeddings import classifiers as CL
from coursekit.embeddings import counts as E
from coursekit.embeddings import sgns as SG
from coursekit.embeddings import word_vectors as WV
from coursekit.exercises import check_bow_logits, check_dan_forward, check_max_over_time
from coursekit.training.loop import count_parameters, fit
from coursekit.viz import plots as viz

S = runtime.sizes(
    quick=dict(n_train=4000, epochs=1, batch_size=64, embed_dim=100, n_filters=32, evals=1),
    class_=dict(n_train=40000, epochs=2, batch_size=64, embed_dim=100, n_filters=64, evals=3),
    full=dict(n_train=None, epochs=4, batch_size=64, embed_dim=100, n_filters=100, evals=8),
)
device = runtime.device()
plt.rcParams["figure.dpi"] = 80
VECTORS_PATH = model_dir("embeddings") / "wikitext2_sgns"          # written by notebook 01
print(S, "on", device)

# %% [markdown]
# ## 1. The task: SST-2
#
# The Stanford Sentiment Treebank (Socher et al. 2013) in its binary GLUE form: the training set
# has 67k phrases and sentences, the development set 872 full sentences. We train on a random
# subset whose size depends on the profile and evaluate on the full dev set whatever the profile.

# %%
sst = data.load_sst2()
train_all, dev = sst["train"], sst["validation"]
g = np.random.default_rng(0)
order = g.permutation(len(train_all))[: S.n_train]
train_sentences = [text.tokenize(train_all[int(i)]["sentence"]) for i in order]
train_labels = torch.tensor([train_all[int(i)]["label"] for i in order])
dev_sentences = [text.tokenize(s) for s in dev["sentence"]]
dev_labels = torch.tensor(dev["label"])
vocab = text.Vocab.build(train_sentences, min_freq=2)          # words seen once become <unk>
print(f"train {len(train_sentences):,} of {len(train_all):,}; vocabulary {len(vocab):,} words")

# %%
# NBVAL_CHECK_OUTPUT
print("dev sentences:", len(dev_sentences), " positive:", int(dev_labels.sum()), " negative:",
      int((1 - dev_labels).sum()))
print("example:", dev_sentences[1], "label", int(dev_labels[1]))


# %%
def encode(sentences, max_len=None):
    """Token lists → padded ids (B, T), mask (B, T) with True at real tokens."""
    seqs = [vocab.encode(s if s else ["<unk>"])[:max_len] for s in sentences]
    ids, mask, _ = text.pad_batch(seqs, vocab.pad_id)
    return ids, mask


dev_ids, dev_mask = encode(dev_sentences)
train_seqs = [vocab.encode(s if s else ["<unk>"]) for s in train_sentences]


def train_batch(step):
    """Mini-batch number ``step``: random training sentences, the same ones for every model."""
    idx = torch.randint(len(train_seqs), (S.batch_size,), generator=torch.Generator().manual_seed(step))
    ids, mask, _ = text.pad_batch([train_seqs[i] for i in idx], vocab.pad_id)
    return ids.to(device), mask.to(device), train_labels[idx].to(device)


@torch.no_grad()
def predict_proba(model, ids, mask, batch_size=512):
    """P(positive) for every row, evaluated in chunks, in eval mode."""
    model.eval()
    out = [torch.softmax(model(ids[i:i + batch_size].to(device), mask[i:i + batch_size].to(device)), -1)[:, 1]
           for i in range(0, len(ids), batch_size)]
    return torch.cat(out).cpu()


def dev_accuracy(model):
    return ((predict_proba(model, dev_ids, dev_mask) > 0.5).long() == dev_labels).float().mean().item()


# %% [markdown]
# ## 2. Bag of words
#
# The simplest model gives every word one score per class and adds them up:
# $\text{logits}(x) = \sum_t s(w_t) + b$. *Padding* (the zeros that fill a batch to one length)
# must contribute nothing: we multiply by the mask. Here is the BOW forward pass by hand, checked
# against `coursekit.embeddings.classifiers.BOW`, and a check (the second assert) that five extra padding
# positions do not change the output. The cell prints only the shapes; §4 prints the differences.

# %%
# NBVAL_CHECK_OUTPUT
torch.manual_seed(0)
bow_demo = CL.BOW(len(vocab), 2)
torch.nn.init.normal_(bow_demo.embed.weight)                       # random scores, for the demo only
probe_ids, probe_mask = encode([text.tokenize("a great movie"), text.tokenize("boring")])
by_hand = torch.stack([bow_demo.embed.weight[probe_ids[b][probe_mask[b]]].sum(0) for b in range(2)]) + bow_demo.bias
padded_ids = F.pad(probe_ids, (0, 5), value=vocab.pad_id)          # five more padding positions
padded_mask = F.pad(probe_mask, (0, 5), value=False)
print("ids", tuple(probe_ids.shape), "->", tuple(padded_ids.shape), " mask row 2:", probe_mask[1].int().tolist())
assert torch.allclose(bow_demo(probe_ids, probe_mask), by_hand)
assert torch.allclose(bow_demo(probe_ids, probe_mask), bow_demo(padded_ids, padded_mask))

# %% [markdown]
# ## 3. CBOW, Deep CBOW (DAN) and combination features
#
# **CBOW** replaces the per-word scores by d-dimensional embeddings, averages (or sums) them and
# applies a linear layer: $\text{logits} = W\,\frac{1}{T}\sum_t e(w_t) + b$. It is still *linear*
# in the words: each word pushes the decision in a fixed direction whatever its neighbours.
#
# A **Deep CBOW / Deep Averaging Network** (Iyyer et al. 2015) puts an MLP on the average:
# $z_0 = \frac{1}{T}\sum_t e(w_t)$, $z_i = \mathrm{ReLU}(W_i z_{i-1} + b_i)$, logits $= W_s z_n + b_s$.
# Its hidden units can fire for *combinations* of words — *not* together with *bad* — that no sum
# of per-word scores can express. A toy task makes the point: the label is 1 iff a sentence
# contains exactly one of *not* and *bad* (an XOR); the other four words of each sentence are random
# fillers. The accuracy below is measured on the same 400 sentences the models are trained on. The DAN fits
# them; BOW and CBOW do not. On *not* and *bad* alone a linear model could still get 3 of the 4 cases right,
# yet they reach only 0.562 (225 of 400). A likely reason, which the cell does not measure: with *not* and
# *bad* as the only features, the cross-entropy of a linear score on a balanced XOR is lowest with no weight
# on either (the loss is convex and its gradient is zero there), so training does not head for the
# three-of-four solution. The rest above one half may come from fitting the random fillers; we do not print
# the learned weights to check. Being able to represent a combination is not the same as learning it from
# data: §7 probes the trained models with *This movie is not bad*.

# %%
toy_gen = torch.Generator().manual_seed(0)
toy_seqs, toy_y = [], []
for i in range(400):
    has_not, has_bad = i % 2, (i // 2) % 2
    sentence = torch.randint(3, 12, (4,), generator=toy_gen).tolist() + [1] * has_not + [2] * has_bad
    toy_seqs.append(sentence)
    toy_y.append(int(has_not != has_bad))
toy_ids, toy_mask, _ = text.pad_batch(toy_seqs, 0)
toy_y = torch.tensor(toy_y)


def fit_toy(model, steps=300):
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    fit(model, opt, [(toy_ids, toy_mask, toy_y)], lambda m, b: F.cross_entropy(m(b[0], b[1]), b[2]),
        steps=steps, progress=False)
    return (model(toy_ids, toy_mask).argmax(-1) == toy_y).float().mean().item()


torch.manual_seed(0)
toy_acc = {"BOW": fit_toy(CL.BOW(12, 2)), "CBOW": fit_toy(CL.CBOW(12, 8, 2)),
           "DAN": fit_toy(CL.DAN(12, 8, 2, hidden=16, dropout=0.0, word_dropout=0.0))}
print({k: round(v, 3) for k, v in toy_acc.items()})
assert toy_acc["BOW"] <= 0.8 and toy_acc["DAN"] > 0.95         # linear: at most 3 of the 4 not/bad cases

# %% [markdown]
# ## 4. A 1-D CNN over words (Kim 2014)
#
# A filter of width $h$ is a learned n-gram detector: it slides over the sentence and computes
# $c_i = \mathrm{ReLU}(w \cdot [e_i; \dots; e_{i+h-1}] + b)$. **Max-over-time pooling** keeps the
# strongest match anywhere in the sentence, $\hat c = \max_i c_i$, so the output has one number per
# filter whatever the sentence length. With padding the max must skip the padded positions — fill
# them with $-\infty$, not 0, or a padded 0 would beat every negative feature (after a ReLU, as in our CNN,
# features are ≥ 0 and a 0 could at most tie; the fill matters wherever features can be negative).

# %%
# NBVAL_CHECK_OUTPUT
feature_maps = torch.tensor([[[-2.0, 1.0], [-1.0, 3.0], [0.0, 0.0]]])     # (B=1, T=3, F=2); t=2 is padding
mask = torch.tensor([[True, True, False]])
print("masked max:", CL.masked_max(feature_maps, mask).tolist(), " naive max:", feature_maps.max(1).values.tolist())
assert torch.equal(CL.masked_max(feature_maps, mask), torch.tensor([[-1.0, 3.0]]))

# %% [markdown]
# Our `KimCNN` uses filter widths 3, 4, 5 with `n_filters` each, a *wide* convolution (zero padding
# $h-1$ at both ends, so a one-word sentence still produces features), ReLU, masked max-over-time
# pooling, dropout 0.5 and a linear layer. All four models should be padding-invariant; we check it on the
# two sentences above with five extra padding positions, for each untrained model (§7 repeats the check on
# the trained models, with the eight probe sentences, and prints the largest change there too):

# %%
def build(kind, pretrained=None):
    """One of the four classifiers; ``pretrained`` word vectors initialise the embedding table."""
    torch.manual_seed(0)                                          # same random init for every run
    kwargs = {"n_filters": S.n_filters} if kind == "cnn" else {}
    model = CL.classifier(kind, len(vocab), embed_dim=S.embed_dim, n_classes=2, pad_id=vocab.pad_id, **kwargs)
    coverage = None
    if pretrained is not None:
        coverage = CL.init_embeddings(model.embed, vocab.itos, pretrained)
    return model.to(device), coverage


padding_diff = {}
for kind in ["bow", "cbow", "dan", "cnn"]:
    m, _ = build(kind)
    m.eval()
    short, long_ = m(probe_ids.to(device), probe_mask.to(device)), m(padded_ids.to(device), padded_mask.to(device))
    assert torch.allclose(short, long_, atol=1e-5), kind
    padding_diff[kind] = (short - long_).abs().max().item()
print("max |logits with − without 5 padding positions|, untrained:", {k: f"{v:.1e}" for k, v in padding_diff.items()})

# %% [markdown]
# ## 5. Pretrained embeddings from notebook 01
#
# Notebook 01 trained skip-gram vectors on WikiText-2 and saved them. We copy them into the embedding
# table instead of random vectors; the hope is that words the classifier rarely sees with a label start
# near words used in similar contexts. §6 measures whether it helps. Words the vectors do not know are
# drawn from $N(0, \sigma^2)$ with the spread $\sigma$ of the pretrained vectors, so that they are on the
# scale of the pretrained ones rather than of `nn.Embedding`'s $N(0, 1)$. (Kim 2014 draws them from a
# uniform distribution with the same variance as the pretrained vectors; we use a normal one and do not
# compare other choices.) The cell prints $\sigma$ and the spread of the rows actually drawn. If the file
# is missing (notebook 01 not run), the cell trains a stand-in: one epoch of SGNS on WikiText-2's
# validation split only.

# %%
try:
    pretrained = WV.WordVectors.load(VECTORS_PATH)
    print(f"loaded {len(pretrained):,} × {pretrained.dim} SGNS vectors from notebook 01")
except FileNotFoundError as err:
    print(f"{err}\n→ training a quick stand-in: 1 epoch of SGNS on WikiText-2 (lower quality than notebook 01's)")
    wiki = data.load_wikitext2("tokens")
    wiki_sents = [[t.lower() for t in line.split() if t != "<unk>"] for line in wiki["validation"]["text"]]
    wiki_sents = [s for s in wiki_sents if len(s) > 2]
    wiki_vocab, wiki_counts = E.build_vocab(wiki_sents, min_count=5)
    sgns, _ = SG.train_sgns(E.encode_sentences(wiki_sents, wiki_vocab), wiki_counts, dim=S.embed_dim, epochs=1,
                            lr=0.1, sample=1e-4)
    pretrained = WV.WordVectors(wiki_vocab.itos, sgns.vectors())
cbow_pre, cov = build("cbow", pretrained)
token_cov = np.mean([t in pretrained for s in train_sentences for t in s])
print(f"{cov:.1%} of the SST-2 vocabulary types and {token_cov:.1%} of the training tokens have a pretrained vector")
print(f"σ of the pretrained vectors: {torch.as_tensor(pretrained.vectors).std().item():.3f} "
      "(nn.Embedding's random rows: 1)")
drawn = [i for i, w in enumerate(vocab.itos) if w not in pretrained and i != vocab.pad_id]
print(f"spread of the {len(drawn):,} rows drawn for words without a vector: "
      f"{cbow_pre.embed.weight[drawn].std().item():.3f}")
assert pretrained.dim == S.embed_dim

# %% [markdown]
# ## 6. Training and results
#
# Every model: Adam, cross-entropy, mini-batches of 64 random training sentences, the same number
# of steps (as many sentences as `epochs` passes over the training subset, drawn at random with replacement),
# a learning rate per model (in the code), evaluated on the full dev set. BOW's table holds two class scores
# per word, not 100-dimensional vectors, so it has nothing to take from notebook 01 and runs once. During
# training the DAN also drops words of each sentence at random (*word dropout*, Iyyer et al. 2015); its rate
# is printed below the tables. Each run is evaluated every `steps // evals` steps and once more after the
# last step; its time (`train s`) includes these evaluations.

# %%
steps = S.epochs * len(train_seqs) // S.batch_size
lrs = {"bow": 0.01, "cbow": 0.005, "dan": 0.003, "cnn": 0.002}
names = {"bow": "BOW", "cbow": "CBOW (average)", "dan": "Deep CBOW / DAN", "cnn": "CNN (Kim 2014)"}
runs, models = [], {}
for kind in ["bow", "cbow", "dan", "cnn"]:
    for init in (["random"] if kind == "bow" else ["random", "pretrained (01)"]):
        model, _ = build(kind, pretrained if init != "random" else None)
        opt = torch.optim.Adam(model.parameters(), lr=lrs[kind])
        hist = fit(model, opt, train_batch, lambda m, b: F.cross_entropy(m(b[0], b[1]), b[2]), steps=steps,
                   eval_fn=lambda m: {"dev_acc": dev_accuracy(m)}, eval_every=max(steps // S.evals, 1),
                   desc=f"{kind} {init}")
        models[(kind, init)] = model
        runs.append({"model": names[kind], "embeddings": init, "dev accuracy": hist.evals[-1][1]["dev_acc"],
                     "parameters": count_parameters(model), "train s": hist.seconds, "source": f"ours, {S.profile}",
                     "curve": hist.eval_curve("dev_acc")})
        print(f"{names[kind]:>16} {init:>16}: dev acc {runs[-1]['dev accuracy']:.3f} in {hist.seconds:.0f} s")

# %%
table = [{k: v for k, v in r.items() if k != "curve"} for r in runs]
viz.show_table(table, title=f"ours: SST-2 sentiment, {len(train_seqs):,} training sentences, {steps} steps "
               f"({S.profile} profile), accuracy on the {len(dev_labels)} dev sentences")
viz.show_table([
    {"model": "DAN (Iyyer et al. 2015)", "embeddings": "GloVe 840B", "SST-2 test accuracy": 0.863},
    {"model": "CNN-multichannel (Kim 2014)", "embeddings": "word2vec 100B", "SST-2 test accuracy": 0.881},
], title="the papers (reported numbers, not run here): trained on every phrase of the treebank, measured on "
         "the SST-2 test set (not our dev set)")
ranking = sorted(runs, key=lambda r: -r["dev accuracy"])
best = ranking[0]
print("ours, best first:", ", ".join(f"{r['model']} ({r['embeddings']}) {r['dev accuracy']:.3f}" for r in ranking))
acc = {(r["model"], r["embeddings"]): r["dev accuracy"] for r in runs}
gains = {m: acc[(m, "pretrained (01)")] - acc[(m, "random")] for m, e in acc if e != "random"}
print("pretrained − random, dev accuracy:", {m: f"{g:+.3f}" for m, g in gains.items()})
lead = round((best["dev accuracy"] - ranking[1]["dev accuracy"]) * len(dev_labels))
spread = best["dev accuracy"] - ranking[-1]["dev accuracy"]
p = best["dev accuracy"]
std_error = math.sqrt(p * (1 - p) / len(dev_labels))        # of one accuracy measured on the dev sentences
print(f"the best run leads the next by {lead} of {len(dev_labels)} dev sentences; best − worst: {spread:.3f}; "
      f"standard error of one accuracy on {len(dev_labels)} sentences: {std_error:.3f}")
print(f"training time of all {len(runs)} runs together: {sum(r['train s'] for r in runs):.0f} s")
above = {names[k]: count_parameters(m) - m.embed.weight.numel() for (k, init), m in models.items()
         if init == "random" and k != "bow"}
print(f"embedding table: {len(vocab):,} × {S.embed_dim} = {len(vocab) * S.embed_dim:,} parameters; "
      f"parameters above it: {above}")
print("DAN word dropout (training only):", models[("dan", "random")].word_dropout)
assert best["dev accuracy"] > (0.80 if S.profile != "quick" else 0.6)
if S.profile == "class":   # what the text below says about the ranking, the parameters and the times
    assert lead / len(dev_labels) < 2 * std_error, "the best run's lead is within two standard errors"
    assert all(abs(g) < 0.03 for g in gains.values()), gains
    bow_acc = acc[("BOW", "random")]
    assert sum(a > bow_acc for a in acc.values()) == 1, acc           # BOW ends below one run only
    assert all(abs(acc[(names["cnn"], e)] - bow_acc) < std_error for e in ("random", "pretrained (01)"))
    assert all(m.embed.weight.numel() > 0.9 * count_parameters(m) for (k, _), m in models.items() if k != "bow")
    secs = {(r["model"], r["embeddings"]): r["train s"] for r in runs}
    assert min(secs[(names["cnn"], e)] for e in ("random", "pretrained (01)")) > 3 * secs[("BOW", "random")], secs

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.5))
for r in runs:
    xs, ys = r["curve"]
    ax.plot(xs, ys, marker="o", ls="-" if r["embeddings"] == "random" else "--",
            label=f"{r['model']} ({r['embeddings'].split()[0]})")
ax.set_xlabel("training step")
ax.set_ylabel("dev accuracy")
ax.legend(fontsize=7)
ax.grid(alpha=0.3)
plt.show()
print("dev accuracy at steps", runs[0]["curve"][0])
for r in runs:
    print(f"{r['model']:>16} {r['embeddings']:>16}:", "  ".join(f"{y:.3f}" for y in r["curve"][1]))
first = {(r["model"], r["embeddings"]): r["curve"][1][0] for r in runs}
first_lead = sum(first[(m, "pretrained (01)")] - first[(m, "random")] for m in gains) / len(gains)
print(f"pretrained − random at the first evaluation, mean over the three models: {first_lead:+.3f}")
if S.profile == "class":   # what the text below says about the curves
    assert first_lead > 0, first
    curves = {(r["model"], r["embeddings"]): r["curve"][1] for r in runs}
    at = runs[0]["curve"][0]
    assert at[-1] - at[-2] == 2, at                                # the last two evaluations are 2 steps apart
    last_move = max(abs(ys[-1] - ys[-2]) for ys in curves.values())   # ... and a run still moves, by up to:
    assert round(last_move * len(dev_labels)) == 5, curves            # 5 dev sentences
    peak_mid = [k for k, ys in curves.items() if max(ys) == ys[1] > ys[-1]]   # best at the 2nd evaluation
    assert len(peak_mid) == 6 and (names["cnn"], "random") not in peak_mid, peak_mid
    assert curves[(names["cnn"], "random")][-1] == max(curves[(names["cnn"], "random")])
    assert max(max(ys) for ys in curves.values()) == curves[("BOW", "random")][1]   # BOW at step 832: highest
    dan = [curves[(names["dan"], e)] for e in ("random", "pretrained (01)")]
    assert abs(dan[1][-2] - dan[0][-2]) * len(dev_labels) < 1.5, dan   # one sentence apart 2 steps before the end

# %% [markdown]
# The table reports each run's *last* evaluation. In the class run the evaluations fall at steps 416, 832
# and 1248, and once more after the last step, 1250 (printed above): the last two are only 2 steps apart,
# almost one above the other in the plot. Even 2 steps move a run: the DAN with pretrained vectors goes from
# 0.792 to 0.798, 5 dev sentences. Six of the seven runs are highest at step 832 and end lower, for example
# BOW 0.820 → 0.811 and CBOW with pretrained vectors 0.800 → 0.787; only the CNN with random vectors climbs
# to the end (0.792 → 0.819). The highest accuracy of any run at any evaluation is BOW's 0.820 at step 832
# (asserted). With one seed we cannot tell whether this fall is overfitting or noise.
#
# On 872 sentences one accuracy has a standard error of about 0.013 (printed), and the best of our runs
# leads the next by less than two of them (asserted): with one seed and no repeat, the order of the top runs
# is not a result (the difference of two models on the same sentences has its own standard error, which
# depends on how often they disagree; we do not compute it). Plain BOW (0.811) ends ahead of five of the six
# runs of the bigger models; only the CNN with random vectors ends higher (asserted), at 0.819: the lead of
# 7 dev sentences printed above.
#
# "Bigger" means mostly the embedding table: 12,279 words × 100 = 1,227,900 parameters. The layers above it
# have 202 parameters in CBOW, 20,402 in the DAN and 77,378 in the CNN (printed). The CNN runs take
# several times as long as BOW's (75 and 84 s against 7 s; one timing each on a shared CPU, asserted only
# to be more than three times) for 7 dev sentences more with random vectors, or 7 fewer with pretrained
# ones: less than one standard error either way (asserted).
#
# The papers trained on every phrase of the treebank (the title of their table) with embeddings learned
# from 100–840 billion words of text, and report test-set accuracy. Our pretrained vectors were trained in
# notebook 01 on WikiText-2 — millions of words, not billions — and know only part of the SST-2 vocabulary
# (coverage above). On average over the three models they are ahead at the first evaluation (asserted); at
# the end they change dev accuracy by less than 3 points either way (asserted). At the last evaluation they
# are lower than random initialisation for CBOW and the CNN and higher for the DAN (+0.009, the signs printed
# above). The DAN's sign is not a stable result: 2 steps earlier, at step 1248, its two runs were one dev
# sentence apart (0.792 and 0.791). Nothing here tells how much of the papers' lead comes from their vectors
# and how much from their data, their test set or their tuning.
#
# ## 7. Build it, break it
#
# Ettinger et al. (2017) asked people to write sentences that break sentiment systems. The classic
# pair is *I don't love this movie* (negative) and *There's nothing I don't love about this movie*
# (positive): almost the same words, opposite meanings. A bag of words sees nearly the same bag.
# We write the probes the way SST-2's sentences are written (*do n't*, *there 's*): our tokenizer keeps
# *don't* as one token (the first line printed below), while SST-2 writes *do n't*. Our tokenizer then reads
# the probes as it read the training sentences: *n't* stays one token, while a detached *'s* becomes *'* and
# *s* (the next two lines).
# A token the vocabulary lacks is read as `<unk>`; the probe cell lists any such token, and whether the
# vocabulary has *don't*.

# %%
# NBVAL_CHECK_OUTPUT
probes = [
    ("I do n't love this movie", 0),
    ("There 's nothing I do n't love about this movie", 1),
    ("I love this movie", 1),
    ("This movie is not bad", 1),
    ("This movie is not good", 0),
    ("It 's not that I did n't enjoy it", 1),
    ("The acting was great but the plot was terrible", 0),
    ("A masterpiece of boredom", 0),
]
probe_tokens = [text.tokenize(sentence) for sentence, _ in probes]
print(text.tokenize("I don't love this movie"), "<- written with don't")
for tokens in probe_tokens[:2]:
    print(tokens)

# %%
p_ids, p_mask = encode(probe_tokens)
labels = torch.tensor([label for _, label in probes])
rows = [{"sentence": sentence, "expected": "pos" if label else "neg"} for sentence, label in probes]
n_right, p_all, pad_change = {}, {}, {}
for (kind, init), model in models.items():
    column = kind + ("+pre" if init != "random" else "")
    p_pos = predict_proba(model, p_ids, p_mask)                  # (n_probes,)
    p_padded = predict_proba(model, F.pad(p_ids, (0, 5), value=vocab.pad_id), F.pad(p_mask, (0, 5), value=False))
    assert torch.allclose(p_pos, p_padded, atol=1e-5), column   # padding-invariant after training too
    pad_change[column] = f"{(p_pos - p_padded).abs().max().item():.1e}"
    for row, p, label in zip(rows, p_pos.tolist(), labels.tolist()):
        row[column] = f"{p:.2f}" + (" ✗" if (p > 0.5) != bool(label) else "")
    n_right[column] = int(((p_pos > 0.5).long() == labels).sum())
    p_all[column] = p_pos
viz.show_table(rows, title="P(positive) on the probe sentences (✗: on the wrong side of 0.5)")
print("probes right per model:", n_right, "of", len(probes))
print("max |P(pos) with − without 5 padding positions|, trained:", pad_change)
unknown = sorted({t for tokens in probe_tokens for t in tokens if t not in vocab.stoi})
print("probe tokens missing from the vocabulary (read as <unk>):", unknown or "none",
      "| \"don't\" in the vocabulary:", "don't" in vocab.stoi)
if S.profile == "class":   # what the text below says
    assert all(p[3] < 0.5 for p in p_all.values())              # every model calls "not bad" negative
    assert all(p[4] > p[3] for p in p_all.values())             # ... and gives "not good" the higher P(pos)
    assert all((p[4] > 0.5) == col.startswith("dan") for col, p in p_all.items())   # only the DANs: "good"

# %% [markdown]
# The counts per model are printed above; with 8 probes one sentence moves a count by an eighth, so they rank
# nothing firmly. Every model calls *This movie is not bad* negative (asserted) — the DAN included: it
# can represent *not* + *bad* (the toy task of §3), but training on SST-2 did not make it do so here. The
# pair *not bad* / *not good* shows more. Every model gives *This movie is not good* the higher P(positive)
# of the two (asserted). Both DAN runs even call it positive (0.52 and 0.59, against 0.04 and 0.05 for *not
# bad*), so they read this pair backwards; the other models call it negative (asserted). The table marks
# each wrong answer with ✗, which also settles the values printed as 0.50 or 0.51. It shows three more probes
# that every model gets wrong: *There 's nothing I do n't love about this movie*, *It 's not that I did n't
# enjoy it* and *A masterpiece of boredom*. The cell also adds five padding positions to the probes: the
# assert allows each trained model's P(positive) to move by about 1e-5 at most, and the largest change is
# printed.
#
# What does the BOW model *see*? Its logit difference is the sum of per-word scores plus a bias, so we
# can print each word's contribution (positive minus negative score), the bias, and the probability
# they give, which is the model's own (asserted): the bias counts like one more word, so the sign of the
# words' sum alone does not say which way the model decides. *not* and *n't* get a single fixed weight,
# whatever they negate:

# %%
bow = models[("bow", "random")]
weights = (bow.embed.weight[:, 1] - bow.embed.weight[:, 0]).detach().cpu()
bias = (bow.bias[1] - bow.bias[0]).item()
for i in (0, 1, 3):
    toks = probe_tokens[i]
    scores = [weights[vocab.stoi.get(t, vocab.unk_id)].item() for t in toks]
    p_words = torch.sigmoid(torch.tensor(sum(scores) + bias)).item()
    assert abs(p_words - p_all["bow"][i].item()) < 1e-4             # words + bias give the model's P(pos)
    contrib = [(t, round(c, 2)) for t, c in zip(toks, scores)]
    print(f"{sum(scores):+.2f} + bias {bias:+.2f} → P(pos) {p_words:.2f}  {contrib}")

# %% [markdown]
# ## Summary
#
# - BOW sums per-word class scores; CBOW averages embeddings and applies a linear layer; both are
#   linear in the words and cannot represent combinations like *not* + *bad* (the XOR toy task).
# - A Deep Averaging Network adds an MLP on the average (combination features) and, in training, word
#   dropout (rate printed in §6); a Kim CNN learns n-gram filters and keeps the strongest match by
#   max-over-time pooling.
# - Masks (masked mean, masked max with −∞) make the models padding-invariant up to float rounding:
#   checked on short sentences for all four, untrained and trained.
# - Pretrained embeddings (notebook 01) put the models ahead at the first evaluation, on average; by the
#   end they change dev accuracy by less than 3 points either way. The published numbers (DAN 86.3,
#   CNN-MC 88.1, on the SST test set) come from every phrase of the treebank and vectors trained on
#   billions of words.
# - Our seven runs end within 0.032 of each other, the best less than two standard errors ahead of the
#   next (§6). Plain BOW (0.811) ends ahead of five of the six runs of the bigger models; only the CNN with
#   random vectors ends higher, by 7 of 872 dev sentences. So in this run the extra parameters of CBOW, the
#   DAN and the CNN, almost all of them in the embedding table, show no clear gain over BOW. We vary neither
#   the amount of data nor the training length, so this run does not say why. The papers also differ in
#   data, vectors, test set and tuning.
# - Six of the seven runs are best at step 832 of 1250 and end lower, and even the last 2 steps move a
#   run by up to 5 dev sentences: the table's last evaluation is one noisy point of each curve.
# - The probes still break all of them: every model calls *This movie is not bad* negative. Next come
#   models that read the sentence in order (RNNs, notebook 03).
#
# ## Exercises

# %%
# EXERCISE 1: bag-of-words logits
def my_bow_logits(ids, mask, scores, bias):
    """ids (B, T), mask (B, T) bool, scores (V, C), bias (C,) -> (B, C): Σ over real tokens + bias."""
    ### BEGIN SOLUTION
    per_token = scores[ids]                                   # (B, T, C)
    return (per_token * mask.unsqueeze(-1)).sum(1) + bias
    ### END SOLUTION


check_bow_logits(my_bow_logits)


# %%
# EXERCISE 2: the DAN forward pass
def my_dan_forward(emb, mask, W1, b1, W2, b2):
    """emb (B, T, d), mask (B, T) -> logits (B, C) = W2 · ReLU(W1 · mean(emb over real tokens) + b1) + b2."""
    ### BEGIN SOLUTION
    m = mask.unsqueeze(-1).to(emb.dtype)                      # (B, T, 1)
    z0 = (emb * m).sum(1) / m.sum(1)                          # (B, d)
    return torch.relu(z0 @ W1.T + b1) @ W2.T + b2
    ### END SOLUTION


check_dan_forward(my_dan_forward)


# %%
# EXERCISE 3: max-over-time pooling with a mask
def my_max_over_time(x, mask):
    """x (B, T, F), mask (B, T) -> (B, F): the maximum over the real positions."""
    ### BEGIN SOLUTION
    return x.masked_fill(~mask.unsqueeze(-1), float("-inf")).max(dim=1).values
    ### END SOLUTION


check_max_over_time(my_max_over_time)
