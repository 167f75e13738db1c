"""In-context learning on a family of synthetic tasks: the tasks, the recipe of ``data/icl``, evaluation (notebook 12).

Because no pretrained large model can be downloaded here, in-context learning is demonstrated on a
**family of synthetic tasks** (in the spirit of Chan et al. 2022, *Data Distributional Properties Drive
Emergent In-Context Learning*): every sequence is a *fresh* random mapping from K input tokens to L
label tokens, written as demonstrations ``x y x y …``, so the only way to predict a label is to read the
sequence's own demonstrations. **Held-out tasks** pair input and label pool halves that never co-occur
in training, so no evaluation mapping — not even one (input, label) association — was ever trained on.

The recipe (:class:`ICLTrainConfig`) trains a 2-layer GPT on a 50/50 mix of such task sequences and of
**repeated random segments** (:func:`repeated_segment_batch`: random tokens of the whole vocabulary in
which one segment of random length recurs at a random place). Copying a segment whose length and place
change from sequence to sequence cannot be done by position; it needs an **induction head**
(:mod:`coursekit.induction`), and because the segments draw on every token, the copying it learns does not
depend on which tokens are inputs or labels — which is what makes the held-out pairings work. Training
records the loss, the held-out accuracy and every head's induction score over time: the phase change of
Olsson et al. (2022), where all three move together.

``python -m coursekit.prompting train --work runs/icl --out data/icl`` reproduces the committed model
(checkpoints in ``--work``, ``--resume`` continues an interrupted run exactly);
``python -m coursekit.prompting icl --json`` prints its held-out accuracy by number of shots.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.checks import (
    ID_DTYPES,
    check_choice,
    check_int_sequence,
    check_labels,
    check_non_empty,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)
from coursekit.checks import check_count as _check_count
from coursekit.checks import check_generator as _check_generator
from coursekit.gpt import GPT, GPTConfig, _check_gpt
from coursekit.induction import attention_maps, induction_scores, previous_token_scores, repeated_random_tokens
from coursekit.prompting import TokenFormat, build_token_prompt, classify_by_likelihood, model_logits

__all__ = ["ICLTaskFamily", "Task", "random_task", "sample_tasks", "icl_batch", "training_batch",
           "repeated_segment_batch", "ideal_accuracy", "ICLTrainConfig", "train_icl", "evaluate_shots",
           "heldout_accuracy", "save_icl_checkpoint", "load_icl_checkpoint", "finetune_on_demonstrations",
           "evaluate_finetuning", "demo_order"]


def _check_family(family) -> None:
    if not isinstance(family, ICLTaskFamily):
        raise TypeError(f"family must be an ICLTaskFamily, got {type(family).__name__}")


def _check_tasks(tasks) -> None:
    check_non_empty(tasks, "tasks")
    bad = next((t for t in tasks if not isinstance(t, Task)), None)
    if bad is not None:
        raise TypeError(f"tasks must hold Task objects, got {type(bad).__name__}")


def _token_format(family, fmt) -> TokenFormat:
    """A format name of the family ("bare", "arrow", "io") or a TokenFormat → the TokenFormat."""
    if isinstance(fmt, TokenFormat):
        return fmt
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format name or a TokenFormat, got {type(fmt).__name__}")
    if family is None:
        raise TypeError(f"fmt={fmt!r} is a format name, which needs the task family; pass family or a TokenFormat")
    formats = family.formats()
    return formats[check_choice(fmt, "fmt", list(formats))]


# ================================================================================================
# The synthetic task family
# ================================================================================================

@dataclass(frozen=True)
class ICLTaskFamily:
    """Random token→label mappings. Token ids: 4 format tokens, then the input pool, then the label pool.

    Each pool is split in halves A and B. Training tasks draw inputs and labels from the *same* half
    (A→A or B→B); held-out tasks pair *different* halves (A→B or B→A), so no (input, label)
    association of an evaluation task ever occurs in training.
    """

    n_input_tokens: int = 64        # the input pool
    n_label_tokens: int = 16        # the label pool
    inputs_per_task: int = 8        # K
    labels_per_task: int = 4        # L: chance = 1/L
    n_pairs: int = 17               # pairs per training sequence (16 demonstrations + 1 query)

    ARROW, SEP, IN, OUT = 0, 1, 2, 3

    def __post_init__(self) -> None:
        for name in ("n_input_tokens", "n_label_tokens", "inputs_per_task", "labels_per_task", "n_pairs"):
            check_positive_int(getattr(self, name), name)
        if self.inputs_per_task > self.n_input_tokens // 2 or self.labels_per_task > self.n_label_tokens // 2:
            raise ValueError("a task draws from one half of each pool: need inputs_per_task <= n_input_tokens/2 "
                             "and labels_per_task <= n_label_tokens/2, got "
                             f"inputs_per_task={self.inputs_per_task}, n_input_tokens={self.n_input_tokens}, "
                             f"labels_per_task={self.labels_per_task}, n_label_tokens={self.n_label_tokens}")
        if self.labels_per_task < 2:
            raise ValueError(f"labels_per_task must be >= 2, got {self.labels_per_task}")

    @property
    def vocab_size(self) -> int:
        return 4 + self.n_input_tokens + self.n_label_tokens

    def formats(self) -> dict[str, TokenFormat]:
        return {"bare": TokenFormat("bare"),                                           # x y x y … x
                "arrow": TokenFormat("arrow", between=(self.ARROW,), after_y=(self.SEP,)),  # x => y ; … x =>
                "io": TokenFormat("io", before_x=(self.IN,), between=(self.OUT,), after_y=(self.SEP,))}

    def input_ids(self, half: int) -> torch.Tensor:
        check_choice(half, "half", [0, 1])
        n = self.n_input_tokens // 2
        return 4 + half * n + torch.arange(n)

    def label_ids(self, half: int) -> torch.Tensor:
        check_choice(half, "half", [0, 1])
        n = self.n_label_tokens // 2
        return 4 + self.n_input_tokens + half * n + torch.arange(n)

    def token_name(self, i: int) -> str:
        if isinstance(i, torch.Tensor):                     # e.g. task.labels[j]
            if i.numel() != 1 or i.is_floating_point() or i.dtype == torch.bool:
                raise TypeError(f"i must be one integer token id, got a {i.dtype} tensor of shape {tuple(i.shape)}")
            i = int(i)
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"i must be an int token id, got {type(i).__name__}")
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"i must be a token id in [0, {self.vocab_size}), got {i}")
        if i < 4:
            return ["=>", ";", "In:", "Out:"][i]
        if i < 4 + self.n_input_tokens:
            return f"x{i - 4:02d}"
        return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[(i - 4 - self.n_input_tokens) % 26] * (
            1 + (i - 4 - self.n_input_tokens) // 26)

    def block_size(self, fmt: str = "arrow") -> int:
        check_choice(fmt, "fmt", list(self.formats()))
        return max(f.pair_length() for f in self.formats().values()) * self.n_pairs


@dataclass
class Task:
    """One task: K input ids, L label ids and ``mapping[j]`` = the index (0…L-1) of input j's label."""

    inputs: torch.Tensor    # (K,)
    labels: torch.Tensor    # (L,)
    mapping: torch.Tensor   # (K,)

    def __post_init__(self) -> None:
        for name in ("inputs", "labels", "mapping"):
            check_tensor(getattr(self, name), name, ndim=1, dtype=ID_DTYPES)
        check_size(self.mapping, "mapping", 0, len(self.inputs), "one label index per input")
        check_labels(self.mapping, "mapping", len(self.labels))

    def label_of(self, j: int) -> int:
        if isinstance(j, bool) or not isinstance(j, int):
            raise TypeError(f"j must be an int, got {type(j).__name__}")
        if not 0 <= j < len(self.inputs):
            raise ValueError(f"j must be an input index in [0, {len(self.inputs)}), got {j}")
        return int(self.labels[self.mapping[j]])


def random_task(input_pool: torch.Tensor, label_pool: torch.Tensor, K: int, L: int,
                generator: torch.Generator) -> Task:
    """A fresh task: K distinct inputs and L distinct labels drawn from the pools, each label given
    to K/L inputs (balanced classes; the remainder spread over the first labels)."""
    check_tensor(input_pool, "input_pool", ndim=1, dtype=ID_DTYPES)
    check_tensor(label_pool, "label_pool", ndim=1, dtype=ID_DTYPES)
    check_positive_int(K, "K")
    check_positive_int(L, "L")
    _check_generator(generator)
    if K > len(input_pool) or L > len(label_pool):
        raise ValueError(f"need K={K} <= {len(input_pool)} inputs and L={L} <= {len(label_pool)} labels in the pools")
    inputs = input_pool[torch.randperm(len(input_pool), generator=generator)[:K]]
    labels = label_pool[torch.randperm(len(label_pool), generator=generator)[:L]]
    mapping = (torch.arange(K) % L)[torch.randperm(K, generator=generator)]
    return Task(inputs, labels, mapping)


def sample_tasks(family: ICLTaskFamily, n: int, split: str, generator: torch.Generator) -> list[Task]:
    """``n`` random tasks. ``split="train"``: inputs and labels from the same pool half;
    ``"heldout"``: from different halves. Each label is used by K/L inputs (balanced classes)."""
    _check_family(family)
    check_choice(split, "split", ["train", "heldout"])
    check_positive_int(n, "n")
    tasks = []
    for _ in range(n):
        h_in = int(torch.randint(2, (1,), generator=generator))
        h_lab = h_in if split == "train" else 1 - h_in
        tasks.append(random_task(family.input_ids(h_in), family.label_ids(h_lab), family.inputs_per_task,
                                 family.labels_per_task, generator))
    return tasks


def demo_order(K: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """k demonstration inputs: distinct while k <= K (a random permutation, repeated if k > K)."""
    check_positive_int(K, "K")
    _check_count(k, "k")
    _check_generator(generator)
    reps = [torch.randperm(K, generator=generator) for _ in range(max(1, math.ceil(k / K)))]
    return torch.cat(reps)[:k]


def icl_batch(family: ICLTaskFamily | None, tasks: Sequence[Task], k: int, fmt: str | TokenFormat,
              generator: torch.Generator,
              *, queries: str = "all", label_noise: float = 0.0, noise: str = "random",
              demo_orders: list[torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
    """Prompts for every task: k demonstrations + a query.

    ``queries="all"``: one prompt per task and input (query j = input j, fresh demonstrations each);
    ``"one"``: one prompt per task with a random query. ``label_noise`` is the fraction of
    demonstrations whose label is replaced (``noise="random"``: another label of the task;
    ``"flip"``: the next label, a consistent permutation). Returns ``prompts`` (N, T),
    ``candidates`` (N, L), ``answer`` (N,) (index of the true label), ``shown`` (N,) (index of the
    label the demonstrations showed for the query input, or -1 if it was not shown), ``task`` (N,)
    (which task) and ``seen`` (N,) bool.
    """
    if family is not None:                                  # (family may be None with a TokenFormat)
        _check_family(family)
    fmt = _token_format(family, fmt)
    _check_tasks(tasks)
    _check_count(k, "k (the number of shots)")
    check_probability(label_noise, "label_noise")
    check_choice(queries, "queries", ["all", "one"])
    check_choice(noise, "noise", ["random", "flip"])
    _check_generator(generator)
    if demo_orders is not None:
        if len(demo_orders) != len(tasks):
            raise ValueError(f"demo_orders must hold one order per task ({len(tasks)}), got {len(demo_orders)}")
        for t, (order, task) in enumerate(zip(demo_orders, tasks)):
            check_tensor(order, f"demo_orders[{t}]", ndim=1)
            if len(order) != k:
                raise ValueError(f"demo_orders[{t}] must hold k={k} demonstration indices, got {len(order)}")
            check_token_ids(order, f"demo_orders[{t}]", len(task.inputs))
    prompts, cands, answers, shown, task_ids = [], [], [], [], []
    for t, task in enumerate(tasks):
        K, L = len(task.inputs), len(task.labels)
        qs = range(K) if queries == "all" else [int(torch.randint(K, (1,), generator=generator))]
        for q in qs:
            order = (demo_orders[t] if demo_orders is not None else demo_order(K, k, generator))
            lab_idx = task.mapping[order].clone()
            if label_noise > 0 and k > 0:
                corrupt = torch.rand(k, generator=generator) < label_noise
                shift = (torch.randint(1, L, (k,), generator=generator) if noise == "random"
                         else torch.ones(k, dtype=torch.long))
                lab_idx = torch.where(corrupt, (lab_idx + shift) % L, lab_idx)
            demos = [(task.inputs[j], task.labels[y]) for j, y in zip(order.tolist(), lab_idx.tolist())]
            prompts.append(build_token_prompt(demos, task.inputs[q], fmt))
            cands.append(task.labels)
            answers.append(int(task.mapping[q]))
            hits = (order == q).nonzero()
            shown.append(int(lab_idx[hits[-1, 0]]) if len(hits) else -1)
            task_ids.append(t)
    return {"prompts": torch.tensor(prompts), "candidates": torch.stack(cands), "answer": torch.tensor(answers),
            "shown": torch.tensor(shown), "task": torch.tensor(task_ids), "seen": torch.tensor(shown) >= 0}


def training_batch(family: ICLTaskFamily, batch_size: int, generator: torch.Generator,
                   fmt: str = "arrow") -> tuple[torch.Tensor, torch.Tensor]:
    """(idx, targets), each (B, n_pairs · pair length - 1): sequences of ``n_pairs`` i.i.d.
    demonstrations of fresh training tasks (as :func:`sample_tasks` with ``split="train"``, drawn in
    one go) in format ``fmt``; targets are the next tokens at the positions that precede a label
    and -1 (ignored) elsewhere — the model is only asked to predict labels."""
    _check_family(family)
    check_positive_int(batch_size, "batch_size")
    _check_generator(generator)
    tf = _token_format(family, fmt)
    B, K, L, n = batch_size, family.inputs_per_task, family.labels_per_task, family.n_pairs
    half = torch.randint(2, (B, 1), generator=generator)                     # a task's pool half
    n_in, n_lab = family.n_input_tokens // 2, family.n_label_tokens // 2
    inputs = 4 + half * n_in + torch.rand(B, n_in, generator=generator).argsort(1)[:, :K]             # (B, K)
    labels = 4 + family.n_input_tokens + half * n_lab + torch.rand(B, n_lab, generator=generator).argsort(1)[:, :L]
    mapping = (torch.arange(K) % L)[torch.rand(B, K, generator=generator).argsort(1)]                 # (B, K)
    js = torch.randint(K, (B, n), generator=generator)                       # which input each pair shows
    x = inputs.gather(1, js)                                                 # (B, n)
    y = labels.gather(1, mapping.gather(1, js))                              # (B, n)
    const = lambda ids: torch.tensor(ids, dtype=torch.long).expand(B, n, len(ids))   # noqa: E731
    pieces = [const(tf.before_x), x[..., None], const(tf.between), y[..., None], const(tf.after_y)]
    seq = torch.cat(pieces, dim=2).reshape(B, -1)                            # (B, n · pair length)
    pos = len(tf.before_x) + 1 + len(tf.between)                            # where y sits within a pair
    is_label = (torch.arange(seq.shape[1]) % tf.pair_length() == pos).expand(B, -1)
    targets = torch.where(is_label, seq, torch.full_like(seq, -1))
    return seq[:, :-1], targets[:, 1:]                                       # predict token t+1 from tokens ≤ t


def repeated_segment_batch(family: ICLTaskFamily, batch_size: int, length: int, generator: torch.Generator
                           ) -> tuple[torch.Tensor, torch.Tensor]:
    """(idx, targets), each (B, length - 1): random tokens (inputs and labels alike) in which a segment of
    p distinct tokens (4 ≤ p ≤ length/2, random) appears twice in a row at a random place. Targets are the
    tokens of the second copy after its first (the ones copying can predict) and -1 elsewhere."""
    _check_family(family)
    check_positive_int(batch_size, "batch_size")
    check_positive_int(length, "length")
    if length < 8:
        raise ValueError(f"length must be >= 8 (room for two copies of a 4-token segment), got {length}")
    content = torch.arange(4, family.vocab_size)
    if length // 2 > len(content):
        raise ValueError(f"length={length} allows segments of up to {length // 2} distinct tokens, but the family "
                         f"has only {len(content)} content tokens")
    _check_generator(generator)
    seq = content[torch.randint(len(content), (batch_size, length), generator=generator)]        # (B, T)
    targets = torch.full_like(seq, -1)
    for row in range(batch_size):
        p = int(torch.randint(4, length // 2 + 1, (1,), generator=generator))                      # period
        start = int(torch.randint(0, length - 2 * p + 1, (1,), generator=generator))
        segment = content[torch.randperm(len(content), generator=generator)[:p]]
        seq[row, start:start + p] = segment
        seq[row, start + p:start + 2 * p] = segment
        targets[row, start + p + 1:start + 2 * p] = segment[1:]
    return seq[:, :-1], targets[:, 1:]                                     # predict token t+1 from tokens ≤ t


def ideal_accuracy(k: int, K: int, L: int) -> float:
    """Accuracy of a perfect in-context learner on :func:`icl_batch` prompts: a query shown among the
    (distinct) demonstrations is answered correctly; otherwise it guesses among the L labels."""
    _check_count(k, "k")
    check_positive_int(K, "K")
    check_positive_int(L, "L")
    seen = min(k, K) / K
    return seen + (1 - seen) / L



# ================================================================================================
# The recipe of data/icl: training with checkpoints, the phase change recorded
# ================================================================================================

@dataclass
class ICLTrainConfig:
    """The recipe of ``data/icl``: a 2-layer, 4-head GPT (d 64) trained on K = 8 → L = 4 tasks (bare format)
    alternating with repeated random segments. Held-out accuracy and induction scores sit near chance for
    a few thousand steps, then jump together (the phase change)."""

    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    steps: int = 15000
    batch_size: int = 64
    learning_rate: float = 1e-3
    warmup: int = 200
    weight_decay: float = 0.01
    seed: int = 0
    repeat_every: int = 2          # every 2nd batch is repeated random segments (0: task sequences only)
    eval_tasks: int = 64           # held-out tasks measured during training
    eval_every: int = 250
    format: str = "bare"
    family: dict = dataclasses.field(default_factory=lambda: dataclasses.asdict(ICLTaskFamily()))

    def __post_init__(self) -> None:
        for name in ("n_layer", "n_head", "n_embd", "steps", "batch_size", "eval_tasks", "eval_every"):
            check_positive_int(getattr(self, name), name)
        for name in ("warmup", "seed", "repeat_every"):
            _check_count(getattr(self, name), name)
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} must be divisible by n_head={self.n_head}")
        check_positive_float(self.learning_rate, "learning_rate")
        check_positive_float(self.weight_decay, "weight_decay", allow_zero=True)
        if not isinstance(self.family, dict):
            raise TypeError(f"family must be a dict of ICLTaskFamily fields, got {type(self.family).__name__}")
        known = [f.name for f in dataclasses.fields(ICLTaskFamily)]
        unknown = sorted(set(self.family) - set(known))
        if unknown:
            raise ValueError(f"family has unknown fields {unknown}; ICLTaskFamily has {known}")
        check_choice(self.format, "format", list(self.task_family().formats()))   # builds the family: checks it

    def task_family(self) -> ICLTaskFamily:
        return ICLTaskFamily(**self.family)

    def model_config(self) -> GPTConfig:
        fam = self.task_family()
        return GPTConfig(vocab_size=fam.vocab_size, block_size=fam.block_size(), n_layer=self.n_layer,
                         n_head=self.n_head, n_embd=self.n_embd, dropout=0.0, bias=False)

    def batch(self, step: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """The training batch of ``step`` (0-based): task sequences, or repeated segments of the same length."""
        fam = self.task_family()
        if self.repeat_every and step % self.repeat_every == self.repeat_every - 1:
            length = fam.n_pairs * fam.formats()[self.format].pair_length()
            return repeated_segment_batch(fam, self.batch_size, length, generator)
        return training_batch(fam, self.batch_size, generator, self.format)


PROBE = {"n": 64, "period": 16, "seed": 999}     # the repeated sequences of the induction curve
EVAL_TASKS_SEED = 12345                          # the held-out tasks of the accuracy curve


def _optimizer(model: GPT, cfg: ICLTrainConfig):
    from coursekit.train import warmup_cosine

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.learning_rate, betas=(0.9, 0.98))
    return opt, warmup_cosine(opt, cfg.warmup, cfg.steps, 0.1)


@torch.no_grad()
def _measure(model: GPT, cfg: ICLTrainConfig, tasks: list, probe: torch.Tensor) -> dict:
    """One point of the curves: held-out accuracy at 2 and 8 shots, induction/previous-token score per head."""
    fam = cfg.task_family()
    acc = evaluate_shots(model, fam, tasks, (2, 8), cfg.format, seed=1)
    maps = attention_maps(model, probe)
    model.train()
    return {"heldout_acc_2shot": round(acc[2].mean().item(), 4), "heldout_acc_8shot": round(acc[8].mean().item(), 4),
            "induction": [[round(v, 4) for v in r] for r in induction_scores(maps, PROBE["period"]).mean(1).tolist()],
            "previous_token": [[round(v, 4) for v in r] for r in previous_token_scores(maps).mean(1).tolist()]}


def train_icl(cfg: ICLTrainConfig, work: str | Path | None = None, *, resume: bool = False,
              checkpoint_minutes: float = 2.0, log: bool = False, stop_at: int | None = None) -> tuple[GPT, dict]:
    """Train the recipe; return ``(model, report)``. With ``work``, a checkpoint is saved every
    ``checkpoint_minutes`` (``work/checkpoint.pt``) and ``resume=True`` continues it exactly (model,
    optimiser, schedule and the batch generator's state). ``stop_at`` ends early on the same schedule."""
    from coursekit.train import _load_state, append_jsonl, hardware, save_state_atomic

    if not isinstance(cfg, ICLTrainConfig):
        raise TypeError(f"cfg must be an ICLTrainConfig, got {type(cfg).__name__}")
    if work is not None and not isinstance(work, (str, Path)):
        raise TypeError(f"work must be a folder path (str or Path) or None, got {type(work).__name__}")
    check_positive_float(checkpoint_minutes, "checkpoint_minutes")
    if stop_at is not None:
        check_positive_int(stop_at, "stop_at")
    fam = cfg.task_family()
    if fam.vocab_size - 4 < PROBE["period"] or fam.block_size() < 2 * PROBE["period"]:
        raise ValueError(f"train_icl measures induction on repeated segments of {PROBE['period']} distinct tokens: "
                         f"the family needs at least {PROBE['period']} content tokens and a context of "
                         f"{2 * PROBE['period']}, got {fam.vocab_size - 4} tokens and block_size={fam.block_size()} "
                         f"(raise n_input_tokens or n_pairs)")
    torch.manual_seed(cfg.seed)
    model = GPT(cfg.model_config())
    opt, sched = _optimizer(model, cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    tasks = sample_tasks(fam, cfg.eval_tasks, "heldout", torch.Generator().manual_seed(EVAL_TASKS_SEED))
    probe = repeated_random_tokens(PROBE["n"], PROBE["period"], torch.arange(4, fam.vocab_size),
                                   torch.Generator().manual_seed(PROBE["seed"]))
    st = {"step": 0, "seconds": 0.0, "loss": [], "curve": [], "hardware": hardware()}
    ckpt = Path(work) / "checkpoint.pt" if work is not None else None
    if ckpt is not None:
        ckpt.parent.mkdir(parents=True, exist_ok=True)
        if resume and ckpt.exists():
            saved = _load_state(ckpt, ("model", "optimizer", "scheduler", "generator", "state", "config"))
            if saved["config"] != dataclasses.asdict(cfg):
                raise ValueError(f"{ckpt} was written by another recipe: {saved['config']}")
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["optimizer"])
            sched.load_state_dict(saved["scheduler"])
            gen.set_state(saved["generator"])
            st = saved["state"]
        elif ckpt.exists():
            raise FileExistsError(f"{ckpt} exists: pass resume=True (--resume) to continue it, or remove it")
    if not st["curve"]:
        st["curve"].append({"step": 0, "loss": None, **_measure(model, cfg, tasks, probe)})
    t0, last_save = time.monotonic() - st["seconds"], time.monotonic()
    model.train()
    end = min(cfg.steps, stop_at or cfg.steps)
    while st["step"] < end:
        x, y = cfg.batch(st["step"], gen)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        st["loss"].append(round(loss.item(), 4))
        st["step"] += 1
        if st["step"] % cfg.eval_every == 0 or st["step"] == end:
            window = st["loss"][-cfg.eval_every:]
            point = {"step": st["step"], "loss": round(sum(window) / len(window), 4),
                     "seconds": round(time.monotonic() - t0, 1), **_measure(model, cfg, tasks, probe)}
            st["curve"].append(point)
            if log:
                print(json.dumps(point), flush=True)
            if ckpt is not None:
                append_jsonl(ckpt.parent / "train.log", point)
        if ckpt is not None and (time.monotonic() - last_save > 60 * checkpoint_minutes or st["step"] == end):
            st["seconds"] = time.monotonic() - t0
            save_state_atomic(ckpt, {"model": model.state_dict(), "optimizer": opt.state_dict(),
                                     "scheduler": sched.state_dict(), "generator": gen.get_state(), "state": st,
                                     "config": dataclasses.asdict(cfg)})
            last_save = time.monotonic()
    st["seconds"] = time.monotonic() - t0
    model.eval()
    report = {"config": dataclasses.asdict(cfg), "steps_done": st["step"], "seconds": round(st["seconds"], 1),
              "hardware": st["hardware"], "train_loss": st["loss"], "curve": st["curve"],
              "probe": PROBE, "eval_tasks_seed": EVAL_TASKS_SEED, "parameters": model.num_params()}
    return model, report


def heldout_accuracy(model: GPT, cfg: ICLTrainConfig, *, shots: Sequence[int] = (0, 1, 2, 4, 8, 16),
                     n_tasks: int = 256, tasks_seed: int = 2024, prompts_seed: int = 7) -> dict:
    """Accuracy on ``n_tasks`` strictly held-out tasks by number of shots (every input of a task asked
    once, fresh demonstrations each time): mean, sd over tasks and the ideal learner's accuracy."""
    if not isinstance(cfg, ICLTrainConfig):
        raise TypeError(f"cfg must be an ICLTrainConfig, got {type(cfg).__name__}")
    check_positive_int(n_tasks, "n_tasks")
    fam = cfg.task_family()
    tasks = sample_tasks(fam, n_tasks, "heldout", torch.Generator().manual_seed(tasks_seed))
    acc = evaluate_shots(model, fam, tasks, shots, cfg.format, seed=prompts_seed)
    K, L = fam.inputs_per_task, fam.labels_per_task
    return {"n_tasks": n_tasks, "tasks_seed": tasks_seed, "prompts_seed": prompts_seed, "format": cfg.format,
            "by_shots": {str(k): {"accuracy": round(a.mean().item(), 4), "sd_over_tasks": round(a.std().item(), 4),
                                  "ideal": round(ideal_accuracy(k, K, L), 4)} for k, a in acc.items()}}


def save_icl_checkpoint(directory: str | Path, model: GPT, cfg: ICLTrainConfig, report: dict) -> Path:
    """model.safetensors (weights + model config + the recipe, content hash), report.json and config.json."""
    from coursekit.data import sha256_file
    from coursekit.train import save_checkpoint

    _check_gpt(model)
    if not isinstance(cfg, ICLTrainConfig):
        raise TypeError(f"cfg must be an ICLTrainConfig, got {type(cfg).__name__}")
    if not isinstance(report, dict):
        raise TypeError(f"report must be a dict, got {type(report).__name__}")
    if model.config != cfg.model_config():
        raise ValueError(f"the model is not the recipe's: model.config differs from cfg.model_config() "
                         f"({model.config} vs {cfg.model_config()})")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = save_checkpoint(out / "model.safetensors", model, cfg.model_config(),
                           extra={"train_config": dataclasses.asdict(cfg)})
    report = dict(report, file_sha256=sha256_file(path), size_bytes=path.stat().st_size,
                  reproduce=f"python -m coursekit.prompting train --work runs/icl --out {directory}")
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=1) + "\n")
    return out


def load_icl_checkpoint(directory: str | Path | None = None) -> tuple[GPT, ICLTrainConfig, dict]:
    """The committed in-context learner: ``(model, train config, report)``; the file must match its report."""
    from coursekit.data import model_dir, sha256_file
    from coursekit.train import load_model_directory

    directory = model_dir("icl") if directory is None else Path(directory)
    reproduce = f"python -m coursekit.prompting train --work runs/icl --out {directory}"

    def build(config: dict, extra: dict) -> GPT:
        if "train_config" not in extra:
            raise ValueError(f"{directory} holds no in-context learner (its metadata has no 'train_config'); "
                             f"make one with `{reproduce}`")
        return GPT(ICLTrainConfig(**extra["train_config"]).model_config())

    model, extra = load_model_directory(directory, build, reproduce=reproduce)
    report_path = directory / "report.json"
    if not report_path.is_file():
        raise FileNotFoundError(f"no report at {report_path}; make the model with `{reproduce}`")
    try:
        report = json.loads(report_path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{report_path} is not valid JSON ({exc}); make the model again with `{reproduce}`") from None
    digest = sha256_file(directory / "model.safetensors")
    if digest != report.get("file_sha256"):
        raise ValueError(f"{directory / 'model.safetensors'} does not match its report (sha256 {digest[:12]}…): "
                         f"a truncated or replaced file; re-run `{reproduce}`")
    return model, ICLTrainConfig(**extra["train_config"]), report



@torch.no_grad()
def evaluate_shots(model: nn.Module, family: ICLTaskFamily | None, tasks: Sequence[Task], shots: Sequence[int],
                   fmt: str | TokenFormat = "arrow", seed: int = 0, **batch_kw) -> dict[int, torch.Tensor]:
    """Per-task accuracy (n_tasks,) at each number of shots, labels read by likelihood over the
    task's label set. The prompts are a fixed function of ``seed``."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    shots = check_non_empty(check_int_sequence(shots, "shots"), "shots")
    _check_tasks(tasks)
    _check_count(seed, "seed")
    model.eval()
    out = {}
    for k in shots:
        gen = torch.Generator().manual_seed(seed + 1000 * k)
        b = icl_batch(family, tasks, k, fmt, gen, **batch_kw)
        correct = (classify_by_likelihood(model, b["prompts"], b["candidates"]).argmax(-1) == b["answer"]).float()
        per_task = torch.zeros(len(tasks)).index_add_(0, b["task"], correct)
        out[k] = per_task / torch.bincount(b["task"], minlength=len(tasks))
    return out



def finetune_on_demonstrations(model: nn.Module, demos: Sequence[tuple[int, int]], fmt: TokenFormat, *,
                               steps: int = 30, lr: float = 1e-2, params: str = "all") -> nn.Module:
    """Fine-tuning with the same k examples: a copy of ``model`` trained by gradient descent (Adam)
    to predict y from the zero-shot prompt ``x =>`` for each demonstration (x, y)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(fmt, TokenFormat):
        raise TypeError(f"fmt must be a TokenFormat, got {type(fmt).__name__}")
    check_positive_int(steps, "steps")
    check_positive_float(lr, "lr")
    for d in demos:
        if not (isinstance(d, (tuple, list)) and len(d) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in d)):
            raise TypeError(f"demos must be a list of (x, y) pairs of int token ids, got {d!r}")
    ft = copy.deepcopy(model).train()
    trainable = [p for n, p in ft.named_parameters() if params == "all" or n.startswith(params)]
    if not trainable:
        raise ValueError(f"params={params!r} matches no parameter name of the model (use 'all' or a prefix such "
                         f"as 'blocks.1.')")
    if not demos:
        return ft.eval()
    x = torch.tensor([build_token_prompt([], xi, fmt) for xi, _ in demos])            # (k, T)
    y = torch.tensor([yi for _, yi in demos])                                          # (k,)
    opt = torch.optim.Adam(trainable, lr=lr)
    for step in range(steps):
        logits = model_logits(ft, x)[:, -1]                                            # (k, V)
        if step == 0:
            check_labels(y, "the demonstrations' labels y", logits.shape[-1])
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return ft.eval()


def evaluate_finetuning(model: nn.Module, family: ICLTaskFamily, tasks: Sequence[Task], k: int, *,
                        fmt: str = "arrow", seed: int = 0, **ft_kw) -> torch.Tensor:
    """Per-task accuracy (n_tasks,) after fine-tuning a copy of ``model`` on k demonstrations of each
    task (the same demonstration sampling as :func:`icl_batch`), then asking zero-shot ``x =>``."""
    _check_family(family)
    _check_tasks(tasks)
    tf = _token_format(family, fmt)
    _check_count(k, "k")
    _check_count(seed, "seed")
    gen = torch.Generator().manual_seed(seed + 1000 * k)
    accs = []
    for task in tasks:
        order = demo_order(len(task.inputs), k, gen)
        demos = [(int(task.inputs[j]), task.label_of(j)) for j in order.tolist()]
        ft = finetune_on_demonstrations(model, demos, tf, **ft_kw)
        prompts = torch.tensor([build_token_prompt([], x, tf) for x in task.inputs.tolist()])
        with torch.no_grad():
            pred = classify_by_likelihood(ft, prompts, task.labels.expand(len(prompts), -1)).argmax(-1)
        accs.append((pred == task.mapping).float().mean())
    return torch.stack(accs)

