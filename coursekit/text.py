"""Text to tensors: a word tokeniser, vocabularies, padded batches, and subword tokenisers.

The subword trainers wrap Hugging Face ``tokenizers``: WordPiece as in BERT (Devlin et al. 2019,
Schuster & Nakajima 2012) and byte-level BPE as in GPT-2 (Radford et al. 2019, Sennrich et al. 2016).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

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
        if len(set(self.itos)) != len(self.itos):
            raise ValueError("Vocab tokens must be unique")
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]], *, min_freq: int = 1, max_size: int | None = None,
              specials: Sequence[str] = SPECIALS) -> Vocab:
        """Count tokens; keep those seen ``min_freq`` times, most frequent first (ties alphabetical)."""
        if min_freq < 1:
            raise ValueError(f"min_freq must be ≥ 1, got {min_freq}")
        counts: Counter[str] = Counter()
        for tokens in token_lists:
            if isinstance(tokens, str):
                raise TypeError("Vocab.build expects an iterable of token lists, got a str inside it "
                                "(did you pass sentences instead of tokenised sentences?)")
            counts.update(tokens)
        kept = sorted((t for t, c in counts.items() if c >= min_freq and t not in specials),
                      key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[: max(0, max_size - len(specials))]
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



def decode_ids(itos: Sequence[str], ids: Iterable[int], *, strip_specials: bool = False) -> list[str]:
    """Ids → the strings ``itos[i]``; ``strip_specials`` drops ``<pad>/<bos>`` and stops at ``<eos>``.

    The one decoder of the course's vocabularies (word :class:`Vocab` and the subword vocabulary).
    """
    out = []
    for i in (ids.tolist() if isinstance(ids, torch.Tensor) else ids):
        if not 0 <= int(i) < len(itos):
            raise ValueError(f"id {i} out of range for a vocabulary of {len(itos)}")
        tok = itos[int(i)]
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
    A sequence longer than ``max_len`` is an error, never silently truncated.
    """
    if len(seqs) == 0:
        raise ValueError("pad_batch needs at least one sequence")
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    longest = int(lengths.max())
    T = longest if max_len is None else max_len
    if longest > T:
        raise ValueError(f"a sequence has length {longest} > max_len={max_len}; truncate it explicitly first")
    ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    for b, s in enumerate(seqs):
        if len(s):
            ids[b, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    return ids, mask, lengths


# --------------------------------------------------------------------------- subword tokenisers


def train_wordpiece(texts: Iterable[str], vocab_size: int = 8000, *, min_frequency: int = 2,
                    lowercase: bool = True):
    """Train a BERT-style WordPiece tokeniser (``[PAD] [UNK] [CLS] [SEP] [MASK]``, ``##`` continuations).

    Returns a ``tokenizers.Tokenizer`` whose post-processor adds ``[CLS] … [SEP]`` (and ``[SEP]``
    between a pair), like bert-base-uncased.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=specials)
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

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=list(special_tokens),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    return tok
