"""int8 storage of committed weights (coursekit.training.compact) and its checkpoints."""

import pytest
import torch
from torch import nn

from coursekit.training.compact import STORAGE, compact_state, dequantize_int8, expand_state, quantize_int8
from coursekit.training.loop import checkpoint_content, checkpoint_storage, load_checkpoint, save_checkpoint


class Tied(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.config = {"vocab": vocab, "d": d}
        self.embedding = nn.Embedding(vocab, d)
        self.norm = nn.LayerNorm(d)
        self.hidden = nn.Linear(d, d)
        self.output = nn.Linear(d, vocab, bias=False)
        self.output.weight = self.embedding.weight
        self.register_buffer("steps", torch.tensor([3, 4]))

    def forward(self, ids):
        return self.output(torch.tanh(self.hidden(self.norm(self.embedding(ids)))))


def test_error_is_at_most_half_a_step_of_each_row():
    torch.manual_seed(0)
    w = torch.randn(40, 30) * torch.logspace(-3, 1, 40)[:, None]     # rows of very different magnitude
    q, s = quantize_int8(w)
    assert q.dtype == torch.int8 and s.shape == (40,)
    err = (dequantize_int8(q, s) - w).abs()
    assert (err <= s[:, None] / 2 + 1e-7).all()
    # a per-tensor scale would wipe out the small rows; per row they keep ~2 significant digits
    assert (err.amax(1) / w.abs().amax(1)).max() < 0.004


def test_zero_rows_and_3d_weights():
    w = torch.zeros(3, 2, 2)
    w[1] = torch.tensor([[1.0, -2.0], [0.5, 0.0]])
    q, s = quantize_int8(w)
    assert q.shape == w.shape and torch.equal(dequantize_int8(q, s)[0], torch.zeros(2, 2))
    assert torch.allclose(dequantize_int8(q, s), w, atol=2 / 254)


def test_checkpoint_round_trip_keeps_ties_and_is_smaller(tmp_path):
    torch.manual_seed(0)
    model = Tied()
    full = save_checkpoint(tmp_path / "full.safetensors", model, model.config)
    small = save_checkpoint(tmp_path / "small.safetensors", model, model.config, compact=True)
    assert small.stat().st_size < 0.5 * full.stat().st_size
    assert checkpoint_content(small)[1]["storage"] == STORAGE
    stored = compact_state(model)
    assert "output.weight" not in stored and stored["embedding.weight"].dtype == torch.int8   # tied: stored once

    other = Tied()
    load_checkpoint(small, other, expected_config=model.config)
    assert other.output.weight is other.embedding.weight                 # still tied after loading
    assert torch.equal(other.steps, model.steps)
    expected = expand_state(stored)
    for name, tensor in other.state_dict().items():
        if name in expected:
            assert torch.equal(tensor, expected[name]), name
    ids = torch.randint(0, 50, (4, 7))
    with torch.no_grad():
        want, got = model(ids), other(ids)
    assert (got - want).abs().max() < 0.02 * want.abs().max()            # logits within 2 % of their range


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="floating matrix"):
        quantize_int8(torch.ones(5))
    with pytest.raises(ValueError, match="NaN"):
        quantize_int8(torch.tensor([[1.0, float("nan")]]))
    with pytest.raises(TypeError, match="int8"):
        dequantize_int8(torch.ones(2, 2), torch.ones(2))
    with pytest.raises(ValueError, match="one entry per row"):
        dequantize_int8(torch.ones(2, 2, dtype=torch.int8), torch.ones(3))
    q, s = quantize_int8(torch.ones(2, 2))
    with pytest.raises(ValueError, match="no scales"):
        expand_state({"w": q})
    with pytest.raises(TypeError, match="compact must be a bool"):
        save_checkpoint(tmp_path / "x.safetensors", Tied(), {}, compact="yes")
    path = save_checkpoint(tmp_path / "y.safetensors", Tied(), {"vocab": 50, "d": 16}, compact=True)
    with pytest.raises(ValueError, match="weights do not fit"):
        load_checkpoint(path, Tied(vocab=60))


def test_seq2seq_tie_output_shares_the_embedding():
    from coursekit.rnn.seq2seq import Seq2Seq, Seq2SeqConfig

    for attention in (None, "additive"):
        model = Seq2Seq(Seq2SeqConfig(30, 30, d_emb=12, d_hidden=12, bidirectional=True, share_embeddings=True,
                                      tie_output=True, attention=attention, style="bahdanau"))
        output = model.decoder.output if attention is None else model.decoder.output.W_s
        assert output.weight is model.decoder.embedding.weight is model.encoder.embedding.weight
        src, mask = torch.randint(4, 30, (2, 5)), torch.ones(2, 5, dtype=torch.bool)
        logits, _ = model(src, mask, torch.randint(4, 30, (2, 4)))
        assert logits.shape == (2, 4, 30)
    with pytest.raises(ValueError, match="needs d_hidden == d_emb, got 16 and 12"):
        Seq2SeqConfig(30, 30, d_emb=12, d_hidden=16, tie_output=True)
    with pytest.raises(TypeError, match="tie_output must be a bool"):
        Seq2SeqConfig(30, 30, tie_output=1)


def test_a_config_field_added_later_reads_as_its_default(tmp_path):
    """Checkpoints written before Seq2SeqConfig had tie_output still load (the field's default), and a real
    difference is still refused."""
    import dataclasses

    from coursekit.rnn.seq2seq import Seq2Seq, Seq2SeqConfig

    config = Seq2SeqConfig(30, 30, d_emb=8, d_hidden=8)
    old = {k: v for k, v in dataclasses.asdict(config).items() if k != "tie_output"}   # as written before
    path = save_checkpoint(tmp_path / "old.safetensors", Seq2Seq(config), old)
    load_checkpoint(path, Seq2Seq(config), expected_config=config)
    other = dataclasses.replace(config, dropout=0.1)
    with pytest.raises(ValueError, match="dropout: checkpoint 0.0 vs expected 0.1"):
        load_checkpoint(path, Seq2Seq(other), expected_config=other)
    tied = Seq2SeqConfig(30, 30, d_emb=8, d_hidden=8, tie_output=True)
    with pytest.raises(ValueError, match="tie_output: checkpoint '<absent>' vs expected True"):
        load_checkpoint(path, Seq2Seq(tied), expected_config=tied)


def test_checkpoint_storage_names_what_the_file_holds(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    assert checkpoint_storage(save_checkpoint(tmp_path / "c.safetensors", model, {"n": 1}, compact=True)) == STORAGE
    assert checkpoint_storage(save_checkpoint(tmp_path / "f.safetensors", model, {"n": 1})) == "fp32"
    assert checkpoint_storage(save_checkpoint(tmp_path / "h.safetensors", model.half(), {"n": 1})) == "fp16"
