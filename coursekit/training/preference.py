"""Learning from preferences: the Bradley–Terry reward model and DPO (Rafailov et al. 2023).

Data are pairs of answers to the same input ``x``: a preferred one ``y_w`` (chosen) and a dispreferred one ``y_l``
(rejected). The **Bradley–Terry** model says a person prefers ``y_w`` with probability

    p(y_w ≻ y_l | x) = σ(r(x, y_w) − r(x, y_l))                                              (DPO, Eq. 1)

for some reward ``r``; a reward model is fit by minimising ``−log σ(r_w − r_l)`` (Eq. 2,
:func:`bradley_terry_loss`). RLHF then maximises ``E[r(x, y)] − β · KL(π(·|x) ‖ π_ref(·|x))`` (Eq. 3): as much
reward as possible without drifting far from the reference model ``π_ref`` (the supervised one). That objective's
optimum is ``π*(y|x) = π_ref(y|x) · exp(r(x, y) / β) / Z(x)`` (Eq. 4), so a reward can be read back from a policy,
``r(x, y) = β log π(y|x) / π_ref(y|x) + β log Z(x)`` (Eq. 5). Put into Bradley–Terry, ``Z(x)`` cancels, and the
policy is trained on the preference pairs directly, with no reward model and no sampling (Eq. 7,
:func:`dpo_loss`):

    L_DPO = −log σ( β · [ log π(y_w|x) / π_ref(y_w|x) − log π(y_l|x) / π_ref(y_l|x) ] ).

``log π(y|x)`` is the log-probability of the whole answer: the **sum** over the answer's tokens, not over the
input's (:func:`sequence_logprob`). The same numbers give Hugging Face ``trl``'s DPO loss
(``tests/training/test_preference.py`` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from coursekit.validation import check_positive_float, check_tensor

__all__ = ["DPOResult", "bradley_terry_loss", "dpo_loss", "sequence_logprob"]


def sequence_logprob(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``log π(y|x) = Σ_t mask_t · log p(targets_t | …)`` per row: ``logits (B, T, V)`` predict ``targets (B, T)``
    (already shifted: ``logits[:, t]`` is the distribution of ``targets[:, t]``); ``mask (B, T)`` is True on the
    answer's tokens only (not the input's, not padding). Returns ``(B,)``."""
    check_tensor(logits, "logits", ndim=3, floating=True)
    check_tensor(targets, "targets", ndim=2)
    check_tensor(mask, "mask", ndim=2)
    if targets.shape != logits.shape[:2] or mask.shape != targets.shape:
        raise ValueError(f"logits (B, T, V), targets (B, T) and mask (B, T) must agree, got {tuple(logits.shape)}, "
                         f"{tuple(targets.shape)} and {tuple(mask.shape)}")
    if targets.is_floating_point() or targets.dtype == torch.bool:
        raise TypeError(f"targets must hold token ids (integers), got {targets.dtype}")
    keep = mask.bool()
    if not keep.any(dim=1).all():
        raise ValueError("every row needs at least one answer token in mask: an empty answer has no log-probability")
    safe = targets.masked_fill(~keep, 0)                                      # padding ids may lie outside V
    token_logp = F.log_softmax(logits.float(), dim=-1).gather(-1, safe.unsqueeze(-1)).squeeze(-1)   # (B, T)
    return (token_logp * keep).sum(dim=1)                                      # (B,): summed, not averaged


def _check_scores(named: dict[str, torch.Tensor]) -> torch.Size:
    shapes = set()
    for name, t in named.items():
        check_tensor(t, name, ndim=1, floating=True)
        shapes.add(t.shape)
    if len(shapes) != 1:
        raise ValueError(f"{', '.join(named)} must be (B,) tensors of one size, got "
                         f"{[tuple(t.shape) for t in named.values()]}")
    return shapes.pop()


def bradley_terry_loss(reward_chosen: torch.Tensor, reward_rejected: torch.Tensor) -> torch.Tensor:
    """The reward model's loss, ``mean(−log σ(r_w − r_l))`` over the pairs (DPO paper, Eq. 2): scalar."""
    _check_scores({"reward_chosen": reward_chosen, "reward_rejected": reward_rejected})
    return -F.logsigmoid(reward_chosen - reward_rejected).mean()


@dataclass
class DPOResult:
    """What one DPO batch gives: the loss, and the *implicit rewards* ``β log π/π_ref`` of each answer."""

    loss: torch.Tensor                # scalar: mean over the pairs
    chosen_rewards: torch.Tensor      # (B,) β · (log π(y_w|x) − log π_ref(y_w|x))
    rejected_rewards: torch.Tensor    # (B,)

    @property
    def reward_accuracy(self) -> float:
        """The share of pairs whose chosen answer gets the higher implicit reward."""
        return (self.chosen_rewards > self.rejected_rewards).float().mean().item()


def dpo_loss(policy_chosen: torch.Tensor, policy_rejected: torch.Tensor, reference_chosen: torch.Tensor,
             reference_rejected: torch.Tensor, beta: float) -> DPOResult:
    """The DPO loss (Rafailov et al. 2023, Eq. 7) of a batch of pairs from the sequence log-probabilities
    (:func:`sequence_logprob`, each ``(B,)``) of the chosen and rejected answers under the policy and the frozen
    reference model; ``beta`` > 0 sets how far the policy may move from the reference (small β: far)."""
    _check_scores({"policy_chosen": policy_chosen, "policy_rejected": policy_rejected,
                   "reference_chosen": reference_chosen, "reference_rejected": reference_rejected})
    check_positive_float(beta, "beta")
    chosen = beta * (policy_chosen - reference_chosen.detach())          # implicit rewards, Eq. 5 without β log Z
    rejected = beta * (policy_rejected - reference_rejected.detach())
    loss = -F.logsigmoid(chosen - rejected).mean()
    return DPOResult(loss, chosen.detach(), rejected.detach())
