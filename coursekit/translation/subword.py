"""One shared subword vocabulary for English and French: byte-pair encoding (Sennrich et al. 2016).

A word vocabulary capped at a few thousand entries turns every rare word into ``<unk>``, and an
``<unk>`` in the output is a wrong word, whatever the model learned. BPE starts from characters and
merges the most frequent adjacent pair, again and again, until the vocabulary has ``vocab_size``
entries: frequent words become one piece, rare words several (``marksman`` → ``marks man</w>``), and
any word made of known characters can be written. One vocabulary for both languages lets the
encoder, the decoder and the output layer share one embedding table (Press & Wolf 2017), which
matters with a small corpus: ``tom``, ``paris`` and ``1984`` are the same piece on both sides.

The tokeniser is Hugging Face ``tokenizers``' BPE on the normalised, space-separated sentences of
:mod:`coursekit.translation` (whitespace pre-split, ``</w>`` marks the end of a word, so decoding is
exact), trained on the **training pairs only**. :class:`SubwordVocab` wraps it with the interface of
:class:`coursekit.text.Vocab` (``<pad> <unk> <bos> <eos>`` are ids 0–3, ``encode``, ``decode``,
``detokenize``), so :class:`~coursekit.translation.TranslationData` batches words or subwords alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from coursekit.text import SPECIALS, UNK, decode_ids
from coursekit.validation import check_positive_int

__all__ = ["SubwordVocab", "END_OF_WORD"]

END_OF_WORD = "</w>"


def _check_path(path) -> None:
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a file path (str or Path), got {type(path).__name__}")


class SubwordVocab:
    """A BPE vocabulary shared by source and target, with :class:`coursekit.text.Vocab`'s interface.

    ``encode(words)`` takes the *words* of a normalised sentence (``split_tokens`` gives them) and returns
    the ids of their pieces; ``decode(ids)`` gives the pieces; ``detokenize(ids)`` the sentence string.
    """

    def __init__(self, tokenizer) -> None:
        from tokenizers import Tokenizer

        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"tokenizer must be a tokenizers.Tokenizer, got {type(tokenizer).__name__}")
        ids = [tokenizer.token_to_id(t) for t in SPECIALS]
        if ids != list(range(len(SPECIALS))):
            raise ValueError(f"the tokenizer must have the specials {list(SPECIALS)} as ids 0–3, got ids {ids}")
        self.tokenizer = tokenizer
        self.itos = [tokenizer.id_to_token(i) for i in range(tokenizer.get_vocab_size())]
        self.pad_id, self.unk_id, self.bos_id, self.eos_id = range(4)

    # ---- building
    @classmethod
    def train(cls, sentences: Iterable[str], vocab_size: int = 8000, *, min_frequency: int = 2) -> SubwordVocab:
        """Learn ``vocab_size`` BPE pieces (specials included) from normalised, space-separated sentences."""
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        if isinstance(sentences, str):
            raise TypeError("sentences must be an iterable of str sentences, got one str")
        sentences = list(sentences)
        bad = next((s for s in sentences if not isinstance(s, str)), None)
        if bad is not None:
            raise TypeError(f"sentences must hold str, got {bad!r} ({type(bad).__name__})")
        check_positive_int(vocab_size, "vocab_size")
        check_positive_int(min_frequency, "min_frequency")
        tok = Tokenizer(models.BPE(unk_token=UNK, end_of_word_suffix=END_OF_WORD))
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        tok.decoder = decoders.BPEDecoder(suffix=END_OF_WORD)
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=list(SPECIALS), end_of_word_suffix=END_OF_WORD,
                                      show_progress=False)   # its bars end in bare newlines on stdout
        tok.train_from_iterator(sentences, trainer=trainer)
        return cls(tok)

    def save(self, path: str | Path) -> Path:
        _check_path(path)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.tokenizer.save(str(path))
        return path

    @classmethod
    def load(cls, path: str | Path) -> SubwordVocab:
        from tokenizers import Tokenizer

        _check_path(path)
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no tokenizer file at {path}")
        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as exc:  # tokenizers raises a bare Exception on malformed JSON
            if isinstance(exc, (TypeError, ValueError)):
                raise
            raise ValueError(f"{path} is not a tokenizers JSON file ({exc})") from None

    def sha256(self) -> str:
        """A hash of the vocabulary and merges (what a model trained on it depends on)."""
        import hashlib

        model = json.loads(self.tokenizer.to_str())["model"]
        return hashlib.sha256(json.dumps([model["vocab"], model["merges"]], sort_keys=True).encode()).hexdigest()

    # ---- the Vocab interface
    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, piece: str) -> bool:
        return self.tokenizer.token_to_id(piece) is not None

    def encode(self, words: Sequence[str], *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Words of one normalised sentence → piece ids (``<bos>``/``<eos>`` around them on request)."""
        if isinstance(words, str):
            raise TypeError("encode expects the list of words of a sentence (split_tokens(text)), got a str")
        bad = next((w for w in words if not isinstance(w, str)), None)
        if bad is not None:
            raise TypeError(f"words must hold str, got {bad!r} ({type(bad).__name__})")
        ids = self.tokenizer.encode(list(words), is_pretokenized=True, add_special_tokens=False).ids if words else []
        return ([self.bos_id] if add_bos else []) + ids + ([self.eos_id] if add_eos else [])

    def encode_batch(self, sentences: Sequence[Sequence[str]], *, add_eos: bool = False) -> list[list[int]]:
        """:meth:`encode` of many sentences at once (the tokenizer's parallel batch encoder)."""
        if isinstance(sentences, str) or not isinstance(sentences, Sequence):
            raise TypeError(f"sentences must be a list of word lists, got {type(sentences).__name__}")
        bad = next((w for w in sentences if not isinstance(w, (list, tuple))), None)
        if bad is not None:                      # a str sentence would be split into characters
            raise TypeError(f"sentences must hold word lists (split_tokens(text)), got {bad!r}")
        if not sentences:
            return []
        out = self.tokenizer.encode_batch([list(w) for w in sentences], is_pretokenized=True,
                                          add_special_tokens=False)
        return [e.ids + ([self.eos_id] if add_eos else []) for e in out]

    def decode(self, ids: Iterable[int], *, strip_specials: bool = False) -> list[str]:
        """Ids → piece strings; ``strip_specials`` drops ``<pad>/<bos>`` and stops at ``<eos>``."""
        return decode_ids(self.itos, ids, strip_specials=strip_specials)

    def detokenize(self, ids: Iterable[int]) -> str:
        """Ids → the sentence: pieces joined, a space after each ``</w>`` (specials dropped, stops at ``<eos>``)."""
        pieces = self.decode(ids, strip_specials=True)
        return "".join(p.replace(END_OF_WORD, " ") for p in pieces).strip()

    def pieces(self, words: Sequence[str]) -> list[str]:
        """How a sentence is cut: the piece strings of ``encode(words)``."""
        return self.decode(self.encode(words))
