"""The Tatoeba English→French pipeline shared by notebooks 05, 06, 08 and 11."""

import copy

import pytest
import torch
from helpers import require_mirror

from coursekit import translation as tr
from coursekit.text import SPECIALS


@pytest.fixture(scope="module")
def data():
    require_mirror("tatoeba-eng-fra")
    return tr.load_translation(max_len=6, n_train=3000, n_test=300)


# --------------------------------------------------------------------------- normalisation


def test_normalize_spaces_punctuation_and_case():
    assert tr.normalize("Cours\u202f!") == "cours !"          # narrow no-break space (French typography)
    assert tr.normalize("Qui est-ce\u00a0?") == "qui est-ce ?"  # no-break space
    assert tr.normalize("I\u2019m fine, thanks.") == "i'm fine , thanks ."
    assert tr.normalize("  Go.  ") == "go ."
    assert tr.split_tokens("J'ai faim !") == ["j'ai", "faim", "!"]


def test_normalize_is_idempotent():
    for s in ["Hi.", "Cours\u202f!", "Il a dit : « non ».", "What?!"]:
        once = tr.normalize(s)
        assert tr.normalize(once) == once


def test_normalize_rejects_non_strings():
    with pytest.raises(TypeError, match="str"):
        tr.normalize(["hi"])


def test_test_split_is_a_function_of_the_normalised_sentence():
    assert tr.is_test_sentence("Go.") == tr.is_test_sentence("  GO .")
    share = sum(tr.is_test_sentence(f"sentence number {i}") for i in range(4000)) / 4000
    assert 0.03 < share < 0.07  # test_per_mille=50 → about 5 %


# --------------------------------------------------------------------------- loading


def test_filter_and_split(data):
    assert len(data.train) == 3000 and len(data.test) == 300
    for en, fr in data.train + data.test:
        assert 1 <= len(en) <= 6 and 1 <= len(fr) <= 6
    test_en = {" ".join(en) for en, _ in data.test}
    assert len(test_en) == len(data.test)  # one pair per English test sentence
    assert not test_en & {" ".join(en) for en, _ in data.train}  # no leakage
    assert all(tr.is_test_sentence(" ".join(en)) for en, _ in data.test)
    assert data.info["train_pool"] > 50_000 and data.info["pairs_in_file"] == 167_130


def test_smaller_profiles_are_prefixes(data):
    small = tr.load_translation(max_len=6, n_train=1000, n_test=100)
    assert small.test == data.test[:100]
    assert small.train == data.train[:1000]


def test_vocabularies(data):
    for vocab in (data.src_vocab, data.tgt_vocab):
        assert vocab.itos[:4] == list(SPECIALS)
        assert vocab.pad_id == 0
    counts = data.tgt_vocab.counts
    assert all(counts[t] >= 2 for t in data.tgt_vocab.itos[4:])  # min_freq=2


def test_max_vocab_keeps_the_most_frequent_tokens(data):
    small = tr.load_translation(max_len=6, n_train=3000, n_test=10, max_vocab=50)
    assert len(small.tgt_vocab) == 50 and small.tgt_vocab.itos == data.tgt_vocab.itos[:50]


def test_batch_layout(data):
    batch = data.make_batch([0, 1, 2])
    eos, bos, pad = data.tgt_vocab.eos_id, data.tgt_vocab.bos_id, data.tgt_vocab.pad_id
    for b in range(3):
        en, fr = data.train[b]
        n = len(en) + 1
        assert batch.src_lengths[b] == n and batch.src_mask[b].sum() == n
        assert batch.src[b, n - 1] == data.src_vocab.eos_id
        assert data.src_vocab.decode(batch.src[b, : n - 1]) == [t if t in data.src_vocab else "<unk>" for t in en]
        m = len(fr) + 1
        assert batch.tgt_in[b, 0] == bos and batch.tgt_out[b, m - 1] == eos
        assert torch.equal(batch.tgt_in[b, 1:m], batch.tgt_out[b, : m - 1])  # shifted by one
        assert batch.tgt_mask[b].sum() == m
        assert (batch.tgt_out[b, m:] == pad).all() and (batch.tgt_in[b, m:] == pad).all()
    assert batch.tgt_in.shape == batch.tgt_out.shape == batch.tgt_mask.shape


def test_batches_cover_each_pair_once_and_are_seeded(data):
    seen = torch.cat([b.index for b in data.batches(64, torch.Generator().manual_seed(1))])
    assert sorted(seen.tolist()) == list(range(len(data.train)))
    a = next(data.batches(8, torch.Generator().manual_seed(3)))
    b = next(data.batches(8, torch.Generator().manual_seed(3)))
    assert torch.equal(a.src, b.src)
    test_order = torch.cat([b.index for b in data.batches(64, split="test")])
    assert test_order.tolist() == list(range(len(data.test)))


def test_batch_fn_cycles_epochs(data):
    fn = data.batch_fn(1000, torch.Generator().manual_seed(0))
    sizes = [len(fn(step)) for step in range(5)]
    assert sizes == [1000, 1000, 1000, 1000, 1000]


def test_bad_inputs(data):
    with pytest.raises(ValueError, match="split"):
        data.make_batch([0], split="valid")
    with pytest.raises(ValueError, match="at least one"):
        data.make_batch([])
    with pytest.raises(ValueError, match="positive"):
        next(data.batches(0))
    with pytest.raises(ValueError, match="test_per_mille"):
        tr.load_translation(test_per_mille=0)
    with pytest.raises(TypeError, match="max_len"):
        tr.load_translation(max_len=6.5)


# --------------------------------------------------------------------------- BLEU


def test_evaluate_oracle_and_failures(data):
    def oracle(batch):
        return batch.tgt_out.tolist()  # the reference ids, <eos> and padding included

    report = data.evaluate(oracle, limit=120)
    # references are not mapped through the vocabulary: the oracle loses exactly its <unk> tokens
    with_unk = [" ".join(t if t in data.tgt_vocab else "<unk>" for t in fr) for _, fr in data.test[:120]]
    assert report.hypotheses == with_unk
    assert report.bleu == pytest.approx(tr.corpus_bleu(with_unk, report.references))
    assert report.bleu < 100.0 or with_unk == report.references
    assert tr.corpus_bleu(report.references, report.references) == pytest.approx(100.0)
    assert sum(row["n"] for row in report.by_length) == 120
    assert len(report.hypotheses) == 120 and report.examples(2)[0]["reference"] == " ".join(data.test[0][1])

    def parrot(batch):
        return [[data.tgt_vocab.stoi.get(".", 0)]] * len(batch)

    assert data.evaluate(parrot, limit=120).bleu < 1.0

    with pytest.raises(ValueError, match="outputs"):
        data.evaluate(lambda batch: [[1]], limit=10)


def test_corpus_bleu_matches_sacrebleu():
    import sacrebleu

    hyp = ["le chat est sur le tapis .", "il fait beau ."]
    ref = ["le chat est sur le tapis .", "il fait très beau ."]
    assert tr.corpus_bleu(hyp, ref) == pytest.approx(sacrebleu.corpus_bleu(hyp, [ref]).score)
    with pytest.raises(ValueError, match="references"):
        tr.corpus_bleu(hyp, ref[:1])


def test_length_buckets_and_bleu_by_length():
    assert tr.length_buckets(10) == [(1, 4), (5, 6), (7, 8), (9, 10)]
    assert tr.length_buckets(8) == [(1, 4), (5, 6), (7, 8)]
    for L in range(2, 15):
        b = tr.length_buckets(L)
        assert b[0][0] == 1 and b[-1][1] == L
        assert all(b[i][1] + 1 == b[i + 1][0] for i in range(len(b) - 1))
    rows = tr.bleu_by_length([2, 5, 5], ["a b c d", "x y z w", "e f g h"], ["a b c d", "e f g h", "e f g h"],
                             [(1, 4), (5, 6), (7, 8)])
    assert [r["n"] for r in rows] == [1, 2, 0]
    assert rows[0]["bleu"] == pytest.approx(100.0)
    assert rows[2]["bleu"] != rows[2]["bleu"]  # nan for an empty bucket
    with pytest.raises(ValueError, match="same length"):
        tr.bleu_by_length([1], ["a", "b"], ["a", "b"], [(1, 2)])


def test_keep_on_a_shallow_copy_leaves_the_original_whole():
    """11 once truncated copy.copy(bench).test and cut the benchmark's own test set with it (shared lists)."""
    from coursekit.text import Vocab
    from coursekit.translation.core import TranslationData

    pairs = [(["i", "run", "."], ["je", "cours", "."]), (["we", "eat", "."], ["nous", "mangeons", "."]),
             (["you", "sleep", "."], ["tu", "dors", "."])]
    data = TranslationData(train=list(pairs), test=list(pairs), src_vocab=Vocab.build([e for e, _ in pairs]),
                           tgt_vocab=Vocab.build([f for _, f in pairs]), max_len=5)
    view = copy.copy(data)
    view.truncate("test", 1)
    view.keep("train", [2, 0])
    assert view.test == pairs[:1] and view.train == [pairs[2], pairs[0]] and len(view.make_batch([0, 1])) == 2
    assert data.test == pairs and data.train == pairs and len(data.make_batch([0, 1, 2], "test")) == 3


def test_short_view_keeps_short_training_pairs_and_a_test_prefix():
    from coursekit.text import Vocab
    from coursekit.translation import benchmark
    from coursekit.translation.core import TranslationData

    long_pair = (["w"] * 11, ["m"] * 3)
    pairs = [(["i", "run", "."], ["je", "cours", "."]), long_pair, (["we", "eat", "."], ["nous", "mangeons", "."])]
    data = TranslationData(train=list(pairs), test=list(pairs), src_vocab=Vocab.build([e for e, _ in pairs]),
                           tgt_vocab=Vocab.build([f for _, f in pairs]), max_len=12)
    view = benchmark.short_view(data, n_test=2)
    assert view.train == [pairs[0], pairs[2]] and view.test == pairs[:2]
    assert data.train == pairs and data.test == pairs                      # the full benchmark is untouched
