import dataclasses

import pytest
import torch
from helpers import ROOT
from torch import nn

from coursekit import metrics
from coursekit.training import loop as train


def _regression_problem():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
    return x, y


def test_fit_reduces_loss_and_records_history():
    torch.manual_seed(0)
    x, y = _regression_problem()
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hist = train.fit(model, opt, [(x, y)], lambda m, b: nn.functional.mse_loss(m(b[0]), b[1]), steps=50,
                     eval_fn=lambda m: {"mse": nn.functional.mse_loss(m(x), y).item()}, eval_every=10, progress=False)
    assert hist.steps == list(range(1, 51)) and len(hist.train_loss) == 50
    assert hist.train_loss[-1] < 0.05 * hist.train_loss[0]
    assert [s for s, _ in hist.evals] == [10, 20, 30, 40, 50]
    assert hist.eval_curve("mse")[1][-1] < 0.01 and hist.seconds > 0
    assert len(hist.smoothed_loss(5)[1]) == 50
    assert len(hist.grad_norm) == 50 and hist.grad_norm[-1] < hist.grad_norm[0]


def test_fit_accepts_a_batch_function_and_stops_on_nan():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    calls = []
    train.fit(model, opt, lambda step: calls.append(step) or (torch.ones(2, 3), torch.zeros(2, 1)),
              lambda m, b: nn.functional.mse_loss(m(b[0]), b[1]), steps=3, progress=False)
    assert calls == [1, 2, 3]
    with pytest.raises(FloatingPointError, match="at step 1"):
        train.fit(model, opt, [None], lambda m, b: torch.tensor(float("nan"), requires_grad=True), steps=2,
                  progress=False)
    with pytest.raises(ValueError, match="steps"):
        train.fit(model, opt, [None], lambda m, b: m(torch.ones(1, 3)).sum(), steps=-1)


@dataclasses.dataclass
class TinyConfig:
    d_in: int = 3
    d_hidden: int = 4


class Tiny(nn.Module):
    def __init__(self, cfg: TinyConfig):
        super().__init__()
        self.config = cfg
        self.emb = nn.Embedding(5, cfg.d_in)
        self.hidden = nn.Linear(cfg.d_in, cfg.d_hidden)
        self.out = nn.Linear(cfg.d_hidden, 5, bias=False)


def test_checkpoint_roundtrip(tmp_path):
    cfg = TinyConfig()
    model = Tiny(cfg)
    path = train.save_checkpoint(tmp_path / "ck.safetensors", model, cfg, extra={"val_loss": 1.5})
    clone = Tiny(cfg)
    assert train.load_checkpoint(path, clone, expected_config=cfg) == dataclasses.asdict(cfg)
    for a, b in zip(model.state_dict().values(), clone.state_dict().values()):
        assert torch.equal(a, b)
    assert train.read_checkpoint_metadata(path)[1] == {"val_loss": 1.5}


def test_load_model_directory_builds_from_metadata_and_names_the_command(tmp_path):
    model = Tiny(TinyConfig(d_hidden=6))
    train.save_checkpoint(tmp_path / "model.safetensors", model, model.config, extra={"note": "x"})
    loaded, extra = train.load_model_directory(tmp_path, lambda config, _: Tiny(TinyConfig(**config)),
                                               reproduce="make-it")
    assert extra == {"note": "x"} and not loaded.training and loaded.config == model.config
    assert torch.equal(loaded.hidden.weight, model.hidden.weight)
    with pytest.raises(FileNotFoundError, match="make it with `make-it`"):
        train.load_model_directory(tmp_path / "absent", lambda c, e: Tiny(TinyConfig(**c)), reproduce="make-it")


def test_checkpoint_tied_weights(tmp_path):
    model = Tiny(TinyConfig(d_in=4, d_hidden=4))
    model.out.weight = model.emb.weight  # tie (5, 4)
    path = train.save_checkpoint(tmp_path / "tied.safetensors", model, {"tied": True})
    clone = Tiny(TinyConfig(d_in=4, d_hidden=4))
    clone.out.weight = clone.emb.weight
    train.load_checkpoint(path, clone)
    assert torch.equal(clone.out.weight, model.emb.weight)


def test_checkpoint_config_mismatch_is_clear(tmp_path):
    path = train.save_checkpoint(tmp_path / "ck.safetensors", Tiny(TinyConfig()), TinyConfig())
    with pytest.raises(ValueError, match=r"config mismatch — d_hidden: checkpoint 4 vs expected 8"):
        train.load_checkpoint(path, Tiny(TinyConfig()), expected_config=TinyConfig(d_hidden=8))
    with pytest.raises(ValueError, match="do not fit this model"):
        train.load_checkpoint(path, Tiny(TinyConfig(d_hidden=8)))
    with pytest.raises(ValueError, match="weight names differ"):
        train.load_checkpoint(path, nn.Sequential(nn.Linear(3, 4)))
    with pytest.raises(FileNotFoundError):
        train.load_checkpoint(tmp_path / "nope.safetensors", Tiny(TinyConfig()))
    with pytest.raises(TypeError, match="dataclass instance or a dict"):
        train.save_checkpoint(tmp_path / "x.safetensors", Tiny(TinyConfig()), "cfg")


def test_warmup_cosine_schedule():
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = train.warmup_cosine(opt, warmup=10, total=110, min_ratio=0.1)
    lrs = []
    for _ in range(120):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert lrs[110] == pytest.approx(0.1) and lrs[119] == pytest.approx(0.1)


def test_count_parameters_counts_shared_once():
    model = Tiny(TinyConfig(d_in=4, d_hidden=4))
    before = train.count_parameters(model)
    model.out.weight = model.emb.weight
    assert train.count_parameters(model) == before - 20


def test_metrics():
    assert metrics.perplexity(0.0) == 1.0
    assert metrics.accuracy(torch.tensor([[0.1, 0.9], [0.8, 0.2]]), torch.tensor([1, 1])) == 0.5
    assert metrics.bleu(["the cat sat on the mat"], ["the cat sat on the mat"]) == pytest.approx(100.0)
    assert metrics.bleu(["a b c d"], ["w x y z"]) == pytest.approx(0.0)
    assert metrics.distinct_n([["a", "b", "a", "b"]], 2) == pytest.approx(2 / 3)
    assert metrics.distinct_n(["abab"], 1) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        metrics.perplexity(float("nan"))
    with pytest.raises(ValueError, match="2 hypotheses but 1"):
        metrics.bleu(["a", "b"], ["a"])
    with pytest.raises(TypeError):
        metrics.bleu("a b", "a b")
    with pytest.raises(ValueError, match="does not match"):
        metrics.accuracy([1, 2, 3], [1, 2])


def _flip_last_byte(path):
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0x01
    path.write_bytes(bytes(raw))


def test_checkpoint_content_hash_refuses_flipped_bytes_and_truncation(tmp_path):
    cfg = {"d": 3}
    model = nn.Linear(3, 2)
    path = train.save_checkpoint(tmp_path / "m.safetensors", model, cfg)
    meta = train.verify_checkpoint(path)
    assert len(meta["content_sha256"]) == 64
    train.load_checkpoint(path, nn.Linear(3, 2), cfg)                     # intact: loads
    _flip_last_byte(path)                                                   # one bit of one weight
    with pytest.raises(ValueError, match="is corrupt"):
        train.load_checkpoint(path, nn.Linear(3, 2), cfg)
    path = train.save_checkpoint(tmp_path / "t.safetensors", model, cfg)
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ValueError, match="truncated or damaged"):
        train.load_checkpoint(path, nn.Linear(3, 2), cfg)
    (tmp_path / "junk.safetensors").write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="not a safetensors file"):
        train.read_checkpoint_metadata(tmp_path / "junk.safetensors")


def test_every_committed_checkpoint_has_and_passes_its_hash():

    files = sorted((ROOT / "data").rglob("*.safetensors"))
    assert len(files) >= 4
    for f in files:
        assert "content_sha256" in train.verify_checkpoint(f), f"{f} carries no content hash"


def test_word_vectors_hash(tmp_path):
    from coursekit.embeddings.word_vectors import WordVectors

    wv = WordVectors(["a", "b", "c"], torch.randn(3, 4))
    wv.save(tmp_path / "v")
    assert WordVectors.load(tmp_path / "v").itos == ["a", "b", "c"]
    (tmp_path / "v.vocab.json").write_text('["a", "c", "b"]')
    with pytest.raises(ValueError, match="does not belong"):
        WordVectors.load(tmp_path / "v")
    wv.save(tmp_path / "w")
    _flip_last_byte(tmp_path / "w.safetensors")
    with pytest.raises(ValueError, match="is corrupt"):
        WordVectors.load(tmp_path / "w")


def test_config_from_json_replaces_only_the_given_fields(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"d_hidden": 8}')
    base = TinyConfig(d_in=5)
    assert train.config_from_json(path, base) == TinyConfig(d_in=5, d_hidden=8)
    assert base == TinyConfig(d_in=5)                                   # the base is not mutated


@pytest.mark.parametrize("text, error, match", [
    ('{"d_hiden": 8}', ValueError, r"unknown TinyConfig fields in .*c\.json: \['d_hiden'\]; known fields: "
                                   r"\['d_in', 'd_hidden'\]"),
    ('[8]', ValueError, r"must hold a JSON object of TinyConfig fields, got a list"),
    ('{"d_hidden": 8,}', ValueError, r"c\.json is not valid JSON"),
])
def test_config_from_json_rejects_typos_and_non_objects(tmp_path, text, error, match):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(error, match=match):
        train.config_from_json(path, TinyConfig())
    with pytest.raises(TypeError, match="base must be a config dataclass instance, got type"):
        train.config_from_json(path, TinyConfig)


@pytest.mark.parametrize("module, argv", [
    ("coursekit.gpt.__main__", ["train"]),
    ("coursekit.bert.__main__", ["pretrain"]),
    ("coursekit.gpt.__main__", ["train-icl"]),
])
def test_every_training_cli_rejects_an_unknown_config_field(tmp_path, module, argv):
    import importlib

    path = tmp_path / "c.json"
    path.write_text('{"stepz": 3}')
    with pytest.raises(ValueError, match=r"unknown \w+Config fields in .*c\.json: \['stepz'\]"):
        importlib.import_module(module).main([*argv, "--config", str(path), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()                            # nothing trained, nothing written
