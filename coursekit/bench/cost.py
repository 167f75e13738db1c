"""How the cost of attention grows with the sequence length (notebook 07; ``docs/attention_cost.png``).

Self-attention compares every position with every other: the scores ``Q Kᵀ`` are a ``(T, T)`` matrix
per head, so time and memory have a term in T² next to the projections' and feed-forward's term in T.
This module measures both, from scratch and fused, on this machine:

* **time**: the best of ``repeat`` forward + backward passes (:func:`coursekit.runtime.timed`);
* **memory**: the peak bytes of tensors alive during forward + backward (:class:`PeakMemory`, which
  sees every tensor an operator creates and frees), and the activations autograd keeps between the two
  (``saved_MiB``, through ``torch.autograd.graph.saved_tensors_hooks``; parameters and inputs left out).
  The explicit softmax(QKᵀ/√d)V keeps its ``(B, H, T, T)`` weights; the fused kernel
  (``F.scaled_dot_product_attention``, FlashAttention's idea) recomputes them in the backward pass and
  keeps only a ``(B, H, T)`` log-sum-exp.

A batch sweep at one length shows the other axis: cost grows linearly with the batch.
:func:`quadratic_onset` finds the length from which each doubling of T more than triples the time
(×2 is linear, ×4 quadratic): where the T² term has taken over. ``python -m coursekit.bench cost --out
docs/attention_cost.json --plot docs/attention_cost.png`` reproduces the committed figure.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from coursekit.attention import scaled_dot_product_attention
from coursekit.runtime import timed
from coursekit.transformer.model import Transformer, TransformerConfig
from coursekit.translation.recipes import RECIPES
from coursekit.translation.throughput import TorchTransformerMT
from coursekit.validation import check_positive_float, check_positive_int
from coursekit.viz.png import save_figure
from coursekit.viz.wording import counted

__all__ = ["LENGTHS", "BATCHES", "PeakMemory", "saved_bytes", "attention_cost", "transformer_cost",
           "quadratic_onset", "plot_cost"]

LENGTHS = (64, 128, 256, 512, 1024, 2048)
BATCHES = (1, 2, 4, 8, 16)


def _check_lengths(lengths) -> tuple[int, ...]:
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence) or not lengths:
        raise TypeError(f"lengths must be a non-empty sequence of ints, got {type(lengths).__name__}")
    return tuple(check_positive_int(T, "each length") for T in lengths)


def saved_bytes(fn: Callable[[], torch.Tensor]) -> tuple[int, torch.Tensor]:
    """``(bytes autograd saves for the backward pass of fn(), fn())``: the activations, each storage counted
    once; parameters and inputs that require grad (and views of them) are not counted — they exist anyway."""
    if not callable(fn):
        raise TypeError(f"fn must be a function of no arguments, got {type(fn).__name__}")
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        base = t if t._base is None else t._base
        if not (base.is_leaf and base.requires_grad):          # parameters and inputs exist anyway
            storage = t.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(storages.values()), out


class PeakMemory(TorchDispatchMode):
    """``with PeakMemory() as m: …`` — ``m.peak``: the most bytes of tensors that the operators run inside
    the block (forward and backward) had alive at once. A CPU has no ``torch.cuda.max_memory_allocated``;
    this sees each tensor an operator creates and, through a finaliser, when it is freed (notebook 07
    derives it). Tensors that existed before the block are not counted when an operator merely hands them back;
    a *view* of one (a slice, a transpose) shares its storage, and this mode cannot tell that storage from a new
    one — pass such inputs as ``exclude`` so that their storages are never counted."""

    def __init__(self, exclude: tuple[torch.Tensor, ...] | list[torch.Tensor] = ()) -> None:
        super().__init__()
        if not isinstance(exclude, (tuple, list)) or not all(isinstance(t, torch.Tensor) for t in exclude):
            raise TypeError(f"exclude must be a tuple or list of tensors that exist before the block, got "
                            f"{type(exclude).__name__}")
        self.live = self.peak = 0
        self._storages: set[int] = {t.untyped_storage().data_ptr() for t in exclude}   # seen already: never added

    def _freed(self, ptr: int, nbytes: int) -> None:
        self._storages.discard(ptr)
        self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                ptr, nbytes = storage.data_ptr(), storage.nbytes()
                if nbytes and ptr not in self._storages:              # views share their base's storage
                    self._storages.add(ptr)
                    self.live += nbytes
                    self.peak = max(self.peak, self.live)
                    weakref.finalize(t, self._freed, ptr, nbytes)
        return out


def attention_cost(lengths=LENGTHS, *, batch: int = 4, n_heads: int = 4, d_head: int = 32,
                   repeat: int = 3) -> list[dict]:
    """Time and saved memory of causal attention, forward + backward, explicit vs fused, per length."""
    lengths = _check_lengths(lengths)
    for name, value in (("batch", batch), ("n_heads", n_heads), ("d_head", d_head)):
        check_positive_int(value, name)
    rows = []
    for T in lengths:
        g = torch.Generator().manual_seed(T)
        q, k, v = (torch.randn(batch, n_heads, T, d_head, generator=g).requires_grad_() for _ in range(3))
        ways = {"explicit": functools.partial(_explicit, scaled_dot_product_attention, q, k, v),
                "fused": functools.partial(F.scaled_dot_product_attention, q, k, v, is_causal=True)}
        for impl, forward in ways.items():
            rows.append({"model": "attention", "impl": impl, "T": T, "batch": batch, **_measure(forward, repeat)})
    return rows


def _explicit(attention, q, k, v) -> torch.Tensor:
    return attention(q, k, v, causal=True)[0]


def _measure(forward: Callable[[], torch.Tensor], repeat: int) -> dict:
    """Best time and peak tensor memory of ``forward().sum().backward()``; the activations kept between."""
    def train_step() -> None:
        forward().sum().backward()

    saved, _ = saved_bytes(forward)
    with PeakMemory() as memory:
        train_step()
    seconds, _ = timed(train_step, "cpu", repeat=repeat, warmup=1)
    return {"seconds": seconds, "peak_MiB": memory.peak / 2 ** 20, "saved_MiB": saved / 2 ** 20}


def _translation_loss(model, src, tgt, keep) -> torch.Tensor:
    return F.cross_entropy(model(src, tgt[:, :-1], keep, keep).flatten(0, 1), tgt[:, 1:].flatten())


def transformer_cost(lengths=LENGTHS, *, batch: int = 4, repeat: int = 2) -> list[dict]:
    """The translation recipe's Transformer (ours) vs ``nn.Transformer`` of the same size, one training
    forward + backward on a (batch, T) source and target, per length."""
    lengths = _check_lengths(lengths)
    check_positive_int(batch, "batch")
    vocab = 1000
    cfg = TransformerConfig(vocab, vocab, **{**RECIPES["transformer"].arch, "max_len": max(lengths), "dropout": 0.0})
    torch.manual_seed(0)
    models = {"ours": Transformer(cfg).train(), "nn.Transformer": TorchTransformerMT(cfg).train()}
    rows = []
    for T in lengths:
        g = torch.Generator().manual_seed(T)
        src = torch.randint(4, vocab, (batch, T), generator=g)
        tgt = torch.randint(4, vocab, (batch, T + 1), generator=g)
        keep = torch.ones(batch, T, dtype=torch.bool)
        for impl, model in models.items():
            loss = functools.partial(_translation_loss, model, src, tgt, keep)
            rows.append({"model": "Transformer", "impl": impl, "T": T, "batch": batch, **_measure(loss, repeat)})
    return rows


def quadratic_onset(rows: list[dict], factor: float = 3.0) -> int | None:
    """The length from which every further doubling of T multiplies the time by more than ``factor``
    (3: halfway between linear, ×2, and quadratic, ×4), among rows of one implementation; ``None`` if the
    measured lengths never get there. Per doubling, not a global fit: at small T a constant overhead
    (Python, kernel launches) dominates, at large T cache misses make the growth steeper than T²."""
    if not isinstance(rows, list) or len(rows) < 2:
        raise ValueError(f"rows must be a list of at least two measurements, got {rows!r:.80}")
    if len({(r.get("model"), r.get("impl")) for r in rows}) != 1:
        raise ValueError("rows must all come from one model and implementation")
    check_positive_float(factor, "factor")
    rows = sorted(rows, key=lambda r: r["T"])
    exponent = math.log2(factor)
    steep = [math.log(b["seconds"] / a["seconds"]) / math.log(b["T"] / a["T"]) >= exponent
             for a, b in zip(rows, rows[1:])]
    for i in range(len(steep)):
        if all(steep[i:]):
            return rows[i]["T"]
    return None


def plot_cost(rows: list[dict], path=None, *, threads: int | None = None):
    """Time and peak memory against T (top) and, for rows measured at one T over several batch sizes,
    against the batch (bottom); log-log, one line per model and implementation. ``threads``: the torch threads
    of the run that measured ``rows`` (a stored run's ``torch_threads``); None: this process's, measured now."""
    import matplotlib.pyplot as plt

    if not isinstance(rows, list) or not rows:
        raise ValueError("rows must be a non-empty list of measurements (attention_cost / transformer_cost)")
    by_batch = [r for r in rows if r.get("sweep") == "batch"]
    by_length = [r for r in rows if r.get("sweep") != "batch"]
    panels = [(by_length, "T", "sequence length T")] + ([(by_batch, "batch", "batch size")] if by_batch else [])
    fig, axes = plt.subplots(len(panels), 2, figsize=(11, 3.8 * len(panels)), squeeze=False)
    for (mine, x, xlabel), (ax_t, ax_m) in zip(panels, axes):
        for key in dict.fromkeys((r["model"], r["impl"]) for r in mine):
            line = [r for r in mine if (r["model"], r["impl"]) == key]
            style = "-" if key[1] in ("explicit", "ours") else "--"
            for ax, y in ((ax_t, "seconds"), (ax_m, "peak_MiB")):
                ax.plot([r[x] for r in line], [r[y] for r in line], style, marker="o", label=f"{key[0]}: {key[1]}")
        for ax, ylabel in ((ax_t, "forward + backward (s)"), (ax_m, "peak tensor memory (MiB)")):
            ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel)
            ax.grid(True, which="both", alpha=0.3)
        ax_m.legend(fontsize=8)
    if threads is not None:
        check_positive_int(threads, "threads")
    where = "this CPU" if threads is None else "the stored run's CPU"
    fig.suptitle(f"training cost of attention on {where} ({counted(threads or torch.get_num_threads(), 'thread')})")
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi=100)
    return fig
