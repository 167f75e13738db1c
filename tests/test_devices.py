"""The from-scratch models against their torch references, and decoding, on every available device.

The CPU always runs; CUDA (and MPS) run when the machine has them, so the same file is the GPU check
of a lent GPU box. Parity runs under ``runtime.exact_matmul()`` (TF32 off: cuDNN's RNN kernels use it
by default on Ampere and later, which moves results in the 4th digit); random weights and inputs are
made on the CPU and moved, as the notebooks do.
"""

import pytest
import torch
from torch import nn

from coursekit import runtime
from coursekit.attention import MultiHeadAttention, scaled_dot_product_attention
from coursekit.rnn import layers as rnn
from coursekit.rnn.seq2seq import Seq2Seq, Seq2SeqConfig
from coursekit.transformer.model import Transformer

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else []) + \
          (["mps"] if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available() else [])
ATOL = 1e-5


@pytest.fixture(params=DEVICES)
def device(request):
    with runtime.exact_matmul():
        yield torch.device(request.param)


def test_attention_and_mha_match_torch(device):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 5, 8) for _ in range(3))
    q, k, v = q.to(device), k.to(device), v.to(device)
    mask = (torch.rand(5, 5) > 0.3).to(device)
    mask[:, 0] = True
    ours, _ = scaled_dot_product_attention(q, k, v, mask)
    fused, _ = scaled_dot_product_attention(q, k, v, mask, need_weights=False)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (ours - ref).abs().max() < ATOL and (fused - ref).abs().max() < ATOL
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = torch.randn(3, 7, 16)
    ref_out, _ = mha(x, x, x)
    ours_mha = MultiHeadAttention.from_torch(mha).to(device).eval()
    out = ours_mha(x.to(device))
    out = out[0] if isinstance(out, tuple) else out
    assert (out.cpu() - ref_out).abs().max() < ATOL


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_recurrent_twins_match_fused_kernels(device, kind):
    torch.manual_seed(0)
    ref = (nn.LSTM if kind == "lstm" else nn.RNN)(6, 8, num_layers=2, batch_first=True, bidirectional=True)
    ref = ref.to(device)
    twin = rnn.from_torch(ref).to(device)
    x = torch.randn(3, 5, 6).to(device)
    with torch.no_grad():
        out_ref, _ = ref(x)
        out = twin(x)[0]
    assert (out - out_ref).abs().max() < ATOL


def test_transformer_matches_nn_transformer(device):
    torch.manual_seed(0)
    ref = nn.Transformer(16, 2, 2, 2, 32, dropout=0.0, batch_first=True, norm_first=True).eval()
    ours = Transformer.from_torch(ref, 20, 20).eval()
    src, tgt = torch.randint(0, 20, (2, 6)), torch.randint(0, 20, (2, 5))
    with torch.no_grad():
        a = ref.to(device)(ours.embed(src, "src").to(device), ours.embed(tgt, "tgt").to(device),
                           tgt_mask=nn.Transformer.generate_square_subsequent_mask(5, device=device),
                           tgt_is_causal=True)
    ours = ours.to(device)
    with torch.no_grad():
        memory, keep, _ = ours.encode(src.to(device), torch.ones(2, 6, dtype=torch.bool, device=device))
        h, _ = ours.decoder(ours.embed(tgt.to(device), "tgt"), memory, causal=True)
    assert (h - a).abs().max() < ATOL


def test_greedy_and_beam_search_run_on_the_device(device):
    """Beam search once built its first reorder index on the CPU for a CUDA state (RuntimeError)."""
    from coursekit.transformer.model import TransformerConfig

    torch.manual_seed(0)
    models = [Transformer(TransformerConfig(30, 30, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                            d_ff=32)),
              Seq2Seq(Seq2SeqConfig(30, 30, d_emb=8, d_hidden=16, bidirectional=True, attention="additive",
                                    style="bahdanau"))]
    src = torch.randint(4, 30, (3, 6))
    mask = torch.ones(3, 6, dtype=torch.bool)
    mask[1, 4:] = False
    for model in models:
        model.eval()
        cpu_greedy = model.translate(src, mask, max_len=8).tokens
        cpu_beam = model.translate(src, mask, beam_size=3, max_len=8).tokens
        model.to(device)
        assert model.translate(src.to(device), mask.to(device), max_len=8).tokens == cpu_greedy
        assert model.translate(src.to(device), mask.to(device), beam_size=3, max_len=8).tokens == cpu_beam


def test_translation_evaluate_follows_the_model(device):
    """recipes.evaluate once sent CPU batches to a CUDA model (RuntimeError in notebook 08 on a GPU)."""
    from coursekit.text import Vocab
    from coursekit.transformer.model import TransformerConfig
    from coursekit.translation import recipes
    from coursekit.translation.core import TranslationData

    pairs = [(["i", "run", "."], ["je", "cours", "."]), (["we", "eat", "."], ["nous", "mangeons", "."])]
    data = TranslationData(train=pairs, test=pairs, src_vocab=Vocab.build([e for e, _ in pairs]),
                           tgt_vocab=Vocab.build([f for _, f in pairs]), max_len=5)
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(len(data.src_vocab), len(data.tgt_vocab), d_model=8, n_heads=2,
                                          n_encoder_layers=1, n_decoder_layers=1, d_ff=16, max_len=16)).eval()
    on_cpu = recipes.evaluate(model, data, "test")
    on_device = recipes.evaluate(model.to(device), data, "test")
    assert on_device.hypotheses == on_cpu.hypotheses


def test_timed_synchronises_and_reports_the_best_run(device):
    x = torch.randn(64, 64).to(device)
    seconds, result = runtime.timed(lambda: x @ x, device, repeat=3, warmup=1)
    assert seconds > 0 and result.shape == (64, 64)
    with pytest.raises(ValueError, match="repeat"):
        runtime.timed(lambda: None, device, repeat=0)


def test_exact_matmul_restores_the_flags():
    before = runtime.tf32_settings()
    with runtime.exact_matmul():
        inside = runtime.tf32_settings()
        assert all(v in ("ieee", False) for v in inside.values()), inside
        x = torch.randn(8, 8)
        nn.LSTM(8, 8)(x[None])             # the fused kernels run under the new settings (no API-mixing error)
    assert runtime.tf32_settings() == before
