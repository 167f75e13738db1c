"""Preference losses (coursekit.training.preference): the sequence log-probability sums the answer's tokens only,
the Bradley–Terry loss is −log σ(r_w − r_l), DPO is Bradley–Terry on the implicit rewards β log π/π_ref, and the
same numbers give Hugging Face ``trl``'s DPO loss on a tiny GPT-2."""

from __future__ import annotations

import math
import tempfile

import pytest
import torch
import torch.nn.functional as F
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
from trl import DPOConfig, DPOTrainer

from coursekit.training.preference import bradley_terry_loss, dpo_loss, sequence_logprob


def test_sequence_logprob_sums_the_answer_tokens_only():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 4, 5, generator=g)
    targets = torch.tensor([[1, 2, 3, 4], [0, 1, 99, 99]])                      # 99: padding beyond the vocabulary
    mask = torch.tensor([[0, 1, 1, 1], [0, 1, 0, 0]], dtype=torch.bool)         # the input's token is not counted
    logp = F.log_softmax(logits, -1)
    want = torch.stack([logp[0, 1, 2] + logp[0, 2, 3] + logp[0, 3, 4], logp[1, 1, 1]])
    assert torch.allclose(sequence_logprob(logits, targets, mask), want, atol=1e-6)


def test_bradley_terry_is_the_log_likelihood_of_the_preferences():
    r_w, r_l = torch.tensor([2.0, 0.0, -1.0]), torch.tensor([0.0, 0.0, 1.0])
    assert math.isclose(bradley_terry_loss(r_w, r_l).item(),
                        -sum(math.log(1 / (1 + math.exp(-(a - b)))) for a, b in zip([2.0, 0, -1], [0.0, 0, 1])) / 3,
                        rel_tol=1e-6)
    r_w.requires_grad_(True)
    bradley_terry_loss(r_w, r_l).backward()
    assert (r_w.grad < 0).all()                                                 # descent raises the chosen reward


def test_dpo_is_bradley_terry_on_the_implicit_rewards():
    g = torch.Generator().manual_seed(1)
    pc, pr, rc, rr = (torch.randn(6, generator=g) for _ in range(4))
    out = dpo_loss(pc, pr, rc, rr, beta=0.1)
    assert torch.allclose(out.chosen_rewards, 0.1 * (pc - rc)) and torch.allclose(out.rejected_rewards, 0.1 * (pr - rr))
    assert torch.allclose(out.loss, bradley_terry_loss(out.chosen_rewards, out.rejected_rewards))
    same = dpo_loss(rc, rr, rc, rr, beta=0.5)                                   # the policy is the reference: log 2
    assert math.isclose(same.loss.item(), math.log(2), rel_tol=1e-6) and same.reward_accuracy == 0.0
    better = dpo_loss(rc + 1.0, rr - 1.0, rc, rr, beta=0.5)                     # chosen up, rejected down
    assert better.loss.item() < math.log(2) and better.reward_accuracy == 1.0


def test_dpo_gradient_raises_the_chosen_and_lowers_the_rejected_and_ignores_the_reference():
    pc, pr = torch.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    rc, rr = torch.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    dpo_loss(pc, pr, rc, rr, beta=0.1).loss.backward()
    assert (pc.grad < 0).all() and (pr.grad > 0).all()
    assert rc.grad is None and rr.grad is None                                  # the reference is frozen


# ---------------------------------------------------------------------------------------------- trl parity

WORDS = ["<pad>", "<eos>", "<unk>"] + ("translate : you are tired vous êtes fatigué tu es fatiguée come here "
                                       "venez viens ici").split()


def _tokenizer() -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def _gpt2(seed: int) -> GPT2LMHeadModel:
    config = GPT2Config(vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=2, n_head=2, bos_token_id=1,
                        eos_token_id=1, pad_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(seed)
    return GPT2LMHeadModel(config)


@pytest.mark.filterwarnings("ignore")
def test_the_same_log_probabilities_give_trls_dpo_loss():
    policy, reference = _gpt2(0), _gpt2(1)
    pairs = Dataset.from_dict({"prompt": ["translate : you are tired", "translate : come here"],
                               "chosen": [" vous êtes fatigué", " venez ici"],
                               "rejected": [" tu es fatiguée", " viens ici"]})
    with tempfile.TemporaryDirectory() as folder:
        args = DPOConfig(output_dir=folder, per_device_train_batch_size=2, beta=0.1, report_to=[], use_cpu=True,
                         disable_tqdm=True)
        trainer = DPOTrainer(model=policy, ref_model=reference, args=args, train_dataset=pairs,
                             processing_class=_tokenizer())
        batch = next(iter(trainer.get_train_dataloader()))        # rows: the chosen answers, then the rejected
        theirs = trainer.compute_loss(policy, batch)

    ids, keep, answer = batch["input_ids"], batch["attention_mask"], batch["completion_mask"]
    with torch.no_grad():
        logp = {name: sequence_logprob(model(ids, attention_mask=keep).logits[:, :-1], ids[:, 1:],
                                       answer[:, 1:].bool())
                for name, model in (("policy", policy), ("reference", reference))}
    (pc, pr), (rc, rr) = logp["policy"].chunk(2), logp["reference"].chunk(2)
    ours = dpo_loss(pc, pr, rc, rr, beta=0.1).loss
    assert abs(ours.item() - theirs.item()) <= 1e-6, (ours.item(), theirs.item())
