"""Tests of coursekit.bart.model: parity with Hugging Face BART (random tiny checkpoints), heads, decoding, errors."""

from functools import partial

import pytest
import torch

transformers = pytest.importorskip("transformers")

from coursekit.bart.batches import denoising_batch, denoising_loss, shift_tokens_right  # noqa: E402
from coursekit.bart.heads import BartForSequenceClassification  # noqa: E402
from coursekit.bart.model import Bart, BartConfig  # noqa: E402
from coursekit.bart.noising import text_infilling  # noqa: E402

PAD, BOS, EOS = 1, 0, 2
V = 61


def hf_config(**overrides):
    kw = dict(vocab_size=V, d_model=16, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
              decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=24, max_position_embeddings=40,
              dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, forced_eos_token_id=None,
              forced_bos_token_id=None, num_labels=3)
    kw.update(overrides)
    return transformers.BartConfig(**kw)


def _randomise(model):
    """Weights of order one (the default init, std 0.02, gives near-constant logits), non-trivial LayerNorms
    and logit bias, so that a forgotten or swapped piece shows."""
    torch.manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name or "layernorm" in name:
                p.normal_(1.0 if name.endswith("weight") else 0.0, 0.3)
            elif p.dim() == 2:
                p.normal_(0.0, 0.3)
            else:
                p.normal_(0.0, 0.1)
        if hasattr(model, "final_logits_bias"):
            model.final_logits_bias.normal_(0.0, 0.3)
    return model.eval()


def hf_generation_model(**overrides):
    torch.manual_seed(0)
    return _randomise(transformers.BartForConditionalGeneration(hf_config(**overrides)))


def batch():
    g = torch.Generator().manual_seed(0)
    src = torch.randint(3, V, (3, 11), generator=g)
    src[:, 0] = BOS
    src[:, -1] = EOS
    src[2, 7], src[2, 8:] = EOS, PAD                      # a padded row
    tgt = torch.randint(3, V, (3, 8), generator=g)
    tgt[:, 0] = EOS                                       # decoder_start
    return src, src != PAD, tgt


@pytest.mark.parametrize("overrides", [{}, {"scale_embedding": True}, {"activation_function": "relu"}])
def test_conditional_generation_logits_equal_transformers(overrides, tmp_path):
    ref = hf_generation_model(**overrides)
    src, keep, tgt = batch()
    with torch.no_grad():
        want = ref(input_ids=src, attention_mask=keep.long(), decoder_input_ids=tgt).logits
        ours = Bart.from_hf(ref)
        got = ours(src, tgt, src_keep=keep)
        ref.save_pretrained(tmp_path)
        got_dir = Bart.from_hf(tmp_path)(src, tgt, src_keep=keep)
    assert (got - want).abs().max().item() < 1e-5
    assert (got_dir - want).abs().max().item() < 1e-5
    assert ours.config.scale_embedding == overrides.get("scale_embedding", False)


def test_parity_in_float64_and_default_decoder_inputs():
    ref = hf_generation_model().double()
    src, keep, _ = batch()
    ours = Bart.from_hf(ref, dtype=torch.float64)
    with torch.no_grad():   # without decoder inputs both shift the source right (denoising pre-training)
        want = ref(input_ids=src, attention_mask=keep.long()).logits
        got = ours(src, src_keep=keep)
    assert got.dtype == torch.float64
    # at real decoder positions; where the shifted input is padding we mask the pads as keys and
    # Hugging Face (no decoder_attention_mask) does not: those positions have no label anyway
    real = shift_tokens_right(src, PAD, EOS) != PAD
    assert (got - want)[real].abs().max().item() < 1e-10


def test_copy_is_not_trivially_equal():
    """Reading the position table without BART's offset of 2 must show: the parity test compares real numbers."""
    ref = hf_generation_model()
    src, keep, tgt = batch()
    ours = Bart.from_hf(ref)
    with torch.no_grad():
        table = ours.encoder_positions.embedding.weight
        table.copy_(table.roll(2, dims=0))
        diff = (ours(src, tgt, src_keep=keep) - ref(input_ids=src, attention_mask=keep.long(),
                                                    decoder_input_ids=tgt).logits).abs().max()
    assert diff > 1e-2


def _hf_greedy(ref, src, keep, max_new):
    """A manual greedy loop over the Hugging Face model (no generation config involved)."""
    dec = torch.full((src.shape[0], 1), ref.config.decoder_start_token_id)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    with torch.no_grad():
        for _ in range(max_new):
            nxt = ref(input_ids=src, attention_mask=keep.long(), decoder_input_ids=dec).logits[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
            dec = torch.cat([dec, nxt[:, None]], 1)
            done |= nxt == EOS
            if done.all():
                break
    return [[t for t in row[1:] if t != PAD] for row in dec.tolist()]


def _strip(seqs):
    return [s[: s.index(EOS)] if EOS in s else s for s in seqs]


def test_greedy_generation_equals_transformers():
    ref = hf_generation_model()
    with torch.no_grad():
        # a random model with tied embeddings tends to repeat its last token (h ≈ E[last]); with embeddings of
        # norm ~4 the outputs depend on the input, and tying </s> to token 36 makes some sentences end at once
        E = ref.model.shared.weight
        E.normal_(0.0, 1.0)
        E[EOS] = 1.3 * E[36]
    src, keep, _ = batch()
    ours = Bart.from_hf(ref)
    result = ours.generate(src, keep, max_len=12)
    assert result.tokens == _strip(_hf_greedy(ref, src, keep, 12))
    hf = ref.generate(input_ids=src, attention_mask=keep.long(), do_sample=False, num_beams=1, max_new_tokens=12,
                      min_length=0, no_repeat_ngram_size=0)
    assert result.tokens == _strip([[t for t in row[1:] if t != PAD] for row in hf.tolist()])
    assert result.finished.tolist() == [True, True, False]
    assert result.tokens[:2] == [[], []] and len(set(result.tokens[2])) == 2


def test_kv_cache_decoding_equals_full_forward_and_beam_one_is_greedy():
    ours = Bart.from_hf(hf_generation_model())
    src, keep, tgt = batch()
    with torch.no_grad():
        full = torch.log_softmax(ours(src, tgt, src_keep=keep), -1)
        state = ours.start(src, keep)
        steps = [ours.step(tgt[:, : t + 1], state)[0] for t in range(tgt.shape[1])]
    assert (torch.stack(steps, 1) - full).abs().max() < 1e-5
    greedy = ours.generate(src, keep, max_len=6)
    beam1 = ours.generate(src, keep, max_len=6, beam_size=1)
    beam3 = ours.generate(src, keep, max_len=6, beam_size=3)
    assert greedy.tokens == beam1.tokens
    assert (beam3.scores >= greedy.scores - 1e-5).all()     # a wider beam never finds a worse sequence here
    assert all(len(b) == 3 for b in beam3.beams)


def test_sequence_classification_equals_transformers(tmp_path):
    torch.manual_seed(0)
    ref = _randomise(transformers.BartForSequenceClassification(hf_config(classifier_dropout=0.0)))
    src, keep, _ = batch()
    src = src[:2]        # Hugging Face needs the same number of </s> in every row
    with torch.no_grad():
        want = ref(input_ids=src, attention_mask=(src != PAD).long()).logits
        ours = BartForSequenceClassification.from_hf(ref)
        got = ours(src)
        ref.save_pretrained(tmp_path)
        got_dir = BartForSequenceClassification.from_hf(tmp_path)(src)
    assert got.shape == (2, 3)
    assert (got - want).abs().max().item() < 1e-5
    assert (got_dir - want).abs().max().item() < 1e-5
    # padding after the last </s> changes nothing (the causal decoder never reads it)
    padded = torch.cat([src, torch.full((2, 3), PAD)], 1)
    with torch.no_grad():
        assert (ours(padded) - got).abs().max() < 1e-5
    with pytest.raises(ValueError, match="must contain an </s>"):
        ours(torch.full((1, 4), 5))


def test_sequence_classification_equals_transformers_on_left_padded_rows():
    torch.manual_seed(1)
    ref = _randomise(transformers.BartForSequenceClassification(hf_config(classifier_dropout=0.0)))
    ours = BartForSequenceClassification.from_hf(ref)
    src, _, _ = batch()
    row = src[0][src[0] != PAD]
    left = torch.cat([torch.full((2, 3), PAD), torch.stack([row, row])], 1)    # (2, 3 + len)
    left[1, :3] = row[:3]                                                     # one row padded, one not
    with torch.no_grad():
        want = ref(input_ids=left, attention_mask=(left != PAD).long()).logits
        got = ours(left, left != PAD)
    assert (got - want).abs().max().item() < 1e-5


@pytest.mark.parametrize("kind", ["bart", "classifier"])
def test_float64_import_is_exact(kind):
    torch.manual_seed(2)
    cls_hf = transformers.BartForConditionalGeneration if kind == "bart" else transformers.BartForSequenceClassification
    ref = _randomise(cls_hf(hf_config(classifier_dropout=0.0))).double()
    with torch.no_grad():                                                     # values float32 cannot hold
        for p in ref.parameters():
            p.add_(torch.randn_like(p) * 1e-9)
    ours = (Bart if kind == "bart" else BartForSequenceClassification).from_hf(ref, dtype=torch.float64)
    mine = ours.state_dict()
    assert all(v.dtype == torch.float64 for v in mine.values() if v.is_floating_point())
    shared = "shared.weight" if kind == "bart" else "bart.shared.weight"
    assert torch.equal(mine[shared], ref.get_input_embeddings().weight)


def test_shift_tokens_right_equals_transformers():
    from transformers.models.bart.modeling_bart import shift_tokens_right as hf_shift
    labels = torch.tensor([[0, 5, 6, 2, -100], [0, 7, 2, -100, -100]])
    assert torch.equal(shift_tokens_right(labels, PAD, EOS), hf_shift(labels, PAD, EOS))
    assert shift_tokens_right(labels, PAD, EOS).tolist() == [[2, 0, 5, 6, 2], [2, 0, 7, 2, 1]]
    with pytest.raises(TypeError, match="integer"):
        shift_tokens_right(labels.float(), PAD, EOS)
    with pytest.raises(ValueError, match="2 dimensions"):
        shift_tokens_right(labels[0], PAD, EOS)


# ---------------------------------------------------------------- errors

def test_unsupported_config_is_a_clear_error():
    with pytest.raises(ValueError, match="normalize_before=True"):
        BartConfig.from_hf_config({**hf_config().to_dict(), "normalize_before": True})
    with pytest.raises(ValueError, match="activation_function='swish'"):
        BartConfig.from_hf_config({**hf_config().to_dict(), "activation_function": "swish"})
    with pytest.raises(ValueError, match="missing field 'd_model'"):
        BartConfig.from_hf_config({k: v for k, v in hf_config().to_dict().items() if k != "d_model"})
    with pytest.raises(ValueError, match="model_type='t5'"):
        BartConfig.from_hf_config({**hf_config().to_dict(), "model_type": "t5"})
    back = BartConfig.from_hf_config(transformers.BartConfig(**BartConfig(vocab_size=V, d_model=16, n_heads=2,
                                                                          d_ff=8).to_hf_dict()))
    assert back == BartConfig(vocab_size=V, d_model=16, n_heads=2, d_ff=8, decoder_n_heads=2, decoder_d_ff=8)


def test_key_mismatch_lists_the_keys(tmp_path):
    ref = hf_generation_model()
    ref.save_pretrained(tmp_path)
    from safetensors.torch import load_file, save_file
    state = load_file(str(tmp_path / "model.safetensors"))
    del state["model.decoder.layers.1.fc1.weight"]
    state["model.decoder.layers.1.extra.weight"] = torch.zeros(2)
    save_file(state, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError) as err:
        Bart.from_hf(tmp_path)
    msg = str(err.value)
    assert "decoder.layers.1.fc1.weight" in msg and "decoder.layers.1.extra.weight" in msg
    # config says 2 decoder layers, checkpoint has 3
    cfg = hf_config(decoder_layers=2)
    with pytest.raises(ValueError, match=r"decoder\.layers\.2\."):
        Bart(BartConfig.from_hf_config(cfg))._load_hf(
            {k.removeprefix("model."): v for k, v in ref.state_dict().items()},
            Bart(BartConfig.from_hf_config(cfg)).hf_key_map(), set())
    with pytest.raises(ValueError, match="shapes do not match"):
        small = Bart(BartConfig.from_hf_config(hf_config(max_position_embeddings=20)))
        small._load_hf({k.removeprefix("model."): v for k, v in ref.state_dict().items()}, small.hf_key_map(), set())
    with pytest.raises(TypeError, match="checkpoint directory"):
        Bart.from_hf(42)
    with pytest.raises(FileNotFoundError, match="no checkpoint directory"):
        Bart.from_hf(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no config.json"):
        Bart.from_hf(tmp_path / "empty")


def test_bad_inputs_are_clear_errors():
    model = Bart(BartConfig(vocab_size=V, d_model=16, n_heads=2, d_ff=8, n_encoder_layers=1, n_decoder_layers=1,
                            max_len=10))
    with pytest.raises(ValueError, match=r"ids in \[0, 61\)"):
        model(torch.tensor([[0, 70, 2]]))
    with pytest.raises(ValueError, match="exceeds max_len=10"):
        model(torch.zeros(1, 11, dtype=torch.long))
    with pytest.raises(ValueError, match="same B"):
        model(torch.zeros(2, 4, dtype=torch.long), torch.zeros(3, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="src_keep"):
        model(torch.zeros(1, 4, dtype=torch.long), src_keep=torch.ones(1, 4))
    with pytest.raises(ValueError, match="divisible"):
        BartConfig(vocab_size=V, d_model=16, n_heads=3)
    with pytest.raises(ValueError, match="pad_id"):
        BartConfig(vocab_size=V, pad_id=V)
    with pytest.raises(TypeError, match="BartConfig"):
        Bart({"vocab_size": V})


def test_denoising_batch_and_a_few_steps_of_training_lower_the_loss():
    torch.manual_seed(0)
    cfg = BartConfig(vocab_size=V, d_model=32, n_heads=4, d_ff=64, n_encoder_layers=1, n_decoder_layers=1,
                     max_len=32, dropout=0.0, pad_id=PAD, bos_id=BOS, eos_id=EOS, decoder_start_id=EOS)
    model = Bart(cfg)
    docs = [[BOS, *range(10, 10 + n), EOS] for n in (12, 7, 9)]
    noise = partial(text_infilling, mask_id=3, ratio=0.3, special_ids={PAD, BOS, EOS})
    b = denoising_batch(docs, noise, pad_id=PAD, decoder_start_id=EOS, generator=torch.Generator().manual_seed(0))
    assert b.tgt_out[1].tolist() == docs[1] + [PAD] * 5 and b.tgt_keep.sum().item() == 14 + 9 + 11
    assert b.tgt_in[:, 0].eq(EOS).all() and torch.equal(b.tgt_in[:, 1:], b.tgt_out[:, :-1])
    assert (b.src == 3).any() and b.src.shape[1] < b.tgt_out.shape[1]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    first = denoising_loss(model, b).item()
    for _ in range(40):
        opt.zero_grad()
        loss = denoising_loss(model, b)
        loss.backward()
        opt.step()
    assert loss.item() < first / 3
