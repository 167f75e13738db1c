"""Parity of coursekit.rnn.layers and coursekit.rnn.cells with nn.RNN / nn.LSTM / nn.RNNCell / nn.LSTMCell (outputs and
gradients), manual BPTT against autograd (coursekit.rnn.bptt), the scalar mix (coursekit.rnn.elmo), the character LM
(coursekit.rnn.char_lm), and clear errors on bad input."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from coursekit.rnn import bptt, char_lm, elmo
from coursekit.rnn import cells as rnn_cells
from coursekit.rnn import layers as rnn

ATOL = 1e-5


def _grads(params):
    return [p.grad.clone() if p.grad is not None else None for p in params]


def _assert_close(a, b, what):
    assert a.shape == b.shape, f"{what}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    err = (a - b).abs().max().item() if a.numel() else 0.0
    assert err < ATOL, f"{what}: max abs difference {err:.3g}"


def _compare_params(ours, theirs, mapping_suffix=True):
    """Gradients of every parameter of ours vs the PyTorch module (names mapped cells.k.p -> p_lL[_reverse])."""
    theirs_p = dict(theirs.named_parameters())
    D = getattr(ours, "num_directions", None)
    for name, p in ours.named_parameters():
        if D is None:
            ref = theirs_p[name]
        else:
            _, k, leaf = name.split(".")
            layer, d = divmod(int(k), D)
            ref = theirs_p[f"{leaf}_l{layer}" + ("_reverse" if d else "")]
        _assert_close(p.grad, ref.grad, f"grad of {name}")


# --------------------------------------------------------------------------------------------
# cells
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rnn_cell_matches_torch(nonlinearity, dtype):
    torch.manual_seed(0)
    ref = nn.RNNCell(5, 7, nonlinearity=nonlinearity).to(dtype)
    ours = rnn.from_torch(ref)
    assert isinstance(ours, rnn_cells.RNNCell)
    x = torch.randn(4, 5, dtype=dtype)
    h = torch.randn(4, 7, dtype=dtype)
    xo, ho = x.clone().requires_grad_(), h.clone().requires_grad_()
    xr, hr = x.clone().requires_grad_(), h.clone().requires_grad_()
    out, out_ref = ours(xo, ho), ref(xr, hr)
    _assert_close(out, out_ref, "h'")
    g = torch.randn_like(out)
    (out * g).sum().backward()
    (out_ref * g).sum().backward()
    _assert_close(xo.grad, xr.grad, "dx")
    _assert_close(ho.grad, hr.grad, "dh")
    _compare_params(ours, ref)
    # zero initial state is the default, as in PyTorch
    _assert_close(ours(x), ref(x), "h' from zero state")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lstm_cell_matches_torch(dtype):
    torch.manual_seed(1)
    ref = nn.LSTMCell(6, 8).to(dtype)
    ours = rnn_cells.LSTMCell.from_torch(ref)
    x = torch.randn(3, 6, dtype=dtype)
    h0 = torch.randn(3, 8, dtype=dtype)
    c0 = torch.randn(3, 8, dtype=dtype)
    xs = [t.clone().requires_grad_() for t in (x, h0, c0)]
    xr = [t.clone().requires_grad_() for t in (x, h0, c0)]
    h, c = ours(xs[0], (xs[1], xs[2]))
    hr, cr = ref(xr[0], (xr[1], xr[2]))
    _assert_close(h, hr, "h")
    _assert_close(c, cr, "c")
    gh, gc = torch.randn_like(h), torch.randn_like(c)
    ((h * gh).sum() + (c * gc).sum()).backward()
    ((hr * gh).sum() + (cr * gc).sum()).backward()
    for a, b, n in zip(xs, xr, ("dx", "dh0", "dc0")):
        _assert_close(a.grad, b.grad, n)
    _compare_params(ours, ref)
    h_def, _c_def = ours(x)
    hr_def, _cr_def = ref(x)
    _assert_close(h_def, hr_def, "h from zero state")


def test_lstm_cell_gates_follow_the_four_equations():
    torch.manual_seed(2)
    cell = rnn_cells.LSTMCell(3, 4)
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    (h1, c1), g = cell(x, (h, c), return_gates=True)
    H = 4
    a = x @ cell.weight_ih.T + cell.bias_ih + h @ cell.weight_hh.T + cell.bias_hh
    i, f, gg, o = (a[:, k * H:(k + 1) * H] for k in range(4))   # PyTorch's i, f, g, o order
    torch.testing.assert_close(g["i"], torch.sigmoid(i))
    torch.testing.assert_close(g["f"], torch.sigmoid(f))
    torch.testing.assert_close(g["g"], torch.tanh(gg))
    torch.testing.assert_close(g["o"], torch.sigmoid(o))
    torch.testing.assert_close(c1, torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg))
    torch.testing.assert_close(h1, torch.sigmoid(o) * torch.tanh(c1))
    assert rnn_cells.GATE_ORDER == ("i", "f", "g", "o")


# --------------------------------------------------------------------------------------------
# sequences: layers, directions, batch_first, lengths
# --------------------------------------------------------------------------------------------
CONFIGS = [
    {"num_layers": 1, "bidirectional": False, "batch_first": False},
    {"num_layers": 1, "bidirectional": False, "batch_first": True},
    {"num_layers": 3, "bidirectional": False, "batch_first": False},
    {"num_layers": 1, "bidirectional": True, "batch_first": True},
    {"num_layers": 2, "bidirectional": True, "batch_first": False},
    {"num_layers": 2, "bidirectional": True, "batch_first": True},
]


def _cfg_id(c):
    return f"L{c['num_layers']}-bi{int(c['bidirectional'])}-bf{int(c['batch_first'])}"


def _run_pair(kind, cfg, lengths, with_state, dtype=torch.float64, nonlinearity="tanh"):
    torch.manual_seed(3)
    I, H, T, B = 4, 5, 7, 3  # noqa: E741 - I, O: input/output sizes as in the equations
    extra = {"nonlinearity": nonlinearity} if kind == "rnn" else {}
    ref = (nn.RNN if kind == "rnn" else nn.LSTM)(I, H, **cfg, **extra).to(dtype)
    ours = rnn.from_torch(ref)
    assert type(ours) is (rnn.RNN if kind == "rnn" else rnn.LSTM)
    D, L = 2 if cfg["bidirectional"] else 1, cfg["num_layers"]
    shape = (B, T, I) if cfg["batch_first"] else (T, B, I)
    x = torch.randn(*shape, dtype=dtype)
    n_state = 1 if kind == "rnn" else 2
    states = [torch.randn(L * D, B, H, dtype=dtype) for _ in range(n_state)] if with_state else []
    xs_o = [t.clone().requires_grad_() for t in [x, *states]]
    xs_r = [t.clone().requires_grad_() for t in [x, *states]]

    def pack_state(ts):
        if not ts:
            return None
        return ts[0] if kind == "rnn" else (ts[0], ts[1])

    out, final = ours(xs_o[0], pack_state(xs_o[1:]), lengths=lengths)
    if lengths is None:
        out_r, final_r = ref(xs_r[0], pack_state(xs_r[1:]))
    else:
        packed = pack_padded_sequence(xs_r[0], torch.tensor(lengths), batch_first=cfg["batch_first"],
                                      enforce_sorted=False)
        out_p, final_r = ref(packed, pack_state(xs_r[1:]))
        out_r, _ = pad_packed_sequence(out_p, batch_first=cfg["batch_first"], total_length=T)
    finals = (final,) if kind == "rnn" else final
    finals_r = (final_r,) if kind == "rnn" else final_r
    _assert_close(out, out_r, "output")
    for a, b in zip(finals, finals_r):
        _assert_close(a, b, "final state")
    # one random linear functional of everything the module returns
    torch.manual_seed(4)
    gs = [torch.randn_like(t) for t in (out, *finals)]
    sum((t * g).sum() for t, g in zip((out, *finals), gs)).backward()
    sum((t * g).sum() for t, g in zip((out_r, *finals_r), gs)).backward()
    for a, b, n in zip(xs_o, xs_r, ("dx", "dh0", "dc0")):
        _assert_close(a.grad, b.grad, n)
    _compare_params(ours, ref)
    return out, finals


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
@pytest.mark.parametrize("with_state", [False, True])
def test_sequence_matches_torch(kind, cfg, with_state):
    _run_pair(kind, cfg, None, with_state)


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
def test_padded_batch_with_lengths_matches_packed_sequence(kind, cfg):
    out, _finals = _run_pair(kind, cfg, [7, 3, 5], with_state=True)
    # outputs past each length are exactly zero
    o = out if cfg["batch_first"] else out.transpose(0, 1)
    assert (o[1, 3:] == 0).all() and (o[2, 5:] == 0).all()


def test_relu_rnn_and_float32_match_torch():
    _run_pair("rnn", CONFIGS[4], [2, 7, 4], with_state=True, dtype=torch.float32, nonlinearity="relu")
    _run_pair("lstm", CONFIGS[5], [2, 7, 4], with_state=False, dtype=torch.float32)


def test_lengths_equal_to_T_is_the_same_as_no_lengths():
    torch.manual_seed(5)
    m = rnn.LSTM(3, 4, num_layers=2, bidirectional=True)
    x = torch.randn(6, 2, 3)
    a, (h, _c) = m(x)
    b, (h2, _c2) = m(x, lengths=torch.tensor([6, 6]))
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(h, h2)


def test_forward_layers_and_dropout():
    torch.manual_seed(6)
    m = rnn.LSTM(3, 4, num_layers=3, bidirectional=True, batch_first=True, dropout=0.5)
    x = torch.randn(2, 5, 3)
    m.eval()
    layers, (h, _c) = m.forward_layers(x)
    assert len(layers) == 3 and all(t.shape == (2, 5, 8) for t in layers)
    out, _ = m(x)
    torch.testing.assert_close(out, layers[-1])
    # the top layer's final states are the ends of its output sequence (forward at T-1, backward at 0)
    torch.testing.assert_close(h[-2], out[:, -1, :4])
    torch.testing.assert_close(h[-1], out[:, 0, 4:])
    m.train()
    out_train, _ = m(x)
    assert not torch.allclose(out_train, out)   # dropout between layers is active in training


def test_forget_gate_bias_init():
    lstm = rnn.LSTM(3, 4, num_layers=2, bidirectional=True, forget_bias=1.0)
    for cell in lstm.cells:
        torch.testing.assert_close(cell.bias_ih[4:8] + cell.bias_hh[4:8], torch.ones(4))
        assert not torch.allclose(cell.bias_ih[:4], torch.ones(4))   # other gates untouched
    ref = rnn_cells.init_forget_gate_bias(nn.LSTM(3, 4), 1.0)
    torch.testing.assert_close(ref.bias_ih_l0[4:8] + ref.bias_hh_l0[4:8], torch.ones(4))
    cell = rnn_cells.LSTMCell(2, 3, forget_bias=2.0)
    torch.testing.assert_close(cell.bias_ih[3:6] + cell.bias_hh[3:6], torch.full((3,), 2.0))
    with pytest.raises(ValueError, match="no LSTM biases"):
        rnn_cells.init_forget_gate_bias(rnn.LSTM(2, 3, bias=False))
    with pytest.raises(ValueError, match="4\\*H"):
        rnn_cells.init_forget_gate_bias(nn.RNN(2, 3))


def test_no_bias_copies():
    ref = nn.LSTM(3, 4, bias=False, num_layers=2)
    ours = rnn.from_torch(ref)
    x = torch.randn(5, 2, 3)
    torch.testing.assert_close(ours(x)[0], ref(x)[0], atol=ATOL, rtol=0)


def test_elman_network_is_rnn_plus_readout():
    torch.manual_seed(7)
    net = bptt.ElmanNetwork(3, 5, 2)
    x = torch.randn(4, 6, 3)
    y, h_T = net(x)
    h, _ = net.rnn(x)
    torch.testing.assert_close(y, h @ net.U.weight.T)
    torch.testing.assert_close(h_T[0], h[:, -1])
    assert y.shape == (4, 6, 2)


# --------------------------------------------------------------------------------------------
# manual BPTT
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_manual_bptt_equals_autograd(seed):
    g = torch.Generator().manual_seed(seed)
    T, I, H, O = 6, 3, 4, 5  # noqa: E741 - I, O: input/output sizes as in the equations
    x = torch.randn(T, I, generator=g, dtype=torch.float64)
    targets = torch.randint(0, O, (T,), generator=g)
    W, V, b, U, h0 = (torch.randn(*s, generator=g, dtype=torch.float64).requires_grad_()
                      for s in ((H, I), (H, H), (H,), (O, H), (H,)))
    manual = bptt.elman_bptt(x, targets, W, V, b, U, h0)
    # autograd on the same forward
    h, hs = h0, []
    for t in range(T):
        h = torch.tanh(W @ x[t] + V @ h + b)
        h.retain_grad()
        hs.append(h)
    loss = torch.nn.functional.cross_entropy(torch.stack([U @ s for s in hs]), targets, reduction="sum")
    loss.backward()
    torch.testing.assert_close(manual["loss"], loss.detach())
    for name, p in (("dW", W), ("dV", V), ("db", b), ("dU", U), ("dh0", h0)):
        torch.testing.assert_close(manual[name].detach(), p.grad, atol=1e-10, rtol=1e-8, msg=name)
    torch.testing.assert_close(manual["dh"].detach(), torch.stack([s.grad for s in hs]), atol=1e-10, rtol=1e-8)
    # same forward as the module version
    cell = rnn_cells.RNNCell(I, H).double()
    with torch.no_grad():
        cell.weight_ih.copy_(W), cell.weight_hh.copy_(V), cell.bias_ih.copy_(b), cell.bias_hh.zero_()
    torch.testing.assert_close(cell(x[:1], h0[None].detach())[0], manual["h"][0].detach())


def test_manual_bptt_bad_shapes():
    with pytest.raises(ValueError, match="V must have shape"):
        bptt.elman_bptt(torch.randn(3, 2), torch.zeros(3, dtype=torch.long), torch.randn(4, 2),
                        torch.randn(4, 3), torch.randn(4), torch.randn(2, 4))
    with pytest.raises(ValueError, match="targets"):
        bptt.elman_bptt(torch.randn(3, 2), torch.zeros(2, dtype=torch.long), torch.randn(4, 2),
                        torch.randn(4, 4), torch.randn(4), torch.randn(2, 4))


# --------------------------------------------------------------------------------------------
# scalar mix
# --------------------------------------------------------------------------------------------
def test_scalar_mix():
    mix = elmo.ScalarMix(3)
    layers = [torch.full((2, 4), float(j)) for j in range(3)]
    torch.testing.assert_close(mix(layers), torch.full((2, 4), 1.0))     # equal weights at init
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor([0.0, 0.0, 100.0]))
        mix.gamma.fill_(2.0)
    torch.testing.assert_close(mix(torch.stack(layers)), torch.full((2, 4), 4.0))
    torch.testing.assert_close(mix.weights.sum(), torch.tensor(1.0))
    out = mix(layers)
    out.sum().backward()
    assert mix.gamma.grad is not None and mix.scalar_parameters.grad is not None
    with pytest.raises(ValueError, match="built for 3 layers, got 2"):
        mix(layers[:2])
    with pytest.raises(ValueError, match="same shape"):
        mix([layers[0], layers[1], torch.zeros(3, 4)])
    with pytest.raises(TypeError, match="list of tensors"):
        mix("abc")


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------
def test_wrong_input_size_is_a_clear_error():
    m = rnn.LSTM(3, 4, batch_first=True)
    with pytest.raises(ValueError, match=r"input_size=3.*\(2, 5, 7\)"):
        m(torch.randn(2, 5, 7))
    with pytest.raises(ValueError, match="3 dimensions"):
        m(torch.randn(5, 3))
    with pytest.raises(ValueError, match=r"input_size=3"):
        rnn_cells.RNNCell(3, 4)(torch.randn(2, 5))
    with pytest.raises(TypeError, match="floating-point"):
        m(torch.ones(2, 5, 3, dtype=torch.long))


def test_mismatched_hidden_state_is_a_clear_error():
    m = rnn.LSTM(3, 4, num_layers=2)
    x = torch.randn(5, 2, 3)
    with pytest.raises(ValueError, match=r"h0 must have shape .*\(2, 2, 4\)"):
        m(x, (torch.zeros(1, 2, 4), torch.zeros(2, 2, 4)))
    with pytest.raises(ValueError, match=r"c0 must have shape"):
        m(x, (torch.zeros(2, 2, 4), torch.zeros(2, 3, 4)))
    with pytest.raises(TypeError, match=r"tuple \(h0, c0\)"):
        m(x, torch.zeros(2, 2, 4))
    with pytest.raises(ValueError, match=r"h0 must have shape"):
        rnn.RNN(3, 4, bidirectional=True)(x, torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match=r"c must have shape \(B, hidden_size\)"):
        rnn_cells.LSTMCell(3, 4)(torch.randn(2, 3), (torch.zeros(2, 4), torch.zeros(2, 5)))
    with pytest.raises(ValueError, match=r"h must have shape"):
        rnn_cells.RNNCell(3, 4)(torch.randn(2, 3), torch.zeros(3, 4))


def test_bad_lengths_are_clear_errors():
    m = rnn.RNN(3, 4)
    x = torch.randn(5, 2, 3)
    with pytest.raises(ValueError, match=r"at most the sequence length T=5, got a length of 6"):
        m(x, lengths=torch.tensor([6, 2]))
    with pytest.raises(ValueError, match="at least 1"):
        m(x, lengths=[0, 2])
    with pytest.raises(ValueError, match="one entry per sequence"):
        m(x, lengths=[5, 2, 1])
    with pytest.raises(TypeError, match="integer"):
        m(x, lengths=torch.tensor([5.0, 2.0]))


def test_non_tensor_and_wrong_module_are_type_errors():
    with pytest.raises(TypeError, match="input must be a torch.Tensor, got list"):
        rnn.LSTM(3, 4)([[1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        rnn_cells.LSTMCell(3, 4)(None)
    with pytest.raises(TypeError, match="from_torch expects"):
        rnn.from_torch(nn.GRU(3, 4))
    with pytest.raises(TypeError, match="expected an nn.LSTM"):
        rnn.LSTM.from_torch(nn.RNN(3, 4))
    with pytest.raises(ValueError, match="proj_size"):
        rnn.from_torch(nn.LSTM(3, 4, proj_size=2))
    with pytest.raises(ValueError, match="nonlinearity"):
        rnn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be positive"):
        rnn.LSTM(3, 0)


# --------------------------------------------------------------------------------------------
# character language model helpers (notebooks 03 and 04)
# --------------------------------------------------------------------------------------------
TEXT = "to be, or not to be, that is the question:\nwhether 'tis nobler in the mind to suffer\n" * 20


def test_char_corpus_split_and_batches():
    corpus = char_lm.CharCorpus(TEXT, val_fraction=0.1)
    assert corpus.decode(corpus.encode("to be")) == "to be"
    assert len(corpus.train_ids) + len(corpus.val_ids) == len(TEXT)
    assert corpus.decode(torch.cat([corpus.train_ids, corpus.val_ids])) == TEXT     # contiguous split
    x, y = corpus.batch("train", 4, 10, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 10)
    assert torch.equal(x[:, 1:], y[:, :-1])                                         # y is x shifted by one
    with pytest.raises(ValueError, match="not in the vocabulary"):
        corpus.encode("Z")
    with pytest.raises(ValueError, match="longer than the val split"):
        corpus.batch("val", 2, 10_000)
    with pytest.raises(TypeError, match="text must be a str"):
        char_lm.CharCorpus(["a"])


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_char_lm_learns_and_evaluates(cell):
    torch.manual_seed(0)
    corpus = char_lm.CharCorpus(TEXT)
    lm = char_lm.CharLM(corpus.vocab_size, 32, cell=cell)
    before = char_lm.evaluate_nll(lm, corpus.val_ids, seq_len=16, batch_size=4)
    assert abs(before - torch.log(torch.tensor(float(corpus.vocab_size))).item()) < 0.5   # ≈ uniform at init
    opt = torch.optim.Adam(lm.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    for _ in range(60):
        loss = char_lm.char_lm_loss(lm, corpus.batch("train", 16, 32, g))
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = char_lm.evaluate_nll(lm, corpus.val_ids, seq_len=16, batch_size=4)
    assert after < 0.6 * before
    # evaluate_nll with state carried equals one long pass when there is a single stream
    ids = corpus.val_ids[:41]
    logits, _ = lm(ids[None, :-1])
    one_pass = F.cross_entropy(logits[0], ids[1:]).item()
    assert abs(char_lm.evaluate_nll(lm, ids, seq_len=7, batch_size=1) - one_pass) < 1e-5
    out = char_lm.generate(lm, corpus, "to ", 20, temperature=0.5, generator=torch.Generator().manual_seed(0))
    assert out.startswith("to ") and len(out) == 23
    again = char_lm.generate(lm, corpus, "to ", 20, temperature=0.5, generator=torch.Generator().manual_seed(0))
    assert out == again
    twin = rnn.from_torch(lm.rnn)                               # the fused core has a from-scratch twin
    h, _ = twin(lm.embed(ids[None]))
    torch.testing.assert_close(lm.head(h), lm(ids[None])[0], atol=1e-5, rtol=0)


def test_char_lm_bad_arguments():
    with pytest.raises(ValueError, match="cell must be"):
        char_lm.CharLM(10, 8, cell="gru")
    with pytest.raises(ValueError, match="forget_bias only applies"):
        char_lm.CharLM(10, 8, cell="rnn", forget_bias=1.0)
    lm = char_lm.CharLM(10, 8, cell="lstm", forget_bias=1.0)
    torch.testing.assert_close(lm.rnn.bias_ih_l0[8:16] + lm.rnn.bias_hh_l0[8:16], torch.ones(8))
    with pytest.raises(ValueError, match="ids must have 2 dimensions"):
        lm(torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="prompt"):
        char_lm.generate(lm, char_lm.CharCorpus(TEXT), "", 5)
