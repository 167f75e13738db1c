"""Score functions and the recurrent attention layer (notebook 06)."""

import math

import pytest
import torch
import torch.nn.functional as F

from coursekit.attention import (
    SCORE_FUNCTIONS,
    AdditiveScore,
    CosineScore,
    DotScore,
    GeneralScore,
    LocationScore,
    LuongOutput,
    RecurrentAttention,
    ScaledDotScore,
    local_window_mask,
    make_score,
    masked_softmax,
)

D = 6


def build(name, d_query=D, d_key=D):
    torch.manual_seed(0)
    return make_score(name, d_query, d_key, d_attn=5, max_len=9)


@pytest.mark.parametrize("name", SCORE_FUNCTIONS)
def test_shapes_masks_and_rows_sum_to_one(name):
    g = torch.Generator().manual_seed(1)
    B, T_q, T_k = 3, 4, 7
    q, k = torch.randn(B, T_q, D, generator=g), torch.randn(B, T_k, D, generator=g)
    score = build(name)
    assert score(q, k).shape == (B, T_q, T_k)
    lengths = torch.tensor([7, 3, 1])
    keep = torch.arange(T_k)[None] < lengths[:, None]                         # (B, T_k)
    attn = RecurrentAttention(score)
    context, weights = attn(q, k, mask=keep)
    assert context.shape == (B, T_q, D) and weights.shape == (B, T_q, T_k)
    assert torch.allclose(weights.sum(-1), torch.ones(B, T_q), atol=1e-6)
    assert (weights[~keep[:, None, :].expand_as(weights)] == 0).all()        # padding gets no weight
    assert torch.allclose(context, torch.einsum("bqk,bkd->bqd", weights, k), atol=1e-6)  # c = Σ a_k s_k
    # one decoder step: (B, d) query → (B, d) context, (B, T_k) weights
    c1, w1 = attn(q[:, 0], k, mask=keep)
    assert c1.shape == (B, D) and torch.allclose(w1, weights[:, 0], atol=1e-6)


@pytest.mark.parametrize("name", SCORE_FUNCTIONS)
def test_scores_agree_with_their_formula(name):
    g = torch.Generator().manual_seed(2)
    h, s = torch.randn(2, 3, D, generator=g), torch.randn(2, 5, D, generator=g)
    score = build(name)
    got = score(h, s)
    want = torch.empty(2, 3, 5)
    for b in range(2):
        for i in range(3):
            for j in range(5):
                hi, sj = h[b, i], s[b, j]
                if name == "dot":
                    want[b, i, j] = hi @ sj
                elif name == "scaled_dot":
                    want[b, i, j] = hi @ sj / math.sqrt(D)
                elif name == "general":
                    want[b, i, j] = hi @ score.W.weight @ sj                  # hᵀ W s
                elif name == "additive":                                       # vᵀ tanh(W [h; s] + b)
                    W = torch.cat([score.W_h.weight, score.W_s.weight], dim=1)
                    want[b, i, j] = score.v.weight[0] @ torch.tanh(W @ torch.cat([hi, sj]) + score.W_s.bias)
                elif name == "cosine":
                    want[b, i, j] = score.scale * F.cosine_similarity(hi, sj, dim=0)
                else:                                                           # location: (W_a h)_j
                    want[b, i, j] = (score.W_a.weight @ hi + score.W_a.bias)[j]
    assert torch.allclose(got, want, atol=1e-5)


def test_scaled_dot_attention_equals_pytorch():
    g = torch.Generator().manual_seed(3)
    q, k, v = torch.randn(2, 4, D, generator=g), torch.randn(2, 5, D, generator=g), torch.randn(2, 5, 3, generator=g)
    keep = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    context, _ = RecurrentAttention(ScaledDotScore())(q, k, v, mask=keep)
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, :])
    assert torch.allclose(context, want, atol=1e-5)


def test_additive_differs_from_dot_on_a_hand_made_case():
    # keys: one long vector pointing away from h, one short aligned with h
    h = torch.tensor([[[1.0, 0.0]]])                            # (1, 1, 2)
    s = torch.tensor([[[3.0, 0.0], [-1.0, 2.0]]])               # (1, 2, 2)
    dot = masked_softmax(DotScore()(h, s))
    add = AdditiveScore(2, 2, d_attn=2)
    with torch.no_grad():
        add.W_h.weight.copy_(torch.eye(2))
        add.W_s.weight.copy_(torch.eye(2))
        add.W_s.bias.zero_()
        add.v.weight.copy_(torch.tensor([[-1.0, 1.0]]))         # v rewards the 2nd coordinate, not the 1st
    additive = masked_softmax(add(h, s))
    # dot: 3 vs -1 → key 0;  additive: v·tanh(h+s) = -tanh(4)+tanh(0) ≈ -1.00 vs -tanh(0)+tanh(2) ≈ 0.96 → key 1
    assert dot.argmax(-1).item() == 0 and additive.argmax(-1).item() == 1
    assert torch.allclose(additive[0, 0, 1], torch.sigmoid(torch.tensor(math.tanh(2) + math.tanh(4))), atol=1e-5)


def test_cosine_ignores_length_and_dot_does_not():
    h = torch.tensor([[[1.0, 1.0]]])
    s = torch.tensor([[[10.0, 10.0], [1.0, 1.0]]])
    assert torch.allclose(CosineScore(learnable=False)(h, s)[0, 0, 0], CosineScore(learnable=False)(h, s)[0, 0, 1])
    assert DotScore()(h, s)[0, 0, 0] > DotScore()(h, s)[0, 0, 1]


def test_location_score_ignores_key_content():
    loc = LocationScore(D, max_len=6)
    q = torch.randn(2, 1, D)
    a, b = torch.randn(2, 4, D), torch.randn(2, 4, D)
    assert torch.equal(loc(q, a), loc(q, b))
    with pytest.raises(ValueError, match="at most 6"):
        loc(q, torch.randn(2, 7, D))


def test_fully_masked_rows_give_zeros_not_nan():
    w = masked_softmax(torch.randn(2, 3), torch.tensor([[True, False, True], [False, False, False]]))
    assert not torch.isnan(w).any()
    assert w[1].abs().sum() == 0 and torch.isclose(w[0].sum(), torch.tensor(1.0))


def test_general_and_additive_allow_different_widths():
    q, k = torch.randn(2, 1, 4), torch.randn(2, 5, 7)
    assert GeneralScore(4, 7)(q, k).shape == (2, 1, 5)
    assert AdditiveScore(4, 7, 3)(q, k).shape == (2, 1, 5)


def test_luong_output():
    out = LuongOutput(d_context=4, d_hidden=3, vocab_size=11)
    c, h = torch.randn(2, 4), torch.randn(2, 3)
    logits, h_tilde = out(c, h)
    assert logits.shape == (2, 11) and h_tilde.shape == (2, 3)
    want = torch.tanh(torch.cat([c, h], -1) @ out.W_c.weight.T)
    assert torch.allclose(h_tilde, want, atol=1e-6)
    assert torch.allclose(logits, out.W_s(want), atol=1e-6)


def test_local_window_mask():
    m = local_window_mask(torch.tensor([0, 3]), T_k=6, half_width=1)
    assert m.int().tolist() == [[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 0]]
    m2 = local_window_mask(torch.tensor([[0, 5]]), T_k=6, half_width=0)
    assert m2.shape == (1, 2, 6) and m2.sum().item() == 2
    with pytest.raises(ValueError, match="half_width"):
        local_window_mask(torch.tensor([0]), 4, -1)


def test_bad_inputs():
    with pytest.raises(ValueError, match="unknown score"):
        make_score("bilinear-ish", D, D)
    with pytest.raises(ValueError, match="d_query == d_key"):
        make_score("dot", 4, 5)
    with pytest.raises(ValueError, match="max_len"):
        make_score("location", D, D)
    with pytest.raises(ValueError, match="same width"):
        DotScore()(torch.randn(1, 1, 3), torch.randn(1, 4, 5))
    with pytest.raises(TypeError, match="floating"):
        DotScore()(torch.ones(1, 1, 3, dtype=torch.long), torch.randn(1, 4, 3))
    with pytest.raises(TypeError, match="bool"):
        masked_softmax(torch.randn(2, 3), torch.ones(2, 3))
    with pytest.raises(ValueError, match="broadcast"):
        masked_softmax(torch.randn(2, 3), torch.ones(2, 4, dtype=torch.bool))
    attn = RecurrentAttention("dot", D, D)
    with pytest.raises(ValueError, match=r"\(B, T_k\) mask"):
        attn(torch.randn(2, D), torch.randn(2, 5, D), mask=torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="dimensions"):
        attn(torch.randn(D), torch.randn(2, 5, D))
    with pytest.raises(ValueError, match="GeneralScore expects"):
        GeneralScore(4, 7)(torch.randn(2, 1, 7), torch.randn(2, 5, 4))
    with pytest.raises(TypeError, match="score module"):
        RecurrentAttention(42)
