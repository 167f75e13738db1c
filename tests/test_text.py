import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from coursekit import text


def test_tokenize():
    assert text.tokenize("I don't love this movie!") == ["i", "don't", "love", "this", "movie", "!"]
    assert text.tokenize("  ") == []
    assert text.tokenize("Clichés from a résumé, naïve!") == ["clichés", "from", "a", "résumé", ",", "naïve", "!"]
    assert text.tokenize("l'été 2024 -- ok_go") == ["l'été", "2024", "-", "-", "ok", "_", "go"]
    with pytest.raises(TypeError, match="expects a str"):
        text.tokenize(["a"])


def test_vocab_build_encode_decode():
    v = text.Vocab.build([["b", "a", "b"], ["c", "b", "a"]], min_freq=2)
    assert v.itos == ["<pad>", "<unk>", "<bos>", "<eos>", "b", "a"]
    assert (v.pad_id, v.unk_id, v.bos_id, v.eos_id) == (0, 1, 2, 3)
    assert v.encode(["a", "zzz"], add_bos=True, add_eos=True) == [2, 5, 1, 3]
    assert v.decode([2, 5, 4, 3, 4], strip_specials=True) == ["a", "b"]
    assert "b" in v and "c" not in v and len(v) == 6


def test_vocab_max_size_and_errors():
    v = text.Vocab.build([list("aaabbc")], max_size=5)
    assert v.itos[4:] == ["a"]
    with pytest.raises(TypeError, match="tokenised"):
        text.Vocab.build(["a sentence"])
    with pytest.raises(TypeError, match="got a str"):
        v.encode("abc")
    with pytest.raises(ValueError, match="out of range"):
        v.decode([99])
    with pytest.raises(ValueError, match="min_freq"):
        text.Vocab.build([["a"]], min_freq=0)
    no_unk = text.Vocab(["<pad>", "x"])
    with pytest.raises(KeyError, match="has no <unk>"):
        no_unk.encode(["y"])


def test_pad_batch():
    ids, mask, lengths = text.pad_batch([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[True, True, True], [True, False, False]]
    assert lengths.tolist() == [3, 1]
    ids, mask, _ = text.pad_batch([[1]], pad_id=0, max_len=4)
    assert ids.shape == (1, 4) and mask.sum() == 1
    with pytest.raises(ValueError, match="max_len=2"):
        text.pad_batch([[1, 2, 3]], pad_id=0, max_len=2)
    with pytest.raises(ValueError, match="at least one"):
        text.pad_batch([], pad_id=0)


@given(st.lists(st.lists(st.integers(1, 50), max_size=8), min_size=1, max_size=6))
def test_pad_batch_roundtrip(seqs):
    ids, mask, lengths = text.pad_batch(seqs, pad_id=0)
    assert [row[m].tolist() for row, m in zip(ids, mask)] == seqs
    assert torch.equal(mask.sum(1), lengths)


def test_bpe_roundtrip_and_wordpiece_specials():
    corpus = ["the quick brown fox jumps over the lazy dog"] * 30 + ["le renard brun saute"] * 10
    bpe = text.train_bpe(corpus, vocab_size=300)
    for s in ["the quick fox", "Über naïve café ☃ — 123", ""]:
        assert bpe.decode(bpe.encode(s).ids) == s
    wp = text.train_wordpiece(corpus, vocab_size=200, min_frequency=1)
    enc = wp.encode("the quick fox", "le renard")
    assert enc.tokens[0] == "[CLS]" and enc.tokens.count("[SEP]") == 2
    assert enc.type_ids[-1] == 1 and enc.type_ids[0] == 0
