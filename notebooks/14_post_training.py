# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 14 — Post-training: supervised fine-tuning, LoRA and preference optimisation (DPO)
#
# A pre-trained model does what its data did. Post-training teaches it what *we* want: more supervised
# training on chosen examples (SFT), cheaply through a low-rank adapter (LoRA, Hu et al. 2021), on request
# through an instruction in the input, and from *preferences* — pairs of answers where one is better — with a
# reward model (as in RLHF) or directly with DPO (Rafailov et al. 2023).
#
# We post-train the committed EN→FR Transformer of notebook 08 on one behaviour a student can read off most
# output: **formal or informal "you"**. French must choose where English says *you*: *vous* (formal, or
# plural) or *tu* (informal). Tatoeba often holds both translations of one English sentence, and the model
# chooses without being asked.
#
# **Learning goals**
# - Measure a behaviour (the *vous* rate) before and after each method, and what the committed runs cost (BLEU;
#   for full SFT and the DPO runs, also the KL to the base).
# - Fine-tune on chosen pairs (SFT) and watch the behaviour move with the number of updates.
# - Write LoRA from its equation: a frozen $W_0$ plus $\frac{\alpha}{r} BA$, $B = 0$ at the start; merge it;
#   compare with Hugging Face `peft`; count what it trains and stores.
# - Ask for a behaviour with an instruction in the input (a register tag), instruction tuning in miniature.
# - Derive DPO from the KL-regularised reward objective, check its loss against `trl`, train with it, and see
#   what the strength of the KL term β does; compare with a reward model and best-of-n sampling.
#
# The figures quoted in the text are those of the stored run in the `class` profile, and of the committed
# post-training runs (`data/translation/register/`, made by `python -m coursekit.translation posttrain`);
# the `quick` profile, which CI runs, trains for a few updates on fewer sentences and prints other numbers.

# %%
import copy
import json
import math
import tempfile
import time
import warnings

import matplotlib.pyplot as plt
import peft
import torch
import torch.nn.functional as F
from datasets import Dataset, disable_progress_bars
from safetensors import safe_open
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
from trl import DPOConfig, DPOTrainer

from coursekit import runtime
from coursekit.data import model_dir
from coursekit.exercises import (
    check_answer_logprob,
    check_bradley_terry_loss,
    check_dpo_loss,
    check_lora_forward,
    check_lora_init,
)
from coursekit.training.loop import count_parameters
from coursekit.training.lora import LoRALinear, add_lora, lora_state_dict, merge_lora
from coursekit.training.preference import bradley_terry_loss, dpo_loss, sequence_logprob
from coursekit.translation import posttrain as pt
from coursekit.translation.benchmark import load_benchmark
from coursekit.translation.recipes import evaluate, load_model
from coursekit.translation.register import REGISTERS, addresses_you, register_of, vous_rate, you_pairs
from coursekit.translation.scoring import corpus_bleu
from coursekit.viz import plots as viz

S = runtime.sizes(
    quick=dict(n_train=8000, n_test=60, n_test_long=10, sft_updates=4, dpo_updates=4, eval_every=4,
               curve_sentences=20, rm_pairs=128, best_of=2, held_out=60),
    class_=dict(n_train=None, n_test=1000, n_test_long=800, sft_updates=40, dpo_updates=30, eval_every=10,
                curve_sentences=120, rm_pairs=2048, best_of=4, held_out=None),
    full=dict(n_train=None, n_test=1000, n_test_long=800, sft_updates=200, dpo_updates=150, eval_every=25,
              curve_sentences=436, rm_pairs=8192, best_of=8, held_out=None),
)
plt.rcParams["figure.dpi"] = 80
torch.manual_seed(0)
print(S, "| torch threads:", torch.get_num_threads())

# %% [markdown]
# ## 1. The behaviour, the data and the base model
#
# `register_of` reads the register off the second-person forms of a French sentence: *tu, toi, te, t', ton,
# ta, tes* are informal, *vous, votre, vos* formal (a sentence can hold both, or neither; the possessive
# pronouns *le vôtre*, *le tien* are not read, as the fourth example shows). The *vous rate* of a
# model is the share of *vous* among its translations that hold exactly one register.

# %%
# NBVAL_CHECK_OUTPUT
for french in ["Pourriez-vous m'aider ?", "Je t'aime.", "Tu sais, vous êtes en retard.",
               "C'est ton tour, pas le vôtre.", "Il pleut."]:
    print(f"{french!r:34} → {register_of(french)}")

# %% [markdown]
# The data are the benchmark's pairs (notebook 05): the training pairs whose English says *you* (with
# *your*, *yourself*, *you're*…), sorted by the register of their French, and the English sentences that have
# both a *vous* and a *tu* translation — one preference pair each. The test sentences that say *you* are held out:
# the split is a hash of the English sentence (notebook 05), and every training pair below is drawn from the
# training split. The last line below counts the test sentences that say *you* and are also the English of a
# training pair (asserted: none). The base model's report names the same benchmark, split and tokenizer
# (asserted), and the committed runs' reports count as many *you*-pairs as this run (asserted in §2, in class).

# %%
t0 = time.perf_counter()
data = load_benchmark(n_train=S.n_train, n_test=S.n_test, n_test_long=S.n_test_long, n_valid=0, n_valid_long=0)
tok = data.src_vocab
you = you_pairs(data.train)
test_you = pt.you_test_sources(data)
base, base_report = load_model("transformer", data=data)
base.requires_grad_(False)
print(f"{len(data.train):,} training pairs, {len(data.test):,} test pairs ({time.perf_counter() - t0:.0f} s to load)")
print("you-pairs in training:", you.summary())
print(f"test sentences that say 'you': {len(test_you)}")
print("a preference pair:", [" ".join(side) for side in you.preferences[0]])
train_english = {tuple(english) for english, _ in data.train}
seen = sum(tuple(english) in train_english for english in test_you)
print(f"test sentences that say 'you' and are the English of a training pair: {seen}")
assert seen == 0
assert base_report["benchmark"] == data.info["benchmark"]     # the base: the same split settings and tokenizer

# %%
not_you = [i for i, (english, _) in enumerate(data.test) if not addresses_you(english)]


def measure(model, *, register=None):
    """The vous rate on the held-out 'you' sentences; BLEU on the test split (asked in `register` if given), and on
    its pairs without 'you', where the register matters much less."""
    figures = pt.register_figures(model, tok, test_you, register=register)
    row = {"vous": figures["vous"], "tu": figures["tu"], "both/neither": figures["both"] + figures["neither"],
           "vous rate": figures["vous_rate"]}
    result = evaluate(model, data if register is None else pt.tagged_test(data, register), "test")
    row["BLEU"] = result.bleu
    row["BLEU, no 'you'"] = corpus_bleu([result.hypotheses[i] for i in not_you],
                                        [result.references[i] for i in not_you])
    return row, figures["translations"]


t0 = time.perf_counter()
base_row, base_translations = measure(base)
base_no_you = base_row["BLEU, no 'you'"]
print(f"base model: {base_row['vous']} vous, {base_row['tu']} tu, {base_row['both/neither']} both/neither (vous rate "
      f"{base_row['vous rate']:.3f}); test BLEU {base_row['BLEU']:.2f}, on the pairs without 'you' {base_no_you:.2f} "
      f"({time.perf_counter() - t0:.0f} s)")
for english, french in list(zip(test_you, base_translations))[:6]:
    print(f"  {' '.join(english):45} → {french}")
references = vous_rate([" ".join(french) for english, french in data.test if addresses_you(english)])
print(f"the references of those sentences: {references.vous} vous, {references.tu} tu, {references.both} both, "
      f"{references.neither} neither (vous rate {references.rate:.3f})")
others = vous_rate([" ".join(data.test[i][1]) for i in not_you])
print(f"the references of the {len(not_you)} test pairs without 'you': {others.vous} vous, {others.tu} tu, "
      f"{others.both} both")
if S.profile == "class":   # what the text says: few of them hold a second-person form
    assert others.vous + others.tu + others.both < 0.05 * len(not_you)

# %% [markdown]
# The base model says *vous* in about two of five decided translations and *tu* in most of the others
# (the counts above); the references of the same sentences are split about the same way (171 *vous*, 254 *tu*).
# So a fully formal model departs from the reference's pronoun and verb forms on most of these sentences, however
# good its French: BLEU on the whole test split charges every method below for the register it was asked to
# learn. BLEU is therefore printed twice: on all test pairs, and on the pairs whose English does not say *you*.
# There the register matters much less: few of their references hold a *vous* or *tu* form at all (the last
# line above; asserted: under 5 %). The count reads only the words listed at the top of §1, so an imperative
# such as *venez ici*, whose register is in the verb alone, is not counted. So a reference in the other register
# can explain only part of a drop on those pairs; how large a part, this notebook does not measure.

# %% [markdown]
# ## 2. Supervised fine-tuning (SFT)
#
# The simplest post-training is more of the pre-training loss, on pairs we chose: here the *vous* pairs only.
# Every weight is trained (Adam, label smoothing 0.1 as in pre-training), and we watch the *vous* rate on the
# first 120 test sentences that say *you* as the updates grow (their base rate, at update 0, is 0.46).

# %%
def vous_rate_of(model, n=S.curve_sentences):
    return vous_rate(pt.translate_tokens(model, tok, test_you[:n])).rate


def fine_tune(model, pairs, updates, lr, *, label_smoothing=0.1, batch_size=32, seed=0):
    """Cross-entropy on `pairs` for `updates` steps; returns [(update, vous rate)] every S.eval_every updates."""
    train = pt.pairs_data(pairs, tok)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    g = torch.Generator().manual_seed(seed)
    curve = [(0, vous_rate_of(model))]
    for update in range(1, updates + 1):
        model.train()
        batch = train.make_batch(torch.randint(len(train.train), (batch_size,), generator=g).tolist())
        loss = pt.sft_loss(model, batch, label_smoothing)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if update % S.eval_every == 0 or update == updates:
            model.eval()
            curve.append((update, vous_rate_of(model)))
    model.eval()
    return curve


t0 = time.perf_counter()
sft_model = copy.deepcopy(base).requires_grad_(True)
sft_curve = fine_tune(sft_model, you.vous, S.sft_updates, lr=1e-4)
sft_seconds = time.perf_counter() - t0
print(f"full SFT, {S.sft_updates} updates of 32 vous pairs ({sft_seconds:.0f} s):",
      ", ".join(f"{u}: {r:.2f}" for u, r in sft_curve))

# %% [markdown]
# A few dozen updates are enough to make the model formal (the live curve above, on the first test sentences
# that say *you*). The committed run (`sft`: 400 updates) shows what it costs. Its learning rate, batch and label
# smoothing are the live run's (printed below from its report; asserted); unlike the live run, its learning rate
# rises over a short warm-up, then falls to zero at the last update. Its curve is the *vous* rate on the
# validation sentences that say *you*; its final figures are on the test split.

# %%
reports = {name: json.loads((model_dir("translation") / "register" / f"{name}.json").read_text())
           for name in pt.RECIPES}
sft_report = reports["sft"]
sft_recipe = sft_report["recipe"]
print(f"committed full SFT's recipe: lr {sft_recipe['lr']:g}, batch {sft_recipe['batch_size']}, label smoothing "
      f"{sft_recipe['label_smoothing']:g}, warm-up {sft_recipe['warmup']} updates")
assert (sft_recipe["lr"], sft_recipe["batch_size"], sft_recipe["label_smoothing"]) == (1e-4, 32, 0.1)   # the live run's
fig, ax = plt.subplots(figsize=(6, 3))
for name in ("sft", "sft_lora"):
    steps, points = zip(*reports[name]["valid_curve"])
    ax.plot(steps, [p["vous_rate"] for p in points], marker="o", ms=3,
            label=f"{name} (committed, validation)")
ax.plot(*zip(*sft_curve), marker="s", label="full SFT (this run, test)")
ax.set_xlabel("updates")
ax.set_ylabel("vous rate")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.show()
print(f"committed full SFT: vous rate {sft_report['test']['untagged']['vous_rate']:.3f}, test BLEU "
      f"{sft_report['test']['bleu']:.2f} (base {base_report['test']['bleu']:.2f}), KL to the base "
      f"{sft_report['test']['kl_per_token']:.3f} nats/token")
print(f"committed full SFT on the test pairs without 'you': BLEU {sft_report['test']['bleu_not_you']:.2f} "
      f"(base {base_no_you:.2f})")
if S.profile == "class":   # what the text says
    assert sft_curve[-1][1] > sft_curve[0][1] + 0.3
    assert sft_report["test"]["untagged"]["vous_rate"] >= 0.99
    assert sft_report["test"]["bleu"] < base_report["test"]["bleu"]
    assert base_no_you - sft_report["test"]["bleu_not_you"] > 1
    assert all(r["data"] == you.summary() for r in reports.values())     # as many you-pairs as this run's

# %% [markdown]
# Full SFT makes every decided translation formal, and loses about two and a half BLEU points on the test
# split (40.90 against 43.33). Part of that loss need not be forgetting: where the English says *you* and the
# reference says *tu*, a *vous* translation scores lower however good it is. But on the pairs without *you*,
# where the register matters much less (§1), it still loses more than a point (42.29 against 43.87; asserted).
# That is a sign that training every weight on *vous* pairs changed the model's French beyond the register (how
# much of the drop is French, this notebook does not measure).

# %% [markdown]
# ## 3. LoRA: a low-rank update of frozen weights
#
# Full fine-tuning changes all 7.6 million weights and must store a new model per task. Hu et al. (2021)
# observe that the update a fine-tuning needs has a low "intrinsic rank", and train it in factored form:
#
# $$h = W_0 x + b + \frac{\alpha}{r}\, B A x, \qquad A \in \mathbb{R}^{r \times k},\ B \in \mathbb{R}^{d \times r},
# \ r \ll \min(d, k).$$
#
# $W_0$ stays frozen. $B$ starts at **zero**, so the adapted model starts *exactly* at the base model; $A$
# starts random, so that $B$ receives a gradient from the first step ($\partial L / \partial B$ is proportional
# to $Ax$). The scaling $\alpha / r$ keeps the size of the update about the same when $r$ changes (Hu et al.,
# §4.1). After training, $W_0 + \frac{\alpha}{r} BA$ is one matrix again: merged, the model is an ordinary one,
# with no extra matrices at inference. We put rank-8 adapters on the query and value projections of
# every attention layer (encoder self-attention, decoder self- and cross-attention), as the paper does.

# %%
lora_model = copy.deepcopy(base)
wrapped = add_lora(lora_model, pt.LORA_TARGETS, r=8, alpha=16)
n_base, n_lora = count_parameters(base, trainable_only=False), count_parameters(lora_model)
adapter_file = model_dir("translation") / "register" / "tagged.safetensors"      # §4's adapter, as committed
with safe_open(str(adapter_file), framework="pt") as stored:
    storage = stored.metadata()["storage"]
print(f"{len(wrapped)} projections wrapped, e.g. {wrapped[0]}: {lora_model.get_submodule(wrapped[0])}")
print(f"trained: {n_lora:,} of {n_base:,} parameters ({n_lora / n_base:.2%}); {len(lora_state_dict(lora_model))} "
      f"tensors; a committed adapter ({storage}): {adapter_file.stat().st_size / 1024:.0f} KiB; the "
      f"model in float32: {n_base * 4 / 2**20:.1f} MiB")
assert n_lora / n_base <= 0.02

batch = data.make_batch(list(range(8)), "test")
with torch.no_grad():
    same_at_start = (lora_model(batch.src, batch.tgt_in, batch.src_mask) - base(batch.src, batch.tgt_in,
                                                                                 batch.src_mask)).abs().max().item()
print(f"at the start (B = 0) the adapted model gives the base's logits: max difference {same_at_start}")
assert same_at_start == 0.0

# %% [markdown]
# With random values in $B$ (as after training), three ways of computing the adapted model must agree: ours
# with the adapters, ours merged into plain `nn.Linear` layers, and Hugging Face `peft` with the same numbers
# in its own adapter layers.

# %%
g = torch.Generator().manual_seed(1)
with torch.no_grad():
    for name, p in lora_model.named_parameters():
        if name.endswith("lora_B"):
            p.copy_(0.02 * torch.randn(p.shape, generator=g))
theirs = peft.inject_adapter_in_model(
    peft.LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=list(pt.LORA_TARGETS)), copy.deepcopy(base))
their_params = dict(theirs.named_parameters())
with torch.no_grad():
    for name, p in lora_model.named_parameters():
        if name.endswith(("lora_A", "lora_B")):
            module, kind = name.rsplit(".", 1)
            their_params[f"{module}.{kind}.default.weight"].copy_(p)
merged = copy.deepcopy(lora_model)
n_merged = merge_lora(merged)
with torch.no_grad():
    ours = lora_model(batch.src, batch.tgt_in, batch.src_mask)
    err_merged = (merged(batch.src, batch.tgt_in, batch.src_mask) - ours).abs().max().item()
    err_peft = (theirs(batch.src, batch.tgt_in, batch.src_mask) - ours).abs().max().item()
    moved = (ours - base(batch.src, batch.tgt_in, batch.src_mask)).abs().max().item()
print(f"the adapters move the logits by up to {moved:.3f}; merged ({n_merged} layers) vs adapters: {err_merged:.1e}; "
      f"peft vs ours: {err_peft:.1e}")
assert err_merged <= 1e-5 and err_peft <= 1e-6 and moved > 1e-2
assert not any(isinstance(m, LoRALinear) for m in merged.modules())

# %% [markdown]
# LoRA SFT: the same data and number of updates as the full SFT above, with only the adapters trained (and a
# learning rate ten times higher: LoRA runs usually take a larger one than full fine-tuning; we did not tune it).

# %%
t0 = time.perf_counter()
lora_sft = copy.deepcopy(base)
add_lora(lora_sft, pt.LORA_TARGETS, r=8, alpha=16)
lora_curve = fine_tune(lora_sft, you.vous, S.sft_updates, lr=1e-3)
lora_seconds = time.perf_counter() - t0
print(f"LoRA SFT, {S.sft_updates} updates ({lora_seconds:.0f} s; full SFT took {sft_seconds:.0f} s):",
      ", ".join(f"{u}: {r:.2f}" for u, r in lora_curve))
full, low = reports["sft"]["test"]["untagged"]["vous_rate"], reports["sft_lora"]["test"]["untagged"]["vous_rate"]
assert reports["sft"]["updates"] == reports["sft_lora"]["updates"]
print(f"committed runs ({reports['sft']['updates']} updates): full SFT {full:.3f}, LoRA SFT {low:.3f} with "
      f"{reports['sft_lora']['trainable_parameters'] / reports['sft_lora']['base_parameters']:.2%} of the parameters")
full_test, low_test = reports["sft"]["test"], reports["sft_lora"]["test"]
print(f"their test BLEU: full SFT {full_test['bleu']:.2f}, LoRA SFT {low_test['bleu']:.2f}; on the pairs without "
      f"'you': {full_test['bleu_not_you']:.2f}, {low_test['bleu_not_you']:.2f}")
assert abs(full - low) <= 0.03
assert low_test["bleu"] > full_test["bleu"] and low_test["bleu_not_you"] > full_test["bleu_not_you"]

# %% [markdown]
# In the committed runs LoRA reaches the *vous* rate of full fine-tuning within a point (asserted: within 3)
# while training under 1 % of the parameters; in the live runs it lags at 10 updates and ends a point lower. The
# seconds above are one timing each, evaluations included: they do not rank the two methods' speed. What it
# stores per task is the adapter — for these shapes, 98 KiB in int8 — not a model.
#
# It also cost less BLEU (asserted): 42.00 on the test split and 43.50 on the pairs without *you*, where full
# SFT has 40.90 and 42.29 (the base: 43.33 and 43.87). That is one run of each, and LoRA's learning rate is ten
# times full SFT's; whether the gap comes from the frozen weights or from the recipe, this notebook does not test.

# %% [markdown]
# ## 4. Asking for it: a register tag (instruction tuning in miniature)
#
# SFT on *vous* pairs makes the model formal whatever it is asked. To get formal *or* informal **on request**,
# the request goes into the input: `formal :` or `informal :` before the English. The committed adapter (`tagged`: LoRA
# rank 8, 1,200 updates) was trained on tagged *vous* and *tu* pairs mixed with as many untagged training
# pairs, meant to keep untagged sentences as they were (the counts are printed below, from the adapter's
# report). The course's command line uses this adapter (`translate transformer --register formal`; see the
# README, not run here).
#
# We set two targets for the methods of §4 and §5. The first is a *vous* rate of at least 0.95 (for the tag: when
# asked formal, with at least 90 % *tu* when asked informal). The second is test BLEU within a point of the base's
# 43.33 (for the tag: when nothing is asked).

# %%
t0 = time.perf_counter()
tagged, tagged_report = pt.load_register_model(data)
n_tagged = tagged_report["data"]["vous_pairs"] + tagged_report["data"]["tu_pairs"]
print(f"the adapter's training pairs: {tagged_report['n_train']:,} — {n_tagged:,} tagged ("
      f"{tagged_report['data']['vous_pairs']:,} formal, {tagged_report['data']['tu_pairs']:,} informal) and "
      f"{tagged_report['n_train'] - n_tagged:,} untagged")
assert tagged_report["n_train"] == 2 * n_tagged
rows = [{"asked": "nothing (base model)", **base_row}]
tagged_rows = {}
for register in (None, *REGISTERS):
    row, translations = measure(tagged, register=register)
    tagged_rows[register] = (row, translations)
    rows.append({"asked": register or "nothing (tagged adapter)", **row})
viz.show_table(rows, title=f"the base model and the register adapter: vous rate on the {len(test_you)} held-out "
               f"'you' sentences; BLEU on the {len(data.test)} test pairs and on the {len(not_you)} without 'you', "
               "asked in that register")
print(f"({time.perf_counter() - t0:.0f} s)")
formal, informal = tagged_rows["formal"][0], tagged_rows["informal"][0]
tu_share = informal["tu"] / (informal["tu"] + informal["vous"])
print(f"formal: {formal['vous rate']:.1%} vous; informal: {tu_share:.1%} tu; untagged BLEU "
      f"{tagged_rows[None][0]['BLEU']:.2f} vs base {base_row['BLEU']:.2f}")
if S.profile == "class":   # the two targets, on the full test split (the same figures as the adapter's report)
    assert formal["vous rate"] >= 0.95 and tu_share >= 0.90
    assert base_row["BLEU"] - tagged_rows[None][0]["BLEU"] <= 1.0
if S.profile == "class":   # what the text says
    untagged = tagged_rows[None][0]
    assert abs(base_row["BLEU"] - untagged["BLEU"]) < 0.5
    sft_drop = base_no_you - sft_report["test"]["bleu_not_you"]                # full SFT, without 'you'
    for row in (formal, informal):   # asking costs BLEU on both columns; without 'you', more than full SFT lost
        assert row["BLEU"] < untagged["BLEU"] and row["BLEU, no 'you'"] < untagged["BLEU, no 'you'"]
        assert base_no_you - row["BLEU, no 'you'"] > sft_drop
    assert formal["BLEU"] < sft_report["test"]["bleu"]

# %% [markdown]
# Asked *formal*, the adapter says *vous* in 96.5 % of the decided translations; asked *informal*, *tu* in
# 92.6 %: both meet the first target (asserted). Asked nothing, it keeps the base model's habit (a *vous* rate of
# 0.407 against 0.394) and its BLEU (42.87 against 43.33, within half a point; asserted). No run without the
# untagged pairs was made to tell how much they matter.
#
# Asking for a register costs BLEU, on both columns (asserted). Asked formal, test BLEU is 40.58, below even full
# SFT's 40.90 (asserted); asked informal, it is 41.87. On the pairs without *you*, where the register matters much
# less, both requests score about 42.0 (42.055 and 42.015, against the base's 43.870). That is a loss of about 1.8
# points, more than full SFT lost there (it scores 42.29; asserted). On the whole split, both requests depart from
# some references' register: asked informal, the adapter is far more informal than the references (a *vous* rate of
# 0.074 against their 0.402, §1). Why asking costs BLEU even without *you*, this notebook does not test.
#
# The ten pairs below show what the rates mean, failures included: the count is of registers, and some
# translations that follow both requests are still wrong French (*retiens et vous présenter*).

# %%
# NBVAL_CHECK_OUTPUT
followed = 0
for i in range(10):
    formal_fr, informal_fr = tagged_rows["formal"][1][i], tagged_rows["informal"][1][i]
    followed += register_of(formal_fr) == "vous" and register_of(informal_fr) == "tu"
    print(f"{' '.join(test_you[i])}\n   formal:   {formal_fr}\n   informal: {informal_fr}")
print(f"{followed} of these 10 follow both requests")

# %% [markdown]
# ## 5. Preferences: a reward model, best-of-n, and DPO
#
# Often we cannot write the right answer, but we can say which of two answers is better. RLHF (Ouyang et al.
# 2022) learns a **reward model** $r(x, y)$ from such pairs with the Bradley–Terry model of preferences,
#
# $$p(y_w \succ y_l \mid x) = \sigma\big(r(x, y_w) - r(x, y_l)\big), \qquad
# \mathcal{L}_R = -\,\mathbb{E}\,\log \sigma\big(r(x, y_w) - r(x, y_l)\big),$$
#
# and then maximises the reward while staying close to the starting model $\pi_{\text{ref}}$:
#
# $$\max_\pi\ \mathbb{E}_{x,\, y \sim \pi}\big[r(x, y)\big] - \beta\, \mathrm{KL}\big(\pi(\cdot \mid x)\,\|\,
# \pi_{\text{ref}}(\cdot \mid x)\big).$$
#
# Our reward model is the base translation model with its output layer (d → vocabulary) replaced by one
# output (d → 1), read at the last token of the French; its body is frozen and only that head (257 numbers)
# is trained, on preference pairs of the training split. It is measured on 698 pairs built the same way from
# the whole held-out pool of notebook 05: every Tatoeba translation of every held-out English sentence. The test
# split's 1,800 pairs are only part of that pool. The last line below counts the pairs' English sentences: more
# than the 436 test sentences that say *you* (asserted), and none of them the English of a training pair
# (asserted).

# %%
t0 = time.perf_counter()
reward_model = pt.RewardModel(base)
rm_pairs = you.preferences[:S.rm_pairs]
held_out = pt.held_out_preferences()[:S.held_out]


def pair_features(pairs):
    chosen = pt.pairs_data([(e, c) for e, c, _ in pairs], tok)
    rejected = pt.pairs_data([(e, r) for e, _, r in pairs], tok)
    idx = list(range(len(pairs)))
    feats = [(reward_model.features(chosen.make_batch(idx[i:i + 256])),
              reward_model.features(rejected.make_batch(idx[i:i + 256]))) for i in range(0, len(idx), 256)]
    return torch.cat([c for c, _ in feats]), torch.cat([r for _, r in feats])


train_chosen, train_rejected = pair_features(rm_pairs)
test_chosen, test_rejected = pair_features(held_out)
opt = torch.optim.Adam(reward_model.head.parameters(), lr=1e-2)
rm_steps, rm_trained = 300, count_parameters(reward_model)               # only the head: w (d) and b
for _ in range(rm_steps):
    loss = bradley_terry_loss(reward_model.head(train_chosen).squeeze(-1),
                              reward_model.head(train_rejected).squeeze(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    margin = reward_model.head(test_chosen).squeeze(-1) - reward_model.head(test_rejected).squeeze(-1)
rm_accuracy = (margin > 0).float().mean().item()
rm_seconds = time.perf_counter() - t0
print(f"reward model: Bradley–Terry loss {loss.item():.3f} on {len(rm_pairs)} training pairs; the vous answer "
      f"gets the higher reward in {rm_accuracy:.1%} of {len(held_out)} held-out pairs ({rm_seconds:.0f} s)")
held_out_english = {tuple(english) for english, _, _ in held_out}
print(f"the held-out pairs' English: {len(held_out_english)} sentences, of which the English of a training pair: "
      f"{len(held_out_english & train_english)}")
assert not held_out_english & train_english
if S.profile == "class":   # what the text says: the pool is larger than the test split
    assert len(held_out_english) > len(test_you)

# %% [markdown]
# The reward model ranks the *vous* translation first in almost every held-out pair: the register is written in
# the decoder's last hidden state, and one linear read-out finds it.
#
# **Best-of-n** is the simplest way to use a reward model: sample $n$ translations from the base model and keep
# the one with the highest reward. The translation model is not trained (only the reward model's head was, above);
# the price is $n$ decodings per sentence.

# %%
t0 = time.perf_counter()
samples = pt.sample_translations(base, tok, test_you, S.best_of, generator=torch.Generator().manual_seed(0))
flat = [(e, s.split()) for e, row in zip(test_you, samples) for s in row]
sampled = pt.pairs_data([(e, f or ["."]) for e, f in flat], tok)
with torch.no_grad():
    rewards = torch.cat([reward_model(sampled.make_batch(list(range(i, min(i + 256, len(flat))))))
                         for i in range(0, len(flat), 256)]).view(len(test_you), S.best_of)
best = [row[int(k)] for row, k in zip(samples, rewards.argmax(dim=1))]
best_of_rate = vous_rate(best).rate
first_sample_rate = vous_rate([row[0] for row in samples]).rate
best_of_seconds = time.perf_counter() - t0
print(f"best-of-{S.best_of} by the reward model: vous rate {best_of_rate:.3f} (one sample: {first_sample_rate:.3f}, "
      f"greedy base: {base_row['vous rate']:.3f}) ({best_of_seconds:.0f} s)")


def best_possible(row):
    """The pick that favours vous most among one sentence's samples: a vous sample, else one without tu."""
    found = [register_of(s) for s in row]
    return row[found.index("vous")] if "vous" in found else next((s for s, r in zip(row, found) if r != "tu"), row[0])


reachable = vous_rate([best_possible(row) for row in samples]).rate
print(f"the highest vous rate any pick among the same {S.best_of} samples could reach: {reachable:.3f}")
trained_rates = [r["test"]["untagged"]["vous_rate"] for name, r in reports.items() if name != "tagged"]
trained_rates.append(reports["tagged"]["test"]["formal"]["vous_rate"])             # the tag, asked formal
if S.profile == "class":   # what the text says
    assert rm_accuracy > 0.9 and best_of_rate > max(first_sample_rate, base_row["vous rate"])
    assert best_of_rate <= reachable and best_of_rate < min(trained_rates)

# %% [markdown]
# Best-of-4 moves the *vous* rate from 0.394 (greedy) and 0.447 (one sample) to 0.808 without touching a weight
# of the translator. That is still below every committed run trained towards *vous* in §5–6 (0.854 to 1.000;
# asserted), although the reward model ranks 96.4 % of the held-out pairs right. It reaches only as far as the
# samples do: when none of the n samples says *vous*, the best of them does not either. The last line above is
# that limit, the highest rate any pick among these samples could reach; best-of-n cannot pass it (asserted).
# Any gap between the two rates is the reward model's choice: a less formal sample kept where a more formal one
# was there. Its cost is paid at every request (n decodings and n rewards), where fine-tuning pays once.

# %% [markdown]
# **DPO.** The KL-regularised objective has a closed-form optimum (Rafailov et al. 2023, Eq. 4):
#
# $$\pi^*(y \mid x) = \frac{1}{Z(x)}\, \pi_{\text{ref}}(y \mid x)\, \exp\!\big(r(x, y)/\beta\big).$$
#
# Solved for the reward, $r(x, y) = \beta \log \frac{\pi^*(y \mid x)}{\pi_{\text{ref}}(y \mid x)} + \beta \log Z(x)$.
# Put into the Bradley–Terry loss, $\beta \log Z(x)$ cancels in the difference of two answers to the same $x$,
# and what is left is a loss on the policy itself — no reward model, no sampling (Eq. 7):
#
# $$\mathcal{L}_{\text{DPO}} = -\,\mathbb{E}\,\log \sigma\Big(\beta \log \frac{\pi_\theta(y_w \mid x)}
# {\pi_{\text{ref}}(y_w \mid x)} - \beta \log \frac{\pi_\theta(y_l \mid x)}{\pi_{\text{ref}}(y_l \mid x)}\Big).$$
#
# First the closed form, on a toy "model" with five possible answers: gradient ascent on the objective finds
# the same distribution.

# %%
# NBVAL_CHECK_OUTPUT
pi_ref = torch.tensor([0.4, 0.3, 0.15, 0.1, 0.05])
reward = torch.tensor([0.0, 1.0, 0.5, 2.0, -1.0])
beta = 0.5
closed_form = pi_ref * torch.exp(reward / beta)
closed_form = closed_form / closed_form.sum()
logits = torch.zeros(5, requires_grad=True)
opt = torch.optim.Adam([logits], lr=0.05)
for _ in range(3000):
    pi = torch.softmax(logits, 0)
    objective = (pi * reward).sum() - beta * (pi * (pi / pi_ref).log()).sum()
    opt.zero_grad()
    (-objective).backward()
    opt.step()
print("π* closed form:   ", [round(p, 3) for p in closed_form.tolist()])
print("gradient ascent:  ", [round(p, 3) for p in torch.softmax(logits, 0).tolist()])
assert torch.allclose(torch.softmax(logits, 0), closed_form, atol=1e-3)

# %% [markdown]
# Our `dpo_loss` (`coursekit.training.preference`) takes the summed log-probabilities of the chosen and
# rejected answers under the policy and the reference. On a tiny GPT-2, `trl`'s `DPOTrainer` computes its loss
# from its own batch; the same log-probabilities give ours — the answer's tokens only, summed, not the prompt's.

# %%
words = ["<pad>", "<eos>", "<unk>"] + "translate : you are tired vous êtes fatigué tu es fatiguée come here venez " \
    "viens ici".split()
word_tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
word_tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
hf_tok = PreTrainedTokenizerFast(tokenizer_object=word_tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
tiny = GPT2Config(vocab_size=len(words), n_positions=32, n_embd=16, n_layer=2, n_head=2, bos_token_id=1,
                  eos_token_id=1, pad_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
torch.manual_seed(0)
policy_lm = GPT2LMHeadModel(tiny)
torch.manual_seed(1)
reference_lm = GPT2LMHeadModel(tiny)
pairs = Dataset.from_dict({"prompt": ["translate : you are tired", "translate : come here"],
                           "chosen": [" vous êtes fatigué", " venez ici"],
                           "rejected": [" tu es fatiguée", " viens ici"]})
disable_progress_bars()                                              # datasets' bars: nothing to wait for here
with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)                  # transformers' renamed arguments, inside trl
    trainer = DPOTrainer(model=policy_lm, ref_model=reference_lm, train_dataset=pairs, processing_class=hf_tok,
                         args=DPOConfig(output_dir=folder, per_device_train_batch_size=2, beta=0.1, report_to=[],
                                        use_cpu=True, disable_tqdm=True))
    trl_batch = next(iter(trainer.get_train_dataloader()))           # rows: the chosen answers, then the rejected
    trl_loss = trainer.compute_loss(policy_lm, trl_batch).item()
ids, keep, answer = trl_batch["input_ids"], trl_batch["attention_mask"], trl_batch["completion_mask"]
with torch.no_grad():
    logp = {name: sequence_logprob(lm(ids, attention_mask=keep).logits[:, :-1], ids[:, 1:], answer[:, 1:].bool())
            for name, lm in (("policy", policy_lm), ("reference", reference_lm))}
(pc, pr), (rc, rr) = logp["policy"].chunk(2), logp["reference"].chunk(2)
ours = dpo_loss(pc, pr, rc, rr, beta=0.1).loss.item()
print(f"trl's DPO loss {trl_loss:.6f}, ours from the same log-probabilities {ours:.6f}")
assert abs(ours - trl_loss) <= 1e-6

# %% [markdown]
# Now DPO on the translator: a LoRA policy starting at the base, the base itself as the frozen reference, pairs
# *vous* chosen / *tu* rejected for the same English, β = 0.1, and a learning rate of 1e-3 so that 30 updates
# show the effect in class — ten times the committed runs' 1e-4 (read from their reports below). A longer run at
# 1e-3 collapses: the last line below reads the report of a 300-update run, made when the committed recipe was
# chosen (not run here). Its test BLEU is below every committed run's, and more of its outputs repeat a word
# (both asserted). The policy runs without dropout (`prepare_model` sets it to 0: its log-probabilities are
# compared with the reference's; the third line below prints the dropout rates of the base and of the policy).
# We watch the *vous* rate, and the **implicit reward** $\beta \log \pi_\theta / \pi_{\text{ref}}$ on the held-out
# pairs: DPO's policy is also a reward model. This live run's BLEU is not measured, so it does not show whether
# 30 updates at 1e-3 already cost BLEU.

# %%
t0 = time.perf_counter()
dpo_model = pt.prepare_model(pt.RECIPES["dpo"], base)
chosen = pt.pairs_data([(e, c) for e, c, _ in you.preferences], tok)
rejected = pt.pairs_data([(e, r) for e, _, r in you.preferences], tok)
opt = torch.optim.AdamW([p for p in dpo_model.parameters() if p.requires_grad], lr=1e-3, weight_decay=0.0)
g = torch.Generator().manual_seed(0)
dpo_curve = [(0, vous_rate_of(dpo_model))]
for update in range(1, S.dpo_updates + 1):
    dpo_model.train()
    idx = torch.randint(len(you.preferences), (32,), generator=g).tolist()
    result = pt.dpo_batch(dpo_model, base, chosen.make_batch(idx), rejected.make_batch(idx), beta=0.1)
    opt.zero_grad()
    result.loss.backward()
    opt.step()
    if update % S.eval_every == 0 or update == S.dpo_updates:
        dpo_model.eval()
        dpo_curve.append((update, vous_rate_of(dpo_model)))
live_accuracy = pt.implicit_reward_accuracy(dpo_model, base, held_out, tok, beta=0.1)
print(f"DPO, {S.dpo_updates} updates ({time.perf_counter() - t0:.0f} s): vous rate",
      ", ".join(f"{u}: {r:.2f}" for u, r in dpo_curve))
print(f"implicit reward: the vous answer ranks first in {live_accuracy['accuracy']:.1%} of {live_accuracy['n']} "
      f"held-out pairs (mean margin {live_accuracy['margin']:+.2f})")
committed_lr = sorted({r["recipe"]["lr"] for r in reports.values() if r["recipe"]["method"] == "dpo"})
assert committed_lr == [1e-4]


def dropout_rates(model):
    return sorted({m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)}
                  | {m.dropout for m in model.modules() if isinstance(getattr(m, "dropout", None), float)})


print(f"learning rate here {opt.param_groups[0]['lr']:g}, in the committed DPO runs {committed_lr[0]:g}; "
      f"dropout rates in the base {dropout_rates(base)}, in the policy {dropout_rates(dpo_model)}")
assert dropout_rates(dpo_model) == [0.0]
if S.profile == "class":   # what the text says
    assert dpo_curve[-1][1] > dpo_curve[0][1] + 0.3 and live_accuracy["accuracy"] > 0.9
trial = model_dir("translation").parents[1] / "docs" / "trials" / "posttrain_dpo_lr1e-3_collapsed.json"
collapsed = json.loads(trial.read_text())           # made when the committed recipe was chosen; not run here
print(f"a {collapsed['updates']}-update DPO run at lr {collapsed['recipe']['lr']:g} (its report): test BLEU "
      f"{collapsed['test']['bleu']:.2f}, repeated words {collapsed['test']['repetition_all']:.3f}")
assert collapsed["recipe"]["lr"] == 1e-3 and collapsed["updates"] == 300
assert collapsed["test"]["bleu"] < min(r["test"]["bleu"] for r in reports.values())
assert collapsed["test"]["repetition_all"] > max(r["test"]["repetition_all"] for r in reports.values())

# %% [markdown]
# After 30 updates the implicit rewards already rank the held-out pairs about as well as the reward model of
# §5 (the same share, 96.4 %, in the stored run).
#
# **β, the strength of the KL term.** Small β lets the policy move far from the reference; large β holds it
# close. The committed runs (300 updates each, LoRA rank 8) for three values of β:

# %%
sweep = [reports[name] for name in ("dpo_beta_0.01", "dpo", "dpo_beta_1")]
shorter = [reports[name] for name in ("dpo_beta_1_100", "dpo_beta_1_150")]     # β = 1, stopped earlier
base_no_you = base_row["BLEU, no 'you'"]
viz.show_table([{"β": r["recipe"]["beta"], "updates": r["updates"], "vous rate": r["test"]["untagged"]["vous_rate"],
                 "KL to base (nats/token)": r["test"]["kl_per_token"], "test BLEU": f"{r['test']['bleu']:.2f}",
                 "BLEU, no 'you'": f"{r['test']['bleu_not_you']:.2f}",
                 "repeated words (test)": r["test"]["repetition_all"],
                 "held-out pairs ranked right": r["test"]["held_out_pairs"]["accuracy"]} for r in sweep + shorter],
               title="DPO from the base model, committed runs (vous rate on the held-out 'you' sentences); base "
                     f"model: test BLEU {base_row['BLEU']:.2f}, no 'you' {base_no_you:.2f}")
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot([r["test"]["kl_per_token"] for r in sweep], [r["test"]["untagged"]["vous_rate"] for r in sweep], "o-",
        label="300 updates, β = 0.01, 0.1, 1 (right to left)")
ax.plot([r["test"]["kl_per_token"] for r in shorter + sweep[-1:]],
        [r["test"]["untagged"]["vous_rate"] for r in shorter + sweep[-1:]], "s--",
        label="β = 1 after 100, 150, 300 updates")
apart = {(0.01, 300): (-6, -14), (0.1, 300): (-6, -26), (1.0, 100): (6, 2)}    # labels kept apart, inside
for r in sweep + shorter:
    dx, dy = apart.get((r["recipe"]["beta"], r["updates"]), (6, -12))
    ax.annotate(f"β {r['recipe']['beta']:g}, {r['updates']}", (r["test"]["kl_per_token"],
                r["test"]["untagged"]["vous_rate"]), textcoords="offset points", xytext=(dx, dy), fontsize=7,
                ha="right" if dx < 0 else "left")
ax.legend(fontsize=7, loc="lower right")
ax.set_xscale("log")
ax.set_xlabel("KL(policy ‖ base), nats per token (log scale)")
ax.set_ylabel("vous rate")
ax.grid(alpha=0.3)
plt.show()
print("β = 0.01, first translations:", reports["dpo_beta_0.01"]["test"]["examples"]["untagged"][:4])
for r in sweep:
    print(f"β = {r['recipe']['beta']:g}, validation (updates: vous rate / BLEU):",
          ", ".join(f"{step}: {p['vous_rate']:.2f} / {p['bleu_valid']:.1f}" for step, p in r["valid_curve"]))
kl = [r["test"]["kl_per_token"] for r in sweep]
bleu = [r["test"]["bleu"] for r in sweep]
assert kl[0] > kl[1] > kl[2] and bleu[0] < bleu[1] < bleu[2] < base_report["test"]["bleu"] - 1
repeats = [r["test"]["repetition_all"] for r in sweep]
assert repeats[0] > repeats[1] > repeats[2]
for step in (0, 1):                          # updates 50 and 100: the three β nearly the same
    points = [r["valid_curve"][step][1] for r in sweep]
    assert max(p["bleu_valid"] for p in points) - min(p["bleu_valid"] for p in points) < 0.2
    assert max(p["vous_rate"] for p in points) - min(p["vous_rate"] for p in points) < 0.01
for r in sweep:                              # from update 100 on, validation BLEU falls at every point
    later = [p["bleu_valid"] for step, p in r["valid_curve"] if step >= 100]
    assert all(a > b for a, b in zip(later, later[1:]))
assert min(r["test"]["untagged"]["vous_rate"] for r in sweep) >= 0.99
if S.profile == "class":   # the base row is this run's: the stored figures are the class run's
    beta_1 = [r["test"] for r in shorter + sweep[-1:]]            # 100, 150, 300 updates
    assert beta_1[0]["untagged"]["vous_rate"] < beta_1[1]["untagged"]["vous_rate"] < 0.95 <= beta_1[2][
        "untagged"]["vous_rate"]
    assert all(base_row["BLEU"] - t["bleu"] <= 1.1 for t in beta_1[:2]) and base_row["BLEU"] - beta_1[2]["bleu"] > 1
    assert all(base_row["BLEU, no 'you'"] - t["bleu_not_you"] < 1 for t in beta_1)
    assert all(base_row["BLEU, no 'you'"] - t["bleu_not_you"] < base_row["BLEU"] - t["bleu"] for t in beta_1)
    assert min(r["test"]["held_out_pairs"]["accuracy"] for r in sweep + shorter) > live_accuracy["accuracy"]
ranked = [r["test"]["held_out_pairs"]["accuracy"] for r in sweep]
assert ranked[0] < ranked[1] < ranked[2]
lora_sft, dpo_1 = reports["sft_lora"]["test"], reports["dpo_beta_1"]["test"]
assert abs(lora_sft["untagged"]["vous_rate"] - dpo_1["untagged"]["vous_rate"]) < 0.001
assert lora_sft["bleu"] > dpo_1["bleu"] and lora_sft["bleu_not_you"] > dpo_1["bleu_not_you"]
assert reports["sft_lora"]["recipe"]["lr"] == 1e-3 and reports["sft_lora"]["updates"] == 400
sft_test = reports["sft"]["test"]            # across methods, a smaller KL did not mean less BLEU lost
assert sft_test["kl_per_token"] < dpo_1["kl_per_token"] and sft_test["bleu"] < dpo_1["bleu"]

# %% [markdown]
# The smaller β, the farther the policy moves from the base (KL), the lower its BLEU and the more it repeats
# itself: at β = 0.01 one test output in six has a word twice in a row, some of them *vous vous vous …*
# (the order of KL, BLEU and repetitions asserted; the repetitions are the share of test outputs with a word
# twice in a row; the examples above). All three reach a *vous* rate of at least 0.99 (asserted). None of the
# three keeps test BLEU within a point of the base (the best, β = 1, loses 1.95).
#
# This KL ranks the three β of one method, not different methods. Full SFT's KL to the base (0.092 nats per
# token, §2) is below DPO β = 1's 0.100, yet full SFT lost more test BLEU (40.90 against 41.38; asserted).
#
# The validation curves are BLEU on the first 300 validation pairs, other sentences than the test split: their
# level (about 47) is not comparable with the test BLEU (43.33). They start at update 50, and the base model's
# validation BLEU is not printed, so they do not show what the first fifty updates did to it. Two things to read
# in them (both asserted). First, the points at 50 and 100 updates are nearly the same for all three β. A likely
# reason, not tested here: Adam divides out the scale of the gradient, which β sets, so β acts only once the
# loss saturates. Second, from update 100 on, BLEU falls at every point, even at β = 1.
#
# **Stopping earlier** (the last two rows: β = 1, the same recipe with its schedule ending at 100 or 150
# updates) does not meet both targets of §4 either (a *vous* rate of at least 0.95, test BLEU within a point of
# the base). The *vous* rate is 0.854 and 0.939, below 0.95, and test BLEU is still 1.06 and 1.09 below the
# base's 43.33 (the 300-update run: 1.95).
#
# On the pairs without *you*, all three β = 1 runs are within a point of the base's 43.87 (43.52, 43.70, 43.01):
# each loses less there than on the whole split (asserted). The whole split adds the *you*
# sentences, whose references say *tu* about as often as the base did (§1). How much of the larger loss is the
# references' *tu* and how much is French is not measured here: this notebook does not print BLEU on the *you*
# sentences alone. A target of "test BLEU within a point" on the whole split asks a formal model to match
# informal references as well. On the pairs without *you*, DPO at β = 1 meets it with 0.99 *vous* — and so does
# the LoRA SFT of §3, with the same *vous* rate (0.991) and more BLEU on both columns (42.00 and 43.50, against
# DPO's 41.38 and 43.01; asserted). In these runs (one each, and different recipes: 400 updates at 1e-3 for
# LoRA SFT, 300 at 1e-4 for DPO) the preference pairs did no better than plain SFT on *vous* pairs.
#
# The last column is the implicit reward's ranking of the 698 held-out pairs. Every committed run ranks between
# 0.970 and 0.981 of them right, more than the live run's 96.4 % (asserted), and at 300 updates the share rises a
# little with β (0.970, 0.974, 0.981; asserted). Even the β = 0.01 run, whose translations repeat *vous*, ranks
# the pairs well: ranking two given answers is not the same as translating.

# %% [markdown]
# ## 6. Side by side
#
# The seconds are one wall time per run, each timed once: rough figures, not a benchmark. For the same 400
# updates, full SFT took three times LoRA SFT's seconds (625 s against 205 s; asserted: more than 2.5 times). One
# timing each does not tell how much of that is the cost of training every weight.
#
# The best-of-n row counts other things. Its updates are the reward head's 300 steps, each on all 2,048 training
# pairs at once (the other rows: batches of 32 pairs). Its seconds add the reward model's training to the
# sampling and scoring of §5.

# %%
def summary_row(method, trainable, updates, seconds, vous, bleu, bleu_not_you=None):
    def number(x):
        return "—" if x is None else f"{x:.2f}"
    return {"method": method, "trainable parameters": f"{trainable:,}", "updates": updates,
            "seconds": "—" if seconds is None else f"{seconds:.0f}", "vous rate": vous,
            "test BLEU": number(bleu), "BLEU, no 'you'": number(bleu_not_you)}


table = [summary_row("base model (notebook 08)", 0, 0, None, base_row["vous rate"], base_row["BLEU"],
                     base_row["BLEU, no 'you'"])]
for name, label in (("sft", "SFT, every weight"), ("sft_lora", "SFT, LoRA r = 8"), ("dpo", "DPO β = 0.1, LoRA"),
                    ("dpo_beta_1", "DPO β = 1, LoRA"), ("dpo_beta_1_150", "DPO β = 1, LoRA, stopped at 150")):
    r = reports[name]
    table.append(summary_row(label, r["trainable_parameters"], r["updates"], r["train_seconds"],
                             r["test"]["untagged"]["vous_rate"], r["test"]["bleu"], r["test"]["bleu_not_you"]))
for register in REGISTERS:
    t = tagged_report["test"][register]
    table.append(summary_row(f"register tag, asked {register}", tagged_report["trainable_parameters"],
                             tagged_report["updates"], tagged_report["train_seconds"], t["vous_rate"], t["bleu"]))
table.append(summary_row(f"best-of-{S.best_of}, reward model (this run)", rm_trained, rm_steps,
                         best_of_seconds + rm_seconds, best_of_rate, None))
assert reports["sft"]["train_seconds"] > 2.5 * reports["sft_lora"]["train_seconds"]     # what the text says
cores = {(r["hardware"]["device"], r["hardware"]["cpu_count"]) for r in reports.values()}
assert len(cores) == 1
device, n_cores = cores.pop()
viz.show_table(table, title="committed runs on the test split (vous rate: held-out 'you' sentences; BLEU: all "
               "test pairs, and those whose English has no 'you' — for the tag asked a register, see §4; "
               f"seconds: each run's wall time on a {device.upper()} with {n_cores} cores); best-of-n: this run")

# %% [markdown]
# ## Summary
#
# - **SFT** is the pre-training loss on chosen pairs: 400 updates on *vous* pairs made every decided translation
#   formal and cost 2.4 BLEU on the test split, and still 1.6 on its pairs without *you* (where the register
#   matters much less): a sign that full SFT changed more than the register.
# - **LoRA** trains $\frac{\alpha}{r}BA$ beside frozen weights, $B = 0$ at the start: the same *vous* rate as full
#   SFT within a point with 0.97 % of the parameters, an adapter of 98 KiB in int8, the base model's outputs at the
#   start (difference 0), merged weights and `peft` giving the adapted model's outputs. In the committed runs it
#   also lost less BLEU than full SFT: 1.3 on the test split and 0.4 without *you*.
# - **An instruction in the input** turns a behaviour into a choice: `formal :` / `informal :` learned from tagged
#   pairs mixed with untagged ones gives 96.5 % *vous* and 92.6 % *tu* on request, and the base model's habit
#   and BLEU when nothing is asked (BLEU within half a point; a *vous* rate of 0.407 against 0.394). Asking costs
#   BLEU: 40.58 asked formal, 41.87 asked informal, and about 1.8 points on the pairs without *you*, more than
#   full SFT lost there.
# - **Preferences**: a Bradley–Terry reward model on the frozen body ranks 96.4 % of the held-out pairs right;
#   best-of-4 with it raises the *vous* rate from 0.394 to 0.808 without training the translator, still below
#   every run trained towards *vous*. **DPO** optimises the KL-regularised objective
#   directly — its loss equals `trl`'s on the same log-probabilities (checked on a tiny GPT-2) — and reaches a
#   *vous* rate of 0.99–1.00. At β = 1 it costs 1.95 test BLEU, and less than a point on the pairs without *you*
#   (43.01 against the base's 43.87); how much of the larger loss is the references' *tu* is not measured. LoRA SFT
#   reached the same 0.991 with more BLEU on both. Small β costs far more: the policy drifts (KL) into
#   repetitions. The KL ranks the β of DPO, not methods: full SFT's is lower than β = 1's, with less BLEU.
#   Stopping earlier keeps more BLEU and gives up *vous* (0.94 at 150 updates).
# - Every committed run was measured on the behaviour **and** on BLEU: by the *vous* rate alone (1.000), the
#   DPO run that repeats *vous* dozens of times would rank with the best. Best-of-n was measured on the behaviour
#   only (its BLEU is not measured; it costs n decodings per request). The live runs show the behaviour only.
#
# ## Exercises

# %%
# EXERCISE 1: LoRA's initialisation
def lora_init(in_features, out_features, r, generator):
    """→ (A (r, in_features), B (out_features, r)): A drawn at random with `generator`, scaled like a linear
    layer's weight; B zero, so that the adapted layer starts as the base layer."""
    ### BEGIN SOLUTION
    A = (torch.rand(r, in_features, generator=generator) * 2 - 1) / math.sqrt(in_features)
    B = torch.zeros(out_features, r)
    return A, B
    ### END SOLUTION


check_lora_init(lora_init)

# %%
# EXERCISE 2: LoRA's forward pass
def lora_forward(x, weight, bias, A, B, alpha):
    """x (..., k), weight (d, k), bias (d,) or None, A (r, k), B (d, r) → x Wᵀ + b + (α / r) · x Aᵀ Bᵀ."""
    ### BEGIN SOLUTION
    h = x @ weight.T + (alpha / A.shape[0]) * (x @ A.T @ B.T)
    return h if bias is None else h + bias
    ### END SOLUTION


check_lora_forward(lora_forward)

# %%
# EXERCISE 3: the log-probability of an answer (a decoder-only model: prompt and answer in one sequence)
def answer_logprob(logits, targets, keep, prompt_lengths):
    """logits (B, T, V) predict targets (B, T) (already shifted); keep (B, T) True at real tokens; the first
    prompt_lengths[b] positions of row b are its prompt. → (B,): Σ over the ANSWER's real tokens of log p(target)."""
    ### BEGIN SOLUTION
    positions = torch.arange(targets.shape[1])[None, :]
    answer = keep & (positions >= prompt_lengths[:, None])
    token_logp = F.log_softmax(logits, dim=-1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (token_logp * answer).sum(dim=1)
    ### END SOLUTION


check_answer_logprob(answer_logprob)

# %%
# EXERCISE 4: the DPO loss
def my_dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected, beta):
    """Each (B,): summed answer log-probabilities. → the scalar loss of Rafailov et al. (2023), Eq. 7."""
    ### BEGIN SOLUTION
    chosen = policy_chosen - reference_chosen
    rejected = policy_rejected - reference_rejected
    return -F.logsigmoid(beta * (chosen - rejected)).mean()
    ### END SOLUTION


check_dpo_loss(my_dpo_loss)

# %%
# EXERCISE 5: the Bradley–Terry loss of a reward model
def my_bradley_terry_loss(reward_chosen, reward_rejected):
    """(B,), (B,) → the scalar mean of −log σ(r_w − r_l); finite for margins of hundreds."""
    ### BEGIN SOLUTION
    return -F.logsigmoid(reward_chosen - reward_rejected).mean()
    ### END SOLUTION


check_bradley_terry_loss(my_bradley_terry_loss)

# %% [markdown]
# **Exercise 6 (written).** (a) Why does DPO need the reference model at all — what goes wrong if the loss uses
# $\log \pi_\theta(y_w) - \log \pi_\theta(y_l)$ alone? (b) Our register tag needed no new token: `formal :` is
# made of English words. What would change if we had added a new token `<formal>` to the vocabulary instead?
#
# === BEGIN MARK SCHEME ===
# (a) The reference terms come from the KL penalty: without them the loss is minimised by making
# log π(y_w) − log π(y_l) as large as possible, with nothing keeping the policy near the model it started from;
# it can push the rejected answers' probability towards 0 and drift into degenerate text (the β → 0 limit of
# the sweep). With the reference, the implicit reward β log π/π_ref measures the change from the start, and the
# optimum is π_ref · exp(r/β) / Z, close to π_ref for large β. Full marks: the KL term / reference-relative
# reward, and the consequence (unbounded push, drift).
# (b) A new token needs a new row in the embedding table (and, with tied embeddings, in the output layer): it
# starts untrained, so the embedding must be trained too — not only LoRA's adapters on q and v — and the
# adapter file must carry that row; tokenizers and saved models change size. Made of existing words, the tag is
# read by the frozen embeddings and only the attention adapters learn to use it.
# === END MARK SCHEME ===
