"""The character-level GPT of notebook 10: nanoGPT's shakespeare_char recipe, its checkpoint and its CLI.

Tiny Shakespeare as characters (:class:`CharTokenizer`, :func:`char_data`: nanoGPT's 90/10 split),
random windows (:func:`get_batch`), nanoGPT's loss estimate (:func:`estimate_loss`, and
:func:`fixed_val_loss` on a fixed validation subset), the recipe (:class:`TrainConfig`, :func:`train`:
AdamW, warm-up and cosine decay, model-FLOPs utilisation from :func:`model_flops_per_token` against
:func:`matmul_flops`) and the committed model in ``data/gpt/`` (:func:`load_char_gpt`). The model itself is
:class:`coursekit.gpt.model.GPT`.

``python -m coursekit.gpt train --config cfg.json --out DIR`` trains it and writes
``model.safetensors`` + ``report.json``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from coursekit.data import PROJECT_DATA, read_text
from coursekit.gpt.model import GPT, GPTConfig, _check_gpt
from coursekit.runtime import device as pick_device
from coursekit.text import decode_ids
from coursekit.training.loop import fit, load_model_directory, warmup_cosine
from coursekit.validation import (
    ID_DTYPES,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_tensor,
)
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_generator as _check_generator

__all__ = ["CharTokenizer", "TrainConfig", "train", "estimate_loss", "fixed_val_loss", "get_batch", "char_data",
           "load_char_gpt", "model_flops_per_token", "matmul_flops", "CHECKPOINT_DIR"]


class CharTokenizer:
    """Characters ↔ ids (the sorted set of characters of a text): nanoGPT's shakespeare_char coding."""

    def __init__(self, chars: str) -> None:
        if not isinstance(chars, str):
            raise TypeError(f"chars must be a str, got {type(chars).__name__}")
        if not chars or len(set(chars)) != len(chars):
            raise ValueError(f"chars must be a non-empty string of distinct characters, got {chars!r}")
        self.itos = list(chars)
        self.stoi = {c: i for i, c in enumerate(chars)}

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text:
            raise ValueError("text must not be empty")
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, s: str) -> list[int]:
        if not isinstance(s, str):
            raise TypeError(f"encode expects a str, got {type(s).__name__}")
        unknown = sorted(set(s) - set(self.stoi))
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {unknown[:10]}")
        return [self.stoi[c] for c in s]

    def decode(self, ids) -> str:
        """Ids (a list or a 1-D integer tensor) → the text; a negative id is an error, not the last character."""
        return "".join(decode_ids(self.itos, ids))


def char_data(text: str | None = None) -> tuple[CharTokenizer, torch.Tensor, torch.Tensor]:
    """(tokenizer, train ids, val ids): nanoGPT's split, the first 90% / the last 10% of the characters."""
    if text is None:
        text = read_text("tinyshakespeare")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if len(text) < 2:
        raise ValueError(f"text must be long enough to split 90/10 into non-empty train and validation parts, "
                         f"got {text!r}")
    if len(text) < 100 and not any(c.isspace() for c in text):
        raise ValueError(f"text must be the corpus itself, got {text!r} ({len(text)} characters, no whitespace), "
                         "which looks like a name: call char_data() for Tiny Shakespeare, or pass "
                         "coursekit.data.read_text(name) for another corpus")
    tok = CharTokenizer.from_text(text)
    data = torch.tensor(tok.encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    return tok, data[:n], data[n:]


def get_batch(data: torch.Tensor, batch_size: int, max_len: int,
              generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows: x = data[i : i+T], y = data[i+1 : i+T+1] (the next characters), each (B, T)."""
    check_positive_int(batch_size, "batch_size")
    check_positive_int(max_len, "max_len")
    _check_id_stream(data, "data", max_len)
    _check_generator(generator)
    ix = torch.randint(len(data) - max_len, (batch_size,), generator=generator).to(data.device)
    offsets = torch.arange(max_len, device=data.device)
    x = data[ix[:, None] + offsets]                                             # (B, T)
    y = data[ix[:, None] + offsets + 1]                                         # (B, T)
    return x, y


def _check_id_stream(data, name: str, max_len: int) -> None:
    """A 1-D tensor of token ids with room for one window of ``max_len`` tokens and its next token."""
    check_tensor(data, name, ndim=1)
    if data.dtype not in ID_DTYPES:
        raise TypeError(f"{name} must be an integer (int64 or int32) tensor of token ids, got {data.dtype}")
    if len(data) <= max_len:
        raise ValueError(f"{name} must hold more than max_len={max_len} tokens (a window and its next token), "
                         f"got {len(data)}")


@torch.no_grad()
def estimate_loss(model: GPT, data: torch.Tensor, *, batch_size: int, iters: int,
                  generator: torch.Generator | None = None) -> float:
    """nanoGPT's estimate: the mean loss over ``iters`` random batches (pass a seeded generator
    for a fixed evaluation subset)."""
    _check_gpt(model)
    check_positive_int(batch_size, "batch_size")
    check_positive_int(iters, "iters")
    T = model.config.max_len
    _check_id_stream(data, "data", T)
    was_training = model.training
    model.eval()
    try:
        losses = [model(*get_batch(data, batch_size, T, generator))[1].item() for _ in range(iters)]
    finally:
        model.train(was_training)
    return sum(losses) / len(losses)


FIXED_EVAL = {"batch_size": 32, "iters": 8, "seed": 0}     # a fixed validation subset: fast and deterministic


def fixed_val_loss(model: GPT, val_ids: torch.Tensor) -> float:
    """Loss on a fixed subset of the validation split (8 seeded batches of 32): what the committed
    checkpoint's test compares against."""
    _check_gpt(model)
    _check_id_stream(val_ids, "val_ids", model.config.max_len)
    return estimate_loss(model, val_ids, batch_size=FIXED_EVAL["batch_size"], iters=FIXED_EVAL["iters"],
                         generator=torch.Generator().manual_seed(FIXED_EVAL["seed"]))


CHECKPOINT_DIR = PROJECT_DATA / "gpt"


def load_char_gpt(directory: str | Path = CHECKPOINT_DIR) -> tuple[GPT, CharTokenizer, dict]:
    """The committed character-level Tiny Shakespeare GPT: ``(model, tokenizer, report)``.

    ``directory`` holds ``model.safetensors`` (weights + config) and ``report.json`` (the recipe,
    loss curves and final losses) written by ``python -m coursekit.gpt train --out DIR``.
    """
    directory = Path(directory)
    reproduce = f"python -m coursekit.gpt train --out {directory}"

    def build(config: dict, extra: dict) -> GPT:
        if "chars" not in extra:
            raise ValueError(f"{directory} holds no character-level GPT (its metadata has no 'chars'); "
                             f"make one with `{reproduce}`")
        unknown = sorted(set(config) - {f.name for f in dataclasses.fields(GPTConfig)})
        if unknown:
            raise ValueError(f"{directory}: the model's config has fields GPTConfig does not know: {unknown} "
                             f"(written by another version of the course?); make it again with `{reproduce}`")
        return GPT(GPTConfig(**config))

    model, extra = load_model_directory(directory, build, reproduce=reproduce)
    report_path = directory / "report.json"
    if not report_path.is_file():
        raise FileNotFoundError(f"no report at {report_path}; make the model with `{reproduce}`")
    report = json.loads(report_path.read_text())
    return model, CharTokenizer(extra["chars"]), report


def model_flops_per_token(config: GPTConfig, n_params: int) -> float:
    """Training FLOPs per token: 6N for the weights (forward 2N + backward 4N) plus the attention
    scores and weighted sums, 12·L·C·T (Kaplan et al. 2020, Table 1; nanoGPT's estimate_mfu)."""
    if not isinstance(config, GPTConfig):
        raise TypeError(f"config must be a GPTConfig, got {type(config).__name__}")
    check_positive_int(n_params, "n_params")
    return 6 * n_params + 12 * config.n_layers * config.d_model * config.max_len


def matmul_flops(n: int = 1024, repeats: int = 10) -> dict[str, float]:
    """FLOP/s of an fp32 (n × n) @ (n × n) matmul on the CPU, measured now (the "peak" for MFU).

    Returns FLOPs per second of wall time and per second of this process's CPU time; on a machine
    shared with other jobs only the second is stable (compare it with the model's CPU-time rate).
    """
    check_positive_int(n, "n")
    check_positive_int(repeats, "repeats")
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b                                                                       # warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        a @ b
    flops = repeats * 2 * n ** 3
    return {"wall": flops / (time.perf_counter() - wall), "cpu": flops / (time.process_time() - cpu)}


@dataclass
class TrainConfig:
    """The recipe. The defaults are the course's fast CPU recipe; ``TrainConfig.nanogpt_cpu()`` is
    nanoGPT's documented CPU run (4 × 4 × 128, context 64, batch 12, 2,000 iterations → 1.88)."""

    n_layers: int = 4
    n_heads: int = 4
    d_model: int = 128
    max_len: int = 64
    dropout: float = 0.0
    bias: bool = False
    batch_size: int = 12
    max_iters: int = 1300            # the course recipe: 5× nanoGPT's learning rate, 65% of its iterations
    learning_rate: float = 5e-3
    min_lr_ratio: float = 0.1        # cosine decay to learning_rate × min_lr_ratio at max_iters
    warmup_iters: int = 100
    weight_decay: float = 0.1
    beta2: float = 0.99
    grad_clip: float = 1.0
    eval_interval: int = 100
    eval_iters: int = 20             # batches per loss estimate (nanoGPT's CPU command uses 20)
    seed: int = 1337
    threads: int = 0                 # torch intra-op threads; 0 keeps the current setting ($OMP_NUM_THREADS)

    def __post_init__(self) -> None:
        for name in ("n_layers", "n_heads", "d_model", "max_len", "batch_size", "max_iters", "eval_interval",
                     "eval_iters"):
            check_positive_int(getattr(self, name), name)
        for name in ("warmup_iters", "seed", "threads"):
            _check_count(getattr(self, name), name)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        check_probability(self.dropout, "dropout", inclusive_high=False)
        check_probability(self.min_lr_ratio, "min_lr_ratio")
        check_probability(self.beta2, "beta2", inclusive_high=False)
        check_positive_float(self.learning_rate, "learning_rate")
        check_positive_float(self.weight_decay, "weight_decay", allow_zero=True)
        check_positive_float(self.grad_clip, "grad_clip")
        if not isinstance(self.bias, bool):
            raise TypeError(f"bias must be a bool, got {type(self.bias).__name__}")

    @classmethod
    def nanogpt_cpu(cls) -> TrainConfig:
        return cls(n_layers=4, n_heads=4, d_model=128, max_len=64, batch_size=12, max_iters=2000,
                   learning_rate=1e-3, warmup_iters=100, eval_interval=250, eval_iters=20, bias=False)

    def model_config(self, vocab_size: int) -> GPTConfig:
        return GPTConfig(vocab_size=vocab_size, max_len=self.max_len, n_layers=self.n_layers,
                         n_heads=self.n_heads, d_model=self.d_model, dropout=self.dropout, bias=self.bias)


def train(cfg: TrainConfig, text: str | None = None, *, progress: bool | None = None,
          device: torch.device | str | None = None) -> tuple[GPT, dict]:
    """Train a character-level GPT with AdamW + warm-up + cosine decay; return ``(model, report)``.

    ``report`` holds the loss curves (``history``), the wall time of each evaluation, the first
    time the validation estimate reached nanoGPT's 1.886, tokens/s and model-FLOPs utilisation
    against a large fp32 matmul measured in the same run.
    """
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig, got {type(cfg).__name__}")
    device = torch.device("cpu") if device is None else pick_device(device)
    tok, train_ids, val_ids = char_data(text)
    if len(val_ids) <= cfg.max_len:
        raise ValueError(f"text is too short for max_len={cfg.max_len}: its validation part (the last 10%) "
                         f"has {len(val_ids)} characters; it needs more than {cfg.max_len}")
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    train_ids, val_ids = train_ids.to(device), val_ids.to(device)
    torch.manual_seed(cfg.seed)
    model = GPT(cfg.model_config(len(tok))).to(device)                          # initialised on the CPU
    decay = [p for p in model.parameters() if p.dim() >= 2]                    # weights and embeddings
    no_decay = [p for p in model.parameters() if p.dim() < 2]                  # biases and LayerNorm gains
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=cfg.learning_rate, betas=(0.9, cfg.beta2))
    scheduler = warmup_cosine(optimizer, cfg.warmup_iters, cfg.max_iters, cfg.min_lr_ratio)
    batch_gen = torch.Generator().manual_seed(cfg.seed)
    eval_gen = torch.Generator().manual_seed(cfg.seed + 1)
    peak = matmul_flops()
    eval_wall = eval_cpu = 0.0
    start, start_cpu = time.perf_counter(), time.process_time()
    times: list[tuple[float, float]] = []                                      # (wall, cpu) at each evaluation

    def evaluate(m: GPT) -> dict[str, float]:
        nonlocal eval_wall, eval_cpu
        t0, c0 = time.perf_counter(), time.process_time()
        out = {split: estimate_loss(m, ids, batch_size=cfg.batch_size, iters=cfg.eval_iters, generator=eval_gen)
               for split, ids in (("train", train_ids), ("val", val_ids))}
        eval_wall += time.perf_counter() - t0
        eval_cpu += time.process_time() - c0
        times.append((time.perf_counter() - start, time.process_time() - start_cpu))
        return out

    history = fit(model, optimizer, lambda step: get_batch(train_ids, cfg.batch_size, cfg.max_len, batch_gen),
                  lambda m, batch: m(*batch)[1], steps=cfg.max_iters, clip=cfg.grad_clip, scheduler=scheduler,
                  eval_fn=evaluate, eval_every=cfg.eval_interval, progress=progress, desc="gpt")
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    tokens = cfg.max_iters * cfg.batch_size * cfg.max_len
    train_wall, train_cpu = wall - eval_wall, cpu - eval_cpu
    flops = model_flops_per_token(model.config, model.num_params()) * tokens
    reached = [(s, t, d["val"]) for (s, d), t in zip(history.evals, times) if d["val"] <= 1.886]
    report = {
        "config": dataclasses.asdict(cfg), "model_config": dataclasses.asdict(model.config),
        "chars": "".join(tok.itos), "n_params": model.num_params(), "torch_threads": torch.get_num_threads(),
        "device": str(device),
        "history": {"steps": history.steps, "train_loss": history.train_loss,
                    "evals": [(s, d) for s, d in history.evals], "eval_times_wall_cpu": times},
        "final": history.evals[-1][1], "wall_seconds": wall, "cpu_seconds": cpu,
        "eval_wall_seconds": eval_wall, "eval_cpu_seconds": eval_cpu,
        "tokens_per_second": tokens / train_wall, "tokens_per_cpu_second": tokens / train_cpu,
        "model_flops_per_second": flops / train_wall, "model_flops_per_cpu_second": flops / train_cpu,
        "matmul_flops_per_second": peak["wall"], "matmul_flops_per_cpu_second": peak["cpu"],
        "mfu_wall": flops / train_wall / peak["wall"], "mfu_cpu": flops / train_cpu / peak["cpu"],
        "reached_1_886": ({"step": reached[0][0], "wall_seconds": reached[0][1][0], "cpu_seconds": reached[0][1][1],
                           "val": reached[0][2]} if reached else None),
    }
    return model, report
