"""What the course's corpora are: the registry (upstream URL, sha256, licence, citation) and the errors.

Every file is identified by the sha256 of its *content* (after decompression), so one hash verifies it
whether it comes from the upstream archive, a gzipped offline mirror or the cache. This is the lowest
module of :mod:`coursekit.data`: :mod:`~coursekit.data.store` finds and verifies local copies of these
files, :mod:`~coursekit.data.loaders` reads them. :data:`PROJECT_DATA` and :func:`model_dir` locate the
course's own committed models.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

#: The project's own ``data/`` folder (committed models and vectors), found from the package's location,
#: never from the current directory: a notebook run from ``notebooks/``, ``student/`` or any other folder
#: reads the same files.
PROJECT_DATA = Path(__file__).resolve().parents[2] / "data"


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
    and :mod:`coursekit.data.store` assembles it from the archive's many files (IMDB: one file per
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
