"""Bad calls to coursekit.rnn (cells, layers, BPTT, ELMo's scalar mix, the character LM and the seq2seq
models): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
"""

from __future__ import annotations

import torch
from helpers.bad_inputs import Bad, bad_call_test, f64, i64, ones_bool, randn
from torch import nn

from coursekit.rnn import bptt, char_lm, elmo, seq2seq
from coursekit.rnn import cells as rnn_cells
from coursekit.rnn import layers as rnn
from coursekit.translation import TranslationBatch

# ==============================================================================================
# coursekit.rnn.seq2seq
# ==============================================================================================

def s2s_cfg(**kw):
    return seq2seq.Seq2SeqConfig(**(dict(src_vocab_size=13, tgt_vocab_size=11, d_emb=8, d_hidden=12) | kw))


def s2s(**kw):
    torch.manual_seed(0)
    return seq2seq.Seq2Seq(s2s_cfg(**kw)).eval()


def src_and_mask(B=2, S=5, left=False):
    lengths = torch.tensor([S, 2, 3][:B])
    mask = torch.arange(S)[None] < lengths[:, None]
    if left:
        mask = mask.flip(1)                                 # padding first, real tokens last
    return torch.randint(4, 13, (B, S)).masked_fill(~mask, 0), mask


def tgt(B=2, T=4):
    return torch.randint(4, 11, (B, T))


def s2s_batch(tgt_out):
    src, mask = src_and_mask()
    return TranslationBatch(src, mask, mask.sum(1), tgt(), tgt_out, ones_bool(2, 4), torch.arange(2))


def dec_state(model):
    return model.encode(*src_and_mask())


SEQ2SEQ = [
    Bad("target pad id >= vocabulary", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(pad_id=11), ValueError,
        r"pad_id must be an id in \[0, 11\), got 11"),
    Bad("source pad id >= source vocabulary", seq2seq.Seq2SeqConfig,
        lambda: s2s_cfg(src_vocab_size=5, tgt_vocab_size=11, pad_id=7), ValueError,
        r"pad_id must be an id in \[0, 5\) \(the source vocabulary\), got 7"),
    Bad("negative bos", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(bos_id=-1), ValueError,
        r"bos_id must be an id in \[0, 11\), got -1"),
    Bad("dropout > 1", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("dropout as a string", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(dropout="0.1"), TypeError,
        r"dropout must be a number, got str"),
    Bad("unknown cell", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(cell="rnn"), ValueError,
        r"cell must be one of \['gru', 'lstm'\], got 'rnn'"),
    Bad("unknown style", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="dot", style="vaswani"), ValueError,
        r"style must be one of .*got 'vaswani'"),
    Bad("unknown score", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="bilinear"), ValueError,
        r"attention must be None or one of dot.*got 'bilinear'"),
    Bad("location score without max_src_len", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="location"),
        ValueError, r"location score needs max_src_len"),
    Bad("zero attention width", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="additive", d_attn=0), ValueError,
        r"d_attn must be positive, got 0"),
    Bad("zero max_src_len", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(max_src_len=0), ValueError,
        r"max_src_len must be positive, got 0"),
    Bad("input feeding without attention", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(input_feeding=True), ValueError,
        r"input_feeding.*needs attention"),
    Bad("bidirectional with an odd width", seq2seq.Seq2SeqConfig,
        lambda: s2s_cfg(bidirectional=True, d_hidden=7), ValueError, r"d_hidden must be even, got 7"),
    Bad("shared embeddings, two vocabularies", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(share_embeddings=True),
        ValueError, r"src_vocab_size == tgt_vocab_size, got 13 and 11"),
    Bad("zero vocabulary", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(src_vocab_size=0), ValueError,
        r"src_vocab_size must be positive, got 0"),

    Bad("a dict for a config", seq2seq.Encoder, lambda: seq2seq.Encoder({"d_emb": 8}), TypeError,
        r"config must be a Seq2SeqConfig, got dict"),
    Bad("left-padded src_mask (read by its row sums)", seq2seq.Encoder.forward,
        lambda: s2s().encoder(*src_and_mask(left=True)), ValueError,
        r"src_mask must be right-padded.*row 1"),
    Bad("float src", seq2seq.Encoder.forward,
        lambda: s2s().encoder(src_and_mask()[0].float(), src_and_mask()[1]), TypeError,
        r"src must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("float src_mask", seq2seq.Encoder.forward,
        lambda: s2s().encoder(src_and_mask()[0], src_and_mask()[1].float()), TypeError,
        r"src_mask must have dtype torch.bool, got torch.float32"),
    Bad("a row without real tokens", seq2seq.Encoder.forward,
        lambda: s2s().encoder(torch.tensor([[5, 6], [0, 0]]), torch.tensor([[True, True], [False, False]])),
        ValueError, r"every source sentence needs at least one real token"),

    Bad("a dict for a config", seq2seq.Decoder, lambda: seq2seq.Decoder({"d_emb": 8}), TypeError,
        r"config must be a Seq2SeqConfig, got dict"),
    Bad("memory as a list", seq2seq.Decoder.init_state,
        lambda: s2s(attention="dot").decoder.init_state([[0.0]], ones_bool(1, 1), randn(1, 1, 12)), TypeError,
        r"memory must be a torch.Tensor, got list"),
    Bad("src_mask for another source length", seq2seq.Decoder.init_state,
        lambda: s2s(attention="dot").decoder.init_state(randn(2, 5, 12), ones_bool(2, 4), randn(2, 1, 12)),
        ValueError, r"src_mask must have shape \(2, 5\).*got \(2, 4\)"),
    Bad("float y_prev", seq2seq.Decoder.step,
        lambda: (lambda m: m.decoder.step(torch.tensor([2.0, 2.0]), dec_state(m)))(s2s()), TypeError,
        r"y_prev must be an integer.*torch.float32"),
    Bad("y_prev >= vocabulary", seq2seq.Decoder.step,
        lambda: (lambda m: m.decoder.step(torch.tensor([2, 11]), dec_state(m)))(s2s()), ValueError,
        r"y_prev must hold ids in \[0, 11\), got values in \[2, 11\]"),
    Bad("2-D y_prev", seq2seq.Decoder.step,
        lambda: (lambda m: m.decoder.step(torch.tensor([[2], [2]]), dec_state(m)))(s2s()), ValueError,
        r"y_prev must have 1 dimensions, got shape \(2, 1\)"),
    Bad("state not a dict", seq2seq.Decoder.step, lambda: s2s().decoder.step(torch.tensor([2, 2]), randn(2, 1, 12)),
        TypeError, r"state must be the dict of Decoder.init_state, got Tensor"),
    Bad("1-D tgt_in", seq2seq.Decoder.forward,
        lambda: (lambda m: m.decoder(torch.tensor([2, 5]), dec_state(m)))(s2s()), ValueError,
        r"tgt_in must have 2 dimensions, got shape \(2,\)"),
    Bad("zero-length tgt_in", seq2seq.Decoder.forward,
        lambda: (lambda m: m.decoder(tgt(T=0), dec_state(m)))(s2s()), ValueError,
        r"tgt_in must hold at least one position, got shape \(2, 0\)"),
    Bad("teacher forcing 2", seq2seq.Decoder.forward,
        lambda: (lambda m: m.decoder(tgt(), dec_state(m), teacher_forcing=2.0))(s2s()), ValueError,
        r"teacher_forcing must lie in \[0, 1\], got 2.0"),

    Bad("a dict for a config", seq2seq.Seq2Seq, lambda: seq2seq.Seq2Seq({"d_emb": 8}), TypeError,
        r"config must be a Seq2SeqConfig, got dict"),
    Bad("float src", seq2seq.Seq2Seq.forward, lambda: s2s()(src_and_mask()[0].float(), src_and_mask()[1], tgt()),
        TypeError, r"src must be an integer.*torch.float32"),
    Bad("uint8 src", seq2seq.Seq2Seq.forward,
        lambda: s2s()(src_and_mask()[0].to(torch.uint8), src_and_mask()[1], tgt()), TypeError,
        r"src must be an integer.*torch.uint8"),
    Bad("src id >= vocabulary", seq2seq.Seq2Seq.forward,
        lambda: s2s()(torch.tensor([[5, 13]]), ones_bool(1, 2), tgt(B=1)), ValueError,
        r"src must hold ids in \[0, 13\), got values in \[5, 13\]"),
    Bad("negative src id", seq2seq.Seq2Seq.forward,
        lambda: s2s()(torch.tensor([[5, -2]]), ones_bool(1, 2), tgt(B=1)), ValueError,
        r"src must hold ids in \[0, 13\), got values in \[-2, 5\]"),
    Bad("float src_mask", seq2seq.Seq2Seq.forward,
        lambda: s2s()(src_and_mask()[0], src_and_mask()[1].float(), tgt()), TypeError,
        r"src_mask must have dtype torch.bool, got torch.float32"),
    Bad("src_mask of another shape", seq2seq.Seq2Seq.forward,
        lambda: s2s()(src_and_mask()[0], ones_bool(2, 4), tgt()), ValueError,
        r"src_mask must have the shape of src \(2, 5\), got \(2, 4\)"),
    Bad("left-padded src_mask", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(left=True), tgt()), ValueError,
        r"src_mask must be right-padded"),
    Bad("float tgt_in", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(), tgt().float()), TypeError,
        r"tgt_in must be an integer.*torch.float32"),
    Bad("tgt_in id >= vocabulary", seq2seq.Seq2Seq.forward,
        lambda: s2s()(*src_and_mask(), torch.full((2, 3), 11)), ValueError,
        r"tgt_in must hold ids in \[0, 11\), got values in \[11, 11\]"),
    Bad("batches differ", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(B=2), tgt(B=3)), ValueError,
        r"src has 2 sentences but tgt_in has 3"),
    Bad("teacher forcing 1.5", seq2seq.Seq2Seq.forward,
        lambda: s2s()(*src_and_mask(), tgt(), teacher_forcing=1.5), ValueError,
        r"teacher_forcing must lie in \[0, 1\], got 1.5"),
    Bad("generator of the wrong type", seq2seq.Seq2Seq.forward,
        lambda: s2s()(*src_and_mask(), tgt(), teacher_forcing=0.5, generator=1), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("empty batch", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(B=0), tgt(B=0)), ValueError,
        r"src must hold at least one sentence, got shape \(0, 5\)"),
    Bad("zero-length source", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(S=0), tgt()), ValueError,
        r"every source sentence needs at least one real token|src must hold at least one position"),
    Bad("source longer than max_src_len", seq2seq.Seq2Seq.forward,
        lambda: s2s(attention="location", max_src_len=4)(*src_and_mask(S=5), tgt()), ValueError,
        r"source length 5 exceeds max_src_len=4"),
    Bad("target id >= vocabulary", seq2seq.Seq2Seq.loss, lambda: s2s().loss(s2s_batch(torch.full((2, 4), 11))),
        ValueError, r"batch.tgt_out must hold class ids in \[0, 11\).*got values in \[11, 11\]"),
    Bad("float targets", seq2seq.Seq2Seq.loss, lambda: s2s().loss(s2s_batch(torch.ones(2, 4))), TypeError,
        r"batch.tgt_out must be an integer.*torch.float32"),
    Bad("negative target other than padding", seq2seq.Seq2Seq.loss,
        lambda: s2s().loss(s2s_batch(torch.full((2, 4), -100))), ValueError,
        r"batch.tgt_out must hold class ids in \[0, 11\).*got values in \[-100, -100\]"),
    Bad("label smoothing > 1", seq2seq.Seq2Seq.loss,
        lambda: s2s().loss(s2s_batch(tgt()), label_smoothing=1.5), ValueError,
        r"label_smoothing must lie in \[0, 1\], got 1.5"),
    Bad("zero beam", seq2seq.Seq2Seq.translate, lambda: s2s().translate(*src_and_mask(), beam_size=0), ValueError,
        r"beam_size must be positive, got 0"),
    Bad("zero max_len", seq2seq.Seq2Seq.translate, lambda: s2s().translate(*src_and_mask(), max_len=0), ValueError,
        r"max_len must be positive, got 0"),

    Bad("unknown kind", seq2seq.teacher_forcing_schedule,
        lambda: seq2seq.teacher_forcing_schedule(1, 10, "cosine"), ValueError,
        r"kind must be 'linear', 'exponential' or 'inverse_sigmoid', got 'cosine'"),
    Bad("zero total", seq2seq.teacher_forcing_schedule, lambda: seq2seq.teacher_forcing_schedule(1, 0), ValueError,
        r"total_steps must be positive, got 0"),
    Bad("negative step", seq2seq.teacher_forcing_schedule, lambda: seq2seq.teacher_forcing_schedule(-1, 10),
        ValueError, r"step must be a non-negative int, got -1"),
    Bad("float step", seq2seq.teacher_forcing_schedule, lambda: seq2seq.teacher_forcing_schedule(1.5, 10),
        (ValueError, TypeError), r"step must be a non-negative int, got 1.5"),
    Bad("floor > 1", seq2seq.teacher_forcing_schedule,
        lambda: seq2seq.teacher_forcing_schedule(1, 10, floor=1.5), ValueError, r"floor must lie in \[0, 1\], got 1.5"),
    Bad("sharpness as a string", seq2seq.teacher_forcing_schedule,
        lambda: seq2seq.teacher_forcing_schedule(1, 10, sharpness="10"), TypeError,
        r"sharpness must be a number, got str"),
]


# ==============================================================================================
# coursekit.rnn.layers, coursekit.rnn.cells, coursekit.rnn.bptt, coursekit.rnn.elmo, coursekit.rnn.char_lm
# ==============================================================================================

def manual_bptt(H=3, I=2, O=4, **kw):  # noqa: E741 - I, O as in the equations
    """A valid call of elman_bptt (T = 5 steps) with the arguments in ``kw`` replaced."""
    args = dict(x=randn(5, I), targets=torch.tensor([0, 1, 2, 3, 0]), W=randn(H, I), V=randn(H, H), b=randn(H),
                U=randn(O, H))
    return bptt.elman_bptt(**(args | kw))


TEXT = "to be or not to be, that is the question; " * 3


def corpus():
    return char_lm.CharCorpus(TEXT)


def tiny_char_lm():
    return char_lm.CharLM(corpus().vocab_size, 8)


RNN = [
    Bad("zero input size", rnn_cells.RNNCell,
        lambda: rnn_cells.RNNCell(0, 4), ValueError, r"input_size must be positive, got 0"),
    Bad("unknown nonlinearity", rnn_cells.RNNCell, lambda: rnn_cells.RNNCell(2, 4, nonlinearity="sigmoid"), ValueError,
        r"nonlinearity must be one of \['relu', 'tanh'\], got 'sigmoid'"),
    Bad("list x", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)([[0.0, 0.0]]), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("3-D x", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)(randn(1, 3, 2)), ValueError,
        r"x must have 2 dimensions, got shape \(1, 3, 2\)"),
    Bad("wrong width", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)(randn(3, 5)), ValueError,
        r"x must have shape \(B, input_size=2\), got \(3, 5\)"),
    Bad("h for another batch", rnn_cells.RNNCell.forward,
        lambda: rnn_cells.RNNCell(2, 4)(randn(3, 2), randn(2, 4)), ValueError,
        r"h must have shape \(B, hidden_size\) = \(3, 4\).*got \(2, 4\)"),
    Bad("integer x", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)(torch.ones(3, 2, dtype=i64)), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),
    Bad("float64 x into a float32 cell", rnn_cells.RNNCell.forward,
        lambda: rnn_cells.RNNCell(2, 4)(randn(3, 2, dtype=f64)),
        TypeError, r"x has dtype torch.float64.*torch.float32"),
    Bad("float64 h with float32 x", rnn_cells.RNNCell.forward,
        lambda: rnn_cells.RNNCell(2, 4)(randn(3, 2), randn(3, 4, dtype=f64)), TypeError,
        r"h has dtype torch.float64.*torch.float32"),
    Bad("not an nn.RNNCell", rnn_cells.RNNCell.from_torch,
        lambda: rnn_cells.RNNCell.from_torch(nn.LSTMCell(2, 3)), TypeError,
        r"expected an nn.RNNCell, got LSTMCell"),

    Bad("NaN forget bias", rnn_cells.LSTMCell, lambda: rnn_cells.LSTMCell(2, 3, forget_bias=float("nan")), ValueError,
        r"forget_bias must be a finite number, got nan"),
    Bad("state of three tensors", rnn_cells.LSTMCell.forward,
        lambda: rnn_cells.LSTMCell(2, 3)(randn(1, 2), (randn(1, 3), randn(1, 3), randn(1, 3))), TypeError,
        r"state must be a tuple \(h, c\), got a tuple of 3"),
    Bad("c for another batch", rnn_cells.LSTMCell.forward,
        lambda: rnn_cells.LSTMCell(2, 3)(randn(2, 2), (randn(2, 3), randn(1, 3))), ValueError,
        r"c must have shape \(B, hidden_size\) = \(2, 3\).*got \(1, 3\)"),
    Bad("a tensor for the state", rnn_cells.LSTMCell.forward,
        lambda: rnn_cells.LSTMCell(2, 3)(randn(2, 2), randn(2, 3)),
        TypeError, r"state must be a tuple \(h, c\), got Tensor"),
    Bad("list x", rnn_cells.LSTMCell.gates,
        lambda: rnn_cells.LSTMCell(2, 3).gates([[0.0, 0.0]], (randn(1, 3), randn(1, 3))),
        TypeError, r"x must be a torch.Tensor, got list"),
    Bad("h of another width", rnn_cells.LSTMCell.gates,
        lambda: rnn_cells.LSTMCell(2, 3).gates(randn(1, 2), (randn(1, 4), randn(1, 3))), ValueError,
        r"h must have shape \(B, hidden_size\) = \(1, 3\)"),
    Bad("not an nn.LSTMCell", rnn_cells.LSTMCell.from_torch,
        lambda: rnn_cells.LSTMCell.from_torch(nn.RNNCell(2, 3)), TypeError,
        r"expected an nn.LSTMCell, got RNNCell"),

    Bad("an RNN whose bias happens to have 4*k rows", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(nn.RNN(2, 4)), ValueError, r"RNN holds no LSTM"),
    Bad("an RNN", rnn_cells.init_forget_gate_bias, lambda: rnn_cells.init_forget_gate_bias(nn.RNN(2, 3)), ValueError,
        r"RNN holds no LSTM.*4\*H"),
    Bad("value as a string", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(nn.LSTM(2, 3), "one"),
        TypeError, r"value must be a number, got str"),
    Bad("infinite value", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(nn.LSTM(2, 3), float("inf")), ValueError,
        r"value must be a finite number, got inf"),
    Bad("a tensor for a module", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(randn(8)), TypeError,
        r"module must be an nn.Module, got Tensor"),
    Bad("LSTM without biases", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(rnn.LSTM(2, 3, bias=False)), ValueError, r"no LSTM biases"),

    Bad("list lengths", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask([2, 3], 4), TypeError,
        r"lengths must be a torch.Tensor, got list"),
    Bad("float lengths", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([2.5, 3.0]), 4), TypeError,
        r"lengths must be an integer tensor, got torch.float32"),
    Bad("length above T", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([2, 5]), 4), ValueError,
        r"lengths must lie in \[0, 4\], got values in \[2, 5\]"),
    Bad("negative length", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([-1, 2]), 4), ValueError,
        r"lengths must lie in \[0, 4\], got values in \[-1, 2\]"),
    Bad("zero T", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([0]), 0), ValueError,
        r"T must be positive, got 0"),
    Bad("2-D lengths", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([[1, 2]]), 4), ValueError,
        r"lengths must have 1 dimensions, got shape \(1, 2\)"),

    Bad("zero input size", rnn.RNN, lambda: rnn.RNN(0, 4), ValueError, r"input_size must be positive, got 0"),
    Bad("zero layers", rnn.RNN, lambda: rnn.RNN(2, 4, num_layers=0), ValueError, r"num_layers must be positive"),
    Bad("dropout > 1", rnn.RNN, lambda: rnn.RNN(2, 4, dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("dropout as a string", rnn.RNN, lambda: rnn.RNN(2, 4, dropout="x"), TypeError,
        r"dropout must be a number, got str"),
    Bad("unknown nonlinearity", rnn.RNN, lambda: rnn.RNN(2, 4, nonlinearity="gelu"), ValueError,
        r"nonlinearity must be one of"),
    Bad("forward: list input", rnn.RNN, lambda: rnn.RNN(2, 4)([[[0.0, 0.0]]]), TypeError,
        r"input must be a torch.Tensor, got list"),
    Bad("forward: 2-D input", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2)), ValueError,
        r"input must have 3 dimensions, got shape \(3, 2\)"),
    Bad("forward: wrong width", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 5)), ValueError,
        r"input must have shape \(T, B, input_size\) with input_size=2, got \(3, 2, 5\)"),
    Bad("forward: zero time steps", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(0, 2, 2)), ValueError,
        r"input has zero time steps"),
    Bad("forward: empty batch", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 0, 2)), ValueError,
        r"input has an empty batch, got shape \(3, 0, 2\)"),
    Bad("forward: h0 of another shape", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), randn(1, 3, 4)), ValueError,
        r"h0 must have shape \(num_layers\*num_directions, B, hidden_size\) = \(1, 2, 4\).*got \(1, 3, 4\)"),
    Bad("forward: float lengths", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=torch.tensor([3.0, 2.0])),
        TypeError, r"lengths must be an integer tensor, got torch.float32"),
    Bad("forward: length above T", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=torch.tensor([4, 2])),
        ValueError, r"lengths must be at most the sequence length T=3, got a length of 4"),
    Bad("forward: zero length", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=[3, 0]), ValueError,
        r"lengths must be at least 1, got 0"),
    Bad("forward: one length for two sequences", rnn.RNN,
        lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=torch.tensor([3])), ValueError,
        r"one entry per sequence \(B=2\), got 1"),
    Bad("forward: float64 input into a float32 network", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2, dtype=f64)),
        TypeError, r"input has dtype torch.float64.*torch.float32"),
    Bad("forward: h0 of another dtype", rnn.RNN,
        lambda: rnn.RNN(2, 4)(randn(3, 2, 2), randn(1, 2, 4, dtype=f64)), TypeError,
        r"h0 has dtype torch.float64.*torch.float32"),
    Bad("forward_layers: 2-D input", rnn.RNN, lambda: rnn.RNN(2, 4).forward_layers(randn(3, 2)), ValueError,
        r"input must have 3 dimensions"),
    Bad("not an nn.RNN", rnn.RNN.from_torch, lambda: rnn.RNN.from_torch(nn.LSTM(2, 3)), TypeError,
        r"expected an nn.RNN, got LSTM"),

    Bad("forget bias as a string", rnn.LSTM, lambda: rnn.LSTM(2, 3, forget_bias="1"), TypeError,
        r"forget_bias must be a number, got str"),
    Bad("forward: a tensor for the state", rnn.LSTM, lambda: rnn.LSTM(2, 3)(randn(4, 2, 2), randn(1, 2, 3)), TypeError,
        r"state must be a tuple \(h0, c0\), got Tensor"),
    Bad("forward: c0 of another shape", rnn.LSTM,
        lambda: rnn.LSTM(2, 3)(randn(4, 2, 2), (randn(1, 2, 3), randn(2, 2, 3))), ValueError,
        r"c0 must have shape .* = \(1, 2, 3\).*got \(2, 2, 3\)"),
    Bad("not an nn.LSTM", rnn.LSTM.from_torch, lambda: rnn.LSTM.from_torch(nn.GRU(2, 3)), TypeError,
        r"expected an nn.LSTM, got GRU"),

    Bad("zero outputs", bptt.ElmanNetwork, lambda: bptt.ElmanNetwork(2, 4, 0), ValueError,
        r"output_size must be positive, got 0"),
    Bad("zero hidden size", bptt.ElmanNetwork, lambda: bptt.ElmanNetwork(2, 0, 3), ValueError,
        r"hidden_size must be positive, got 0"),
    Bad("2-D x", bptt.ElmanNetwork.forward, lambda: bptt.ElmanNetwork(2, 4, 3)(randn(5, 2)), ValueError,
        r"input must have 3 dimensions, got shape \(5, 2\)"),
    Bad("length above T", bptt.ElmanNetwork.forward,
        lambda: bptt.ElmanNetwork(2, 4, 3)(randn(2, 5, 2), lengths=torch.tensor([6, 2])), ValueError,
        r"at most the sequence length T=5"),

    Bad("zero layers", elmo.ScalarMix, lambda: elmo.ScalarMix(0), ValueError, r"num_layers must be positive, got 0"),
    Bad("wrong number of layers", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(3)([randn(2, 4)] * 2), ValueError,
        r"built for 3 layers, got 2"),
    Bad("layers of different shapes", elmo.ScalarMix.forward,
        lambda: elmo.ScalarMix(2)([randn(2, 4), randn(2, 5)]), ValueError,
        r"layers\[0\] is \(2, 4\), layers\[1\] is \(2, 5\)"),
    Bad("list of lists", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(2)([[0.0], [1.0]]), TypeError,
        r"layers\[0\] must be a torch.Tensor, got list"),
    Bad("integer layers", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(2)(torch.ones(2, 3, dtype=i64)), TypeError,
        r"layers\[0\] must be a floating-point tensor, got torch.int64"),
    Bad("0-d tensor", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(1)(torch.tensor(1.0)), ValueError,
        r"layers must be a list of tensors or a tensor \(L, \.\.\.\), got a 0-d tensor"),
    Bad("layers of different dtypes", elmo.ScalarMix.forward,
        lambda: elmo.ScalarMix(2)([randn(2, 4), randn(2, 4, dtype=f64)]), TypeError,
        r"layers\[1\] has dtype torch.float64 but layers\[0\] has torch.float32"),
    Bad("a string", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(2)("ab"), TypeError,
        r"layers must be a list of tensors or a tensor \(L, \.\.\.\), got str"),

    Bad("float targets", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0.0, 1.0, 2.0, 3.0, 0.0])),
        TypeError, r"targets must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("target >= number of outputs", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0, 1, 2, 4, 0])),
        ValueError, r"targets must hold class ids in \[0, 4\), got values in \[0, 4\]"),
    Bad("negative target", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0, 1, -1, 3, 0])), ValueError,
        r"targets must hold class ids in \[0, 4\), got values in \[-1, 3\]"),
    Bad("ignore index -100 (not supported by the hand-written gradient)", bptt.elman_bptt,
        lambda: manual_bptt(targets=torch.tensor([0, 1, -100, 3, 0])), ValueError,
        r"targets must hold class ids in \[0, 4\), got values in \[-100, 3\]"),
    Bad("one target too few", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0, 1, 2, 3])), ValueError,
        r"targets must have one class per step \(T=5\), got 4"),
    Bad("W of another shape", bptt.elman_bptt, lambda: manual_bptt(W=randn(3, 5)), ValueError,
        r"W must have shape \(3, 2\), got \(3, 5\)"),
    Bad("list V", bptt.elman_bptt, lambda: manual_bptt(V=[[0.0] * 3] * 3), TypeError,
        r"V must be a torch.Tensor, got list"),
    Bad("list U", bptt.elman_bptt, lambda: manual_bptt(U=[[0.0] * 3] * 4), TypeError,
        r"U must be a torch.Tensor, got list"),
    Bad("h0 of another width", bptt.elman_bptt, lambda: manual_bptt(h0=randn(4)), ValueError,
        r"h0 must have shape \(3,\), got \(4,\)"),
    Bad("float64 x with float32 weights", bptt.elman_bptt, lambda: manual_bptt(x=randn(5, 2, dtype=f64)), TypeError,
        r"W has dtype torch.float32 but x has torch.float64"),
    Bad("zero time steps", bptt.elman_bptt, lambda: manual_bptt(x=randn(0, 2), targets=torch.tensor([], dtype=i64)),
        ValueError, r"x must hold at least one time step, got shape \(0, 2\)"),
    Bad("list x", bptt.elman_bptt, lambda: manual_bptt(x=[[0.0, 0.0]]), TypeError,
        r"x must be a torch.Tensor, got list"),

    Bad("not a str", char_lm.CharCorpus, lambda: char_lm.CharCorpus(["a"] * 30), TypeError,
        r"text must be a str, got list"),
    Bad("val_fraction 1", char_lm.CharCorpus, lambda: char_lm.CharCorpus(TEXT, val_fraction=1.0), ValueError,
        r"val_fraction must lie in \(0, 1\), got 1.0"),
    Bad("val_fraction as a string", char_lm.CharCorpus, lambda: char_lm.CharCorpus(TEXT, val_fraction="0.1"), TypeError,
        r"val_fraction must be a number, got str"),
    Bad("unknown character", char_lm.CharCorpus.encode, lambda: corpus().encode("to bé"), ValueError,
        r"characters not in the vocabulary: \['é'\]"),
    Bad("negative id (would read from the end)", char_lm.CharCorpus.decode, lambda: corpus().decode([1, -1]),
        ValueError, r"ids must lie in \[0, \d+\).*got \[-1\]"),
    Bad("float ids", char_lm.CharCorpus.decode, lambda: corpus().decode([1.0, 2.0]), TypeError,
        r"ids must hold ints, got \[1.0, 2.0\]"),
    Bad("unknown split", char_lm.CharCorpus.batch, lambda: corpus().batch("test", 2, 4), ValueError,
        r"split must be one of \['train', 'val'\], got 'test'"),
    Bad("zero batch", char_lm.CharCorpus.batch, lambda: corpus().batch("train", 0, 4), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("window as long as the split", char_lm.CharCorpus.batch,
        lambda: corpus().batch("val", 2, len(corpus().val_ids) - 1), ValueError,
        r"seq_len=\d+ is longer than the val split allows"),
    Bad("zero embedding width", char_lm.CharLM, lambda: char_lm.CharLM(10, 8, embed_dim=0), ValueError,
        r"embed_dim must be positive, got 0"),
    Bad("zero layers", char_lm.CharLM, lambda: char_lm.CharLM(10, 8, num_layers=0), ValueError,
        r"num_layers must be positive, got 0"),
    Bad("unknown cell", char_lm.CharLM, lambda: char_lm.CharLM(10, 8, cell="gru"), ValueError,
        r"cell must be 'rnn' or 'lstm', got 'gru'"),
    Bad("id >= vocabulary", char_lm.CharLM.forward, lambda: char_lm.CharLM(10, 8)(torch.tensor([[1, 10]])), ValueError,
        r"ids must hold ids in \[0, 10\), got values in \[1, 10\]"),
    Bad("float ids", char_lm.CharLM.forward, lambda: char_lm.CharLM(10, 8)(torch.ones(1, 3)), TypeError,
        r"ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("empty batch", char_lm.CharLM.forward, lambda: char_lm.CharLM(10, 8)(torch.ones(0, 3, dtype=i64)), ValueError,
        r"ids must hold at least one sequence.*\(0, 3\)"),
    Bad("target >= vocabulary", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.full((2, 3), 10))),
        ValueError, r"y must hold class ids in \[0, 10\), got values in \[10, 10\]"),
    Bad("float targets", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.ones(2, 3))), TypeError,
        r"y must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("negative target", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.full((2, 3), -100))),
        ValueError, r"y must hold class ids in \[0, 10\), got values in \[-100, -100\]"),
    Bad("targets of another shape", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.ones(2, 4, dtype=i64))),
        ValueError, r"y must have the shape of x \(2, 3\).*got \(2, 4\)"),
    Bad("batch not a pair", char_lm.char_lm_loss, lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), torch.ones(2, 3)),
        TypeError, r"batch must be a pair \(x, y\).*got Tensor"),
    Bad("id >= vocabulary", char_lm.evaluate_nll, lambda: char_lm.evaluate_nll(char_lm.CharLM(10, 8), torch.arange(12)),
        ValueError, r"ids must hold ids in \[0, 10\), got values in \[0, 11\]"),
    Bad("zero seq_len", char_lm.evaluate_nll,
        lambda: char_lm.evaluate_nll(char_lm.CharLM(10, 8), torch.arange(10).repeat(20), seq_len=0), ValueError,
        r"seq_len must be positive, got 0"),
    Bad("too few characters", char_lm.evaluate_nll,
        lambda: char_lm.evaluate_nll(char_lm.CharLM(10, 8), torch.arange(10), batch_size=64), ValueError,
        r"10 characters are too few for batch_size=64"),
    Bad("not a CharLM", char_lm.evaluate_nll, lambda: char_lm.evaluate_nll(nn.Linear(2, 2), torch.arange(10)),
        TypeError, r"model must be a CharLM, got Linear"),
    Bad("empty prompt", char_lm.generate, lambda: char_lm.generate(tiny_char_lm(), corpus(), "", 5), ValueError,
        r"prompt must contain at least one character"),
    Bad("negative length", char_lm.generate, lambda: char_lm.generate(tiny_char_lm(), corpus(), "to", -1), ValueError,
        r"n_chars must be a non-negative int, got -1"),
    Bad("negative temperature", char_lm.generate,
        lambda: char_lm.generate(tiny_char_lm(), corpus(), "to", 3, temperature=-1.0),
        ValueError, r"temperature must be a number ≥ 0 \(0 = greedy\), got -1.0"),
    Bad("a model for another corpus", char_lm.generate,
        lambda: char_lm.generate(char_lm.CharLM(50, 8), corpus(), "to", 3),
        ValueError, r"the corpus has \d+ characters but the model was built for 50"),

    Bad("a GRU", rnn.from_torch, lambda: rnn.from_torch(nn.GRU(2, 3)), TypeError,
        r"from_torch expects nn.RNN, nn.LSTM, nn.RNNCell or nn.LSTMCell, got GRU"),
    Bad("a string", rnn.from_torch, lambda: rnn.from_torch("lstm"), TypeError, r"got str"),
]


ROWS = SEQ2SEQ + RNN

test_bad_call = bad_call_test(ROWS)
