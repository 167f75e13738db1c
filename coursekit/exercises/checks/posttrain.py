"""Exercise checks for notebook 14 (post-training): LoRA's initialisation and forward pass, the log-probability of
an answer, the DPO loss and the Bradley–Terry loss of a reward model.

What the student writes:

* ``lora_init(in_features, out_features, r, generator)`` → ``(A (r, in), B (out, r))``: A random, B zero, so that
  the adapted layer starts as the base layer and both matrices get gradients (Hu et al. 2021, §4.1).
* ``lora_forward(x, weight, bias, A, B, alpha)`` → ``x Wᵀ + b + (α / r) · x Aᵀ Bᵀ`` (Eq. 3; r = A's rows).
* ``answer_logprob(logits, targets, keep, prompt_lengths)`` → ``(B,)``: the summed log-probability of each row's
  *answer* — the real tokens (``keep``) at positions ≥ its prompt length. ``logits[:, t]`` predicts
  ``targets[:, t]`` (already shifted).
* ``dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected, beta)`` → scalar:
  ``mean(−log σ(β[(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))]))`` (Rafailov et al. 2023, Eq. 7).
* ``bradley_terry_loss(reward_chosen, reward_rejected)`` → scalar ``mean(−log σ(r_w − r_l))`` (Eq. 2), finite even
  for margins of hundreds.

The references are :mod:`coursekit.training.lora` and :mod:`coursekit.training.preference`, computed on the check's
own copies of the inputs. The cases vary the sizes (ranks other than the visible ones, prompts of different
lengths, padding after the answer), the signs (a pair where the policy already prefers the rejected answer) and
the scale (margins of ±200); every mismatch is compared with the typical mistakes so that the message can name the
one made: B random, A zero, α instead of α/r or no scaling, the prompt's tokens summed into the answer, a mean
where the paper sums, the reference left out, the sign, β outside the log-sigmoid, log(σ(x)) that underflows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    describe,
    exercise_check,
    expect_close,
    hidden_sizes,
    require_function,
    run_student,
)
from coursekit.training.preference import bradley_terry_loss, dpo_loss, sequence_logprob

__all__ = ["check_answer_logprob", "check_bradley_terry_loss", "check_dpo_loss", "check_lora_forward",
           "check_lora_init"]


def _float_tensor(got: Any, shape: tuple[int, ...], case: str, what: str) -> torch.Tensor:
    if not isinstance(got, torch.Tensor) or not got.is_floating_point() or tuple(got.shape) != shape:
        raise CheckFailed(f"on {case}, expected {what} as a floating-point tensor of shape {shape}, "
                          f"got {describe(got)}")
    return got


# ----------------------------------------------------------------------------------------------
# LoRA: initialisation
# ----------------------------------------------------------------------------------------------

def _init_cases():
    for r in hidden_sizes((2, 4), 1, 6, seed=40):
        yield f"in_features=12, out_features=10, r={r}", 12, 10, r
    yield "in_features=6, out_features=16, r=3", 6, 16, 3


@exercise_check("LoRA initialisation", reimplements=("coursekit.training.lora.LoRALinear",
                                                     "coursekit.training.lora.add_lora"))
def check_lora_init(student_fn: Callable) -> None:
    """``student_fn(in_features, out_features, r, generator)`` → ``(A (r, in), B (out, r))``: B zero, A random."""
    require_function(student_fn, "lora_init")
    for case, k, d, r in _init_cases():
        got = run_student(student_fn, case, k, d, r, case_generator(41))
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise CheckFailed(f"on {case}, return the pair (A, B), got {describe(got)}")
        A, B = got
        if isinstance(A, torch.Tensor) and isinstance(B, torch.Tensor) and tuple(A.shape) == (d, r) \
                and tuple(B.shape) == (r, k):
            raise CheckFailed(f"on {case}, A and B have each other's shapes: A (r, in_features) = {(r, k)} reads "
                              f"the input, B (out_features, r) = {(d, r)} writes the output, ΔW = B A is (out, in)")
        _float_tensor(A, (r, k), case, "A (r, in_features)")
        _float_tensor(B, (d, r), case, "B (out_features, r)")
        if B.abs().max() > 0 and A.abs().max() == 0:
            raise CheckFailed(f"on {case}, A is zero and B random: the paper does it the other way round (A random, "
                              "B zero). Either way ΔW starts at 0, but keep the convention that the checks, peft and "
                              "the course use", hint="A and B swapped")
        if B.abs().max() > 0:
            raise CheckFailed(f"on {case}, B is not zero: then ΔW = (α/r) B A is not zero before any training, and the "
                              "adapted model does not start as the pre-trained one. Initialise B to zeros",
                              hint="B initialised random")
        if A.abs().max() == 0:
            raise CheckFailed(f"on {case}, A is zero as well as B: the gradient of B is (∂L/∂h)(A x)ᵀ = 0 and the "
                              "gradient of A is Bᵀ(∂L/∂h)xᵀ = 0, so training never moves either. Draw A at random",
                              hint="A zero too")
        if torch.unique(A).numel() < A.numel() // 2:
            raise CheckFailed(f"on {case}, A has only {torch.unique(A).numel()} distinct values among {A.numel()}: "
                              "draw it at random (e.g. uniform or normal, scaled like a linear layer's weight)")
        if not 1e-3 < A.std().item() < 1.5:
            raise CheckFailed(f"on {case}, A's entries have standard deviation {A.std().item():.3g}: scale them like a "
                              f"linear layer's weight (about 1/√in_features = {k ** -0.5:.2f})")
        again = run_student(student_fn, case, k, d, r, case_generator(41))
        if not (isinstance(again, (tuple, list)) and isinstance(again[0], torch.Tensor)
                and torch.equal(again[0], A)):
            raise CheckFailed(f"on {case}, two calls with equally seeded generators gave different A: draw A with "
                              "the generator you are given (generator=generator)")


# ----------------------------------------------------------------------------------------------
# LoRA: forward pass
# ----------------------------------------------------------------------------------------------

def _lora_reference(x, weight, bias, A, B, alpha):
    r = A.shape[0]
    out = x @ weight.T + (alpha / r) * (x @ A.T @ B.T)
    return out + bias if bias is not None else out


def _lora_mistakes(x, weight, bias, A, B, alpha) -> dict[str, Any]:
    r = A.shape[0]
    base = x @ weight.T + (bias if bias is not None else 0)
    update = x @ A.T @ B.T
    return {
        "the scaling α/r is missing: the update is (α / r) · B A x": base + update,
        "the update is scaled by α instead of α / r": base + alpha * update,
        "the update is scaled by r / α instead of α / r": base + (r / alpha) * update,
        "the base layer's output W₀x + b is missing: LoRA adds its update to the frozen layer": (alpha / r) * update,
        "the bias is missing: h = W₀x + b + (α/r) B A x": x @ weight.T + (alpha / r) * update,
        "the update was subtracted: h = W₀x + b + (α/r) B A x": base - (alpha / r) * update,
    }


def _lora_cases():
    g = case_generator(42)
    for r in hidden_sizes((2,), 1, 5, seed=43):
        k, d = 6, 5
        yield (f"x (3, {k}), W (5, 6) with a bias, r={r}, α=8", torch.randn(3, k, generator=g),
               torch.randn(d, k, generator=g), torch.randn(d, generator=g), torch.randn(r, k, generator=g),
               torch.randn(d, r, generator=g), 8.0)
    yield ("x (2, 4, 8) (a batch of sequences), W (8, 8), r=4, α=4 (α = r)", torch.randn(2, 4, 8, generator=g),
           torch.randn(8, 8, generator=g), torch.randn(8, generator=g), torch.randn(4, 8, generator=g),
           torch.randn(8, 4, generator=g), 4.0)
    yield ("x (4, 7), W (3, 7) without a bias (bias=None), r=3, α=1", torch.randn(4, 7, generator=g),
           torch.randn(3, 7, generator=g), None, torch.randn(3, 7, generator=g), torch.randn(3, 3, generator=g), 1.0)


@exercise_check("LoRA forward pass", reimplements=("coursekit.training.lora.LoRALinear",))
def check_lora_forward(student_fn: Callable) -> None:
    """``student_fn(x, weight, bias, A, B, alpha)`` → ``x Wᵀ + b + (α/r) x Aᵀ Bᵀ``."""
    require_function(student_fn, "lora_forward")
    for case, x, weight, bias, A, B, alpha in _lora_cases():
        copies = (x.clone(), weight.clone(), None if bias is None else bias.clone(), A.clone(), B.clone(), alpha)
        want = _lora_reference(*copies)
        mistakes = _lora_mistakes(*copies)
        got = run_student(student_fn, case, x.clone(), weight.clone(), None if bias is None else bias.clone(),
                          A.clone(), B.clone(), alpha)
        _float_tensor(got, tuple(want.shape), case, "h")
        expect_close(got, want, case=case, what="h", atol=1e-4, rtol=1e-4, mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# the log-probability of an answer
# ----------------------------------------------------------------------------------------------

def _answer_mask(keep: torch.Tensor, prompt_lengths: torch.Tensor) -> torch.Tensor:
    positions = torch.arange(keep.shape[1])[None, :]
    return keep & (positions >= prompt_lengths[:, None])


def _logprob_mistakes(logits, targets, keep, prompt_lengths) -> dict[str, Any]:
    token_logp = F.log_softmax(logits, -1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)   # (B, T)
    answer = _answer_mask(keep, prompt_lengths)
    early = _answer_mask(keep, (prompt_lengths - 1).clamp(min=0))
    late = _answer_mask(keep, prompt_lengths + 1)
    raw = logits.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    probs = F.softmax(logits, -1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return {
        "the prompt's tokens are summed in: only the answer's tokens (positions ≥ the prompt length) count, "
        "log π(y | x) is a probability of y given x": (token_logp * keep).sum(1),
        "you averaged over the answer's tokens: DPO (Eq. 7) uses the SUM of the token log-probabilities, "
        "log π(y|x) = Σ_t log π(y_t | x, y_<t)": (token_logp * answer).sum(1) / answer.sum(1),
        "the answer starts one position too early (the prompt's last token is counted)": (token_logp * early).sum(1),
        "the answer starts one position too late (its first token is missing)": (token_logp * late).sum(1),
        "padding is summed in: mask with keep as well as with the prompt length":
            (token_logp * (torch.arange(keep.shape[1])[None] >= prompt_lengths[:, None])).sum(1),
        "the logits were gathered without log_softmax: a logit is not a log-probability": (raw * answer).sum(1),
        "the probabilities were summed instead of their logarithms (softmax, not log_softmax)": (probs * answer).sum(1),
    }


def _logprob_cases():
    g = case_generator(44)
    for V in hidden_sizes((11,), 7, 30, count=1, seed=45):
        keep = torch.tensor([[True] * 7, [True] * 5 + [False] * 2, [True] * 6 + [False]])
        prompt = torch.tensor([3, 2, 4])
        targets = torch.randint(0, V, (3, 7), generator=g).masked_fill(~keep, -100)    # padding: an id outside V
        yield (f"3 rows of 7 positions, vocabulary {V}, prompts of 3, 2, 4 tokens, padding after two answers",
               torch.randn(3, 7, V, generator=g) * 2, targets, keep, prompt)
    keep = torch.ones(2, 4, dtype=torch.bool)
    yield ("2 rows of 4 positions, no padding, prompts of 1 and 3 tokens (a one-token answer)",
           torch.randn(2, 4, 5, generator=g), torch.randint(0, 5, (2, 4), generator=g), keep, torch.tensor([1, 3]))


@exercise_check("the log-probability of an answer", reimplements=("coursekit.training.preference.sequence_logprob",))
def check_answer_logprob(student_fn: Callable) -> None:
    """``student_fn(logits (B, T, V), targets (B, T), keep (B, T), prompt_lengths (B,))`` → ``(B,)``: Σ over the
    answer's tokens of log softmax(logits)[target]."""
    require_function(student_fn, "answer_logprob")
    for case, logits, targets, keep, prompt in _logprob_cases():
        want = sequence_logprob(logits.clone(), targets.clamp(min=0), _answer_mask(keep, prompt))
        mistakes = _logprob_mistakes(logits.clone(), targets.clone(), keep.clone(), prompt.clone())
        got = run_student(student_fn, case, logits.clone(), targets.clone(), keep.clone(), prompt.clone())
        _float_tensor(got, (logits.shape[0],), case, "one log-probability per row")
        expect_close(got, want, case=case, what="the log-probabilities", atol=1e-4, rtol=1e-4, mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# the DPO loss
# ----------------------------------------------------------------------------------------------

def _dpo_mistakes(pc, pr, rc, rr, beta) -> dict[str, Any]:
    margin = (pc - rc) - (pr - rr)
    return {
        "the reference model is left out: the implicit reward is β · log(π(y|x) / π_ref(y|x)), not β · log π(y|x)":
            -F.logsigmoid(beta * (pc - pr)).mean(),
        "the sign is reversed: the loss must fall when the CHOSEN answer gains probability (chosen − rejected)":
            -F.logsigmoid(-beta * margin).mean(),
        "β is missing inside the log-sigmoid: −log σ(β · margin)": -F.logsigmoid(margin).mean(),
        "β multiplies the loss instead of the margin: −log σ(β · margin), not β · (−log σ(margin))":
            (beta * -F.logsigmoid(margin)).mean(),
        "the losses of the pairs are summed: the paper's loss is the expectation (mean) over the pairs":
            -F.logsigmoid(beta * margin).sum(),
        "the log is missing: the loss is −log σ(β · margin), not −σ(β · margin)": -torch.sigmoid(beta * margin).mean(),
        "the reference's log-probabilities were added instead of subtracted: log π − log π_ref":
            -F.logsigmoid(beta * ((pc + rc) - (pr + rr))).mean(),
    }


def _dpo_cases():
    g = case_generator(46)
    for n in hidden_sizes((4,), 2, 9, seed=47):
        ref_c, ref_r = -20 - 10 * torch.rand(n, generator=g), -20 - 10 * torch.rand(n, generator=g)
        yield (f"{n} pairs, β = 0.1, log-probabilities around −25", ref_c + torch.randn(n, generator=g),
               ref_r + torch.randn(n, generator=g), ref_c, ref_r, 0.1)
    rc, rr = torch.tensor([-12.0, -30.0, -8.0]), torch.tensor([-15.0, -9.0, -20.0])
    yield ("3 pairs, β = 0.5, where the reference already prefers the rejected answer of the second pair",
           rc + torch.tensor([2.0, -1.0, 0.5]), rr + torch.tensor([-1.0, 3.0, 0.0]), rc, rr, 0.5)
    yield "1 pair, β = 2, policy = reference (the loss is log 2)", torch.tensor([-5.0]), torch.tensor([-7.0]), \
        torch.tensor([-5.0]), torch.tensor([-7.0]), 2.0


@exercise_check("the DPO loss", reimplements=("coursekit.training.preference.dpo_loss",))
def check_dpo_loss(student_fn: Callable) -> None:
    """``student_fn(policy_chosen, policy_rejected, reference_chosen, reference_rejected, beta)`` → the scalar
    DPO loss, each argument a ``(B,)`` tensor of summed answer log-probabilities."""
    require_function(student_fn, "dpo_loss")
    for case, pc, pr, rc, rr, beta in _dpo_cases():
        want = dpo_loss(pc.clone(), pr.clone(), rc.clone(), rr.clone(), beta).loss
        mistakes = _dpo_mistakes(pc.clone(), pr.clone(), rc.clone(), rr.clone(), beta)
        got = run_student(student_fn, case, pc.clone(), pr.clone(), rc.clone(), rr.clone(), beta)
        _float_tensor(got, (), case, "the loss (a scalar: a 0-d tensor)")
        expect_close(got, want, case=case, what="the loss", atol=1e-5, rtol=1e-4, mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# the Bradley–Terry loss of a reward model
# ----------------------------------------------------------------------------------------------

def _bt_mistakes(rw, rl) -> dict[str, Any]:
    margin = rw - rl
    return {
        "the sign is reversed: the loss must fall when the chosen answer's reward rises above the rejected one's":
            -F.logsigmoid(-margin).mean(),
        "the log is missing: −log σ(r_w − r_l), not −σ(r_w − r_l)": -torch.sigmoid(margin).mean(),
        "the losses are summed: take the mean over the pairs": -F.logsigmoid(margin).sum(),
        "each reward went through its own sigmoid: the model is σ(r_w − r_l), the sigmoid of the DIFFERENCE":
            -(F.logsigmoid(rw) - F.logsigmoid(rl)).mean(),
        "log(σ(x)) was computed in two steps and underflows for large negative margins (log 0 = −inf): use "
        "F.logsigmoid, which is exact there": -torch.log(torch.sigmoid(margin)).mean(),
    }


def _bt_cases():
    g = case_generator(48)
    for n in hidden_sizes((5,), 2, 12, seed=49):
        yield f"{n} pairs of rewards around 0", torch.randn(n, generator=g), torch.randn(n, generator=g)
    yield ("4 pairs with margins of ±200 (a confident reward model: the loss is about 0 or about 200)",
           torch.tensor([150.0, -120.0, 3.0, 0.0]), torch.tensor([-50.0, 80.0, 1.0, 0.0]))


@exercise_check("the Bradley–Terry loss", reimplements=("coursekit.training.preference.bradley_terry_loss",))
def check_bradley_terry_loss(student_fn: Callable) -> None:
    """``student_fn(reward_chosen (B,), reward_rejected (B,))`` → ``mean(−log σ(r_w − r_l))``, finite for any margin."""
    require_function(student_fn, "bradley_terry_loss")
    for case, rw, rl in _bt_cases():
        want = bradley_terry_loss(rw.clone(), rl.clone())
        mistakes = _bt_mistakes(rw.clone(), rl.clone())
        got = run_student(student_fn, case, rw.clone(), rl.clone())
        _float_tensor(got, (), case, "the loss (a scalar: a 0-d tensor)")
        if not torch.isfinite(got):
            raise CheckFailed(f"on {case}, the loss is {got.item()}: log(sigmoid(x)) underflows to log 0 for very "
                              "negative x. Use F.logsigmoid(x), which is computed stably",
                              hint="log(σ(x)) that underflows")
        expect_close(got, want, case=case, what="the loss", atol=1e-4, rtol=1e-4, mistakes=mistakes)
