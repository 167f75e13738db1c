"""How fast do the course's from-scratch models train, next to the torch modules they mirror?

A slow from-scratch model is a worse lesson: in a class profile of a few CPU minutes, every wasted
update is one the student's model does not get. ``python -m coursekit.bench`` times, in one process and
on the same inputs, one training update (forward + backward + optimiser step) of each course model and
of its reference, alternating the two so that a change in machine load hits both alike:

* **attention**: :func:`~coursekit.attention.scaled_dot_product_attention` (explicit, and its fused path)
  vs ``F.scaled_dot_product_attention``;
* **multi-head attention**: :class:`~coursekit.attention.MultiHeadAttention` vs ``nn.MultiheadAttention``
  (same weights);
* **RNN / LSTM**: :class:`~coursekit.rnn.layers.RNN`, :class:`~coursekit.rnn.layers.LSTM` (a Python loop over time) vs
  ``nn.RNN``, ``nn.LSTM`` (fused kernels);
* **Transformer**: :class:`~coursekit.transformer.model.Transformer` vs ``nn.Transformer`` of the same size;
* **GPT**: :class:`~coursekit.gpt.model.GPT` vs a pre-LN ``nn.TransformerEncoderLayer`` stack under a causal mask.

Each row gives ``ours_per_s`` and ``reference_per_s`` (tokens per second for the models, query rows per
second for attention) and ``ratio`` = ours ÷ reference (> 1: ours is faster). The GPT row adds its
model-FLOPs utilisation against the machine's fp32 matmul throughput measured in the same run
(FLOPs per token ≈ 6 N + 12 L T C, the estimate of Kaplan et al. 2020 used by nanoGPT).

``--quick`` (tiny sizes, seconds; what CI runs) checks that every comparison works; it asserts nothing
about time. The default sizes are the course's own (the char-GPT and translation recipes).
``--compile`` adds one more row: the GPT's update under ``torch.compile`` against the same model eager
(with the seconds the first, compiling, update took) — the question "would compilation speed up the
course's CPU training?" answered on this machine.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import MultiHeadAttention, causal_mask, scaled_dot_product_attention
from coursekit.gpt.model import GPT, GPTConfig
from coursekit.rnn import layers as rnn
from coursekit.runtime import timed
from coursekit.transformer.model import Transformer, TransformerConfig
from coursekit.translation.throughput import TorchTransformerMT
from coursekit.validation import check_positive_int

__all__ = ["Sizes", "QUICK", "FULL", "matmul_gflops", "time_pair", "bench_compile", "run"]


@dataclass(frozen=True)
class Sizes:
    """Input sizes and timing budget of one benchmark run."""

    batch: int
    seq_len: int
    d_model: int
    n_heads: int
    n_layers: int
    vocab: int
    rnn_hidden: int
    steps: int          # timed updates per model (after `warmup` untimed ones)
    warmup: int = 2

    def __post_init__(self) -> None:
        for name in ("batch", "seq_len", "d_model", "n_heads", "n_layers", "vocab", "rnn_hidden", "steps"):
            check_positive_int(getattr(self, name), name)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")


QUICK = Sizes(batch=4, seq_len=16, d_model=32, n_heads=4, n_layers=1, vocab=64, rnn_hidden=32, steps=2, warmup=1)
# The char-GPT recipe (data/gpt/recipe.json: 4 layers, 4 heads, 128 wide, 64 positions, batch 12) and the
# LSTM of notebooks 03/04 at a comparable width.
FULL = Sizes(batch=12, seq_len=64, d_model=128, n_heads=4, n_layers=4, vocab=65, rnn_hidden=128, steps=30)


def matmul_gflops(n: int = 1024, repeat: int = 5) -> float:
    """Best fp32 ``n × n`` matmul throughput of this machine, in GFLOP/s (2 n³ FLOPs per product)."""
    check_positive_int(n, "n")
    check_positive_int(repeat, "repeat")
    a, b = torch.randn(n, n), torch.randn(n, n)
    best, _ = timed(lambda: a @ b, "cpu", repeat=repeat, warmup=1)
    return 2 * n ** 3 / best / 1e9


def time_pair(ours: Callable[[], None], reference: Callable[[], None], *, steps: int,
              warmup: int) -> tuple[float, float]:
    """Seconds spent in ``steps`` calls of each, after ``warmup`` untimed ones; the two alternate who goes
    first, so that a change of machine load between calls is shared."""
    check_positive_int(steps, "steps")
    for fn in (ours, reference):
        if not callable(fn):
            raise TypeError(f"ours and reference must be functions of no arguments, got {type(fn).__name__}")
    for _ in range(warmup):
        ours(), reference()
    seconds = [0.0, 0.0]
    for i in range(steps):
        order = ((0, ours), (1, reference)) if i % 2 else ((1, reference), (0, ours))
        for slot, fn in order:
            start = time.perf_counter()
            fn()
            seconds[slot] += time.perf_counter() - start
    return seconds[0], seconds[1]


def _update(model: nn.Module, opt: torch.optim.Optimizer, loss_fn: Callable[[], torch.Tensor]) -> Callable[[], None]:
    """One training update of ``model``: forward (``loss_fn``), backward, optimiser step."""
    def step() -> None:
        loss = loss_fn()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.train()
    return step


def _row(name: str, unit: str, units_per_step: int, seconds: tuple[float, float], s: Sizes, **extra) -> dict:
    ours, ref = (units_per_step * s.steps / t for t in seconds)
    return {"name": name, "unit": unit, "ours_per_s": round(ours, 1), "reference_per_s": round(ref, 1),
            "ratio": round(ours / ref, 3), **extra}


# ----------------------------------------------------------------------------- the comparisons


def bench_attention(s: Sizes) -> list[dict]:
    """softmax(QKᵀ/√d)V written out (with its weights), and our fused path, vs torch's kernel; causal,
    forward + backward."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(s.batch, s.n_heads, s.seq_len, s.d_model // s.n_heads, generator=g).requires_grad_()
               for _ in range(3))

    def ours() -> None:
        out, _ = scaled_dot_product_attention(q, k, v, causal=True)
        out.sum().backward()

    def reference() -> None:
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()

    def fused() -> None:                    # the same function with need_weights=False: the fused kernel
        scaled_dot_product_attention(q, k, v, causal=True, need_weights=False)[0].sum().backward()

    rows = s.batch * s.n_heads * s.seq_len
    seconds = time_pair(ours, reference, steps=s.steps, warmup=s.warmup)
    explicit = _row("attention (explicit) vs F.scaled_dot_product_attention", "query rows/s", rows, seconds, s,
                    note="materialises the (T, T) weights to return them; need_weights=False takes the fused path")
    seconds = time_pair(fused, reference, steps=s.steps, warmup=s.warmup)
    return [explicit, _row("attention (need_weights=False) vs F.scaled_dot_product_attention", "query rows/s",
                           rows, seconds, s)]


def bench_multi_head(s: Sizes) -> dict:
    """Causal self-attention block with the same weights: ours vs ``nn.MultiheadAttention``."""
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(s.d_model, s.n_heads, batch_first=True)
    ours = MultiHeadAttention.from_torch(ref)
    x = torch.randn(s.batch, s.seq_len, s.d_model)
    blocked = ~causal_mask(s.seq_len)                                            # True = may NOT attend
    step_ours = _update(ours, torch.optim.Adam(ours.parameters()),
                        lambda: ours(x, causal=True)[0].pow(2).mean())
    step_ref = _update(ref, torch.optim.Adam(ref.parameters()),
                       lambda: ref(x, x, x, attn_mask=blocked, need_weights=False, is_causal=True)[0].pow(2).mean())
    seconds = time_pair(step_ours, step_ref, steps=s.steps, warmup=s.warmup)
    return _row("multi-head attention vs nn.MultiheadAttention", "tokens/s", s.batch * s.seq_len, seconds, s)


def bench_recurrent(s: Sizes, kind: str) -> dict:
    """Two-layer RNN/LSTM with the same weights: the course's cell loop vs torch's fused kernel."""
    torch.manual_seed(0)
    ref = {"rnn": nn.RNN, "lstm": nn.LSTM}[kind](s.d_model, s.rnn_hidden, num_layers=2, batch_first=True)
    ours = rnn.from_torch(ref)
    x = torch.randn(s.batch, s.seq_len, s.d_model)
    step_ours = _update(ours, torch.optim.Adam(ours.parameters()), lambda: ours(x)[0].pow(2).mean())
    step_ref = _update(ref, torch.optim.Adam(ref.parameters()), lambda: ref(x)[0].pow(2).mean())
    seconds = time_pair(step_ours, step_ref, steps=s.steps, warmup=s.warmup)
    name = {"rnn": "RNN (2 layers) vs nn.RNN", "lstm": "LSTM (2 layers) vs nn.LSTM"}[kind]
    return _row(name, "tokens/s", s.batch * s.seq_len, seconds, s,
                note="a Python loop over time steps against a fused kernel: slower by design, to be readable")


def bench_transformer(s: Sizes) -> dict:
    """Encoder–decoder of the same size, same batch: ours vs ``nn.Transformer`` (translation.throughput's twin)."""
    cfg = TransformerConfig(s.vocab, s.vocab, d_model=s.d_model, n_heads=s.n_heads, n_encoder_layers=s.n_layers,
                            n_decoder_layers=s.n_layers, d_ff=4 * s.d_model, dropout=0.1, max_len=s.seq_len)
    torch.manual_seed(0)
    models = [Transformer(cfg), TorchTransformerMT(cfg)]
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, s.vocab, (s.batch, s.seq_len), generator=g)
    tgt = torch.randint(4, s.vocab, (s.batch, s.seq_len + 1), generator=g)
    keep = torch.ones(s.batch, s.seq_len, dtype=torch.bool)

    def loss_of(model: nn.Module) -> Callable[[], torch.Tensor]:
        return lambda: F.cross_entropy(model(src, tgt[:, :-1], keep, keep).flatten(0, 1), tgt[:, 1:].flatten())

    steps = [_update(m, torch.optim.Adam(m.parameters()), loss_of(m)) for m in models]
    seconds = time_pair(*steps, steps=s.steps, warmup=s.warmup)
    return _row("Transformer vs nn.Transformer", "target tokens/s", s.batch * s.seq_len, seconds, s)


class TorchGPT(nn.Module):
    """The reference decoder-only model: the GPT's embeddings and tied head around a pre-LN
    ``nn.TransformerEncoder`` stack (GELU, 4·C feed-forward) under a causal mask."""

    def __init__(self, vocab: int, max_len: int, d_model: int, n_heads: int, n_layers: int) -> None:
        super().__init__()
        for name, value in (("vocab", vocab), ("max_len", max_len), ("d_model", d_model),
                            ("n_heads", n_heads), ("n_layers", n_layers)):
            check_positive_int(value, name)
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True, bias=False)
        self.blocks = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d_model, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        h = self.wte(idx) + self.wpe.weight[:T]
        h = self.blocks(h, mask=mask, is_causal=True)
        return self.ln_f(h) @ self.wte.weight.T                               # tied output layer


def _gpt_and_batch(s: Sizes):
    """The course GPT at sizes ``s`` (initialised after ``torch.manual_seed(0)``) and one fixed batch
    ``(x, y)`` of random token ids, ``y`` being ``x`` shifted by one position."""
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=s.vocab, max_len=s.seq_len, n_layers=s.n_layers, n_heads=s.n_heads,
                    d_model=s.d_model, dropout=0.0, bias=False)
    model = GPT(cfg)
    idx = torch.randint(0, s.vocab, (s.batch, s.seq_len + 1), generator=torch.Generator().manual_seed(0))
    return model, (idx[:, :-1], idx[:, 1:])


def bench_gpt(s: Sizes, gflops: float) -> dict:
    """The course GPT vs a torch decoder-only stack of the same size, plus the GPT's model-FLOPs utilisation."""
    ours, (x, y) = _gpt_and_batch(s)
    ref = TorchGPT(s.vocab, s.seq_len, s.d_model, s.n_heads, s.n_layers)
    step_ours = _update(ours, torch.optim.AdamW(ours.parameters()), lambda: ours(x, y)[1])
    step_ref = _update(ref, torch.optim.AdamW(ref.parameters()),
                       lambda: F.cross_entropy(ref(x).flatten(0, 1), y.flatten()))
    seconds = time_pair(step_ours, step_ref, steps=s.steps, warmup=s.warmup)
    row = _row("GPT vs nn.TransformerEncoderLayer stack (causal)", "tokens/s", s.batch * s.seq_len, seconds, s)
    flops_per_token = 6 * ours.num_params() + 12 * s.n_layers * s.seq_len * s.d_model
    row["mfu"] = round(row["ours_per_s"] * flops_per_token / (gflops * 1e9), 3)
    return row


def bench_compile(s: Sizes) -> dict:
    """The GPT's training update under ``torch.compile`` (TorchInductor) vs the same model eager, same
    weights and batch: ``ratio`` = compiled ÷ eager, ``compile_seconds`` = the first compiled update."""
    _check_sizes(s)
    eager, (x, y) = _gpt_and_batch(s)
    model = copy.deepcopy(eager)
    compiled = torch.compile(model)
    step_compiled = _update(model, torch.optim.AdamW(model.parameters()), lambda: compiled(x, y)[1])
    step_eager = _update(eager, torch.optim.AdamW(eager.parameters()), lambda: eager(x, y)[1])
    start = time.perf_counter()
    step_compiled()                                                             # compiles forward and backward
    compile_seconds = time.perf_counter() - start
    seconds = time_pair(step_compiled, step_eager, steps=s.steps, warmup=s.warmup)
    return _row("GPT under torch.compile vs eager", "tokens/s", s.batch * s.seq_len, seconds, s,
                compile_seconds=round(compile_seconds, 1))


def _check_sizes(sizes) -> None:
    if not isinstance(sizes, Sizes):
        raise TypeError(f"sizes must be a coursekit.bench.speed.Sizes, got {type(sizes).__name__}")


def run(sizes: Sizes = FULL, *, log: Callable[[str], None] | None = None, compile: bool = False) -> dict:
    """Every comparison at ``sizes`` (and ``torch.compile`` vs eager if ``compile``); the machine's matmul
    throughput, threads and load around them."""
    _check_sizes(sizes)
    if log is not None and not callable(log):
        raise TypeError(f"log must be a function such as print or None, got {type(log).__name__}")
    if not isinstance(compile, bool):
        raise TypeError(f"compile must be a bool, got {type(compile).__name__}")
    load_before = os.getloadavg()[0]
    gflops = matmul_gflops(256 if sizes is QUICK else 1024)
    rows = []
    for bench in (bench_attention, bench_multi_head, lambda s: bench_recurrent(s, "rnn"),
                  lambda s: bench_recurrent(s, "lstm"), bench_transformer, lambda s: bench_gpt(s, gflops),
                  *([bench_compile] if compile else [])):
        new = bench(sizes)
        for row in new if isinstance(new, list) else [new]:
            rows.append(row)
            if log:
                log(_format(row))
    return {"rows": rows, "matmul_gflops": round(gflops, 1), "torch_threads": torch.get_num_threads(),
            "load_average_before": load_before, "load_average_after": os.getloadavg()[0],
            "torch": torch.__version__, "sizes": sizes.__dict__}


def _format(row: dict) -> str:
    extra = f"  MFU {row['mfu']:.2f}" if "mfu" in row else ""
    extra += f"  (compiling: {row['compile_seconds']:.1f} s)" if "compile_seconds" in row else ""
    return (f"{row['name']:<66} ours {row['ours_per_s']:>10,.0f}  reference {row['reference_per_s']:>10,.0f} "
            f"{row['unit']:<16} ratio {row['ratio']:.2f}{extra}")
