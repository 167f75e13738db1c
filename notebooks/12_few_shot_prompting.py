# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 12 — Few-shot prompting and in-context learning, measured
#
# GPT-3 (Brown et al. 2020) showed that a large enough language model can do a new task from a
# **prompt** alone: a task description, a few solved examples and a query, with *no gradient
# update*. This notebook builds such prompts, reads a model's answer in the two ways the paper
# does, and then — since no large pretrained model can be downloaded here — demonstrates and
# measures in-context learning with a small GPT that the course trains itself, on tasks it has
# provably never seen.
#
# **Learning goals**
# - Write zero-, one- and few-shot prompts (task description + k demonstrations + query) in
#   several formats, and contrast them with fine-tuning (the *sea otter => loutre de mer* figure).
# - Read a model's answer by the likelihood of each label continuation, or by greedy generation.
# - Measure in-context learning: accuracy vs number of shots on held-out tasks, zero-shot at
#   chance, compared with fine-tuning on the same k examples.
# - Measure its sensitivity to the order of the examples, to wrong labels and to the format.
# - See the mechanism: induction heads, visualised and scored per layer and head, and knocked out.
# - Know what changes at scale (GPT-3 175B, TriviaQA) and why a small Shakespeare model shows none of it.

# %%
import dataclasses
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from coursekit import prompting as P
from coursekit import runtime, viz
from coursekit.data import model_dir
from coursekit.exercises import check_build_prompt, check_induction_score, check_label_likelihood
from coursekit.gpt import GPT, CharTokenizer, GPTConfig, TrainConfig
from coursekit.gpt import train as train_char_gpt
from coursekit.train import load_checkpoint, read_checkpoint_metadata

S = runtime.sizes(
    quick=dict(n_tasks=48, ft_tasks=6, ft_shots=[1, 4, 8], ft_steps=30, n_orders=3, n_repeats=32,
               char_iters=60, char_tasks=24),
    class_=dict(n_tasks=512, ft_tasks=64, ft_shots=[0, 1, 2, 4, 8, 16], ft_steps=30, n_orders=8, n_repeats=256,
                char_iters=300, char_tasks=128),
    full=dict(n_tasks=1024, ft_tasks=64, ft_shots=[0, 1, 2, 4, 8, 16], ft_steps=50, n_orders=16, n_repeats=512,
              char_iters=2000, char_tasks=256),
)
device = torch.device("cpu")      # the models here are tiny: CPU is as fast as a GPU and keeps results identical
plt.rcParams["figure.dpi"] = 80
SHOTS = [0, 1, 2, 4, 8, 16]
print(S, "on", device, "(runtime.device() would give", runtime.device(), ")")

# %% [markdown]
# ## 1. Zero-, one- and few-shot prompts versus fine-tuning
#
# The GPT-3 paper's Figure 2.1 compares four ways to get English→French from a language model.
# **Fine-tuning** updates the weights with a gradient step per example. The three others only
# change the *input*: a **task description**, then **k demonstrations** `x => y` (k = 0, 1 or a
# few), then the **query** `x =>`, whose continuation is the answer. We write the prompt by hand
# first, then check that `coursekit.prompting.build_prompt` writes the same string.

# %%
# NBVAL_CHECK_OUTPUT
description = "Translate English to French:"
examples = [("sea otter", "loutre de mer"), ("peppermint", "menthe poivrée"), ("plush girafe", "girafe peluche")]
query = "cheese"

by_hand = description + "\n" + "".join(f"{x} => {y}\n" for x, y in examples) + f"{query} =>"
assert by_hand == P.build_prompt(examples, query, task_description=description)

for name, k in [("zero-shot", 0), ("one-shot", 1), ("few-shot", 3)]:
    print(f"--- {name} (k = {k})\n{P.build_prompt(examples[:k], query, task_description=description)}\n")
print("--- the same one-shot prompt in the Input/Output format")
print(P.build_prompt(examples[:1], query, task_description=description, fmt="io"))

# %% [markdown]
# ## 2. Reading the answer: label likelihood and greedy generation
#
# A language model gives $P(\text{next token} \mid \text{prompt})$. For a classification task with a
# label set (*positive*/*negative*), score each label continuation $c = c_1 \dots c_n$ by
#
# $$\log P(c \mid \text{prompt}) = \sum_{i=1}^{n} \log P(c_i \mid \text{prompt}, c_{<i}),$$
#
# optionally divided by $n$ (GPT-3 normalises per token), and answer the best label. For open
# answers (*fromage*), generate greedily until the end of the line. We check the formula on a
# stub "bigram" model whose logits we choose, so the answer is known by hand: its logits at a
# position depend only on the token there, `logits = W[token]`.

# %%
# NBVAL_CHECK_OUTPUT
class Bigram:
    """A stub language model: the logits after token t are W[t]."""

    def __init__(self, W):
        self.W = W

    def __call__(self, idx):
        return self.W[idx], None             # (B, T, V), like GPT.forward


V = 6
W = torch.zeros(V, V)
W[2, 4] = 2.0                                # after token 2 the model prefers 4
W[4, 5] = 3.0                                # after 4 it prefers 5
stub = Bigram(W)
prompt, labels = [0, 1, 2], [[4, 5], [3, 5], [4]]
logp = F.log_softmax(W.double(), dim=-1)
by_hand = torch.stack([logp[2, 4] + logp[4, 5], logp[2, 3] + logp[3, 5], logp[2, 4]])
scores = P.label_logprobs(stub, prompt, labels)
assert torch.allclose(scores, by_hand)
print("log P(label | prompt):", [round(v, 4) for v in scores.tolist()])
print("per-token mean       :", [round(v, 4) for v in P.label_logprobs(stub, prompt, labels, reduce="mean").tolist()])
print("greedy continuation of [0, 1, 2]:", P.greedy_continuation(stub, prompt, 3))

# %% [markdown]
# Note how the sum favours the short label `[4]` (fewer factors below 1), which is why the per-token
# mean is used when labels differ in length. The greedy continuation `2 → 4 → 5 → 0` follows the
# largest logit at each step (after 5 all logits are equal and argmax picks the first).
#
# ## 3. A model that has to learn in context
#
# Large models learn in context because their training text contains many small "tasks". We make
# that explicit with a **family of synthetic tasks**: each sequence is a *fresh* random mapping
# from K input tokens to L = 4 label tokens, written as demonstrations `x y x y …` (format `bare`),
# `x => y ;` (`arrow`) or `In: x Out: y ;` (`io`). The mapping changes with every sequence, so the
# only way to predict a label is to find the same input earlier in the sequence and copy what
# followed it.
#
# **Held out by construction.** The input pool (64 tokens) and the label pool (16 tokens) are split
# into halves A and B. Training tasks map A→A or B→B; evaluation tasks map A→B or B→A. No
# (input, label) pair of an evaluation task ever occurred in training, so memorisation cannot help.
# Chance is 1/L = 25%.

# %%
# NBVAL_CHECK_OUTPUT
icl_model, icl_cfg, icl_report = P.load_icl_checkpoint(model_dir("icl"))
fam = icl_cfg.task_family()
fmts = fam.formats()
K, L = fam.inputs_per_task, fam.labels_per_task
print(f"vocabulary {fam.vocab_size} tokens; K = {fam.inputs_per_task} inputs, L = {fam.labels_per_task} labels "
      f"per task; training formats {list(icl_cfg.formats)}")
task = P.sample_tasks(fam, 1, "heldout", torch.Generator().manual_seed(0))[0]
print("a held-out task:", {fam.token_name(x): fam.token_name(task.label_of(j))
                           for j, x in enumerate(task.inputs.tolist())})
demo = P.icl_batch(fam, [task], 4, "arrow", torch.Generator().manual_seed(1), queries="one")
print("a 4-shot prompt:", " ".join(fam.token_name(t) for t in demo["prompts"][0].tolist()),
      "   answer:", fam.token_name(task.labels[demo["answer"][0]]))
x, y = P.training_batch(fam, 1, torch.Generator().manual_seed(2), "bare")
print("a training sequence (bare format), first pairs:", " ".join(fam.token_name(t) for t in x[0, :12].tolist()))
print("ideal accuracy vs shots:", {k: P.ideal_accuracy(k, K, L) for k in SHOTS})

# %% [markdown]
# The **ideal** line is what a perfect copier can reach: the k demonstrations show min(k, K)
# different inputs (of K), so a query was shown with probability min(k, K)/K; otherwise it guesses
# one of the L labels.
#
# ### The model and how it was trained
#
# A 2-layer GPT from notebook 10 (`coursekit.gpt.GPT`, sizes printed below) trained on such
# sequences, with the loss only on the label positions. Training (20,000 steps) takes longer than
# this notebook's budget on a shared CPU, so the checkpoint in `data/icl/` was made by the recipe
# `python -m coursekit.prompting train --out data/icl` (config and log in `data/icl/report.json`);
# here we plot its recorded curves. The held-out accuracy sits at chance for a long plateau —
# about half of the run — and then rises steeply: the "phase change" in which induction heads form
# (Olsson et al. 2022). Shorter runs and other sizes we tried stayed on the plateau.

# %%
hist = icl_report["history"]
evals = hist["evals"]
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
viz.plot_curves({"training loss (label positions)": (hist["steps"], hist["train_loss"])}, ax=axes[0],
                ylabel="cross-entropy")
viz.plot_curves({"held-out tasks, 8 shots": ([s for s, _ in evals], [d["heldout_acc_8shot"] for _, d in evals])},
                ax=axes[1], ylabel="accuracy")
axes[1].axhline(1 / fam.labels_per_task, ls=":", c="gray", label="chance")
axes[1].legend()
plt.tight_layout()
plt.show()
print(f"recipe: {icl_cfg.steps} steps × {icl_cfg.batch_size} sequences, {icl_report['seconds'] / 60:.1f} min "
      f"with {icl_report['threads']} thread(s) on a shared CPU; {icl_model.num_params():,} parameters")

# %% [markdown]
# ## 4. Accuracy versus number of shots, on held-out tasks
#
# For each of `S.n_tasks` fresh held-out tasks and each k, every one of its K inputs is asked once,
# each time with k freshly drawn demonstrations; a task's accuracy is the fraction answered right
# (label read by likelihood over the task's L labels). Error bars: the standard deviation over tasks
# (the spread) and the standard error of the mean.

# %%
eval_tasks = P.sample_tasks(fam, S.n_tasks, "heldout", torch.Generator().manual_seed(2024))
fmt_main = icl_cfg.eval_format
t0 = time.perf_counter()
icl_acc = P.evaluate_shots(icl_model, fam, eval_tasks, SHOTS, fmt_main, seed=7)
icl_seconds = time.perf_counter() - t0
# new random mappings too, but with the pool pairing of training (inputs A → labels A, B → B)
familiar_tasks = P.sample_tasks(fam, S.n_tasks, "train", torch.Generator().manual_seed(2025))
familiar_acc = P.evaluate_shots(icl_model, fam, familiar_tasks, SHOTS, fmt_main, seed=7)
rows = [{"shots k": k, "accuracy": a.mean().item(), "spread (sd over tasks)": a.std().item(),
         "s.e.": a.std().item() / len(a) ** 0.5, "new mappings, training pools": familiar_acc[k].mean().item(),
         "ideal": P.ideal_accuracy(k, K, L)} for k, a in icl_acc.items()]
viz.show_table(rows, title=f"in-context learning on {S.n_tasks} held-out tasks ({fmt_main} format)")
print(f"{len(SHOTS)} × {S.n_tasks} × 8 prompts scored in {icl_seconds:.1f} s (forward passes only)")

# %%
fig, ax = plt.subplots(figsize=(6, 3.6))
ks = torch.tensor(SHOTS, dtype=torch.float)
mean = torch.stack([icl_acc[k].mean() for k in SHOTS])
sd = torch.stack([icl_acc[k].std() for k in SHOTS])
ax.errorbar(range(len(SHOTS)), mean, yerr=sd, marker="o", capsize=4, label="in-context (mean ± sd over tasks)")
ax.plot(range(len(SHOTS)), [familiar_acc[k].mean() for k in SHOTS], "s-", c="tab:green",
        label="new mappings, training pool pairing")
ax.plot(range(len(SHOTS)), [P.ideal_accuracy(k, K, L) for k in SHOTS], "k--", lw=1, label="ideal learner")
ax.axhline(0.25, ls=":", c="gray", label="chance 1/L")
ax.set_xticks(range(len(SHOTS)), SHOTS)
ax.set_xlabel("number of demonstrations k")
ax.set_ylabel("accuracy on held-out tasks")
ax.legend(loc="lower right")
plt.show()

# %%
assert abs(icl_acc[0].mean().item() - 0.25) < 0.08, "zero-shot must be at chance: the mapping is unknown"
assert icl_acc[8].mean() > 0.45, "with 8 shots every query was demonstrated: well above chance"
assert icl_acc[8].mean() > icl_acc[1].mean() + 0.1, "accuracy grows with the number of shots"
assert familiar_acc[8].mean() > 0.9 and abs(familiar_acc[0].mean() - 0.25) < 0.08

# %% [markdown]
# Two curves, two kinds of "new task". On **fresh random mappings drawn like the training ones**
# (inputs and labels from the same pool half — each mapping is new, but its kind of pairing is
# familiar) the model is close to the ideal copier: chance at 0 shots, above 90% once every input
# has been demonstrated. On the strictly **held-out pairings** (label tokens never seen after these
# inputs) it still learns in context, but reaches only about 55–60%: part of what it learned is
# tied to the token statistics of its training distribution. (A longer run of the same recipe,
# 40,000 steps, reached 78% on familiar pairings and stayed at chance on the held-out ones.)
#
# ## 5. In-context learning versus fine-tuning on the same k examples
#
# Fine-tuning takes the other road of Figure 2.1: the same k demonstrations become k training
# examples `x => y`, a copy of the model takes `S.ft_steps` Adam steps on them, and is then asked
# each query *zero-shot* (`x =>`, no demonstrations). We fine-tune (a) the in-context learner itself
# and (b) a freshly initialised GPT of the same size, on the same k examples per task.

# %%
fresh = GPT(dataclasses.replace(icl_model.config))
ft_tasks = eval_tasks[: S.ft_tasks]
ft_rows = []
for k in S.ft_shots:
    t0 = time.perf_counter()
    ft_pre = P.evaluate_finetuning(icl_model, fam, ft_tasks, k, fmt="arrow", seed=11, steps=S.ft_steps, lr=1e-2)
    sec = (time.perf_counter() - t0) / len(ft_tasks)
    ft_fresh = P.evaluate_finetuning(fresh, fam, ft_tasks, k, fmt="arrow", seed=11, steps=S.ft_steps, lr=1e-2)
    ft_rows.append({"shots k": k, "in-context": icl_acc[k][: S.ft_tasks].mean().item(),
                    "fine-tuned ICL model": ft_pre.mean().item(), "fine-tuned fresh model": ft_fresh.mean().item(),
                    "ideal": P.ideal_accuracy(k, K, L), "fine-tuning s/task": sec})
viz.show_table(ft_rows, title=f"same k examples, {S.ft_tasks} held-out tasks; in-context needs no gradient step")

# %% [markdown]
# Both fine-tuned models can only memorise the k pairs they saw, so their ceiling is the same ideal
# line as in-context learning. Here gradient descent on the k examples is *more* accurate than our
# small in-context learner, at the price of `S.ft_steps` gradient steps and a model copy per task
# against one forward pass for the prompt — GPT-3's point is that at 175B parameters the forward
# pass alone gets close, without a fine-tuned copy per task.
#
# ## 6. Sensitivity: order of the examples, wrong labels, prompt format
#
# **Order.** We fix, per task, four demonstrations and ask all K inputs with `S.n_orders` different
# orders of the same four. **Labels.** A fraction of the demonstrations gets a wrong label (a random
# other label of the task); we measure accuracy against the *true* mapping, and how often the
# model answers the label the demonstrations *showed* for the query. **Format.** The same tasks,
# 8 shots, in the three formats (the model was trained only on the formats printed in section 3).

# %%
sens_tasks = eval_tasks[: min(64, S.n_tasks)]
base = [P._demo_order(K, 4, torch.Generator().manual_seed(100 + t)) for t in range(len(sens_tasks))]
order_acc = []
for r in range(S.n_orders):
    g = torch.Generator().manual_seed(r)
    orders = [b[torch.randperm(4, generator=g)] for b in base]
    order_acc.append(P.evaluate_shots(icl_model, fam, sens_tasks, [4], fmt_main, seed=r, demo_orders=orders)[4])
order_acc = torch.stack(order_acc)                                         # (orders, tasks)
per_task_sd = order_acc.std(0).mean().item()
best_minus_worst = (order_acc.max(0).values - order_acc.min(0).values).mean().item()
print(f"4 fixed demonstrations, {S.n_orders} orders: accuracy {order_acc.mean():.3f}; per task, the sd over "
      f"orders is {per_task_sd:.3f} and the best order beats the worst by {best_minus_worst:.3f} on average")


@torch.no_grad()
def follow_rates(noise, kind="random", k=8):
    b = P.icl_batch(fam, sens_tasks, k, fmt_main, torch.Generator().manual_seed(5), label_noise=noise, noise=kind)
    pred = P.classify_by_likelihood(icl_model, b["prompts"], b["candidates"]).argmax(-1)
    return {"true label": (pred == b["answer"]).float().mean().item(),
            "label shown in the prompt": (pred == b["shown"]).float().mean().item()}


label_rows = [{"wrong labels": f"{int(p * 100)}% random", **follow_rates(p)} for p in (0.0, 0.25, 0.5, 0.75, 1.0)]
label_rows.append({"wrong labels": "100% flipped (y → next label)", **follow_rates(1.0, "flip")})
viz.show_table(label_rows, title="8 shots with corrupted demonstrations: which answer does the model give?")
format_rows = [{"format": f,
                "example": " ".join(fam.token_name(t) for t in P.build_token_prompt([(4, 70)], 5, fmts[f])),
                "accuracy (8 shots)": P.evaluate_shots(icl_model, fam, sens_tasks, [8], f, seed=3)[8].mean().item()}
               for f in ("bare", "arrow", "io")]
viz.show_table(format_rows, title="prompt format")

# %%
clean, all_wrong, flipped = label_rows[0], label_rows[4], label_rows[5]
assert clean["true label"] > all_wrong["true label"] + 0.15, "wrong demonstrations → fewer right answers"
assert flipped["label shown in the prompt"] > flipped["true label"] + 0.15, "it follows the labels it is shown"

# %% [markdown]
# Our model copies what it is shown: with consistently flipped labels it answers the *shown* label
# far more often than the true one, and random wrong labels pull it to chance. (For large pretrained
# models Min et al. 2022, *Rethinking the Role of Demonstrations*, found that random labels hurt
# surprisingly little on real tasks — those models largely use the demonstrations to recognise a
# task and label space they already know; here nothing is known beforehand, so the labels are
# everything.) The *order* of the same four demonstrations changes a task's accuracy noticeably —
# the small model is a noisy copier, as GPT-3 was reported to be order-sensitive (Lu et al. 2022) —
# and formats never seen in training are close to chance: the model learned the mechanism for the
# layout it was trained on, not the idea of a demonstration.
#
# ## 7. The mechanism: induction heads
#
# Olsson et al. (2022) traced in-context learning in Transformers to **induction heads**: at token
# `A`, the head attends to the token that *followed* the previous occurrence of `A` and copies it
# (`… A B … A → B`). It needs two layers: a "previous-token" head first writes into each position
# which token preceded it; the induction head's query then matches those keys. We measure it on
# sequences of random tokens repeated twice, `r_1 … r_p r_1 … r_p`, where the second half can only
# be predicted by copying: the **induction score** of a head is its mean attention from a query
# at position i of the repeated half to key i − p + 1. We derive it here, then compare with
# `prompting.induction_scores`.

# %%
# NBVAL_CHECK_OUTPUT
period = 16
vocab = torch.arange(4, fam.vocab_size)
rep = P.repeated_random_tokens(S.n_repeats, period, vocab, torch.Generator().manual_seed(0))
maps = P.attention_maps(icl_model, rep)                                    # (n_layer, B, H, T, T)
T = 2 * period
q = torch.arange(period, T)
induction = maps[:, :, :, q, q - period + 1].mean(-1).mean(1)              # (n_layer, H)
previous_token = maps[:, :, :, torch.arange(1, T), torch.arange(0, T - 1)].mean(-1).mean(1)
assert torch.allclose(induction, P.induction_scores(maps, period).mean(1))
print(f"B sequences of {T} tokens (period {period}) -> attention maps of shape "
      f"(n_layer, B, H, T, T) = {(maps.shape[0], 'B', *maps.shape[2:])}")
print("uniform causal attention would give an induction score of", round((1 / (q + 1).double()).mean().item(), 4))

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 2.8))
heads = [f"head {h}" for h in range(induction.shape[1])]
layers = [f"layer {i}" for i in range(induction.shape[0])]
viz.heatmap(induction, heads, layers, ax=axes[0], title="induction score", annot=True)
viz.heatmap(previous_token, heads, layers, ax=axes[1], title="previous-token score", annot=True)
plt.tight_layout()
plt.show()
top = divmod(int(induction.argmax()), induction.shape[1])
print("induction scores (layer × head):", [[round(v, 3) for v in row] for row in induction.tolist()])
print(f"strongest induction head: layer {top[0]}, head {top[1]}")

# %% [markdown]
# Compare each score with the uniform baseline printed above. A model trained on other sequences
# need not pass this generic test cleanly: ours only ever saw alternating inputs and labels. So we
# also measure the same pattern **on the task's own prompts**: from the query (the last token), the
# attention a head pays to the label(s) that followed earlier occurrences of the same input — the
# positions holding the answer.

# %%
b = P.icl_batch(fam, sens_tasks, 8, fmt_main, torch.Generator().manual_seed(3))
task_maps = P.attention_maps(icl_model, b["prompts"])[:, :, :, -1]          # (n_layer, N, H, T): from the query
ids = b["prompts"]
T_p = ids.shape[1]
pair = fmts[fmt_main].pair_length()
is_answer = torch.zeros_like(ids, dtype=torch.bool)                       # labels after earlier occurrences
x_pos = torch.arange(len(fmts[fmt_main].before_x), T_p - 1, pair)         # positions of demonstrated inputs
y_pos = x_pos + 1 + len(fmts[fmt_main].between)                            # their labels
hit = ids[:, x_pos] == ids[:, -1:]                                         # (N, k): same input as the query
is_answer[:, y_pos] = hit
in_task = (task_maps * is_answer[None, :, None, :]).sum(-1).mean(1)        # (n_layer, H)
viz.heatmap(in_task, heads, layers, title="attention from the query to its answer(s)", annot=True)
plt.show()
copy = divmod(int(in_task.argmax()), in_task.shape[1])
print("share of the demonstrated labels among all positions:", round((is_answer.sum(1) / T_p).mean().item(), 3))
print(f"head that attends most to the answer: layer {copy[0]}, head {copy[1]} ({in_task.max():.2f})")

# %% [markdown]
# The attention map of that head on one held-out 8-shot prompt: each row is a query position; the
# last row is the query input. Single prompts vary a lot — compare the mass this one puts on the
# label(s) that followed the same input with the average over prompts in the heatmap above.

# %%
one = b["prompts"][0]
attn = P.attention_maps(icl_model, one[None])[copy[0], 0, copy[1]]        # (T, T)
names = [fam.token_name(t) for t in one.tolist()]
fig, ax = plt.subplots(figsize=(7, 6))
viz.heatmap(attn, names, names, ax=ax, title=f"layer {copy[0]} head {copy[1]} on an 8-shot held-out prompt")
plt.show()
answers = is_answer[0].nonzero().squeeze(1).tolist()
print(f"query {names[-1]}: its label(s) {[names[i] for i in answers]} at {answers}; attention from the query to "
      f"them: {attn[-1, answers].sum():.2f} (uniform would be {len(answers) / len(names):.2f})")

# %% [markdown]
# **Knock-out.** If these heads *are* the mechanism, zeroing one of them should bring the 8-shot
# accuracy back towards chance. We zero each head in turn.

# %%
knock = [{"heads zeroed": "none",
          "accuracy (8 shots)": P.evaluate_shots(icl_model, fam, sens_tasks, [8], fmt_main, seed=4)[8].mean().item()}]
for layer in range(icl_cfg.n_layer):
    for h in range(icl_cfg.n_head):
        with P.ablate_heads(icl_model, [(layer, h)]):
            acc8 = P.evaluate_shots(icl_model, fam, sens_tasks, [8], fmt_main, seed=4)[8]
        knock.append({"heads zeroed": f"layer {layer} head {h}", "accuracy (8 shots)": acc8.mean().item(),
                      "induction score (repeats)": induction[layer, h].item(),
                      "previous-token score": previous_token[layer, h].item(),
                      "attention to the answer": in_task[layer, h].item()})
viz.show_table(knock, title="knocking out one head at a time")
assert min(r["accuracy (8 shots)"] for r in knock[1:]) < knock[0]["accuracy (8 shots)"] - 0.15, \
    "some single head is necessary for in-context learning"

# %% [markdown]
# ## 8. The contrast: the Tiny Shakespeare GPT of notebook 10
#
# The character-level model of notebook 10 is a GPT too, but it never saw a sequence in which the
# right continuation is defined by the sequence itself. We give it the same kind of task in
# characters — a random mapping from K lowercase letters to L capital letters, `q: W` lines — and
# score the L capitals by likelihood. (We load `data/gpt/` when it is present; otherwise we train a
# small one here for `S.char_iters` steps.)

# %%
char_dir = model_dir("gpt")
if (char_dir / "model.safetensors").exists():
    stored, extra = read_checkpoint_metadata(char_dir / "model.safetensors")
    char_model = GPT(GPTConfig(**stored))
    load_checkpoint(char_dir / "model.safetensors", char_model)
    char_tok = CharTokenizer(extra["chars"])
    print("loaded the notebook-10 checkpoint from data/gpt/")
else:
    char_cfg = TrainConfig(n_layer=2, n_head=4, n_embd=64, block_size=128, batch_size=16, max_iters=S.char_iters,
                           warmup_iters=20, eval_interval=S.char_iters, eval_iters=2, threads=torch.get_num_threads())
    char_model, char_rep = train_char_gpt(char_cfg, progress=False)
    char_tok = CharTokenizer(char_rep["chars"])
    print(f"no data/gpt/ checkpoint: trained a small one, validation loss {char_rep['final']['val']:.2f}")
char_model.eval()
lower = torch.tensor(char_tok.encode("abcdefghijklmnopqrstuvwxyz"))
upper = torch.tensor(char_tok.encode("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
char_fmt = P.TokenFormat("colon", between=tuple(char_tok.encode(": ")), after_y=tuple(char_tok.encode("\n")))
g = torch.Generator().manual_seed(0)
char_tasks = [P.random_task(lower, upper, K, L, g) for _ in range(S.char_tasks)]
char_shots = [k for k in SHOTS if (k + 1) * char_fmt.pair_length() <= char_model.config.block_size]
char_acc = P.evaluate_shots(char_model, None, char_tasks, char_shots, char_fmt, seed=1)
example = P.icl_batch(None, char_tasks[:1], 4, char_fmt, torch.Generator().manual_seed(0), queries="one")
print("a 4-shot character prompt:\n" + char_tok.decode(example["prompts"][0]))
viz.show_table([{"shots k": k, "Shakespeare GPT": char_acc[k].mean().item(),
                 "in-context learner": icl_acc[k].mean().item()} for k in char_shots],
               title="the same kind of task, a model trained on plays")
assert all(abs(char_acc[k].mean().item() - 0.25) < 0.15 for k in char_shots), "no in-context learning: ≈ chance"

# %% [markdown]
# ## 9. A real checkpoint, when there is one
#
# The same prompting code runs on a real GPT-2 loaded into the course's GPT (`GPT.from_hf`) with its
# tokenizer, if a Hugging Face GPT-2 directory is available locally: set `COURSEKIT_GPT2_DIR` to
# it. None can be downloaded on the machine that built this notebook, so the cell says so.

# %%
gpt2_dir = P.hf_gpt2_dir()
if gpt2_dir is None:
    print("No GPT-2 checkpoint: set COURSEKIT_GPT2_DIR to a local Hugging Face GPT-2 directory "
          "(config.json, model.safetensors, tokenizer files) to run the slides' prompts on it. Skipped.")
else:
    gpt2, gpt2_tok = P.load_hf_gpt2(gpt2_dir)
    for name, r in P.run_slide_prompts(gpt2, gpt2_tok).items():
        answer = r.get("completion", r.get("prediction"))
        print(f"--- {name}\n{r['prompt']}\n>>> model: {answer!r}   (expected {r['expected']!r})")

# %% [markdown]
# ## 10. Paper scale: GPT-3
#
# GPT-3 has 175B parameters, 96 layers, a 2,048-token context, and was trained on ~300B tokens. Its
# few-shot results grow with model size, and the gap between zero-, one- and few-shot grows with
# it: larger models are better in-context learners. On TriviaQA (closed book, GPT-3 Table 3.3):

# %%
viz.show_table([
    {"system": "GPT-3 175B zero-shot", "TriviaQA accuracy": 64.3},
    {"system": "GPT-3 175B one-shot", "TriviaQA accuracy": 68.0},
    {"system": "GPT-3 175B few-shot (64 examples)", "TriviaQA accuracy": 71.2},
    {"system": "RAG, fine-tuned, open-domain (retrieval)", "TriviaQA accuracy": 68.0},
    {"system": "T5-11B + SSM, fine-tuned, closed-book", "TriviaQA accuracy": 60.5},
], title="paper scale (Brown et al. 2020, Table 3.3) — not measured here", floatfmt="{:.1f}")
print(f"this notebook's in-context learner: {icl_model.num_params():,} parameters; "
      f"GPT-3: 175,000,000,000 ({175e9 / icl_model.num_params():,.0f}× larger)")

# %% [markdown]
# ## Summary
#
# - A prompt is task description + k demonstrations + query; the answer is read by the
#   likelihood of each label continuation (summed or per-token log-probabilities) or by greedy
#   generation. No weights change.
# - A 27k-parameter GPT trained on a stream of fresh random tasks learns *in context*, after a long
#   plateau: on new mappings it is at chance with 0 shots and above 90% at 8 shots; on strictly
#   held-out pool pairings (never seen in training) it is well above chance with 4–16 shots, though
#   far from the ideal copier.
# - Fine-tuning a copy on the same k examples did better here, but needs gradient steps and a
#   model per task; in-context learning needs one forward pass.
# - This small learner follows the labels it is shown, is sensitive to the order of the examples,
#   and fails on prompt formats it was not trained on.
# - The mechanism is attention from the query to the label that followed the same input earlier
#   (the induction pattern), measured per head, and necessary: knocking out a single head brings
#   accuracy back towards chance.
# - A language model of plays shows none of this; GPT-3 shows it at 175B parameters.
#
# ## Exercises

# %%
# EXERCISE 1: build a k-shot prompt
def build_prompt(demonstrations, test_example, description):
    """Description, then 'x => y' lines for the demonstrations, then 'x =>' for the test input."""
    ### BEGIN SOLUTION
    lines = [description] + [f"{x} => {y}" for x, y in demonstrations]
    lines.append(f"{test_example[0]} =>")
    return "\n".join(lines)
    ### END SOLUTION


check_build_prompt(build_prompt)

# %%
# EXERCISE 2: label likelihood of a continuation
def label_logprob(model, prompt, label):
    """log P(label | prompt) = sum_i log P(label_i | prompt, label_<i) for lists of token ids."""
    ### BEGIN SOLUTION
    logits, _ = model(torch.tensor([prompt + label[:-1]]))
    logp = F.log_softmax(logits[0, len(prompt) - 1:], dim=-1)             # (len(label), V)
    return logp[torch.arange(len(label)), torch.tensor(label)].sum().item()
    ### END SOLUTION


check_label_likelihood(label_logprob)

# %%
# EXERCISE 3: the induction score of each head
def induction_score(attn, period):
    """attn (H, T, T) on a twice-repeated random block of `period` tokens -> (H,) mean attention
    from query i of the second half to key i - period + 1."""
    ### BEGIN SOLUTION
    q = torch.arange(period, attn.shape[-1])
    return attn[:, q, q - period + 1].mean(-1)
    ### END SOLUTION


check_induction_score(induction_score)

# %% [markdown]
# **Exercise 4 (open).** Train the in-context learner with `formats=("arrow",)` only
# (`python -m coursekit.prompting train --config …`) and measure the format table again: how much
# of the `bare` accuracy survives? **Exercise 5 (open).** Change `ICLTaskFamily.labels_per_task` to
# 2 and predict the new zero-shot and 1-shot accuracies before measuring them.
