"""Recurrent encoder–decoder models, with and without attention (notebooks 05 and 06).

* **Encoder–decoder** (Sutskever et al. 2014; Cho et al. 2014): an RNN reads the source; its final
  state — the context vector c — is the decoder's initial state. The decoder is a conditional
  language model p(y_t | y_<t, c).
* **Bahdanau attention** (Bahdanau et al. 2015): at step t the *previous* decoder state h_{t−1} scores
  every encoder state s_k; the context c_t = Σ_k a_k s_k is fed to the RNN together with y_{t−1}.
* **Luong attention** (Luong et al. 2015): the RNN runs first; the *current* state h_t scores the
  encoder states, and the output is p(y_t) = softmax(W_s tanh(W_c [c_t; h_t])) (Eq. 5–6). With
  ``input_feeding`` the attentional vector h̃_{t−1} is also fed to the next step (§3.3).

Training: **teacher forcing** (the decoder reads the gold y_{t−1}), **free running** (it reads its own
arg-max prediction) or **scheduled sampling** (Bengio et al. 2015: gold with probability ε, own
prediction otherwise, ε decaying during training; :func:`teacher_forcing_schedule`).

Decoding goes through :mod:`coursekit.decoding` (greedy and beam search) with a step function
whose state is a dict of batch-first tensors, so beam search can reorder it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from coursekit.attention.scores import SCORE_FUNCTIONS, LuongOutput, RecurrentAttention, make_score
from coursekit.decoding.search import SearchResult, beam_search, greedy_search
from coursekit.decoding.translate import translator
from coursekit.validation import (
    check_bool_mask,
    check_labels,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)

__all__ = ["Seq2SeqConfig", "Encoder", "Decoder", "Seq2Seq", "teacher_forcing_schedule"]

CELLS = {"gru": nn.GRU, "lstm": nn.LSTM}
STYLES = ("bahdanau", "luong")


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Sizes and choices of a :class:`Seq2Seq` model.

    ``attention``: ``None`` (plain encoder–decoder) or a score name from
    :data:`coursekit.attention.SCORE_FUNCTIONS`; ``style``: where the attention sits ("bahdanau" or
    "luong"); ``max_src_len`` is needed by the location score (longest source, ``<eos>`` included).
    ``bidirectional``: the encoder reads the source in both directions (Bahdanau et al. 2015, §3.2), each
    direction with ``d_hidden / 2`` units, so an annotation s_k = [→h_k; ←h_k] still has ``d_hidden``
    entries and sees the whole sentence. ``share_embeddings``: one embedding table for source and target
    (a shared subword vocabulary, ``src_vocab_size == tgt_vocab_size``). ``tie_output``: the output layer's
    weight W_s is the target embedding table (Press & Wolf 2017), which needs ``d_hidden == d_emb``; it saves
    ``tgt_vocab_size × d_hidden`` parameters, most of a small model. ``input_feeding`` (Luong et al.
    2015, §3.3) needs attention. ``pad_id`` pads both sides, so it must be an id of both vocabularies.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_emb: int = 128
    d_hidden: int = 256
    cell: str = "gru"
    num_layers: int = 1
    dropout: float = 0.0
    attention: str | None = None
    style: str = "luong"
    input_feeding: bool = False
    d_attn: int | None = None
    max_src_len: int | None = None
    pad_id: int = 0
    bos_id: int = 2
    eos_id: int = 3
    bidirectional: bool = False
    share_embeddings: bool = False
    tie_output: bool = False

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_emb", "d_hidden", "num_layers"):
            check_positive_int(getattr(self, name), name)
        if self.bidirectional and self.d_hidden % 2:
            raise ValueError(f"a bidirectional encoder splits d_hidden over two directions: d_hidden must be "
                             f"even, got {self.d_hidden}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError("share_embeddings needs one vocabulary: src_vocab_size == tgt_vocab_size, got "
                             f"{self.src_vocab_size} and {self.tgt_vocab_size}")
        for name in ("pad_id", "bos_id", "eos_id"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < self.tgt_vocab_size:
                raise ValueError(f"{name} must be an id in [0, {self.tgt_vocab_size}), got {value!r}")
        if self.pad_id >= self.src_vocab_size:
            raise ValueError(f"pad_id must be an id in [0, {self.src_vocab_size}) (the source vocabulary), "
                             f"got {self.pad_id}")
        for name in ("d_attn", "max_src_len"):
            if getattr(self, name) is not None:
                check_positive_int(getattr(self, name), name)
        if self.cell not in CELLS:
            raise ValueError(f"cell must be one of {sorted(CELLS)}, got {self.cell!r}")
        if self.attention is not None and self.attention not in SCORE_FUNCTIONS:
            raise ValueError(f"attention must be None or one of {', '.join(SCORE_FUNCTIONS)}, got {self.attention!r}")
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, got {self.style!r}")
        if self.attention == "location" and self.max_src_len is None:
            raise ValueError("the location score needs max_src_len (longest source, <eos> included)")
        if self.input_feeding and self.attention is None:
            raise ValueError("input_feeding feeds the attentional vector to the next step: it needs attention "
                             "(set attention= to a score name)")
        check_probability(self.dropout, "dropout", inclusive_high=False)
        for name in ("bidirectional", "share_embeddings", "tie_output", "input_feeding"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        if self.tie_output and self.d_hidden != self.d_emb:
            raise ValueError(f"tie_output makes the output layer (tgt_vocab_size × d_hidden) the target "
                             f"embedding (tgt_vocab_size × d_emb): it needs d_hidden == d_emb, got {self.d_hidden} "
                             f"and {self.d_emb}")

    def asdict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------- helpers


def _batch_first(state):
    """RNN state (L, B, H) → (B, L, H) (a tuple (h, c) for an LSTM), so beam search can index dim 0."""
    if isinstance(state, tuple):
        return tuple(s.transpose(0, 1) for s in state)
    return state.transpose(0, 1)


def _layer_first(state):
    if isinstance(state, tuple):
        return tuple(s.transpose(0, 1).contiguous() for s in state)
    return state.transpose(0, 1).contiguous()


def _top(state) -> torch.Tensor:
    """The top layer's hidden state h (B, H) from a batch-first state."""
    h = state[0] if isinstance(state, tuple) else state
    return h[:, -1]


def teacher_forcing_schedule(step: int, total_steps: int, kind: str = "inverse_sigmoid", *,
                             floor: float = 0.0, sharpness: float = 10.0) -> float:
    """ε_i, the probability of feeding the gold token at training step ``step`` (Bengio et al. 2015, §2.4).

    ``linear``: 1 → ``floor`` over the run; ``exponential``: decays to ``floor`` + 1 % by the end;
    ``inverse_sigmoid``: 1 / (1 + exp(sharpness · (step / total − 1/2))), half-way at the middle.
    """
    check_positive_int(total_steps, "total_steps")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step must be a non-negative int, got {step!r}")
    check_probability(floor, "floor")
    check_positive_float(sharpness, "sharpness")
    x = min(step / total_steps, 1.0)
    if kind == "linear":
        eps = 1.0 - x
    elif kind == "exponential":
        eps = 0.01 ** x
    elif kind == "inverse_sigmoid":
        eps = 1.0 / (1.0 + math.exp(sharpness * (x - 0.5)))
    else:
        raise ValueError(f"kind must be 'linear', 'exponential' or 'inverse_sigmoid', got {kind!r}")
    return floor + (1.0 - floor) * eps


def _check_teacher_forcing(teacher_forcing, generator) -> None:
    check_probability(teacher_forcing, "teacher_forcing")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")


def _check_config(config) -> None:
    if not isinstance(config, Seq2SeqConfig):
        raise TypeError(f"config must be a Seq2SeqConfig, got {type(config).__name__}")


def _check_source(src: torch.Tensor, src_mask: torch.Tensor, config: Seq2SeqConfig) -> None:
    """Source ids (B, S) and their right-padded keep-mask (B, S): True at the real tokens, then False."""
    check_tensor(src, "src", ndim=2)
    check_token_ids(src, "src", config.src_vocab_size)
    if src.shape[0] == 0:
        raise ValueError(f"src must hold at least one sentence, got shape {tuple(src.shape)}")
    if src.shape[1] == 0:
        raise ValueError(f"src must hold at least one position, got shape {tuple(src.shape)}")
    check_tensor(src_mask, "src_mask", ndim=2, dtype=torch.bool)
    if src_mask.shape != src.shape:
        raise ValueError(f"src_mask must have the shape of src {tuple(src.shape)}, got {tuple(src_mask.shape)}")
    if config.max_src_len is not None and src.shape[1] > config.max_src_len:
        raise ValueError(f"source length {src.shape[1]} exceeds max_src_len={config.max_src_len}")
    lengths = src_mask.sum(dim=1)
    if int(lengths.min()) < 1:
        raise ValueError("every source sentence needs at least one real token (src_mask row all False)")
    right_padded = torch.arange(src.shape[1], device=src_mask.device) < lengths[:, None]
    wrong = (src_mask != right_padded).any(dim=1)
    if bool(wrong.any()):
        raise ValueError(f"src_mask must be right-padded (True at the real tokens, then False): row "
                         f"{int(wrong.nonzero()[0])} is not. The encoder packs each row by its length, so left "
                         "padding would be read as real tokens")


# --------------------------------------------------------------------------- encoder


class Encoder(nn.Module):
    """Embedding → GRU/LSTM over the source. Padding is packed away, so the final state is the state
    after each sentence's last real token, whatever the padding."""

    def __init__(self, config: Seq2SeqConfig):
        super().__init__()
        _check_config(config)
        c = self.config = config
        self.embedding = nn.Embedding(c.src_vocab_size, c.d_emb, padding_idx=c.pad_id)
        self.bidirectional = c.bidirectional
        self.rnn = CELLS[c.cell](c.d_emb, c.d_hidden // 2 if c.bidirectional else c.d_hidden,
                                 num_layers=c.num_layers, batch_first=True, bidirectional=c.bidirectional,
                                 dropout=c.dropout if c.num_layers > 1 else 0.0)
        self.dropout = nn.Dropout(c.dropout)

    def _join_directions(self, h: torch.Tensor) -> torch.Tensor:
        """(L·2, B, H/2) final states of both directions → (L, B, H): [→h_n; ←h_1] per layer."""
        L2, B, half = h.shape
        return h.view(L2 // 2, 2, B, half).transpose(1, 2).reshape(L2 // 2, B, 2 * half)

    def forward(self, src: torch.Tensor, src_mask: torch.Tensor):
        """``src`` (B, S) ids, ``src_mask`` (B, S) bool, right-padded → outputs s (B, S, H) (zeros at padding)
        and the final state, batch-first: (B, L, H), or a tuple (h, c) for an LSTM."""
        _check_source(src, src_mask, self.config)
        S = src.shape[1]
        lengths = src_mask.sum(dim=1).cpu()
        emb = self.dropout(self.embedding(src))                                     # (B, S, E)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        out, state = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=S)          # (B, S, H)
        if self.bidirectional:
            state = tuple(map(self._join_directions, state)) if isinstance(state, tuple) else \
                self._join_directions(state)
        return out, _batch_first(state)


# --------------------------------------------------------------------------- decoder


class Decoder(nn.Module):
    """A conditional RNN language model, optionally attending to the encoder states (see the module doc)."""

    def __init__(self, config: Seq2SeqConfig):
        super().__init__()
        _check_config(config)
        c = config
        self.config = c
        self.embedding = nn.Embedding(c.tgt_vocab_size, c.d_emb, padding_idx=c.pad_id)
        self.reads_context = c.attention is not None and (c.style == "bahdanau" or c.input_feeding)
        d_in = c.d_emb + (c.d_hidden if self.reads_context else 0)
        self.rnn = CELLS[c.cell](d_in, c.d_hidden, num_layers=c.num_layers, batch_first=True,
                                 dropout=c.dropout if c.num_layers > 1 else 0.0)
        self.dropout = nn.Dropout(c.dropout)
        if c.attention is None:
            self.attention = None
            self.output = nn.Linear(c.d_hidden, c.tgt_vocab_size)                   # p(y_t) = softmax(W h_t)
        else:
            score = make_score(c.attention, c.d_hidden, c.d_hidden, d_attn=c.d_attn, max_len=c.max_src_len)
            self.attention = RecurrentAttention(score)
            self.output = LuongOutput(c.d_hidden, c.d_hidden, c.tgt_vocab_size)    # softmax(W_s tanh(W_c[c; h]))

    @property
    def parallel(self) -> bool:
        """Whether a teacher-forced pass can run the RNN over all steps at once (no context in the input)."""
        return not self.reads_context

    def init_state(self, memory: torch.Tensor, src_mask: torch.Tensor, encoder_state) -> dict:
        """The decoder state: encoder final state as h_0 (the context vector), plus what attention needs.

        ``memory`` (B, S, H) encoder outputs, ``src_mask`` (B, S) bool, ``encoder_state`` batch-first.
        """
        check_tensor(memory, "memory", ndim=3, floating=True)
        check_bool_mask(src_mask, "src_mask", memory.shape[:2])
        state = {"hidden": encoder_state}
        if self.attention is not None:
            state["memory"], state["mask"] = memory, src_mask
            if self.config.input_feeding:
                state["feed"] = memory.new_zeros(memory.shape[0], self.config.d_hidden)
        return state

    def step(self, y_prev: torch.Tensor, state: dict):
        """One decoder step: ``y_prev`` (B,) → ``(logits (B, V), new state, weights (B, S) or None)``."""
        if not isinstance(state, dict) or "hidden" not in state:
            raise TypeError(f"state must be the dict of Decoder.init_state, got {type(state).__name__}")
        check_tensor(y_prev, "y_prev", ndim=1)
        check_token_ids(y_prev, "y_prev", self.config.tgt_vocab_size)
        check_size(y_prev, "y_prev", 0, _top(state["hidden"]).shape[0], "the batch of the state")
        return self._step(y_prev, state)

    def _step(self, y_prev: torch.Tensor, state: dict):
        """:meth:`step` without the checks, for callers whose tokens are already checked (or predicted)."""
        emb = self.dropout(self.embedding(y_prev))                                  # (B, E)
        weights, context = None, None
        if self.attention is not None and self.config.style == "bahdanau":
            context, weights = self.attention(_top(state["hidden"]), state["memory"], mask=state["mask"])
            x = torch.cat([emb, context], dim=-1)                                   # (B, E + H)
        elif self.reads_context:                                                    # Luong input feeding
            x = torch.cat([emb, state["feed"]], dim=-1)
        else:
            x = emb
        out, hidden = self.rnn(x.unsqueeze(1), _layer_first(state["hidden"]))       # out (B, 1, H)
        h_t = self.dropout(out[:, 0])                                               # (B, H)
        new_state = dict(state, hidden=_batch_first(hidden))
        if self.attention is None:
            return self.output(h_t), new_state, None
        if self.config.style == "luong":
            context, weights = self.attention(h_t, state["memory"], mask=state["mask"])
        logits, h_tilde = self.output(context, h_t)
        if self.config.input_feeding:
            new_state["feed"] = h_tilde
        return logits, new_state, weights

    def forward(self, tgt_in: torch.Tensor, state: dict, *, teacher_forcing: float = 1.0,
                generator: torch.Generator | None = None, stepwise: bool = False):
        """Decode ``tgt_in`` (B, T) (``<bos>`` + target) → ``(logits (B, T, V), weights (B, T, S) or None)``.

        ``teacher_forcing`` is the probability of reading the gold token at each step (1: teacher
        forcing, 0: free running, in between: scheduled sampling with coins from ``generator``).
        """
        if not isinstance(state, dict) or "hidden" not in state:
            raise TypeError(f"state must be the dict of Decoder.init_state, got {type(state).__name__}")
        check_tensor(tgt_in, "tgt_in", ndim=2)
        check_token_ids(tgt_in, "tgt_in", self.config.tgt_vocab_size)
        if tgt_in.shape[1] == 0:
            raise ValueError(f"tgt_in must hold at least one position, got shape {tuple(tgt_in.shape)}")
        check_size(tgt_in, "tgt_in", 0, _top(state["hidden"]).shape[0], "the batch of the state")
        _check_teacher_forcing(teacher_forcing, generator)
        if self.parallel and teacher_forcing == 1.0 and not stepwise:
            return self._teacher_forced(tgt_in, state)
        B, T = tgt_in.shape
        y = tgt_in[:, 0]
        all_logits, all_weights = [], []
        for t in range(T):
            logits, state, weights = self._step(y, state)
            all_logits.append(logits)
            all_weights.append(weights)
            if t + 1 < T:
                gold = tgt_in[:, t + 1]
                if teacher_forcing >= 1.0:
                    y = gold
                else:
                    own = logits.argmax(dim=-1).detach()                            # the model's own prediction
                    if teacher_forcing <= 0.0:
                        y = own
                    else:
                        coin = torch.rand(B, generator=generator).to(gold.device) < teacher_forcing
                        y = torch.where(coin, gold, own)
        weights = torch.stack(all_weights, dim=1) if self.attention is not None else None
        return torch.stack(all_logits, dim=1), weights                              # (B, T, V), (B, T, S)

    def _teacher_forced(self, tgt_in: torch.Tensor, state: dict):
        emb = self.dropout(self.embedding(tgt_in))                                  # (B, T, E)
        out, _ = self.rnn(emb, _layer_first(state["hidden"]))                       # (B, T, H)
        out = self.dropout(out)
        if self.attention is None:
            return self.output(out), None
        # all T queries at once: context (B, T, H), weights (B, T, S)
        context, weights = self.attention(out, state["memory"], mask=state["mask"].unsqueeze(1))
        logits, _ = self.output(context, out)
        return logits, weights


# --------------------------------------------------------------------------- the model


class Seq2Seq(nn.Module):
    """Encoder–decoder translation model; ``Seq2Seq(Seq2SeqConfig(...))``."""

    def __init__(self, config: Seq2SeqConfig):
        super().__init__()
        _check_config(config)
        self.config = config
        self.encoder = Encoder(config)
        self.decoder = Decoder(config)
        if config.share_embeddings:
            self.decoder.embedding = self.encoder.embedding  # one table for the shared vocabulary
        if config.tie_output:                                  # W_s = the target embedding table (V, d)
            output = self.decoder.output if config.attention is None else self.decoder.output.W_s
            output.weight = self.decoder.embedding.weight

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> dict:
        """Encode the source → the decoder's initial state (a dict of batch-first tensors)."""
        memory, final = self.encoder(src, src_mask)
        return self.decoder.init_state(memory, src_mask, final)

    def forward(self, src: torch.Tensor, src_mask: torch.Tensor, tgt_in: torch.Tensor, *,
                teacher_forcing: float = 1.0, generator: torch.Generator | None = None, stepwise: bool = False):
        """Logits (B, T, V) for every target position, and attention weights (B, T, S) (or None)."""
        check_tensor(src, "src", ndim=2)
        check_tensor(tgt_in, "tgt_in", ndim=2)
        if tgt_in.shape[0] != src.shape[0]:
            raise ValueError(f"src has {src.shape[0]} sentences but tgt_in has {tgt_in.shape[0]}")
        _check_teacher_forcing(teacher_forcing, generator)
        state = self.encode(src, src_mask)
        return self.decoder(tgt_in, state, teacher_forcing=teacher_forcing, generator=generator, stepwise=stepwise)

    def loss(self, batch, *, teacher_forcing: float = 1.0, generator: torch.Generator | None = None,
             label_smoothing: float = 0.0) -> torch.Tensor:
        """Mean cross-entropy per real target token (padding ignored) of a ``TranslationBatch``, optionally
        label-smoothed (as ``Transformer.loss``)."""
        if not all(hasattr(batch, name) for name in ("src", "src_mask", "tgt_in", "tgt_out")):
            raise TypeError(f"batch must be a TranslationBatch (with src, src_mask, tgt_in and tgt_out), "
                            f"got {type(batch).__name__}")
        check_labels(batch.tgt_out, "batch.tgt_out", self.config.tgt_vocab_size, ignore_index=self.config.pad_id)
        if batch.tgt_out.shape != batch.tgt_in.shape:
            raise ValueError(f"batch.tgt_out must have the shape of batch.tgt_in {tuple(batch.tgt_in.shape)}, "
                             f"got {tuple(batch.tgt_out.shape)}")
        check_probability(label_smoothing, "label_smoothing")
        logits, _ = self(batch.src, batch.src_mask, batch.tgt_in, teacher_forcing=teacher_forcing, generator=generator)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.tgt_out.reshape(-1),
                               ignore_index=self.config.pad_id, label_smoothing=label_smoothing)

    @torch.no_grad()
    def translate(self, src: torch.Tensor, src_mask: torch.Tensor, *, beam_size: int = 1, max_len: int = 20,
                  length_penalty: float = 0.0) -> SearchResult:
        """Decode with greedy (``beam_size=1``) or beam search through :mod:`coursekit.decoding`."""
        check_positive_int(beam_size, "beam_size")
        state = self.encode(src, src_mask)

        def step(prefix, st):
            logits, st, _ = self.decoder._step(prefix[:, -1], st)   # <bos> or predicted ids: valid
            return logits, st

        kwargs = dict(batch_size=src.shape[0], bos_id=self.config.bos_id, eos_id=self.config.eos_id,
                      max_len=max_len, device=src.device)
        if beam_size == 1 and length_penalty == 0.0:
            return greedy_search(step, state, **kwargs)
        return beam_search(step, state, beam_size=beam_size, length_penalty=length_penalty, **kwargs)

    def translator(self, *, beam_size: int = 1, max_len: int = 20, length_penalty: float = 0.0):
        """``batch → list of target id lists`` for ``TranslationData.evaluate``."""
        return translator(self, beam_size=beam_size, max_len=max_len, length_penalty=length_penalty)
