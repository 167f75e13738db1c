"""The corpora as ``datasets.Dataset`` objects: Tatoeba, SST-2, rt-polarity, WikiText-2, IMDB, the word-vector
benchmarks. Each loader reads verified local copies through :mod:`coursekit.data.store`."""

from __future__ import annotations

import csv
import re

from coursekit.data.store import open_text
from coursekit.viz.wording import noun


def load_tatoeba(release: str = "d2l"):
    """Tatoeba English–French pairs → ``datasets.Dataset`` with columns ``en``, ``fr`` (raw text).

    ``release="d2l"`` is D2L's ``fra.txt`` (167,130 pairs), ``"pytorch"`` the PyTorch tutorial's
    ``eng-fra.txt`` (135,842 pairs).
    """
    from datasets import Dataset

    files = {"d2l": "fra.txt", "pytorch": "eng-fra.txt"}
    if release not in files:
        raise ValueError(f"release must be one of {sorted(files)}, got {release!r}")
    en, fr = [], []
    with open_text("tatoeba-eng-fra", files[release]) as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                en.append(parts[0])
                fr.append(parts[1])
    return Dataset.from_dict({"en": en, "fr": fr})


def _read_tsv(corpus_name: str, filename: str) -> tuple[list[str], list[list[str]]]:
    with open_text(corpus_name, filename) as fh:
        header = fh.readline().rstrip("\n").split("\t")
        rows = [line.rstrip("\n").split("\t") for line in fh if line.strip()]
    return header, rows


def load_sst2():
    """GLUE SST-2 → ``DatasetDict(train, validation)`` with columns ``sentence`` (str) and ``label`` (0/1)."""
    from datasets import Dataset, DatasetDict

    splits = {}
    for split, filename in (("train", "train.tsv"), ("validation", "dev.tsv")):
        header, rows = _read_tsv("sst2", filename)
        if header != ["sentence", "label"]:
            raise ValueError(f"sst2/{filename}: unexpected header {header}")
        splits[split] = Dataset.from_dict({"sentence": [r[0] for r in rows], "label": [int(r[1]) for r in rows]})
    return DatasetDict(splits)


def load_rt_polarity():
    """Pang & Lee sentence polarity → ``Dataset`` with ``sentence`` and ``label`` (1 = positive)."""
    from datasets import Dataset

    sentences, labels = [], []
    for filename, label in (("rt-polarity.neg", 0), ("rt-polarity.pos", 1)):
        with open_text("rt-polarity", filename) as fh:
            for line in fh:
                if line.strip():
                    sentences.append(line.strip())
                    labels.append(label)
    return Dataset.from_dict({"sentence": sentences, "label": labels})


_WIKITEXT_SPLITS = {"train": "train", "validation": "valid", "test": "test"}


def load_wikitext2(kind: str = "tokens", splits: tuple[str, ...] = ("validation", "test")):
    """WikiText-2 → ``DatasetDict`` of the requested ``splits``, column ``text`` (one line per row).

    ``kind="tokens"`` is the tokenized release (rare words ``<unk>``), ``"raw"`` the original words. The
    training split (2.09M tokens) exists only tokenized (the mirror has no ``wiki.train.raw``), so
    ``splits=("train",)`` needs ``kind="tokens"``.
    """
    from datasets import Dataset, DatasetDict

    if kind not in ("tokens", "raw"):
        raise ValueError(f"kind must be one of ['tokens', 'raw'], got {kind!r}")
    if isinstance(splits, str) or not isinstance(splits, (tuple, list)) or not splits:
        raise TypeError(f"splits must be a non-empty tuple of split names from {list(_WIKITEXT_SPLITS)}, "
                        f"got {splits!r}")
    unknown = [s for s in splits if s not in _WIKITEXT_SPLITS]
    if unknown:
        raise ValueError(f"unknown WikiText-2 {noun(len(unknown), 'split')} {unknown}; "
                         f"known: {list(_WIKITEXT_SPLITS)}")
    if "train" in splits and kind == "raw":
        raise ValueError("WikiText-2's training split is available tokenized only: use kind='tokens'")
    out = {}
    for split in splits:
        with open_text("wikitext-2", f"wiki.{_WIKITEXT_SPLITS[split]}.{kind}") as fh:
            out[split] = Dataset.from_dict({"text": [line.rstrip("\n") for line in fh]})
    return DatasetDict(out)


_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def clean_review(text: str) -> str:
    """An IMDB review as plain text: the HTML line breaks (``<br />``) become spaces, U+0085 (which stands for
    "…" in the original reviews) becomes ``...``, and runs of whitespace become one space."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return " ".join(_HTML_BREAK.sub(" ", text).replace("\u0085", "...").split())


IMDB_SPLITS = ("train", "test", "unsup")


def load_imdb(split: str, *, clean: bool = True):
    """IMDB reviews (Maas et al. 2011) → ``Dataset`` with ``text``, ``label`` (1 = positive, 0 = negative,
    -1 for the unlabelled ``unsup`` split) and ``rating`` (1–10 stars; 0 for ``unsup``).

    ``clean=True`` passes every text through :func:`clean_review`. The unlabelled file is read line by line
    (``str.splitlines`` would also split at the U+0085 characters some reviews contain).
    """
    from datasets import Dataset

    if split not in IMDB_SPLITS:
        raise ValueError(f"split must be one of {list(IMDB_SPLITS)}, got {split!r}")
    texts, labels, ratings = [], [], []
    if split == "unsup":
        with open_text("imdb", "unsup.txt") as fh:
            texts = [line.rstrip("\n") for line in fh]
        labels, ratings = [-1] * len(texts), [0] * len(texts)
    else:
        with open_text("imdb", f"{split}.csv") as fh:
            reader = csv.reader(fh)
            header = next(reader)
            if header != ["id", "rating", "label", "text"]:
                raise ValueError(f"imdb/{split}.csv: unexpected header {header}")
            for _, rating, label, text in reader:
                texts.append(text)
                labels.append(1 if label == "pos" else 0)
                ratings.append(int(rating))
    if clean:
        texts = [clean_review(t) for t in texts]
    return Dataset.from_dict({"text": texts, "label": labels, "rating": ratings})


def load_analogies():
    """word2vec analogy questions → ``Dataset`` with ``section``, ``a``, ``b``, ``c``, ``d`` (a:b :: c:d)."""
    from datasets import Dataset

    rows = {"section": [], "a": [], "b": [], "c": [], "d": []}
    section = ""
    with open_text("word-embedding-eval", "questions-words.txt") as fh:
        for line in fh:
            if line.startswith(":"):
                section = line[1:].strip()
                continue
            words = line.split()
            if len(words) == 4:
                rows["section"].append(section)
                for key, word in zip("abcd", words):
                    rows[key].append(word)
    return Dataset.from_dict(rows)


def load_wordsim353():
    """WordSim-353 → ``Dataset`` with ``word1``, ``word2``, ``score`` (human similarity, 0–10)."""
    from datasets import Dataset

    rows = {"word1": [], "word2": [], "score": []}
    with open_text("word-embedding-eval", "wordsim353.tsv") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            w1, w2, score = line.rstrip("\n").split("\t")[:3]
            rows["word1"].append(w1)
            rows["word2"].append(w2)
            rows["score"].append(float(score))
    return Dataset.from_dict(rows)
