"""LoRA (coursekit.training.lora) on the course's Transformer: it starts at the base model, trains only A and B,
merges into plain linear layers with the same outputs, stores and reloads its adapters, and gives the outputs of
Hugging Face ``peft`` for the same numbers."""

from __future__ import annotations

import copy

import peft
import pytest
import torch
from torch import nn

from coursekit.training.loop import count_parameters
from coursekit.training.lora import (
    LoRALinear,
    add_lora,
    load_lora_state_dict,
    lora_state_dict,
    merge_lora,
)
from coursekit.transformer.model import Transformer, TransformerConfig

TARGETS = ["q_proj", "k_proj", "v_proj", "self_attn.out_proj", "cross_attn.out_proj"]   # not the generator's out_proj


def _transformer() -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=20, tgt_vocab_size=17, d_model=16, n_heads=4, n_encoder_layers=2,
                               n_decoder_layers=2, d_ff=32, dropout=0.0, max_len=24)
    return Transformer(config).eval()


def _batch():
    g = torch.Generator().manual_seed(1)
    return torch.randint(4, 20, (3, 7), generator=g), torch.randint(4, 17, (3, 5), generator=g)


def _randomise_b(model: nn.Module) -> None:
    """Give every B a random value (after training it is not zero)."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("lora_B"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))


def test_the_adapted_model_starts_exactly_at_the_base_model():
    base = _transformer()
    adapted = copy.deepcopy(base)
    names = add_lora(adapted, TARGETS, r=4, alpha=8)
    assert len(names) == 2 * 4 + 2 * 8          # encoder self-attention; decoder self- and cross-attention
    src, tgt = _batch()
    with torch.no_grad():
        assert torch.equal(adapted(src, tgt), base(src, tgt))                   # B = 0: ΔW = 0


def test_only_a_and_b_train_and_their_count_is_r_times_d_plus_k():
    model = _transformer()
    total = sum(p.numel() for p in model.parameters())
    add_lora(model, TARGETS, r=4, alpha=8)
    trainable, total_after = count_parameters(model), count_parameters(model, trainable_only=False)
    assert trainable == 24 * 4 * (16 + 16) and total_after == total + trainable
    src, tgt = _batch()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    model.train()
    model(src, tgt).logsumexp(-1).mean().backward()
    optimizer.step()
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all(n.endswith(("lora_A", "lora_B")) for n in changed)
    assert any(n.endswith("lora_B") for n in changed)                           # B leaves zero at the first step


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
def test_merged_weights_give_the_same_outputs(dtype, tolerance):
    """W₀x + (α/r)·BAx = (W₀ + (α/r)·BA)x up to rounding: float64 shows it is exact, float32 what a run sees."""
    model = _transformer().to(dtype)
    add_lora(model, TARGETS, r=4, alpha=8)
    _randomise_b(model)
    src, tgt = _batch()
    with torch.no_grad():
        adapted = model(src, tgt)
        assert merge_lora(model) == 24
        merged = model(src, tgt)
    assert not any(isinstance(m, LoRALinear) for m in model.modules())
    assert (merged - adapted).abs().max().item() <= tolerance


def test_adapters_store_and_reload():
    model = _transformer()
    add_lora(model, TARGETS, r=2, alpha=4)
    _randomise_b(model)
    state = lora_state_dict(model)
    assert set(state) == {n for n, _ in model.named_parameters() if n.endswith(("lora_A", "lora_B"))}
    fresh = _transformer()
    add_lora(fresh, TARGETS, r=2, alpha=4)
    load_lora_state_dict(fresh, state)
    src, tgt = _batch()
    with torch.no_grad():
        assert torch.equal(fresh(src, tgt), model(src, tgt))
    nbytes = sum(t.numel() * t.element_size() for t in state.values())
    assert nbytes == 24 * 2 * (16 + 16) * 4                                     # float32: a few KiB, not a model


def test_the_same_numbers_give_the_outputs_of_peft():
    base = _transformer()
    ours, theirs = copy.deepcopy(base), copy.deepcopy(base)
    add_lora(ours, ["q_proj", "v_proj"], r=4, alpha=16)
    config = peft.LoraConfig(r=4, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "v_proj"])
    theirs = peft.inject_adapter_in_model(config, theirs)
    peft_params = dict(theirs.named_parameters())
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for name, p in ours.named_parameters():
            if name.endswith(("lora_A", "lora_B")):
                value = 0.1 * torch.randn(p.shape, generator=g)
                p.copy_(value)
                peft_params[f"{name.rsplit('.', 1)[0]}.{name.rsplit('.', 1)[1]}.default.weight"].copy_(value)
        src, tgt = _batch()
        err = (ours(src, tgt) - theirs(src, tgt)).abs().max().item()
    assert err <= 1e-6, err
    assert sum(p.numel() for n, p in theirs.named_parameters() if "lora_" in n) == count_parameters(ours)
