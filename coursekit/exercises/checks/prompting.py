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

The references are :mod:`coursekit.prompting` and :mod:`coursekit.induction`; each mismatch is compared
with the typical mistakes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
import torch.nn.functional as F

from coursekit.exercises.core import (
    CheckFailed,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)
from coursekit.gpt import GPT, GPTConfig
from coursekit.induction import induction_scores
from coursekit.prompting import build_prompt, label_logprobs

__all__ = ["check_build_prompt", "check_label_likelihood", "check_induction_score"]


# ------------------------------------------------------------------ build a k-shot prompt

_PROMPT_CASES = [
    ("the slides' translation prompt",
     [("sea otter", "loutre de mer"), ("peppermint", "menthe poivrée"), ("plush girafe", "girafe peluche")],
     ("cheese", "fromage"), "Translate English to French:"),
    ("a one-shot sentiment prompt", [("a gripping film", "positive")], ("dull and long", "negative"),
     "Classify the sentiment of each review."),
    ("a zero-shot prompt", [], ("sea otter", "loutre de mer"), "Translate English to French:"),
]


@exercise_check("build a k-shot prompt", reimplements=("coursekit.prompting.build_prompt",))
def check_build_prompt(student_fn: Callable) -> None:
    require_function(student_fn, "build_prompt")
    for case, demos, (x, y), description in _PROMPT_CASES:
        got = run_student(student_fn, case, list(demos), (x, y), description)
        if not isinstance(got, str):
            raise CheckFailed(f"on {case}, build_prompt should return a str, got {describe(got)}")
        want = build_prompt(demos, x, task_description=description)
        if got == want:
            continue
        lines = [description] + [f"{a} => {b}" for a, b in demos]
        mistakes = {
            "the test example's answer is in the prompt: the prompt must end with the query 'x =>' "
            "and let the model supply y": want + " " + y,
            "there is a space after the final '=>': end the prompt with '=>' (the label is scored as ' y')": want + " ",
            "the separator between lines is missing: join the description, demonstrations and query with '\\n'":
                "".join(lines + [f"{x} =>"]),
            "the demonstrations are in the wrong order: keep the order they were given in":
                build_prompt(demos[::-1], x, task_description=description),
            "the task description is missing: it is the first line": build_prompt(demos, x),
            "the test example is written as a demonstration too (with its label) before the query":
                build_prompt([*demos, (x, y)], x, task_description=description),
        }
        hint = next((h for h, wrong in mistakes.items() if got == wrong), None)
        raise CheckFailed(f"on {case}, the prompt is wrong.\nexpected:\n{want!r}\ngot:\n{got!r}"
                          + (f"\nIt looks like {hint}." if hint else ""))


# ------------------------------------------------------------------ label likelihood

def _tiny_model() -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=12, block_size=16, n_layer=1, n_head=2, n_embd=16)).eval()


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


@exercise_check("label likelihood of a continuation", reimplements=(
    "coursekit.prompting.label_logprobs", "coursekit.prompting.classify_by_likelihood"))
def check_label_likelihood(student_fn: Callable) -> None:
    require_function(student_fn, "label_logprob")
    model = _tiny_model()
    cases = [("a 3-token label after a 5-token prompt", [1, 5, 2, 7, 3], [4, 9, 4]),
             ("a 2-token label after a 1-token prompt", [6], [11, 0]),
             ("a 1-token label", [2, 3, 4], [8])]
    for case, prompt, label in cases:
        with torch.no_grad():
            got = run_student(student_fn, case, model, list(prompt), list(label))
        if isinstance(got, torch.Tensor):
            if got.numel() != 1:
                raise CheckFailed(f"on {case}, return one number (a float or a 0-d tensor), got {describe(got)}")
            got = got.item()
        if not isinstance(got, (float, int)):
            raise CheckFailed(f"on {case}, return a float, got {describe(got)}")
        want = label_logprobs(model, prompt, [label])[0].item()
        mistakes = {name: mistake_value(functools.partial(f, model, prompt, label)) for name, f in [
            ("only the first label token is scored: add log P(label_i | prompt, label_<i) for every token",
             _first_token_only),
            ("the softmax is over the wrong axis: normalise over the vocabulary (dim=-1)", _wrong_axis),
            ("the label is scored without conditioning on the prompt: feed prompt + label", _without_prompt),
            ("the positions are off by one: the logits at position t predict token t+1, so label_i is read "
             "at position len(prompt) - 1 + i", _no_shift),
            ("this is a probability, not a log-probability: sum the log-probabilities", _probability_product),
        ]}
        expect_close(float(got), want, case=case, atol=1e-4, rtol=1e-4, mistakes=mistakes, what="the log-probability")


# ------------------------------------------------------------------ induction score

def _attention(H: int, period: int, seed: int, induction_head: int | None = None) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    T = 2 * period
    scores = torch.randn(H, T, T, generator=g, dtype=torch.float64)
    if induction_head is not None:                                           # make one head an induction head
        q = torch.arange(period, T)
        scores[induction_head, q, q - period + 1] += 6.0
    scores = scores.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
    return torch.softmax(scores, dim=-1)                                    # (H, T, T)


def _shifted(attn, period, offset, start=None):
    T = attn.shape[-1]
    q = torch.arange(period if start is None else start, T)
    return attn[..., q, q - offset].mean(-1)              # (negative keys wrap around, as in a naive loop)


@exercise_check("induction score per head", reimplements=("coursekit.induction.induction_scores",))
def check_induction_score(student_fn: Callable) -> None:
    require_function(student_fn, "induction_score")
    for case, attn, period in [("4 random heads, period 6", _attention(4, 6, 0), 6),
                               ("3 heads where head 1 is an induction head, period 8", _attention(3, 8, 1, 1), 8),
                               ("2 heads, period 3", _attention(2, 3, 2), 3)]:
        got = run_student(student_fn, case, attn.clone(), period)
        want = induction_scores(attn, period)
        mistakes = {
            "the offset is off by one: attend to the token *after* the previous occurrence (key i - period + 1), "
            "not the previous occurrence itself (key i - period)": _shifted(attn, period, period),
            "this reads the main diagonal (each token attending to itself) instead of the shifted diagonal "
            "i - period + 1": _shifted(attn, period, 0),
            "this is the previous-token pattern (key i - 1), not the induction pattern": _shifted(attn, period, 1),
            "the average includes queries in the first half, where no earlier occurrence exists: "
            "average over i = period … 2·period - 1 only": _shifted(attn, period, period - 1, start=0),
        }
        expect_close(got, want, case=case, mistakes=mistakes, what="the induction scores")
