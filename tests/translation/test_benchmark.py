"""The EN→FR benchmark (shared BPE, split, batches), the training recipes with resume, and the committed models."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
import torch
from helpers import MIRROR, ROOT, require_mirror

from coursekit import text
from coursekit import translation as tr
from coursekit.text import SPECIALS
from coursekit.translation import benchmark as B
from coursekit.translation import recipes as R
from coursekit.translation.subword import SubwordVocab

REPO = ROOT


@pytest.fixture(scope="module")
def small():
    """The benchmark with 3,000 training pairs (the committed tokenizer, the real test/valid split): the first 200
    short and 50 long test pairs, 40 short and 10 long validation pairs."""
    require_mirror("tatoeba-eng-fra")
    return B.load_benchmark(n_train=3000, n_test=200, n_test_long=50, n_valid=40, n_valid_long=10)


# --------------------------------------------------------------------------- subwords


def _toy_vocab():
    sentences = ["le chat dort .", "le chien dort .", "les chats dorment .", "un chat noir ."] * 5
    return SubwordVocab.train(sentences, 60, min_frequency=2)


def test_subword_specials_round_trip_and_errors(tmp_path):
    v = _toy_vocab()
    assert (v.pad_id, v.unk_id, v.bos_id, v.eos_id) == (0, 1, 2, 3) and v.itos[:4] == list(SPECIALS)
    ids = v.encode("le chat noir dort .".split(), add_bos=True, add_eos=True)
    assert ids[0] == v.bos_id and ids[-1] == v.eos_id and v.unk_id not in ids
    assert v.detokenize(ids + [v.pad_id, 9]) == "le chat noir dort ."     # stops at <eos>
    assert v.encode([]) == [] and v.encode_batch([]) == []
    assert v.encode_batch([["le", "chat"], ["un"]], add_eos=True) == [v.encode(["le", "chat"], add_eos=True),
                                                                      v.encode(["un"], add_eos=True)]
    with pytest.raises(TypeError, match="list of words"):
        v.encode("le chat")
    with pytest.raises(ValueError, match="out of range"):
        v.decode([len(v)])
    back = SubwordVocab.load(v.save(tmp_path / "tok.json"))
    assert back.itos == v.itos and back.sha256() == v.sha256()
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a tokenizers JSON"):
        SubwordVocab.load(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError):
        SubwordVocab.load(tmp_path / "missing.json")
    with pytest.raises(TypeError, match="tokenizers.Tokenizer"):
        SubwordVocab("not a tokenizer")


def test_benchmark_split_tokenizer_and_showcase(small):
    full_test = tr.load_translation(max_len=10, n_test=1000, n_train=10).test
    assert small.test[:200] == full_test[:200]         # the short band: a prefix of the ≤ 10-word benchmark's test set
    long = small.test[200:]
    assert len(long) == 50 and all(10 < max(len(e), len(f)) <= 25 for e, f in long)
    longest = max(max(len(e), len(f)) for e, f in small.train)
    assert 10 < longest <= 25 and len(small.train) == 3000          # the training pairs reach past 10 words
    assert small.info["bands"] == {"test_short": 200, "test_long": 50}
    held_out = {" ".join(e) for e, _ in small.test + small.valid}
    assert not held_out & {" ".join(e) for e, _ in small.train}       # no test/valid sentence is trained on
    assert not {" ".join(e) for e, _ in small.valid} & {" ".join(e) for e, _ in small.test}
    assert small.src_vocab is small.tgt_vocab and len(small.tgt_vocab) == B.BENCHMARK["bpe_size"]
    src_ids, tgt_ids = small._split("test")
    assert all(small.tgt_vocab.unk_id not in s for s in src_ids + tgt_ids)   # subwords: no <unk> at all
    for (_, f), ids in zip(small.test[:50], tgt_ids):
        assert small.detokenize(ids) == " ".join(f)                   # detokenisation is exact
    rows = B.showcase(small)
    assert len(rows) == 12 + len(B.EVERYDAY) and rows[0]["kind"] == "test" and rows[-1]["kind"] == "everyday"
    everyday = {r["source"] for r in rows if r["kind"] == "everyday"}
    assert not everyday & {" ".join(e) for e, _ in small.train + small.test + small.valid}
    with pytest.raises(ValueError, match="short test set has 1000 sentences, n_test=1001 asked"):
        B.load_benchmark(n_test=1001)
    with pytest.raises(ValueError, match="long test set has 800 sentences, n_test_long=801 asked"):
        B.load_benchmark(n_test_long=801)


def test_token_batches_cover_each_pair_once_within_budget():
    g = torch.Generator().manual_seed(0)
    src = torch.randint(2, 12, (500,), generator=g).tolist()
    tgt = torch.randint(2, 14, (500,), generator=g).tolist()
    batches = text.token_batches(src, tgt, 200, torch.Generator().manual_seed(1))
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert all(len(b) * (max(src[i] for i in b) + max(tgt[i] for i in b)) <= 200 for b in batches)
    assert batches == text.token_batches(src, tgt, 200, torch.Generator().manual_seed(1))   # resumable
    assert batches != text.token_batches(src, tgt, 200, torch.Generator().manual_seed(2))
    with pytest.raises(ValueError, match="more than max_tokens"):
        text.token_batches([30], [30], 50)
    with pytest.raises(ValueError, match="as many source as target"):
        text.token_batches([3, 4], [3], 50)


# --------------------------------------------------------------------------- models of the recipes


def test_bidirectional_encoder_state_is_both_directions_of_nn_gru():
    from coursekit.rnn.seq2seq import Seq2Seq, Seq2SeqConfig

    torch.manual_seed(0)
    model = Seq2Seq(Seq2SeqConfig(30, 30, d_emb=8, d_hidden=12, bidirectional=True, share_embeddings=True))
    assert model.decoder.embedding is model.encoder.embedding
    src = torch.randint(4, 30, (3, 6))
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4], dtype=torch.bool)
    out, state = model.encoder(src, mask)                              # (B, S, 12), (B, 1, 12)
    for b, n in enumerate(mask.sum(1).tolist()):                       # each sentence alone, no padding
        ref_out, ref_h = model.encoder.rnn(model.encoder.embedding(src[b:b + 1, :n]))
        torch.testing.assert_close(out[b, :n], ref_out[0], atol=1e-5, rtol=0)
        torch.testing.assert_close(state[b, 0], torch.cat([ref_h[0, 0], ref_h[1, 0]]), atol=1e-5, rtol=0)
        assert state[b, 0, :6].equal(out[b, n - 1, :6]) and state[b, 0, 6:].equal(out[b, 0, 6:])
    with pytest.raises(ValueError, match="must be even"):
        Seq2SeqConfig(30, 30, d_hidden=13, bidirectional=True)
    with pytest.raises(ValueError, match="one vocabulary"):
        Seq2SeqConfig(30, 31, share_embeddings=True)
    with pytest.raises(ValueError, match="bos_id"):
        Seq2SeqConfig(30, 30, bos_id=30)


def test_transformer_shared_embeddings():
    from coursekit.transformer.model import Transformer, TransformerConfig

    model = Transformer(TransformerConfig(40, 40, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                          d_ff=32, share_embeddings=True))
    assert model.src_embed is model.tgt_embed and model.out_proj.weight is model.tgt_embed.weight
    with pytest.raises(ValueError, match="one vocabulary"):
        TransformerConfig(40, 41, share_embeddings=True)


TINY = {
    "transformer": dict(d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64, dropout=0.1,
                        norm_first=True, max_len=64, share_embeddings=True),
    "attention": dict(d_emb=16, d_hidden=32, bidirectional=True, share_embeddings=True, dropout=0.1,
                      attention="additive", style="bahdanau", d_attn=16),
}


@pytest.mark.parametrize("name", list(TINY))
def test_interrupted_and_resumed_run_equals_an_uninterrupted_one(name, small, tmp_path):
    """A run stopped after 3 updates and resumed to 6 ends with exactly the weights of a 6-update run
    (same batches, same dropout draws): --resume loses nothing."""
    torch.set_num_threads(1)
    recipe = dataclasses.replace(R.RECIPES[name], arch=TINY[name], max_tokens=600, eval_every=3, max_updates=6,
                                 warmup=2, cooldown=2)                  # interrupted before its cool-down
    every_update = 1e-6                     # minutes: a checkpoint after every update (0 minutes is refused)
    straight, st = R.train(name, tmp_path / "a", data=small, recipe=recipe, checkpoint_minutes=every_update, quiet=True)
    R.train(name, tmp_path / "b", data=small, recipe=recipe, max_updates=3, checkpoint_minutes=every_update, quiet=True)
    resumed, st2 = R.train(name, tmp_path / "b", data=small, recipe=recipe, resume=True, quiet=True)
    for (k, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), k
    assert st["update"] == st2["update"] == 6 and [p["update"] for p in st2["curve"]] == [3, 6]
    log = [json.loads(line) for line in (tmp_path / "b" / "train.log").read_text().splitlines()]
    assert {"event": "resume", "update": 3}.items() <= log[-2].items()
    with pytest.raises(FileExistsError, match="--resume"):
        R.train(name, tmp_path / "b", data=small, recipe=recipe)
    with pytest.raises(ValueError, match="only stop a recipe with a cool-down early"):
        R.train(name, tmp_path / "b", data=small, recipe=recipe, max_updates=7, resume=True)
    with pytest.raises(ValueError, match="another recipe"):
        R.train(name, tmp_path / "b", data=small, recipe=dataclasses.replace(recipe, lr=1.0), resume=True)

    figures = R.export(name, resumed, st2, tmp_path / "out", small, recipe=recipe)
    model, report = R.load_model(name, tmp_path / "out", data=small)
    again = R.evaluate(model, small, "test", indices=R.subset_indices(small))
    assert again.hypotheses == report["test_subset"]["hypotheses"] == figures["test_subset"]["hypotheses"]
    assert abs(again.bleu - report["test_subset"]["bleu"]) < 1e-9
    assert (tmp_path / "out" / "model.safetensors").stat().st_size == report["size_bytes"]
    other = "seq2seq" if name == "transformer" else "transformer"
    with pytest.raises(ValueError, match=f"holds the {name!r} model"):
        R.load_model(other, tmp_path / "out")
    blob = (tmp_path / "out" / "model.safetensors").read_bytes()
    (tmp_path / "out" / "model.safetensors").write_bytes(blob[:-100])
    with pytest.raises(ValueError, match="truncated or replaced"):
        R.load_model(name, tmp_path / "out")


def test_cool_down_schedule_and_recipe_checks():
    plain = R.RECIPES["seq2seq"]
    assert plain.cooldown == 0
    f, g = R.lr_factor(plain), R.inverse_sqrt(plain.warmup)
    assert all(f(u) == g(u) for u in (0, 10, 199, 200, 5000, 10**6))       # no cool-down: the length does not matter
    rec = dataclasses.replace(plain, warmup=10, max_updates=100, cooldown=40)
    f, g10 = R.lr_factor(rec), R.inverse_sqrt(10)
    assert f(59) == g10(59) and abs(f(60) - g10(60)) < 1e-12            # the line starts where the decay stood
    assert abs(f(99) - g10(60) / 40) < 1e-12 and f(100) == 0.0            # the last update gets 1/40 of it
    assert all(f(u) > f(u + 1) for u in range(60, 100))
    with pytest.raises(ValueError, match="cooldown"):
        dataclasses.replace(plain, cooldown=-1)
    with pytest.raises(ValueError, match="warm-up whole"):
        dataclasses.replace(plain, warmup=200, max_updates=300, cooldown=101)
    with pytest.raises(TypeError, match="Recipe"):
        R.lr_factor({"warmup": 10})
    assert R.RECIPES["transformer"].max_updates - R.RECIPES["transformer"].cooldown == 7000   # the first run, kept


def test_a_cool_down_continues_an_exported_model(small, tmp_path):
    """init_from starts a run where an exported model stopped: its weights as stored, the schedule at its update,
    the same place in the batches, its curve and log; the export records where it came from."""
    torch.set_num_threads(1)
    base = dataclasses.replace(R.RECIPES["transformer"], arch=TINY["transformer"], max_tokens=600, eval_every=2,
                               warmup=2, max_updates=4, cooldown=0)
    first, st = R.train("transformer", tmp_path / "a", data=small, recipe=base, quiet=True)
    R.export("transformer", first, st, tmp_path / "first", small, recipe=base)
    stored, report = R.load_model("transformer", tmp_path / "first", data=small)
    tail = dataclasses.replace(base, max_updates=8, cooldown=4)

    origin = R.start_from_model("transformer", tmp_path / "first", tmp_path / "b", data=small, recipe=tail)
    assert origin["updates"] == 4 and origin["file_sha256"] == report["file_sha256"]
    saved = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)
    assert (saved["state"]["epoch"], saved["state"]["position"]) == (st["epoch"], st["position"])
    assert saved["scheduler"]["last_epoch"] == 4 and saved["optimizer"]["state"] == {}
    for k, v in stored.state_dict().items():
        assert torch.equal(saved["model"][k], v), k                      # the weights a reader of the file gets
    with pytest.raises(FileExistsError, match="checkpoint"):
        R.start_from_model("transformer", tmp_path / "first", tmp_path / "b", data=small, recipe=tail)
    with pytest.raises(ValueError, match="another recipe"):
        R.start_from_model("transformer", tmp_path / "first", tmp_path / "c", data=small,
                           recipe=dataclasses.replace(tail, lr=5e-4))
    with pytest.raises(ValueError, match="past the start of the cool-down"):
        R.start_from_model("transformer", tmp_path / "first", tmp_path / "d", data=small,
                           recipe=dataclasses.replace(tail, max_updates=6, cooldown=3))

    model, st2 = R.train("transformer", tmp_path / "e", data=small, recipe=tail, init_from=tmp_path / "first",
                         quiet=True)
    assert st2["update"] == 8 and [p["update"] for p in st2["curve"]] == [2, 4, 6, 8]
    assert st2["curve"][:2] == report["curve"] and st2["seconds"] > report["train_seconds"]
    figures = R.export("transformer", model, st2, tmp_path / "out", small, recipe=tail)
    assert figures["continued_from"]["file_sha256"] == report["file_sha256"] and "--init-from" in figures["made_by"]
    assert figures["updates"] == 8 and figures["recipe"]["cooldown"] == 4
    assert R.load_model("transformer", tmp_path / "out", data=small)[1]["file_sha256"] == figures["file_sha256"]
    end = torch.load(tmp_path / "e" / "checkpoint.pt", weights_only=True)["scheduler"]
    assert end["last_epoch"] == 8 and end["_last_lr"] == [0.0]               # the cool-down reached zero


# --------------------------------------------------------------------------- the committed models


COMMITTED = [m for m in R.MODELS if (REPO / "data" / "translation" / m / "report.json").exists()]


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_model_reproduces_its_reported_bleu(name, small):
    """Reload the committed weights and re-translate the fixed first 100 test sentences: identical output."""
    model, report = R.load_model(name, data=small)
    indices = R.subset_indices(small)                      # the first 60 short and 40 long test pairs
    result = R.evaluate(model, small, "test", indices=indices)
    agree = sum(a == b for a, b in zip(result.hypotheses, report["test_subset"]["hypotheses"]))
    assert agree >= len(indices) - 2, f"{agree}/{len(indices)} translations as recorded"
    assert abs(result.bleu - report["test_subset"]["bleu"]) < 1.0
    assert report["storage"] == "int8-rowwise" and report["size_bytes"] < 8.5e6
    assert report["test"]["n_test"] == 1800 and report["test"]["short"]["n"] == 1000


def test_committed_models_meet_the_targets():
    """The targets of the benchmark, on the full test set as recorded by export() from the stored weights."""
    if set(COMMITTED) != set(R.MODELS):
        pytest.skip(f"committed so far: {COMMITTED}")
    test = {m: json.loads((REPO / "data" / "translation" / m / "report.json").read_text())["test"] for m in R.MODELS}
    bleu = {m: t["bleu"] for m, t in test.items()}
    long = {m: t["bleu_long"] for m, t in test.items()}
    short = {m: t["short"]["bleu"] for m, t in test.items()}
    # Issue 39's targets: 41.77 after 7,000 updates, 43.33 after the 1,500-update cool-down
    assert bleu["transformer"] >= 42 and long["transformer"] >= 32, (bleu, long)
    assert long["attention"] - long["seq2seq"] >= 8, long                              # attention holds on long ones
    assert bleu["attention"] - bleu["seq2seq"] >= 5, bleu
    assert short["transformer"] >= 40 and short["attention"] >= 28, short             # the ≤ 10-word targets kept


@pytest.mark.skipif(not COMMITTED, reason="no committed translation model yet")
def test_cli_evaluate_and_translate():
    name = "transformer" if "transformer" in COMMITTED else COMMITTED[0]
    env = {**os.environ, "COURSEKIT_DATA_MIRROR": str(MIRROR)}
    run = subprocess.run([sys.executable, "-m", "coursekit.translation", "evaluate", name, "--json", "--limit", "50"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["model"] == name and out["n_test"] == 50 and 0 <= out["bleu"] <= 100 and out["chrf"] > 0
    assert [row["bucket"] for row in out["bleu_by_length"]] == ["1-5", "6-10", "11-15", "16-20", "21-25"]
    run = subprocess.run([sys.executable, "-m", "coursekit.translation", "translate", name, "--beam", "3"],
                         input="He kept reading the book.\n\nI like tea.\n", capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == "" and lines[0] and lines[2]
    bad = subprocess.run([sys.executable, "-m", "coursekit.translation", "evaluate", "nope"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


@pytest.mark.skipif(len(COMMITTED) < 3, reason="needs the three committed translation models")
@pytest.mark.parametrize("name", ["seq2seq", "attention", "transformer"])
def test_cli_translate_takes_each_line_on_its_own(name):
    """A line longer than the models' context is refused with a message and an empty output line, the same
    limit for all three models; the lines around it are still translated, in readable French; exit status 1."""
    from coursekit.translation.recipes import MAX_SOURCE_TOKENS

    env = {**os.environ, "COURSEKIT_DATA_MIRROR": str(MIRROR)}
    too_long = " ".join(["my sister has a very long name"] * 12)                  # 84 words, 84 subword tokens
    run = subprocess.run([sys.executable, "-m", "coursekit.translation", "translate", name],
                         input=f"I am hungry.\n{too_long}\nWhere is the station?\n", capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 1
    first, refused, third, end = run.stdout.split("\n")
    assert refused == "" and end == "" and first and third
    assert first[0].isupper() and first.endswith(".") and not first.endswith(" .")         # readable, not " ."
    assert f"line 2: not translated: 84 subword tokens (84 words), more than the {MAX_SOURCE_TOKENS - 1}" in run.stderr
    raw = subprocess.run([sys.executable, "-m", "coursekit.translation", "translate", name, "--raw"],
                         input="I am hungry.\n", capture_output=True, text=True, env=env, timeout=300)
    assert raw.returncode == 0 and raw.stdout.strip() == first[0].lower() + first[1:-1] + " ."


def test_readable_french():
    assert tr.readable_french("bonjour , je m'appelle marie .") == "Bonjour, je m'appelle marie."
    assert tr.readable_french("tu viens ?") == "Tu viens ?"
    assert tr.readable_french("") == ""
    with pytest.raises(TypeError, match="readable_french expects a str, got list"):
        tr.readable_french(["bonjour"])


# --------------------------------------------------------------------------- inspection helpers


def test_translate_with_attention_and_monotonicity(small):
    from coursekit.rnn.seq2seq import Seq2Seq, Seq2SeqConfig
    from coursekit.transformer.model import Transformer, TransformerConfig
    from coursekit.translation.explore import alignment_monotonicity, translate_with_attention

    V = len(small.tgt_vocab)
    torch.manual_seed(0)
    rnn = Seq2Seq(Seq2SeqConfig(V, V, d_emb=8, d_hidden=8, bidirectional=True, share_embeddings=True,
                                attention="additive", style="bahdanau")).eval()
    tf = Transformer(TransformerConfig(V, V, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=2,
                                       d_ff=32, share_embeddings=True)).eval()
    a = translate_with_attention(rnn, small, "He kept reading the book.", max_len=6)
    assert a.source == small.src_vocab.pieces("he kept reading the book .".split()) + ["<eos>"]
    assert a.weights.shape == (len(a.output), len(a.source)) and 1 <= len(a.output) <= 7
    assert torch.allclose(a.weights.sum(-1), torch.ones(len(a.output)), atol=1e-5)
    b = translate_with_attention(tf, small, "I like tea.", max_len=5)
    assert b.weights.shape == (2, 2, len(b.output), len(b.source))
    with pytest.raises(ValueError, match="no words"):
        translate_with_attention(tf, small, "   ")
    assert alignment_monotonicity(torch.eye(4)) == 1.0
    assert alignment_monotonicity(torch.eye(4).flip(0)) == 0.0
    with pytest.raises(ValueError, match="T ≥ 2"):
        alignment_monotonicity(torch.ones(1, 3))
