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
downloads) and the command line are in :mod:`coursekit.data.store`.

Command line (prefetch before an offline class)::

    python -m coursekit.data list [corpus ...]     # per file: size, where it is, upstream URL, full sha256
    python -m coursekit.data fetch [corpus ...]    # fill the cache: copy from the mirror, else download
    python -m coursekit.data verify [corpus ...]   # re-hash every local copy (mirror and cache); read-only

``fetch`` leaves a verified, decompressed copy of every file in the cache, so the corpora load
afterwards with ``$COURSEKIT_DATA_MIRROR`` unset. An unknown corpus name exits with status 2, a file
that could not be made ready with status 1.
"""

from coursekit.data.loaders import (
    IMDB_SPLITS,
    clean_review,
    load_analogies,
    load_imdb,
    load_rt_polarity,
    load_sst2,
    load_tatoeba,
    load_wikitext2,
    load_wordsim353,
)
from coursekit.data.registry import (
    PROJECT_DATA,
    REGISTRY,
    Corpus,
    DataHashError,
    DataNotFoundError,
    RemoteFile,
    UnknownCorpusError,
    corpus,
    model_dir,
    sha256_bytes,
    sha256_file,
)
from coursekit.data.store import cache_dir, copy_to_cache, open_text, path, read_text, status

__all__ = ["IMDB_SPLITS", "PROJECT_DATA", "REGISTRY", "Corpus", "DataHashError", "DataNotFoundError", "RemoteFile",
           "UnknownCorpusError", "cache_dir", "clean_review", "copy_to_cache", "corpus", "load_analogies",
           "load_imdb", "load_rt_polarity", "load_sst2", "load_tatoeba", "load_wikitext2", "load_wordsim353",
           "model_dir", "open_text", "path", "read_text", "sha256_bytes", "sha256_file", "status"]
