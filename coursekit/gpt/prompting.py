"""Few-shot prompting: prompts, reading the answer, real checkpoints, and the course's ICL command line (notebook 12).

Brown et al. (2020), *Language Models are Few-Shot Learners* (GPT-3), Fig. 2.1: a prompt is a
**task description**, **k demonstrations** ``x => y`` and a **query** ``x =>``; the model's answer is
its continuation — no gradient updates. Two ways to read the answer, both used in the paper:

* **likelihood over a label set** — score each candidate continuation c by
  log P(c | prompt) = Σ_i log P(c_i | prompt, c_<i)  (sum, or the per-token mean) and pick the best;
* **greedy generation** — append argmax tokens until a stop token.

The synthetic task family lives in :mod:`coursekit.gpt.icl`; the recipe of the committed in-context learner and
its evaluation in :mod:`coursekit.gpt.icl_training`; attention maps, induction scores and knock-outs in
:mod:`coursekit.gpt.induction`.
The command line covers all three, for instructors checking the committed weights::

    python -m coursekit.gpt train-icl --work runs/icl --out data/icl   # reproduce data/icl
    python -m coursekit.gpt induction --json   # every head's induction score, the best head
    python -m coursekit.gpt icl --json         # strict held-out accuracy by number of shots
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from coursekit.gpt.model import GPT
from coursekit.validation import (
    check_choice,
    check_finite,
    check_int_sequence,
    check_positive_int,
    check_tensor,
    check_token_ids,
)

__all__ = [
    "PromptFormat", "FORMATS", "build_prompt", "TokenFormat", "build_token_prompt",
    "model_logits", "label_logprobs", "classify_by_likelihood", "greedy_continuation",
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
        for name in ("name", "template", "separator"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")
        if "{x}" not in self.template or not self.template.endswith(" {y}"):
            raise ValueError(f"template must contain '{{x}}' and end with ' {{y}}', got {self.template!r}")
        try:
            self.template.format(x="", y="")
        except (KeyError, IndexError, ValueError):
            raise ValueError(f"template may only use the fields {{x}} and {{y}}, got {self.template!r}") from None

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
    if isinstance(demonstrations, (str, bytes)) or not isinstance(demonstrations, Sequence):
        raise TypeError(f"demonstrations must be a sequence of (x, y) string pairs, got "
                        f"{type(demonstrations).__name__}")
    if not all(isinstance(d, (tuple, list)) and len(d) == 2 and all(isinstance(s, str) for s in d)
               for d in demonstrations):
        raise TypeError("demonstrations must be a sequence of (x, y) string pairs")
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if task_description is not None and not isinstance(task_description, str):
        raise TypeError(f"task_description must be a str or None, got {type(task_description).__name__}")
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
    the query is ``before_x + x + between`` and the answer is the token or tokens that follow."""

    name: str
    before_x: tuple[int, ...] = ()
    between: tuple[int, ...] = ()
    after_y: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        for name in ("before_x", "between", "after_y"):       # stored as tuples of ids >= 0
            object.__setattr__(self, name, tuple(_ids(getattr(self, name), name, single=False)))

    def pair_length(self) -> int:
        return len(self.before_x) + len(self.between) + len(self.after_y) + 2


def build_token_prompt(demonstrations: Sequence[tuple[Sequence[int], Sequence[int]]], query: Sequence[int],
                       fmt: TokenFormat, prefix: Sequence[int] = ()) -> list[int]:
    """``prefix`` (a task description) + k demonstrations + query, as one list of token ids."""
    if not isinstance(fmt, TokenFormat):
        raise TypeError(f"fmt must be a TokenFormat, got {type(fmt).__name__}")
    ids = _ids(prefix, "prefix", single=False)
    for pair in demonstrations:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"demonstrations must be (x, y) pairs, got {pair!r}")
        x, y = pair
        ids += [*fmt.before_x, *_ids(x, "a demonstration's x"), *fmt.between, *_ids(y, "a demonstration's y"),
                *fmt.after_y]
    return ids + [*fmt.before_x, *_ids(query, "query"), *fmt.between]


def _ids(x, name: str, *, single: bool = True) -> list[int]:
    """Token ids as a list of ints: one int (if ``single``), a list/tuple of ints or an integer tensor.
    A float is refused rather than truncated, a negative id rather than counted from the end."""
    if isinstance(x, torch.Tensor):
        x = x.reshape(-1)
    elif single and isinstance(x, int) and not isinstance(x, bool):
        x = [x]
    ids = check_int_sequence(x, name)
    if ids and min(ids) < 0:
        raise ValueError(f"{name} must hold token ids >= 0, got {min(ids)}")
    return ids


# ================================================================================================
# Reading the answer: likelihood over a label set, greedy generation
# ================================================================================================

def model_logits(model: Callable, idx: torch.Tensor) -> torch.Tensor:
    """Logits (B, T, V) of any causal LM: the course's GPT (returns ``(logits, loss)``), a Hugging
    Face model (``.logits``) or a plain function returning a tensor."""
    if not callable(model):
        raise TypeError(f"model must be callable (a language model), got {type(model).__name__}")
    check_tensor(idx, "idx", ndim=2)
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
    check_choice(reduce, "reduce", ["sum", "mean"])
    prompt = _ids(prompt, "prompt")
    labels = [_ids(lab, "a label") for lab in labels]
    if not prompt:
        raise ValueError("the prompt must hold at least one token (nothing to condition on)")
    if not labels or any(len(lab) == 0 for lab in labels):
        raise ValueError("labels must be a non-empty list of non-empty token sequences")
    scores = []
    for lab in labels:                                                      # labels may differ in length
        idx = torch.tensor([prompt + lab[:-1]])                             # (1, T + n - 1)
        logits = model_logits(model, idx)[0, len(prompt) - 1:]             # (n, V): the label's positions
        check_finite(logits, "the model's logits")
        if max(lab) >= logits.shape[-1]:
            raise ValueError(f"labels must hold token ids in [0, {logits.shape[-1]}) (the model's vocabulary), "
                             f"got {max(lab)}")
        logp = F.log_softmax(logits.double(), dim=-1)                       # (n, V)
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
    logits = model_logits(model, prompts)[:, -1]                            # (B, V)
    check_finite(logits, "the model's next-token logits")
    check_token_ids(candidates, "candidates", logits.shape[-1])
    logp = F.log_softmax(logits.float(), dim=-1)                            # (B, V) next-token distribution
    return logp.gather(1, candidates)                                       # (B, L)


@torch.no_grad()
def greedy_continuation(model: Callable, prompt: Sequence[int], max_new_tokens: int,
                        stop: Sequence[int] = (), max_len: int | None = None) -> list[int]:
    """Append argmax tokens to ``prompt`` until a token in ``stop`` (not included) or
    ``max_new_tokens``; return only the new tokens."""
    check_positive_int(max_new_tokens, "max_new_tokens")
    ids = _ids(prompt, "prompt")
    if not ids:
        raise ValueError("the prompt must hold at least one token")
    stop = set(_ids(stop, "stop", single=False))
    if max_len is not None:
        check_positive_int(max_len, "max_len")
    out: list[int] = []
    for _ in range(max_new_tokens):
        window = ids[-max_len:] if max_len else ids
        logits = model_logits(model, torch.tensor([window]))[0, -1]         # (V,)
        check_finite(logits, "the model's next-token logits")               # argmax would pick a NaN
        nxt = int(logits.argmax())
        if nxt in stop:
            break
        ids.append(nxt)
        out.append(nxt)
    return out

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
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a folder path (str or Path) or None, got {type(path).__name__}")
    p = path or os.environ.get("COURSEKIT_GPT2_DIR")
    if not p:
        return None
    p = Path(p)
    return p if (p / "config.json").exists() else None


def load_hf_gpt2(directory: str | Path):
    """(the course's GPT with the directory's weights, its GPT-2 tokenizer)."""
    from transformers import AutoTokenizer

    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a folder path (str or Path), got {type(directory).__name__}")
    directory = Path(directory)
    if not (directory / "config.json").exists():
        raise FileNotFoundError(f"{directory} is not a Hugging Face model directory (no config.json)")
    return GPT.from_hf(directory), AutoTokenizer.from_pretrained(str(directory))


def run_slide_prompts(model: Callable, tokenizer, *, max_new_tokens: int = 8,
                      max_len: int | None = None) -> dict[str, dict]:
    """The slides' prompts through any causal LM + tokenizer with ``encode``/``decode``: the
    translation prompt answered by greedy generation (up to the end of the line), the sentiment
    prompt by per-token likelihood of " positive" vs " negative"."""
    if not (callable(getattr(tokenizer, "encode", None)) and callable(getattr(tokenizer, "decode", None))):
        raise TypeError(f"tokenizer must have encode and decode methods, got {type(tokenizer).__name__}")
    max_len = max_len or getattr(getattr(model, "config", None), "max_len", None)
    out = {}
    tr = SLIDE_PROMPTS["translation"]
    prompt = build_prompt(tr["demonstrations"], tr["query"], task_description=tr["description"])
    ids = tokenizer.encode(prompt)
    new = greedy_continuation(model, ids, max_new_tokens, stop=tokenizer.encode("\n"), max_len=max_len)
    out["translation"] = {"prompt": prompt, "completion": tokenizer.decode(new), "expected": tr["answer"]}
    se = SLIDE_PROMPTS["sentiment"]
    prompt = build_prompt(se["demonstrations"], se["query"], task_description=se["description"])
    scores = label_logprobs(model, tokenizer.encode(prompt), [tokenizer.encode(" " + lab) for lab in se["labels"]],
                            reduce="mean")
    out["sentiment"] = {"prompt": prompt, "scores": dict(zip(se["labels"], scores.tolist())),
                        "prediction": se["labels"][int(scores.argmax())], "expected": se["answer"]}
    return out


# ================================================================================================
# Command line: the committed in-context learner
# ================================================================================================
