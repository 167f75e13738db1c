"""The data layer without network: mirror hit, cache hit, hash mismatch, truncated file, missing offline."""

import gzip
import hashlib
from pathlib import Path

import pytest

from coursekit import data

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


def test_cli_verify_and_list(fake_corpus, capsys):
    assert data._cli(["fetch", "fake"]) == 0
    assert "ok      fake/input.txt" in capsys.readouterr().out
    assert data._cli(["verify", "fake"]) == 0
    assert data._cli(["list"]) == 0
    assert "fake: a test corpus" in capsys.readouterr().out


def test_registry_matches_the_offline_mirror_provenance():
    """Every registered hash appears in the mirror's PROVENANCE files (when the mirror is present)."""
    mirror = Path(__file__).resolve().parents[2] / "shared" / "data"
    if not mirror.exists():
        pytest.skip("no offline mirror beside the checkout")
    provenance = "".join(p.read_text() for p in mirror.glob("*/PROVENANCE.md"))
    for c in data.REGISTRY.values():
        for f in c.files:
            assert f.sha256 in provenance, f"{c.name}/{f.name}"


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
