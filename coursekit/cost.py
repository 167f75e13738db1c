"""How the cost of attention grows with the sequence length (notebook 07; ``docs/attention_cost.png``).

Self-attention compares every position with every other: the scores ``Q Kᵀ`` are a ``(T, T)`` matrix
per head, so time and memory have a term in T² next to the projections' and feed-forward's term in T.
This module measures both, from scratch and fused, on this machine:

* **time**: the best of ``repeat`` forward + backward passes;
* **memory**: the bytes of the activations autograd keeps for the backward pass (recorded with
  ``torch.autograd.graph.saved_tensors_hooks``, each storage counted once, parameters and inputs left
  out) — the memory that grows with T. The explicit softmax(QKᵀ/√d)V keeps its ``(B, H, T, T)``
  weights; the fused kernel (``F.scaled_dot_product_attention``, FlashAttention's idea) recomputes them in
  the backward pass and keeps only a ``(B, H, T)`` log-sum-exp.

:func:`quadratic_takeover` fits ``t(T) = a T + b T²`` to the measured times and returns ``a / b``, the
length where the quadratic term becomes as large as the linear one. ``python -m coursekit.cost --out
docs/attention_cost.json --plot docs/attention_cost.png`` reproduces the committed figure.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

from coursekit.checks import check_positive_int

__all__ = ["LENGTHS", "saved_bytes", "best_time", "attention_cost", "transformer_cost", "quadratic_takeover",
           "plot_cost", "main"]

LENGTHS = (64, 128, 256, 512, 1024, 2048)


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


def best_time(fn: Callable[[], None], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls of ``fn`` after one untimed call, in seconds."""
    if not callable(fn):
        raise TypeError(f"fn must be a function of no arguments, got {type(fn).__name__}")
    check_positive_int(repeat, "repeat")
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def attention_cost(lengths=LENGTHS, *, batch: int = 4, n_heads: int = 4, d_head: int = 32,
                   repeat: int = 3) -> list[dict]:
    """Time and saved memory of causal attention, forward + backward, explicit vs fused, per length."""
    from coursekit.attention import scaled_dot_product_attention

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
    """Activation memory of ``forward()`` and the best time of ``forward().sum().backward()``."""
    memory, _ = saved_bytes(forward)
    return {"seconds": best_time(lambda: forward().sum().backward(), repeat), "saved_MB": memory / 2 ** 20}


def _translation_loss(model, src, tgt, keep) -> torch.Tensor:
    return F.cross_entropy(model(src, tgt[:, :-1], keep, keep).flatten(0, 1), tgt[:, 1:].flatten())


def transformer_cost(lengths=LENGTHS, *, batch: int = 4, repeat: int = 2) -> list[dict]:
    """The translation recipe's Transformer (ours) vs ``nn.Transformer`` of the same size, one training
    forward + backward on a (batch, T) source and target, per length."""
    from coursekit.transformer import Transformer, TransformerConfig
    from coursekit.translation.recipes import RECIPES
    from coursekit.translation.throughput import TorchTransformerMT

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


def quadratic_takeover(rows: list[dict]) -> float:
    """Fit ``seconds = a T + b T²`` (least squares, no intercept) to rows of one implementation; ``a / b``
    is the length where the quadratic term equals the linear one (``inf`` if the fit finds no T² term)."""
    if not isinstance(rows, list) or len(rows) < 2:
        raise ValueError(f"rows must be a list of at least two measurements, got {rows!r:.80}")
    if len({(r.get("model"), r.get("impl")) for r in rows}) != 1:
        raise ValueError("rows must all come from one model and implementation")
    T = torch.tensor([float(r["T"]) for r in rows], dtype=torch.float64)
    t = torch.tensor([float(r["seconds"]) for r in rows], dtype=torch.float64)
    design = torch.stack([T, T ** 2], 1)                                        # (n, 2)
    a, b = torch.linalg.lstsq(design, t[:, None]).solution.flatten().tolist()
    return a / b if b > 0 and a > 0 else float("inf")


def plot_cost(rows: list[dict], path=None):
    """Time and saved memory against T, log-log, one line per model and implementation."""
    import matplotlib.pyplot as plt

    if not isinstance(rows, list) or not rows:
        raise ValueError("rows must be a non-empty list of measurements (attention_cost / transformer_cost)")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for (model, impl) in dict.fromkeys((r["model"], r["impl"]) for r in rows):
        mine = [r for r in rows if (r["model"], r["impl"]) == (model, impl)]
        style = "-" if impl in ("explicit", "ours") else "--"
        for ax, key in zip(axes, ("seconds", "saved_MB")):
            ax.plot([r["T"] for r in mine], [r[key] for r in mine], style, marker="o", label=f"{model}: {impl}")
    for ax, label in zip(axes, ("forward + backward (s)", "memory saved for backward (MB)")):
        ax.set(xscale="log", yscale="log", xlabel="sequence length T", ylabel=label)
        ax.grid(True, which="both", alpha=0.3)
    T = sorted({r["T"] for r in rows})
    ref = [r for r in rows if r["impl"] == "explicit"] or rows
    anchor = min(ref, key=lambda r: r["T"])
    axes[1].plot(T, [anchor["saved_MB"] * (x / anchor["T"]) ** 2 for x in T], ":", color="gray", label="∝ T²")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"cost against sequence length ({torch.get_num_threads()} CPU thread(s), batch {rows[0]['batch']})")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.cost", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="lengths 16 and 32 only (what CI runs)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", help="write the measurements as JSON here")
    parser.add_argument("--plot", help="save the figure here (e.g. docs/attention_cost.png)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(check_positive_int(args.threads, "--threads"))
    lengths = (16, 32) if args.quick else LENGTHS
    load = os.getloadavg()[0]
    rows = attention_cost(lengths, repeat=1 if args.quick else 3)
    rows += transformer_cost(lengths, batch=2 if args.quick else 4, repeat=1 if args.quick else 2)
    takeover = {f"{m}: {i}": round(quadratic_takeover([r for r in rows if (r["model"], r["impl"]) == (m, i)]), 1)
                for m, i in dict.fromkeys((r["model"], r["impl"]) for r in rows)}
    result = {"rows": rows, "quadratic_takeover_T": takeover, "torch_threads": torch.get_num_threads(),
              "load_average_before": load, "load_average_after": os.getloadavg()[0], "torch": torch.__version__}
    for r in rows:
        print(f"{r['model']:<12} {r['impl']:<15} T={r['T']:>5}  {r['seconds'] * 1e3:>9.1f} ms  "
              f"{r['saved_MB']:>9.1f} MB saved")
    print("T where the T² term equals the linear one:", takeover)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    if args.plot:
        plot_cost(rows, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
