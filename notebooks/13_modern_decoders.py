# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 13 — From GPT-2 to today’s decoders: RoPE, RMSNorm, SwiGLU, grouped-query and flash attention
#
# The decoder of GPT-2 (notebook 10) is still the skeleton of today's open models. Llama (Touvron et al.
# 2023) keeps the pre-norm stack of causal self-attention and feed-forward blocks and changes a handful of
# its parts; FlashAttention (Dao et al. 2022) changes how attention is *computed*, not what it computes:
#
# | part | GPT-2 | Llama |
# |---|---|---|
# | positions | learned absolute vectors added to the input | **RoPE**: queries, keys rotated in attention |
# | normalisation | LayerNorm (mean, variance, gain, bias) | **RMSNorm** (root mean square, gain) |
# | feed-forward | GELU, hidden width 4C | **SwiGLU**, hidden width ≈ ⅔ · 4C, three matrices |
# | attention heads | multi-head: each query head has its keys/values | **grouped-query** (Llama 2 70B, Llama 3) |
# | biases | everywhere | none |
#
# **Learning goals**
# - Derive rotary position embeddings from the rotation of a pair of numbers, check that the score of a
#   rotated query and key depends only on their offset, and relate the paper's interleaved pairs to the
#   half-split pairs of Hugging Face's Llama.
# - Compare learned absolute positions with RoPE on the character task of notebook 10, and see what
#   happens beyond the trained context.
# - Write RMSNorm and SwiGLU and count their parameters against LayerNorm and a GELU MLP.
# - Compute the KV-cache memory of multi-head, grouped-query and multi-query attention, measure it on a real
#   cache, and train the three on the character task.
# - Derive the online softmax that lets FlashAttention compute *exact* attention one tile at a time, and
#   measure the memory it saves.
# - Import a Hugging Face `LlamaForCausalLM` into the course's Llama (equal logits, equal greedy text) and race
#   a GPT-2 block against a Llama block of nearly equal parameters (GPT-2's position table is the difference)
#   with the same training-time budget.
#
# The figures quoted in the text are those of the stored run in the `class` profile (on a CPU, one thread), except
# where a sentence names the recorded GPU run (section 6, read from `data/gpu_runs/`); the
# `quick` profile, which CI runs, trains smaller models for less time and prints other numbers.

# %%
import dataclasses
import json
import math
import tempfile
import time
from functools import partial
from unittest import mock

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from coursekit import runtime
from coursekit.bench.cost import PeakMemory
from coursekit.data import PROJECT_DATA
from coursekit.exercises import (
    check_online_softmax_step,
    check_repeat_kv,
    check_rms_norm,
    check_rope,
    check_rope_attention,
)
from coursekit.gpt.char import char_data, get_batch
from coursekit.gpt.model import GPT, GPTConfig
from coursekit.llama import flash
from coursekit.llama import layers as llama_layers
from coursekit.llama.flash import naive_attention, online_softmax_update, tiled_attention
from coursekit.llama.hf import config_from_hf, from_hf
from coursekit.llama.layers import RMSNorm, SwiGLU
from coursekit.llama.model import Llama, LlamaConfig, kv_cache_bytes_per_token, n_parameters
from coursekit.llama.rope import apply_rope, half_split_permutation, rope_angles, rope_interleaved
from coursekit.training.loop import count_parameters, fit, warmup_cosine
from coursekit.viz import plots as viz

S = runtime.sizes(
    quick=dict(d_model=48, n_layers=2, n_heads=4, batch=12, steps=60, val_windows=32, race_seconds=2.5,
               race_chunk=10, flash_lengths=[128, 256, 512, 1024], flash_block=64),
    class_=dict(d_model=96, n_layers=4, n_heads=4, batch=12, steps=250, val_windows=96, race_seconds=35.0,
                race_chunk=25, flash_lengths=[128, 256, 512, 1024, 2048], flash_block=64),
    full=dict(d_model=192, n_layers=6, n_heads=6, batch=32, steps=1500, val_windows=256, race_seconds=120.0,
              race_chunk=100, flash_lengths=[128, 256, 512, 1024, 2048, 4096], flash_block=128),
)
device = runtime.device()
plt.rcParams["figure.dpi"] = 80
print(S, "| device:", device, "| torch threads:", torch.get_num_threads())

# %% [markdown]
# ## 1. Rotary position embeddings (RoPE)
#
# GPT-2 *adds* a learned vector $p_m$ to the input at position $m$. Attention then sees positions only
# through the content: $(x_m + p_m) W_q \cdot (x_n + p_n) W_k$ mixes the two. Su et al. (2021) ask
# instead for queries and keys whose dot product depends on the positions **only through their offset**
# $m - n$ — the intuition being that what matters for language is mostly "how far back", not "at which
# absolute index" (a motivation, not something this notebook tests).
#
# **One pair.** Take a query $q = (q_1, q_2)$ and a key $k = (k_1, k_2)$ as complex numbers
# $q = q_1 + i q_2$, $k = k_1 + i k_2$. Rotating the query of position $m$ by the angle $m\theta$ is
# multiplying by $e^{im\theta}$:
#
# $$\begin{pmatrix} q_1' \\ q_2' \end{pmatrix} = \begin{pmatrix} \cos m\theta & -\sin m\theta \\
# \sin m\theta & \cos m\theta \end{pmatrix} \begin{pmatrix} q_1 \\ q_2 \end{pmatrix}.$$
#
# The dot product of two 2-d vectors is the real part of $q \bar k$, so after rotating the query by
# $m\theta$ and the key by $n\theta$,
#
# $$q'_m \cdot k'_n = \mathrm{Re}\big[q e^{im\theta}\, \overline{k e^{in\theta}}\big]
#   = \mathrm{Re}\big[q \bar k\, e^{i(m-n)\theta}\big],$$
#
# a function of $m - n$ alone. A $d$-dimensional head is cut into $d/2$ pairs, pair $i$ turning at its
# own frequency $\theta_i = 10000^{-2i/d}$: fast pairs resolve neighbours, slow ones long distances (the
# same frequencies as the sinusoidal positions of notebook 08). No parameter is learned.
#
# We rotate by hand the paper's pairs — interleaved, pair $i$ = dims $(2i, 2i + 1)$ — and compare with
# `coursekit.llama.rope.rope_interleaved`. (Hugging Face's Llama pairs the dimensions another way, as we
# see below; Exercise 1 asks you for that layout.)

# %%
def my_rope_interleaved(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate x (B, H, T, d) to `positions` (T,): pair i = dims (2i, 2i + 1), angle positions·θ_i."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)          # (d/2,) θ_i
    angles = positions.float()[:, None] * theta[None, :]                        # (T, d/2) m·θ_i
    cos, sin = angles.cos(), angles.sin()
    first, second = x[..., 0::2], x[..., 1::2]                                  # the two coordinates of each pair
    rotated = torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)   # (B, H, T, d/2, 2)
    return rotated.flatten(-2)                                                  # each pair back in place: (B, H, T, d)


torch.manual_seed(0)
d_head, T = 16, 12
x = torch.randn(2, 3, T, d_head)
positions = torch.arange(5, 5 + T)                                              # rows at positions 5 … 16
ours, library = my_rope_interleaved(x, positions), rope_interleaved(x, positions)
print("largest difference to coursekit's rope_interleaved:", f"{(ours - library).abs().max().item():.1e}")
assert torch.allclose(ours, library, atol=1e-6)
assert torch.allclose(ours.norm(dim=-1), x.norm(dim=-1), atol=1e-5)           # a rotation keeps lengths

# %% [markdown]
# Now the property itself: the same query and key, placed at many pairs of positions $(m, n)$. The score
# matrix is constant along each diagonal — it is a function of $m - n$ — while without rotation every
# entry would be the same number, $q \cdot k$: the scores themselves would carry no position (only the causal
# mask, which hides the later keys, would).

# %%
# NBVAL_CHECK_OUTPUT
torch.manual_seed(1)
q, k = torch.randn(1, 1, 1, 64), torch.randn(1, 1, 1, 64)
n_pos = 24
cos, sin = rope_angles(64, n_pos)
every = torch.arange(n_pos)
q_rot = apply_rope(q.expand(1, 1, n_pos, 64), cos, sin, every)                  # the query at positions 0 … 23
k_rot = apply_rope(k.expand(1, 1, n_pos, 64), cos, sin, every)
scores = (q_rot @ k_rot.transpose(-2, -1))[0, 0]                                # (m, n) → q_m · k_n
offsets = every[:, None] - every[None, :]
spread = max((scores[offsets == o].max() - scores[offsets == o].min()).item() for o in range(-n_pos + 1, n_pos))
print("scores constant along every diagonal m − n:", spread < 1e-4)
assert spread < 1e-4

# %%
viz.heatmap(scores, title="q_m · k_n after RoPE: a function of m − n", cmap="RdBu_r")
plt.xlabel("key position n")
plt.ylabel("query position m")
plt.show()

# %% [markdown]
# **Two layouts of the pairs.** The paper rotates the *interleaved* pairs $(x_{2i}, x_{2i+1})$ (Meta's
# original Llama code does it with complex numbers); Hugging Face's Llama rotates the *half-split* pairs
# $(x_i, x_{i+d/2})$. Both turn pair $i$ by $m\theta_i$; only the assignment of dimensions to pairs
# differs, by a fixed permutation. Since $q \cdot k$ does not change when $q$ and $k$ are permuted the same
# way, the two are the same model once the rows of $W_q$ and $W_k$ are permuted — which is what Hugging
# Face's conversion script does to Meta's weights.

# %%
# NBVAL_CHECK_OUTPUT
p = half_split_permutation(8)
print("half-split dims take the interleaved dims", p.tolist())
x = torch.randn(2, 3, 10, 8, dtype=torch.float64)
positions = torch.arange(10)
cos, sin = rope_angles(8, 10)
paper = rope_interleaved(x, positions)                                         # interleaved pairs, complex numbers
hf_style = apply_rope(x[..., p], cos.double(), sin.double(), positions)         # half-split pairs
print("apply_rope(x[..., p]) == rope_interleaved(x)[..., p]:", torch.allclose(hf_style, paper[..., p], atol=1e-6))
assert torch.allclose(hf_style, paper[..., p], atol=1e-6)

# %% [markdown]
# ### Learned positions vs RoPE on Tiny Shakespeare
#
# We train two character models that differ **only** in how they know positions: the Llama block of the
# course (`coursekit.llama.model.Llama`), once with RoPE and once with RoPE switched off (every angle 0,
# so nothing is rotated) and GPT-2's learned absolute positions added to the token embeddings instead. Same
# data and split as notebook 10, the same context of 64 characters, the same steps, seed and batches.
# Validation loss is the mean next-character cross-entropy over a fixed set of validation windows.

# %%
tok, train_ids, val_ids = char_data()
V, CONTEXT, LONG = len(tok), 64, 256                    # train on 64 characters; evaluate up to 256
C, L, H = S.d_model, S.n_layers, S.n_heads
assert C % 3 == 0, "d_model must be a multiple of 3 so that SwiGLU's ⅔·4C is a whole number"
D_FF = 8 * C // 3                                       # SwiGLU width ⅔ · 4C (section 2)
g = torch.Generator().manual_seed(1234)                 # fixed validation windows: the same starts for 64 and 256
starts = torch.randint(len(val_ids) - LONG - 1, (S.val_windows,), generator=g)
VAL = {n: (torch.stack([val_ids[s:s + n] for s in starts.tolist()]),
           torch.stack([val_ids[s + 1:s + n + 1] for s in starts.tolist()])) for n in (CONTEXT, LONG)}


class LearnedPositions(nn.Module):
    """GPT-2's input: token embedding + a learned vector per position 0 … n_positions − 1 (nothing beyond)."""

    def __init__(self, tokens: nn.Embedding, n_positions: int) -> None:
        super().__init__()
        self.tokens = tokens                                                    # still tied to the output layer
        self.positions = nn.Embedding(n_positions, tokens.embedding_dim)
        nn.init.normal_(self.positions.weight, std=0.02)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        T, n = ids.shape[1], self.positions.num_embeddings
        if T > n:
            raise ValueError(f"{T} positions, but learned vectors exist only for positions 0 … {n - 1}")
        return self.tokens(ids) + self.positions(torch.arange(T, device=ids.device))     # (B, T, C)


def make_llama(n_kv_heads: int = H, positions: str = "rope", seed: int = 0) -> Llama:
    """The course's Llama at this notebook's size; RoPE tables up to LONG (they hold no parameters)."""
    torch.manual_seed(seed)
    model = Llama(LlamaConfig(vocab_size=V, d_model=C, n_layers=L, n_heads=H, n_kv_heads=n_kv_heads, d_ff=D_FF,
                              max_len=LONG, tie_embeddings=True))
    if positions == "learned":
        model.rope_cos.fill_(1.0)                                               # every angle 0: no rotation
        model.rope_sin.zero_()
        model.embed = LearnedPositions(model.embed, CONTEXT)
    return model.to(device)


def logits_of(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    return model(ids)[0] if isinstance(model, GPT) else model(ids)               # GPT returns (logits, loss)


@torch.no_grad()
def loss_by_position(model: nn.Module, n: int) -> torch.Tensor:
    """(n,) mean cross-entropy at each position of the fixed validation windows of length n."""
    model.eval()
    x, y = VAL[n]
    losses = [F.cross_entropy(logits_of(model, x[i:i + 32].to(device)).transpose(1, 2), y[i:i + 32].to(device),
                              reduction="none") for i in range(0, len(x), 32)]
    return torch.cat(losses).mean(0).cpu()


def optimizer_for(model: nn.Module) -> torch.optim.Optimizer:
    """notebook 10's recipe: AdamW, weight decay on matrices only, β2 = 0.99, learning rate 5e-3."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                             lr=5e-3, betas=(0.9, 0.99))


def next_char_loss(model: nn.Module, batch) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(logits_of(model, x).flatten(0, 1), y.flatten())


def train(model: nn.Module, steps: int = S.steps, seed: int = 0) -> dict:
    """`steps` steps of notebook 10's recipe (warm-up, cosine decay) with coursekit's `fit`; the same batches for
    every model with the same seed. Returns the validation loss at 64 characters and the training time."""
    optimizer = optimizer_for(model)
    batches = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    fit(model, optimizer, lambda step: tuple(t.to(device) for t in get_batch(train_ids, S.batch, CONTEXT, batches)),
        next_char_loss, steps=steps, scheduler=warmup_cosine(optimizer, steps // 10, steps), progress=False)
    seconds = time.perf_counter() - start
    return {"val": loss_by_position(model, CONTEXT).mean().item(), "seconds": seconds,
            "parameters": count_parameters(model)}


rope_model, learned_model = make_llama(positions="rope"), make_llama(positions="learned")
runs = {"RoPE": train(rope_model), "learned positions": train(learned_model)}
viz.show_table([{"positions": name, **r} for name, r in runs.items()],
               title=f"validation loss at {CONTEXT} characters after {S.steps} steps")
assert runs["RoPE"]["val"] < runs["learned positions"]["val"]

# %% [markdown]
# With the same block, steps and batches, the model with RoPE ends with the lower validation loss (the
# table above; 2.295 against 2.516 in the class run). One likely reason, not measured here: learned positions
# must be *learned*, position by position, from the data, while RoPE gives every head its offsets from the
# first step. One seed each, though: in the class run, section 3 trains this RoPE model again with another
# seed and its loss moves by 0.157 (down, to 2.138), more than two thirds of the gap here. The learned-position
# model was trained with one seed only, so how much its loss moves by chance is not measured: read the gap as
# suggestive, not decisive.
#
# **Beyond the trained context.** Both were trained on windows of 64 characters. The learned-position model
# has no vector for position 64: it cannot even be run on longer windows, by construction. The RoPE model
# can — a rotation exists for every angle — so we evaluate it on windows of 256 characters that start where
# the 64-character windows start, and look at its loss position by position.

# %%
try:
    loss_by_position(learned_model, LONG)
except ValueError as error:
    print(f"learned positions at {LONG} characters: {error}")
else:
    raise AssertionError("a model with learned positions 0 … 63 must not run at position 64")

per_position = {"RoPE": loss_by_position(rope_model, LONG), "learned positions": loss_by_position(learned_model,
                                                                                                   CONTEXT)}
ranges = [(0, 64), (64, 128), (128, 256)]
rows = [{"positions": name, **{f"loss at {a}–{b - 1}": (f"{curve[a:b].mean().item():.3f}" if len(curve) >= b else "—")
                               for a, b in ranges}} for name, curve in per_position.items()]
viz.show_table(rows, title=f"validation loss by position, trained on {CONTEXT} characters")
rope_curve = per_position["RoPE"]
assert torch.allclose(rope_curve[:CONTEXT], loss_by_position(rope_model, CONTEXT), atol=1e-4)  # causal: same prefix

window = 8                                                                      # smooth over 8 positions
for name, curve in per_position.items():
    smooth = curve.unfold(0, window, window).mean(1)
    plt.plot(torch.arange(len(smooth)) * window + window / 2, smooth, marker="o", ms=3, label=name)
plt.axvline(CONTEXT, color="grey", ls="--", lw=1)
plt.text(CONTEXT + 2, plt.ylim()[1] - 0.05, "trained context", fontsize=8, va="top")
plt.xlabel("position in the window")
plt.ylabel("validation loss (nats/char)")
plt.title("loss by position (mean over 8 positions)")
plt.legend()
plt.show()
beyond = {f"{a}–{b - 1}": rope_curve[a:b].mean().item() - rope_curve[32:64].mean().item() for a, b in ranges[1:]}
print("RoPE: loss beyond the trained context minus loss at positions 32–63:",
      {k: round(v, 3) for k, v in beyond.items()})
print("RoPE: loss inside the trained context, positions 0–31 and 32–63:",
      [round(rope_curve[a:b].mean().item(), 3) for a, b in ((0, 32), (32, 64))])
assert beyond["128–255"] > 0                                                   # far beyond: worse than inside
if S.profile == "class":                                                        # the class run's reading below
    assert 0 < beyond["64–127"] < beyond["128–255"]
    inside = (rope_curve[32:64].mean() - rope_curve[0:32].mean()).item()
    assert 0 < inside and beyond["64–127"] > 1.5 * inside                      # 32–63 above 0–31; +0.037 ≈ twice

# %% [markdown]
# Read the table and the curve together. Past position 64 the RoPE model keeps running, and the differences
# printed above compare its loss with that of positions 32–63 (the second half of the trained window): in
# the class run its mean is a little higher up to twice the trained length (+0.037 at positions 64–127) and
# much higher up to four times (+0.281 at 128–255). For scale, the two halves of the trained window differ by
# about half of +0.037 (2.286 and 2.304, printed last).
#
# That last line holds a surprise of its own. Inside the trained window the loss does not fall with more
# context: in the class run positions 32–63, which see 32 to 63 earlier characters, have a *higher* mean loss
# (2.304) than positions 0–31 (2.286), although the latter include the very first positions, which see almost
# none. Nothing here measures why. (For the learned-position model only the mean over 0–63, 2.516, is
# printed; its curve is in the plot.)
#
# RoPE makes longer inputs *possible*; it does not teach the model what to do with offsets it never saw (no
# attention pattern is measured here to say why the loss rises). Long-context models extend RoPE
# explicitly — position interpolation (Chen et al. 2023) or YaRN (Peng et al. 2023) rescale the angles — and
# then fine-tune on long texts. (Those are the `rope_scaling` settings that `coursekit.llama.hf` refuses to
# import; section 5 shows the refusal.)
#
# ## 2. RMSNorm and SwiGLU
#
# **RMSNorm** (Zhang & Sennrich 2019, Eq. 4) drops LayerNorm's centring and its bias:
#
# $$\mathrm{LayerNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} \odot g + b, \qquad
#   \mathrm{RMSNorm}(x) = \frac{x}{\sqrt{\tfrac{1}{C}\sum_j x_j^2 + \epsilon}} \odot g.$$
#
# Re-scaling, not re-centring, is what stabilises training, the paper argues; one statistic instead of
# two, and half the parameters. When the mean of $x$ is 0 the two coincide. We check both statements on
# `coursekit.llama.layers.RMSNorm` (Exercise 3 asks you to write it): divided by its gain, every output row
# has a root mean square of 1; on centred rows it equals LayerNorm, on raw ones it does not.

# %%
torch.manual_seed(2)
norm = RMSNorm(16, eps=1e-6)
with torch.no_grad():
    norm.weight.uniform_(0.5, 1.5)
x = 3 + 2 * torch.randn(4, 16)                                                 # rows with means far from 0
with torch.no_grad():
    assert torch.allclose((norm(x) / norm.weight).pow(2).mean(-1), torch.ones(4), atol=1e-4)
    centred = x - x.mean(-1, keepdim=True)
    layer_norm = F.layer_norm(centred, (16,), weight=norm.weight, eps=1e-6)
    assert torch.allclose(norm(centred), layer_norm, atol=1e-5)                 # mean 0: RMSNorm = LayerNorm
    assert not torch.allclose(norm(x), F.layer_norm(x, (16,), weight=norm.weight, eps=1e-6), atol=1e-2)
    rms_error = ((norm(x) / norm.weight).pow(2).mean(-1).sqrt() - 1).abs().max().item()
    gap_centred = (norm(centred) - layer_norm).abs().max().item()
    gap_raw = (norm(x) - F.layer_norm(x, (16,), weight=norm.weight, eps=1e-6)).abs().max().item()
print(f"RMSNorm: RMS of output / gain differs from 1 by at most {rms_error:.1e}; largest |RMSNorm − LayerNorm| "
      f"{gap_centred:.1e} on centred rows, {gap_raw:.2f} on the raw ones")

# %% [markdown]
# **SwiGLU** (Shazeer 2020, Eq. 6) replaces the feed-forward block $\mathrm{GELU}(xW_1)W_2$ with a *gated*
# one: a second projection $xV$ multiplies the activation element by element,
#
# $$\mathrm{FFN}_{\mathrm{SwiGLU}}(x) = \big(\mathrm{SiLU}(xW) \odot xV\big)\, W_2, \qquad
#   \mathrm{SiLU}(z) = z\,\sigma(z).$$
#
# Three matrices instead of two: to keep the parameter count of a GELU MLP of width $4C$, the hidden width
# shrinks to $d_{ff} = \tfrac{2}{3} \cdot 4C$, since $3 \cdot C \cdot \tfrac{8C}{3} = 2 \cdot C \cdot 4C$.

# %%
def my_swiglu(x: torch.Tensor, W: torch.Tensor, V_: torch.Tensor, W2: torch.Tensor) -> torch.Tensor:
    return (F.silu(x @ W) * (x @ V_)) @ W2                                      # (…, C) → (…, d_ff) → (…, C)


torch.manual_seed(3)
mlp = SwiGLU(12, 32)
x = torch.randn(2, 5, 12)
with torch.no_grad():
    ours = my_swiglu(x, mlp.gate_proj.weight.T, mlp.up_proj.weight.T, mlp.down_proj.weight.T)
    assert torch.allclose(ours, mlp(x), atol=1e-6)

z = torch.linspace(-4, 3, 200)
for name, fn in (("ReLU", F.relu), ("GELU", F.gelu), ("SiLU = Swish₁", F.silu)):
    plt.plot(z, fn(z), label=name)
plt.axhline(0, color="grey", lw=0.5)
plt.legend()
plt.title("the activations: SiLU is smooth like GELU, slightly negative below 0")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
def gelu_mlp_params(C: int, bias: bool) -> int:
    return 2 * C * 4 * C + (4 * C + C if bias else 0)


rows = []
for C_ in (96, 768):                                                            # ours in class, GPT-2 small
    d_ff = 2 * 4 * C_ // 3
    with torch.device("meta"):                                                  # shapes only, no memory
        swiglu, layer_norm, rms = (count_parameters(m) for m in (SwiGLU(C_, d_ff), nn.LayerNorm(C_), RMSNorm(C_)))
    rows.append({"C": C_, "LayerNorm": layer_norm, "RMSNorm": rms, "⅔·4C": d_ff,
                 "GELU MLP 4C, no biases": gelu_mlp_params(C_, bias=False),
                 "GELU MLP 4C, biases (GPT-2)": gelu_mlp_params(C_, bias=True), "SwiGLU ⅔·4C": swiglu})
    assert swiglu == gelu_mlp_params(C_, bias=False)
for row in rows:
    print(", ".join(f"{k}: {v:,}" for k, v in row.items()))
multiple_of = 256                                                               # Llama's code rounds d_ff up
llama_d_ff = multiple_of * math.ceil(int(2 * 4 * 4096 / 3) / multiple_of)
print(f"Llama 7B: ⅔·4·4096 = {2 * 4 * 4096 / 3:.2f} → rounded up to a multiple of {multiple_of}: {llama_d_ff:,}")
assert llama_d_ff == 11008

# %% [markdown]
# With $d_{ff} = \tfrac{2}{3} \cdot 4C$ SwiGLU has exactly the weights of a GELU MLP without biases (GPT-2's
# biases add $5C$ more); Llama rounds $\tfrac{2}{3} \cdot 4C$ up to a multiple of 256, hence 7B's hidden
# width of 11,008. Shazeer (2020) reports lower perplexity for SwiGLU at equal parameters and compute; the
# final comparison of this notebook measures the whole Llama block, not SwiGLU alone.
#
# ## 3. Grouped-query and multi-query attention
#
# During generation every layer keeps the keys and values of all earlier tokens (notebook 10's KV cache).
# With $H$ heads of width $d$ that is $2 \cdot L \cdot H \cdot d$ numbers per token — for a large model and
# a long context served to many users at once, more memory than the weights (Exercise 6 works it out for
# Llama 2 70B). **Multi-query attention** (Shazeer 2019) keeps *one*
# key/value head shared by all query heads; **grouped-query attention** (Ainslie et al. 2023) keeps
# $H_{kv}$ of them, each shared by a group of $H / H_{kv}$ neighbouring query heads. At attention time the
# $H_{kv}$ heads are repeated for their groups (`coursekit.llama.layers.repeat_kv`; Exercise 5 asks you to
# write it). Key/value head $g$ serves the $H / H_{kv}$ neighbouring query heads $g \cdot H/H_{kv}, \dots$:

# %%
# NBVAL_CHECK_OUTPUT
kv = torch.arange(2).float().view(1, 2, 1, 1).expand(1, 2, 3, 4)                # key/value heads 0 and 1
served = llama_layers.repeat_kv(kv, 4)[0, :, 0, 0].long()                       # (B, H_kv, T, d) → (B, 8, T, d)
print("query heads 0 … 7 read key/value head", served.tolist())
assert served.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]

# %% [markdown]
# The cache holds only the $H_{kv}$ heads, so its memory per token is
# $2 \cdot L \cdot H_{kv} \cdot d \cdot$ bytes per number (`kv_cache_bytes_per_token`). For a model with
# the shape of Llama 2 7B (32 layers, $C$ = 4,096, 32 heads of 128) in bfloat16, and for the real Llama 2
# 70B, which uses 8 key/value heads for its 64 query heads:

# %%
# NBVAL_CHECK_OUTPUT
KiB, MiB, GiB = 2 ** 10, 2 ** 20, 2 ** 30
shape_7b = dict(vocab_size=32000, d_model=4096, n_layers=32, n_heads=32, d_ff=11008, max_len=4096)
print(f"{'7B-shaped':<10}{'key/value heads':>16}{'KiB per token':>15}{'GiB at 4,096 tokens × batch 16':>33}"
      f"{'parameters':>12}")
for name, n_kv in (("MHA", 32), ("GQA-8", 8), ("GQA-4", 4), ("MQA", 1)):
    config = LlamaConfig(**shape_7b, n_kv_heads=n_kv)
    per_token = kv_cache_bytes_per_token(config, bytes_per_value=2)
    print(f"{name:<10}{n_kv:>16}{per_token // KiB:>15}{per_token * 4096 * 16 / GiB:>33.1f}"
          f"{n_parameters(config) / 1e9:>11.2f}B")
llama2_70b = LlamaConfig(vocab_size=32000, d_model=8192, n_layers=80, n_heads=64, n_kv_heads=8, d_ff=28672,
                         max_len=4096)
mha_70b = dataclasses.replace(llama2_70b, n_kv_heads=64)
print(f"Llama 2 70B (8 key/value heads): {kv_cache_bytes_per_token(llama2_70b) / KiB:.0f} KiB per token; "
      f"with 64 (multi-head): {kv_cache_bytes_per_token(mha_70b) / MiB:.1f} MiB per token")
assert kv_cache_bytes_per_token(llama2_70b) == 320 * KiB and kv_cache_bytes_per_token(mha_70b) == 2.5 * MiB

# %% [markdown]
# Grouping removes part of $W_K$ and $W_V$ — the last column: 6.74B parameters with 32 key/value heads,
# 5.93B with 8 (the Llama 2 paper's ablation widens the feed-forward layers to keep the count) — but it
# divides the cache by $H / H_{kv}$: 320 KiB instead of 2.5 MiB per token for Llama 2 70B, which lets a server hold
# eight times more tokens of context — more users, or longer documents — in the same memory, and read
# eight times fewer *cache* bytes per generated token (the weights, also read at every step, shrink only by the
# removed parts of $W_K$ and $W_V$: the parameter column above).
#
# The formula is what a real cache holds: we generate with a small random Llama of each kind and add up
# the bytes of the cached keys and values.

# %%
# NBVAL_CHECK_OUTPUT
for n_kv in (4, 2, 1):
    torch.manual_seed(0)
    small = Llama(LlamaConfig(vocab_size=V, d_model=64, n_layers=2, n_heads=4, n_kv_heads=n_kv, d_ff=172,
                              max_len=64))
    cache = small.new_cache()
    small.generate(torch.randint(0, V, (3, 8)), 16, cache=cache)                # batch 3, 8 + 16 tokens
    held = sum(c.k.numel() * c.k.element_size() + c.v.numel() * c.v.element_size() for c in cache)
    tokens = 3 * cache[0].length
    print(f"n_kv_heads={n_kv}: cached keys {tuple(cache[0].k.shape)} per layer, {held:,} bytes for {tokens} "
          f"tokens = {held // tokens} bytes per token")
    assert held == tokens * kv_cache_bytes_per_token(small.config, bytes_per_value=4)

# %% [markdown]
# (The cache holds 23 positions, not 24: the last generated token is never fed back.) Does sharing keys and
# values cost quality? Ainslie et al. (2023) find GQA close to multi-head attention and better than MQA. At
# our scale we can only try: the RoPE model of section 1 is the multi-head one; we train the same model with
# $H/2$ key/value heads and with one, on the same batches for the same number of steps — and the multi-head
# model once more with another seed (other initial weights, other batches), to see how much a run moves by
# chance alone.

# %%
variants = {"MHA": (H, runs["RoPE"]), "GQA": (H // 2, train(make_llama(n_kv_heads=H // 2))),
            "MQA": (1, train(make_llama(n_kv_heads=1))),
            "MHA, another seed": (H, train(make_llama(n_kv_heads=H, seed=1), seed=1))}
gqa_rows = [{"attention": kind, "key/value heads": n_kv, "parameters": run["parameters"],
             "cache bytes per token": kv_cache_bytes_per_token(dataclasses.replace(rope_model.config, n_kv_heads=n_kv),
                                                               bytes_per_value=4),
             "val loss": run["val"], "seconds": run["seconds"]} for kind, (n_kv, run) in variants.items()]
viz.show_table(gqa_rows, title=f"{S.steps} steps each (cache in float32)")
print("val loss minus that of the first multi-head run:",
      {r["attention"]: round(r["val loss"] - gqa_rows[0]["val loss"], 3) for r in gqa_rows[1:]})
assert all(r["val loss"] < math.log(V) - 0.5 for r in gqa_rows)               # all well below a uniform guess
assert gqa_rows[1]["parameters"] < gqa_rows[0]["parameters"] and gqa_rows[2]["parameters"] < gqa_rows[1]["parameters"]
if S.profile == "class":                                                        # the class run's reading below
    loss = {r["attention"]: r["val loss"] for r in gqa_rows}
    assert max(loss["GQA"], loss["MQA"], loss["MHA, another seed"]) < loss["MHA"]  # the first run is the high one
    seed_effect = loss["MHA"] - loss["MHA, another seed"]
    position_gap = runs["learned positions"]["val"] - loss["MHA"]
    assert 2 / 3 * position_gap < seed_effect < position_gap                   # section 1: more than two thirds

# %% [markdown]
# In the class run both variants came out *lower* than the multi-head run (GQA 2.136, MQA 2.144, against
# 2.295) — but so did the multi-head model with another seed (2.138): the change of seed alone moved it by
# 0.157, about as much as either variant differs, so these gaps say nothing about the attention variant.
# (GQA and MQA share the first run's seed and batches, yet they land with the second run: three of the four
# runs lie close together (2.136 to 2.144), and the first multi-head run — the RoPE model of section 1 — is
# the one apart, on the high side. With another seed the RoPE model lies further below learned positions
# (2.138 against 2.516) than in section 1's table. The learned-position model ran with one seed only, so its
# own scatter is unknown: section 1's gap stays a single-seed comparison.) Runs this short and this small
# cannot measure the quality cost of sharing keys and values — Ainslie et al. (2023) needed large models for
# that — but they do show the sure part: the cache column. And the cache is where the saving lies: training processes
# all positions at once and never reads a cache, while *generating* reads the whole cache at every step.
#
# ## 4. FlashAttention: exact attention, one tile at a time
#
# Written out, attention builds the $T \times T$ score matrix $S = QK^\top/\sqrt d$, its softmax $P$, then
# $PV$ — memory quadratic in $T$, and on a GPU a round trip of $S$ and $P$ through slow high-bandwidth
# memory. FlashAttention (Dao et al. 2022) never builds $S$: it visits the keys tile by tile and keeps, for
# each query row, three running quantities. The trick is the **online softmax** (Milakov & Gimelshein
# 2018). For one row, after the tiles seen so far, keep the running max $m$, the running denominator
# $\ell = \sum_j e^{s_j - m}$ and the running unnormalised output $a = \sum_j e^{s_j - m} v_j$. A new tile
# with scores $s'$ and values $V'$:
#
# $$m_{new} = \max(m, \max_j s'_j), \quad P = e^{s' - m_{new}}, \quad
#   \ell_{new} = e^{m - m_{new}}\,\ell + \textstyle\sum_j P_j, \quad a_{new} = e^{m - m_{new}}\, a + P V'.$$
#
# Everything accumulated so far was exponentiated against the old max; multiplying by $e^{m - m_{new}}$
# re-expresses it against the new one. After the last tile the output is $a / \ell$ — *exactly* the
# softmax-weighted sum, not an approximation. We check it on one row, two keys at a time:

# %%
torch.manual_seed(4)
s, v = torch.randn(10), torch.randn(10, 3)                                      # one query row: 10 scores
m, l, a = torch.tensor(float("-inf")), torch.tensor(0.0), torch.zeros(3)  # noqa: E741 - l is the paper's ℓ
for j in range(0, 10, 2):                                                       # tiles of 2 keys
    tile, v_tile = s[j:j + 2], v[j:j + 2]
    m_new = torch.maximum(m, tile.max())
    P = torch.exp(tile - m_new)
    l = torch.exp(m - m_new) * l + P.sum()  # noqa: E741
    a = torch.exp(m - m_new) * a + P @ v_tile
    m = m_new
print("online:", [f"{x:.6f}" for x in (a / l).tolist()])
print("direct:", [f"{x:.6f}" for x in (torch.softmax(s, 0) @ v).tolist()])
assert torch.allclose(a / l, torch.softmax(s, 0) @ v, atol=1e-6)

state = (torch.full((1, 1), float("-inf")), torch.zeros(1, 1), torch.zeros(1, 3))   # coursekit's step: (m, ℓ, acc)
for j in range(0, 10, 2):
    state = online_softmax_update(*state, s[None, j:j + 2], v[j:j + 2])
assert torch.allclose(state[0][0, 0], m) and torch.allclose(state[1][0, 0], l) and torch.allclose(state[2][0], a)

# %% [markdown]
# `coursekit.llama.flash.tiled_attention` runs this update over tiles of queries and keys (Algorithm 1 of
# the paper, in plain PyTorch loops); with a causal mask it skips the key tiles that lie entirely in a query
# tile's future (the timing cell below counts the tiles it computes) and masks the diagonal tile. It must
# equal PyTorch's fused attention, with and without the mask, also when $T$ is not a multiple of the tile:

# %%
# NBVAL_CHECK_OUTPUT
torch.manual_seed(5)
q, k, v = (torch.randn(2, 4, 200, 32) for _ in range(3))                        # T = 200, tiles of 64
for causal in (False, True):
    ours = tiled_attention(q, k, v, causal=causal, block_size=64)
    reference = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    err = (ours - reference).abs().max().item()
    print(f"causal={causal}: tiled attention equals F.scaled_dot_product_attention to 1e-6: {err < 1e-6}")
    assert err < 1e-6

# %% [markdown]
# **The memory it saves.** We measure the peak bytes of the tensors alive during one forward pass of the
# written-out attention (`naive_attention`) and of the tiled one, as $T$ grows: `coursekit.bench.cost.PeakMemory`
# (derived in notebook 07) sees every tensor an operator creates and, through a finaliser, when it is freed.
# It counts a storage the first time an operator returns a tensor on it — a *slice* of an input too — so we
# pass it the inputs (batch 1, 4 heads of 32), which exist anyway, as `exclude`. Next to the
# measurement, our accounting of the largest intermediates: the written-out attention holds the $(H, T, T)$
# scores and their softmax (and the $T \times T$ causal mask); the tiled one holds the output, a tile of
# scores and its exponentials $(H, b, b)$, and four $(H, b, d)$ blocks of one query tile (the scaled queries,
# the accumulator old and new, $PV$).

# %%
def naive_bytes(T: int, H: int = 4, d: int = 32) -> int:
    return 4 * (2 * H * T * T + H * T * d) + T * T                  # scores, softmax, output (float32); bool mask


def tiled_bytes(T: int, b: int, H: int = 4, d: int = 32) -> int:
    return 4 * (H * T * d + 2 * H * b * b + 4 * H * b * d)          # output; a tile and its exp; 4 (b, d) blocks


memory = []
for T in S.flash_lengths:
    g = torch.Generator().manual_seed(T)
    q, k, v = (torch.randn(1, 4, T, 32, generator=g) for _ in range(3))
    row = {"T": T}
    with torch.no_grad():
        for name, attend in (("naive", partial(naive_attention, q, k, v, causal=True)),
                             ("tiled", partial(tiled_attention, q, k, v, causal=True, block_size=S.flash_block))):
            with PeakMemory(exclude=(q, k, v)) as peak:
                attend()
            row[f"{name} peak MiB"] = peak.peak / MiB
            seconds, _ = runtime.timed(attend, device)                          # one run, no repetition
            row[f"{name} ms"] = 1000 * seconds
    row["naive accounted MiB"] = naive_bytes(T) / MiB
    row["tiled accounted MiB"] = tiled_bytes(T, S.flash_block) / MiB
    memory.append(row)
viz.show_table(memory, title=f"causal attention, batch 1, 4 heads of 32, tiles of {S.flash_block}: forward pass",
               floatfmt="{:.2f}")
fig, ax = plt.subplots(figsize=(6, 3.5))
Ts = [r["T"] for r in memory]
for name, style in (("naive", "o-"), ("tiled", "s-")):
    ax.plot(Ts, [r[f"{name} peak MiB"] for r in memory], style, label=f"{name}: measured")
    ax.plot(Ts, [r[f"{name} accounted MiB"] for r in memory], style[0] + ":", color=ax.lines[-1].get_color(),
            label=f"{name}: largest intermediates")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("sequence length T")
ax.set_ylabel("peak tensor memory (MiB)")
ax.legend(fontsize=8)
plt.show()
growth = {name: memory[-1][f"{name} peak MiB"] / memory[-2][f"{name} peak MiB"] for name in ("naive", "tiled")}
print(f"last doubling of T multiplies the peak by {growth['naive']:.2f} (naive) and {growth['tiled']:.2f} (tiled)")
print("time of the written-out attention / time of the tiled one, per T:",
      {r["T"]: round(r["naive ms"] / r["tiled ms"], 1) for r in memory})
assert growth["naive"] > 3.5 and growth["tiled"] < 2.5                          # T² against T
assert all(r["tiled peak MiB"] < r["naive peak MiB"] for r in memory if r["T"] >= 256)
for name in ("naive", "tiled"):                                                 # the accounting explains the peak
    ratio = memory[-1][f"{name} peak MiB"] / memory[-1][f"{name} accounted MiB"]
    print(f"{name}: measured / accounted at T = {memory[-1]['T']:,}: {ratio:.2f}")
    assert 0.8 < ratio < 1.25
if S.profile == "class":                                # one timing each, 1.6× or more apart in the stored run
    assert all((r["tiled ms"] > r["naive ms"]) == (r["T"] <= 512) for r in memory)   # slower up to 512, then faster


def tiles_computed(T: int, causal: bool) -> int:
    """How many tiles of scores `tiled_attention` computes: it calls the online-softmax step once per tile."""
    with mock.patch.object(flash, "online_softmax_update", wraps=flash.online_softmax_update) as step:
        tiled_attention(*(torch.zeros(1, 1, T, 8) for _ in range(3)), causal=causal, block_size=S.flash_block)
    return step.call_count


tiles = {T: (tiles_computed(T, causal=True), tiles_computed(T, causal=False)) for T in S.flash_lengths}
print(f"tiles of {S.flash_block} × {S.flash_block} scores computed, with the causal mask / without it, per T:",
      {T: f"{a} / {b}" for T, (a, b) in tiles.items()})
assert all(a < b for a, b in tiles.values())
if S.profile == "class":                                # the share of tiles skipped moves less than the time ratio
    time_ratio = [r["naive ms"] / r["tiled ms"] for r in memory]
    tile_ratio = [b / a for a, b in tiles.values()]
    assert time_ratio[-1] / time_ratio[0] > 1.5 * tile_ratio[-1] / tile_ratio[0]

# %% [markdown]
# The measured peaks follow the accounting (the ratios printed above): the written-out attention's memory is
# quadratic in $T$ (close to ×4 per doubling: the two $T \times T$ matrices), the tiled one's grows only with the
# output, linearly (at most ×2, and less while the constant tile still weighs). The times (one run each, in
# milliseconds) are mixed. Up to $T$ = 512 the Python loop was the slower one (asserted, class run): the
# ratios printed above are 0.5, 0.6 and 0.7 for $T$ = 128, 256 and 512. At $T$ = 1,024 and 2,048 it was the
# faster one (ratios 1.7 and 2.4): in the stored run 33.75 ms against 56.23 ms, and 108.97 ms against
# 259.92 ms. The turn comes with a jump in the written-out attention's time, from 6.57 ms at $T$ = 512 to
# 56.23 ms at 1,024 and 259.92 ms at 2,048, while its peak memory grew ×3.97 at the last doubling. Nothing here
# measures why, and a single timing on a shared machine can be off.
#
# What the code does differently is what we can show. The written-out attention computes all $T^2$ scores, the
# masked future ones included, and writes two $(4, T, T)$ matrices (most of the 133 MiB peak measured at
# $T$ = 2,048). The tiled one works on one small tile at a time and, with the causal mask, skips the key tiles
# that lie entirely in a query tile's future: the tile counts printed last show it computes only the tiles on
# or below the diagonal, about half of them once $T$ is many tiles long. The share it skips changes far less
# with $T$ than the time ratio does (0.5 to 2.5), so on its own it does not explain why the order of the two
# turns between 512 and 1,024.
#
# FlashAttention's speed on a GPU comes, the paper says, from running this loop inside one fused kernel, with
# a tile in the fast on-chip memory, so that $S$ and $P$ never travel to and from the GPU's main memory;
# `F.scaled_dot_product_attention` (notebook 07's fused path) dispatches to such kernels when it can.
#
# ## 5. The Llama decoder, and a Hugging Face checkpoint
#
# Put together, one Llama block is
#
# $$h = x + \mathrm{GQA}(\mathrm{RMSNorm}(x)) \;\text{(RoPE on } q, k\text{, causal)}, \qquad
#   \mathrm{out} = h + \mathrm{SwiGLU}(\mathrm{RMSNorm}(h)),$$
#
# with a final RMSNorm and an output layer, no biases, no position embedding. To check that
# `coursekit.llama` computes what Llama computes, we build a small *random* `transformers.LlamaForCausalLM`
# locally (nothing is downloaded), save it as a checkpoint folder and import it with `from_hf`. Hugging Face
# uses the half-split RoPE pairs too, so the weights copy over without any permutation.

# %%
# NBVAL_CHECK_OUTPUT
import transformers  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

hf_logging.disable_progress_bar()
hf_logging.set_verbosity_error()
torch.manual_seed(6)
hf_config = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=172, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                     rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=None,
                                     eos_token_id=None, pad_token_id=None)
hf = transformers.LlamaForCausalLM(hf_config).eval()
with torch.no_grad():                                       # move the gains away from 1: a swapped norm would show
    for name, p in hf.named_parameters():
        if name.endswith("norm.weight"):
            p.uniform_(0.5, 1.5)
with tempfile.TemporaryDirectory() as folder:
    hf.save_pretrained(folder)
    llama = from_hf(folder)
for name, p in llama.blocks[0].named_parameters():
    print(f"  blocks.0.{name:<24} {tuple(p.shape)}")
n_hf = sum(p.numel() for p in hf.parameters())
print(f"parameters: {n_parameters(llama.config):,} = Hugging Face's {n_hf:,}")
ids = torch.randint(0, 97, (2, 64))
with runtime.exact_matmul(), torch.no_grad():
    err = (llama(ids) - hf(ids).logits).abs().max().item()
prompt = ids[:, :8]
hf_text = hf.generate(prompt, max_new_tokens=24, do_sample=False, attention_mask=torch.ones_like(prompt),
                      pad_token_id=0)
same = torch.equal(llama.generate(prompt, 24), hf_text)
print("logits equal to 1e-5:", err < 1e-5, "| greedy continuations identical:", same)
assert err < 1e-5 and same and n_parameters(llama.config) == n_hf

# %% [markdown]
# The block has no bias anywhere, $W_K$ and $W_V$ are half the width of $W_Q$ (2 key/value heads for 4
# query heads), and SwiGLU has its three matrices. A real Llama checkpoint folder (none is downloaded
# here) goes through the same `from_hf`. `config_from_hf` is the step that checks the config: it is written to
# refuse, naming the setting, the ones its docstring lists as computing something the course's model does
# not (RoPE scaling, biases, another activation, another head width). Here we try two of them, handing it
# the config above with one setting changed:

# %%
for change in ({"rope_scaling": {"rope_type": "linear", "factor": 4.0}}, {"attention_bias": True}):
    try:
        config_from_hf(hf_config.to_dict() | change)
    except ValueError as error:
        print(f"{change} → refused: {error}")
    else:
        raise AssertionError(f"{change} must be refused")

# %% [markdown]
# ## 6. Side by side: a GPT-2 block against a Llama block
#
# Last, the whole change at once. The GPT of notebook 10 (`coursekit.gpt.model.GPT`: learned positions,
# LayerNorm, GELU MLP of width 4C, tied embeddings; no biases, as in notebook 10's recipe) against the
# course's Llama (RoPE, RMSNorm, SwiGLU of width ⅔·4C, tied embeddings; multi-head attention, since GQA
# is about generation memory, which this race does not measure). Same width, depth and heads, so the same
# parameters up to GPT's position table; same optimiser and learning rate.
#
# **Equal training time**, not equal steps: what counts in practice is the quality a compute budget buys,
# and a step of one block need not cost what a step of the other costs. Each model gets the same wall-clock
# budget, to within one chunk of steps (a model stops after the chunk that takes its clock past the budget, so
# the table's training seconds overshoot it a little), and its learning-rate schedule (warm-up,
# then cosine decay) runs on its own clock, so each ends its decay when its time is up (as in Geiping &
# Goldstein's 2022 *Cramming*). The two models train in alternating chunks of steps, so that a slowdown of the
# machine falls on both rather than on whichever would run second; the validation loss is measured after each chunk,
# outside the clock.

# %%
class Race:
    """One model's run against a time budget: its clock counts training time only (not evaluations)."""

    def __init__(self, name: str, model: nn.Module, seconds: float, warmup: float = 0.05) -> None:
        self.name, self.model, self.budget, self.warmup = name, model, seconds, warmup
        self.clock, self.steps, self.curve = 0.0, 0, []                          # curve: (seconds, steps, val)
        self.optimizer = optimizer_for(model)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda _: self.lr_factor())
        self.batches = torch.Generator().manual_seed(0)                          # the same batches for both
        self.curve.append((0.0, 0, loss_by_position(model, CONTEXT).mean().item()))

    def lr_factor(self) -> float:
        """Linear warm-up over the first 5% of the budget, then cosine decay to 0.1 at the end — in seconds."""
        t = min(1.0, self.clock / self.budget)
        if t < self.warmup:
            return max(t / self.warmup, 0.01)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (t - self.warmup) / (1 - self.warmup)))

    def batch(self, step: int):
        now = time.perf_counter()
        self.clock += now - self.last                                            # the time of the previous step
        self.last = now
        return tuple(t.to(device) for t in get_batch(train_ids, S.batch, CONTEXT, self.batches))

    def evaluate(self, model: nn.Module) -> dict:
        self.clock += time.perf_counter() - self.last                            # the last step of the chunk
        return {"val": loss_by_position(model, CONTEXT).mean().item()}

    def run_chunk(self, steps: int) -> None:
        self.last = time.perf_counter()
        history = fit(self.model, self.optimizer, self.batch, next_char_loss, steps=steps, scheduler=self.scheduler,
                      eval_fn=self.evaluate, progress=False)
        self.steps += steps
        self.curve.append((self.clock, self.steps, history.evals[-1][1]["val"]))


torch.manual_seed(0)
gpt = GPT(GPTConfig(vocab_size=V, max_len=CONTEXT, n_layers=L, n_heads=H, d_model=C, bias=False)).to(device)
races = [Race("GPT-2 block", gpt, S.race_seconds), Race("Llama block", make_llama(), S.race_seconds)]
n_gpt, n_llama = (count_parameters(r.model) for r in races)
print(f"parameters: GPT-2 block {n_gpt:,}, Llama block {n_llama:,}; the difference is GPT's position table "
      f"({CONTEXT} × {C} = {CONTEXT * C:,})")
assert n_gpt - n_llama == CONTEXT * C
while any(r.clock < r.budget for r in races):
    for r in races:
        if r.clock < r.budget:
            r.run_chunk(S.race_chunk)
viz.show_table([{"model": r.name, "parameters": count_parameters(r.model), "steps": r.steps,
                 "training seconds": r.clock, "val loss": r.curve[-1][2]} for r in races],
               title=f"equal training time: {S.race_seconds:g} s each")

# %%
def val_at(race: Race, seconds: float) -> float:
    """The race's validation loss at `seconds` of training, read off its curve (linear interpolation)."""
    for (t0, _, v0), (t1, _, v1) in zip(race.curve, race.curve[1:]):
        if t0 <= seconds <= t1:
            return v0 + (v1 - v0) * (seconds - t0) / (t1 - t0)
    return race.curve[-1][2]


fig, ax = plt.subplots(figsize=(6.5, 3.8))
for r in races:
    ax.plot([t for t, _, _ in r.curve], [v for _, _, v in r.curve], marker="o", ms=3, label=r.name)
ax.set_xlabel("training seconds (wall clock, evaluations excluded)")
ax.set_ylabel("validation loss (nats/char)")
ax.set_ylim(top=min(ax.get_ylim()[1], races[0].curve[1][2] + 0.3))
ax.set_title("GPT-2 block vs Llama block, same training-time budget")
ax.legend()
plt.show()
common = min(r.clock for r in races)                                            # both have run at least this long
gpt_val, llama_val = (val_at(r, common) for r in races)
later = [(t, val_at(races[0], t), val_at(races[1], t)) for t in (0.5 * common, 0.75 * common, common)]
leader, trailer = ("Llama block", "GPT-2 block") if llama_val < gpt_val else ("GPT-2 block", "Llama block")
gap = abs(gpt_val - llama_val)
print(f"at {common:.1f} training seconds: GPT-2 block {gpt_val:.3f}, Llama block {llama_val:.3f} → the {leader} "
      f"is ahead by {gap:.3f} nats/char ({100 * gap / max(gpt_val, llama_val):.1f}% lower than the {trailer})")
print("GPT-2 minus Llama at 50%, 75% and 100% of the time (> 0: Llama ahead):",
      [round(a - b, 3) for _, a, b in later])
print("steps per training second:", {r.name: round(r.steps / r.clock, 1) for r in races})
print("last two evaluations (training seconds, val loss):",
      {r.name: [(round(t, 1), round(v, 3)) for t, _, v in r.curve[-2:]] for r in races})
if S.profile != "quick" and device.type == "cpu":   # quick: too short to call; a GPU: see below
    assert later[-1][1] > later[-1][2]              # the Llama block ahead at the end (earlier: machine-dependent)
if S.profile == "class" and device.type == "cpu":   # the class run's reading below
    assert all(gpt_at > llama_at for _, gpt_at, llama_at in later)                 # ahead at 50% and 75% too
    assert later[-1][1] - later[-1][2] < seed_effect                                # less than a change of seed
gpu_run = json.loads((PROJECT_DATA / "gpu_runs" / "2026-11-27_h200.json").read_text())   # a recorded GPU run
race = gpu_run["race_13_class"]
print(f"recorded on an {gpu_run['device']['gpu']} (class profile, {race['seconds_each']:g} s each): steps "
      f"{race['gpt2_block']['steps']:,} vs {race['llama_block']['steps']:,} "
      f"({race['gpt2_block']['steps_per_second']} vs {race['llama_block']['steps_per_second']} per second), "
      f"val loss {race['gpt2_block']['val_loss']} vs {race['llama_block']['val_loss']}; GPT-2 minus Llama at "
      f"50%, 75%, 100%: {race['gpt2_minus_llama_at_50_75_100_percent']}")

# %% [markdown]
# In the class run, with nearly equal parameters (455,616 and 449,472: GPT-2's position table is the difference) and
# the same training-time budget, the Llama block is ahead at the end of the run (asserted, at the shorter of the two
# clocks: the table's last values are at 35.1 and 36.0 s), and also at half and three quarters of the time (asserted):
# GPT-2 minus Llama is 0.074, 0.055 and 0.050 nats/char at 50%, 75% and 100% (printed above). Each block's last two
# evaluations are printed above too. On this CPU the two blocks ran at similar speeds, so they stopped after similar
# numbers of steps (500 each, the table). It is a single-seed measurement with one recipe for both (notebook 10's;
# no other learning rate was tried for either block), and the final gap is smaller than the 0.157 by which a change of
# seed moved the RoPE model in section 3: read it as suggestive, not decisive. Of the changes one by one, this
# notebook ablates the positions (section 1) and the number of key/value heads (section 3); the papers cited here
# ablate theirs at larger scale. (The `quick` profile trains for a few seconds only: its comparison is printed, not
# asserted.)
#
# Equal *time* depends on the machine, too. On the CPU of the class run the two blocks ran at similar
# speeds (14.3 and 13.9 steps per second, GPT-2 first: printed above). In the recorded run on an H200
# printed above (the README's *On a GPU*) the gap is wider: the Llama block managed 79.0 steps per second
# against the GPT-2 block's 128.5 (nothing here measures why; the Llama block does run more, smaller
# operations per step: the rotations of RoPE, RMSNorm, SwiGLU's third matrix). There the GPT-2 block was ahead
# at half and three quarters of the time (by 0.012 and 0.008 nats/char) and the Llama block only at the end
# (by 0.013, printed from unrounded losses). So the assertions above check the CPU run only, and on a GPU the
# race is printed, not asserted; at the scale of real models the comparison is the papers'.
#
# ## Summary
#
# - **RoPE** rotates each pair of query/key dimensions by $m\theta_i$; the score of a rotated query and key
#   depends only on their offset. Interleaved (paper) and half-split (Hugging Face) pairs are the same model
#   up to a permutation of $W_q, W_k$. On the character task it ended with a lower loss than learned positions
#   (2.295 against 2.516 in the class run, one seed each), and it runs beyond the trained context, but there
#   its loss is higher than at positions 32–63 (+0.037 at positions 64–127, up to twice the trained length;
#   +0.281 at 128–255, up to four times): longer inputs are possible, not free.
# - **RMSNorm** is LayerNorm without centring and bias; **SwiGLU** is a gated MLP whose width ⅔ · 4C keeps
#   the weights of a bias-free 4C GELU MLP.
# - **Grouped-query / multi-query attention** share key/value heads across query heads: the KV cache shrinks
#   by $H / H_{kv}$ (Llama 2 70B: 320 KiB instead of 2.5 MiB per token), and only $W_K$, $W_V$ lose
#   parameters; what it costs in quality is a question for models and runs far larger than ours (in ours,
#   GQA and MQA came out lower than multi-head attention by about as much as a change of seed moves a run).
# - **FlashAttention** computes exact attention tile by tile with the online softmax (rescale the running sum
#   and output by $e^{m_{old} - m_{new}}$); memory becomes linear in $T$. On our CPU the timings were mixed
#   (class run, one timing each): the plain-Python tiled loop was slower than the written-out attention up to
#   $T$ = 512 and faster at 1,024 and 2,048; nothing here measures why. The speed FlashAttention reports on
#   GPUs comes, the paper says, from a fused kernel.
# - The course's `Llama` reproduces Hugging Face's `LlamaForCausalLM` (logits to 1e-5, greedy text). With
#   parameters equal up to GPT-2's position table and the same time budget, its block was ahead of the GPT-2
#   block on Tiny Shakespeare in the class run on a CPU (by 0.050 nats/char at the shorter clock, one seed:
#   less than the 0.157 a change of seed moved a run in section 3), while in the recorded H200 run the GPT-2
#   block led at half and three quarters of the time and the Llama block at the end.
#
# ## Exercises

# %%
# EXERCISE 1: RoPE — rotate queries or keys to their positions
def rope(x, positions):
    """x (B, H, T, d) → x rotated: pair i = dims (i, i + d/2), row t turned by positions[t]·θ_i,
    θ_i = 10000^(−2i/d), i = 0 … d/2 − 1. positions (T,) are ints and need not start at 0."""
    ### BEGIN SOLUTION
    d = x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)      # (d/2,)
    angles = positions.float()[:, None] * theta[None, :]                       # (T, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    ### END SOLUTION


check_rope(rope)

# %%
# EXERCISE 2: causal attention with RoPE
def rope_attention(q, k, v):
    """q, k, v (B, H, T, d) at positions 0 … T−1 → (B, H, T, d): causal softmax(q_rot k_rotᵀ / √d) v, with the
    queries and keys rotated by your `rope` (the values are not)."""
    ### BEGIN SOLUTION
    positions = torch.arange(q.shape[-2])
    q, k = rope(q, positions), rope(k, positions)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ### END SOLUTION


check_rope_attention(rope_attention)

# %%
# EXERCISE 3: RMSNorm
def rms_norm(x, weight, eps):
    """x (..., C), weight (C,) → x / √(mean(x²) + eps) · weight, the mean over the last dim."""
    ### BEGIN SOLUTION
    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight
    ### END SOLUTION


check_rms_norm(rms_norm)

# %%
# EXERCISE 4: one step of the online softmax
def online_softmax_step(m, l, acc, scores_tile, v_tile):  # noqa: E741 - l is the paper's ℓ
    """Fold one tile of keys into each query row's running max m (..., T_q, 1), denominator l (..., T_q, 1) and
    unnormalised output acc (..., T_q, d_v); scores_tile (..., T_q, b), v_tile (..., b, d_v). Return the new
    (m, l, acc). A row masked so far (m = −∞) may meet a tile that is all −∞: no NaN, its l and acc stay 0."""
    ### BEGIN SOLUTION
    m_new = torch.maximum(m, scores_tile.amax(dim=-1, keepdim=True))
    m_safe = m_new.masked_fill(m_new == float("-inf"), 0.0)                   # a fully masked row: subtract 0
    P = torch.exp(scores_tile - m_safe)
    rescale = torch.exp(m - m_safe)                                            # exp(m_old − m_new)
    return m_new, rescale * l + P.sum(dim=-1, keepdim=True), rescale * acc + P @ v_tile
    ### END SOLUTION


check_online_softmax_step(online_softmax_step)

# %%
# EXERCISE 5: repeat key/value heads for grouped-query attention
def repeat_kv(x, n_rep):
    """(B, H_kv, T, d) → (B, H_kv · n_rep, T, d): key/value head g serves query heads g·n_rep … (g+1)·n_rep − 1."""
    ### BEGIN SOLUTION
    return torch.repeat_interleave(x, n_rep, dim=1)
    ### END SOLUTION


check_repeat_kv(repeat_kv)

# %% [markdown]
# **Exercise 6 (written).** Llama 2 70B serves a batch of 16 conversations of 4,096 tokens each in bfloat16.
# (a) How much memory does its KV cache take with its 8 key/value heads, and how much would it take with
# multi-head attention (64)? Compare both with the memory of the weights. (b) Why does grouping the keys and
# values save memory during generation but almost nothing during training?
#
# === BEGIN MARK SCHEME ===
# (a) Per token 2 · 80 layers · 8 heads · 128 · 2 bytes = 327,680 bytes = 320 KiB; × 16 × 4,096 tokens =
# 20 GiB (21.5 GB). With 64 key/value heads: 2.5 MiB per token, 160 GiB (172 GB) — more than the weights,
# 70 · 10⁹ · 2 bytes ≈ 140 GB (130 GiB); with GQA the cache is about a sixth of them. Full marks need the
# formula 2 · L · H_kv · d · bytes (keys AND values, every layer) and the comparison.
# (b) In training all T positions are processed in one parallel pass: each key/value is computed once and
# used at once, nothing is kept between steps, and the attention FLOPs (H query heads against T keys) do not
# change with H_kv; only W_K and W_V shrink, a small share of the parameters. In generation every new token
# reads the cached keys and values of all earlier tokens in every layer: memory (and the bandwidth to read it
# each step, which bounds the speed of decoding) is proportional to H_kv.
# === END MARK SCHEME ===
