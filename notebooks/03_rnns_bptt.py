# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 — Recurrent networks, backpropagation through time, vanishing gradients
#
# A feed-forward classifier sees a fixed-size input. Language is a *sequence*: a recurrent network
# reads it one symbol at a time and carries a state forward. This notebook builds Elman's simple
# recurrent network from its equation, trains it as a character-level language model on Tiny
# Shakespeare, and takes apart how it learns — backpropagation through time — and why that is hard.
#
# **Learning goals**
# - Write the Elman step h_t = tanh(W x_t + V h_{t−1} + b), y_t = U h_t and check it equals `nn.RNN`.
# - Tell a *transducer* (one output per step) from an *acceptor* (one vector per sequence).
# - Unroll the network in time; compute the gradient of a late loss on an early state as a product
#   of Jacobians; check a hand-written BPTT against autograd.
# - Use truncated BPTT (detach every k steps) and explain why it is *not* a window of k steps.
# - Measure vanishing and exploding gradients for several spectral radii; see tanh saturation and
#   what gradient clipping does.
# - Train a character-level language model with teacher forcing, report validation perplexity and
#   sample text with a temperature.
#
# The figures quoted in the text are those of the stored run in the `class` profile; the `quick`
# profile, which CI runs, trains less and prints other numbers.

# %%
import copy
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from coursekit import data, metrics, runtime
from coursekit.decoding import apply_temperature
from coursekit.exercises import check_elman_step, check_state_gradients, check_truncated_bptt
from coursekit.rnn import bptt, char_lm
from coursekit.rnn import layers as rnn
from coursekit.viz import plots as viz
from coursekit.viz import widgets

S = runtime.sizes(
    quick=dict(hidden=64, steps=150, batch=32, seq_len=64, lr=3e-3, val_chars=20_000, sample_chars=150),
    class_=dict(hidden=128, steps=1500, batch=32, seq_len=64, lr=3e-3, val_chars=111_540, sample_chars=300),
    full=dict(hidden=512, steps=4000, batch=64, seq_len=128, lr=2e-3, val_chars=111_540, sample_chars=500),
)
device = runtime.device()
print(S, device)

# %% [markdown]
# ## 1. The Elman network from its equation
#
# Elman (1990) feeds the previous hidden state back as an extra input:
#
# $$h_t = \tanh(W x_t + V h_{t-1} + b), \qquad y_t = U h_t .$$
#
# The same W, V, b, U are used at every step. We write the loop ourselves and compare it with
# PyTorch's `nn.RNN`, whose parameters are `weight_ih_l0` (= W), `weight_hh_l0` (= V) and *two*
# biases `bias_ih_l0 + bias_hh_l0` (= b; one vector would do: the check below uses their sum).

# %%
def elman_forward(x, h0, W, V, b):
    """x (T, B, I), h0 (B, H) -> all states (T, B, H)."""
    h, states = h0, []
    for x_t in x:                                   # one step per time position
        h = torch.tanh(x_t @ W.T + h @ V.T + b)     # (B, H)
        states.append(h)
    return torch.stack(states)


torch.manual_seed(0)
T, B, D_in, H = 6, 3, 4, 5
torch_rnn = nn.RNN(D_in, H)                           # (T, B, I) layout, tanh
x = torch.randn(T, B, D_in)
h0 = torch.zeros(B, H)
ours = elman_forward(x, h0, torch_rnn.weight_ih_l0, torch_rnn.weight_hh_l0,
                     torch_rnn.bias_ih_l0 + torch_rnn.bias_hh_l0)
theirs, h_n = torch_rnn(x, h0[None])
assert torch.allclose(ours, theirs, atol=1e-6) and torch.allclose(ours[-1], h_n[0], atol=1e-6)
print("max |ours - nn.RNN| =", (ours - theirs).abs().max().item())

# %% [markdown]
# `coursekit.rnn.cells` has the same step as a module (`RNNCell`), `coursekit.rnn.layers` the `nn.RNN` interface
# (`RNN`: several layers, bidirectional, `batch_first`, lengths), loading weights with `from_torch`.
# Its tests (`tests/rnn/test_rnn.py`, not run here) compare outputs *and gradients* with PyTorch's to 1e-5;
# the cell below compares the forward outputs of one configuration.

# %%
# NBVAL_CHECK_OUTPUT
deep = nn.RNN(D_in, H, num_layers=2, bidirectional=True, batch_first=True)
ours_deep = rnn.from_torch(deep)
xb = torch.randn(B, T, D_in)
out, h_n = ours_deep(xb)
out_ref, h_n_ref = deep(xb)
assert torch.allclose(out, out_ref, atol=1e-5) and torch.allclose(h_n, h_n_ref, atol=1e-5)
print("output", tuple(out.shape), "= (B, T, 2·H);  h_n", tuple(h_n.shape), "= (layers·directions, B, H)")

# %% [markdown]
# ## 2. Two ways to use an RNN: transducer and acceptor
#
# * A **transducer** reads x_1 … x_T and emits y_t at *every* step (tagging, language modelling).
# * An **acceptor** (or encoder) keeps only the final state h_T as one vector for the whole sequence
#   (classification, the encoder of a seq2seq model).
#
# In a padded batch the acceptor must read h at each sequence's *true* last step. With `lengths`,
# the outputs past each length are zero (the last line below checks it on the length-2 sequence) and the
# final state is taken at the true length (asserted). `tests/rnn/test_rnn.py` (not run here) checks
# that this equals what `nn.RNN` returns for a `PackedSequence`.

# %%
# NBVAL_CHECK_OUTPUT
torch.manual_seed(1)
net = bptt.ElmanNetwork(input_size=4, hidden_size=5, output_size=3)      # h_t and y_t = U h_t
lengths = torch.tensor([6, 2, 4])
x_pad = torch.randn(3, 6, 4)                                              # (B, T, I), right-padded
y, h_T = net(x_pad, lengths=lengths)
print("transducer: y", tuple(y.shape), "(one output per step)")
print("acceptor:   h_T", tuple(h_T[0].shape), "(one vector per sequence)")
h_all, _ = net.rnn(x_pad, lengths=lengths)
at_true_end = h_all[torch.arange(3), lengths - 1]                         # (B, H)
assert torch.equal(h_T[0], at_true_end)
print("outputs past the length are zero:", bool((y[1, 2:] == 0).all()))

# %% [markdown]
# ## 3. Backpropagation through time
#
# To train, unroll the loop into a feed-forward graph with one copy of the cell per step. The copies
# *share* W, V, U, so a weight's gradient is the sum of the contributions of every step. The loss is
# the sum of per-step losses L = Σ_t L_t.

# %%
def draw_unrolled(T=4):
    """The unrolled Elman network: shared weights on every copy; red = the path from L_4 back to h_1."""
    fig, ax = plt.subplots(figsize=(8, 3.4), dpi=80)
    for t in range(1, T + 1):
        for y_pos, label in ((0, f"$x_{t}$"), (1, f"$h_{t}$"), (2, f"$y_{t}$"), (3, f"$L_{t}$")):
            ax.text(t * 2, y_pos, label, ha="center", va="center", fontsize=13,
                    bbox=dict(boxstyle="round", fc="#ddeeff" if y_pos == 1 else "white"))
        for y0, name in ((0, "W"), (1, "U")):
            ax.annotate("", xy=(t * 2, y0 + 0.75), xytext=(t * 2, y0 + 0.25), arrowprops=dict(arrowstyle="->"))
            ax.text(t * 2 + 0.15, y0 + 0.5, name, fontsize=10)
        ax.annotate("", xy=(t * 2, 2.75), xytext=(t * 2, 2.25), arrowprops=dict(arrowstyle="->"))
        if t > 1:
            ax.annotate("", xy=(t * 2 - 0.35, 1.08), xytext=(t * 2 - 1.65, 1.08), arrowprops=dict(arrowstyle="->"))
            ax.text(t * 2 - 1, 1.2, "V", fontsize=10)
            ax.annotate("", xy=(t * 2 - 1.65, 0.85), xytext=(t * 2 - 0.35, 0.85),       # backward: red
                        arrowprops=dict(arrowstyle="->", color="C3", lw=2))
    ax.annotate("", xy=(2 * T + 0.35, 1.2), xytext=(2 * T + 0.35, 2.8),
                arrowprops=dict(arrowstyle="->", color="C3", lw=2))
    ax.set_xlim(1, 2 * T + 1)
    ax.set_ylim(-0.5, 3.5)
    ax.axis("off")
    ax.set_title("unrolled RNN: W, V, U shared by every step (black: forward);\n"
                 "∂L₄/∂h₁ flows back along the red path")
    plt.show()


draw_unrolled()

# %% [markdown]
# The gradient of a late loss on an early state goes through every step in between. With
# a_t = W x_t + V h_{t−1} + b and h_t = tanh(a_t), one step back is the Jacobian
#
# $$\frac{\partial h_t}{\partial h_{t-1}} = J_t = \operatorname{diag}(1 - h_t^2)\, V ,
# \qquad
# \frac{\partial L_4}{\partial h_1} = J_2^\top J_3^\top J_4^\top \,\frac{\partial L_4}{\partial h_4} .$$
#
# We compute this product explicitly and compare with autograd.

# %%
torch.manual_seed(2)
T, D_in, H, n_out = 4, 3, 5, 7
W, V, b = (torch.randn(*shape, dtype=torch.double) for shape in ((H, D_in), (H, H), (H,)))
U = torch.randn(n_out, H, dtype=torch.double)
xs, targets = torch.randn(T, D_in, dtype=torch.double), torch.randint(0, n_out, (T,))

h, hs = torch.zeros(H, dtype=torch.double, requires_grad=True), []
for t in range(T):
    h = torch.tanh(W @ xs[t] + V @ h + b)
    h.retain_grad()
    hs.append(h)
L4 = F.cross_entropy((U @ hs[-1])[None], targets[-1:])             # the loss at the last step only
L4.backward()

dL4_dh4 = U.T @ (torch.softmax(U @ hs[-1], 0) - F.one_hot(targets[-1], n_out).double()).detach()
J = {t: torch.diag(1 - hs[t - 1].detach() ** 2) @ V for t in range(2, T + 1)}   # J_t, t = 2..4 (1-based)
by_hand = J[2].T @ J[3].T @ J[4].T @ dL4_dh4
print("∂L4/∂h1 by Jacobian product:", by_hand.numpy().round(4))
print("∂L4/∂h1 by autograd:       ", hs[0].grad.numpy().round(4))
assert torch.allclose(by_hand, hs[0].grad, atol=1e-12)

# %% [markdown]
# The full backward pass of a tiny Elman transducer, written by hand in `bptt.elman_bptt`, sums the
# per-step contributions to the shared weights (∂L/∂V = Σ_t δa_t h_{t−1}^⊤ …). It must equal autograd
# on every parameter:

# %%
params = {name: p.clone().requires_grad_() for name, p in dict(W=W, V=V, b=b, U=U).items()}
manual = bptt.elman_bptt(xs, targets, params["W"], params["V"], params["b"], params["U"])
manual["loss"].backward()                                          # autograd through the same forward
rows = []
for name, p in params.items():
    err = (manual["d" + name] - p.grad).abs().max().item()
    rows.append({"parameter": name, "shape": str(tuple(p.shape)), "max |manual − autograd|": err})
    assert err < 1e-12
table = viz.show_table(rows, floatfmt="{:.1e}")

# %%
# NBVAL_CHECK_OUTPUT
print("gradient shapes:", {k: tuple(v.shape) for k, v in manual.items() if k.startswith("d")})

# %% [markdown]
# ## 4. Truncated BPTT — and why it is not a window
#
# A language model reads a text of a million characters; unrolling all of it for one gradient would
# keep a million steps of activations in memory for a single update. **Truncated BPTT** cuts the text
# into chunks of k steps. For every chunk: run the RNN *starting from the last state of the previous
# chunk*, backpropagate the chunk's loss, and then `detach()` the state — keep its *value*, drop its
# *graph*.
#
# So gradients flow back at most k steps, but the forward state still carries information from the
# very beginning (in principle "infinite memory"). A **window of k** would instead restart from
# h = 0 in every chunk, and could never use anything older than k steps. Let's measure both facts.

# %%
torch.manual_seed(3)
k, T_long = 5, 20
cell = bptt.ElmanNetwork(2, 8, 1)
with torch.no_grad():                                       # V orthogonal (ρ = 1): a long memory
    cell.rnn.cells[0].weight_hh.copy_(torch.linalg.qr(torch.randn(8, 8))[0])
x_long = torch.randn(1, T_long, 2, requires_grad=True)


def run_in_chunks(model, x, k, carry_state):
    """Forward a long sequence chunk by chunk; carry_state=True is truncated BPTT, False a window."""
    h, outputs = None, []
    for start in range(0, x.shape[1], k):
        y, h_new = model(x[:, start:start + k], h if carry_state else None)
        outputs.append(y)
        h = h_new.detach()                                  # cut the graph, keep the value
    return torch.cat(outputs, dim=1)


full, _ = cell(x_long)
tbptt = run_in_chunks(cell, x_long, k, carry_state=True)
window = run_in_chunks(cell, x_long, k, carry_state=False)
print("truncated BPTT forward == full forward:", torch.allclose(tbptt, full, atol=1e-6))
print("window of k forward    == full forward:", torch.allclose(window, full, atol=1e-6))
assert torch.allclose(tbptt, full, atol=1e-6) and not torch.allclose(window, full, atol=1e-3)

# %% [markdown]
# The forward pass is identical to the full one — the state is passed on. But the *gradient* of the
# last chunk's output stops at the chunk boundary:

# %%
# NBVAL_CHECK_OUTPUT
tbptt[0, -1].sum().backward()
reached = x_long.grad[0].abs().sum(-1) > 0                   # which input steps get any gradient
print("inputs that receive gradient from y_20 under truncated BPTT (k=5):")
print("".join("█" if r else "·" for r in reached.tolist()), f"  ({int(reached.sum())} of {T_long} steps)")
assert reached[-k:].all() and not reached[:-k].any()

# %% [markdown]
# …while the *value* of y_20 still depends on x_1, 19 steps back — the state remembers what the
# gradient cannot see:

# %%
with torch.no_grad():
    x_changed = x_long.detach().clone()
    x_changed[0, 0] += 1.0                                     # perturb only the very first input
    delta_tbptt = (run_in_chunks(cell, x_changed, k, True) - tbptt.detach())[0, -1].abs().item()
    delta_window = (run_in_chunks(cell, x_changed, k, False) - window.detach())[0, -1].abs().item()
print(f"change of y_20 when x_1 changes: truncated BPTT {delta_tbptt:.2e}, window of k {delta_window:.2e}")
assert delta_tbptt > 1e-4 and delta_window == 0

# %% [markdown]
# ## 5. Vanishing and exploding gradients, measured
#
# ∂L_T/∂h_t is a product of T − t Jacobians diag(1 − h²) V. If the largest singular values of V are
# below 1 the product shrinks geometrically (vanishes); above 1 it can grow (explodes)
# [Pascanu et al. 2013]. We build V = ρ·Q with Q orthogonal, so every singular value and the
# spectral radius are exactly ρ, run 60 steps, and measure ‖∂L_T/∂h_t‖ for L_T = u·h_T by autograd.
#
# Left: tiny inputs (scale 0.01). For ρ ≤ 1 no unit saturates (legend: 0%), tanh' ≈ 1, and the norm
# behaves like ρ^{T−t} (measured below). For ρ = 1.5 and 3 the norm grows far more slowly than ρ^{T−t};
# some units saturate (|h| > 0.95: the legend gives the fraction, 3% for ρ = 1.5, about two in five for
# ρ = 3), but the run does not separate how much of the slow-down saturation explains and how much the
# units' tanh' < 1 short of saturation.
# Right: unit-size inputs push units into saturation, where tanh' ≈ 0 shrinks every Jacobian further.

# %%
def state_gradient_norms(rho, input_scale, T=60, H=64, seed=0):
    """‖∂L_T/∂h_t‖ for t = T..1 (index = distance T − t), for V = rho · (orthogonal Q)."""
    g = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(H, H, generator=g, dtype=torch.double))
    W_in = torch.randn(H, 8, generator=g, dtype=torch.double) / math.sqrt(8)
    x = input_scale * torch.randn(T, 8, generator=g, dtype=torch.double)
    u = torch.randn(H, generator=g, dtype=torch.double) / math.sqrt(H)
    V = rho * Q
    h, hs = torch.zeros(H, dtype=torch.double, requires_grad=True), []
    for t in range(T):
        h = torch.tanh(W_in @ x[t] + V @ h)                          # (H,)
        h.retain_grad()
        hs.append(h)
    (u @ hs[-1]).backward()
    norms = torch.stack([s.grad.norm() for s in reversed(hs)])       # distance 0, 1, …, T−1
    saturated = (torch.stack(hs).abs() > 0.95).double().mean().item()
    return norms, saturated


rhos = [0.5, 0.9, 1.0, 1.5, 3.0]
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), dpi=80, sharey=True)
grad_norms = {}
for ax, scale in zip(axes, [0.01, 1.0]):
    curves = {}
    for rho in rhos:
        norms, sat = state_gradient_norms(rho, scale)
        grad_norms[(rho, scale)] = norms
        curves[f"ρ = {rho} ({100 * sat:.0f}% saturated)"] = (np.arange(len(norms)), norms.clamp_min(1e-30))
    viz.plot_curves(curves, ax=ax, xlabel="distance T − t", ylabel="‖∂L_T/∂h_t‖", logy=True,
                    title=f"input scale {scale}")
plt.tight_layout()
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
rows = [{"ρ": rho, "input scale": s, "distance 50: vanishing (< 1e-6)": bool(grad_norms[(rho, s)][50] < 1e-6),
         "distance 50: exploding (> 1e3)": bool(grad_norms[(rho, s)][50] > 1e3)}
        for rho in (0.5, 3.0) for s in (0.01, 1.0)]
for r in rows:
    print(r)
assert grad_norms[(0.5, 0.01)][50] < 1e-6 and grad_norms[(3.0, 0.01)][50] > 1e3
assert grad_norms[(1.5, 1.0)][50] < grad_norms[(1.5, 0.01)][50]          # saturation shrinks gradients

# %% [markdown]
# In the linear regime the Jacobians are close to ρQ, so the norm changes by a factor ρ per step. We
# check it on the ρ = 0.5 curve, then measure the factor between distances 10 and 40 on every curve of
# the left plot: it matches ρ for ρ ≤ 1, and stays far below ρ for ρ = 1.5 (1.0417) and ρ = 3 (1.4347),
# where part of the units saturate (the cause is not isolated here, see above).

# %%
slope = (grad_norms[(0.5, 0.01)][40].log() - grad_norms[(0.5, 0.01)][10].log()) / 30
print(f"measured decay per step {slope.exp().item():.4f} vs ρ = 0.5")
assert abs(slope.exp().item() - 0.5) < 0.01
per_step = {rho: ((grad_norms[(rho, 0.01)][40] / grad_norms[(rho, 0.01)][10]) ** (1 / 30)).item() for rho in rhos}
print("input scale 0.01, measured factor per step (distance 10 → 40):",
      ", ".join(f"ρ = {rho}: {f:.4f}" for rho, f in per_step.items()))
assert all(abs(per_step[rho] - rho) < 0.01 for rho in rhos if rho <= 1)       # linear regime: factor ≈ ρ
assert all(per_step[rho] < 0.75 * rho for rho in rhos if rho > 1)             # saturation: far below ρ

# %% [markdown]
# ### tanh saturation
#
# tanh'(a) = 1 − tanh(a)². Once |a| is a few units, the derivative is nearly zero, and a saturated unit
# passes almost no gradient back through diag(1 − h²) V. At distance 50, unit inputs give a smaller
# gradient than tiny ones for every ρ of the plot above (asserted below); saturation does not always
# win, though: with ρ = 3 and unit inputs (50% saturated) the gradient still explodes (table above).
# Larger pre-activations (large inputs or weights) mean more saturated units:

# %%
a = torch.linspace(-5, 5, 201)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), dpi=80)
axes[0].plot(a, torch.tanh(a), label="tanh(a)")
axes[0].plot(a, 1 - torch.tanh(a) ** 2, label="tanh'(a) = 1 − tanh²(a)")
axes[0].axhline(0, color="gray", lw=0.5)
axes[0].legend()
axes[0].set_xlabel("pre-activation a")
scales = [0.01, 0.1, 0.3, 1, 3, 10]
saturation, norm_at_20 = [], []
for s in scales:                                  # the ρ = 1 network of the plot above, larger inputs
    norms, sat = state_gradient_norms(1.0, s)
    saturation.append(sat)
    norm_at_20.append(norms[20].item())
axes[1].semilogx(scales, saturation, marker="o", label="fraction of |h| > 0.95")
axes[1].set_xlabel("input scale")
axes[1].set_ylabel("fraction saturated")
twin = axes[1].twinx()
twin.loglog(scales, norm_at_20, marker="s", color="C1", label="‖∂L_T/∂h_{T−20}‖")
twin.set_ylabel("gradient norm, distance 20", color="C1")
lines = axes[1].get_lines() + twin.get_lines()                  # one legend for both y-axes
axes[1].legend(lines, [line.get_label() for line in lines], loc="center left")
axes[1].set_title("ρ = 1: more saturation, smaller gradients")
plt.tight_layout()
plt.show()
assert saturation[-1] > saturation[0] and norm_at_20[-1] < 1e-3 * norm_at_20[0]
assert all(grad_norms[(rho, 1.0)][50] < grad_norms[(rho, 0.01)][50] for rho in rhos)   # unit < tiny inputs

# %% [markdown]
# ### Gradient clipping
#
# Pascanu et al. (2013) proposed a simple remedy for exploding gradients: if ‖g‖ > c, rescale
# g ← g · c/‖g‖. The *direction* is kept, only the step length is capped. The cell below checks this on
# one exploding gradient; it does not compare training with and without clipping. Clipping cannot help
# vanishing gradients, since it never enlarges a gradient; the LSTM of notebook 04 is one answer to them.

# %%
torch.manual_seed(4)
model = nn.RNN(8, 64)
with torch.no_grad():
    model.weight_hh_l0.copy_(3.0 * torch.linalg.qr(torch.randn(64, 64))[0])   # ρ = 3: exploding regime
out, _ = model(0.01 * torch.randn(60, 1, 8))
out[-1].sum().backward()
grads = [p.grad.clone() for p in model.parameters()]
norm_before = torch.sqrt(sum((g ** 2).sum() for g in grads))
clip = 1.0
by_hand = [g * min(1.0, clip / norm_before.item()) for g in grads]           # our clipping
returned = nn.utils.clip_grad_norm_(model.parameters(), clip)                # PyTorch's, in place
norm_after = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
cosine = F.cosine_similarity(torch.cat([g.flatten() for g in grads]),
                             torch.cat([p.grad.flatten() for p in model.parameters()]), dim=0)
print(f"‖g‖ before {norm_before:.3g} (returned {returned:.3g}), after {norm_after:.4f}; "
      f"cosine(before, after) = {cosine:.6f}")
assert all(torch.allclose(h, p.grad, rtol=1e-5) for h, p in zip(by_hand, model.parameters()))
assert norm_before > 10 * clip and abs(norm_after - clip) < 1e-4 and cosine > 0.9999

# %% [markdown]
# ## 6. A character-level language model on Tiny Shakespeare
#
# The language model predicts the next character from all previous ones:
# P(c_1 … c_N) = Π_t P(c_{t+1} | c_1 … c_t). With **teacher forcing** the input at step t is the
# *true* character c_t (not the model's own guess), the target is c_{t+1}, and the loss is the
# cross-entropy of every step. Perplexity = exp(mean cross-entropy) is the effective number of
# characters the model hesitates between (65 for a uniform guess over this vocabulary).
#
# The first 90% of the text trains, the last 10% validates.

# %%
# NBVAL_CHECK_OUTPUT
text = data.read_text("tinyshakespeare")
corpus = char_lm.CharCorpus(text, val_fraction=0.1)
print(f"{len(text):,} characters, vocabulary of {corpus.vocab_size}; "
      f"train {len(corpus.train_ids):,} / validation {len(corpus.val_ids):,}")
sample = corpus.encode(text[:13])
print("input  (teacher forcing):", repr(corpus.decode(sample[:-1])))
print("target (next characters):", repr(corpus.decode(sample[1:])))

# %% [markdown]
# The model is embedding → Elman RNN → linear read-out (`char_lm.CharLM` with `cell="rnn"`, which runs
# PyTorch's fused `nn.RNN` rather than our Python loop). We train it with Adam, clipping the gradient norm
# at 1 and recording the norm *before* clipping, on random windows of `seq_len` characters. The recorded
# norms show whether the clip ever acts: in the class run it never does (0% of the steps clipped, largest
# norm 0.78, printed under the plot), so there the run is plain Adam.

# %%
runtime.seed_everything(0)
lm = char_lm.CharLM(corpus.vocab_size, S.hidden, cell="rnn").to(device)
optimizer = torch.optim.Adam(lm.parameters(), lr=S.lr)
batch_gen = torch.Generator().manual_seed(0)
print(f"{sum(p.numel() for p in lm.parameters()):,} parameters")

initial_nll = char_lm.evaluate_nll(lm, corpus.val_ids, max_chars=S.val_chars)
losses, norms_before_clip = [], []
for _ in range(S.steps):
    x_batch, y_batch = (t.to(device) for t in corpus.batch("train", S.batch, S.seq_len, batch_gen))
    loss = char_lm.char_lm_loss(lm, (x_batch, y_batch))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norms_before_clip.append(nn.utils.clip_grad_norm_(lm.parameters(), 1.0).item())
    optimizer.step()
    losses.append(loss.item())
rnn_val_nll = char_lm.evaluate_nll(lm, corpus.val_ids, max_chars=S.val_chars)
rnn_val_ppl = metrics.perplexity(rnn_val_nll)
print(f"validation perplexity: {metrics.perplexity(initial_nll):.1f} before training → {rnn_val_ppl:.2f} "
      f"after {S.steps} steps ({rnn_val_nll:.3f} nats/char, {rnn_val_nll / math.log(2):.3f} bits/char)")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.2), dpi=80)
smooth = np.convolve(losses, np.ones(20) / 20, mode="valid")
viz.plot_curves({"train loss (running mean of 20)": (np.arange(len(smooth)) + 20, smooth)}, ax=axes[0],
                ylabel="cross-entropy (nats/char)")
axes[1].plot(norms_before_clip, lw=0.7)
axes[1].axhline(1.0, color="C3", ls="--", label="clip at 1")
axes[1].set_yscale("log")
axes[1].set_xlabel("step")
axes[1].set_ylabel("‖g‖ before clipping")
axes[1].legend()
plt.tight_layout()
plt.show()
print(f"{np.mean(np.array(norms_before_clip) > 1.0):.0%} of the steps were clipped; "
      f"largest norm {max(norms_before_clip):.2f}, median {np.median(norms_before_clip):.2f}")
assert rnn_val_ppl < 0.5 * metrics.perplexity(initial_nll)
if S.profile == "class":   # the text says the clip never acted in the class run
    assert max(norms_before_clip) < 1.0

# %% [markdown]
# The model trained with PyTorch's fused `nn.RNN`. Its from-scratch twin (same weights, our Python loop)
# should give the same logits; the cell below compares them on one 17-character probe, on a CPU copy of
# the model, and prints the largest difference. On an NVIDIA GPU the fused kernel is cuDNN's, which may
# sum in another order and, on recent GPUs, round fp32 inputs to TF32, so the twins may differ more there;
# `tests/test_devices.py` (not run here) compares such twins, with random weights, on CUDA when a GPU is
# present, with TF32 off (`runtime.exact_matmul()`).

# %%
with torch.no_grad():
    lm_cpu = copy.deepcopy(lm).cpu()                       # parity on the CPU (see above)
    probe = corpus.encode("ROMEO:\nWhat light")[None]
    twin = rnn.from_torch(lm_cpu.rnn)
    h_ours, _ = twin(lm_cpu.embed(probe))
    logits_ours, logits_fused = lm_cpu.head(h_ours), lm_cpu(probe)[0]
    assert torch.allclose(logits_ours, logits_fused, atol=1e-5)
print(f"max |from-scratch − fused| logits on {probe.shape[1]} characters: "
      f"{(logits_ours - logits_fused).abs().max().item():.2e}")

# %% [markdown]
# ### Sampling with a temperature
#
# To generate, feed the model's own sample back in as the next input. The temperature τ rescales the
# logits before the softmax, p_i ∝ exp(z_i / τ): τ < 1 sharpens the distribution (safer, more
# repetitive), τ > 1 flattens it (more surprising, more mistakes), τ → 0 is greedy decoding.

# %%
def softmax_with_temperature(z, tau):
    return torch.softmax(z / tau, dim=-1)


with torch.no_grad():
    logits = lm(corpus.encode("ROMEO:\nI will ")[None].to(device))[0][0, -1].cpu()
for tau in (0.5, 1.0, 2.0):
    p = softmax_with_temperature(logits, tau)
    assert torch.allclose(p, torch.softmax(apply_temperature(logits, tau), -1))
    top = p.topk(3)
    entropy = -(p * p.log()).sum().item()
    shown = ", ".join(f"{corpus.itos[i]!r} {v:.2f}" for v, i in zip(top.values.tolist(), top.indices.tolist()))
    print(f"τ = {tau}: entropy {entropy:.2f} nats; top-3 after 'I will ': {shown}")

# %% [markdown]
# An explorer for the temperature (live: a slider; in the stored notebook: three fixed values).

# %%
def show_sample(temperature=1.0):
    gen = torch.Generator().manual_seed(0)
    print(f"--- temperature {temperature} ---")
    print(char_lm.generate(lm, corpus, "ROMEO:\n", S.sample_chars, temperature=temperature, generator=gen))


widgets.explorer(show_sample, [{"temperature": 0.5}, {"temperature": 1.0}, {"temperature": 1.5}],
                 temperature=(0.1, 2.0, 0.1))

# %% [markdown]
# ## Summary
#
# * An Elman RNN applies the same step h_t = tanh(W x_t + V h_{t−1} + b) at every position; our loop
#   equals `nn.RNN`. As a transducer it emits y_t = U h_t per step; as an acceptor it keeps h_T.
# * BPTT is backpropagation on the unrolled graph; shared weights sum their per-step gradients, and
#   the gradient of a late loss on an early state is a product of Jacobians diag(1 − h²) V — our
#   hand-written BPTT equals autograd.
# * Truncated BPTT detaches the state every k steps: gradients see k steps back, but the forward
#   state still carries information from the start — unlike a window of k.
# * With V = ρ·Q (Q orthogonal, so its singular values and spectral radius are all ρ), the Jacobian product shrank
#   geometrically for ρ = 0.5 and 0.9 (factors 0.4999 and 0.8995 per step) and, with tiny inputs (scale 0.01),
#   grew for ρ = 1.5 and 3 (above 1e3 at distance 50 for ρ = 3); for a general V, §5 states the condition with the
#   largest singular values. Unit-size inputs, which saturate tanh units, gave smaller gradients at distance 50
#   for each ρ tried (asserted in §5). Clipping caps a gradient's norm and keeps its direction (Pascanu et al.'s
#   remedy for exploding gradients); it never enlarges a vanishing one. In our class LM run it never acted
#   (asserted in §6: no step's norm reached the clip).
# * A character-level Elman LM learns Shakespeare's surface form; validation perplexity drops from
#   65.3 (the untrained model; 65 characters) to 5.89 in the class run: on average the model hesitates
#   between about six characters.
#   Its samples share fragments across temperatures because each temperature reuses the generator's seed
#   0, so one sample per temperature shows a trend, not its size. Notebook 04 trains an LSTM with the same
#   recipe.
#
# ## Exercises
#
# Each check below runs your function on a few fixed, seeded cases whose sizes vary (a batch of one, a zero
# first state, inputs on very different scales …) and compares the result with a reference
# (`coursekit/exercises/checks/rnn.py`); "all cases match" in its verdict means all of those cases.

# %%
# EXERCISE 1: one Elman step
def elman_step(x, h, W, V, b):
    """x (B, I), h (B, H), W (H, I), V (H, H), b (H,) -> h_t (B, H)."""
    ### BEGIN SOLUTION
    return torch.tanh(x @ W.T + h @ V.T + b)
    ### END SOLUTION


check_elman_step(elman_step)

# %%
# EXERCISE 2: gradients through time as Jacobian products
def state_gradients(h, V, dL_dhT):
    """h (T, H) the states of a tanh RNN, V (H, H), dL_dhT (H,) -> (T, H), in h's dtype, with row t = ∂L/∂h_t
    for a loss on the last state only. Use J_t = diag(1 - h_t²) V and δ_{t-1} = J_t^T δ_t."""
    ### BEGIN SOLUTION
    deltas = [dL_dhT]
    for t in range(h.shape[0] - 1, 0, -1):
        J_t = torch.diag(1 - h[t] ** 2) @ V
        deltas.append(J_t.T @ deltas[-1])
    return torch.stack(deltas[::-1])
    ### END SOLUTION


check_state_gradients(state_gradients)

# %%
# EXERCISE 3: truncated BPTT
def truncated_bptt(model, x, targets, k):
    """Process x (B, T, I) in chunks of k steps with model(x_chunk, h) -> (y, h); for each chunk
    backpropagate F.mse_loss(y, targets_chunk) and carry h to the next chunk, detached.
    Let the gradients accumulate over the chunks (no zero_grad, no optimizer step).
    Return the list of chunk losses (floats)."""
    ### BEGIN SOLUTION
    h, chunk_losses = None, []
    for start in range(0, x.shape[1], k):
        y, h = model(x[:, start:start + k], h)
        loss = F.mse_loss(y, targets[:, start:start + k])
        loss.backward()
        h = h.detach()
        chunk_losses.append(loss.item())
    return chunk_losses
    ### END SOLUTION


check_truncated_bptt(truncated_bptt)
