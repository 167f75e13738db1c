"""Checks of notebook 14: the reference passes, a stub is "not attempted", typical mistakes get their hint, and
handing in (or calling) the coursekit.training function the exercise re-creates is refused."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, passes, refuses_delegation, stub, wrong_solution_table

from coursekit import exercises
from coursekit.exercises.checks import posttrain as checks
from coursekit.training import preference

# ---------------------------------------------------------------- correct solutions


def lora_init(in_features, out_features, r, generator):
    A = (torch.rand(r, in_features, generator=generator) * 2 - 1) / math.sqrt(in_features)
    return A, torch.zeros(out_features, r)


def lora_forward(x, weight, bias, A, B, alpha):
    out = x @ weight.T + (alpha / A.shape[0]) * (x @ A.T @ B.T)
    return out if bias is None else out + bias


def answer_logprob(logits, targets, keep, prompt_lengths):
    answer = keep & (torch.arange(targets.shape[1])[None, :] >= prompt_lengths[:, None])
    logp = F.log_softmax(logits, dim=-1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (logp * answer).sum(dim=1)


def dpo_loss(pc, pr, rc, rr, beta):
    return -F.logsigmoid(beta * ((pc - rc) - (pr - rr))).mean()


def bradley_terry_loss(rw, rl):
    return -F.logsigmoid(rw - rl).mean()


CORRECT = {
    checks.check_lora_init: lora_init, checks.check_lora_forward: lora_forward,
    checks.check_answer_logprob: answer_logprob, checks.check_dpo_loss: dpo_loss,
    checks.check_bradley_terry_loss: bradley_terry_loss,
}


def test_checks_exported_and_stubs_not_attempted():
    for name in checks.__all__:
        assert getattr(exercises, name) is getattr(checks, name)
        assert getattr(checks, name)(stub, verbose=False).status == "not attempted", name


@pytest.mark.parametrize("check", list(CORRECT), ids=lambda c: c.__name__)
def test_a_correct_solution_passes(check):
    passes(check, CORRECT[check])


def test_a_normal_init_scaled_like_a_layer_passes_too():
    passes(checks.check_lora_init, lambda k, d, r, g: (torch.randn(r, k, generator=g) * 0.01, torch.zeros(d, r)))


# ---------------------------------------------------------------- wrong solutions: each names its mistake

WRONG, wrong = wrong_solution_table()


@wrong("check_lora_init", "B is not zero", "start as the pre-trained")
def b_random(k, d, r, g):
    return torch.randn(r, k, generator=g), torch.randn(d, r, generator=g)


@wrong("check_lora_init", "A is zero as well as B", "never moves")
def both_zero(k, d, r, g):
    return torch.zeros(r, k), torch.zeros(d, r)


@wrong("check_lora_init", "each other's shapes")
def shapes_swapped(k, d, r, g):
    return torch.randn(d, r, generator=g), torch.zeros(r, k)


@wrong("check_lora_init", "other way round")
def a_zero_b_random(k, d, r, g):
    return torch.zeros(r, k), torch.randn(d, r, generator=g)


@wrong("check_lora_init", "generator you are given")
def ignores_generator(k, d, r, g):
    return torch.randn(r, k) / math.sqrt(k), torch.zeros(d, r)


@wrong("check_lora_init", "distinct values")
def constant_a(k, d, r, g):
    return torch.full((r, k), 0.1), torch.zeros(d, r)


@wrong("check_lora_forward", "scaling α/r is missing")
def no_scaling(x, weight, bias, A, B, alpha):
    out = x @ weight.T + x @ A.T @ B.T
    return out if bias is None else out + bias


@wrong("check_lora_forward", "α instead of α / r")
def alpha_only(x, weight, bias, A, B, alpha):
    out = x @ weight.T + alpha * (x @ A.T @ B.T)
    return out if bias is None else out + bias


@wrong("check_lora_forward", "base layer's output")
def update_only(x, weight, bias, A, B, alpha):
    return (alpha / A.shape[0]) * (x @ A.T @ B.T)


@wrong("check_lora_forward", "bias is missing")
def no_bias(x, weight, bias, A, B, alpha):
    return x @ weight.T + (alpha / A.shape[0]) * (x @ A.T @ B.T)


@wrong("check_lora_forward", "r / α")
def inverted_scaling(x, weight, bias, A, B, alpha):
    out = x @ weight.T + (A.shape[0] / alpha) * (x @ A.T @ B.T)
    return out if bias is None else out + bias


@wrong("check_lora_forward", "update was subtracted")
def subtracted(x, weight, bias, A, B, alpha):
    out = x @ weight.T - (alpha / A.shape[0]) * (x @ A.T @ B.T)
    return out if bias is None else out + bias


@wrong("check_answer_logprob", "prompt's tokens are summed in")
def with_prompt(logits, targets, keep, prompt_lengths):
    logp = F.log_softmax(logits, -1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (logp * keep).sum(1)


@wrong("check_answer_logprob", "averaged", "SUM")
def averaged(logits, targets, keep, prompt_lengths):
    answer = keep & (torch.arange(targets.shape[1])[None] >= prompt_lengths[:, None])
    logp = F.log_softmax(logits, -1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (logp * answer).sum(1) / answer.sum(1)


@wrong("check_answer_logprob", "one position too early")
def off_by_one(logits, targets, keep, prompt_lengths):
    answer = keep & (torch.arange(targets.shape[1])[None] >= prompt_lengths[:, None] - 1)
    logp = F.log_softmax(logits, -1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (logp * answer).sum(1)


@wrong("check_answer_logprob", "without log_softmax")
def raw_logits(logits, targets, keep, prompt_lengths):
    answer = keep & (torch.arange(targets.shape[1])[None] >= prompt_lengths[:, None])
    return (logits.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1) * answer).sum(1)


@wrong("check_answer_logprob", "padding is summed in")
def padding_in(logits, targets, keep, prompt_lengths):
    answer = torch.arange(targets.shape[1])[None] >= prompt_lengths[:, None]
    logp = F.log_softmax(logits, -1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (logp * answer).sum(1)


@wrong("check_dpo_loss", "reference model is left out")
def no_reference(pc, pr, rc, rr, beta):
    return -F.logsigmoid(beta * (pc - pr)).mean()


@wrong("check_dpo_loss", "sign is reversed")
def reversed_sign(pc, pr, rc, rr, beta):
    return -F.logsigmoid(beta * ((pr - rr) - (pc - rc))).mean()


@wrong("check_dpo_loss", "β multiplies the loss")
def beta_outside(pc, pr, rc, rr, beta):
    return (beta * -F.logsigmoid((pc - rc) - (pr - rr))).mean()


@wrong("check_dpo_loss", "summed")
def summed_pairs(pc, pr, rc, rr, beta):
    return -F.logsigmoid(beta * ((pc - rc) - (pr - rr))).sum()


@wrong("check_dpo_loss", "log is missing")
def no_log(pc, pr, rc, rr, beta):
    return -torch.sigmoid(beta * ((pc - rc) - (pr - rr))).mean()


@wrong("check_bradley_terry_loss", "sign is reversed")
def bt_reversed(rw, rl):
    return -F.logsigmoid(rl - rw).mean()


@wrong("check_bradley_terry_loss", "log is missing")
def bt_no_log(rw, rl):
    return -torch.sigmoid(rw - rl).mean()


@wrong("check_bradley_terry_loss", "summed")
def bt_summed(rw, rl):
    return -F.logsigmoid(rw - rl).sum()


@wrong("check_bradley_terry_loss", "its own sigmoid")
def bt_separate(rw, rl):
    return -(F.logsigmoid(rw) - F.logsigmoid(rl)).mean()


@wrong("check_bradley_terry_loss", "underflows", "F.logsigmoid")
def bt_unstable(rw, rl):
    return -torch.log(torch.sigmoid(rw - rl)).mean()


@pytest.mark.parametrize("key", sorted(WRONG), ids=lambda k: f"{k[0]}-{k[1]}")
def test_wrong_solutions_fail_with_their_hint(key):
    fn, words = WRONG[key]
    fails_with(getattr(checks, key[0]), fn, *words)


# ---------------------------------------------------------------- delegation is refused

@pytest.mark.parametrize("check, fn, dotted", [
    (checks.check_dpo_loss, lambda pc, pr, rc, rr, beta: preference.dpo_loss(pc, pr, rc, rr, beta).loss,
     "coursekit.training.preference.dpo_loss"),
    (checks.check_bradley_terry_loss, preference.bradley_terry_loss, None),
    (checks.check_answer_logprob, lambda logits, targets, keep, p: preference.sequence_logprob(
        logits, targets.clamp(min=0), keep & (torch.arange(targets.shape[1])[None] >= p[:, None])),
     "coursekit.training.preference.sequence_logprob"),
])
def test_calling_the_course_function_is_refused(check, fn, dotted):
    refuses_delegation(check, fn, dotted, correct=True)
