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
import re
import statistics

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
# the outputs past each length are zero (the last line below checks every sequence of the batch) and the
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
print("outputs past each length are zero:", all(bool((y[i, n:] == 0).all()) for i, n in enumerate(lengths.tolist())))

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
# on every parameter. Besides the parameters' gradients it returns `dh`, ∂L/∂h_t for every step t (one row
# each), and `dh0`, the gradient on the initial state h_0 (their shapes are printed below):

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
with torch.no_grad():                                       # V orthogonal (ρ = 1): no decay of the state
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
# The forward pass equals the full one (to 1e-6: `True` above) — the state is passed on. But the *gradient* of the
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
# A unit is *saturated* at a step when |h| > 0.95 (there tanh' = 1 − h² < 0.1); the legend gives the share of
# saturated unit-steps (60 steps × 64 units), the table below gives it again with the mean tanh' over them.
#
# Left: tiny inputs (scale 0.01). For ρ ≤ 1 no unit-step saturates (0 of 3,840, printed below), the mean
# tanh' is ≈ 1, and the norm behaves like ρ^{T−t} (measured below). For ρ = 1.5 and 3 the norm grows far
# more slowly than ρ^{T−t}; some units saturate (3.1% and 41.4% of unit-steps), but the run does not
# separate how much of the slow-down saturation explains and how much the units' tanh' < 1 short of
# saturation.
# Right: unit-size inputs. For every ρ, more unit-steps saturate, the mean tanh' is lower, and the gradient
# at distances 20 and 50 is smaller than with tiny inputs (table below).

# %%
def state_gradient_norms(rho, input_scale, T=60, H=64, seed=0):
    """‖∂L_T/∂h_t‖ for t = T..1 (index = distance T − t), for V = rho · (orthogonal Q), and the states (T, H)."""
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
    return norms, torch.stack(hs).detach()                            # (T,), (T, H)


def saturated_share(states):
    """The share of unit-steps with |h| > 0.95, where tanh' = 1 − h² < 0.1."""
    return (states.abs() > 0.95).double().mean().item()


def mean_tanh_derivative(states):
    """The mean of tanh' = 1 − h² over units and steps: the diagonal of diag(1 − h²) V, on average."""
    return (1 - states ** 2).mean().item()


rhos = [0.5, 0.9, 1.0, 1.5, 3.0]
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), dpi=80, sharey=True)
grad_norms, states = {}, {}
for ax, scale in zip(axes, [0.01, 1.0]):
    curves = {}
    for rho in rhos:
        norms, states[(rho, scale)] = state_gradient_norms(rho, scale)
        grad_norms[(rho, scale)] = norms
        sat = saturated_share(states[(rho, scale)])
        curves[f"ρ = {rho} ({100 * sat:.1f}% saturated)"] = (np.arange(len(norms)), norms.clamp_min(1e-30))
    viz.plot_curves(curves, ax=ax, xlabel="distance T − t", ylabel="‖∂L_T/∂h_t‖", logy=True,
                    title=f"input scale {scale}")
plt.tight_layout()
plt.show()

# %%
T_steps, H_units = states[(0.5, 0.01)].shape
print(f"each run: {T_steps} steps × {H_units} units = {T_steps * H_units:,} unit-steps")
print(f"{'ρ':>4} {'input':>6} {'saturated':>15} {'mean tanh′':>11} {'‖∂L_T/∂h_t‖ at distance 20':>27} {'50':>9}")
for rho in rhos:
    for s in (0.01, 1.0):
        n_sat = round(saturated_share(states[(rho, s)]) * states[(rho, s)].numel())
        print(f"{rho:>4} {s:>6} {n_sat:>5,} ({100 * saturated_share(states[(rho, s)]):4.1f}%)"
              f" {mean_tanh_derivative(states[(rho, s)]):>11.3f}"
              f" {grad_norms[(rho, s)][20].item():>27.2e} {grad_norms[(rho, s)][50].item():>9.2e}")
assert grad_norms[(0.5, 0.01)][50] < 1e-6 and grad_norms[(3.0, 0.01)][50] > 1e3     # vanishes / explodes
assert all(saturated_share(states[(rho, 0.01)]) == 0 for rho in rhos if rho <= 1)    # tiny inputs, ρ ≤ 1
for rho in rhos:                                      # unit inputs: more saturation, lower tanh', smaller norms
    assert saturated_share(states[(rho, 1.0)]) > saturated_share(states[(rho, 0.01)])
    assert mean_tanh_derivative(states[(rho, 1.0)]) < mean_tanh_derivative(states[(rho, 0.01)])
    assert all(grad_norms[(rho, 1.0)][d] < grad_norms[(rho, 0.01)][d] for d in (20, 50))
for s, increase in ((0.01, lambda a, b: a <= b), (1.0, lambda a, b: a < b)):   # larger ρ: more saturation
    shares = [saturated_share(states[(rho, s)]) for rho in rhos]
    assert all(increase(a, b) for a, b in zip(shares, shares[1:])) and shares[-1] > shares[0]

# %% [markdown]
# In the linear regime the Jacobians are close to ρQ, so the norm changes by a factor ρ per step. We
# check it on the ρ = 0.5 curve, then measure the factor between distances 10 and 40 on every curve of
# the left plot: it matches ρ for ρ ≤ 1, and stays far below ρ for ρ = 1.5 (1.0417) and ρ = 3 (1.4347),
# where part of the units saturate and the mean tanh' is lower (0.703 and 0.368 in the table above; the
# cause of the slow-down is not isolated here, see above).

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
# passes almost no gradient back through diag(1 − h²) V. In the table above, unit inputs saturate more
# unit-steps than tiny ones and give a smaller gradient at distances 20 and 50 for every ρ; larger weights
# saturate too: with unit inputs every step up in ρ saturates more unit-steps, with tiny ones none
# saturate up to ρ = 1, then 3.1% and 41.4% (asserted). With ρ > 1 the inputs can decide between growth and
# decay: at ρ = 1.5 the norm grows from distance 20 to 50 with tiny inputs (2.92e+00 → 1.57e+01) and *vanishes*
# with unit inputs (5.75e-02 → 5.71e-04), although every singular value of V is 1.5 (asserted). At ρ = 3 unit
# inputs only slow the growth: the norm at distance 50 is still 3.10e+05 (49.6% saturated).
#
# Saturation is the extreme of a wider effect. Below, the ρ = 1 network of the plot above with six input
# scales: the larger the inputs, the smaller the gradient at distance 20, and it already falls where no unit
# saturates (scales 0.01 to 0.1), along with the mean tanh' (printed and asserted under the plot). Every unit
# short of saturation also has tanh' < 1 and shrinks the product a little; this run shows the two move
# together, not how much of the drop each explains.

# %%
a = torch.linspace(-5, 5, 201)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), dpi=80)
axes[0].plot(a, torch.tanh(a), label="tanh(a)")
axes[0].plot(a, 1 - torch.tanh(a) ** 2, label="tanh'(a) = 1 − tanh²(a)")
axes[0].axhline(0, color="gray", lw=0.5)
axes[0].legend()
axes[0].set_xlabel("pre-activation a")
scales = [0.01, 0.1, 0.3, 1, 3, 10]
saturation, mean_derivative, norm_at_20 = [], [], []
for s in scales:                                  # the ρ = 1 network of the plot above, larger inputs
    norms, h = state_gradient_norms(1.0, s)
    saturation.append(saturated_share(h))
    mean_derivative.append(mean_tanh_derivative(h))
    norm_at_20.append(norms[20].item())
axes[1].semilogx(scales, saturation, marker="o", label="fraction of |h| > 0.95")
axes[1].set_xlabel("input scale")
axes[1].set_ylabel("fraction saturated")
twin = axes[1].twinx()
twin.loglog(scales, norm_at_20, marker="s", color="C1", label="‖∂L_T/∂h_{T−20}‖")
twin.set_ylabel("gradient norm, distance 20", color="C1")
lines = axes[1].get_lines() + twin.get_lines()                  # one legend for both y-axes
axes[1].legend(lines, [line.get_label() for line in lines], loc="center left")
axes[1].set_title("ρ = 1: saturation and gradient norm against the input scale")
plt.tight_layout()
plt.show()
for s, sat, d, g in zip(scales, saturation, mean_derivative, norm_at_20):
    print(f"input scale {s:>5}: {100 * sat:4.1f}% of unit-steps saturated, mean tanh′ {d:.3f}, "
          f"‖∂L_T/∂h_(T−20)‖ = {g:.2e}")
assert all(a <= b for a, b in zip(saturation, saturation[1:])) and saturation[-1] > saturation[0]
assert all(a > b for a, b in zip(norm_at_20, norm_at_20[1:]))        # strictly smaller at every step up
assert all(a > b for a, b in zip(mean_derivative, mean_derivative[1:]))
assert saturation[1] == 0 and norm_at_20[1] < norm_at_20[0]          # falling before any unit saturates
g15_tiny, g15_unit = grad_norms[(1.5, 0.01)], grad_norms[(1.5, 1.0)]
assert g15_tiny[50] > g15_tiny[20] and g15_unit[50] < g15_unit[20]   # ρ = 1.5: grows with tiny, vanishes with unit

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
# at 1 and recording the norm *before* clipping, on random windows of `seq_len` characters (64 in the class
# run). Each window starts from a zero state, so training is §4's *window of k*, with k = `seq_len`, not
# truncated BPTT: no gradient and no state reaches further back than 64 characters. Evaluation and sampling,
# by the package's code, carry the state across the whole text, longer than any stretch seen in training. The recorded
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
# logits before the softmax, p_i ∝ exp(z_i / τ): τ < 1 sharpens the distribution, τ > 1 flattens it
# (the entropies below), and as τ → 0 all the mass goes to the largest logit: greedy decoding. Dividing
# the logits by τ > 0 keeps their order, so the ranking of the characters is the same at every τ (below:
# 'n', 'b', 't'; asserted) and so is the greedy choice; only how often the sampler leaves it changes.

# %%
def softmax_with_temperature(z, tau):
    return torch.softmax(z / tau, dim=-1)


with torch.no_grad():
    logits = lm(corpus.encode("ROMEO:\nI will ")[None].to(device))[0][0, -1].cpu()
rankings = []
for tau in (0.5, 1.0, 2.0):
    p = softmax_with_temperature(logits, tau)
    rankings.append(p.argsort(descending=True)[:3].tolist())
    assert torch.allclose(p, torch.softmax(apply_temperature(logits, tau), -1))
    top = p.topk(3)
    entropy = -(p * p.log()).sum().item()
    shown = ", ".join(f"{corpus.itos[i]!r} {v:.2f}" for v, i in zip(top.values.tolist(), top.indices.tolist()))
    print(f"τ = {tau}: entropy {entropy:.2f} nats; top-3 after 'I will ': {shown}")
assert all(r == rankings[0] for r in rankings)            # temperature reshapes, never reorders

# %% [markdown]
# An explorer for the temperature (live: a slider; in the stored notebook: three fixed values, one sample
# each).

# %%
def show_sample(temperature=1.0):
    gen = torch.Generator().manual_seed(0)
    print(f"--- temperature {temperature} ---")
    print(char_lm.generate(lm, corpus, "ROMEO:\n", S.sample_chars, temperature=temperature, generator=gen))


widgets.explorer(show_sample, [{"temperature": 0.5}, {"temperature": 1.0}, {"temperature": 1.5}],
                 temperature=(0.1, 2.0, 0.1))

# %% [markdown]
# Ten samples per temperature (seeds 0–9; seed 0's are the three above), counted; a word is a run of letters and
# apostrophes, lower-cased. At τ = 0.5, on average 0.67 of a sample's words are distinct, fewer than in
# stretches of Shakespeare of the same length (0.81): the low temperature repeats itself ("to to", "the world the
# word" above). At τ = 1.5, 0.97 are distinct and 0.57 of the words never occur in the corpus, against 0.09 at
# τ = 0.5; τ = 1.0 lies between on both (asserted in the class run). Each seed is used once per temperature, so
# τ = 1.0 and 1.5 start from the same random numbers on two similar distributions; that is a likely reason the
# samples above share fragments ("trunk-day, thy"), not one this notebook tests.

# %%
def words_of(s):
    return re.findall(r"[a-z']+", s.lower())                        # a word: letters and apostrophes, lower-cased


corpus_words = words_of(text)
known_words = set(corpus_words)
sample_seeds = range(10)
rows, counts = [], []
for tau in (0.5, 1.0, 1.5):                                         # seed 0 is the sample shown above
    distinct, unknown = [], []
    for seed in sample_seeds:
        words = words_of(char_lm.generate(lm, corpus, "ROMEO:\n", S.sample_chars, temperature=tau,
                                          generator=torch.Generator().manual_seed(seed)))
        distinct.append(len(set(words)) / len(words))
        unknown.append(sum(w not in known_words for w in words) / len(words))
        counts.append(len(words))
    rows.append({"τ": tau, "distinct words (mean)": statistics.mean(distinct),
                 "distinct: range": f"{min(distinct):.2f} – {max(distinct):.2f}",
                 "words not in the corpus (mean)": statistics.mean(unknown),
                 "not in the corpus: range": f"{min(unknown):.2f} – {max(unknown):.2f}"})
n = round(statistics.mean(counts))                                  # the samples' mean length in words
baseline = statistics.mean(len(set(corpus_words[i:i + n])) / n for i in range(0, len(corpus_words) - n, 1000))
viz.show_table(rows, title=f"{len(sample_seeds)} samples of {S.sample_chars} characters per temperature "
                           f"(seeds {sample_seeds[0]}–{sample_seeds[-1]}), shares of their words", floatfmt="{:.2f}")
print(f"the corpus itself, stretches of {n} words: {baseline:.2f} of the words distinct (mean over "
      f"{len(range(0, len(corpus_words) - n, 1000))} stretches)")
if S.profile == "class":
    means = [(r["distinct words (mean)"], r["words not in the corpus (mean)"]) for r in rows]
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(means, means[1:]))      # both rise with τ
    assert means[0][0] < baseline                                   # τ = 0.5 repeats more than the corpus

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
#   grew for ρ = 1.5 and 3 (1.67e+07 at distance 50 for ρ = 3); for a general V, §5 states the condition with the
#   largest singular values. Unit-size inputs saturated more tanh units and gave smaller gradients at distances
#   20 and 50 than tiny ones for each ρ tried (printed and asserted in §5); at ρ = 3 the gradient still
#   exploded. Clipping caps a gradient's norm and keeps its direction (Pascanu et al.'s
#   remedy for exploding gradients); it never enlarges a vanishing one. In our class LM run it never acted
#   (asserted in §6: no step's norm reached the clip).
# * A character-level Elman LM learns Shakespeare's surface form; validation perplexity drops from
#   65.3 (the untrained model; 65 characters) to 5.89 in the class run: on average the model hesitates
#   between about six characters.
#   Temperature reshapes its next-character distribution without reordering it. Over ten samples per
#   temperature, τ = 0.5 repeats words (0.67 of them distinct, against 0.81 in the corpus) and τ = 1.5 invents
#   them (0.57 of its words are not in the corpus). Notebook 04 trains an LSTM with the same recipe.
#
# ## Exercises
#
# Each check below runs your function on fixed, seeded cases whose sizes vary and compares the result with a
# reference; the cases are written in `coursekit/exercises/checks/rnn.py` (for the Elman step: a batch of
# one, a zero first state with an all-zero input row, input rows on scales from ×0.01 to ×10) and the
# verdict prints only "all cases match" — a failure names the case and the likely mistake.

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
