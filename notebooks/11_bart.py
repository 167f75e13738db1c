# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 11 — BART: denoising sequence-to-sequence pre-training
#
# BERT (notebook 09) reads a sentence in both directions but cannot generate; GPT (notebook 10)
# generates but reads only to the left. BART (Lewis et al. 2020) puts the two together: a
# **bidirectional encoder** reads a *corrupted* document and an **autoregressive decoder** writes the
# original back. Because the corruption can be anything — masked tokens, deleted tokens, shuffled
# sentences — BART is a general *denoising autoencoder*, and because it has a decoder it can be
# fine-tuned directly for generation (translation, summarisation) as well as for classification.
#
# **Learning goals**
# - See BART as BERT's encoder + GPT's decoder, joined by cross-attention (the three attention masks).
# - Implement the five noise functions of the paper — token masking, token deletion, text infilling
#   (Poisson λ = 3 spans → one `[MASK]`), sentence permutation, document rotation — and see each on one
#   real document.
# - Build the model from the course's Transformer layers, and check that Hugging Face BART checkpoints
#   load into it with the same outputs.
# - Pre-train a small BART on WikiText-2 with text infilling + sentence permutation, and compare noise
#   schemes on a downstream measure (the paper's ablation table, at classroom scale).
# - Fine-tune it for a generation task (English→French, against the Transformer of notebook 08 trained
#   from scratch) and for classification (SST-2: same input to encoder and decoder, last decoder state).

# %%
import copy
import math
import tempfile
import time
from functools import partial

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
import transformers
from IPython.display import HTML, display

from coursekit import bart, data, noising, runtime, text, train, translation, viz, widgets
from coursekit.attention import causal_mask
from coursekit.bart import Bart, BartConfig, BartForSequenceClassification, shift_tokens_right
from coursekit.bert import wikitext_documents  # the article/sentence splitter of notebook 09
from coursekit.exercises import check_sentence_permutation, check_shift_tokens_right, check_text_infilling
from coursekit.transformer import Transformer, TransformerConfig

S = runtime.sizes(
    quick=dict(vocab=2500, d_model=32, n_layers=1, n_heads=2, d_ff=64, doc_len=32, pt_batch=16, pt_steps=25,
               abl_steps=6, abl_batch=8, abl_ft_steps=5, lr=2e-3, eval_docs=32, mono_docs=200,
               mt_train=2000, mt_test=100, mt_batch=32, mt_steps=20, ft_lr=2e-3, cls_train=300, cls_val=200,
               cls_steps=10, cls_batch=16),
    class_=dict(vocab=6000, d_model=64, n_layers=2, n_heads=4, d_ff=128, doc_len=32, pt_batch=32, pt_steps=300,
                abl_steps=80, abl_batch=16, abl_ft_steps=40, lr=2e-3, eval_docs=128, mono_docs=3000,
                mt_train=10000, mt_test=500, mt_batch=64, mt_steps=300, ft_lr=2e-3, cls_train=4000, cls_val=872,
                cls_steps=150, cls_batch=32),
    full=dict(vocab=12000, d_model=256, n_layers=3, n_heads=4, d_ff=1024, doc_len=64, pt_batch=64, pt_steps=3000,
              abl_steps=600, abl_batch=64, abl_ft_steps=300, lr=1e-3, eval_docs=512, mono_docs=20000,
              mt_train=100000, mt_test=1000, mt_batch=128, mt_steps=2000, ft_lr=5e-4, cls_train=20000, cls_val=872,
              cls_steps=1000, cls_batch=32),
)
device = runtime.device()
print(S, "| device:", device)
T0 = time.perf_counter()

# %% [markdown]
# ## 1. BERT + GPT = a denoising sequence-to-sequence model
#
# BART is "the standard sequence-to-sequence Transformer" of notebook 08 with GELU activations (§2.1).
# What makes it BERT-like or GPT-like is only *who may attend to whom*:
#
# | part | attends to | like |
# |---|---|---|
# | encoder self-attention | every source token (bidirectional) | BERT |
# | decoder self-attention | earlier target tokens only (causal) | GPT |
# | cross-attention | every encoder output | the Transformer's encoder–decoder attention |
#
# The pre-training task is to **reconstruct** a document x from a corrupted copy x̃:
# minimise −log p(x | x̃) = −Σₜ log p(xₜ | x<ₜ, x̃) — a cross-entropy over the *whole* original document,
# not only over the corrupted positions as in BERT. The decoder reads the original shifted right by one
# (teacher forcing), starting with a *decoder-start* token (BART uses `</s>`).

# %%
S_len, T_len = 6, 5
masks = {"encoder self-attention (bidirectional)": torch.ones(S_len, S_len, dtype=torch.bool),
         "decoder self-attention (causal)": causal_mask(T_len),
         "cross-attention (decoder → encoder)": torch.ones(T_len, S_len, dtype=torch.bool)}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), dpi=80)
for ax, (name, m) in zip(axes, masks.items()):
    viz.heatmap(m.float(), ax=ax, title=name, cmap="Blues", cbar=False,
                xlabels=[f"k{j}" for j in range(m.shape[1])], ylabels=[f"q{i}" for i in range(m.shape[0])])
plt.tight_layout()
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
# Teacher forcing: the decoder reads [start] + target[:-1] and predicts target (BART: start = </s> = 2).
labels = torch.tensor([[0, 31414, 232, 328, 2]])          # <s> Hello world ! </s>   (bart-base ids)
by_hand = torch.cat([torch.tensor([[2]]), labels[:, :-1]], dim=1)
print("labels        ", labels.tolist())
print("decoder inputs", by_hand.tolist())
assert torch.equal(by_hand, shift_tokens_right(labels, pad_id=1, decoder_start_id=2))

# %% [markdown]
# ## 2. The noise functions (§2.2, Figure 2)
#
# `coursekit.noising` implements the five corruptions of the paper. Each one corrupts **one document**
# (a 1-D sequence of ids), never touches special tokens (`<s>`, `</s>`, padding), and draws all its
# randomness from a `torch.Generator`, so a seed reproduces a corruption exactly.
#
# * **Token masking** (BERT): each token becomes `[MASK]` with probability p.
# * **Token deletion**: each token is deleted with probability p — the model must also find *where*.
# * **Text infilling**: spans whose lengths are drawn from Poisson(λ = 3) are each replaced by **one**
#   `[MASK]`; a span of length 0 *inserts* a `[MASK]`. The model must predict *how many* tokens are missing.
# * **Sentence permutation**: the document is cut into sentences at full stops, which are shuffled.
# * **Document rotation**: a token is chosen uniformly and the document rotated to start with it.
#
# First on a toy document whose "words" are easy to follow:

# %%
toy_words = ["<pad>", "<s>", "</s>", "[MASK]", ".", "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"]
TOY = {w: i for i, w in enumerate(toy_words)}
toy_doc = [TOY[w] for w in "<s> A B C . D E . F G H I . J K . </s>".split()]
toy_special = {TOY["<pad>"], TOY["<s>"], TOY["</s>"]}
toy_noises = {
    "token masking": partial(noising.token_masking, mask_id=TOY["[MASK]"], ratio=0.3, special_ids=toy_special),
    "token deletion": partial(noising.token_deletion, ratio=0.3, special_ids=toy_special),
    "text infilling": partial(noising.text_infilling, mask_id=TOY["[MASK]"], ratio=0.3, special_ids=toy_special),
    "sentence permutation": partial(noising.sentence_permutation, sentence_end_ids={TOY["."]},
                                    special_ids=toy_special),
    "document rotation": partial(noising.document_rotation, special_ids=toy_special),
}


def toy_text(ids):
    return " ".join(toy_words[i] for i in ids)


# %%
# NBVAL_CHECK_OUTPUT
print(f"{'original':>21}: {toy_text(toy_doc)}")
for name, noise in toy_noises.items():
    print(f"{name:>21}: {toy_text(noise(toy_doc, generator=torch.Generator().manual_seed(3)).tolist())}")

# %% [markdown]
# **Text infilling, derived.** With a masking ratio of 30% on a document of n tokens, round(0.3 n)
# tokens must disappear. Span lengths ℓ₁, ℓ₂, … ~ Poisson(3) are drawn until they cover that many
# tokens (the last one is cut to fit). The n − round(0.3 n) tokens that stay leave n − round(0.3 n) + 1
# *gaps*; each span goes into its own random gap (two touching spans would look like one longer span)
# and each gap holding a span becomes one `[MASK]`. Poisson(3) gives ℓ = 0 with probability e⁻³ ≈ 5%:
# those spans insert a `[MASK]` that stands for nothing. We check the span-length distribution against
# the Poisson formula P(ℓ = k) = λᵏ e^{−λ} / k!:

# %%
lengths = noising.poisson_span_lengths(20_000, poisson_lambda=3.0, generator=torch.Generator().manual_seed(0))
ks = torch.arange(0, 11)
measured = torch.bincount(lengths[:-1], minlength=11)[:11].float() / (len(lengths) - 1)
pmf = torch.tensor([3.0 ** k * math.exp(-3.0) / math.factorial(k) for k in ks.tolist()])
fig, ax = plt.subplots(figsize=(6, 2.8), dpi=80)
ax.bar(ks - 0.2, measured, width=0.4, label=f"measured ({len(lengths)} spans)")
ax.bar(ks + 0.2, pmf, width=0.4, label="Poisson(3) formula")
ax.set_xlabel("span length ℓ")
ax.set_ylabel("P(ℓ)")
ax.legend()
plt.show()
print(f"mean span length {lengths[:-1].float().mean():.3f} (λ = 3); zero-length spans: {measured[0]:.3f} "
      f"(e^-3 = {math.exp(-3):.3f})")
assert abs(lengths[:-1].float().mean().item() - 3.0) < 0.1
assert (measured - pmf).abs().max() < 0.01

# %% [markdown]
# ### One real document
#
# Now one paragraph of WikiText-2. Tokens are the course's translation tokens
# (`coursekit.translation.split_tokens`: lower-case, punctuation split off), so that the same vocabulary
# (`coursekit.text.Vocab`) serves the English Wikipedia text, the English→French pairs of notebooks
# 05–08 and SST-2 later on. The vocabulary is built on the WikiText-2 validation split and the
# training pairs only (never on test data), with a `<mask>` token added to the usual specials. The
# translation task uses 10,000 training pairs in the class profile (notebook 08: 20,000) and the same
# held-out test sentences as notebooks 05–08.

# %%
wiki = data.load_wikitext2("tokens")
mt = translation.load_translation(max_len=10, n_train=S.mt_train, n_test=S.mt_test)
articles = {split: [[translation.split_tokens(s) for s in doc] for doc in wikitext_documents(wiki[split]["text"])]
            for split in ("validation", "test")}
# BART's vocabulary: every token of the translation task's two vocabularies (so that BART can write any
# French word the Transformer of notebook 08 can), then the most frequent WikiText-2 tokens up to S.vocab.
mt_tokens = sorted(set(mt.src_vocab.itos[4:]) | set(mt.tgt_vocab.itos[4:]))
wiki_by_freq = text.Vocab.build([s for doc in articles["validation"] for s in doc], min_freq=2).itos[4:]
extra = [t for t in wiki_by_freq if t not in set(mt_tokens)][: max(0, S.vocab - 5 - len(mt_tokens))]
vocab = text.Vocab(["<pad>", "<unk>", "<bos>", "<eos>", "<mask>"] + mt_tokens + extra)
PAD, BOS, EOS, MASK = vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.stoi["<mask>"]
SPECIAL = {PAD, BOS, EOS}
STOPS = {vocab.stoi[p] for p in (".", "!", "?") if p in vocab.stoi}
unk_rate = sum(t not in vocab.stoi for doc in articles["test"] for s in doc for t in s) / \
    sum(len(s) for doc in articles["test"] for s in doc)
print(f"{len(articles['validation'])} + {len(articles['test'])} articles; vocabulary of {len(vocab)} tokens "
      f"({len(mt_tokens)} from the translation task); {unk_rate:.1%} of the WikiText-2 test tokens are <unk>")


def chunk(docs, max_tokens):
    """Consecutive sentences of an article packed into documents of at most ``max_tokens`` tokens."""
    out = []
    for doc in docs:
        cur = []
        for sent in doc:
            if len(sent) > max_tokens - 2:
                continue
            if len(cur) + len(sent) > max_tokens - 2:
                out.append(cur)
                cur = []
            cur = cur + sent
        if cur:
            out.append(cur)
    return [vocab.encode(d, add_bos=True, add_eos=True) for d in out if len(d) >= 8]


wiki_docs = chunk(articles["validation"], S.doc_len)
eval_docs = chunk(articles["test"], S.doc_len)[: S.eval_docs]
print(f"{len(wiki_docs)} training documents, {len(eval_docs)} held-out documents of ≤ {S.doc_len} tokens")

# %%
noises = {
    "token masking": partial(noising.token_masking, mask_id=MASK, ratio=0.3, special_ids=SPECIAL),
    "token deletion": partial(noising.token_deletion, ratio=0.3, special_ids=SPECIAL),
    "text infilling": partial(noising.text_infilling, mask_id=MASK, ratio=0.3, special_ids=SPECIAL),
    "sentence permutation": partial(noising.sentence_permutation, sentence_end_ids=STOPS, special_ids=SPECIAL),
    "document rotation": partial(noising.document_rotation, special_ids=SPECIAL),
}
noises["text infilling + sentence permutation"] = noising.compose(noises["sentence permutation"],
                                                                  noises["text infilling"])
show_doc = max(eval_docs[:40], key=lambda d: sum(t in STOPS for t in d))   # one document with several sentences
source_words = vocab.decode(show_doc)
corrupted = {name: noise(show_doc, generator=torch.Generator().manual_seed(0)).tolist()
             for name, noise in noises.items()}
display(HTML("<p><i>struck through red: removed from the source; yellow/blue: what replaced it or was "
             "inserted</i></p>" + "".join(noising.diff_html(source_words, vocab.decode(c), title=name)
                                          for name, c in corrupted.items())))

# %% [markdown]
# The invariants the property tests (`tests/test_noising.py`, with `hypothesis`) check on thousands of
# random documents, here on this one:

# %%
n_content = sum(t not in SPECIAL for t in show_doc)
fill = corrupted["text infilling"]
assert all(c[0] == BOS and c[-1] == EOS for c in corrupted.values())              # specials untouched
assert sorted(corrupted["document rotation"]) == sorted(show_doc)                  # same tokens
assert sorted(corrupted["sentence permutation"]) == sorted(show_doc)
assert sum(t not in SPECIAL and t != MASK for t in fill) == n_content - round(0.3 * n_content)  # exactly 30% gone
print(f"text infilling: {n_content} tokens → {len(fill) - 2} tokens with {fill.count(MASK)} masks "
      f"({n_content - round(0.3 * n_content)} kept)")

# %% [markdown]
# ## 3. The model, and Hugging Face checkpoints
#
# `coursekit.bart.Bart` is assembled from `coursekit.transformer`'s `Encoder` and `Decoder` (post-LN
# layers, GELU) with the details of the released BART: learned positions read with an **offset of 2**
# (row t + 2 for position t, a fairseq legacy), a **LayerNorm on the embeddings** of each stack, one token
# embedding shared by encoder, decoder and output projection, and a `final_logits_bias`. First the
# embedding of the encoder derived by hand:

# %%
torch.manual_seed(0)
tiny = Bart(BartConfig(vocab_size=len(vocab), d_model=S.d_model, n_heads=S.n_heads, d_ff=S.d_ff,
                       n_encoder_layers=S.n_layers, n_decoder_layers=S.n_layers, max_len=128,
                       pad_id=PAD, bos_id=BOS, eos_id=EOS, decoder_start_id=EOS)).eval()
ids = torch.tensor([show_doc])
with torch.no_grad():
    e = tiny.shared.weight[ids] + tiny.encoder_positions.embedding.weight[torch.arange(ids.shape[1]) + 2]
    e = F.layer_norm(e, (S.d_model,), tiny.encoder_embed_norm.weight, tiny.encoder_embed_norm.bias)
    assert torch.allclose(e, tiny.embed(ids, "encoder"), atol=1e-6)
print("encoder input (1, T, C):", tuple(e.shape))

# %% [markdown]
# No BART weights are available offline, so the import is checked the way the tests check it: a randomly
# initialised Hugging Face `BartForConditionalGeneration` is saved to a folder and loaded with
# `Bart.from_hf(folder)`; the logits must agree to 1e-5 and greedy decoding must give the same tokens
# (`tests/test_bart.py` also covers `BartForSequenceClassification`, float64 and mismatch errors).

# %%
torch.manual_seed(0)
hf = transformers.BartForConditionalGeneration(transformers.BartConfig(
    vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
    decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
    forced_eos_token_id=None)).eval()
with tempfile.TemporaryDirectory() as folder:
    hf.save_pretrained(folder)
    ours = Bart.from_hf(folder)
src = torch.randint(3, 100, (2, 12), generator=torch.Generator().manual_seed(1))
src[:, -1] = 2
dec = shift_tokens_right(src, 1, 2)
with torch.no_grad():
    err = (ours(src, dec) - hf(input_ids=src, decoder_input_ids=dec).logits).abs().max().item()
    hf_greedy = hf.generate(input_ids=src, do_sample=False, num_beams=1, max_new_tokens=8, min_length=0)
ours_greedy = ours.generate(src, max_len=8).tokens
print(f"max |logits difference| = {err:.2e}")
assert err < 1e-5
assert ours_greedy == [[t for t in row[1:] if t not in (1, 2)] for row in hf_greedy.tolist()]

# %%
# NBVAL_CHECK_OUTPUT
key_map = ours.hf_key_map()
print(f"{len(key_map)} Hugging Face tensors map onto the course's BART, e.g.:")
for theirs in ("shared.weight", "encoder.embed_positions.weight", "encoder.layernorm_embedding.weight",
               "decoder.layers.0.encoder_attn.q_proj.weight", "decoder.layers.0.final_layer_norm.bias"):
    print(f"  {theirs:<45} → {key_map[theirs]}")
print("position table rows:", tuple(ours.encoder_positions.embedding.weight.shape), "= max_len + 2")

# %% [markdown]
# ## 4. Pre-training a small BART on WikiText-2
#
# The paper's best scheme: **text infilling (30% of the tokens, Poisson(3) spans) + sentence
# permutation**. Our corpus is the WikiText-2 validation split (English Wikipedia, ~217k tokens) packed
# into documents of a few sentences, plus — as mBART does for translation (Liu et al. 2020) —
# monolingual documents made of the *training* sentences of the English→French task, English and French
# separately (never as pairs, never test sentences), so that the decoder has seen French before it is
# asked to translate. The held-out documents come from the WikiText-2 test split.

# %%
def mono_docs(sentences, per_doc=4):
    return [vocab.encode([t for s in sentences[i:i + per_doc] for t in s], add_bos=True, add_eos=True)
            for i in range(0, len(sentences) - per_doc + 1, per_doc)]


half = S.mono_docs // 2
pretrain_docs = wiki_docs + mono_docs([e for e, _ in mt.train])[:half] + mono_docs([f for _, f in mt.train])[:half]
print(f"pre-training pool: {len(wiki_docs)} WikiText-2 documents + {2 * half} monolingual Tatoeba documents")


def make_bart(seed=0):
    torch.manual_seed(seed)
    cfg = BartConfig(vocab_size=len(vocab), d_model=S.d_model, n_heads=S.n_heads, d_ff=S.d_ff,
                     n_encoder_layers=S.n_layers, n_decoder_layers=S.n_layers, max_len=128, dropout=0.1,
                     pad_id=PAD, bos_id=BOS, eos_id=EOS, decoder_start_id=EOS)
    return Bart(cfg).to(device)


def denoising_batches(docs, noise, batch_size, seed):
    g = torch.Generator().manual_seed(seed)

    def get(step):
        idx = torch.randint(len(docs), (batch_size,), generator=g).tolist()
        return bart.denoising_batch([docs[i] for i in idx], noise, pad_id=PAD, decoder_start_id=EOS,
                                    generator=g).to(device)
    return get


@torch.no_grad()
def heldout_loss(model, noise, seed=123, batch_size=64):
    """Token-weighted reconstruction loss on the held-out documents, with a fixed corruption."""
    model.eval()
    g, total, n = torch.Generator().manual_seed(seed), 0.0, 0
    for i in range(0, len(eval_docs), batch_size):
        b = bart.denoising_batch(eval_docs[i:i + batch_size], noise, pad_id=PAD, decoder_start_id=EOS,
                                 generator=g).to(device)
        k = int(b.tgt_keep.sum())
        total += bart.denoising_loss(model, b).item() * k
        n += k
    return total / n


def pretrain(model, noise, steps, seed=0):
    opt = torch.optim.AdamW(model.parameters(), lr=S.lr, weight_decay=0.01)
    sched = train.warmup_cosine(opt, warmup=max(1, steps // 10), total=steps)
    return train.fit(model, opt, denoising_batches(pretrain_docs, noise, S.pt_batch, seed), bart.denoising_loss,
                     steps=steps, scheduler=sched, desc="pre-train")


best_noise = noises["text infilling + sentence permutation"]
model = make_bart()
before = heldout_loss(model, best_noise)
history = pretrain(model, best_noise, S.pt_steps)
after = heldout_loss(model, best_noise)
print(f"{S.pt_steps} steps in {history.seconds:.0f} s; held-out denoising loss {before:.2f} → {after:.2f} "
      f"(uniform guess: ln V = {math.log(len(vocab)):.2f})")
assert after < before - 0.5
viz.plot_curves({"training loss (smoothed)": history.smoothed_loss(10)}, ylabel="cross-entropy",
                title="BART pre-training: text infilling + sentence permutation")
plt.show()

# %% [markdown]
# What has it learned? Corrupt a held-out document, let the model reconstruct it with greedy decoding,
# and compare. (A model this small, trained for minutes, copies the uncorrupted context well and guesses
# frequent words for the masks — the point is the mechanism, not the prose.)

# %%
g = torch.Generator().manual_seed(5)
demo = eval_docs[3]
noisy = noises["text infilling"](demo, generator=g)
restored = model.generate(noisy[None].to(device), max_len=len(demo) + 2).tokens[0]
display(HTML(noising.diff_html(vocab.decode(demo), vocab.decode(noisy.tolist()), title="corrupted input")
             + noising.diff_html(vocab.decode(demo), vocab.decode(restored), title="BART's reconstruction")))

# %% [markdown]
# ## 5. Fine-tuning for generation: English → French
#
# A seq2seq model fine-tunes for translation without any new parts: the encoder reads the English
# sentence, the decoder writes the French one. (The paper does something more elaborate for MT — a new
# encoder in front of BART — because its BART is English-only; ours saw monolingual French in
# pre-training.) We compare with the Transformer of notebook 08 (`coursekit.transformer.Transformer`,
# the same width and depth, trained from scratch) with **the same fine-tuning budget**: same steps,
# batch size, optimiser and schedule, on the same `coursekit.translation` pairs and test sentences.

# %%
def mt_encode(pairs):
    return ([vocab.encode(e, add_bos=True, add_eos=True) for e, _ in pairs],
            [vocab.encode(f, add_bos=True, add_eos=True) for _, f in pairs])


mt_src, mt_tgt = mt_encode(mt.train)
test_src, test_tgt = mt_encode(mt.test)


def mt_batches(seed=0):
    g = torch.Generator().manual_seed(seed)

    def get(step):
        idx = torch.randint(len(mt_src), (S.mt_batch,), generator=g).tolist()
        return bart.seq2seq_batch([mt_src[i] for i in idx], [mt_tgt[i] for i in idx], pad_id=PAD,
                                  decoder_start_id=EOS).to(device)
    return get


def finetune(model, batches, loss_fn, steps, desc):
    opt = torch.optim.AdamW(model.parameters(), lr=S.ft_lr, weight_decay=0.01)
    return train.fit(model, opt, batches, loss_fn, steps=steps, desc=desc,
                     scheduler=train.warmup_cosine(opt, warmup=max(1, steps // 10), total=steps))


def bart_translate(m):
    def translate(batch):
        ids, keep, _ = text.pad_batch([test_src[i] for i in batch.index.tolist()], PAD)
        out = m.generate(ids.to(device), keep.to(device), max_len=mt.max_len + 3).tokens
        return [[mt.tgt_vocab.stoi.get(vocab.itos[t], mt.tgt_vocab.unk_id) for t in seq if t not in SPECIAL]
                for seq in out]
    return translate


@torch.no_grad()
def mt_test_perplexity(m, batch_size=256):
    """exp(mean cross-entropy) per French token (+ </s>), teacher forced; BART's trivial <s> is left out."""
    m.eval()
    total, n = 0.0, 0
    for i in range(0, len(test_src), batch_size):
        b = bart.seq2seq_batch(test_src[i:i + batch_size], test_tgt[i:i + batch_size], pad_id=PAD,
                               decoder_start_id=EOS).to(device)
        keep = b.tgt_keep.clone()
        keep[:, 0] = False                                             # position 0 is <s>
        logits = m(b.src, b.tgt_in, src_keep=b.src_keep, tgt_keep=b.tgt_keep)
        total += F.cross_entropy(logits[keep], b.tgt_out[keep], reduction="sum").item()
        n += int(keep.sum())
    return math.exp(total / n)


@torch.no_grad()
def transformer_test_perplexity(m):
    m.eval()
    total, n = 0.0, 0
    for b in mt.batches(256, split="test"):
        b = b.to(device)
        k = int(b.tgt_mask.sum())
        total += m.loss(b).item() * k
        n += k
    return math.exp(total / n)


bart_mt = copy.deepcopy(model)
h_bart = finetune(bart_mt, mt_batches(), bart.denoising_loss, S.mt_steps, "BART → fr")
bleu_bart = mt.evaluate(bart_translate(bart_mt))

torch.manual_seed(0)
tf = Transformer(TransformerConfig(len(mt.src_vocab), len(mt.tgt_vocab), d_model=S.d_model, n_heads=S.n_heads,
                                   n_encoder_layers=S.n_layers, n_decoder_layers=S.n_layers, d_ff=S.d_ff,
                                   dropout=0.1, max_len=64, src_pad_id=mt.src_vocab.pad_id,
                                   tgt_pad_id=mt.tgt_vocab.pad_id, bos_id=mt.tgt_vocab.bos_id,
                                   eos_id=mt.tgt_vocab.eos_id)).to(device)
h_tf = finetune(tf, mt.batch_fn(S.mt_batch, torch.Generator().manual_seed(0), device), Transformer.loss,
                S.mt_steps, "Transformer (scratch)")
bleu_tf = mt.evaluate(tf.translator(max_len=mt.max_len + 2))
viz.show_table([
    {"model": "BART (pre-trained here), fine-tuned", "fine-tuning steps": S.mt_steps,
     "test PPL per French token": mt_test_perplexity(bart_mt), "test BLEU (greedy)": bleu_bart.bleu,
     "seconds": h_bart.seconds},
    {"model": "Transformer from scratch (notebook 08's model)", "fine-tuning steps": S.mt_steps,
     "test PPL per French token": transformer_test_perplexity(tf), "test BLEU (greedy)": bleu_tf.bleu,
     "seconds": h_tf.seconds},
], title=f"English→French, {len(mt.train)} training pairs, {len(mt.test)} test sentences")
viz.show_table(bleu_bart.examples(4), title="BART's translations")
assert h_bart.smoothed_loss(10)[1][-1] < h_bart.train_loss[0]
viz.plot_curves({"BART fine-tuned": h_bart.smoothed_loss(10), "Transformer from scratch": h_tf.smoothed_loss(10)},
                ylabel="training cross-entropy", title="same fine-tuning budget")
plt.show()

# %% [markdown]
# Both are measured on the same test sentences: BLEU on the decoded strings, and the perplexity of the
# reference translation per French token (+ `</s>`). BART's softmax runs over a larger vocabulary
# (Wikipedia words too), which costs it a little perplexity. Models this small after a few hundred
# updates translate badly — greedy decoding repeats words and BLEU stays near zero, where a single
# matched 4-gram moves it — so perplexity, which improves long before BLEU does, is the more telling
# number at this budget. Notebook 08 trains a wider Transformer for longer on twice the pairs; its stored
# BLEU shows what the task reaches with more compute.
#
# Pre-training is no guarantee at this scale. BART's softmax runs over about twice as many words as the
# Transformer's French vocabulary, its knowledge of French comes from a few hundred denoising steps, and
# the Transformer's sinusoidal positions and √d-scaled embeddings suit very short runs. Whether the
# pre-trained BART wins this comparison therefore depends on the budget; the ablation below isolates the
# effect of pre-training *within one architecture* (the same BART from random or pre-trained weights).
#
# ## 6. Which noise? The ablation (paper Table 1, at classroom scale)
#
# Each scheme pre-trains a fresh copy of the same model for the same number of steps; we report
# * the held-out **denoising loss** on the scheme's own corruption — how hard its task is, *not*
#   comparable across rows (rotation and permutation are easy to state and hard to solve; masking keeps
#   every position), and
# * one **downstream** measure in the spirit of the paper's generation columns: the English→French test
#   **perplexity** (teacher forced, per French token) after the same short fine-tuning from each
#   pre-trained model (BLEU would be near zero for all of them at this budget). Lower is better;
#   "no pre-training" is the baseline.

# %%
def downstream(m, seed=1):
    finetune(m, mt_batches(seed), bart.denoising_loss, S.abl_ft_steps, "fine-tune")
    return mt_test_perplexity(m)


def pretrain_small(m, noise, seed=1):
    opt = torch.optim.AdamW(m.parameters(), lr=S.lr, weight_decay=0.01)
    return train.fit(m, opt, denoising_batches(pretrain_docs, noise, S.abl_batch, seed), bart.denoising_loss,
                     steps=S.abl_steps, scheduler=train.warmup_cosine(opt, max(1, S.abl_steps // 10), S.abl_steps),
                     desc="pre-train")


ablation = [{"pre-training": "none (random init)", "denoising loss": float("nan"),
             "EN→FR test PPL": downstream(make_bart(seed=1))}]
for name, noise in noises.items():
    m = make_bart(seed=1)
    pretrain_small(m, noise)
    loss = heldout_loss(m, noise)
    ablation.append({"pre-training": name, "denoising loss": loss, "EN→FR test PPL": downstream(m)})
viz.show_table(ablation, title=f"our ablation: {S.abl_steps} pre-training steps of {S.abl_batch} documents, "
                               f"then {S.abl_ft_steps} fine-tuning steps on EN→FR")
# any denoising pre-training, however short, beats starting from random weights on the downstream task
assert all(r["EN→FR test PPL"] < ablation[0]["EN→FR test PPL"] for r in ablation[1:])

# %% [markdown]
# For scale, the paper's Table 1 (BART-base-sized models, 1M steps on books + Wikipedia; SQuAD F1,
# MNLI accuracy, perplexities on four generation tasks — lower is better):

# %%
paper = [  # Lewis et al. 2020, Table 1 (rows "BART Base w/ …"), shown as "paper scale"
    ("token masking", 90.4, 84.1, 25.05, 7.08, 11.73, 6.10),
    ("token deletion", 90.4, 84.1, 24.61, 6.90, 11.46, 5.87),
    ("text infilling", 90.8, 84.0, 24.26, 6.61, 11.05, 5.83),
    ("document rotation", 77.2, 75.3, 53.69, 17.14, 19.87, 10.59),
    ("sentence permutation", 85.4, 81.5, 41.87, 10.93, 16.67, 7.89),
    ("text infilling + sentence permutation", 90.8, 83.8, 24.17, 6.62, 11.12, 5.41),
]
viz.show_table([dict(zip(("pre-training (paper scale)", "SQuAD 1.1 F1", "MNLI acc.", "ELI5 PPL", "XSum PPL",
                          "ConvAI2 PPL", "CNN/DM PPL"), row)) for row in paper], floatfmt="{:.2f}",
               title="paper scale: Lewis et al. 2020, Table 1")

# %% [markdown]
# Reading the two tables together: in the paper, rotation and permutation *alone* are poor pre-training
# tasks, token deletion beats masking on generation, and infilling (+ permutation) is consistently
# among the best. At our scale (a 2-layer model, a few minutes of CPU, one seed) the differences between
# schemes are small and partly noise; what transfers is the shape of the experiment — same model, same
# budget, one row per corruption — and the gap to "no pre-training".
#
# ## 7. Fine-tuning for classification
#
# For classification BART feeds the **same input to the encoder and the decoder** and classifies the
# decoder's final hidden state — at the last `</s>`, which has attended (causally) to the whole input
# and (through cross-attention) to the encoder's bidirectional reading of it (§3.1). On SST-2 sentences,
# first derive that representation by hand:

# %%
sst = data.load_sst2()
order = torch.randperm(len(sst["train"]), generator=torch.Generator().manual_seed(0))[: S.cls_train].tolist()
sst_train = sst["train"].select(order)
sst_val = sst["validation"].select(range(min(S.cls_val, len(sst["validation"]))))


def encode_sst(split):
    return [vocab.encode(translation.split_tokens(s), add_bos=True, add_eos=True) for s in split["sentence"]]


sst_x = {"train": encode_sst(sst_train), "val": encode_sst(sst_val)}
sst_y = {"train": torch.tensor(sst_train["label"]), "val": torch.tensor(sst_val["label"])}

clf = BartForSequenceClassification(copy.deepcopy(model), 2).to(device).eval()
ids, keep, _ = text.pad_batch(sst_x["val"][:4], PAD)
ids, keep = ids.to(device), keep.to(device)
with torch.no_grad():
    memory, _ = clf.bart.encode(ids, keep)
    h = clf.bart.decode(shift_tokens_right(ids, PAD, EOS), memory, keep, tgt_keep=keep)    # (B, T, C)
    last_eos = keep.sum(1) - 1                                                              # </s> is last
    by_hand = h[torch.arange(len(ids)), last_eos]                                           # (B, C)
    assert torch.allclose(by_hand, clf.sentence_representation(ids, keep), atol=1e-6)
print("sentence representation:", tuple(by_hand.shape))


# %%
def cls_batches(seed=0):
    g = torch.Generator().manual_seed(seed)

    def get(step):
        idx = torch.randint(len(sst_x["train"]), (S.cls_batch,), generator=g).tolist()
        ids, keep, _ = text.pad_batch([sst_x["train"][i] for i in idx], PAD)
        return ids.to(device), keep.to(device), sst_y["train"][idx].to(device)
    return get


def cls_loss(m, b):
    return F.cross_entropy(m(b[0], b[1]), b[2])


@torch.no_grad()
def cls_accuracy(m):
    m.eval()
    ids, keep, _ = text.pad_batch(sst_x["val"], PAD)
    return (m(ids.to(device), keep.to(device)).argmax(1).cpu() == sst_y["val"]).float().mean().item()


rows = []
for name, base in (("BART (pre-trained here)", copy.deepcopy(model)), ("same model, no pre-training", make_bart(2))):
    m = BartForSequenceClassification(base, 2).to(device)
    hist = finetune(m, cls_batches(), cls_loss, S.cls_steps, name)
    rows.append({"model": name, "steps": S.cls_steps, "SST-2 val. acc.": cls_accuracy(m), "seconds": hist.seconds})
viz.show_table(rows, title=f"SST-2, all weights fine-tuned, {len(sst_train)} training sentences, "
                          f"{len(sst_val)} validation sentences")

# %% [markdown]
# ## 8. Explore the noise functions
#
# Pick a corruption, a ratio (for masking, deletion and infilling) and a seed. Live, the sliders redraw
# the diff; in the stored notebook a few settings are shown.

# %%
def render(noise="text infilling", ratio=0.3, seed=0):
    fns = {"token masking": partial(noising.token_masking, mask_id=MASK, ratio=ratio, special_ids=SPECIAL),
           "token deletion": partial(noising.token_deletion, ratio=ratio, special_ids=SPECIAL),
           "text infilling": partial(noising.text_infilling, mask_id=MASK, ratio=ratio, special_ids=SPECIAL),
           "sentence permutation": noises["sentence permutation"], "document rotation": noises["document rotation"]}
    out = fns[noise](show_doc, generator=torch.Generator().manual_seed(seed)).tolist()
    display(HTML(noising.diff_html(source_words, vocab.decode(out), title=f"{noise}, ratio {ratio}, seed {seed}")))


widgets.explorer(render, [dict(noise="text infilling", ratio=0.5, seed=1), dict(noise="token deletion", ratio=0.2,
                                                                                 seed=1)],
                 noise=list(noises)[:5], ratio=(0.0, 1.0, 0.05), seed=(0, 20, 1))

# %% [markdown]
# ## Summary
#
# - BART = a bidirectional (BERT-like) encoder + an autoregressive (GPT-like) decoder with
#   cross-attention, trained to reconstruct documents from corrupted copies: −log p(x | x̃).
# - Five corruptions: token masking, token deletion, text infilling (Poisson(3) spans → one `[MASK]`, a
#   zero-length span inserts one), sentence permutation, document rotation; they compose.
# - The architecture is notebook 08's post-LN Transformer with GELU, learned positions (offset 2),
#   LayerNorm on embeddings and tied output embeddings; Hugging Face checkpoints load with equal logits
#   and equal greedy outputs.
# - In the paper, text infilling (+ sentence permutation) is the best all-round scheme; rotation and
#   permutation alone are weak. At classroom scale the differences are small and noisy — the table
#   shape, not the ranking, is what transfers.
# - Fine-tuning needs no new architecture for generation (translation), and a small head on the last
#   decoder state for classification.

# %%
print(f"notebook ran in {time.perf_counter() - T0:.0f} s ({runtime.profile()} profile)")

# %% [markdown]
# ## Exercises
#
# **Exercise 1 — text infilling with given spans.** Replace each span `(start, length)` of `ids` by ONE
# `mask_id`. A span of length 0 inserts a mask before position `start`. Special tokens (`special_ids`)
# inside a span are kept, and the span continues after them with a new mask. The spans are sorted and
# never overlap or touch.

# %%
# EXERCISE 1: text infilling
def my_text_infilling(ids, spans, mask_id, special_ids):
    ### BEGIN SOLUTION
    starts = dict(spans)
    out, i = [], 0
    while i <= len(ids):
        n = starts.get(i)
        if n == 0:
            out.append(mask_id)
        if n:
            fresh = True
            for t in ids[i:i + n]:
                if t in special_ids:
                    out.append(t)
                    fresh = True
                elif fresh:
                    out.append(mask_id)
                    fresh = False
            i += n
            continue
        if i < len(ids):
            out.append(ids[i])
        i += 1
    return out
    ### END SOLUTION


check_text_infilling(my_text_infilling)

# %% [markdown]
# **Exercise 2 — sentence permutation with a given order.** Split the non-special tokens of `ids` into
# sentences, each ending *after* an `end_id` token (a last sentence without one counts too), and write
# them back in `order` (sentence `order[0]` first). Special tokens keep their positions.

# %%
# EXERCISE 2: sentence permutation
def my_sentence_permutation(ids, order, end_id, special_ids):
    ### BEGIN SOLUTION
    positions = [i for i, t in enumerate(ids) if t not in special_ids]
    sentences, current = [], []
    for i in positions:
        current.append(ids[i])
        if ids[i] == end_id:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    out = list(ids)
    for i, t in zip(positions, [t for k in order for t in sentences[k]]):
        out[i] = t
    return out
    ### END SOLUTION


check_sentence_permutation(my_sentence_permutation)

# %% [markdown]
# **Exercise 3 — decoder inputs.** Given target ids `labels` (B, T) (where `-100` marks ignored padding),
# return the decoder inputs for teacher forcing: `decoder_start_id`, then the labels shifted right by
# one; any `-100` becomes `pad_id`.

# %%
# EXERCISE 3: shift tokens right
def my_shift_tokens_right(labels, pad_id, decoder_start_id):
    ### BEGIN SOLUTION
    shifted = torch.full_like(labels, decoder_start_id)
    shifted[:, 1:] = labels[:, :-1]
    return shifted.masked_fill(shifted == -100, pad_id)
    ### END SOLUTION


check_shift_tokens_right(my_shift_tokens_right)
