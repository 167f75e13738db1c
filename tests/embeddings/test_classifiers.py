"""Tests of coursekit.embeddings.classifiers: shapes, padding invariance, pooling by hand, pretrained init, errors."""

import numpy as np
import pytest
import torch

from coursekit.embeddings import classifiers as C
from coursekit.embeddings.word_vectors import WordVectors

V = 30
KINDS = ["bow", "cbow", "dan", "cnn"]


def batch(pad_to=None):
    seqs = [[5, 6, 7, 8, 9], [3, 4], [10]]
    T = pad_to or max(map(len, seqs))
    ids = torch.zeros(len(seqs), T, dtype=torch.long)
    mask = torch.zeros(len(seqs), T, dtype=torch.bool)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = torch.tensor(s)
        mask[b, :len(s)] = True
    return ids, mask


def build(kind, **kw):
    torch.manual_seed(0)
    model = C.classifier(kind, V, embed_dim=8, n_classes=3, **kw)
    if kind == "bow":
        torch.nn.init.normal_(model.embed.weight)        # BOW starts at zero: make the test non-trivial
        with torch.no_grad():
            model.embed.weight[0].zero_()
    return model.eval()


@pytest.mark.parametrize("kind", KINDS)
def test_shapes(kind):
    ids, mask = batch()
    out = build(kind)(ids, mask)
    assert out.shape == (3, 3) and out.dtype == torch.float32 and torch.isfinite(out).all()


@pytest.mark.parametrize("kind", KINDS)
def test_padding_does_not_change_the_output(kind):
    model = build(kind)
    ids, mask = batch()
    ids2, mask2 = batch(pad_to=11)
    torch.testing.assert_close(model(ids, mask), model(ids2, mask2), atol=1e-6, rtol=1e-5)
    # garbage (but valid) ids under the mask are ignored too
    ids3 = ids2.clone()
    ids3[~mask2] = 17
    torch.testing.assert_close(model(ids, mask), model(ids3, mask2), atol=1e-6, rtol=1e-5)
    # one sentence alone = the same sentence inside a batch
    torch.testing.assert_close(model(ids[1:2, :2], mask[1:2, :2]), model(ids, mask)[1:2], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_bad_inputs(kind):
    model = build(kind)
    ids, mask = batch()
    with pytest.raises(ValueError, match=r"\[0, 30\)"):
        model(ids + 40, mask)
    with pytest.raises(TypeError, match="torch.bool"):
        model(ids, mask.long())
    with pytest.raises(ValueError, match="shape of ids"):
        model(ids, mask[:, :2])
    with pytest.raises(ValueError, match="2 dimensions"):
        model(ids[0], mask[0])
    bad = mask.clone()
    bad[2] = False
    with pytest.raises(ValueError, match="all padding"):
        model(ids, bad)


def test_bow_is_a_sum_of_word_scores():
    model = build("bow")
    ids, mask = batch()
    want = model.embed.weight[[5, 6, 7, 8, 9]].sum(0) + model.bias
    torch.testing.assert_close(model(ids, mask)[0], want)


def test_cbow_mean_and_sum():
    torch.manual_seed(0)
    mean, total = C.CBOW(V, 4, 2, pooling="mean"), C.CBOW(V, 4, 2, pooling="sum")
    total.load_state_dict(mean.state_dict())
    ids, mask = batch()
    e = mean.embed.weight[[3, 4]]
    torch.testing.assert_close(mean(ids, mask)[1], mean.out(e.mean(0)))
    torch.testing.assert_close(total(ids, mask)[1], total.out(e.sum(0)))
    with pytest.raises(ValueError, match="pooling"):
        C.CBOW(V, 4, pooling="max")


def test_masked_pooling_by_hand():
    x = torch.tensor([[[1.0, -5.0], [3.0, 2.0], [100.0, 100.0]]])       # (1, 3, 2), last position padding
    mask = torch.tensor([[True, True, False]])
    torch.testing.assert_close(C.masked_mean(x, mask), torch.tensor([[2.0, -1.5]]))
    torch.testing.assert_close(C.masked_max(x, mask), torch.tensor([[3.0, 2.0]]))
    neg = -torch.ones(1, 3, 2)
    neg[0, 2] = 0.0                                                       # a zero in the padding must not win
    torch.testing.assert_close(C.masked_max(neg, mask), -torch.ones(1, 2))


def test_dan_forward_by_hand_and_word_dropout():
    torch.manual_seed(0)
    model = C.DAN(V, 6, 2, hidden=5, n_layers=2, dropout=0.0, word_dropout=0.0).eval()
    ids, mask = batch()
    z = model.embed.weight[[3, 4]].mean(0)
    lin1, lin2, out = model.mlp[1], model.mlp[4], model.out[1]
    want = out(torch.relu(lin2(torch.relu(lin1(z)))))
    torch.testing.assert_close(model(ids, mask)[1], want)
    # word dropout: only in training, never drops padding in, never empties a sentence
    g = torch.Generator().manual_seed(0)
    big = torch.ones(200, 10, dtype=torch.bool)
    big[:, 7:] = False
    dropped = C.word_dropout(big, 0.3, generator=g)
    assert not (dropped & ~big).any()
    assert abs(dropped.sum().item() / big.sum().item() - 0.7) < 0.05
    one = torch.tensor([[True, False]])
    assert C.word_dropout(one.repeat(50, 1), 0.99).any(dim=1).all()
    model_wd = C.DAN(V, 6, 2, dropout=0.0, word_dropout=0.5)
    model_wd.train()
    outs = {tuple(model_wd(ids, mask)[0].tolist()) for _ in range(5)}
    assert len(outs) > 1                                                   # stochastic in training
    model_wd.eval()
    torch.testing.assert_close(model_wd(ids, mask), model_wd(ids, mask))


def test_kim_cnn_max_over_time_by_hand():
    torch.manual_seed(0)
    model = C.KimCNN(V, 4, 2, widths=(2,), n_filters=3, dropout=0.0).eval()
    ids = torch.tensor([[5, 6, 7]])
    mask = torch.ones(1, 3, dtype=torch.bool)
    x = model.embed.weight[[5, 6, 7]]                                      # (3, 4)
    conv = model.convs[0]
    padded = torch.cat([torch.zeros(1, 4), x, torch.zeros(1, 4)])         # wide convolution
    windows = torch.stack([padded[i:i + 2] for i in range(4)])            # (4, 2, 4)
    c = torch.relu(torch.einsum("tkd,fdk->tf", windows, conv.weight) + conv.bias)
    torch.testing.assert_close(model.features(ids, mask)[0], c.max(0).values, atol=1e-6, rtol=1e-5)
    # a one-word sentence is shorter than the widest filter and still works
    short = C.KimCNN(V, 4, 2, widths=(3, 5), n_filters=2).eval()
    assert short(torch.tensor([[4]]), torch.tensor([[True]])).shape == (1, 2)
    with pytest.raises(ValueError, match="widths"):
        C.KimCNN(V, 4, widths=())


def test_init_embeddings_from_pretrained():
    itos = ["<pad>", "<unk>", "good", "bad", "zzz"]
    wv = WordVectors(["bad", "good", "movie"], np.arange(9, dtype=np.float32).reshape(3, 3))
    model = C.CBOW(len(itos), 3, 2)
    before = model.embed.weight[4].clone()
    cov = C.init_embeddings(model.embed, itos, wv, match_scale=False)
    assert cov == pytest.approx(2 / 5)
    torch.testing.assert_close(model.embed.weight[2], torch.tensor([3.0, 4.0, 5.0]))
    torch.testing.assert_close(model.embed.weight[3], torch.tensor([0.0, 1.0, 2.0]))
    torch.testing.assert_close(model.embed.weight[4], before)              # unknown word keeps its init
    assert (model.embed.weight[0] == 0).all()
    # match_scale: unknown words are redrawn with the spread of the pretrained vectors (Kim 2014)
    big = WordVectors([f"w{i}" for i in range(500)], np.random.default_rng(0).normal(0, 0.1, (500, 3)))
    m2 = C.CBOW(1000, 3, 2)
    C.init_embeddings(m2.embed, ["<pad>"] + [f"w{i}" for i in range(999)], big)
    assert abs(m2.embed.weight[600:].std().item() - 0.1) < 0.01            # not N(0, 1) any more
    torch.testing.assert_close(m2.embed.weight[1], torch.as_tensor(big.vectors[0]))
    C.init_embeddings(model.embed, itos, wv, freeze=True)
    assert not model.embed.weight.requires_grad
    with pytest.raises(ValueError, match="embed_dim=3"):
        C.init_embeddings(C.CBOW(5, 4).embed, itos, wv)
    with pytest.raises(ValueError, match="5 rows"):
        C.init_embeddings(model.embed, itos[:3], wv)


def test_models_learn_a_negation_combination():
    """Label = 1 iff exactly one of {not, bad}: a linear BOW cannot fit it, the DAN's MLP can."""
    not_, bad, fillers = 1, 2, list(range(3, 12))
    g = torch.Generator().manual_seed(0)
    seqs, labels = [], []
    for i in range(400):
        has_not, has_bad = i % 2, (i // 2) % 2
        s = torch.randint(3, 12, (4,), generator=g).tolist()
        s += ([not_] if has_not else []) + ([bad] if has_bad else [])
        seqs.append(s)
        labels.append(int(has_not != has_bad))
    T = max(map(len, seqs))
    ids = torch.zeros(len(seqs), T, dtype=torch.long)
    mask = torch.zeros_like(ids, dtype=torch.bool)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = torch.tensor(s)
        mask[b, :len(s)] = True
    y = torch.tensor(labels)
    assert fillers

    def train(model, steps=300):
        opt = torch.optim.Adam(model.parameters(), lr=0.02)
        for _ in range(steps):
            loss = torch.nn.functional.cross_entropy(model(ids, mask), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        return (model(ids, mask).argmax(1) == y).float().mean().item()

    torch.manual_seed(0)
    acc_bow = train(C.BOW(12, 2))
    torch.manual_seed(0)
    acc_dan = train(C.DAN(12, 8, 2, hidden=16, dropout=0.0, word_dropout=0.0))
    assert acc_bow < 0.85 and acc_dan > 0.97


def test_classifier_factory():
    with pytest.raises(ValueError, match="kind"):
        C.classifier("rnn", 10)
    assert isinstance(C.classifier("cnn", 10, embed_dim=4, widths=(2,)), C.KimCNN)
