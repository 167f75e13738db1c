"""Notebook 14's post-training pieces (coursekit.translation.register, coursekit.translation.posttrain) on a tiny
Transformer over the benchmark's BPE: the data, the log-probabilities DPO needs, the KL, the reward model, sampling."""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import subprocess
import sys

import pytest
import torch

from coursekit.data import model_dir
from coursekit.training.loop import count_parameters
from coursekit.training.lora import add_lora
from coursekit.transformer.model import Transformer, TransformerConfig
from coursekit.translation import posttrain as pt
from coursekit.translation.benchmark import load_benchmark, load_tokenizer
from coursekit.translation.recipes import RECIPES, build_model
from coursekit.translation.register import REGISTERS, addresses_you, register_of, tag_source, you_pairs

PAIRS = [
    (["you", "lost", "."], ["vous", "avez", "perdu", "."]),
    (["you", "lost", "."], ["tu", "as", "perdu", "."]),
    (["you", "lost", "."], ["vous", "avez", "échoué", "."]),      # a second vous: the first one is the preference
    (["you're", "late", "."], ["tu", "es", "en", "retard", "."]),
    (["i", "run", "."], ["je", "cours", "."]),                     # no "you": left out
    (["you", "and", "you", "."], ["toi", "et", "vous", "."]),        # both registers: left out
]


@functools.cache
def tok():
    return load_tokenizer()


@functools.cache
def tiny(seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    n = len(tok().itos)
    return Transformer(TransformerConfig(n, n, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                         d_ff=32, dropout=0.0, max_len=64, share_embeddings=True)).eval()


def batch(pairs):
    data = pt.pairs_data(pairs, tok())
    return data.make_batch(list(range(len(pairs))))


def test_addresses_you_reads_tokens_and_contractions():
    assert addresses_you(["you're", "late", "."]) and addresses_you(["is", "this", "yours", "?"])
    assert not addresses_you(["young", "people", "."]) and not addresses_you(["bayou", "."])


def test_tag_source_puts_an_instruction_in_front():
    assert tag_source(["you", "lost", "."], "formal") == ["formal", ":", "you", "lost", "."]
    with pytest.raises(ValueError, match=r"register must be one of \['formal', 'informal'\]"):
        tag_source(["you"], "polite")


def test_you_pairs_sorts_by_register_and_pairs_the_first_of_each():
    you = you_pairs(PAIRS)
    assert [f[0] for _, f in you.vous] == ["vous", "vous"] and [f[0] for _, f in you.tu] == ["tu", "tu"]
    assert you.preferences == [(["you", "lost", "."], ["vous", "avez", "perdu", "."], ["tu", "as", "perdu", "."])]
    assert you.summary() == {"vous_pairs": 2, "tu_pairs": 2, "preference_pairs": 1, "english_sentences": 2}


def test_answer_logprob_is_the_summed_cross_entropy():
    b = batch(PAIRS[:4])
    model = tiny()
    logp = pt.answer_logprob(model, b)
    n_tokens = b.tgt_mask.sum()
    assert logp.shape == (4,)
    assert torch.allclose(-logp.sum() / n_tokens, model.loss(b), atol=1e-5)       # the loss is its mean per token
    one = pt.answer_logprob(model, batch(PAIRS[3:4]))                                # padding changes nothing
    assert torch.allclose(one, logp[3:], atol=1e-5)


def test_dpo_batch_starts_at_log_2_and_needs_aligned_pairs():
    model = tiny()
    chosen, rejected = batch([PAIRS[0]]), batch([PAIRS[1]])
    result = pt.dpo_batch(model, copy.deepcopy(model), chosen, rejected, beta=0.1)
    assert math.isclose(result.loss.item(), math.log(2), rel_tol=1e-6)               # policy = reference
    assert result.chosen_rewards.abs().max() < 1e-6
    with pytest.raises(ValueError, match="same English sentences"):
        pt.dpo_batch(model, model, chosen, batch([PAIRS[3]]), beta=0.1)


def test_dpo_batch_trains_only_the_policy():
    policy, reference = copy.deepcopy(tiny()), tiny()
    add_lora(policy, pt.LORA_TARGETS, r=2, alpha=4)
    with torch.no_grad():
        for name, p in policy.named_parameters():
            if name.endswith("lora_B"):
                p.normal_()
    result = pt.dpo_batch(policy, reference, batch([PAIRS[0]]), batch([PAIRS[1]]), beta=0.5)
    result.loss.backward()
    assert all(p.grad is None for p in reference.parameters())
    assert all((p.grad is not None) == p.requires_grad for p in policy.parameters())


def test_token_kl_is_zero_for_the_same_model_and_grows_when_it_moves():
    b = batch(PAIRS[:4])
    model = tiny()
    assert pt.token_kl(model, copy.deepcopy(model), b) == pytest.approx(0.0, abs=1e-6)
    moved = copy.deepcopy(model)
    with torch.no_grad():
        moved.out_proj.weight.add_(0.5 * torch.randn_like(moved.out_proj.weight))
    assert pt.token_kl(moved, model, b) > 0.01


def test_reward_model_reads_the_last_token_and_trains_only_its_head():
    reward = pt.RewardModel(tiny())
    b = batch(PAIRS[:4])
    assert torch.equal(reward(b), torch.zeros(4))                                   # the head starts at zero
    torch.nn.init.normal_(reward.head.weight)
    assert torch.allclose(reward(batch(PAIRS[3:4])), reward(b)[3:], atol=1e-5)      # padding changes nothing
    assert count_parameters(reward) == 16 + 1
    hidden = reward.body(b.src, b.tgt_in, b.src_mask, b.tgt_mask)
    assert torch.equal(reward.features(b)[1], hidden[1, b.tgt_mask[1].sum() - 1])    # the last real token
    assert tiny().out_proj.out_features == len(tok().itos)                          # the base is untouched


def test_implicit_reward_accuracy_of_a_policy_that_prefers_the_chosen():
    reference = tiny()
    policy = copy.deepcopy(reference)
    prefs = [(e, c, r) for e, c, r in you_pairs(PAIRS).preferences]
    start = pt.implicit_reward_accuracy(policy, reference, prefs, tok(), beta=0.1)
    assert start == {"accuracy": 0.0, "margin": 0.0, "n": 1}                        # ties are not right
    opt = torch.optim.SGD(policy.parameters(), lr=0.5)
    for _ in range(5):
        loss = pt.dpo_batch(policy, reference, batch([PAIRS[0]]), batch([PAIRS[1]]), beta=0.1).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = pt.implicit_reward_accuracy(policy, reference, prefs, tok(), beta=0.1)
    assert after["accuracy"] == 1.0 and after["margin"] > 0


def test_sample_translations_gives_n_per_source_reproducibly():
    sources = [["you", "lost", "."], ["i", "run", "."]]
    first = pt.sample_translations(tiny(), tok(), sources, 3, generator=torch.Generator().manual_seed(1))
    again = pt.sample_translations(tiny(), tok(), sources, 3, generator=torch.Generator().manual_seed(1))
    assert len(first) == 2 and all(len(row) == 3 for row in first) and first == again


def test_translate_tokens_puts_the_tag_in_front():
    model = tiny()
    tagged = pt.translate_tokens(model, tok(), [tag_source(["you", "lost", "."], "formal")])
    assert pt.translate_tokens(model, tok(), [["you", "lost", "."]], register="formal") == tagged


@pytest.mark.parametrize("texts, rate", [
    (["je je suis ."], 1.0),
    (["nous nous levons ."], 0.0),                  # a reflexive verb: not a repetition
    (["vous vous vous ."], 1.0),                    # three in a row is
    (["il part .", "il il part ."], 0.5),
])
def test_repetition_rate(texts, rate):
    assert pt.repetition_rate(texts) == rate


def test_lora_recipes_train_under_two_percent_of_the_committed_transformer():
    committed = build_model(RECIPES["transformer"], len(tok().itos))
    total = count_parameters(committed)
    for name, recipe in pt.RECIPES.items():
        if recipe.lora_r:
            model = copy.deepcopy(committed)
            add_lora(model, pt.LORA_TARGETS, r=recipe.lora_r, alpha=recipe.lora_alpha)
            assert count_parameters(model) / total < 0.02, name


# ---------------------------------------------------------------- the committed runs (data/translation/register)

REGISTER_DIR = model_dir("translation") / pt.ADAPTER_DIR
REPORTS = {name: json.loads((REGISTER_DIR / f"{name}.json").read_text()) for name in pt.RECIPES
           if (REGISTER_DIR / f"{name}.json").exists()}
committed = pytest.mark.skipif(set(REPORTS) != set(pt.RECIPES), reason="the post-training runs are not all committed")


@committed
def test_committed_runs_meet_the_targets_they_reached():
    """What notebook 14 asserts from the committed reports: issue 51's targets that were met, and for DPO the
    one that was not on the whole test split (within 1 BLEU of the base) but is on its pairs without 'you'."""
    base_bleu = 43.33                                                  # data/translation/transformer/report.json
    base_bleu_not_you = 43.87                                          # notebook 14's stored class run, §1
    sft, lora = REPORTS["sft"]["test"]["untagged"]["vous_rate"], REPORTS["sft_lora"]["test"]["untagged"]["vous_rate"]
    assert abs(sft - lora) <= 0.03 and REPORTS["sft_lora"]["trainable_parameters"] / REPORTS["sft_lora"][
        "base_parameters"] <= 0.02
    tagged = REPORTS["tagged"]["test"]
    assert tagged["formal"]["vous_rate"] >= 0.95 and 1 - tagged["informal"]["vous_rate"] >= 0.90
    sweep = [REPORTS[n]["test"] for n in ("dpo_beta_0.01", "dpo", "dpo_beta_1")]
    assert sweep[0]["kl_per_token"] > sweep[1]["kl_per_token"] > sweep[2]["kl_per_token"]   # small β: far
    assert sweep[0]["bleu"] < sweep[1]["bleu"] < sweep[2]["bleu"] < base_bleu
    assert min(t["untagged"]["vous_rate"] for t in sweep) >= 0.95
    beta_1 = [REPORTS[n]["test"] for n in ("dpo_beta_1_100", "dpo_beta_1_150", "dpo_beta_1")]   # stopped earlier
    assert beta_1[0]["untagged"]["vous_rate"] < beta_1[1]["untagged"]["vous_rate"] < 0.95 <= beta_1[2]["untagged"][
        "vous_rate"]
    assert all(base_bleu - t["bleu"] > 1 for t in beta_1)                      # the whole split: the target missed
    assert all(base_bleu_not_you - t["bleu_not_you"] < 1 for t in beta_1)     # no 'you': within a point


@committed
def test_committed_register_adapter_reloads_and_reproduces_its_translations():
    data = load_benchmark(n_train=1000, n_test=200, n_test_long=50, n_valid=0, n_valid_long=0)
    model, report = pt.load_register_model(data)
    sources = pt.you_test_sources(data)[:20]
    for register in REGISTERS:
        assert pt.translate_tokens(model, data.src_vocab, sources, register=register) == \
            report["test"]["examples"][register][:20]
    assert report["adapter_bytes"] < 120_000 and report["trainable_parameters"] == 73_728


@committed
def test_cli_translates_and_evaluates_in_a_register():
    env = {**os.environ}
    run = subprocess.run([sys.executable, "-m", "coursekit.translation", "translate", "transformer", "--register",
                          "formal"], input="Could you help me?\nAre you tired?\n", capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    formal = run.stdout.splitlines()
    informal = subprocess.run([sys.executable, "-m", "coursekit.translation", "translate", "transformer",
                               "--register", "informal"], input="Could you help me?\nAre you tired?\n",
                              capture_output=True, text=True, env=env, timeout=300).stdout.splitlines()
    assert [register_of(f) for f in formal] == ["vous", "vous"], formal
    assert [register_of(f) for f in informal] == ["tu", "tu"], informal
    out = subprocess.run([sys.executable, "-m", "coursekit.translation", "evaluate", "transformer", "--register",
                          "informal", "--json", "--limit", "40"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert figures["register"] == "informal" and figures["n_test"] == 40 and figures["vous_rate"] < 0.2
    refused = subprocess.run([sys.executable, "-m", "coursekit.translation", "translate", "seq2seq", "--register",
                              "formal"], input="Hello.\n", capture_output=True, text=True, env=env, timeout=300)
    assert refused.returncode == 2 and "--register needs the transformer model" in refused.stderr
