# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 — Sequence-to-sequence learning
#
# Translation maps a sentence of N words to a sentence of M words, with N ≠ M in general and no
# word-by-word alignment. An **encoder–decoder** (Sutskever et al. 2014; Cho et al. 2014) splits
# the job: an encoder RNN reads the source into a vector, and a decoder RNN — a *conditional*
# language model — writes the target from it. We train one on real English→French sentence pairs
# from Tatoeba, compare three ways of training the decoder, decode with greedy and beam search,
# score with BLEU, and find where a single context vector runs out of breath.
#
# **Learning goals**
# - Build the data pipeline of a translation task: normalise, filter, a fixed held-out split,
#   vocabularies with `<pad> <bos> <eos> <unk>`, padded batches with masks.
# - Show that the encoder's final state is the decoder's initial state (the context vector c).
# - Train the decoder with teacher forcing, free running and scheduled sampling; explain exposure bias.
# - Decode greedily and with beam search (k, length normalisation; k = 1 equals greedy).
# - Measure BLEU on held-out sentences and BLEU versus source length: the bottleneck.
# - Recognise the typical failure modes (repetition) in real outputs.

# %%
import math
import time
from collections import Counter

import matplotlib.pyplot as plt
import torch

from coursekit import runtime, train, translation, viz
from coursekit.decoding import beam_search, beam_search_step, greedy_search
from coursekit.exercises import check_beam_search_step, check_greedy_decode, check_masked_nll
from coursekit.seq2seq import Seq2Seq, Seq2SeqConfig, teacher_forcing_schedule

S = runtime.sizes(
    quick=dict(n_train=6000, n_test=200, max_vocab=1500, d_emb=64, d_hidden=64, batch=64, steps=80,
               eval_every=40, eval_n=100, lr=3e-3, beams=[1, 2, 4]),
    class_=dict(n_train=40000, n_test=1000, max_vocab=3000, d_emb=128, d_hidden=128, batch=64, steps=700,
                eval_every=100, eval_n=200, lr=3e-3, beams=[1, 2, 4, 8]),
    full=dict(n_train=None, n_test=1000, max_vocab=8000, d_emb=256, d_hidden=512, batch=128, steps=4000,
              eval_every=500, eval_n=500, lr=2e-3, beams=[1, 2, 4, 8]),
)
device = runtime.device()
plt.rcParams["figure.dpi"] = 80
print(S, "on", device)

# %% [markdown]
# ## 1. The task: Tatoeba English → French
#
# `coursekit.translation` is the one pipeline the course uses for translation (here, in 06, in the
# Transformer of 08 and BART of 11), so BLEU scores are comparable across notebooks:
#
# 1. **normalise**: Unicode NFKC (French puts no-break spaces before `! ? :`), lower-case, a space
#    before punctuation so it becomes a token;
# 2. **filter**: keep pairs with at most `max_len` = 10 tokens on *both* sides;
# 3. **split**: a sentence is held out when a hash of its English side falls in the first 5 % of the
#    hash range — the same sentences in every notebook, profile and run, and every translation of a
#    held-out sentence is kept out of training;
# 4. **vocabularies** from the training pairs only (the most frequent `max_vocab` tokens);
# 5. **batches**: source + `<eos>`; decoder input `<bos>` + target; decoder output target + `<eos>`.

# %%
# NBVAL_CHECK_OUTPUT
for raw in ["Run!", "Cours\u202f!", "I\u2019m fine, thanks.", "Qui est-ce\u00a0?"]:
    print(f"{raw!r:28} -> {translation.normalize(raw)!r}")
print(translation.COURSE_SPLIT)

# %%
t0 = time.perf_counter()
data = translation.load_translation(max_len=translation.COURSE_SPLIT["max_len"], n_train=S.n_train,
                                    n_test=S.n_test, max_vocab=S.max_vocab)
print(f"loaded in {time.perf_counter() - t0:.1f} s:", data.info)
print(f"train pairs {len(data.train)}, test pairs {len(data.test)}, "
      f"vocabularies: English {len(data.src_vocab)}, French {len(data.tgt_vocab)}")

# %% [markdown]
# The held-out pool does not depend on the profile: `quick` uses its first 200 sentences, `class`
# its first 1000. Here is the first one, and what the model sees for it.

# %%
# NBVAL_CHECK_OUTPUT
en, fr = data.test[0]
print("pool sizes (all profiles):", data.info["train_pool"], "train /", data.info["test_pool"], "test")
print("source   :", en + ["<eos>"])
print("tgt_in   :", ["<bos>"] + fr)
print("tgt_out  :", fr + ["<eos>"])
batch = data.make_batch([0, 1, 2], split="test")
print("src", tuple(batch.src.shape[:1]), "src_mask rows:", batch.src_mask.sum(1).tolist(),
      "| tgt_in/tgt_out rows:", batch.tgt_mask.sum(1).tolist())

# %%
lengths = Counter(len(e) for e, _ in data.train)
plt.figure(figsize=(5, 2.5))
plt.bar(list(lengths), [lengths[n] for n in lengths])
plt.xlabel("English length (tokens)")
plt.ylabel("training pairs")
plt.title("Sentence lengths after the ≤ 10-token filter")
plt.show()

# %% [markdown]
# ## 2. Encoder–decoder: the final state is the context vector
#
# The encoder reads $x_1 \dots x_N$ and ends in $h_N$. That one vector is all the decoder gets: it
# becomes the decoder's initial state, $c = h_N$, and the decoder is a language model
# $p(y_t \mid y_{<t}, c)$. Padding is packed away, so $h_N$ is taken after each sentence's own last
# token. We run the encoder's GRU by hand on one unpadded sentence and compare.

# %%
runtime.seed_everything(0)
config = Seq2SeqConfig(len(data.src_vocab), len(data.tgt_vocab), d_emb=S.d_emb, d_hidden=S.d_hidden,
                       cell="gru", pad_id=data.tgt_vocab.pad_id, bos_id=data.tgt_vocab.bos_id,
                       eos_id=data.tgt_vocab.eos_id)
model = Seq2Seq(config)
b = data.make_batch([0, 1, 2], split="test")
n1 = int(b.src_lengths[1])
_, h_by_hand = model.encoder.rnn(model.encoder.embedding(b.src[1:2, :n1]))  # nn.GRU on the bare sentence
state = model.encode(b.src, b.src_mask)
assert torch.allclose(state["hidden"][1, -1], h_by_hand[0, 0], atol=1e-6)   # c = h_N, padding ignored
print("decoder initial state:", tuple(state["hidden"].shape), "(B, layers, H)")
print("parameters:", train.count_parameters(model))

# %%
# NBVAL_CHECK_OUTPUT
# The same model with LSTM cells: the state is a pair (h, c), both handed to the decoder.
tiny = Seq2Seq(Seq2SeqConfig(11, 13, d_emb=4, d_hidden=6, cell="lstm", num_layers=2))
src = torch.tensor([[5, 6, 7, 3], [8, 3, 0, 0]])
h, c = tiny.encode(src, src != 0)["hidden"]
logits, _ = tiny(src, src != 0, torch.tensor([[2, 4, 5], [2, 9, 0]]))
print("LSTM state h", tuple(h.shape), "c", tuple(c.shape), "| logits", tuple(logits.shape), "(B, T, V)")

# %% [markdown]
# ## 3. Training the decoder: teacher forcing, free running, scheduled sampling
#
# The loss is the cross-entropy of each target token, $-\sum_t \log p(y_t \mid y_{<t}, c)$,
# averaged over real (non-padding) tokens. What does the decoder *read* at step t?
#
# * **teacher forcing**: the gold $y_{t-1}$. Fast and stable, but at test time the decoder reads
#   its own predictions, a distribution it never saw in training — **exposure bias**.
# * **free running**: its own previous prediction $\hat y_{t-1}$. Train = test conditions, but early
#   on the predictions are garbage and the gold targets no longer match what was read.
# * **scheduled sampling** (Bengio et al. 2015): read the gold token with probability $\varepsilon_i$,
#   decaying over training (here an inverse sigmoid), otherwise the model's own prediction.

# %%
xs = list(range(0, S.steps + 1, max(1, S.steps // 50)))
viz.plot_curves({kind: (xs, [teacher_forcing_schedule(x, S.steps, kind) for x in xs])
                 for kind in ("linear", "exponential", "inverse_sigmoid")},
                xlabel="training step", ylabel="ε (P[read gold token])", title="Scheduled-sampling decay")
plt.show()


# %%
def make_model(seed: int = 0, **overrides) -> Seq2Seq:
    runtime.seed_everything(seed)                       # same initial weights for every regime
    return Seq2Seq(Seq2SeqConfig(**{**config.asdict(), **overrides})).to(device)


def bleu_greedy(m: Seq2Seq, n: int) -> float:
    return data.evaluate(m.translator(max_len=data.max_len + 2), limit=n, device=device).bleu


def eval_fn(m: Seq2Seq) -> dict:
    b = data.make_batch(list(range(S.eval_n)), split="test").to(device)
    return {"test_loss_tf": m.loss(b).item(), "bleu": bleu_greedy(m, S.eval_n)}


regimes = {
    "teacher forcing": lambda step: 1.0,
    "free running": lambda step: 0.0,
    "scheduled sampling": lambda step: teacher_forcing_schedule(step, S.steps, "inverse_sigmoid"),
}


def train_regime(name: str, eps) -> tuple[Seq2Seq, train.History]:
    m = make_model()
    coin = torch.Generator().manual_seed(1)
    get = data.batch_fn(S.batch, torch.Generator().manual_seed(0), device=device)  # same batches for all
    history = train.fit(m, torch.optim.Adam(m.parameters(), lr=S.lr), lambda step: (step, get(step)),
                        lambda m, sb: m.loss(sb[1], teacher_forcing=eps(sb[0]), generator=coin),
                        steps=S.steps, clip=1.0, eval_fn=eval_fn, eval_every=S.eval_every, desc=name)
    return m, history


models, histories = {}, {}
for name, eps in regimes.items():
    models[name], histories[name] = train_regime(name, eps)
    print(f"{name:20s} {histories[name].seconds:6.1f} s, final: {histories[name].evals[-1][1]}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 3.5))
viz.plot_curves({n: h.smoothed_loss(20) for n, h in histories.items()}, ax=axes[0], ylabel="training loss",
                title="loss on what each regime read")
viz.plot_curves({n: h.eval_curve("test_loss_tf") for n, h in histories.items()}, ax=axes[1],
                ylabel="test loss (teacher-forced)", title="held-out loss")
viz.plot_curves({n: h.eval_curve("bleu") for n, h in histories.items()}, ax=axes[2], ylabel="BLEU (greedy)",
                title=f"greedy BLEU, first {S.eval_n} test sentences")
plt.tight_layout()
plt.show()

# %% [markdown]
# Teacher forcing learns fastest: every step gets a clean, correct prefix. Free running learns
# more slowly — once the first word is wrong, the gold target for step 2 no longer follows from
# what the decoder read, so much of the gradient signal is noise. Scheduled sampling starts as
# teacher forcing and gradually exposes the model to its own mistakes; at this small budget the
# switch comes before the model's predictions are good, and its held-out loss ends between the
# two. (The
# training-loss curves are not comparable across regimes: each is measured on what that regime read.)

# %%
final = {n: h.evals[-1][1] for n, h in histories.items()}
assert histories["teacher forcing"].train_loss[-1] < histories["teacher forcing"].train_loss[0] - 1.0
assert final["teacher forcing"]["test_loss_tf"] < final["free running"]["test_loss_tf"]
model = models["teacher forcing"]

# %% [markdown]
# ## 4. Inference: greedy decoding and beam search
#
# At test time there is no gold prefix. **Greedy decoding** feeds back the arg-max token step by
# step until `<eos>`. We write it by hand with the decoder's `step` and compare with
# `coursekit.decoding.greedy_search`, which every model in the course uses.

# %%
b = data.make_batch(list(range(8)), split="test").to(device)
with torch.no_grad():
    state = model.encode(b.src, b.src_mask)
    y = torch.full((8,), data.tgt_vocab.bos_id, device=device)
    by_hand, done = [], torch.zeros(8, dtype=torch.bool, device=device)
    for _ in range(data.max_len + 2):
        logits, state, _ = model.decoder.step(y, state)
        y = logits.argmax(-1)                                  # feed back the arg-max
        by_hand.append(y)
        done |= y == data.tgt_vocab.eos_id
        if done.all():
            break
by_hand = [data.detokenize(row) for row in torch.stack(by_hand, 1).tolist()]
library = [data.detokenize(t) for t in model.translate(b.src, b.src_mask, max_len=data.max_len + 2).tokens]
assert by_hand == library
for i in range(4):
    print(f"{data.source_text(i):40s} -> {library[i]}")

# %% [markdown]
# Greedy is short-sighted: the best *sentence* may start with a word that is not the best *first
# word*. **Beam search** keeps the k best prefixes. At each step every kept prefix is extended by
# every token, each candidate scores `score(prefix) + log p(token | prefix)`, and the k best of the
# k × V candidates survive. A hand-made model shows the difference: after `<bos>`, *a* (0.6) beats
# *b* (0.4), but after *a* nothing is likely, while after *b* `<eos>` is almost certain.

# %%
# NBVAL_CHECK_OUTPUT
BOS, EOS, A, B_ = 0, 1, 2, 3
P = torch.tensor([[0.0, 0.0, 0.6, 0.4],    # after <bos>
                  [0.0, 1.0, 0.0, 0.0],    # after <eos>
                  [0.0, 0.4, 0.3, 0.3],    # after a
                  [0.0, 0.9, 0.05, 0.05]])  # after b
logP = P.log()


def toy_step(prefix, state):
    return logP[prefix[:, -1]], state


names = {A: "a", B_: "b"}
g = greedy_search(toy_step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=4)
bs = beam_search(toy_step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=4, beam_size=2)
print("greedy:", [names[t] for t in g.tokens[0]], "P =", round(math.exp(g.scores[0]), 4))
print("beam 2:", [names[t] for t in bs.tokens[0]], "P =", round(math.exp(bs.scores[0]), 4))
# one beam step by hand: two beams (a: log .6, b: log .4), extended by every token
scores, beam_idx, token = beam_search_step(torch.tensor([[math.log(0.6), math.log(0.4)]]),
                                           logP[[A, B_]][None], 2)
print("step 2 keeps:", [(names[[A, B_][i]], "<eos>" if t == EOS else names.get(t), round(math.exp(s), 2))
                        for i, t, s in zip(beam_idx[0].tolist(), token[0].tolist(), scores[0].tolist())])

# %% [markdown]
# Longer hypotheses add more negative log-probabilities, so raw beam scores favour short outputs.
# **Length normalisation** ranks by $\log P(y) / |y|^\alpha$. With k = 1 beam search *is* greedy
# decoding — checked on the trained model. Then BLEU on the held-out test set for several k and α.

# %%
test_batch = data.make_batch(list(range(len(data.test))), split="test").to(device)
g_res = model.translate(test_batch.src, test_batch.src_mask, max_len=data.max_len + 2)
b1_res = model.translate(test_batch.src, test_batch.src_mask, max_len=data.max_len + 2, beam_size=1,
                         length_penalty=0.6)
assert g_res.tokens == b1_res.tokens                               # k = 1 is greedy
rows = []
for k in S.beams:
    for alpha in (0.0, 1.0):
        if k == 1 and alpha:
            continue
        t0 = time.perf_counter()
        res = model.translate(test_batch.src, test_batch.src_mask, max_len=data.max_len + 2, beam_size=k,
                              length_penalty=alpha)
        hyps = [data.detokenize(t) for t in res.tokens]
        refs = [" ".join(f) for _, f in data.test]
        rows.append({"beam k": k, "alpha": alpha, "BLEU": translation.corpus_bleu(hyps, refs),
                     "mean log P": res.scores.mean().item(), "mean length": sum(map(len, res.tokens)) / len(hyps),
                     "seconds": time.perf_counter() - t0})
viz.show_table(rows, title=f"teacher-forced model, {len(data.test)} test sentences")
beam_scores = {(r["beam k"], r["alpha"]): r["mean log P"] for r in rows}
assert beam_scores[(max(S.beams), 0.0)] >= beam_scores[(1, 0.0)] - 1e-4   # a wider beam finds likelier outputs

# %% [markdown]
# A wider beam always finds outputs the model thinks are *more probable* (higher mean log P); BLEU
# moves less, and sometimes not at all — the model's probability and translation quality are not
# the same thing. Without length normalisation the beam prefers shorter outputs.
#
# ## 5. BLEU on the held-out split, and the bottleneck
#
# BLEU (Papineni et al. 2002) is the geometric mean of 1- to 4-gram precisions against the
# reference, times a brevity penalty; we use sacrebleu's corpus BLEU. The score by **source length**
# shows the bottleneck: the whole sentence has to squeeze through one vector of size H. (With the
# small models of the `class` profile BLEU is low overall, so compare the buckets, not the level;
# notebook 06 puts these numbers next to attention models trained on the same budget.)

# %%
reports = {}
for name, m in models.items():
    reports[name] = data.evaluate(m.translator(max_len=data.max_len + 2), device=device)
reports["teacher forcing + beam 4"] = data.evaluate(model.translator(max_len=data.max_len + 2, beam_size=4,
                                                                     length_penalty=1.0), device=device)
viz.show_table([{"model": n, "test BLEU": r.bleu, **{f"len {row['bucket']}": row["bleu"] for row in r.by_length}}
                for n, r in reports.items()], title="BLEU overall and by English length (tokens)")
print("sentences per bucket:", {row["bucket"]: row["n"] for row in reports["teacher forcing"].by_length})

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
for n, r in reports.items():
    ax.plot([row["bucket"] for row in r.by_length], [row["bleu"] for row in r.by_length], marker="o", label=n)
ax.set_xlabel("source length (tokens)")
ax.set_ylabel("BLEU")
ax.set_title("BLEU by source length: no attention")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.show()
buckets = reports["teacher forcing"].by_length
assert sum(row["n"] for row in buckets) == len(data.test)

# %% [markdown]
# ## 6. Failure modes: repetition
#
# A decoder that has lost track of the source falls back on what a language model does best:
# continuing with something likely, including what it just said (*a boy plays in the snow boy plays
# boy plays*). We count hypotheses that repeat a word or a bigram and show real ones.


# %%
def repeats(text: str) -> bool:
    """True when a token (punctuation aside) or a bigram occurs twice."""
    toks = [t for t in text.split() if t.isalnum() or "'" in t or "-" in t]
    bigrams = list(zip(toks, toks[1:]))
    return len(set(toks)) < len(toks) or len(set(bigrams)) < len(bigrams)


refs = reports["teacher forcing"].references
rates = {n: sum(map(repeats, r.hypotheses)) / len(r.hypotheses) for n, r in reports.items()}
rates["references"] = sum(map(repeats, refs)) / len(refs)
viz.show_table([{"output": n, "share with a repeated word/bigram": v} for n, v in rates.items()])
r = reports["teacher forcing"]
examples = [i for i, h in enumerate(r.hypotheses) if repeats(h) and not repeats(r.references[i])]
for i in examples[:6]:
    print(f"EN  {r.sources[i]}\nREF {r.references[i]}\nOUT {r.hypotheses[i]}\n")
assert repeats("a boy plays in the snow boy plays boy plays") and not repeats("a boy plays in the snow")

# %% [markdown]
# ## Summary
#
# - An encoder–decoder turns N source tokens into M target tokens through one context vector: the
#   encoder's final state, which initialises a conditional language-model decoder.
# - Teacher forcing trains fastest but creates exposure bias; free running removes it but hardly
#   learns from scratch; scheduled sampling moves from one to the other.
# - Decoding: greedy = arg-max fed back until `<eos>`; beam search keeps k prefixes, needs length
#   normalisation, and with k = 1 is greedy. A wider beam finds likelier outputs, not always better ones.
# - The longest sentences get the lowest BLEU — the fixed-size bottleneck — and the decoder repeats
#   itself far more often than the references do, most of all when it was trained free running.
#   Notebook 06 lets the decoder look back at every encoder state: attention.
#
# ## Exercises
#
# 1. Write one step of beam search for a single sentence.
# 2. Write greedy decoding for a model given as a `step(token) -> log_probs` function.
# 3. Write the masked cross-entropy of the decoder (padding must not count).

# %%
# EXERCISE 1: one step of beam search
def beam_step(scores, log_probs, beam_size):
    """scores (k,), log_probs (k, V) -> (new_scores, beam_index, token), each (beam_size,), best first."""
    ### BEGIN SOLUTION
    V = log_probs.shape[-1]
    candidates = (scores[:, None] + log_probs).reshape(-1)   # (k * V,)
    new_scores, flat = candidates.topk(beam_size)
    return new_scores, flat // V, flat % V
    ### END SOLUTION


check_beam_search_step(beam_step)


# %%
# EXERCISE 2: greedy decoding
def greedy_decode(step, bos_id, eos_id, max_len):
    """step(token) -> log_probs (V,). Return the generated ids without <bos>/<eos>."""
    ### BEGIN SOLUTION
    out, token = [], bos_id
    for _ in range(max_len):
        token = int(step(token).argmax())
        if token == eos_id:
            break
        out.append(token)
    return out
    ### END SOLUTION


check_greedy_decode(greedy_decode)


# %%
# EXERCISE 3: masked cross-entropy
def masked_nll(logits, targets, pad_id):
    """logits (B, T, V), targets (B, T) -> mean negative log-likelihood over non-pad targets."""
    ### BEGIN SOLUTION
    nll = -torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None])[..., 0]   # (B, T)
    keep = targets != pad_id
    return nll[keep].mean()
    ### END SOLUTION


check_masked_nll(masked_nll)
