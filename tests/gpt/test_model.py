"""coursekit.gpt.model: parity with Hugging Face GPT-2, KV-cache generation, errors; coursekit.gpt.char: the
training recipe."""

import dataclasses

import pytest
import torch

from coursekit.gpt.char import CharTokenizer, TrainConfig, estimate_loss, get_batch, train
from coursekit.gpt.model import GPT, GPTConfig

transformers = pytest.importorskip("transformers")


def tiny_hf(seed=0, **overrides):
    torch.manual_seed(seed)
    kw = dict(vocab_size=97, n_positions=32, n_embd=48, n_layer=3, n_head=4, resid_pdrop=0.0, embd_pdrop=0.0,
              attn_pdrop=0.0, bos_token_id=None, eos_token_id=None)
    kw.update(overrides)
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(**kw)).eval()


@pytest.fixture(scope="module")
def hf_and_ours(tmp_path_factory):
    hf = tiny_hf()
    d = tmp_path_factory.mktemp("gpt2")
    hf.save_pretrained(d)
    return hf, GPT.from_hf(d)


@pytest.mark.parametrize("overrides", [
    {},
    dict(n_embd=64, n_layer=2, n_head=8, vocab_size=300, n_positions=40, layer_norm_epsilon=1e-6),
    dict(n_embd=32, n_layer=1, n_head=1, activation_function="gelu_pytorch_tanh"),
])
def test_logits_equal_transformers(tmp_path, overrides):
    hf = tiny_hf(1, **overrides)
    hf.save_pretrained(tmp_path)
    ours = GPT.from_hf(tmp_path)
    x = torch.randint(0, hf.config.vocab_size, (3, hf.config.n_positions))
    with torch.no_grad():
        want = hf(x).logits
        got, _ = ours(x)
    assert got.shape == want.shape
    assert (got - want).abs().max().item() < 1e-5


def test_from_model_object_and_loss_equal(hf_and_ours):
    hf, _ = hf_and_ours
    ours = GPT.from_hf(hf)
    x = torch.randint(0, 97, (2, 16))
    with torch.no_grad():
        want = hf(x, labels=x).loss                         # HF shifts the labels inside
        _, got = ours(x[:, :-1], x[:, 1:])
    assert abs(got.item() - want.item()) < 1e-5


def test_greedy_continuation_identical_to_transformers(hf_and_ours):
    hf, ours = hf_and_ours
    prompt = torch.randint(0, 97, (2, 6))
    want = hf.generate(prompt, max_new_tokens=20, do_sample=False, pad_token_id=0,
                       attention_mask=torch.ones_like(prompt))
    assert torch.equal(ours.generate(prompt, 20, temperature=0), want)
    assert torch.equal(ours.generate(prompt, 20, temperature=0, use_cache=False), want)


def test_cached_equals_uncached_including_sliding_window(hf_and_ours):
    _, ours = hf_and_ours
    prompt = torch.randint(0, 97, (2, 10))
    for n_new in (5, 40):                                   # 10 + 40 > max_len 32: the window slides
        a = ours.generate(prompt, n_new, temperature=0, use_cache=True)
        b = ours.generate(prompt, n_new, temperature=0, use_cache=False)
        assert a.shape == (2, 10 + n_new) and torch.equal(a, b)
    # incremental logits equal the full forward pass
    x = torch.randint(0, 97, (2, 12))
    full, _ = ours(x)
    cache = ours.new_cache()
    steps = [ours(x[:, :5], cache=cache)[0]] + [ours(x[:, t:t + 1], cache=cache)[0] for t in range(5, 12)]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    assert cache[0].length == 12


def test_seeded_sampling_reproducible(hf_and_ours):
    _, ours = hf_and_ours
    prompt = torch.randint(0, 97, (3, 4))

    def run(seed, **kw):
        return ours.generate(prompt, 25, temperature=0.9, top_k=20, top_p=0.9,
                             generator=torch.Generator().manual_seed(seed), **kw)

    assert torch.equal(run(3), run(3))
    assert torch.equal(run(3), run(3, use_cache=False))
    assert not torch.equal(run(3), run(4))


def test_clear_errors(hf_and_ours):
    _, ours = hf_and_ours
    with pytest.raises(ValueError, match="context"):
        ours.generate(torch.zeros(1, 33, dtype=torch.long), 1)
    with pytest.raises(ValueError, match="context"):
        ours(torch.zeros(1, 33, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 97\)"):
        ours.generate(torch.tensor([[1, 2, 97]]), 1)
    with pytest.raises(ValueError, match=r"\[0, 97\)"):
        ours(torch.tensor([[-1, 2]]))
    with pytest.raises(TypeError, match="integer"):
        ours(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="dimensions"):
        ours(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="max_new_tokens"):
        ours.generate(torch.zeros(1, 3, dtype=torch.long), -1)
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(d_model=10, n_heads=3)
    with pytest.raises(TypeError):
        GPT.from_hf(42)
    with pytest.raises(FileNotFoundError):
        GPT.from_hf("/nonexistent/gpt2")


def test_config_or_key_mismatch_is_clear(hf_and_ours):
    hf, _ = hf_and_ours
    with pytest.raises(ValueError, match="activation_function"):
        GPT.from_hf(tiny_hf(activation_function="relu"))
    sd = hf.state_dict()
    too_deep = GPT(GPTConfig(vocab_size=97, max_len=32, d_model=48, n_layers=4, n_heads=4))
    with pytest.raises(ValueError, match="block 3"):
        too_deep.load_hf_state_dict(sd)
    too_shallow = GPT(GPTConfig(vocab_size=97, max_len=32, d_model=48, n_layers=2, n_heads=4))
    with pytest.raises(ValueError, match="unexpected weights"):
        too_shallow.load_hf_state_dict(sd)
    wrong_width = GPT(GPTConfig(vocab_size=97, max_len=32, d_model=64, n_layers=3, n_heads=4))
    with pytest.raises(ValueError):
        wrong_width.load_hf_state_dict(sd)


def test_damaged_or_foreign_directories_are_refused(tmp_path):
    import json

    from safetensors.torch import load_file, save_file

    hf = tiny_hf()
    good = tmp_path / "good"
    hf.save_pretrained(good)
    bert_dir = tmp_path / "bert"                                   # another family
    bert_config = transformers.BertConfig(vocab_size=97, hidden_size=48, num_hidden_layers=1, num_attention_heads=4,
                                          intermediate_size=64)
    transformers.BertModel(bert_config).save_pretrained(bert_dir)
    with pytest.raises(ValueError, match="model_type 'gpt2'.*'bert'"):
        GPT.from_hf(bert_dir)
    bart_dir = tmp_path / "bart"
    transformers.BartModel(transformers.BartConfig(vocab_size=97, d_model=16, encoder_layers=1, decoder_layers=1,
                                                   encoder_attention_heads=2, decoder_attention_heads=2,
                                                   encoder_ffn_dim=32, decoder_ffn_dim=32,
                                                   max_position_embeddings=32)).save_pretrained(bart_dir)
    with pytest.raises(ValueError, match="'bart'"):
        GPT.from_hf(bart_dir)

    state = load_file(str(good / "model.safetensors"))
    for name, damage, message in [("missing", "transformer.h.1.mlp.c_fc.bias", "missing.*h.1.mlp.c_fc.bias"),
                                  ("no_ln_f", "transformer.ln_f.weight", "missing.*ln_f.weight")]:
        d = tmp_path / name
        hf.save_pretrained(d)
        save_file({k: v for k, v in state.items() if k != damage}, str(d / "model.safetensors"),
                  metadata={"format": "pt"})
        with pytest.raises(ValueError, match=message):
            GPT.from_hf(d)
    for n_layers, message in [(4, "no block 3"), (2, "unexpected weights")]:   # config disagrees with the weights
        d = tmp_path / f"layers{n_layers}"
        hf.save_pretrained(d)
        cfg = json.loads((d / "config.json").read_text())
        (d / "config.json").write_text(json.dumps(cfg | {"n_layer": n_layers}))
        with pytest.raises(ValueError, match=message):
            GPT.from_hf(d)
    with pytest.raises(FileNotFoundError, match="no checkpoint directory"):
        GPT.from_hf(tmp_path / "absent")
    with pytest.raises(ValueError, match="no config.json"):
        GPT.from_hf(tmp_path)


def test_float64_import_is_exact():
    hf = tiny_hf().double()
    with torch.no_grad():                                          # values float32 cannot hold
        for p in hf.parameters():
            p.add_(torch.randn_like(p) * 1e-9)
    ours = GPT.from_hf(hf)
    assert ours.wte.weight.dtype == torch.float64
    assert torch.equal(ours.wte.weight, hf.transformer.wte.weight)
    x = torch.randint(0, 97, (2, 16))
    with torch.no_grad():
        torch.testing.assert_close(ours(x)[0], hf(x).logits, atol=1e-10, rtol=1e-10)
    assert GPT.from_hf(hf, dtype=torch.float32).wte.weight.dtype == torch.float32


def test_tied_embeddings_and_gpt2_init():
    m = GPT(GPTConfig(vocab_size=50, max_len=16, n_layers=2, n_heads=2, d_model=32))
    assert m.lm_head.weight is m.wte.weight
    stds = [m.blocks[0].self_attn.out_proj.weight.std().item(), m.blocks[0].ff.linear1.weight.std().item()]
    assert stds[0] < stds[1]                                     # residual projections scaled by 1/sqrt(2L)
    assert m.num_params() == m.num_params(non_embedding=False) - 16 * 32


def test_char_tokenizer_and_batches():
    tok = CharTokenizer.from_text("hello world")
    assert tok.decode(tok.encode("hold")) == "hold" and len(tok) == 8
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.encode("z")
    data = torch.arange(100)
    x, y = get_batch(data, 4, 8, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8) and torch.equal(y, x + 1)


def test_train_recipe_learns_on_a_small_text():
    text = "to be or not to be, that is the question.\n" * 200
    cfg = dataclasses.replace(TrainConfig(), n_layers=1, n_heads=2, d_model=32, max_len=16, batch_size=8,
                              max_iters=150, warmup_iters=10, eval_interval=50, eval_iters=2, threads=1,
                              learning_rate=1e-2)
    model, report = train(cfg, text, progress=False)
    first, last = report["history"]["evals"][0][1], report["final"]
    assert last["val"] < 1.5 < report["history"]["train_loss"][0]
    assert first["val"] > last["val"]
    assert report["mfu_cpu"] > 0 and report["tokens_per_second"] > 0
    val = torch.tensor(CharTokenizer("".join(report["chars"])).encode(text[-200:]))
    assert estimate_loss(model, val, batch_size=4, iters=2, generator=torch.Generator().manual_seed(0)) < 1.5


def test_extra_tokens_keep_the_model_and_classifier_head():
    from coursekit.gpt.model import GPTClassifier, with_extra_tokens

    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=20, max_len=16, n_layers=2, n_heads=2, d_model=32)).eval()
    bigger = with_extra_tokens(m, 2).eval()
    assert bigger.config.vocab_size == 22 and bigger.lm_head.weight is bigger.wte.weight
    x = torch.randint(0, 20, (2, 10))
    with torch.no_grad():
        assert torch.allclose(bigger(x)[0][..., :20], m(x)[0], atol=1e-6)
    clf = GPTClassifier(bigger, n_classes=3)
    idx = torch.cat([x, torch.full((2, 1), 21)], dim=1)            # ... ⟨e⟩
    class_logits, lm_logits = clf(idx)
    assert class_logits.shape == (2, 3) and lm_logits.shape == (2, 11, 22)
    loss = clf.loss(idx, torch.tensor([0, 2]))
    loss.backward()
    assert clf.head.weight.grad is not None and torch.isfinite(loss)


def test_byte_level_bpe_round_trip_on_the_corpus():
    from coursekit.data import read_text
    from coursekit.text import train_bpe

    corpus = read_text("tinyshakespeare")[:100_000]
    bpe = train_bpe(corpus.splitlines(keepends=True), vocab_size=400)
    assert bpe.get_vocab_size() == 400
    for s in [corpus[5000:6000], "naïve café — 東京 🙂\n\ttabs", ""]:
        assert bpe.decode(bpe.encode(s).ids) == s
    assert len(bpe.encode(corpus[:5000]).ids) < 0.7 * 5000     # merges shorten the text


def test_committed_checkpoint_loads_and_matches_its_recorded_val_loss():
    from coursekit.gpt.char import CHECKPOINT_DIR, char_data, fixed_val_loss, load_char_gpt
    from coursekit.training.loop import load_checkpoint

    model, tok, report = load_char_gpt()
    assert "".join(tok.itos) == report["chars"] and model.config.vocab_size == len(tok) == 65
    _, _, val_ids = char_data()
    loss = fixed_val_loss(model, val_ids)                          # 8 seeded batches of 32: fast, deterministic
    assert abs(loss - report["fixed_val_loss"]) < 1e-4
    assert report["val_loss_200_batches"] <= 1.886 and report["reached_1_886"] is not None   # the speed target
    other = GPT(dataclasses.replace(model.config, n_layers=model.config.n_layers + 1))
    with pytest.raises(ValueError):
        load_checkpoint(CHECKPOINT_DIR / "model.safetensors", other, expected_config=other.config)


def test_from_hf_takes_a_bare_gpt2model_only_when_its_head_is_tied(tmp_path):
    """GPT-2 ties its LM head to wte, so a GPT2Model holds a complete language model; an untied one does not."""
    lm = tiny_hf()
    base = transformers.GPT2Model(lm.config).eval()
    base.load_state_dict(lm.transformer.state_dict())
    ids = torch.randint(0, lm.config.vocab_size, (2, 5))
    with torch.no_grad():
        assert torch.allclose(GPT.from_hf(base)(ids)[0], lm(ids).logits, atol=1e-5)
    untied = transformers.GPT2Model(transformers.GPT2Config(**{**lm.config.to_dict(), "tie_word_embeddings": False}))
    untied.save_pretrained(tmp_path / "untied")
    for source in (untied, tmp_path / "untied"):
        with pytest.raises(ValueError, match="GPT2Model \\(no LM head\\) whose config unties the head"):
            GPT.from_hf(source)
