"""The data layer without network: mirror hit, cache hit, hash mismatch, truncated file, missing offline."""

import gzip
import hashlib

import pytest
from helpers import SHARED_DATA

from coursekit import data
from coursekit.data import store as data_store
from coursekit.data.__main__ import main as data_cli

CONTENT = b"First Citizen:\nBefore we proceed any further, hear me speak.\n"


@pytest.fixture
def fake_corpus(monkeypatch, tmp_path):
    """Register a one-file corpus whose 'upstream' is a local file:// URL."""
    upstream = tmp_path / "upstream" / "input.txt"
    upstream.parent.mkdir()
    upstream.write_bytes(CONTENT)
    spec = data.Corpus("fake", "a test corpus", "public domain", "nobody",
                       (data.RemoteFile("input.txt", hashlib.sha256(CONTENT).hexdigest(), upstream.as_uri()),))
    monkeypatch.setitem(data.REGISTRY, "fake", spec)
    monkeypatch.setenv("COURSEKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("COURSEKIT_DATA_MIRROR", raising=False)
    return tmp_path, upstream


def test_mirror_hit_plain_and_gzipped(fake_corpus, monkeypatch):
    tmp, upstream = fake_corpus
    mirror = tmp / "mirror" / "fake"
    mirror.mkdir(parents=True)
    with gzip.open(mirror / "input.txt.gz", "wb") as fh:
        fh.write(CONTENT)
    upstream.unlink()  # prove the network path is not used
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))
    assert data.path("fake", "input.txt").name == "input.txt.gz"
    assert data.read_text("fake") == CONTENT.decode()
    (mirror / "input.txt").write_bytes(CONTENT)
    assert data.path("fake", "input.txt").name == "input.txt"


def test_download_then_cache_hit(fake_corpus):
    tmp, upstream = fake_corpus
    p = data.path("fake", "input.txt")
    assert p == tmp / "cache" / "fake" / "input.txt" and p.read_bytes() == CONTENT
    upstream.unlink()
    assert data.path("fake", "input.txt") == p  # served from the cache, no download
    assert data.status("fake") == {"input.txt": "cache"}


def test_hash_mismatch_in_mirror_is_refused(fake_corpus, monkeypatch):
    tmp, _ = fake_corpus
    mirror = tmp / "mirror" / "fake"
    mirror.mkdir(parents=True)
    (mirror / "input.txt").write_bytes(CONTENT.replace(b"speak", b"sing"))
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))
    with pytest.raises(data.DataHashError, match=r"fake: .*input.txt has sha256 .* expected .*not used"):
        data.path("fake", "input.txt")


def test_truncated_gzip_is_a_hash_error(fake_corpus, monkeypatch):
    tmp, _ = fake_corpus
    mirror = tmp / "mirror" / "fake"
    mirror.mkdir(parents=True)
    blob = gzip.compress(CONTENT * 200)
    (mirror / "input.txt.gz").write_bytes(blob[: len(blob) // 2])
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))
    with pytest.raises(data.DataHashError, match="could not be read completely"):
        data.path("fake", "input.txt")


def test_corrupt_download_is_not_cached(fake_corpus):
    tmp, upstream = fake_corpus
    upstream.write_bytes(b"something else")
    with pytest.raises(data.DataHashError, match="not saved"):
        data.path("fake", "input.txt")
    assert not (tmp / "cache" / "fake" / "input.txt").exists()


def test_missing_offline_names_corpus_places_and_command(fake_corpus):
    tmp, upstream = fake_corpus
    upstream.unlink()
    with pytest.raises(data.DataNotFoundError) as info:
        data.path("fake", "input.txt")
    msg = str(info.value)
    assert "corpus 'fake'" in msg and str(tmp / "cache" / "fake" / "input.txt") in msg
    assert "python -m coursekit.data fetch fake" in msg and "COURSEKIT_DATA_MIRROR" in msg
    with pytest.raises(data.DataNotFoundError):
        data.path("fake", "input.txt", download=False)


def test_unknown_corpus_and_file():
    with pytest.raises(KeyError, match="known corpora"):
        data.corpus("imagenet")
    with pytest.raises(KeyError, match="has no file"):
        data.corpus("sst2").file("train.csv")


@pytest.mark.parametrize("typo, meant", [("sst-2", "sst2"), ("SST2", "sst2"), ("wikitext2", "wikitext-2"),
                                         ("tatoeba", "tatoeba-eng-fra"), ("shakespeare", "tinyshakespeare"),
                                         ("rt_polarity", "rt-polarity"), ("word-embeddings", "word-embedding-eval")])
def test_unknown_corpus_names_the_nearest_known_one(typo, meant):
    with pytest.raises(data.UnknownCorpusError) as info:
        data.corpus(typo)
    assert isinstance(info.value, KeyError)                      # callers that catch KeyError keep working
    assert str(info.value) == (f"unknown corpus {typo!r}; did you mean {meant!r}? "
                               f"known corpora: {', '.join(sorted(data.REGISTRY))}")   # no KeyError quotes


def test_cli_unknown_corpus_is_one_line_and_exit_code_2(fake_corpus, capsys):
    tmp, _ = fake_corpus
    for command in ("fetch", "verify", "list"):
        assert data_cli([command, "fake", "sst-2"]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""                                # nothing was done, not even for 'fake'
        assert captured.err.splitlines() == [
            f"python -m coursekit.data {command}: error: unknown corpus 'sst-2'; did you mean 'sst2'? "
            f"known corpora: {', '.join(sorted(data.REGISTRY))}"]
    assert data_cli(["fetch", "imagenet"]) == 2
    assert "unknown corpus 'imagenet'; known corpora:" in capsys.readouterr().err
    assert not (tmp / "cache").exists()


def test_cli_verify_and_list(fake_corpus, capsys):
    assert data_cli(["fetch", "fake"]) == 0
    assert "ok      fake/input.txt" in capsys.readouterr().out
    assert data_cli(["verify", "fake"]) == 0
    assert data_cli(["list"]) == 0
    assert "fake: a test corpus" in capsys.readouterr().out


def _file_lines(out: str, filename: str) -> list[str]:
    """The line of ``filename`` in ``list``'s output and the two indented lines under it."""
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.split()[:1] == [filename])
    return lines[i:i + 3]


def test_cli_list_shows_size_location_url_and_sha256(fake_corpus, monkeypatch, capsys):
    tmp, upstream = fake_corpus
    spec = data.REGISTRY["fake"].files[0]
    assert data_cli(["list", "fake"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {tmp / 'cache'}" in out and "mirror ($COURSEKIT_DATA_MIRROR): not set" in out
    assert "full sha256" in out
    row, url, sha = _file_lines(out, "input.txt")
    assert row.split()[1:] == ["size", "?", "missing"]             # no registered size, no local copy
    assert url.split() == ["url", upstream.as_uri()] and sha.split() == ["sha256", spec.sha256]

    data.path("fake", "input.txt")                                    # now in the cache: its size is known
    mirror = tmp / "mirror" / "fake"
    mirror.mkdir(parents=True)
    (mirror / "input.txt.gz").write_bytes(gzip.compress(CONTENT))
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))
    assert data_cli(["list", "fake"]) == 0
    row = _file_lines(capsys.readouterr().out, "input.txt")[0]
    assert row.split()[1:] == [str(len(CONTENT)), "B", "mirror", "(gzipped)", "+", "cache"]


def test_cli_list_of_a_registered_corpus_shows_archive_member_and_size(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COURSEKIT_CACHE", str(tmp_path))
    monkeypatch.delenv("COURSEKIT_DATA_MIRROR", raising=False)
    assert data_cli(["list", "sst2"]) == 0
    row, url, sha = _file_lines(capsys.readouterr().out, "train.tsv")
    assert row.split()[1:] == ["3.8", "MB", "missing"]
    assert url.split() == ["url", "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", "(the", "file",
                           "SST-2/train.tsv", "inside)"]
    assert sha.split() == ["sha256", data.corpus("sst2").file("train.tsv").sha256]


def test_fetch_copies_the_mirror_into_the_cache_so_it_loads_without_the_mirror(fake_corpus, monkeypatch, capsys):
    tmp, upstream = fake_corpus
    mirror = tmp / "mirror" / "fake"
    mirror.mkdir(parents=True)
    (mirror / "input.txt.gz").write_bytes(gzip.compress(CONTENT))
    upstream.unlink()                                                 # offline: only the mirror can serve it
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))

    assert data_cli(["verify", "fake"]) == 0                         # verify is read-only: no cache is made
    assert "ok      fake/input.txt  sha256 ok in the mirror" in capsys.readouterr().out
    assert not (tmp / "cache").exists()

    assert data_cli(["fetch", "fake"]) == 0
    out = capsys.readouterr().out
    assert "ok      fake/input.txt  copied from the mirror" in out
    assert out.splitlines()[-1] == f"1 of 1 files ready in {tmp / 'cache'}; the corpora load without " \
                                   "$COURSEKIT_DATA_MIRROR"
    cached = tmp / "cache" / "fake" / "input.txt"
    assert cached.read_bytes() == CONTENT                             # decompressed, as copy_to_cache does
    assert [p.name for p in cached.parent.iterdir()] == ["input.txt"]  # no temporary file left behind

    assert data_cli(["fetch", "fake"]) == 0                          # a second fetch keeps the good copy
    assert "ok      fake/input.txt  already in the cache" in capsys.readouterr().out

    monkeypatch.delenv("COURSEKIT_DATA_MIRROR")
    assert data.path("fake", "input.txt") == cached and data.read_text("fake") == CONTENT.decode()
    assert data.status("fake") == {"input.txt": "cache"}


def test_fetch_replaces_a_damaged_cache_copy_from_the_mirror(fake_corpus, monkeypatch, capsys):
    tmp, _ = fake_corpus
    cached = tmp / "cache" / "fake" / "input.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"half a file")
    assert data_cli(["verify", "fake"]) == 1                         # verify reports it and leaves it alone
    assert "FAILED  fake/input.txt: cache copy has the wrong sha256 (input.txt; not used)" in capsys.readouterr().err
    assert cached.read_bytes() == b"half a file"
    mirror = tmp / "mirror" / "fake"
    mirror.mkdir(parents=True)
    (mirror / "input.txt").write_bytes(CONTENT)
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))
    assert data_cli(["fetch", "fake"]) == 0
    assert "copied from the mirror (replaced a damaged cache copy)" in capsys.readouterr().out
    assert cached.read_bytes() == CONTENT


def test_fetch_from_a_mirror_that_is_the_cache_itself_keeps_the_files(fake_corpus, monkeypatch, capsys):
    tmp, _ = fake_corpus
    cached = tmp / "cache" / "fake" / "input.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(CONTENT)
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "cache"))
    assert data_cli(["fetch", "fake"]) == 0
    assert cached.read_bytes() == CONTENT
    assert data_store.copy_to_cache("fake", "input.txt", cached) == cached and cached.read_bytes() == CONTENT


@pytest.fixture
def offline_corpus(fake_corpus, monkeypatch):
    """A three-file corpus whose upstream is gone: only ``a.txt`` is already in the cache."""
    tmp, _ = fake_corpus
    files = {name: f"{name}\n".encode() for name in ("a.txt", "b.txt", "c.txt")}
    spec = data.Corpus("three", "three files", "public domain", "nobody", tuple(
        data.RemoteFile(name, hashlib.sha256(content).hexdigest(), (tmp / "gone" / name).as_uri())
        for name, content in files.items()))
    monkeypatch.setitem(data.REGISTRY, "three", spec)
    (tmp / "cache" / "three").mkdir(parents=True)
    (tmp / "cache" / "three" / "a.txt").write_bytes(files["a.txt"])
    return tmp, files


def test_offline_fetch_prints_one_short_line_per_failure_and_a_summary(offline_corpus, capsys):
    tmp, _ = offline_corpus
    data.path("fake", "input.txt")                                    # 'fake' is downloaded from its upstream
    assert data_cli(["fetch", "three", "fake"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["ok      three/a.txt  already in the cache",
                                         "ok      fake/input.txt  already in the cache"]
    *failed, summary = captured.err.splitlines()
    assert failed == [f"FAILED  three/{name}: no local copy and the download failed (No such file or directory)"
                      for name in ("b.txt", "c.txt")]
    assert summary == (f"2 of 4 files ready in {tmp / 'cache'}; 2 failed: three/b.txt, three/c.txt; "
                       "re-run with network or set COURSEKIT_DATA_MIRROR")


def test_offline_fetch_summary_groups_whole_corpora_and_names_the_mirror(offline_corpus, monkeypatch, capsys):
    tmp, _ = offline_corpus
    (tmp / "cache" / "three" / "a.txt").unlink()
    (tmp / "mirror").mkdir()
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))
    assert data_cli(["fetch", "three"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all(len(line) < 120 for line in err[:-1])
    assert err[-1] == (f"0 of 3 files ready in {tmp / 'cache'}; 3 failed: three (all 3 files); "
                       f"re-run with network, or add them to the mirror {tmp / 'mirror'}")
    assert data_cli(["verify", "three"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "FAILED  three/a.txt: missing (no copy in the mirror or the cache)"
    assert err[-1] == ("0 of 3 files verified (nothing was changed); 3 failed: three (all 3 files); "
                       "fetch them with `python -m coursekit.data fetch three`")


def test_fetch_reports_a_damaged_mirror_copy_in_one_line(fake_corpus, monkeypatch, capsys):
    tmp, _ = fake_corpus
    mirror = tmp / "mirror" / "fake"
    mirror.mkdir(parents=True)
    (mirror / "input.txt").write_bytes(b"not the file")
    monkeypatch.setenv("COURSEKIT_DATA_MIRROR", str(tmp / "mirror"))
    assert data_cli(["fetch", "fake"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "FAILED  fake/input.txt: mirror copy has the wrong sha256 (input.txt; not used)",
        f"0 of 1 files ready in {tmp / 'cache'}; 1 failed: fake/input.txt; "
        "damaged copies are never used: delete them and re-run fetch"]
    assert not (tmp / "cache" / "fake" / "input.txt").exists()


def test_registry_matches_the_offline_mirror_provenance():
    """Every registered hash appears in the mirror's PROVENANCE files (when the mirror is present)."""
    mirror = SHARED_DATA
    if not mirror.exists():
        pytest.skip("no offline mirror beside the checkout")
    provenance = "".join(p.read_text() for p in mirror.glob("*/PROVENANCE.md"))
    for c in data.REGISTRY.values():
        for f in c.files:
            assert f.sha256 in provenance, f"{c.name}/{f.name}"
            copy = next(p for p in (mirror / c.name / f.name, mirror / c.name / f"{f.name}.gz") if p.exists())
            size = len(gzip.decompress(copy.read_bytes())) if copy.suffix == ".gz" else copy.stat().st_size
            assert f.size == size, f"{c.name}/{f.name}: registered size {f.size}, mirror copy holds {size} bytes"


# ---- loaders on the real corpora (offline mirror configured by .ci/run) ----

needs_mirror = pytest.mark.skipif(data.status("sst2")["dev.tsv"] == "missing", reason="corpora not available")


@needs_mirror
def test_loaders_columns_and_counts():
    sst2 = data.load_sst2()
    assert sst2["train"].num_rows == 67349 and sst2["validation"].num_rows == 872
    assert sst2["validation"].column_names == ["sentence", "label"]
    assert set(sst2["validation"]["label"]) == {0, 1}
    assert data.load_tatoeba().num_rows == 167130 and data.load_tatoeba("pytorch").num_rows == 135842
    assert data.load_rt_polarity().num_rows == 10662
    wt = data.load_wikitext2("tokens")
    assert wt["validation"].num_rows == 3760 and wt["test"].num_rows == 4358
    assert data.load_analogies().num_rows == 19544
    assert data.load_wordsim353().num_rows == 353
    assert len(data.read_text("tinyshakespeare")) == 1115394
    with pytest.raises(ValueError, match="release must be one of"):
        data.load_tatoeba("wmt")


# ---- IMDB: upstream keeps one file per review; the registered files are assembled from its archive ----

def _review_archive(reviews: dict[str, str]) -> bytes:
    """A .tar.gz laid out like aclImdb_v1.tar.gz: ``{member path: text}``."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in reviews.items():
            payload = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tf.addfile(info, io.BytesIO(payload))
    return buf.getvalue()


def test_imdb_files_are_assembled_from_the_review_files(monkeypatch, tmp_path):
    archive = _review_archive({
        "aclImdb/train/unsup/1_0.txt": "Second, with a NEL\u0085 inside.",
        "aclImdb/train/unsup/0_0.txt": "First review.<br /><br />Two lines.",
        "aclImdb/train/pos/0_9.txt": 'Bromwell High is a cartoon comedy, "quoted".',
        "aclImdb/train/neg/0_1.txt": "Bad.\tTabbed.",
        "aclImdb/train/neg/1_3.txt": "Worse",
        "aclImdb/train/neg/1_3.txt.feat": "not a review",
        "aclImdb/README": "readme",
    })
    upstream = tmp_path / "aclImdb_v1.tar.gz"
    upstream.write_bytes(archive)
    unsup = "First review.<br /><br />Two lines.\nSecond, with a NEL\u0085 inside.\n".encode()
    train = (b'id,rating,label,text\n0,1,neg,Bad.\tTabbed.\n1,3,neg,Worse\n'
             b'0,9,pos,"Bromwell High is a cartoon comedy, ""quoted""."\n')
    files = (data.RemoteFile("unsup.txt", hashlib.sha256(unsup).hexdigest(), upstream.as_uri(),
                             built_from="aclImdb/train/unsup"),
             data.RemoteFile("train.csv", hashlib.sha256(train).hexdigest(), upstream.as_uri(),
                             built_from="aclImdb/train"))
    monkeypatch.setitem(data.REGISTRY, "imdb-fake", data.Corpus("imdb-fake", "d", "l", "c", files))
    monkeypatch.setenv("COURSEKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("COURSEKIT_DATA_MIRROR", raising=False)
    assert data.path("imdb-fake", "unsup.txt").read_bytes() == unsup
    assert data.path("imdb-fake", "train.csv").read_bytes() == train


def test_imdb_archive_with_a_gap_in_the_ids_is_refused(tmp_path):
    import io
    import tarfile

    archive = _review_archive({"aclImdb/train/unsup/0_0.txt": "a", "aclImdb/train/unsup/2_0.txt": "c"})
    with tarfile.open(fileobj=io.BytesIO(archive)) as tf, pytest.raises(data.DataNotFoundError, match="ids 0..n-1"):
        data_store.build_imdb_file(tf, "aclImdb/train/unsup")


def test_clean_review_removes_html_breaks_and_nel():
    assert data.clean_review("Great.<br /><br />Really<BR/>great\u0085  ok") == "Great. Really great... ok"
    with pytest.raises(TypeError, match="text must be a str"):
        data.clean_review(None)


@needs_mirror
def test_imdb_csv_rebuilt_from_its_review_files_has_the_registered_hash():
    """Byte-exactness of the rule against the real corpus: split the mirror's train.csv back into one file per
    review, as upstream ships it, and assemble it again."""
    import csv
    import io
    import tarfile

    rows = list(csv.reader(io.StringIO(data.read_text("imdb", "train.csv"), newline="")))
    archive = _review_archive({f"aclImdb/train/{label}/{i}_{rating}.txt": text for i, rating, label, text in rows[1:]})
    with tarfile.open(fileobj=io.BytesIO(archive)) as tf:
        rebuilt = data_store.build_imdb_file(tf, "aclImdb/train")
    assert data.sha256_bytes(rebuilt) == data.corpus("imdb").file("train.csv").sha256


@needs_mirror
def test_imdb_and_wikitext_train_loaders():
    unsup, train = data.load_imdb("unsup"), data.load_imdb("train")
    assert unsup.num_rows == 50000 and set(unsup["label"]) == {-1}      # read by lines, not splitlines (U+0085)
    assert train.num_rows == 25000 and sum(train["label"]) == 12500
    assert train.column_names == ["text", "label", "rating"]
    assert not any("<br" in t or "\u0085" in t for t in unsup["text"][:5000])
    assert train[0]["rating"] <= 4 and train[-1]["rating"] >= 7
    raw = data.load_imdb("unsup", clean=False)["text"]
    assert sum("<br />" in t for t in raw) == 29608                  # PROVENANCE.md's count
    with pytest.raises(ValueError, match="split must be one of"):
        data.load_imdb("validation")
    wt = data.load_wikitext2("tokens", ("train",))
    assert list(wt) == ["train"] and wt["train"].num_rows == 36718
    assert sum(len(line.split()) for line in wt["train"]["text"]) == 2051910
    with pytest.raises(ValueError, match="available tokenized only"):
        data.load_wikitext2("raw", ("train",))
    with pytest.raises(ValueError, match="unknown WikiText-2 split"):
        data.load_wikitext2("tokens", ("dev",))
    with pytest.raises(TypeError, match="splits must be a non-empty tuple"):
        data.load_wikitext2("tokens", "train")
