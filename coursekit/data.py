"""The corpora of the course: where they come from, how they are verified, how they are loaded.

Every file is identified by the sha256 of its *content* (after decompression), so one hash
verifies it whether it comes from the upstream archive, a gzipped offline mirror or the cache.
Lookup order for a file:

1. the mirror directory in ``$COURSEKIT_DATA_MIRROR`` (``<mirror>/<corpus>/<file>`` or ``<file>.gz``),
2. the cache (``$COURSEKIT_CACHE``, else ``data/cache`` inside a source checkout, else
   ``~/.cache/coursekit``),
3. the upstream URL — downloaded once into the cache and verified.

A file whose hash does not match is never used: :class:`DataHashError`. Offline and missing:
:class:`DataNotFoundError` naming the corpus, the places searched and the fetch command.
This module holds the registry, the public access (:func:`path`, :func:`open_text`, :func:`read_text`,
:func:`status`) and the loaders; the local-copy machinery behind them (mirror, cache, hashing of copies,
downloads) and the command line are in :mod:`coursekit.data_store`.

Command line (prefetch before an offline class)::

    python -m coursekit.data list [corpus ...]     # per file: size, where it is, upstream URL, full sha256
    python -m coursekit.data fetch [corpus ...]    # fill the cache: copy from the mirror, else download
    python -m coursekit.data verify [corpus ...]   # re-hash every local copy (mirror and cache); read-only

``fetch`` leaves a verified, decompressed copy of every file in the cache, so the corpora load
afterwards with ``$COURSEKIT_DATA_MIRROR`` unset. An unknown corpus name exits with status 2, a file
that could not be made ready with status 1.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

#: The project's own ``data/`` folder (committed models and vectors), found from the package's location,
#: never from the current directory: a notebook run from ``notebooks/``, ``student/`` or any other folder
#: reads the same files.
PROJECT_DATA = Path(__file__).resolve().parent.parent / "data"


def model_dir(name: str) -> Path:
    """``data/<name>``, the folder of a committed model (``"bert"``, ``"gpt"``, ``"icl"``, ``"embeddings"``,
    ``"translation"``) in the checkout this package was installed from (``pip install -e .``)."""
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be the name of a folder under data/, e.g. 'gpt', got {name!r}")
    if not PROJECT_DATA.is_dir():
        raise FileNotFoundError(f"{PROJECT_DATA} does not exist: the committed models live in the course's "
                                "git checkout; install the package from it with `pip install -e .`")
    return PROJECT_DATA / name


class DataNotFoundError(FileNotFoundError):
    """A corpus file is neither in the mirror nor in the cache, and could not be downloaded.

    ``short`` is the reason in a few words (what ``python -m coursekit.data fetch`` prints per file).
    """

    def __init__(self, message: str, short: str | None = None):
        super().__init__(message)
        self.short = short or message


class DataHashError(ValueError):
    """A corpus file exists but its content does not have the registered sha256 (``short``: the reason in brief)."""

    def __init__(self, message: str, short: str | None = None):
        super().__init__(message)
        self.short = short or message


class UnknownCorpusError(KeyError):
    """A corpus name that is not registered; the message names the nearest known one."""

    def __str__(self) -> str:  # a plain KeyError would print its message in quotes
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class RemoteFile:
    """One file of a corpus: its name here, its content hash and where upstream keeps it.

    ``url`` points at the file itself or at an archive; ``member`` names the file inside a
    ``.zip`` / ``.tar.gz`` archive. ``built_from`` is set instead where upstream has no such file
    and :mod:`coursekit.data_store` assembles it from the archive's many files (IMDB: one file per
    review); the rule is named there and the result is checked against ``sha256`` like any download.
    ``size`` is the length in bytes of the content (after decompression), when known; only
    ``sha256`` is checked.
    """

    name: str
    sha256: str
    url: str
    member: str | None = None
    size: int | None = None
    built_from: str | None = None


@dataclass(frozen=True)
class Corpus:
    name: str
    description: str
    license: str
    citation: str
    files: tuple[RemoteFile, ...] = field(default_factory=tuple)

    def file(self, name: str) -> RemoteFile:
        for f in self.files:
            if f.name == name:
                return f
        raise KeyError(f"corpus {self.name!r} has no file {name!r}; it has {[f.name for f in self.files]}")


_GH = "https://raw.githubusercontent.com"
_WT2_RAW = f"{_GH}/pytorch/examples/cf74c81ec00256a9511c054aaf0b3f62cd3aa62d/word_language_model/data/wikitext-2"
_WT2_TOK = f"{_GH}/pytorch/examples/d5678bc8ac0cdd79dbd5e44d4130271018bcec4e/word_language_model/data/wikitext-2"
_GENSIM = f"{_GH}/piskvorky/gensim/4.3.3/gensim/test/test_data"
_WT2_ZIP = "https://wikitext.smerity.com/wikitext-2-v1.zip"
_IMDB = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
_RT = f"{_GH}/dennybritz/cnn-text-classification-tf/18762b459e21d9c70e5c242f8d43fc4e6db37a0d/data/rt-polaritydata"

REGISTRY: dict[str, Corpus] = {c.name: c for c in [
    Corpus(
        "tinyshakespeare", "Several works of Shakespeare in one file (char-rnn).", "public domain",
        "Karpathy, char-rnn (2015), data/tinyshakespeare/input.txt",
        (RemoteFile("input.txt", "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
                    f"{_GH}/karpathy/char-rnn/6f9487a6fe5b420b7ca9afb0d7c078e37c1d1b4e/data/tinyshakespeare/input.txt",
                    size=1115394),),
    ),
    Corpus(
        "tatoeba-eng-fra", "English–French sentence pairs from Tatoeba (manythings.org).",
        "CC-BY 2.0 FR — attribute tatoeba.org and www.manythings.org/anki",
        "Tatoeba, https://tatoeba.org; pairs from https://www.manythings.org/anki",
        (RemoteFile("fra.txt", "0bb85dbaa1c896844649094d7eaf2e34bee34e84fe362b26ce7e8f2e12aae104",
                    "http://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip", member="fra-eng/fra.txt", size=11669748),
         RemoteFile("eng-fra.txt", "6b0f3decdb78600485b58efb541f5a2ab69ba888742ac04180e013084e40de7c",
                    "https://download.pytorch.org/tutorial/data.zip", member="data/eng-fra.txt", size=9541158)),
    ),
    Corpus(
        "sst2", "GLUE SST-2: binary sentiment of movie-review sentences and phrases.",
        "none stated (cite Socher et al. 2013 and Wang et al. 2018)",
        "Socher et al., Recursive Deep Models for Semantic Compositionality Over a Sentiment Treebank, EMNLP 2013; "
        "Wang et al., GLUE, 2018",
        (RemoteFile("train.tsv", "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1",
                    "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", member="SST-2/train.tsv", size=3806081),
         RemoteFile("dev.tsv", "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0",
                    "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", member="SST-2/dev.tsv", size=94931),
         RemoteFile("test.tsv", "69a938605609b3e6663b4487918fe1565eb293734e6e520d0366d1d412fd2a13",
                    "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", member="SST-2/test.tsv", size=197335)),
    ),
    Corpus(
        "rt-polarity", "Movie-review sentence polarity v1.0 (5,331 positive + 5,331 negative).",
        "no explicit license (cite Pang & Lee 2005)",
        "Pang & Lee, Seeing stars, ACL 2005",
        (RemoteFile("rt-polarity.pos", "4134882974a28d0c7b5151256f0e33a6169984ee7372c279e673f1114f475d58",
                    f"{_RT}/rt-polarity.pos", size=626395),
         RemoteFile("rt-polarity.neg", "2d11cfbc790f1cd96d78339f41ce53ced1efa83cd22d37d6788fa3fe3d17e2fd",
                    f"{_RT}/rt-polarity.neg", size=612506)),
    ),
    Corpus(
        "wikitext-2", "WikiText-2 v1: validation and test splits (raw and tokenized), training split (tokenized).",
        "CC BY-SA 3.0",
        "Merity, Xiong, Bradbury, Socher, Pointer Sentinel Mixture Models, 2016",
        (RemoteFile("wiki.valid.raw", "4cd0f6876d07a413aa911261ff6d363c72d757d47f0fdd6015702014c89cb9c7",
                    f"{_WT2_RAW}/valid.txt", size=1146846),
         RemoteFile("wiki.test.raw", "173c87a53759e0201f33e0ccf978e510c2042d7f2cb78229d9a50d79b9e7dd08",
                    f"{_WT2_RAW}/test.txt", size=1290590),
         RemoteFile("wiki.valid.tokens", "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8",
                    f"{_WT2_TOK}/valid.txt", size=1121681),
         RemoteFile("wiki.test.tokens", "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0",
                    f"{_WT2_TOK}/test.txt", size=1256449),
         RemoteFile("wiki.train.tokens", "9e9fa1ad55b1c2c95b08e37dd8e653f638fac2c6de904b79e813611eefbc985f",
                    _WT2_ZIP, member="wikitext-2/wiki.train.tokens", size=10797148)),
    ),
    Corpus(
        "imdb", "IMDB Large Movie Review Dataset v1.0: 50,000 unlabelled reviews (one a line) and 25,000 + 25,000 "
        "labelled ones (CSV: id, rating, label, text). Upstream keeps one file per review; these files are "
        "assembled from its archive in id order (python -m coursekit.data fetch imdb does it when online).",
        "none stated (cite Maas et al. 2011)",
        "Maas, Daly, Pham, Huang, Ng, Potts, Learning Word Vectors for Sentiment Analysis, ACL 2011",
        (RemoteFile("unsup.txt", "99782175a3703967cb05537657e2cea1d9a49bd3f8e2ffb19a15906fc1330551", _IMDB,
                    size=66556794, built_from="aclImdb/train/unsup"),
         RemoteFile("train.csv", "a9bdf1f8c2240da0cb01b613aa443afc49baeeb306004f65bdb04383ed974cc6", _IMDB,
                    size=33554689, built_from="aclImdb/train"),
         RemoteFile("test.csv", "214a56b7870f6530c2c22d414a0798b8e65f6db7d653b8ec307b756658c0da75", _IMDB,
                    size=32772936, built_from="aclImdb/test")),
    ),
    Corpus(
        "word-embedding-eval", "word2vec analogy questions and WordSim-353 (as shipped in gensim).",
        "Apache-2.0 (questions-words) / no explicit license (WordSim-353, cite Finkelstein et al. 2002)",
        "Mikolov et al. 2013 (questions-words.txt); Finkelstein et al., Placing Search in Context, 2002",
        (RemoteFile("questions-words.txt", "8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36",
                    f"{_GENSIM}/questions-words.txt", size=603955),
         RemoteFile("wordsim353.tsv", "f92a022fc2537793a15bc3a8c162ebcd74990e033a228bb6388cb71e4c0b1e1d",
                    f"{_GENSIM}/wordsim353.tsv", size=7186)),
    ),
]}


def _normalized(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _nearest_corpus(name: str) -> str | None:
    """The registered corpus name closest to ``name`` (``"sst-2"`` → ``"sst2"``), or ``None`` if none is close."""
    if not isinstance(name, str):
        return None
    wanted, known = _normalized(name), {_normalized(k): k for k in REGISTRY}
    if wanted in known:                                   # case, hyphens, underscores: SST-2, wikitext2
        return known[wanted]
    containing = [k for n, k in known.items() if len(wanted) >= 3 and wanted in n]
    if len(containing) == 1:                              # a part of the name: tatoeba, shakespeare
        return containing[0]
    close = difflib.get_close_matches(wanted, list(known), n=1, cutoff=0.6)
    return known[close[0]] if close else None


def corpus(name: str) -> Corpus:
    """The registered corpus ``name``; an unknown name raises :class:`UnknownCorpusError` (a ``KeyError``)."""
    if not isinstance(name, str) or name not in REGISTRY:
        guess = _nearest_corpus(name)
        hint = f" did you mean {guess!r}?" if guess else ""
        raise UnknownCorpusError(f"unknown corpus {name!r};{hint} known corpora: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def sha256_bytes(data: bytes) -> str:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {type(data).__name__} (encode it first)")
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """sha256 of a file's content; ``.gz`` files are hashed after decompression."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    h = hashlib.sha256()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def path(corpus_name: str, filename: str, *, download: bool = True) -> Path:
    """A verified local path to one corpus file (mirror → cache → download).

    Mirror files stored gzipped are returned as the ``.gz`` path; read them with :func:`open_text`.
    """
    from coursekit.data_store import _download_to_cache, _mirror_candidates, _missing_message, _verify, cache_dir

    spec = corpus(corpus_name).file(filename)
    searched: list[str] = []
    for candidate in _mirror_candidates(corpus_name, filename):
        searched.append(str(candidate))
        if candidate.exists():
            return _verify(candidate, spec.sha256, corpus_name)
    cached = cache_dir() / corpus_name / filename
    searched.append(str(cached))
    if cached.exists():
        return _verify(cached, spec.sha256, corpus_name)
    if not download:
        raise DataNotFoundError(_missing_message(corpus_name, filename, searched, None),
                                short="missing (no copy in the mirror or the cache)")
    return _download_to_cache(spec, corpus_name, searched)


def open_text(corpus_name: str, filename: str):
    """Open a corpus file as UTF-8 text (transparently gunzipping mirror copies)."""
    p = path(corpus_name, filename)
    if p.suffix == ".gz":
        return gzip.open(p, "rt", encoding="utf-8")
    return open(p, encoding="utf-8")


def read_text(corpus_name: str, filename: str | None = None) -> str:
    """The whole text of a corpus file; ``filename`` may be omitted for one-file corpora."""
    spec = corpus(corpus_name)
    if filename is None:
        if len(spec.files) != 1:
            raise ValueError(f"corpus {corpus_name!r} has several files {[f.name for f in spec.files]}; name one")
        filename = spec.files[0].name
    with open_text(corpus_name, filename) as fh:
        return fh.read()


def status(corpus_name: str) -> dict[str, str]:
    """For each file of a corpus: ``mirror``, ``cache`` or ``missing`` (no download, no hashing)."""
    from coursekit.data_store import _local_copies

    out = {}
    for f in corpus(corpus_name).files:
        mirror, cached = _local_copies(corpus_name, f.name)
        out[f.name] = "mirror" if mirror else "cache" if cached else "missing"
    return out


# --------------------------------------------------------------------------- loaders


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
        raise ValueError(f"unknown WikiText-2 split(s) {unknown}; known: {list(_WIKITEXT_SPLITS)}")
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


if __name__ == "__main__":  # the command line lives with the local copies it manages
    from coursekit.data_store import _cli

    raise SystemExit(_cli())
