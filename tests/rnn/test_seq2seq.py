"""Recurrent encoder–decoder models with and without attention."""

import pytest
import torch
from torch import nn

from coursekit.attention import SCORE_FUNCTIONS
from coursekit.decoding import greedy_search
from coursekit.rnn.seq2seq import Seq2Seq, Seq2SeqConfig, teacher_forcing_schedule
from coursekit.translation import TranslationBatch

V_SRC, V_TGT, PAD, BOS, EOS = 13, 11, 0, 2, 3

CONFIGS = [dict(cell="gru"), dict(cell="lstm", num_layers=2)] + [
    dict(attention=name, style=style, max_src_len=8)
    for name in SCORE_FUNCTIONS for style in ("luong", "bahdanau")
] + [dict(attention="general", style="luong", input_feeding=True, cell="lstm")]


def model_for(**kw):
    torch.manual_seed(0)
    cfg = Seq2SeqConfig(V_SRC, V_TGT, d_emb=8, d_hidden=12, **kw)
    return Seq2Seq(cfg).eval()


def toy_batch(B=3, S=6, T=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([S, S - 2, 2][:B])
    src_mask = torch.arange(S)[None] < lengths[:, None]
    src = torch.randint(4, V_SRC, (B, S), generator=g).masked_fill(~src_mask, PAD)
    tgt_out = torch.randint(4, V_TGT, (B, T), generator=g)
    tgt_in = torch.cat([torch.full((B, 1), BOS), tgt_out[:, :-1]], dim=1)
    tgt_mask = torch.ones(B, T, dtype=torch.bool)
    return TranslationBatch(src, src_mask, lengths, tgt_in, tgt_out, tgt_mask, torch.arange(B))


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_shapes_and_parallel_equals_stepwise(kw):
    model = model_for(**kw)
    b = toy_batch()
    logits, weights = model(b.src, b.src_mask, b.tgt_in)
    assert logits.shape == (3, 5, V_TGT)
    if kw.get("attention"):
        assert weights.shape == (3, 5, 6)
        assert torch.allclose(weights.sum(-1), torch.ones(3, 5), atol=1e-5)
        assert (weights[:, :, 4:][~b.src_mask[:, None, 4:].expand(3, 5, 2)] == 0).all()  # no weight on padding
    else:
        assert weights is None
    stepwise, w2 = model(b.src, b.src_mask, b.tgt_in, stepwise=True)
    assert torch.allclose(logits, stepwise, atol=1e-5)
    if weights is not None:
        assert torch.allclose(weights, w2, atol=1e-5)


def test_encoder_final_state_ignores_padding_and_matches_nn_gru():
    model = model_for(cell="gru")
    b = toy_batch()
    memory, final = model.encoder(b.src, b.src_mask)
    for i, n in enumerate(b.src_lengths.tolist()):
        alone = model.encoder.rnn(model.encoder.embedding(b.src[i:i + 1, :n]))   # plain nn.GRU, no padding
        assert torch.allclose(memory[i, :n], alone[0][0], atol=1e-6)
        assert torch.allclose(final[i, -1], alone[1][0, 0], atol=1e-6)          # final state = h after the last token
        assert (memory[i, n:] == 0).all()


def test_decoder_starts_from_the_encoder_state():
    model = model_for(cell="gru")
    b = toy_batch()
    state = model.encode(b.src, b.src_mask)
    _, final = model.encoder(b.src, b.src_mask)
    assert torch.equal(state["hidden"], final)
    # a different source changes the first prediction only through that state
    logits_a, _ = model(b.src, b.src_mask, b.tgt_in)
    logits_b, _ = model(b.src.roll(1, dims=0), b.src_mask.roll(1, dims=0), b.tgt_in)
    assert not torch.allclose(logits_a[:, 0], logits_b[:, 0])


def test_free_running_feeds_back_the_arg_max():
    model = model_for(attention="additive", style="bahdanau")
    b = toy_batch()
    logits, _ = model(b.src, b.src_mask, b.tgt_in, teacher_forcing=0.0)
    fed = logits.argmax(-1)                                                     # what the decoder read next
    # greedy search reads the same tokens as long as no <eos> was produced
    res = model.translate(b.src, b.src_mask, max_len=5)
    for i in range(3):
        produced = fed[i].tolist()
        cut = produced.index(EOS) if EOS in produced else len(produced)
        assert res.tokens[i][:cut] == produced[:cut]
    # and differs from teacher forcing from step 2 on
    tf, _ = model(b.src, b.src_mask, b.tgt_in, teacher_forcing=1.0)
    assert torch.allclose(tf[:, 0], logits[:, 0], atol=1e-6)


def test_scheduled_sampling_is_seeded_and_between_the_extremes():
    model = model_for(attention="dot")
    b = toy_batch()
    a, _ = model(b.src, b.src_mask, b.tgt_in, teacher_forcing=0.5, generator=torch.Generator().manual_seed(1))
    a2, _ = model(b.src, b.src_mask, b.tgt_in, teacher_forcing=0.5, generator=torch.Generator().manual_seed(1))
    assert torch.equal(a, a2)
    tf, _ = model(b.src, b.src_mask, b.tgt_in, teacher_forcing=1.0)
    fr, _ = model(b.src, b.src_mask, b.tgt_in, teacher_forcing=0.0)
    assert not torch.allclose(a, tf) or not torch.allclose(a, fr)


def test_teacher_forcing_schedule():
    for kind in ("linear", "exponential", "inverse_sigmoid"):
        values = [teacher_forcing_schedule(s, 100, kind) for s in range(0, 101, 10)]
        assert values == sorted(values, reverse=True)
        assert values[0] > 0.99 - (kind == "inverse_sigmoid") * 0.01 and values[-1] < 0.05
    assert teacher_forcing_schedule(50, 100, "inverse_sigmoid") == pytest.approx(0.5)
    assert teacher_forcing_schedule(100, 100, "linear", floor=0.25) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="kind"):
        teacher_forcing_schedule(1, 10, "cosine")


def test_loss_ignores_padding():
    model = model_for(attention="general")
    b = toy_batch()
    b.tgt_out[0, 3:] = PAD
    b.tgt_in[0, 4:] = PAD
    loss = model.loss(b)
    logits, _ = model(b.src, b.src_mask, b.tgt_in)
    keep = b.tgt_out != PAD
    want = nn.functional.cross_entropy(logits[keep], b.tgt_out[keep])
    assert torch.allclose(loss, want, atol=1e-6)


def test_beam_of_one_is_greedy_and_beam_is_batch_consistent():
    model = model_for(attention="additive", style="bahdanau", cell="lstm")
    b = toy_batch()
    greedy = model.translate(b.src, b.src_mask, max_len=6)
    beam1 = model.translate(b.src, b.src_mask, max_len=6, beam_size=1, length_penalty=0.5)
    assert greedy.tokens == beam1.tokens
    beam = model.translate(b.src, b.src_mask, max_len=6, beam_size=3)
    for i in range(3):
        alone = model.translate(b.src[i:i + 1, : b.src_lengths[i]], b.src_mask[i:i + 1, : b.src_lengths[i]],
                                max_len=6, beam_size=3)
        assert alone.tokens[0] == beam.tokens[i]
        assert beam.scores[i] >= greedy.scores[i] - 1e-5 or not greedy.finished[i]


def test_learns_to_reverse_short_sequences():
    """Sanity: a small attention model learns a toy task; beam/greedy decode it."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    cfg = Seq2SeqConfig(10, 10, d_emb=16, d_hidden=32, attention="dot")
    model = Seq2Seq(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def batch(n=64):
        x = torch.randint(4, 10, (n, 4), generator=g)
        src = torch.cat([x, torch.full((n, 1), EOS)], 1)
        y = x.flip(1)
        tgt_in = torch.cat([torch.full((n, 1), BOS), y], 1)
        tgt_out = torch.cat([y, torch.full((n, 1), EOS)], 1)
        ones = torch.ones(n, 5, dtype=torch.bool)
        return TranslationBatch(src, ones, torch.full((n,), 5), tgt_in, tgt_out, ones, torch.arange(n))

    for _ in range(150):
        loss = model.loss(batch())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.2
    test = batch(32)
    out = model.translate(test.src, test.src_mask, max_len=6, beam_size=2)
    acc = sum(o == t[:4].tolist() for o, t in zip(out.tokens, test.tgt_out)) / 32
    assert acc > 0.8


def test_translate_uses_coursekit_decoding():
    model = model_for(attention="scaled_dot")
    b = toy_batch()
    state = model.encode(b.src, b.src_mask)

    def step(prefix, st):
        logits, st, _ = model.decoder.step(prefix[:, -1], st)
        return logits, st

    direct = greedy_search(step, state, batch_size=3, bos_id=BOS, eos_id=EOS, max_len=4)
    assert model.translate(b.src, b.src_mask, max_len=4).tokens == direct.tokens


def test_bad_inputs():
    with pytest.raises(ValueError, match="cell"):
        Seq2SeqConfig(5, 5, cell="rnn")
    with pytest.raises(ValueError, match="attention"):
        Seq2SeqConfig(5, 5, attention="multiplicative")
    with pytest.raises(ValueError, match="max_src_len"):
        Seq2SeqConfig(5, 5, attention="location")
    with pytest.raises(ValueError, match="style"):
        Seq2SeqConfig(5, 5, attention="dot", style="vaswani")
    with pytest.raises(TypeError, match="Seq2SeqConfig"):
        Seq2Seq({"src_vocab_size": 5})
    model = model_for(attention="dot")
    b = toy_batch()
    with pytest.raises(ValueError, match=r"ids in \[0, 13\)"):
        model(b.src + 20, b.src_mask, b.tgt_in)
    with pytest.raises(ValueError, match="shape of src"):
        model(b.src, b.src_mask[:, :3], b.tgt_in)
    with pytest.raises(TypeError, match="bool"):
        model(b.src, b.src_mask.long(), b.tgt_in)
    with pytest.raises(ValueError, match="teacher_forcing"):
        model(b.src, b.src_mask, b.tgt_in, teacher_forcing=1.5)
    with pytest.raises(ValueError, match="sentences"):
        model(b.src, b.src_mask, b.tgt_in[:2])
    empty = b.src_mask.clone()
    empty[1] = False
    with pytest.raises(ValueError, match="at least one real token"):
        model(b.src, empty, b.tgt_in)
