"""Text to tensors: a word tokeniser, vocabularies, padded batches, and subword tokenisers.

The subword trainers wrap Hugging Face ``tokenizers``: WordPiece as in BERT (Devlin et al. 2019,
Schuster & Nakajima 2012) and byte-level BPE as in GPT-2 (Radford et al. 2019, Sennrich et al. 2016).
"""

from __future__ import annotations

import numbers
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from coursekit.validation import check_generator, check_int_sequence, check_positive_int

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)

# a word is a run of letters/digits (any script: "clichés", "naïve") with an optional apostrophe
# suffix ("don't", "it's"); every other non-space character is a token of its own
_TOKEN_RE = re.compile(r"[^\W_]+(?:'[^\W\d_]+)?|[^\w\s]|_")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokeniser: words (with an apostrophe suffix such as ``n't``/``'s``) and single punctuation marks.

    >>> tokenize("I don't love this movie!")
    ['i', "don't", 'love', 'this', 'movie', '!']
    >>> tokenize("Clichés, naïvely.")
    ['clichés', ',', 'naïvely', '.']
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects a str, got {type(text).__name__}")
    return _TOKEN_RE.findall(text.lower())


@dataclass
class Vocab:
    """A bijection between tokens and ids; specials come first (``<pad>`` is id 0)."""

    itos: list[str]

    def __post_init__(self) -> None:
        _check_tokens(self.itos, "itos")
        self.stoi = {}
        for i, t in enumerate(self.itos):
            if t in self.stoi:
                raise ValueError(f"itos must hold unique tokens, got {t!r} more than once")
            self.stoi[t] = i

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]], *, min_freq: int = 1, max_size: int | None = None,
              specials: Sequence[str] = SPECIALS) -> Vocab:
        """Count tokens; keep those seen ``min_freq`` times, most frequent first (ties alphabetical).

        ``max_size`` counts the specials too, so it must leave room for at least one word.
        """
        check_positive_int(min_freq, "min_freq")
        _check_tokens(specials, "specials")
        if max_size is not None:
            check_positive_int(max_size, "max_size")
            if max_size <= len(specials):
                raise ValueError(f"max_size={max_size} leaves no room for words after the {len(specials)} "
                                 f"special tokens")
        counts: Counter[str] = Counter()
        for tokens in token_lists:
            if isinstance(tokens, str):
                raise TypeError("Vocab.build expects an iterable of token lists, got a str inside it "
                                "(did you pass sentences instead of tokenised sentences?)")
            counts.update(tokens)
        not_str = [t for t in counts if not isinstance(t, str)]
        if not_str:
            raise TypeError(f"tokens must be str, got {not_str[0]!r} ({type(not_str[0]).__name__})")
        kept = sorted((t for t, c in counts.items() if c >= min_freq and t not in specials),
                      key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[: max_size - len(specials)]
        vocab = cls(list(specials) + kept)
        vocab.counts = counts
        return vocab

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def _special(self, token: str) -> int:
        if token not in self.stoi:
            raise KeyError(f"this vocabulary has no {token} token")
        return self.stoi[token]

    @property
    def pad_id(self) -> int:
        return self._special(PAD)

    @property
    def unk_id(self) -> int:
        return self._special(UNK)

    @property
    def bos_id(self) -> int:
        return self._special(BOS)

    @property
    def eos_id(self) -> int:
        return self._special(EOS)

    def encode(self, tokens: Sequence[str], *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token strings → ids; unknown tokens map to ``<unk>`` (an error if the vocab has none)."""
        if isinstance(tokens, str):
            raise TypeError("encode expects a list of tokens, got a str (tokenise it first)")
        unk = self.stoi.get(UNK)
        ids = []
        for t in tokens:
            if not isinstance(t, str):
                raise TypeError(f"tokens must be str, got {t!r} ({type(t).__name__})")
            i = self.stoi.get(t, unk)
            if i is None:
                raise KeyError(f"token {t!r} is not in the vocabulary and it has no {UNK}")
            ids.append(i)
        return ([self.bos_id] if add_bos else []) + ids + ([self.eos_id] if add_eos else [])

    def decode(self, ids: Iterable[int], *, strip_specials: bool = False) -> list[str]:
        """Ids → token strings; ``strip_specials`` drops ``<pad>/<bos>`` and stops at ``<eos>``."""
        return decode_ids(self.itos, ids, strip_specials=strip_specials)

    def detokenize(self, ids: Iterable[int]) -> str:
        """Ids → the sentence string (specials dropped, stops at ``<eos>``): tokens joined by spaces."""
        return " ".join(self.decode(ids, strip_specials=True))


def _check_tokens(tokens, name: str) -> None:
    """A list/tuple of str tokens (a single str would silently become one token per character)."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name} must be a list of str tokens, got {type(tokens).__name__}")
    for t in tokens:
        if not isinstance(t, str):
            raise TypeError(f"{name} must hold str tokens, got {t!r} ({type(t).__name__})")


def _id_list(ids, name: str) -> list[int]:
    """Ids as a list of ints: a list/tuple of ints, a 1-D integer tensor or array, or any iterable of ints.
    Floats are refused, never truncated."""
    if isinstance(ids, np.ndarray):
        ids = ids.tolist()
    elif not isinstance(ids, (torch.Tensor, Sequence)):
        ids = list(ids)
    if isinstance(ids, (list, tuple)):   # numpy integers (e.g. from an argmax) are ints too; bools are not
        ids = [int(i) if isinstance(i, numbers.Integral) and not isinstance(i, bool) else i for i in ids]
    return check_int_sequence(ids, name)


def decode_ids(itos: Sequence[str], ids: Iterable[int], *, strip_specials: bool = False) -> list[str]:
    """Ids → the strings ``itos[i]``; ``strip_specials`` drops ``<pad>/<bos>`` and stops at ``<eos>``.

    The one decoder of the course's vocabularies (word :class:`Vocab` and the subword vocabulary).
    Ids must be ints in ``[0, len(itos))``: a float is not truncated, a negative id does not count from the end.
    """
    if isinstance(itos, str) or not isinstance(itos, Sequence):
        raise TypeError(f"itos must be a list of str tokens, got {type(itos).__name__}")
    out = []
    for i in _id_list(ids, "ids"):
        if not 0 <= i < len(itos):
            raise ValueError(f"ids must lie in [0, {len(itos)}), got {i} (out of range)")
        tok = itos[i]
        if strip_specials:
            if tok == EOS:
                break
            if tok in (PAD, BOS):
                continue
        out.append(tok)
    return out


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int, *, max_len: int | None = None,
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-pad id sequences into a batch.

    Returns ``ids`` (B, T) long, ``mask`` (B, T) bool — True at real tokens — and ``lengths`` (B,).
    A sequence longer than ``max_len`` is an error, never silently truncated; float ids are an error,
    never rounded.
    """
    if isinstance(seqs, str) or not isinstance(seqs, (Sequence, torch.Tensor)):
        raise TypeError(f"seqs must be a list of id sequences, got {type(seqs).__name__}")
    if len(seqs) == 0:
        raise ValueError("pad_batch needs at least one sequence")
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int, got {type(pad_id).__name__}")
    if pad_id < 0:
        raise ValueError(f"pad_id must be ≥ 0, got {pad_id}")
    if max_len is not None:
        check_positive_int(max_len, "max_len")
    rows = [_id_list(s, f"seqs[{b}]") for b, s in enumerate(seqs)]
    for b, row in enumerate(rows):
        if row and min(row) < 0:
            raise ValueError(f"seqs[{b}] must hold ids ≥ 0, got {min(row)}")
    lengths = torch.tensor([len(row) for row in rows], dtype=torch.long)
    longest = int(lengths.max())
    T = longest if max_len is None else max_len
    if longest > T:
        raise ValueError(f"a sequence has length {longest} > max_len={max_len}; truncate it explicitly first")
    ids = torch.full((len(rows), T), pad_id, dtype=torch.long)
    for b, row in enumerate(rows):
        if row:
            ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    return ids, mask, lengths


# --------------------------------------------------------------------------- subword tokenisers


def _texts(texts):
    """The training texts, checked one by one as the trainer reads them (they may be a generator)."""
    if isinstance(texts, str):
        raise TypeError("texts must be an iterable of str, got a single str (wrap it in a list)")

    def checked():
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts must hold str, got {type(t).__name__} at position {i}")
            yield t

    return checked()


def train_wordpiece(texts: Iterable[str], vocab_size: int = 8000, *, min_frequency: int = 2,
                    lowercase: bool = True):
    """Train a BERT-style WordPiece tokeniser (``[PAD] [UNK] [CLS] [SEP] [MASK]``, ``##`` continuations).

    Returns a ``tokenizers.Tokenizer`` whose post-processor adds ``[CLS] … [SEP]`` (and ``[SEP]``
    between a pair), like bert-base-uncased.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    texts = _texts(texts)
    check_positive_int(vocab_size, "vocab_size")
    check_positive_int(min_frequency, "min_frequency")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=specials,
                                        show_progress=False)   # its bars end in bare newlines on stdout
    tok.train_from_iterator(texts, trainer=trainer)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    return tok


def train_bpe(texts: Iterable[str], vocab_size: int = 1000, *, min_frequency: int = 2,
              special_tokens: Sequence[str] = ("<|endoftext|>",)):
    """Train a GPT-2-style byte-level BPE tokeniser (every byte is in the base alphabet: no OOV).

    Returns a ``tokenizers.Tokenizer``; ``decode(encode(s).ids) == s`` for any string ``s``.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    texts = _texts(texts)
    check_positive_int(vocab_size, "vocab_size")
    check_positive_int(min_frequency, "min_frequency")
    _check_tokens(special_tokens, "special_tokens")
    alphabet = len(pre_tokenizers.ByteLevel.alphabet()) + len(special_tokens)
    if vocab_size < alphabet:
        raise ValueError(f"vocab_size={vocab_size} is smaller than the {alphabet} symbols every byte-level BPE "
                         f"holds (256 bytes + {len(special_tokens)} special tokens)")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=list(special_tokens),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)   # its bars end in bare newlines on the process's stdout
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def token_batches(src_lengths: Sequence[int], tgt_lengths: Sequence[int], max_tokens: int,
                  generator: torch.Generator | None = None, *, pool: int = 100) -> list[list[int]]:
    """One epoch of length-grouped batches: lists of pair indices, each batch ≤ ``max_tokens`` tokens.

    The pairs are shuffled, cut into pools of ``pool`` × a typical batch, sorted by length inside each
    pool and cut into batches with B × (longest source + longest target) ≤ ``max_tokens``; the batch
    order is shuffled again. Same lengths and same ``generator`` state → same batches (for ``--resume``).
    """
    src_lengths = check_int_sequence(src_lengths, "src_lengths")
    tgt_lengths = check_int_sequence(tgt_lengths, "tgt_lengths")
    check_positive_int(max_tokens, "max_tokens")
    check_positive_int(pool, "pool")
    check_generator(generator)
    if len(src_lengths) != len(tgt_lengths) or not len(src_lengths):
        raise ValueError(f"need as many source as target lengths (≥ 1), got {len(src_lengths)} and {len(tgt_lengths)}")
    longest = max(s + t for s, t in zip(src_lengths, tgt_lengths))
    if longest > max_tokens:
        raise ValueError(f"a pair has {longest} tokens, more than max_tokens={max_tokens}")
    order = torch.randperm(len(src_lengths), generator=generator).tolist()
    per_batch = max(1, max_tokens // max(1, longest // 2))
    batches: list[list[int]] = []
    for start in range(0, len(order), pool * per_batch):
        chunk = sorted(order[start:start + pool * per_batch], key=lambda i: (src_lengths[i], tgt_lengths[i]))
        batch: list[int] = []
        width_s = width_t = 0
        for i in chunk:
            s, t = max(width_s, src_lengths[i]), max(width_t, tgt_lengths[i])
            if batch and (len(batch) + 1) * (s + t) > max_tokens:
                batches.append(batch)
                batch, s, t = [], src_lengths[i], tgt_lengths[i]
            batch.append(i)
            width_s, width_t = s, t
        if batch:
            batches.append(batch)
    perm = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in perm]
