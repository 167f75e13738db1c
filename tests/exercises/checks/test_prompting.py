"""Checks of notebook 12: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, notebook_solutions, passes, refuses_delegation, stub

from coursekit import exercises
from coursekit.exercises.checks import prompting as pr
from coursekit.gpt import induction
from coursekit.gpt import prompting as P


def test_checks_are_exported_and_stubs_not_attempted():
    for name in pr.__all__:
        assert getattr(exercises, name) is getattr(pr, name)
        assert getattr(pr, name)(stub, verbose=False).status == "not attempted", name


# ------------------------------------------------------------------ build_prompt

def _lines(demos, description):
    return [description] + [f"{x} => {y}" for x, y in demos]


def good_prompt(demos, test, description):
    return "\n".join(_lines(demos, description) + [f"{test[0]} =>"])


def test_build_prompt_reference_and_mistakes():
    passes(pr.check_build_prompt, good_prompt)
    fails_with(pr.check_build_prompt, lambda d, t, desc: "".join(_lines(d, desc) + [f"{t[0]} =>"]),
                "separator")
    fails_with(pr.check_build_prompt, lambda d, t, desc: good_prompt(d[::-1], t, desc), "wrong order")
    fails_with(pr.check_build_prompt, lambda d, t, desc: "\n".join(_lines(d, desc) + [f"{t[0]} => {t[1]}"]),
                "answer is in the prompt")
    fails_with(pr.check_build_prompt, lambda d, t, desc: good_prompt(d, t, desc) + " ", "space after")
    fails_with(pr.check_build_prompt, lambda d, t, desc: good_prompt([*d, t], t, desc), "as a demonstration")
    r = fails_with(pr.check_build_prompt, lambda d, t, desc: 42, "should return a str")
    assert "int" in r.message


# ------------------------------------------------------------------ label likelihood

def good_logprob(model, prompt, label):
    logits, _ = model(torch.tensor([prompt + label[:-1]]))
    logp = F.log_softmax(logits[0, len(prompt) - 1:], dim=-1)
    return logp[torch.arange(len(label)), torch.tensor(label)].sum().item()


def test_label_likelihood_reference_and_mistakes():
    passes(pr.check_label_likelihood, good_logprob)
    passes(pr.check_label_likelihood, lambda m, p, lab: torch.tensor(good_logprob(m, p, lab)))   # 0-d tensor is fine
    # the check module's own mistakes, called from here (a student's code has its own globals, not the check's)
    fails_with(pr.check_label_likelihood, lambda *a: pr._first_token_only(*a), "only the first label token")
    fails_with(pr.check_label_likelihood, lambda *a: pr._wrong_axis(*a), "wrong axis")
    fails_with(pr.check_label_likelihood, lambda *a: pr._without_prompt(*a), "without conditioning on the prompt")
    fails_with(pr.check_label_likelihood, lambda *a: pr._no_shift(*a), "off by one")

    def mean_instead_of_sum(model, prompt, label):
        return good_logprob(model, prompt, label) / len(label)

    fails_with(pr.check_label_likelihood, mean_instead_of_sum, "3-token label", "averaged")
    fails_with(pr.check_label_likelihood, lambda m, p, lab: [1.0], "return a float")


def test_label_likelihood_student_crash_is_reported():
    def crashes(model, prompt, label):
        return model(torch.tensor(prompt))           # 1-d input: the model's ValueError becomes feedback
    fails_with(pr.check_label_likelihood, crashes, "raised ValueError")


# ------------------------------------------------------------------ induction score

def good_induction(attn, period):
    T = attn.shape[-1]
    q = torch.arange(period, T)
    return attn[:, q, q - period + 1].mean(-1)


def loop_induction(attn, period):
    H, T, _ = attn.shape
    return torch.stack([torch.stack([attn[h, i, i - period + 1] for i in range(period, T)]).mean() for h in range(H)])


def test_induction_score_reference_and_mistakes():
    passes(pr.check_induction_score, good_induction)
    passes(pr.check_induction_score, loop_induction)

    def off_by_one(attn, period):
        q = torch.arange(period, attn.shape[-1])
        return attn[:, q, q - period].mean(-1)

    def diagonal(attn, period):
        q = torch.arange(period, attn.shape[-1])
        return attn[:, q, q].mean(-1)

    def previous_token(attn, period):
        q = torch.arange(period, attn.shape[-1])
        return attn[:, q, q - 1].mean(-1)

    def all_queries(attn, period):
        q = torch.arange(attn.shape[-1])
        return attn[:, q, q - period + 1].mean(-1)

    fails_with(pr.check_induction_score, off_by_one, "off by one")
    fails_with(pr.check_induction_score, diagonal, "main diagonal")
    fails_with(pr.check_induction_score, previous_token, "previous-token")
    fails_with(pr.check_induction_score, all_queries, "first half")
    fails_with(pr.check_induction_score, lambda a, p: good_induction(a, p).mean(), "shape")


def test_induction_check_case_has_a_real_induction_head():
    attn = pr._attention(3, 8, 1, induction_head=1)
    scores = good_induction(attn, 8)
    assert scores.argmax() == 1 and scores[1] > 0.5 > scores[0]


# ------------------------------------------------------------------ realistic wrong solutions

PROMPT_WRONG = {   # name -> (student function, a word of the hint or None)
    "blank lines between the lines": (lambda d, t, desc: "\n\n".join(_lines(d, desc) + [f"{t[0]} =>"]),
                                      "blank line"),
    "a trailing newline": (lambda d, t, desc: good_prompt(d, t, desc) + "\n", "ends with a newline"),
    "no spaces around =>": (lambda d, t, desc: "\n".join([desc] + [f"{x}=>{y}" for x, y in d] + [f"{t[0]}=>"]),
                            "space on each side"),
    "the whole test pair as the query": (lambda d, t, desc: "\n".join(_lines(d, desc) + [f"{t} =>"]), "test INPUT"),
    "the last demonstration dropped": (lambda d, t, desc: good_prompt(d[:-1], t, desc), "demonstration is missing"),
    "description hard-coded": (lambda d, t, desc: good_prompt(d, t, "Translate English to French:"), None),
    "a blank line after the description": (lambda d, t, desc: desc + "\n\n" + "\n".join(
        [f"{x} => {y}" for x, y in d] + [f"{t[0]} =>"]), "blank line after the description"),
    "returns the list of lines": (lambda d, t, desc: _lines(d, desc) + [f"{t[0]} =>"], "should return a str"),
    "the description last": (lambda d, t, desc: "\n".join(_lines(d, desc)[1:] + [desc, f"{t[0]} =>"]), None),
}


@pytest.mark.parametrize("name", sorted(PROMPT_WRONG))
def test_build_prompt_wrong_solutions_fail(name):
    fn, hint = PROMPT_WRONG[name]
    fails_with(pr.check_build_prompt, fn, "on ", *([hint] if hint else []))


def _logp_rows(model, prompt, label):
    logits, _ = model(torch.tensor([prompt + label[:-1]]))
    return logits[0, len(prompt) - 1:]                                  # (len(label), V)


LIKELIHOOD_WRONG = {
    "negative log-likelihood": (lambda m, p, lab: -good_logprob(m, p, lab), "sign is flipped"),
    "log base 2": (lambda m, p, lab: good_logprob(m, p, lab) / math.log(2), "base 2"),
    "the probability itself": (lambda m, p, lab: math.exp(good_logprob(m, p, lab)), "not a log-probability"),
    "raw logits summed": (lambda m, p, lab: _logp_rows(m, p, lab)[torch.arange(len(lab)), torch.tensor(lab)].sum()
                          .item(), "raw logits"),
    "probabilities summed": (lambda m, p, lab: F.softmax(_logp_rows(m, p, lab), -1)[
        torch.arange(len(lab)), torch.tensor(lab)].sum().item(), "summed probabilities"),
    "only the last label token": (lambda m, p, lab: F.log_softmax(_logp_rows(m, p, lab), -1)[-1, lab[-1]].item(),
                                  "only the last label token"),
    "returns a list": (lambda m, p, lab: [good_logprob(m, p, lab)], "return a float"),
    "returns a string": (lambda m, p, lab: f"{good_logprob(m, p, lab):.4f}", "return a float"),
    "returns the (len(label),) per-token tensor": (lambda m, p, lab: F.log_softmax(_logp_rows(m, p, lab), -1)[
        torch.arange(len(lab)), torch.tensor(lab)], "return one number"),
    "vocabulary size hard-coded to 12": (lambda m, p, lab: F.log_softmax(_logp_rows(m, p, lab)[:, :12], -1)[
        torch.arange(len(lab)), torch.tensor(lab)].sum().item(), None),
}


@pytest.mark.parametrize("name", sorted(LIKELIHOOD_WRONG))
def test_label_likelihood_wrong_solutions_fail(name):
    fn, hint = LIKELIHOOD_WRONG[name]
    fails_with(pr.check_label_likelihood, fn, "on ", *([hint] if hint else []))


def _stripe(attn, period):
    q = torch.arange(period, attn.shape[-1])
    return attn[:, q, q - period + 1]


INDUCTION_WRONG = {
    "max over the queries": (lambda a, p: _stripe(a, p).max(-1).values, "maximum"),
    "sum over the queries": (lambda a, p: _stripe(a, p).sum(-1), "summed"),
    "divided by T": (lambda a, p: _stripe(a, p).sum(-1) / a.shape[-1], "divided by T"),
    "query and key swapped": (lambda a, p: a[:, torch.arange(1, p + 1), torch.arange(p, 2 * p)].mean(-1), "swapped"),
    "queries from period - 1": (lambda a, p: a[:, torch.arange(p - 1, 2 * p - 1), torch.arange(0, p)].mean(-1),
                                "queries are off by one"),
    "keepdim": (lambda a, p: _stripe(a, p).mean(-1, keepdim=True), "keepdim"),
    "mean over the heads": (lambda a, p: _stripe(a, p).mean(0), "averaged over the heads"),
    "period hard-coded to 6": (lambda a, p: _stripe(a, 6), None),
    "returns a list": (lambda a, p: _stripe(a, p).mean(-1).tolist(), "floating-point tensor"),
}


@pytest.mark.parametrize("name", sorted(INDUCTION_WRONG))
def test_induction_score_wrong_solutions_fail(name):
    fn, hint = INDUCTION_WRONG[name]
    fails_with(pr.check_induction_score, fn, "on ", *([hint] if hint else []))


NB12 = notebook_solutions("12_few_shot_prompting")   # the notebook's solutions
build_prompt, label_logprob, induction_score = NB12["build_prompt"], NB12["label_logprob"], NB12["induction_score"]


@pytest.mark.parametrize("check, solution", [
    (pr.check_build_prompt, build_prompt), (pr.check_label_likelihood, label_logprob),
    (pr.check_induction_score, induction_score),
])
def test_the_notebook_solutions_pass(check, solution):
    passes(check, solution)


# ------------------------------------------------------------------ calling the library is refused

def _likelihood_by_classify(model, prompt, label):
    """Token by token with the batched single-token scorer of coursekit.gpt.prompting."""
    return sum(P.classify_by_likelihood(model, torch.tensor([prompt + label[:i]]), torch.tensor([[t]])).item()
               for i, t in enumerate(label))


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (pr.check_build_prompt, lambda d, t, desc: P.build_prompt(d, t[0], task_description=desc),
     "coursekit.gpt.prompting.build_prompt", True),
    (pr.check_label_likelihood, lambda m, p, lab: P.label_logprobs(m, p, [lab])[0].item(),
     "coursekit.gpt.prompting.label_logprobs", True),
    (pr.check_label_likelihood, _likelihood_by_classify, "coursekit.gpt.prompting.classify_by_likelihood", True),
    (pr.check_induction_score, lambda attn, period: induction.induction_scores(attn, period),
     "coursekit.gpt.induction.induction_scores", True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


@pytest.mark.parametrize("check, solution", [
    (pr.check_build_prompt, good_prompt), (pr.check_label_likelihood, good_logprob),
    (pr.check_induction_score, good_induction),
])
def test_reference_solutions_still_pass(check, solution):
    passes(check, solution)
