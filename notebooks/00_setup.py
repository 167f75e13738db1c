# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 — Setup and a tour of the course
#
# This notebook checks that your installation works and shows the few conventions every later
# notebook relies on.
#
# **Learning goals**
# - Read the environment report: Python and PyTorch versions, the device the course will use
#   (CUDA → MPS → CPU), and the active *profile*.
# - Know which corpora are available offline and how to fetch the missing ones.
# - Understand profiles (`quick` / `class` / `full`) and where a notebook reads its size knobs.
# - Train a tiny model end to end with `coursekit.training.loop` and save it as a safetensors checkpoint.

# %%
import math
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch import nn

from coursekit import data, runtime
from coursekit.exercises import check_accuracy, check_cross_entropy, check_softmax
from coursekit.training import loop as train
from coursekit.viz import plots as viz

# %% [markdown]
# ## 1. The environment report
#
# `coursekit.runtime` picks the device (CUDA, then Apple's MPS, then CPU; set
# `COURSEKIT_DEVICE=cpu` to force one) and reads the profile from `COURSEKIT_PROFILE`.

# %%
report = runtime.environment_report()
for key, value in report.items():
    print(f"{key:>13}: {value}")
device = runtime.device()

# %% [markdown]
# ## 2. Profiles: one notebook, three sizes
#
# | profile | meant for | budget per notebook |
# |---|---|---|
# | `quick` | CI and `nbval` | ≤ 45 s on a 2-core CPU |
# | `class` (default) | teaching from a laptop CPU; the stored outputs | ≤ 5 min |
# | `full` | a GPU box | ≤ 10 min, best results |
#
# Every notebook reads its sizes in one cell through `runtime.sizes`, so an instructor changes one
# environment variable, never the code:

# %%
S = runtime.sizes(
    quick=dict(steps=150, hidden=16),
    class_=dict(steps=600, hidden=32),
    full=dict(steps=2000, hidden=64),
)
print(S)

# %% [markdown]
# All three profiles must define the same knobs — a profile that silently lacks one would be a
# bug that only shows up on someone else's machine:

# %%
# NBVAL_CHECK_OUTPUT
try:
    runtime.sizes(quick=dict(steps=1), class_=dict(steps=2, width=8), full=dict(steps=3))
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# ## 3. The corpora
#
# The course uses real corpora. They are never committed to the repository: `coursekit.data`
# knows each one's upstream address, license and **sha256**, and looks for a file in an offline
# mirror (`COURSEKIT_DATA_MIRROR`), then in its cache, then downloads and verifies it. A file with
# the wrong hash is refused, never silently used.

# %%
# NBVAL_CHECK_OUTPUT
for name, corpus in data.REGISTRY.items():
    print(f"{name:20s} {len(corpus.files)} file(s)  license: {corpus.license.split(' (')[0].split(' —')[0]}")

# %%
missing = []
for name in data.REGISTRY:
    where = data.status(name)
    print(f"{name:20s}", ", ".join(f"{f}: {w}" for f, w in where.items()))
    missing += [name for w in where.values() if w == "missing"]
if missing:
    print("\nFetch the missing corpora while online with:\n  python -m coursekit.data fetch", *sorted(set(missing)))
else:
    print("\nEvery corpus is available offline.")

# %% [markdown]
# Loaders return Hugging Face `datasets` objects with documented columns:

# %%
# NBVAL_CHECK_OUTPUT
sst2 = data.load_sst2()
pairs = data.load_tatoeba()
print(sst2)
print(pairs.column_names, pairs[1])

# %% [markdown]
# ## 4. A first model, end to end
#
# We train a 2-layer MLP to separate two interleaved spirals. The recipe is the one every later
# notebook follows: seed, make data **on the CPU**, then move it to the device; build the model;
# hand `coursekit.training.loop.fit` a loss function; look at the curve; check the result with an `assert`.

# %%
def two_spirals(n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """n points per class on two interleaved spirals, with a little noise."""
    t = torch.rand(n, generator=generator) * 3 * math.pi + 0.5
    arm = torch.stack([t * torch.cos(t), t * torch.sin(t)], dim=1) / (3 * math.pi)
    noise = 0.02 * torch.randn(2 * n, 2, generator=generator)
    x = torch.cat([arm, -arm]) + noise  # (2n, 2)
    y = torch.cat([torch.zeros(n, dtype=torch.long), torch.ones(n, dtype=torch.long)])
    return x, y


gen = runtime.seed_everything(0)
x, y = two_spirals(500, gen)
x, y = x.to(device), y.to(device)

model = nn.Sequential(nn.Linear(2, S.hidden), nn.Tanh(), nn.Linear(S.hidden, S.hidden), nn.Tanh(),
                      nn.Linear(S.hidden, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)


def loss_fn(model: nn.Module, batch) -> torch.Tensor:
    xb, yb = batch
    return nn.functional.cross_entropy(model(xb), yb)


def evaluate(model: nn.Module) -> dict:
    return {"accuracy": (model(x).argmax(-1) == y).float().mean().item()}


history = train.fit(model, optimizer, [(x, y)], loss_fn, steps=S.steps, eval_fn=evaluate,
                    eval_every=max(1, S.steps // 10), desc="spirals")
print(f"final loss {history.train_loss[-1]:.3f}, accuracy {history.evals[-1][1]['accuracy']:.3f}, "
      f"{history.seconds:.1f} s")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
viz.plot_curves({"train loss": (history.steps, history.train_loss)}, ax=axes[0], title="training loss")
grid = torch.stack(torch.meshgrid(torch.linspace(-1.2, 1.2, 150), torch.linspace(-1.2, 1.2, 150),
                                  indexing="xy"), dim=-1).reshape(-1, 2)
with torch.no_grad():
    p = model(grid.to(device)).softmax(-1)[:, 1].reshape(150, 150).cpu()
axes[1].contourf(torch.linspace(-1.2, 1.2, 150), torch.linspace(-1.2, 1.2, 150), p, levels=20, cmap="RdBu", alpha=0.6)
axes[1].scatter(*x.cpu().T, c=y.cpu(), cmap="RdBu", s=4)
axes[1].set_title("decision surface")
plt.tight_layout()
plt.show()

# %% [markdown]
# The regression checks of a notebook are `assert`s whose tolerances hold in every profile:

# %%
assert history.train_loss[-1] < 0.5 * history.train_loss[0], "the loss should at least halve"
assert history.evals[-1][1]["accuracy"] > 0.85, "the MLP should separate the spirals"

# %% [markdown]
# ## 5. Checkpoints
#
# Checkpoints are safetensors files (plain tensors, no pickle) with the model's configuration in
# their metadata; loading into a model with another configuration is a clear error.

# %%
config = {"in": 2, "hidden": S.hidden, "out": 2}
with tempfile.TemporaryDirectory() as tmp:
    path = train.save_checkpoint(Path(tmp) / "spirals.safetensors", model, config)
    clone = nn.Sequential(nn.Linear(2, S.hidden), nn.Tanh(), nn.Linear(S.hidden, S.hidden), nn.Tanh(),
                          nn.Linear(S.hidden, 2)).to(device)
    train.load_checkpoint(path, clone, expected_config=config)
    assert torch.equal(clone(x), model(x))
    try:
        train.load_checkpoint(path, clone, expected_config={**config, "hidden": 128})
    except ValueError as err:
        mismatch = str(err).split("— ")[1]

# %%
# NBVAL_CHECK_OUTPUT
print("reloaded model gives identical outputs: True")
print("config mismatch reported as:", mismatch.replace(str(S.hidden), "H"))

# %% [markdown]
# ## 6. Seeds make runs repeatable
#
# `runtime.seed_everything(seed)` seeds Python, NumPy and PyTorch and returns a seeded
# `torch.Generator`. Drawing random numbers on the CPU from a seeded generator gives the same
# numbers on every machine — which is why the course creates data and initial weights on the CPU.

# %%
# NBVAL_CHECK_OUTPUT
a = torch.randn(3, generator=runtime.seed_everything(42))
b = torch.randn(3, generator=runtime.seed_everything(42))
print(torch.equal(a, b), a.shape)

# %% [markdown]
# ## Summary
#
# - `coursekit.runtime` chooses the device, seeds everything, and gives each notebook its size
#   knobs for the active profile (`COURSEKIT_PROFILE=quick|class|full`).
# - `coursekit.data` finds each corpus in the offline mirror or cache, or downloads it, and always
#   verifies its sha256; `python -m coursekit.data fetch` prefetches everything before a class.
# - `coursekit.training.loop.fit` is the small training loop the course uses; checkpoints are
#   safetensors with their config.
# - Notebooks check themselves with `assert`s; a few cells marked `NBVAL_CHECK_OUTPUT` are
#   compared exactly by `nbval` in CI.
#
# ## Exercises
#
# Each exercise cell has a check that runs your code on several inputs and tells you what is
# wrong. These three warm-ups are the building blocks of everything that follows.

# %%
# EXERCISE 1: a numerically stable softmax
def my_softmax(z: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """softmax(z)_i = exp(z_i) / Σ_j exp(z_j) along ``dim``; must not overflow for large z."""
    ### BEGIN SOLUTION
    z = z - z.amax(dim=dim, keepdim=True)
    e = z.exp()
    return e / e.sum(dim=dim, keepdim=True)
    ### END SOLUTION


check_softmax(my_softmax)

# %%
# EXERCISE 2: cross-entropy from logits
def my_cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean over the batch of −log softmax(logits)[target]; logits (B, C), target (B,)."""
    ### BEGIN SOLUTION
    log_probs = logits - logits.logsumexp(dim=-1, keepdim=True)
    return -log_probs.gather(1, target[:, None]).mean()
    ### END SOLUTION


check_cross_entropy(my_cross_entropy)

# %%
# EXERCISE 3: accuracy
def my_accuracy(logits: torch.Tensor, target: torch.Tensor) -> float:
    """Fraction of rows whose highest logit is the target class."""
    ### BEGIN SOLUTION
    return (logits.argmax(dim=-1) == target).float().mean().item()
    ### END SOLUTION


check_accuracy(my_accuracy)
