"""Character-level language models: corpus, model, loss, evaluation and sampling (notebooks 03 and 04).

Notebooks 03 and 04 train the same recipe with both cells (``cell="rnn"`` and ``cell="lstm"``):

==============================  ==============================================================
this module                     what it does
==============================  ==============================================================
:class:`CharCorpus`             a text as character ids, contiguous train/validation split,
                                random windows for teacher forcing
:class:`CharLM`                 embedding → ``nn.RNN`` / ``nn.LSTM`` → linear read-out
:func:`char_lm_loss`            teacher-forced mean cross-entropy of the next character
:func:`evaluate_nll`            nats per character on consecutive windows (exp → perplexity)
:func:`generate`                temperature sampling, each sample fed back in
==============================  ==============================================================

The recurrent core is PyTorch's fused implementation; :func:`coursekit.rnn.layers.from_torch` turns it into
its from-scratch twin when a notebook looks inside (gates, cells).

References
----------
* A. Karpathy, J. Johnson, L. Fei-Fei (2015), *Visualizing and understanding recurrent networks* —
  the character-level language models of notebooks 03/04.
* F. Gers, J. Schmidhuber, F. Cummins (2000), *Learning to forget*; R. Jozefowicz, W. Zaremba,
  I. Sutskever (2015) — the forget-gate bias (``forget_bias``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.decoding.sampling import sample_next
from coursekit.rnn.cells import _check_real, init_forget_gate_bias
from coursekit.validation import (
    check_choice,
    check_int_sequence,
    check_labels,
    check_positive_int,
    check_tensor,
    check_token_ids,
)

__all__ = ["CharCorpus", "CharLM", "char_lm_loss", "evaluate_nll", "generate"]


class CharCorpus:
    """A text as character ids with a contiguous train/validation split (the last ``val_fraction``).

    ``itos`` is the sorted set of characters of the *whole* text, so validation has no unknown chars.
    """

    def __init__(self, text: str, val_fraction: float = 0.1):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if isinstance(val_fraction, bool) or not isinstance(val_fraction, (int, float)):
            raise TypeError(f"val_fraction must be a number, got {type(val_fraction).__name__}")
        if not 0.0 < val_fraction < 1.0:
            raise ValueError(f"val_fraction must lie in (0, 1), got {val_fraction}")
        if len(text) < 20:
            raise ValueError(f"text is too short for a language model ({len(text)} characters)")
        self.itos = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(self.itos)}
        ids = self.encode(text)
        n_train = int(len(ids) * (1 - val_fraction))
        self.train_ids, self.val_ids = ids[:n_train], ids[n_train:]

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> torch.Tensor:
        unknown = set(text) - set(self.stoi)
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {sorted(unknown)[:10]}")
        return torch.tensor([self.stoi[ch] for ch in text], dtype=torch.long)

    def decode(self, ids) -> str:
        ids = check_int_sequence(ids, "ids")
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"ids must lie in [0, {self.vocab_size}) (the characters of the corpus), got {bad[:5]}")
        return "".join(self.itos[i] for i in ids)

    def batch(self, split: str, batch_size: int, seq_len: int, generator: torch.Generator | None = None):
        """Random windows for teacher forcing: inputs ``x (B, T)`` and next characters ``y (B, T)``."""
        check_choice(split, "split", ("train", "val"))
        check_positive_int(batch_size, "batch_size")
        check_positive_int(seq_len, "seq_len")
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
        ids = {"train": self.train_ids, "val": self.val_ids}[split]
        if seq_len + 2 > len(ids):
            raise ValueError(f"seq_len={seq_len} is longer than the {split} split allows ({len(ids)} characters: "
                             f"at most {len(ids) - 2})")
        starts = torch.randint(0, len(ids) - seq_len - 1, (batch_size,), generator=generator)
        window = torch.stack([ids[s:s + seq_len + 1] for s in starts.tolist()])   # (B, T+1)
        return window[:, :-1], window[:, 1:]


class CharLM(nn.Module):
    """Embedding → recurrent layers (``nn.RNN`` or ``nn.LSTM``, batch first) → linear read-out.

    The recurrent core is PyTorch's fused implementation (fast to train); :func:`~coursekit.rnn.layers.from_torch` turns
    it into this module's from-scratch twin when a notebook wants to look inside (gates, cells).
    """

    def __init__(self, vocab_size: int, hidden_size: int, *, cell: str = "rnn", num_layers: int = 1,
                 embed_dim: int | None = None, forget_bias: float | None = None):
        super().__init__()
        if cell not in ("rnn", "lstm"):
            raise ValueError(f"cell must be 'rnn' or 'lstm', got {cell!r}")
        if forget_bias is not None and cell != "lstm":
            raise ValueError("forget_bias only applies to cell='lstm'")
        if forget_bias is not None:
            _check_real(forget_bias, "forget_bias")
        check_positive_int(num_layers, "num_layers")
        embed_dim = hidden_size if embed_dim is None else check_positive_int(embed_dim, "embed_dim")
        self.cell = cell
        self.embed = nn.Embedding(check_positive_int(vocab_size, "vocab_size"), embed_dim)
        core = nn.RNN if cell == "rnn" else nn.LSTM
        self.rnn = core(embed_dim, check_positive_int(hidden_size, "hidden_size"), num_layers=num_layers,
                        batch_first=True)
        if forget_bias is not None:
            init_forget_gate_bias(self.rnn, forget_bias)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, ids: torch.Tensor, state=None):
        """``ids (B, T)`` → ``(logits (B, T, V), final state)``."""
        check_tensor(ids, "ids", ndim=2)
        check_token_ids(ids, "ids", self.embed.num_embeddings)
        if ids.shape[0] == 0 or ids.shape[1] == 0:
            raise ValueError(f"ids must hold at least one sequence of at least one character, got shape "
                             f"{tuple(ids.shape)}")
        h, state = self.rnn(self.embed(ids), state)        # (B, T, H)
        return self.head(h), state                          # (B, T, V)


def _check_char_lm(model) -> None:
    if not isinstance(model, CharLM):
        raise TypeError(f"model must be a CharLM, got {type(model).__name__}")


def char_lm_loss(model: CharLM, batch) -> torch.Tensor:
    """Teacher forcing: the mean cross-entropy of predicting ``y_t`` from the true ``x_1..x_t``.

    ``batch`` is the pair ``(x (B, T), y (B, T))`` of :meth:`CharCorpus.batch`.
    """
    _check_char_lm(model)
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise TypeError(f"batch must be a pair (x, y) of (B, T) id tensors, got {type(batch).__name__}")
    x, y = batch
    check_labels(y, "y", model.embed.num_embeddings)
    check_tensor(x, "x")
    if y.shape != x.shape:
        raise ValueError(f"y must have the shape of x {tuple(x.shape)} (the next character of each), "
                         f"got {tuple(y.shape)}")
    logits, _ = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


@torch.no_grad()
def evaluate_nll(model: CharLM, ids: torch.Tensor, seq_len: int = 256, batch_size: int = 64,
                 max_chars: int | None = None) -> float:
    """Mean negative log-likelihood (nats per character) on ``ids``, read as consecutive windows.

    The sequence is cut into ``batch_size`` parallel streams read ``seq_len`` characters at a time
    with the state carried over (as a language model reads a long text); ``exp`` of it is perplexity.
    """
    _check_char_lm(model)
    check_tensor(ids, "ids", ndim=1)
    check_token_ids(ids, "ids", model.embed.num_embeddings)
    check_positive_int(seq_len, "seq_len")
    check_positive_int(batch_size, "batch_size")
    if max_chars is not None:
        ids = ids[:check_positive_int(max_chars, "max_chars")]
    device = next(model.parameters()).device
    n = (len(ids) - 1) // batch_size
    if n < 1:
        raise ValueError(f"{len(ids)} characters are too few for batch_size={batch_size}")
    x = ids[:n * batch_size].view(batch_size, n).to(device)
    y = ids[1:n * batch_size + 1].view(batch_size, n).to(device)
    was_training = model.training
    model.eval()
    state, total = None, 0.0
    for start in range(0, n, seq_len):
        logits, state = model(x[:, start:start + seq_len], state)
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[:, start:start + seq_len].reshape(-1),
                                 reduction="sum").item()
    model.train(was_training)
    return total / (n * batch_size)


@torch.no_grad()
def generate(model: CharLM, corpus: CharCorpus, prompt: str, n_chars: int, temperature: float = 1.0,
             generator: torch.Generator | None = None) -> str:
    """Sample ``n_chars`` characters after ``prompt``, feeding each sample back in (temperature sampling)."""
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    if not prompt:
        raise ValueError("prompt must contain at least one character")
    if isinstance(n_chars, bool) or not isinstance(n_chars, int) or n_chars < 0:
        raise ValueError(f"n_chars must be a non-negative int, got {n_chars!r}")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature >= 0:
        raise ValueError(f"temperature must be a number ≥ 0 (0 = greedy), got {temperature!r}")
    _check_char_lm(model)
    if not isinstance(corpus, CharCorpus):
        raise TypeError(f"corpus must be a CharCorpus, got {type(corpus).__name__}")
    if corpus.vocab_size != model.embed.num_embeddings:
        raise ValueError(f"the corpus has {corpus.vocab_size} characters but the model was built for "
                         f"{model.embed.num_embeddings}")
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    logits, state = model(corpus.encode(prompt)[None].to(device))
    out = []
    for _ in range(n_chars):
        next_id = sample_next(logits[:, -1], temperature=temperature, generator=generator)   # (1,)
        out.append(int(next_id))
        logits, state = model(next_id.view(1, 1), state)
    model.train(was_training)
    return prompt + corpus.decode(out)
