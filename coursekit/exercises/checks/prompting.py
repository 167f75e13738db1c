"""Exercise checks for notebook 12 (few-shot prompting and in-context learning).

What the student writes:

* ``build_prompt(demonstrations, test_example, description)`` — the GPT-3 prompt (Brown et al. 2020,
  Fig. 2.1): the task description, then one ``x => y`` line per demonstration in the given order,
  then the test input as ``x =>``; lines joined by ``"\\n"``. ``test_example`` is an ``(x, y)`` pair
  whose label must *not* appear in the prompt.
* ``label_logprob(model, prompt, label)`` — log P(label | prompt) = Σ_i log P(label_i | prompt,
  label_<i) for token-id lists, where ``model(idx (1, T))`` returns ``(logits (1, T, V), loss)``.
* ``induction_score(attn, period)`` — for attention weights ``attn (H, T, T)`` on a sequence made of
  a random block of ``period`` tokens repeated twice (T = 2·period), the mean over the queries i of the
  second half of ``attn[h, i, i - period + 1]``: the weight on the token *after* the previous occurrence.

The cases vary the number of demonstrations and the task description, the model (two tiny GPTs with different
vocabularies), the label length, the number of heads and the period; every reference is computed on the check's
own copy of the inputs. The references are :mod:`coursekit.gpt.prompting` and :mod:`coursekit.gpt.induction`; each
mismatch is compared with the typical mistakes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit.exercises.core import (
    CheckFailed,
    active_variant,
    case_generator,
    case_seed,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)
from coursekit.gpt.induction import induction_scores
from coursekit.gpt.model import GPT, GPTConfig
from coursekit.gpt.prompting import build_prompt, label_logprobs

__all__ = ["check_build_prompt", "check_label_likelihood", "check_induction_score"]


# ------------------------------------------------------------------ build a k-shot prompt

_PROMPT_CASES = [
    ("the slides' translation prompt",
     [("sea otter", "loutre de mer"), ("peppermint", "menthe poivrée"), ("plush girafe", "girafe peluche")],
     ("cheese", "fromage"), "Translate English to French:"),
    ("a one-shot sentiment prompt", [("a gripping film", "positive")], ("dull and long", "negative"),
     "Classify the sentiment of each review."),
    ("a zero-shot prompt", [], ("sea otter", "loutre de mer"), "Translate English to French:"),
    ("a two-shot arithmetic prompt", [("2 + 3", "5"), ("7 - 4", "3")], ("6 + 1", "7"),
     "Answer the arithmetic question."),
    ("a four-shot prompt whose labels repeat", [("red", "colour"), ("dog", "animal"), ("blue", "colour"),
                                                ("cat", "animal")], ("green", "colour"), "Name the category."),
]


def _prompt_mistakes(demos, x, y, description) -> dict[str, str]:
    want = build_prompt(demos, x, task_description=description)
    lines = [description] + [f"{a} => {b}" for a, b in demos]
    return {
        "the test example's answer is in the prompt: the prompt must end with the query 'x =>' "
        "and let the model supply y": want + " " + y,
        "there is a space after the final '=>': end the prompt with '=>' (the label is scored as ' y')": want + " ",
        "the prompt ends with a newline: end it with the query's '=>'": want + "\n",
        "the separator between lines is missing: join the description, demonstrations and query with '\\n'":
            "".join(lines + [f"{x} =>"]),
        "the lines are separated by a blank line ('\\n\\n'); join them with a single '\\n'":
            "\n\n".join(lines + [f"{x} =>"]),
        "there is a blank line after the description; every line is joined with a single '\\n'":
            description + "\n\n" + build_prompt(demos, x),
        "the demonstrations are in the wrong order: keep the order they were given in":
            build_prompt(demos[::-1], x, task_description=description),
        "the task description is missing: it is the first line": build_prompt(demos, x),
        "the test example is written as a demonstration too (with its label) before the query":
            build_prompt([*demos, (x, y)], x, task_description=description),
        "a demonstration is missing: write one 'x => y' line for EVERY demonstration":
            build_prompt(demos[:-1], x, task_description=description) if demos else None,
        "'=>' needs a space on each side: 'x => y' and, for the query, 'x =>'":
            "\n".join([description] + [f"{a}=>{b}" for a, b in demos] + [f"{x}=>"]),
        "the query is the test INPUT test_example[0], not the whole (x, y) pair":
            "\n".join(lines + [f"{(x, y)} =>"]),
    }


_EXTRA_WORDS = ["river", "lamp", "quiet", "seven", "orange", "bridge", "winter", "paper", "salt", "cloud"]


def _hidden_words(demos, x, y, seed: int):
    """The case as shown (variant 0), or under the grader's hidden variants the same prompt with a random word
    added to every input and label, so that the strings differ from the visible ones."""
    if not active_variant():
        return demos, x, y
    g = case_generator(seed)

    def more(text: str) -> str:
        return f"{text} {_EXTRA_WORDS[int(torch.randint(len(_EXTRA_WORDS), (1,), generator=g))]}"

    return [(more(a), more(b)) for a, b in demos], more(x), more(y)


@exercise_check("build a k-shot prompt", reimplements=("coursekit.gpt.prompting.build_prompt",))
def check_build_prompt(student_fn: Callable) -> None:
    require_function(student_fn, "build_prompt")
    for n, (case, demos, (x, y), description) in enumerate(_PROMPT_CASES):
        demos, x, y = _hidden_words(demos, x, y, seed=n)
        want = build_prompt(demos, x, task_description=description)
        mistakes = _prompt_mistakes(demos, x, y, description)
        got = run_student(student_fn, case, [tuple(d) for d in demos], (x, y), description)
        if not isinstance(got, str):
            raise CheckFailed(f"on {case}, build_prompt should return a str, got {describe(got)}")
        if got == want:
            continue
        hint = next((h for h, wrong in mistakes.items() if wrong is not None and got == wrong), None)
        raise CheckFailed(f"on {case}, the prompt is wrong.\nexpected:\n{want!r}\ngot:\n{got!r}"
                          + (f"\nIt looks like {hint}." if hint else ""))


# ------------------------------------------------------------------ label likelihood

def _tiny_model(seed: int = 0, vocab_size: int = 12, max_len: int = 16, n_heads: int = 2,
                d_model: int = 16) -> GPT:
    torch.manual_seed(case_seed(seed))
    return GPT(GPTConfig(vocab_size=vocab_size, max_len=max_len, n_layers=1, n_heads=n_heads,
                         d_model=d_model)).eval()


def _logp(model, ids) -> torch.Tensor:
    logits, _ = model(torch.tensor([ids]))
    return F.log_softmax(logits[0].double(), dim=-1)                      # (T, V)


def _first_token_only(model, prompt, label):
    logits, _ = model(torch.tensor([prompt]))
    return F.log_softmax(logits[0, -1], dim=-1)[label[0]].item()


def _wrong_axis(model, prompt, label):
    logits, _ = model(torch.tensor([prompt + label[:-1]]))
    logp = F.log_softmax(logits[0], dim=0)[len(prompt) - 1:]                # over positions, not the vocabulary
    return sum(logp[i, t].item() for i, t in enumerate(label))


def _without_prompt(model, prompt, label):
    logits, _ = model(torch.tensor([label]))
    logp = F.log_softmax(logits[0], dim=-1)
    return sum(logp[i, t].item() for i, t in enumerate(label[1:]))         # label alone: P(label_2… | label_1)


def _no_shift(model, prompt, label):
    logits, _ = model(torch.tensor([prompt + label]))
    logp = F.log_softmax(logits[0, len(prompt):], dim=-1)                   # the logits *at* the label positions
    return sum(logp[i, t].item() for i, t in enumerate(label))


def _probability_product(model, prompt, label):
    return label_logprobs(model, prompt, [label])[0].exp().item()


def _raw_logits(model, prompt, label):
    logits, _ = model(torch.tensor([prompt + label[:-1]]))
    return sum(logits[0, len(prompt) - 1 + i, t].item() for i, t in enumerate(label))


def _probability_sum(model, prompt, label):
    logp = _logp(model, prompt + label[:-1])[len(prompt) - 1:]
    return sum(logp[i, t].exp().item() for i, t in enumerate(label))


def _last_token_only(model, prompt, label):
    logp = _logp(model, prompt + label[:-1])
    return logp[-1, label[-1]].item()


_LIKELIHOOD_MODELS = {"model A (vocabulary 12)": dict(seed=0),
                      "model B (vocabulary 20, 3 heads)": dict(seed=1, vocab_size=20, max_len=24, n_heads=3,
                                                               d_model=24)}
_LIKELIHOOD_CASES = [
    ("a 3-token label after a 5-token prompt", "model A (vocabulary 12)", [1, 5, 2, 7, 3], [4, 9, 4]),
    ("a 2-token label after a 1-token prompt", "model A (vocabulary 12)", [6], [11, 0]),
    ("a 1-token label", "model A (vocabulary 12)", [2, 3, 4], [8]),
    ("a 4-token label with a repeated token after a 6-token prompt", "model B (vocabulary 20, 3 heads)",
     [17, 3, 3, 9, 12, 0], [15, 15, 2, 19]),
    ("a 2-token label that repeats the prompt", "model B (vocabulary 20, 3 heads)", [5, 18, 5, 18], [5, 18]),
]


@exercise_check("label likelihood of a continuation", reimplements=(
    "coursekit.gpt.prompting.label_logprobs", "coursekit.gpt.prompting.classify_by_likelihood"))
def check_label_likelihood(student_fn: Callable) -> None:
    require_function(student_fn, "label_logprob")
    models = {name: _tiny_model(**kw) for name, kw in _LIKELIHOOD_MODELS.items()}
    for what, model_name, prompt, label in _LIKELIHOOD_CASES:
        model = models[model_name]
        case = f"{what} (prompt={prompt}, label={label}, {model_name})"
        with torch.no_grad():
            want = label_logprobs(model, list(prompt), [list(label)])[0].item()
            mistakes = {name: mistake_value(functools.partial(f, model, list(prompt), list(label))) for name, f in [
                ("only the first label token is scored: add log P(label_i | prompt, label_<i) for every token",
                 _first_token_only),
                ("only the last label token is scored: add log P(label_i | prompt, label_<i) for every token",
                 _last_token_only),
                ("the softmax is over the wrong axis: normalise over the vocabulary (dim=-1)", _wrong_axis),
                ("the label is scored without conditioning on the prompt: feed prompt + label", _without_prompt),
                ("the positions are off by one: the logits at position t predict token t+1, so label_i is read "
                 "at position len(prompt) - 1 + i", _no_shift),
                ("this is a probability, not a log-probability: sum the log-probabilities", _probability_product),
                ("you summed raw logits; take log_softmax over the vocabulary first", _raw_logits),
                ("you summed probabilities; sum the LOG-probabilities (log_softmax)", _probability_sum),
            ]}
            mistakes.update({
                "you averaged over the label tokens; log P(label | prompt) is the SUM over them":
                    want / len(label) if len(label) > 1 else None,
                "the sign is flipped: this is the negative log-likelihood (a loss); return the log-probability "
                "itself (≤ 0)": -want,
                "this uses log base 2; use the natural log (log_softmax)": want / math.log(2),
            })
            got = run_student(student_fn, case, model, list(prompt), list(label))
        if isinstance(got, torch.Tensor):
            if got.numel() != 1 or got.is_complex():
                raise CheckFailed(f"on {case}, return one number (a float or a 0-d tensor), got {describe(got)}")
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, (float, int)):
            raise CheckFailed(f"on {case}, return a float, got {describe(got)}")
        expect_close(float(got), want, case=case, atol=1e-4, rtol=1e-4, mistakes=mistakes, what="the log-probability")


# ------------------------------------------------------------------ induction score

def _attention(H: int, period: int, seed: int, induction_head: int | None = None) -> torch.Tensor:
    g = case_generator(seed)
    T = 2 * period
    scores = torch.randn(H, T, T, generator=g, dtype=torch.float64)
    if induction_head is not None:                                           # make one head an induction head
        q = torch.arange(period, T)
        scores[induction_head, q, q - period + 1] += 6.0
    scores = scores.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
    return torch.softmax(scores, dim=-1)                                    # (H, T, T)


def _shifted(attn, period, offset, start=None, stop=None):
    T = attn.shape[-1]
    q = torch.arange(period if start is None else start, T if stop is None else stop)
    return attn[..., q, q - offset].mean(-1)              # (negative keys wrap around, as in a naive loop)


def _induction_mistakes(attn: torch.Tensor, period: int) -> dict[str, Any]:
    T = attn.shape[-1]
    q = torch.arange(period, T)
    stripe = attn[:, q, q - period + 1]                    # (H, period)
    return {
        "the offset is off by one: attend to the token *after* the previous occurrence (key i - period + 1), "
        "not the previous occurrence itself (key i - period)": _shifted(attn, period, period),
        "this reads the main diagonal (each token attending to itself) instead of the shifted diagonal "
        "i - period + 1": _shifted(attn, period, 0) if period > 1 else None,
        "this is the previous-token pattern (key i - 1), not the induction pattern":
            _shifted(attn, period, 1) if period > 2 else None,
        "the average includes queries in the first half, where no earlier occurrence exists: "
        "average over i = period … 2·period - 1 only": _shifted(attn, period, period - 1, start=0),
        "the queries are off by one: they are i = period … 2·period - 1 (the whole second half)":
            _shifted(attn, period, period - 1, start=period - 1, stop=T - 1),
        "queries and keys are swapped: attn[h, i, j] is query i (row) attending to key j (column), so read "
        "attn[h, i, i - period + 1]": attn[:, q - period + 1, q].mean(-1),
        "you took the maximum over the queries; the score is their MEAN": stripe.max(-1).values,
        "you summed over the queries; the score is their MEAN (divide by period)": stripe.sum(-1),
        "you divided by T = 2·period; the mean is over the period queries of the second half": stripe.sum(-1) / T,
    }


_INDUCTION_CASES = [  # (what, H, period, seed, induction head)
    ("4 random heads, period 6", 4, 6, 0, None),
    ("3 heads where head 1 is an induction head, period 8", 3, 8, 1, 1),
    ("2 heads, period 3", 2, 3, 2, None),
    ("ONE head that is an induction head, period 5", 1, 5, 3, 0),
    ("5 heads where head 3 is an induction head, period 4", 5, 4, 4, 3),
]


@exercise_check("induction score per head", reimplements=("coursekit.gpt.induction.induction_scores",))
def check_induction_score(student_fn: Callable) -> None:
    require_function(student_fn, "induction_score")
    for what, H, period, seed, head in _INDUCTION_CASES:
        attn = _attention(H, period, seed, head)
        case = f"{what} (attn of shape {tuple(attn.shape)})"
        want = induction_scores(attn.clone(), period)
        mistakes = _induction_mistakes(attn.clone(), period)
        got = run_student(student_fn, case, attn.clone(), period)
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != (H,) or not got.is_floating_point():
            hint = ""
            if isinstance(got, torch.Tensor) and tuple(got.shape) == (H, 1):
                hint = " Drop the keepdim=True: one score per head, shape (H,)."
            elif isinstance(got, torch.Tensor) and tuple(got.shape) == (period,):
                hint = " It looks like you averaged over the heads (dim 0); average over the queries (dim -1)."
            raise CheckFailed(f"on {case}, expected the induction scores as a floating-point tensor of shape "
                              f"({H},) (one per head), got {describe(got)}.{hint}")
        expect_close(got, want, case=case, mistakes=mistakes, what="the induction scores")
