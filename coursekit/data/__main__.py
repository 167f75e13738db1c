"""``python -m coursekit.data list | fetch | verify [corpus ...]``: prefetch and check the corpora offline.

``list`` shows per file its size, where it is and its upstream URL and sha256; ``fetch`` leaves a verified,
decompressed copy of every file in the cache (copied from the mirror, else downloaded), so the corpora load
afterwards with ``$COURSEKIT_DATA_MIRROR`` unset; ``verify`` re-hashes every local copy and changes nothing.
An unknown corpus name exits with status 2, a file that could not be made ready with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from coursekit import data
from coursekit.data.registry import REGISTRY, DataHashError, DataNotFoundError, RemoteFile, UnknownCorpusError, corpus
from coursekit.data.store import (
    CACHE_ENV,
    FETCH_HINT,
    MIRROR_ENV,
    _fetch_to_cache,
    _local_copies,
    _mirror_candidates,
    _missing_message,
    _verify,
    cache_dir,
)


def _size_text(n: int | None) -> str:
    if n is None:
        return "size ?"
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _print_list(names: list[str]) -> None:
    mirror_root = os.environ.get(MIRROR_ENV)
    print(f"mirror (${MIRROR_ENV}): {Path(mirror_root).expanduser() if mirror_root else 'not set'}")
    print(f"cache: {cache_dir()}")
    print("Per file: size, where it is (mirror / cache / missing; not re-hashed, `verify` does that), "
          "upstream URL, and the full sha256 of its content (after decompression).")
    for name in names:
        c = REGISTRY[name]
        print(f"\n{c.name}: {c.description}\n  license: {c.license}\n  cite: {c.citation}")
        for f in c.files:
            mirror, cached = _local_copies(c.name, f.name)
            where = [w for w in (mirror and ("mirror (gzipped)" if mirror.suffix == ".gz" else "mirror"),
                                 cached and "cache") if w] or ["missing"]
            size = f.size
            if size is None and (cached or mirror) and (cached or mirror).suffix != ".gz":
                size = (cached or mirror).stat().st_size
            print(f"  {f.name:20s} {_size_text(size):>8s}  {' + '.join(where)}")
            inside = (f"  (the file {f.member} inside)" if f.member else
                      f"  (assembled from the review files under {f.built_from})" if f.built_from else "")
            print(f"    url     {f.url}" + inside)
            print(f"    sha256  {f.sha256}")


def _verify_local(corpus_name: str, spec: RemoteFile) -> str:
    """Hash every local copy of one file (mirror and cache); read-only. Returns which copies were checked."""
    mirror, cached = _local_copies(corpus_name, spec.name)
    if mirror is None and cached is None:
        searched = [*map(str, _mirror_candidates(corpus_name, spec.name)), str(cache_dir() / corpus_name / spec.name)]
        raise DataNotFoundError(_missing_message(corpus_name, spec.name, searched, None),
                                short="missing (no copy in the mirror or the cache)")
    checked = []
    for kind, copy in (("mirror", mirror), ("cache", cached)):
        if copy is not None:
            _verify(copy, spec.sha256, corpus_name)
            checked.append(kind)
    return "sha256 ok in the " + " and the ".join(checked)


def _failed_names(failures: list[tuple[str, str, Exception]]) -> str:
    """``sst2 (all 3 files), wikitext-2/wiki.test.raw``: the failed files, grouped by corpus when all failed."""
    parts = []
    for name in dict.fromkeys(n for n, _, _ in failures):
        files = [f for n, f, _ in failures if n == name]
        total = len(REGISTRY[name].files)
        whole = total > 1 and len(files) == total
        parts += [f"{name} (all {total} files)"] if whole else [f"{name}/{f}" for f in files]
    return ", ".join(parts)


def _fetch_or_verify(command: str, names: list[str]) -> int:
    failures: list[tuple[str, str, Exception]] = []
    total = 0
    for name in names:
        for f in REGISTRY[name].files:
            total += 1
            try:
                note = _fetch_to_cache(name, f.name)[1] if command == "fetch" else _verify_local(name, f)
            except (DataNotFoundError, DataHashError) as exc:
                failures.append((name, f.name, exc))
                print(f"FAILED  {name}/{f.name}: {exc.short}", file=sys.stderr, flush=True)
            except OSError as exc:  # e.g. a cache folder that cannot be written
                failures.append((name, f.name, exc))
                print(f"FAILED  {name}/{f.name}: cannot write the cache copy ({exc.strerror or exc})",
                      file=sys.stderr, flush=True)
            else:
                print(f"ok      {name}/{f.name}  {note}", flush=True)
    ready = total - len(failures)
    head = (f"{ready} of {total} files ready in {cache_dir()}" if command == "fetch"
            else f"{ready} of {total} files verified (nothing was changed)")
    if not failures:
        print(head + (f"; the corpora load without ${MIRROR_ENV}" if command == "fetch" else ""), flush=True)
        return 0
    mirror = os.environ.get(MIRROR_ENV)
    failed_corpora = " ".join(dict.fromkeys(n for n, _, _ in failures))
    hints = []
    if any(isinstance(e, DataNotFoundError) for _, _, e in failures):
        if command == "verify":
            hints.append(f"fetch them with `{FETCH_HINT.format(corpus=failed_corpora)}`")
        elif mirror:
            hints.append(f"re-run with network, or add them to the mirror {mirror}")
        else:
            hints.append(f"re-run with network or set {MIRROR_ENV}")
    if any(isinstance(e, DataHashError) for _, _, e in failures):
        hints.append("damaged copies are never used: delete them and re-run fetch")
    if any(not isinstance(e, (DataNotFoundError, DataHashError)) for _, _, e in failures):
        hints.append(f"make the cache folder writable or set {CACHE_ENV}")
    print(f"{head}; {len(failures)} failed: {_failed_names(failures)}; {'; '.join(hints)}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.data", description=data.__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    helps = {
        "list": "show, per file, its size, where it is (mirror / cache / missing), upstream URL and full sha256",
        "fetch": "put a verified copy of every file in the cache (copied from the mirror, else downloaded), "
                 f"so that the corpora load offline without ${MIRROR_ENV}",
        "verify": "re-hash every local copy (mirror and cache); changes nothing",
    }
    for name, text in helps.items():
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("corpora", nargs="*", metavar="corpus", help="corpus names (default: all)")
    args = parser.parse_args(argv)
    names = list(dict.fromkeys(args.corpora)) or sorted(REGISTRY)
    unknown = []
    for name in names:
        try:
            corpus(name)
        except UnknownCorpusError as exc:
            unknown.append(str(exc))
    for message in unknown:
        print(f"{parser.prog} {args.command}: error: {message}", file=sys.stderr)
    if unknown:
        return 2
    if args.command == "list":
        _print_list(names)
        return 0
    return _fetch_or_verify(args.command, names)


if __name__ == "__main__":
    raise SystemExit(main())
