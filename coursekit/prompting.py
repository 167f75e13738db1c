"""Few-shot prompting and in-context learning, measured (notebook 12).

Brown et al. (2020), *Language Models are Few-Shot Learners* (GPT-3), Fig. 2.1: a prompt is a
**task description**, **k demonstrations** ``x => y`` and a **query** ``x =>``; the model's answer is
its continuation — no gradient updates. Two ways to read the answer, both used in the paper:

* **likelihood over a label set** — score each candidate continuation c by
  log P(c | prompt) = Σ_i log P(c_i | prompt, c_<i)  (sum, or the per-token mean) and pick the best;
* **greedy generation** — append argmax tokens until a stop token.

Because no pretrained large model can be downloaded here, in-context learning is demonstrated on a
**family of synthetic tasks** (in the spirit of Chan et al. 2022, *Data Distributional Properties
Drive Emergent In-Context Learning*, and Olsson et al. 2022, *In-context Learning and Induction
Heads*): every training sequence is a *fresh* random mapping from K input tokens to L label tokens,
so the only way to predict a label is to read the sequence's own demonstrations. Held-out tasks pair
input and label token pools that never co-occur in training, so no evaluation mapping — not even one
(input, label) association — was ever trained on.

The mechanism is an **induction head** (Olsson et al. 2022): at the query ``x`` a head attends to
the token *after* the previous occurrence of ``x`` and copies it. :func:`induction_scores` measures
it per layer and head on repeated random token sequences.

``python -m coursekit.prompting train --out data/icl`` reproduces the committed checkpoint.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.checks import check_positive_int, check_tensor
from coursekit.gpt import GPT, GPTConfig
from coursekit.transformer import sinusoidal_positions

__all__ = [
    "PromptFormat", "FORMATS", "build_prompt", "TokenFormat", "build_token_prompt",
    "model_logits", "label_logprobs", "classify_by_likelihood", "greedy_continuation",
    "ICLTaskFamily", "Task", "random_task", "sample_tasks", "icl_batch", "training_batch", "ideal_accuracy",
    "ICLTrainConfig", "train_icl", "evaluate_shots", "finetune_on_demonstrations", "evaluate_finetuning",
    "attention_maps", "induction_scores", "ablate_heads", "save_icl_checkpoint", "repeated_random_tokens",
    "load_icl_checkpoint",
    "hf_gpt2_dir", "load_hf_gpt2", "run_slide_prompts", "SLIDE_PROMPTS",
]


# ================================================================================================
# Prompts as text (real tokenizers)
# ================================================================================================

@dataclass(frozen=True)
class PromptFormat:
    """How one demonstration is written. ``template`` holds ``{x}`` and ends with ``" {y}"``; the
    query is the template up to ``{y}`` (without the trailing space), and a label ``y`` is scored as
    the continuation ``" " + y`` — the convention of GPT-2's byte-level BPE, where words start with a space."""

    name: str
    template: str
    separator: str = "\n"

    def __post_init__(self) -> None:
        if "{x}" not in self.template or not self.template.endswith(" {y}"):
            raise ValueError(f"template must contain '{{x}}' and end with ' {{y}}', got {self.template!r}")

    def demonstration(self, x: str, y: str) -> str:
        return self.template.format(x=x, y=y)

    def query(self, x: str) -> str:
        return self.template[: -len(" {y}")].format(x=x)


FORMATS = {
    "arrow": PromptFormat("arrow", "{x} => {y}"),                       # GPT-3 Fig. 2.1
    "io": PromptFormat("io", "Input: {x}\nOutput: {y}", "\n\n"),
    "bare": PromptFormat("bare", "{x} {y}"),
}


def build_prompt(demonstrations: Sequence[tuple[str, str]], query: str, *, task_description: str | None = None,
                 fmt: str | PromptFormat = "arrow") -> str:
    """Task description + k demonstrations + query (GPT-3, Fig. 2.1), e.g. with ``fmt="arrow"``::

        Translate English to French:
        sea otter => loutre de mer
        cheese =>
    """
    fmt = _format(fmt)
    if isinstance(demonstrations, (str, bytes)) or not all(
            isinstance(d, (tuple, list)) and len(d) == 2 and all(isinstance(s, str) for s in d)
            for d in demonstrations):
        raise TypeError("demonstrations must be a sequence of (x, y) string pairs")
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    parts = [task_description] if task_description else []
    parts += [fmt.demonstration(x, y) for x, y in demonstrations]
    parts.append(fmt.query(query))
    return fmt.separator.join(parts)


def _format(fmt: str | PromptFormat) -> PromptFormat:
    if isinstance(fmt, PromptFormat):
        return fmt
    if fmt not in FORMATS:
        raise ValueError(f"unknown prompt format {fmt!r}; expected one of {sorted(FORMATS)} or a PromptFormat")
    return FORMATS[fmt]


# ================================================================================================
# Prompts as token ids (synthetic tasks, character models)
# ================================================================================================

@dataclass(frozen=True)
class TokenFormat:
    """A demonstration is ``before_x + x + between + y + after_y`` (each a tuple of token ids);
    the query is ``before_x + x + between`` and the answer is the next token(s)."""

    name: str
    before_x: tuple[int, ...] = ()
    between: tuple[int, ...] = ()
    after_y: tuple[int, ...] = ()

    def pair_length(self) -> int:
        return len(self.before_x) + len(self.between) + len(self.after_y) + 2


def build_token_prompt(demonstrations: Sequence[tuple[Sequence[int], Sequence[int]]], query: Sequence[int],
                       fmt: TokenFormat, prefix: Sequence[int] = ()) -> list[int]:
    """``prefix`` (a task description) + k demonstrations + query, as one list of token ids."""
    if not isinstance(fmt, TokenFormat):
        raise TypeError(f"fmt must be a TokenFormat, got {type(fmt).__name__}")
    ids = list(prefix)
    for x, y in demonstrations:
        ids += [*fmt.before_x, *_ids(x), *fmt.between, *_ids(y), *fmt.after_y]
    return ids + [*fmt.before_x, *_ids(query), *fmt.between]


def _ids(x) -> list[int]:
    if isinstance(x, int):
        return [x]
    if isinstance(x, torch.Tensor):
        return [int(i) for i in x.reshape(-1)]
    return [int(i) for i in x]


# ================================================================================================
# Reading the answer: likelihood over a label set, greedy generation
# ================================================================================================

def model_logits(model: Callable, idx: torch.Tensor) -> torch.Tensor:
    """Logits (B, T, V) of any causal LM: the course's GPT (returns ``(logits, loss)``), a Hugging
    Face model (``.logits``) or a plain function returning a tensor."""
    out = model(idx)
    if isinstance(out, tuple):
        out = out[0]
    if hasattr(out, "logits"):
        out = out.logits
    if not isinstance(out, torch.Tensor) or out.dim() != 3 or out.shape[:2] != idx.shape:
        raise ValueError(f"the model must return logits of shape (B, T, V) = {tuple(idx.shape)} + (V,), "
                         f"got {getattr(out, 'shape', type(out).__name__)}")
    return out


@torch.no_grad()
def label_logprobs(model: Callable, prompt: Sequence[int], labels: Sequence[Sequence[int]], *,
                   reduce: str = "sum") -> torch.Tensor:
    """log P(label | prompt) for each candidate continuation: a tensor (L,).

    ``Σ_i log softmax(logits[T-1+i])[label_i]`` over the label's tokens, each conditioned on the
    prompt and the label's earlier tokens (teacher forcing); ``reduce="mean"`` divides by the label
    length (GPT-3 normalises per token for multi-token answers).
    """
    if reduce not in ("sum", "mean"):
        raise ValueError(f"reduce must be 'sum' or 'mean', got {reduce!r}")
    prompt = _ids(prompt)
    labels = [_ids(lab) for lab in labels]
    if not prompt:
        raise ValueError("the prompt must hold at least one token (nothing to condition on)")
    if not labels or any(len(lab) == 0 for lab in labels):
        raise ValueError("labels must be a non-empty list of non-empty token sequences")
    scores = []
    for lab in labels:                                                      # labels may differ in length
        idx = torch.tensor([prompt + lab[:-1]])                             # (1, T + n - 1)
        logp = F.log_softmax(model_logits(model, idx)[0, len(prompt) - 1:].double(), dim=-1)  # (n, V)
        lp = logp.gather(1, torch.tensor(lab).unsqueeze(1)).sum()
        scores.append(lp / len(lab) if reduce == "mean" else lp)
    return torch.stack(scores)


@torch.no_grad()
def classify_by_likelihood(model: Callable, prompts: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
    """Batched single-token version: for prompts (B, T) and candidate label ids (B, L) return the
    log-probabilities (B, L) of each candidate as the next token. The prediction is ``.argmax(-1)``."""
    check_tensor(prompts, "prompts", ndim=2)
    check_tensor(candidates, "candidates", ndim=2)
    if candidates.shape[0] != prompts.shape[0]:
        raise ValueError(f"candidates must have one row per prompt ({prompts.shape[0]}), got {candidates.shape[0]}")
    logp = F.log_softmax(model_logits(model, prompts)[:, -1].float(), dim=-1)  # (B, V) next-token distribution
    return logp.gather(1, candidates)                                       # (B, L)


@torch.no_grad()
def greedy_continuation(model: Callable, prompt: Sequence[int], max_new_tokens: int,
                        stop: Sequence[int] = (), block_size: int | None = None) -> list[int]:
    """Append argmax tokens to ``prompt`` until a token in ``stop`` (not included) or
    ``max_new_tokens``; return only the new tokens."""
    check_positive_int(max_new_tokens, "max_new_tokens")
    ids = _ids(prompt)
    if not ids:
        raise ValueError("the prompt must hold at least one token")
    out: list[int] = []
    for _ in range(max_new_tokens):
        window = ids[-block_size:] if block_size else ids
        nxt = int(model_logits(model, torch.tensor([window]))[0, -1].argmax())
        if nxt in stop:
            break
        ids.append(nxt)
        out.append(nxt)
    return out


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
                             "and labels_per_task <= n_label_tokens/2")
        if self.labels_per_task < 2:
            raise ValueError("labels_per_task must be >= 2")

    @property
    def vocab_size(self) -> int:
        return 4 + self.n_input_tokens + self.n_label_tokens

    def formats(self) -> dict[str, TokenFormat]:
        return {"bare": TokenFormat("bare"),                                           # x y x y … x
                "arrow": TokenFormat("arrow", between=(self.ARROW,), after_y=(self.SEP,)),  # x => y ; … x =>
                "io": TokenFormat("io", before_x=(self.IN,), between=(self.OUT,), after_y=(self.SEP,))}

    def input_ids(self, half: int) -> torch.Tensor:
        n = self.n_input_tokens // 2
        return 4 + half * n + torch.arange(n)

    def label_ids(self, half: int) -> torch.Tensor:
        n = self.n_label_tokens // 2
        return 4 + self.n_input_tokens + half * n + torch.arange(n)

    def token_name(self, i: int) -> str:
        i = int(i)
        if i < 4:
            return ["=>", ";", "In:", "Out:"][i]
        if i < 4 + self.n_input_tokens:
            return f"x{i - 4:02d}"
        return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[(i - 4 - self.n_input_tokens) % 26] * (
            1 + (i - 4 - self.n_input_tokens) // 26)

    def block_size(self, fmt: str = "arrow") -> int:
        return max(f.pair_length() for f in self.formats().values()) * self.n_pairs


@dataclass
class Task:
    """One task: K input ids, L label ids and ``mapping[j]`` = the index (0…L-1) of input j's label."""

    inputs: torch.Tensor    # (K,)
    labels: torch.Tensor    # (L,)
    mapping: torch.Tensor   # (K,)

    def label_of(self, j: int) -> int:
        return int(self.labels[self.mapping[j]])


def random_task(input_pool: torch.Tensor, label_pool: torch.Tensor, K: int, L: int,
                generator: torch.Generator) -> Task:
    """A fresh task: K distinct inputs and L distinct labels drawn from the pools, each label given
    to K/L inputs (balanced classes; the remainder spread over the first labels)."""
    if K > len(input_pool) or L > len(label_pool):
        raise ValueError(f"need K={K} <= {len(input_pool)} inputs and L={L} <= {len(label_pool)} labels in the pools")
    inputs = input_pool[torch.randperm(len(input_pool), generator=generator)[:K]]
    labels = label_pool[torch.randperm(len(label_pool), generator=generator)[:L]]
    mapping = (torch.arange(K) % L)[torch.randperm(K, generator=generator)]
    return Task(inputs, labels, mapping)


def sample_tasks(family: ICLTaskFamily, n: int, split: str, generator: torch.Generator) -> list[Task]:
    """``n`` random tasks. ``split="train"``: inputs and labels from the same pool half;
    ``"heldout"``: from different halves. Each label is used by K/L inputs (balanced classes)."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    check_positive_int(n, "n")
    tasks = []
    for _ in range(n):
        h_in = int(torch.randint(2, (1,), generator=generator))
        h_lab = h_in if split == "train" else 1 - h_in
        tasks.append(random_task(family.input_ids(h_in), family.label_ids(h_lab), family.inputs_per_task,
                                 family.labels_per_task, generator))
    return tasks


def _demo_order(K: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """k demonstration inputs: distinct while k <= K (a random permutation, repeated if k > K)."""
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
    fmt = family.formats()[fmt] if isinstance(fmt, str) else fmt        # (family may be None with a TokenFormat)
    if not isinstance(k, int) or k < 0:
        raise ValueError(f"k (the number of shots) must be an int >= 0, got {k!r}")
    if not 0.0 <= label_noise <= 1.0:
        raise ValueError(f"label_noise must lie in [0, 1], got {label_noise}")
    prompts, cands, answers, shown, task_ids = [], [], [], [], []
    for t, task in enumerate(tasks):
        K, L = len(task.inputs), len(task.labels)
        qs = range(K) if queries == "all" else [int(torch.randint(K, (1,), generator=generator))]
        for q in qs:
            order = (demo_orders[t] if demo_orders is not None else _demo_order(K, k, generator))
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
    tf = family.formats()[fmt] if isinstance(fmt, str) else fmt
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


def ideal_accuracy(k: int, K: int, L: int) -> float:
    """Accuracy of a perfect in-context learner on :func:`icl_batch` prompts: a query shown among the
    (distinct) demonstrations is answered correctly; otherwise it guesses among the L labels."""
    seen = min(k, K) / K
    return seen + (1 - seen) / L


# ================================================================================================
# Training the in-context learner, evaluating it, fine-tuning as the comparison
# ================================================================================================

@dataclass
class ICLTrainConfig:
    """The recipe of ``data/icl``: a 2-layer GPT trained on fresh random tasks (K = 4 inputs →
    L = 4 labels, bare format). Its held-out accuracy sits at chance for ~10k steps, then jumps."""

    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    steps: int = 20000
    batch_size: int = 32
    learning_rate: float = 3e-3
    warmup: int = 100
    weight_decay: float = 0.01
    seed: int = 0
    eval_tasks: int = 64
    eval_every: int = 1000
    formats: tuple[str, ...] = ("bare",)          # training formats, alternating by step
    eval_format: str = "bare"
    stop_at: int | None = None     # stop after this many steps of the `steps`-step schedule
    position_init: float = 0.1     # W_p starts as this × the sinusoidal table (0: GPT's random N(0, 0.02))
    qk_init_std: float = 0.0       # W_Q, W_K start as N(0, this²) (0: GPT's N(0, 0.02²))
    prev_token_init: float = 0.0   # > 0: layer-0 head 0 starts as a previous-token head of this gain
    family: dict = dataclasses.field(default_factory=lambda: dataclasses.asdict(ICLTaskFamily(inputs_per_task=4)))

    def task_family(self) -> ICLTaskFamily:
        return ICLTaskFamily(**self.family)

    def model_config(self) -> GPTConfig:
        fam = self.task_family()
        return GPTConfig(vocab_size=fam.vocab_size, block_size=fam.block_size(), n_layer=self.n_layer,
                         n_head=self.n_head, n_embd=self.n_embd, dropout=0.0, bias=False)


@torch.no_grad()
def evaluate_shots(model: nn.Module, family: ICLTaskFamily | None, tasks: Sequence[Task], shots: Sequence[int],
                   fmt: str | TokenFormat = "arrow", seed: int = 0, **batch_kw) -> dict[int, torch.Tensor]:
    """Per-task accuracy (n_tasks,) at each number of shots, labels read by likelihood over the
    task's label set. The prompts are a fixed function of ``seed``."""
    model.eval()
    out = {}
    for k in shots:
        gen = torch.Generator().manual_seed(seed + 1000 * k)
        b = icl_batch(family, tasks, k, fmt, gen, **batch_kw)
        correct = (classify_by_likelihood(model, b["prompts"], b["candidates"]).argmax(-1) == b["answer"]).float()
        per_task = torch.zeros(len(tasks)).index_add_(0, b["task"], correct)
        out[k] = per_task / torch.bincount(b["task"], minlength=len(tasks))
    return out


@torch.no_grad()
def init_previous_token_head(model: GPT, gain: float, layer: int = 0, head: int = 0) -> None:
    """Set W_Q, W_K of one head so that position i attends to i - 1 through sinusoidal positions.

    With W_p ∝ PE, each frequency ω contributes a pair (sin ωp, cos ωp); keys keep the pair of the
    d_head/2 highest frequencies and queries rotate it by -ω, so q_i·k_j ∝ Σ_ω cos(ω(i - 1 - j)),
    largest at j = i - 1. Only the *matching* is set; W_V, W_O (what the head writes) are learned.
    """
    attn = model.blocks[layer].self_attn
    C, D = model.config.n_embd, attn.d_head
    rows = slice(head * D, (head + 1) * D)
    n_pairs = D // 2
    omega = 1.0 / 10000 ** (torch.arange(n_pairs, dtype=torch.float64) * 2 / C)   # the highest frequencies
    Wk = torch.zeros(D, C, dtype=torch.float64)
    Wq = torch.zeros(D, C, dtype=torch.float64)
    for f in range(n_pairs):
        s, c = 2 * f, 2 * f + 1                                             # PE columns sin(ω_f p), cos(ω_f p)
        Wk[s, s] = Wk[c, c] = 1.0
        cos, sin = math.cos(omega[f]), math.sin(omega[f])                   # rotate by -ω: p → p - 1
        Wq[s, s], Wq[s, c] = cos, -sin
        Wq[c, s], Wq[c, c] = sin, cos
    attn.q_proj.weight[rows] = (gain * Wq).float()
    attn.k_proj.weight[rows] = (gain * Wk).float()


def train_icl(cfg: ICLTrainConfig, *, progress: bool | None = None, log: bool = False,
              eval_shots: Sequence[int] = (0, 1, 2, 4, 8, 16), snapshot_dir: str | Path | None = None):
    """Train a GPT on the task family; return ``(model, report)`` with the loss curve, held-out
    accuracy during training and the final accuracy vs shots on ``cfg.eval_tasks`` held-out tasks."""
    from coursekit.train import fit, warmup_cosine

    fam = cfg.task_family()
    torch.manual_seed(cfg.seed)
    model = GPT(cfg.model_config())
    if cfg.position_init:
        # Learned positions start random; a previous-token head (the first half of an induction
        # head) needs q_i·k_{i-1} large for every i, which sinusoidal positions give by a linear map
        # (a rotation per frequency). Starting W_p there shortens the plateau before ICL emerges.
        with torch.no_grad():
            table = sinusoidal_positions(model.config.block_size, model.config.n_embd)
            model.wpe.embedding.weight.copy_(cfg.position_init * table)
    if cfg.qk_init_std:
        # With tiny W_Q, W_K every attention row is uniform and the gradient of q·k is itself tiny
        # (it is bilinear in W_Q and W_K): a saddle. Larger query/key weights leave it sooner.
        for block in model.blocks:
            for proj in (block.self_attn.q_proj, block.self_attn.k_proj):
                torch.nn.init.normal_(proj.weight, std=cfg.qk_init_std, generator=None)
    if cfg.prev_token_init:
        init_previous_token_head(model, cfg.prev_token_init)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.learning_rate, betas=(0.9, 0.98))
    sched = warmup_cosine(opt, cfg.warmup, cfg.steps, 0.1)
    gen = torch.Generator().manual_seed(cfg.seed)
    eval_tasks = sample_tasks(fam, cfg.eval_tasks, "heldout", torch.Generator().manual_seed(12345))

    losses: list[float] = []
    evals: list[tuple[int, dict]] = []
    probe = training_batch(fam, 64, torch.Generator().manual_seed(999), cfg.eval_format)

    def report_at(m: GPT, steps_done: int) -> dict:
        m.eval()
        acc = evaluate_shots(m, fam, eval_tasks, eval_shots, cfg.eval_format, seed=2)
        m.train()
        stop_at = steps_done if steps_done < cfg.steps else cfg.stop_at
        return {"config": dataclasses.asdict(dataclasses.replace(cfg, stop_at=stop_at)),
                "seconds": time.perf_counter() - t0, "threads": torch.get_num_threads(),
                "history": {"steps": list(range(1, len(losses) + 1)), "train_loss": list(losses), "evals": list(evals)},
                "eval": {"tasks_seed": 12345, "prompts_seed": 2, "n_tasks": cfg.eval_tasks, "format": cfg.eval_format,
                         "accuracy_mean": {k: v.mean().item() for k, v in acc.items()},
                         "accuracy_std_over_tasks": {k: v.std().item() for k, v in acc.items()}}}

    def evaluate(m):
        acc8 = evaluate_shots(m, fam, eval_tasks, (8,), cfg.eval_format, seed=1)[8].mean().item()
        with torch.no_grad():
            probe_loss = m(*probe)[1].item()
        m.train()
        evals.append((len(losses), {"heldout_acc_8shot": acc8, "probe_loss": probe_loss}))
        if snapshot_dir is not None:       # a snapshot after s steps equals the recipe run with stop_at=s
            rep = report_at(m, len(losses))
            save_icl_checkpoint(snapshot_dir, m, ICLTrainConfig(**rep["config"]), rep)
        if log:
            print(f"  {time.perf_counter() - t0:6.0f} s  step {len(losses)}: loss on a fixed training batch "
                  f"{probe_loss:.3f}, held-out accuracy at 8 shots {acc8:.3f}", flush=True)
        return evals[-1][1]

    def batch(step):                                                        # formats alternate by step
        return training_batch(fam, cfg.batch_size, gen, cfg.formats[step % len(cfg.formats)])

    def loss_fn(m, b):
        loss = m(*b)[1]
        losses.append(loss.item())
        return loss

    t0 = time.perf_counter()
    fit(model, opt, batch, loss_fn, steps=cfg.stop_at or cfg.steps, clip=1.0, scheduler=sched, eval_fn=evaluate,
        eval_every=cfg.eval_every, progress=progress, desc="icl")
    report = report_at(model, len(losses))
    return model.eval(), report


def save_icl_checkpoint(directory: str | Path, model: GPT, cfg: ICLTrainConfig, report: dict) -> Path:
    """model.safetensors (weights + model config + the recipe's config), report.json and config.json."""
    from coursekit.train import save_checkpoint

    out = Path(directory)
    save_checkpoint(out / "model.safetensors", model, cfg.model_config(),
                    extra={"train_config": dataclasses.asdict(cfg)})
    (out / "report.json").write_text(json.dumps(report, indent=1))
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=1))
    return out


def load_icl_checkpoint(directory: str | Path | None = None) -> tuple[GPT, ICLTrainConfig, dict]:
    """The committed in-context learner: ``(model, train config, report)``."""
    from coursekit.data import model_dir
    from coursekit.train import load_model_directory

    directory = model_dir("icl") if directory is None else Path(directory)
    model, extra = load_model_directory(
        directory, lambda _, extra: GPT(ICLTrainConfig(**extra["train_config"]).model_config()),
        reproduce=f"python -m coursekit.prompting train --out {directory}")
    report = json.loads((directory / "report.json").read_text()) if (directory / "report.json").exists() else {}
    return model, ICLTrainConfig(**extra["train_config"]), report


def finetune_on_demonstrations(model: nn.Module, demos: Sequence[tuple[int, int]], fmt: TokenFormat, *,
                               steps: int = 30, lr: float = 1e-2, params: str = "all") -> nn.Module:
    """Fine-tuning with the same k examples: a copy of ``model`` trained by gradient descent (Adam)
    to predict y from the zero-shot prompt ``x =>`` for each demonstration (x, y)."""
    ft = copy.deepcopy(model).train()
    if not demos:
        return ft.eval()
    x = torch.tensor([build_token_prompt([], xi, fmt) for xi, _ in demos])            # (k, T)
    y = torch.tensor([int(yi) for _, yi in demos])                                     # (k,)
    trainable = [p for n, p in ft.named_parameters() if params == "all" or n.startswith(params)]
    opt = torch.optim.Adam(trainable, lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(model_logits(ft, x)[:, -1], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return ft.eval()


def evaluate_finetuning(model: nn.Module, family: ICLTaskFamily, tasks: Sequence[Task], k: int, *,
                        fmt: str = "arrow", seed: int = 0, **ft_kw) -> torch.Tensor:
    """Per-task accuracy (n_tasks,) after fine-tuning a copy of ``model`` on k demonstrations of each
    task (the same demonstration sampling as :func:`icl_batch`), then asking zero-shot ``x =>``."""
    tf = family.formats()[fmt]
    gen = torch.Generator().manual_seed(seed + 1000 * k)
    accs = []
    for task in tasks:
        order = _demo_order(len(task.inputs), k, gen)
        demos = [(int(task.inputs[j]), task.label_of(j)) for j in order.tolist()]
        ft = finetune_on_demonstrations(model, demos, tf, **ft_kw)
        prompts = torch.tensor([build_token_prompt([], x, tf) for x in task.inputs.tolist()])
        with torch.no_grad():
            pred = classify_by_likelihood(ft, prompts, task.labels.expand(len(prompts), -1)).argmax(-1)
        accs.append((pred == task.mapping).float().mean())
    return torch.stack(accs)


# ================================================================================================
# Mechanism: attention maps and induction heads
# ================================================================================================

@torch.no_grad()
def attention_maps(model: GPT, idx: torch.Tensor) -> torch.Tensor:
    """Attention weights of every layer and head: (n_layer, B, H, T, T).

    ``coursekit.gpt.GPT.forward`` does not return attention weights, so this re-runs its forward
    pass (the same embeddings, blocks and causal mask) asking each block for ``need_weights=True``.
    """
    if not isinstance(model, GPT):
        raise TypeError(f"attention_maps needs a coursekit.gpt.GPT, got {type(model).__name__}")
    check_tensor(idx, "idx", ndim=2)
    model.eval()
    x = model.wte(idx) + model.wpe(idx.shape[1], 0)                         # (B, T, C)
    maps = []
    for block in model.blocks:
        x, w = block(x, causal=True, need_weights=True)
        maps.append(w["self"])                                              # (B, H, T, T)
    return torch.stack(maps)


def repeated_random_tokens(n: int, period: int, vocab: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """(n, 2·period) sequences ``r_1 … r_p r_1 … r_p`` of distinct random tokens drawn from ``vocab``:
    the second half can only be predicted by copying (Olsson et al. 2022)."""
    check_positive_int(period, "period")
    if period > len(vocab):
        raise ValueError(f"period={period} needs that many distinct tokens, vocab has {len(vocab)}")
    first = torch.stack([vocab[torch.randperm(len(vocab), generator=generator)[:period]] for _ in range(n)])
    return torch.cat([first, first], dim=1)                                 # (n, 2p)


def induction_scores(attn: torch.Tensor, period: int) -> torch.Tensor:
    """Induction score of each head: the mean attention that a query at position i of the repeated
    half pays to key i - period + 1 — the token *after* the previous occurrence of token i.

    ``attn`` (..., T, T) with T = 2·period; returns (...) (e.g. (n_layer, H) after averaging the batch
    dimension yourself, or pass (n_layer, B, H, T, T) and take ``.mean(1)``).
    """
    check_tensor(attn, "attn", floating=True)
    T = attn.shape[-1]
    if attn.shape[-2] != T or T != 2 * period:
        raise ValueError(f"attn must be (..., T, T) with T = 2·period = {2 * period}, got {tuple(attn.shape)}")
    q = torch.arange(period, T)                                             # queries in the repeated half
    return attn[..., q, q - period + 1].mean(-1)


@contextlib.contextmanager
def ablate_heads(model: GPT, heads: Sequence[tuple[int, int]]):
    """Inside the ``with`` block, the outputs of the given (layer, head) pairs are zeroed before W^O
    (a knock-out experiment: does accuracy depend on these heads?)."""
    hooks = []
    for layer, head in heads:
        attn = model.blocks[layer].self_attn
        if not 0 <= head < attn.n_heads:
            raise ValueError(f"head must lie in 0…{attn.n_heads - 1}, got {head}")
        sl = slice(head * attn.d_head, (head + 1) * attn.d_head)

        def zero_head(module, args, sl=sl):
            x = args[0].clone()                                             # (B, T, H·D): merged heads
            x[..., sl] = 0.0
            return (x,)
        hooks.append(attn.out_proj.register_forward_pre_hook(zero_head))
    try:
        yield model
    finally:
        for h in hooks:
            h.remove()


# ================================================================================================
# Real checkpoints: a Hugging Face GPT-2 directory, when one is available locally
# ================================================================================================

SLIDE_PROMPTS = {
    "translation": {
        "description": "Translate English to French:",
        "demonstrations": [("sea otter", "loutre de mer"), ("peppermint", "menthe poivrée"),
                           ("plush girafe", "girafe peluche")],
        "query": "cheese", "answer": "fromage"},
    "sentiment": {
        "description": "Classify the sentiment of each review as positive or negative.",
        "demonstrations": [("a gripping, beautifully acted film", "positive"),
                           ("dull, predictable and far too long", "negative"),
                           ("one of the best movies of the year", "positive"),
                           ("i want those two hours of my life back", "negative")],
        "query": "a warm, funny and clever story", "answer": "positive", "labels": ["positive", "negative"]},
}


def hf_gpt2_dir(path: str | Path | None = None) -> Path | None:
    """The local GPT-2 checkpoint directory: ``path`` or ``$COURSEKIT_GPT2_DIR``; None if neither exists."""
    p = path or os.environ.get("COURSEKIT_GPT2_DIR")
    if not p:
        return None
    p = Path(p)
    return p if (p / "config.json").exists() else None


def load_hf_gpt2(directory: str | Path):
    """(the course's GPT with the directory's weights, its GPT-2 tokenizer)."""
    from transformers import AutoTokenizer

    directory = Path(directory)
    if not (directory / "config.json").exists():
        raise FileNotFoundError(f"{directory} is not a Hugging Face model directory (no config.json)")
    return GPT.from_hf(directory), AutoTokenizer.from_pretrained(str(directory))


def run_slide_prompts(model: Callable, tokenizer, *, max_new_tokens: int = 8,
                      block_size: int | None = None) -> dict[str, dict]:
    """The slides' prompts through any causal LM + tokenizer with ``encode``/``decode``: the
    translation prompt answered by greedy generation (up to the end of the line), the sentiment
    prompt by per-token likelihood of " positive" vs " negative"."""
    block_size = block_size or getattr(getattr(model, "config", None), "block_size", None)
    out = {}
    tr = SLIDE_PROMPTS["translation"]
    prompt = build_prompt(tr["demonstrations"], tr["query"], task_description=tr["description"])
    ids = tokenizer.encode(prompt)
    new = greedy_continuation(model, ids, max_new_tokens, stop=tokenizer.encode("\n"), block_size=block_size)
    out["translation"] = {"prompt": prompt, "completion": tokenizer.decode(new), "expected": tr["answer"]}
    se = SLIDE_PROMPTS["sentiment"]
    prompt = build_prompt(se["demonstrations"], se["query"], task_description=se["description"])
    scores = label_logprobs(model, tokenizer.encode(prompt), [tokenizer.encode(" " + lab) for lab in se["labels"]],
                            reduce="mean")
    out["sentiment"] = {"prompt": prompt, "scores": dict(zip(se["labels"], scores.tolist())),
                        "prediction": se["labels"][int(scores.argmax())], "expected": se["answer"]}
    return out


# ================================================================================================
# Command line: the recipe of the committed checkpoint
# ================================================================================================

def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m coursekit.prompting", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train the in-context learner on the synthetic task family")
    t.add_argument("--config", help="JSON file with ICLTrainConfig fields (missing ones keep their defaults)")
    t.add_argument("--steps", type=int)
    t.add_argument("--stop-at", type=int, help="stop after this many steps of the --steps schedule")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--out", help="directory for model.safetensors + report.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    cfg = ICLTrainConfig()
    if args.config:
        cfg = dataclasses.replace(cfg, **json.loads(Path(args.config).read_text()))
    if args.steps:
        cfg = dataclasses.replace(cfg, steps=args.steps)
    if args.stop_at:
        cfg = dataclasses.replace(cfg, stop_at=args.stop_at)
    model, report = train_icl(cfg, progress=False, log=True, snapshot_dir=args.out)
    print(f"{len(report['history']['train_loss'])} steps in {report['seconds']:.0f} s; held-out accuracy vs shots: "
          + ", ".join(f"{k}: {v:.3f}" for k, v in report["eval"]["accuracy_mean"].items()))
    if args.out:
        save_icl_checkpoint(args.out, model, cfg, report)


if __name__ == "__main__":
    main()
