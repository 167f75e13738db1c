"""Local copies of the corpora: the offline mirror, the cache, hashing a copy, downloading, and the public access.

A file is looked for in ``$COURSEKIT_DATA_MIRROR`` (plain or ``.gz``), then in the cache (:func:`cache_dir`),
then downloaded once from its upstream URL; every copy is checked against the sha256 in
:data:`coursekit.data.registry.REGISTRY` before use, and written to the cache through a temporary file, so a
crash never leaves half a file. :func:`path`, :func:`open_text`, :func:`read_text` and :func:`status` are the
public way in; :func:`copy_to_cache` adds a file obtained by other means; :func:`build_imdb_file` assembles
IMDB's files from upstream's one-file-per-review archive. The ``list`` / ``fetch`` / ``verify`` command is
:mod:`coursekit.data.__main__`.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from coursekit.data.registry import (
    DataHashError,
    DataNotFoundError,
    RemoteFile,
    corpus,
    sha256_bytes,
    sha256_file,
)

MIRROR_ENV = "COURSEKIT_DATA_MIRROR"
CACHE_ENV = "COURSEKIT_CACHE"
FETCH_HINT = "python -m coursekit.data fetch {corpus}"


def cache_dir() -> Path:
    """Where downloads are kept: ``$COURSEKIT_CACHE``, ``data/cache`` in a checkout, or ``~/.cache/coursekit``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").exists() and (checkout / "data").is_dir():
        return checkout / "data" / "cache"
    return Path.home() / ".cache" / "coursekit"


def _where(path: Path) -> str:
    """``"mirror"``, ``"cache"`` or ``"given"``: which kind of copy ``path`` is (for short messages)."""
    resolved = Path(path).resolve()
    mirror = os.environ.get(MIRROR_ENV)
    if mirror and Path(mirror).expanduser().resolve() in resolved.parents:
        return "mirror"
    if cache_dir().resolve() in resolved.parents:
        return "cache"
    return "given"


def _verify(path: Path, expected: str, corpus_name: str) -> Path:
    try:
        got = sha256_file(path)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:  # truncated gzip raises EOFError
        raise DataHashError(f"{corpus_name}: {path} could not be read completely ({exc}); "
                            f"delete it and run `{FETCH_HINT.format(corpus=corpus_name)}`",
                            short=f"{_where(path)} copy is truncated or unreadable ({path.name}; not used)") from exc
    if got != expected:
        raise DataHashError(f"{corpus_name}: {path} has sha256 {got}, expected {expected}. The file is corrupt, "
                            f"truncated or a different version; it was not used. Delete it and run "
                            f"`{FETCH_HINT.format(corpus=corpus_name)}`.",
                            short=f"{_where(path)} copy has the wrong sha256 ({path.name}; not used)")
    return path


def _mirror_candidates(corpus_name: str, filename: str) -> list[Path]:
    root = os.environ.get(MIRROR_ENV)
    if not root:
        return []
    base = Path(root).expanduser() / corpus_name
    return [base / filename, base / (filename + ".gz")]


def _local_copies(corpus_name: str, filename: str) -> tuple[Path | None, Path | None]:
    """``(mirror copy, cache copy)`` of one file, each ``None`` where absent (nothing is read or hashed)."""
    mirror = next((p for p in _mirror_candidates(corpus_name, filename) if p.exists()), None)
    cached = cache_dir() / corpus_name / filename
    return mirror, cached if cached.exists() else None


def _review_files(tf: tarfile.TarFile, folder: str) -> dict[int, tuple[int, str]]:
    """``{id: (rating, text)}`` of the ``<id>_<rating>.txt`` files directly inside ``folder`` of an aclImdb archive."""
    reviews = {}
    for info in tf.getmembers():
        parent, _, leaf = info.name.rpartition("/")
        if info.isfile() and parent == folder and leaf.endswith(".txt"):
            review_id, _, rating = leaf[:-4].partition("_")
            reviews[int(review_id)] = (int(rating), tf.extractfile(info).read().decode("utf-8"))
    if sorted(reviews) != list(range(len(reviews))) or not reviews:
        raise DataNotFoundError(f"{folder}: expected review files with ids 0..n-1, found {len(reviews)} files")
    return reviews


def build_imdb_file(tf: tarfile.TarFile, folder: str) -> bytes:
    """One file of the ``imdb`` corpus from the upstream archive's one-file-per-review folders.

    ``aclImdb/train/unsup`` → ``unsup.txt``: review *i* on line *i* (0-based), each followed by ``\n``.
    ``aclImdb/train`` or ``aclImdb/test`` → the CSV ``id,rating,label,text``: ``neg`` ids 0…n−1, then ``pos``
    (Python ``csv`` defaults, ``\n`` line ends). The texts are kept byte for byte.
    """
    if folder.endswith("/unsup"):
        reviews = _review_files(tf, folder)
        return "".join(reviews[i][1] + "\n" for i in range(len(reviews))).encode("utf-8")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "rating", "label", "text"])
    for label in ("neg", "pos"):
        reviews = _review_files(tf, f"{folder}/{label}")
        writer.writerows([i, reviews[i][0], label, reviews[i][1]] for i in range(len(reviews)))
    return out.getvalue().encode("utf-8")


def _download(url: str, member: str | None, built_from: str | None = None) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - URLs come from the registry
        payload = response.read()
    if built_from is not None:
        with tarfile.open(fileobj=io.BytesIO(payload)) as tf:
            return build_imdb_file(tf, built_from)
    if member is None:
        return payload
    if url.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(payload)) as zf:
            return zf.read(member)
    with tarfile.open(fileobj=io.BytesIO(payload)) as tf:
        extracted = tf.extractfile(member)
        if extracted is None:
            raise DataNotFoundError(f"{member} is not a file in {url}")
        return extracted.read()


def _why(exc: BaseException) -> str:
    """A download failure in a few words: ``HTTP 404``, ``Temporary failure in name resolution``, ``timed out``."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    if isinstance(exc, urllib.error.URLError):
        reason = exc.reason
        text = (reason.strerror if isinstance(reason, OSError) and reason.strerror else None) or str(reason)
    elif isinstance(exc, TimeoutError):
        text = "timed out"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = " ".join(str(text).split())
    return text if len(text) <= 60 else text[:59] + "…"


def _write_atomically(target: Path, write) -> Path:
    """Create ``target`` through a temporary file beside it, so a crash never leaves a half-written file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _download_to_cache(spec: RemoteFile, corpus_name: str, searched: list[str]) -> Path:
    try:
        payload = _download(spec.url, spec.member, spec.built_from)
    except Exception as exc:  # noqa: BLE001 - any network failure becomes one clear message
        raise DataNotFoundError(_missing_message(corpus_name, spec.name, searched, exc),
                                short=f"no local copy and the download failed ({_why(exc)})") from exc
    got = sha256_bytes(payload)
    if got != spec.sha256:
        raise DataHashError(f"{corpus_name}: download of {spec.url} gave {spec.name} with sha256 {got}, "
                            f"expected {spec.sha256}; not saved.",
                            short="the download has the wrong sha256 (not saved)")
    return _write_atomically(cache_dir() / corpus_name / spec.name, lambda fh: fh.write(payload))


def _fetch_to_cache(corpus_name: str, filename: str) -> tuple[Path, str]:
    """Make sure the cache holds a verified copy of one file; return it and how it got there.

    A good cache copy is kept; otherwise the mirror copy is verified and copied (decompressed), else the file
    is downloaded. A damaged cache copy is replaced only by a verified one, never deleted on its own.
    """
    spec = corpus(corpus_name).file(filename)
    cached = cache_dir() / corpus_name / filename
    damaged: DataHashError | None = None
    if cached.exists():
        try:
            _verify(cached, spec.sha256, corpus_name)
            return cached, "already in the cache"
        except DataHashError as exc:
            damaged = exc
    replaced = " (replaced a damaged cache copy)" if damaged else ""
    mirror, _ = _local_copies(corpus_name, filename)
    if mirror is not None:
        return copy_to_cache(corpus_name, filename, mirror), "copied from the mirror" + replaced
    searched = [*map(str, _mirror_candidates(corpus_name, filename)), str(cached)]
    try:
        return _download_to_cache(spec, corpus_name, searched), "downloaded" + replaced
    except DataNotFoundError:
        if damaged is not None:
            raise damaged from None
        raise


def _missing_message(corpus_name: str, filename: str, searched: list[str], exc: Exception | None) -> str:
    mirror_note = "" if os.environ.get(MIRROR_ENV) else f" (set ${MIRROR_ENV} to use an offline mirror)"
    reason = f"; the download failed: {exc}" if exc else ""
    return (f"corpus {corpus_name!r}: {filename} not found. Searched: {', '.join(searched)}{mirror_note}{reason}. "
            f"Fetch it while online with `{FETCH_HINT.format(corpus=corpus_name)}`, or point "
            f"${MIRROR_ENV} at a directory holding {corpus_name}/{filename}.")


def copy_to_cache(corpus_name: str, filename: str, source: Path) -> Path:
    """Put a file you obtained by other means into the cache after verifying its hash (``.gz`` is decompressed)."""
    spec = corpus(corpus_name).file(filename)
    if not Path(source).is_file():
        raise FileNotFoundError(f"no file at {source}")
    source = Path(source)
    _verify(source, spec.sha256, corpus_name)
    opener = gzip.open if source.suffix == ".gz" else open

    def write(dst) -> None:
        with opener(source, "rb") as src:
            shutil.copyfileobj(src, dst)

    # through a temporary file: a mirror that is the cache itself is never truncated, a crash leaves no half file
    return _write_atomically(cache_dir() / corpus_name / filename, write)


# --------------------------------------------------------------------------- public access


def path(corpus_name: str, filename: str, *, download: bool = True) -> Path:
    """A verified local path to one corpus file (mirror → cache → download).

    Mirror files stored gzipped are returned as the ``.gz`` path; read them with :func:`open_text`.
    """
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
    out = {}
    for f in corpus(corpus_name).files:
        mirror, cached = _local_copies(corpus_name, f.name)
        out[f.name] = "mirror" if mirror else "cache" if cached else "missing"
    return out
