"""In-context learning on a family of synthetic tasks: the tasks and the batches made of them (notebook 12).

Because no pretrained large model can be downloaded here, in-context learning is demonstrated on a
**family of synthetic tasks** (in the spirit of Chan et al. 2022, *Data Distributional Properties Drive
Emergent In-Context Learning*): every sequence is a *fresh* random mapping from K input tokens to L
label tokens, written as demonstrations ``x y x y …``, so the only way to predict a label is to read the
sequence's own demonstrations. **Held-out tasks** pair input and label pool halves that never co-occur
in training, so no evaluation mapping — not even one (input, label) association — was ever trained on.

:func:`icl_batch` writes k-shot prompts for given tasks (with wrong labels or a fixed demonstration order
if asked) and :func:`ideal_accuracy` is a perfect in-context learner's accuracy on them. Training uses two
kinds of sequences: :func:`training_batch` (demonstrations of fresh training tasks, only the labels
predicted) and **repeated random segments** (:func:`repeated_segment_batch`: random tokens of the whole
vocabulary in which one segment of random length recurs at a random place). Copying a segment whose length
and place change from sequence to sequence cannot be done by position; it needs an **induction head**
(:mod:`coursekit.gpt.induction`), and because the segments draw on every token, the copying it learns does not
depend on which tokens are inputs or labels — which is what makes the held-out pairings work.

The recipe that trains a GPT on these batches, the committed model of ``data/icl`` and its evaluation are
in :mod:`coursekit.gpt.icl_training`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from coursekit.gpt.prompting import TokenFormat, build_token_prompt
from coursekit.validation import (
    ID_DTYPES,
    check_choice,
    check_labels,
    check_non_empty,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_generator as _check_generator

__all__ = ["ICLTaskFamily", "Task", "random_task", "sample_tasks", "demo_order", "icl_batch", "training_batch",
           "repeated_segment_batch", "ideal_accuracy"]


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

    def max_len(self, fmt: str = "arrow") -> int:
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
