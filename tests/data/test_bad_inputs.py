"""Bad calls to coursekit.data (registry, store, loaders): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
Files are damaged in a temporary folder, never in ``data/``; the mirror and cache are temporary folders too.
"""

from __future__ import annotations

from pathlib import Path

from helpers.bad_inputs import Bad, bad_call_test, tmp, with_env

from coursekit import data
from coursekit.data import store as data_store

EXEMPT = {
    "coursekit.data.registry.DataNotFoundError": "an exception class raised by the data layer",
    "coursekit.data.registry.DataHashError": "an exception class raised by the data layer",
    "coursekit.data.registry.UnknownCorpusError": "an exception class raised by the data layer (a KeyError)",
    "coursekit.data.registry.RemoteFile": "a frozen registry record written in registry.py, never by a caller",
    "coursekit.data.store.cache_dir": "takes no arguments: it reads $COURSEKIT_CACHE",
}


# ==============================================================================================
# coursekit.data
# ==============================================================================================

def damaged_mirror(corpus_name: str, filename: str, call):
    """Run ``call()`` with a mirror whose copy of ``corpus_name/filename`` is damaged (and an empty cache)."""
    mirror, cache = tmp(), tmp()
    (mirror / corpus_name).mkdir()
    (mirror / corpus_name / filename).write_bytes(b"not the real file\n")
    return with_env(call, COURSEKIT_DATA_MIRROR=str(mirror), COURSEKIT_CACHE=str(cache))


def offline(call):
    """Run ``call()`` with an empty mirror and an empty cache."""
    return with_env(call, COURSEKIT_DATA_MIRROR=str(tmp()), COURSEKIT_CACHE=str(tmp()))


def file_with(content: bytes) -> Path:
    path = tmp() / "input.txt"
    path.write_bytes(content)
    return path


def imdb_archive_with_a_gap():
    """A tar archive laid out like aclImdb's, whose unsup folder lacks review 1 (ids 0 and 2)."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name in ("aclImdb/train/unsup/0_0.txt", "aclImdb/train/unsup/2_0.txt"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tf.addfile(info, io.BytesIO(b"a"))
    buf.seek(0)
    return tarfile.open(fileobj=buf)


DATA = [
    Bad("a list of reviews", data.clean_review, lambda: data.clean_review(["a <br /> b"]), TypeError,
        r"text must be a str, got list"),
    Bad("an unknown split", data.load_imdb, lambda: data.load_imdb("validation"), ValueError,
        r"split must be one of \['train', 'test', 'unsup'\], got 'validation'"),
    Bad("review ids with a gap", data_store.build_imdb_file,
        lambda: data_store.build_imdb_file(imdb_archive_with_a_gap(), "aclImdb/train/unsup"), data.DataNotFoundError,
        r"aclImdb/train/unsup: expected review files with ids 0..n-1, found 2 files"),
    Bad("empty name", data.model_dir, lambda: data.model_dir(""), ValueError,
        r"name must be the name of a folder under data/, e.g. 'gpt', got ''"),
    Bad("a path outside data/", data.model_dir, lambda: data.model_dir("../etc"), ValueError,
        r"name must be the name of a folder under data/.*got '../etc'"),
    Bad("not a string", data.model_dir, lambda: data.model_dir(3), ValueError,
        r"name must be the name of a folder under data/.*got 3"),

    Bad("unknown corpus", data.corpus, lambda: data.corpus("imagenet"), data.UnknownCorpusError,
        r"^unknown corpus 'imagenet'; known corpora: imdb, rt-polarity, sst2"),
    Bad("a typo of a known corpus", data.corpus, lambda: data.corpus("sst-2"), data.UnknownCorpusError,
        r"^unknown corpus 'sst-2'; did you mean 'sst2'\? known corpora: imdb, rt-polarity, sst2, tatoeba-eng-fra"),
    Bad("not a string", data.corpus, lambda: data.corpus(["sst2"]), KeyError,
        r"unknown corpus \['sst2'\]; known corpora"),
    Bad("unknown file", data.Corpus.file, lambda: data.corpus("sst2").file("train.csv"), KeyError,
        r"corpus 'sst2' has no file 'train.csv'; it has \['train.tsv', 'dev.tsv', 'test.tsv'\]"),

    Bad("a str", data.sha256_bytes, lambda: data.sha256_bytes("text"), TypeError,
        r"data must be bytes, got str \(encode it first\)"),
    Bad("missing file", data.sha256_file, lambda: data.sha256_file(tmp() / "absent.txt"), FileNotFoundError,
        r"no file at .*absent.txt"),
    Bad("a folder", data.sha256_file, lambda: data.sha256_file(tmp()), FileNotFoundError, r"no file at"),

    Bad("unknown corpus", data.path, lambda: data.path("imagenet", "x"), KeyError, r"unknown corpus 'imagenet'"),
    Bad("unknown file", data.path, lambda: data.path("sst2", "train.csv"), KeyError,
        r"corpus 'sst2' has no file 'train.csv'"),
    Bad("damaged mirror copy", data.path,
        lambda: damaged_mirror("tinyshakespeare", "input.txt", lambda: data.path("tinyshakespeare", "input.txt")),
        data.DataHashError, r"tinyshakespeare: .*input.txt has sha256 .*, expected .*it was not used"),
    Bad("missing offline", data.path,
        lambda: offline(lambda: data.path("tinyshakespeare", "input.txt", download=False)), data.DataNotFoundError,
        r"corpus 'tinyshakespeare': input.txt not found. Searched: .*python -m coursekit.data fetch tinyshakespeare"),

    Bad("unknown corpus", data.open_text, lambda: data.open_text("imagenet", "x"), KeyError, r"unknown corpus"),
    Bad("damaged mirror copy", data.open_text,
        lambda: damaged_mirror("tinyshakespeare", "input.txt", lambda: data.open_text("tinyshakespeare", "input.txt")),
        data.DataHashError, r"has sha256 .*it was not used"),

    Bad("several files and no filename", data.read_text, lambda: data.read_text("sst2"), ValueError,
        r"corpus 'sst2' has several files \['train.tsv', 'dev.tsv', 'test.tsv'\]; name one"),
    Bad("unknown corpus", data.read_text, lambda: data.read_text("imagenet"), KeyError, r"unknown corpus"),
    Bad("damaged mirror copy", data.read_text,
        lambda: damaged_mirror("tinyshakespeare", "input.txt", lambda: data.read_text("tinyshakespeare")),
        data.DataHashError, r"has sha256 .*it was not used"),

    Bad("unknown release", data.load_tatoeba, lambda: data.load_tatoeba("wmt"), ValueError,
        r"release must be one of \['d2l', 'pytorch'\], got 'wmt'"),
    Bad("damaged mirror copy", data.load_tatoeba,
        lambda: damaged_mirror("tatoeba-eng-fra", "fra.txt", data.load_tatoeba), data.DataHashError,
        r"tatoeba-eng-fra: .*fra.txt has sha256"),
    Bad("damaged mirror copy", data.load_sst2, lambda: damaged_mirror("sst2", "train.tsv", data.load_sst2),
        data.DataHashError, r"sst2: .*train.tsv has sha256"),
    Bad("damaged mirror copy", data.load_rt_polarity,
        lambda: damaged_mirror("rt-polarity", "rt-polarity.neg", data.load_rt_polarity), data.DataHashError,
        r"rt-polarity: .*rt-polarity.neg has sha256"),
    Bad("unknown kind", data.load_wikitext2, lambda: data.load_wikitext2("bpe"), ValueError,
        r"kind must be one of \['tokens', 'raw'\], got 'bpe'"),
    Bad("damaged mirror copy", data.load_wikitext2,
        lambda: damaged_mirror("wikitext-2", "wiki.valid.tokens", data.load_wikitext2), data.DataHashError,
        r"wikitext-2: .*wiki.valid.tokens has sha256"),
    Bad("damaged mirror copy", data.load_analogies,
        lambda: damaged_mirror("word-embedding-eval", "questions-words.txt", data.load_analogies), data.DataHashError,
        r"word-embedding-eval: .*questions-words.txt has sha256"),
    Bad("damaged mirror copy", data.load_wordsim353,
        lambda: damaged_mirror("word-embedding-eval", "wordsim353.tsv", data.load_wordsim353), data.DataHashError,
        r"word-embedding-eval: .*wordsim353.tsv has sha256"),

    Bad("unknown corpus", data.status, lambda: data.status("imagenet"), KeyError, r"unknown corpus 'imagenet'"),

    Bad("a file of other content", data_store.copy_to_cache,
        lambda: offline(lambda: data_store.copy_to_cache("tinyshakespeare", "input.txt", file_with(b"hello"))),
        data.DataHashError, r"input.txt has sha256 .*, expected .*it was not used"),
    Bad("missing source", data_store.copy_to_cache,
        lambda: offline(lambda: data_store.copy_to_cache("tinyshakespeare", "input.txt", tmp() / "absent.txt")),
        FileNotFoundError, r"no file at .*absent.txt"),
    Bad("unknown file", data_store.copy_to_cache,
        lambda: data_store.copy_to_cache("tinyshakespeare", "output.txt", file_with(b"hello")), KeyError,
        r"corpus 'tinyshakespeare' has no file 'output.txt'"),
]


ROWS = DATA

test_bad_call = bad_call_test(ROWS)
