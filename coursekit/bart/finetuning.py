"""Does pre-training pay off? The committed BART against the same model from random init (notebook 11).

Two downstream tasks, each with a small labelled set — the regime where pre-training matters most
(BART §5, mBART §3.2 for low-resource translation):

* **English → French** on the course benchmark (:mod:`coursekit.translation.benchmark`): a fixed subset
  of ``n_pairs`` training pairs, the benchmark's 1,000 test sentences, greedy decoding, sacreBLEU;
* **SST-2** sentiment: ``n_train`` training sentences, the 872 validation sentences as the test set, the
  classification head of §3.1 (:class:`coursekit.bart.heads.BartForSequenceClassification`).

Both conditions get the *same* architecture, fine-tuning recipe and budget; only the starting weights
differ (the committed pre-trained ones, or a fresh N(0, 0.02) init seeded by ``seed``). The fine-tuning
seed also decides the batch order and dropout. On SST-2 a pre-trained and a random start need not want
the same learning rate: each tries every rate of ``sst2_lrs``, keeps the one with the best mean accuracy
on ``n_sst2_select`` other training sentences, and only then is its test accuracy read
(:func:`coursekit.metrics.select_then_test`, the protocol of notebook 09's BERT). :func:`compare` runs
both conditions for each seed and returns the table (mean ± sd over seeds); :func:`merge` joins the
tables of separate processes (one per task or seed) into ``data/bart/downstream.json``. :func:`sst2_gain`
re-runs the SST-2 half of that table in minutes: each start at the learning rate the table chose for it
(``python -m coursekit.bart sst2``).
"""

from __future__ import annotations

import copy
import json
import random
import statistics
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.bart.batches import seq2seq_batch
from coursekit.bart.corpus import RECIPE, BartRecipe, BartVocab, _check_documents, _check_vocab
from coursekit.bart.heads import BartForSequenceClassification
from coursekit.bart.model import Bart
from coursekit.bart.pretraining import build_bart, load_pretrained_bart
from coursekit.data import load_sst2, model_dir, sha256_file
from coursekit.metrics import select_then_test
from coursekit.text import pad_batch, token_batches
from coursekit.training.loop import inverse_sqrt
from coursekit.training.resumable import hardware
from coursekit.translation.benchmark import load_short_benchmark
from coursekit.translation.core import TranslationData, split_tokens
from coursekit.validation import check_int as _check_int
from coursekit.validation import (
    check_int_sequence,
    check_labels,
    check_positive_float,
    check_positive_int,
    check_probability,
)

__all__ = ["FinetuneRecipe", "FINETUNE", "starting_model", "finetune_translation", "translation_bleu",
           "sst2_data", "finetune_sst2", "sst2_accuracy", "compare", "sst2_gain", "merge"]


@dataclass(frozen=True)
class FinetuneRecipe:
    """The fine-tuning budget, the same for pre-trained and random init."""

    n_pairs: int = 4000              # EN→FR training pairs (a fixed subset of the benchmark's)
    mt_updates: int = 800
    mt_max_tokens: int = 2000
    mt_lr: float = 5e-4
    mt_warmup: int = 100
    label_smoothing: float = 0.1
    n_sst2: int = 2000               # SST-2 training sentences
    n_sst2_select: int = 1000        # other training sentences, to choose each start's learning rate on
    sst2_updates: int = 500
    sst2_batch: int = 32
    sst2_lr: float = 2e-4            # finetune_sst2's rate; compare() tries every one of sst2_lrs
    sst2_lrs: tuple[float, ...] = (3e-4, 1e-3)
    clip: float = 1.0

    def __post_init__(self) -> None:
        for name in ("n_pairs", "mt_updates", "mt_max_tokens", "mt_warmup", "n_sst2", "n_sst2_select",
                     "sst2_updates", "sst2_batch"):
            check_positive_int(getattr(self, name), name)
        for name in ("mt_lr", "sst2_lr", "clip"):
            check_positive_float(getattr(self, name), name)
        if not isinstance(self.sst2_lrs, tuple) or not self.sst2_lrs:
            raise TypeError(f"sst2_lrs must be a non-empty tuple of learning rates, got {self.sst2_lrs!r}")
        for lr in self.sst2_lrs:
            check_positive_float(lr, "each of sst2_lrs")
        check_probability(self.label_smoothing, "label_smoothing", inclusive_high=False)


FINETUNE = FinetuneRecipe()


def _check_bart(model) -> None:
    if not isinstance(model, Bart):
        raise TypeError(f"model must be a coursekit.bart.model.Bart, got {type(model).__name__}")


def _check_recipe(recipe) -> None:
    if not isinstance(recipe, FinetuneRecipe):
        raise TypeError(f"recipe must be a FinetuneRecipe, got {type(recipe).__name__}")


def _check_labelled_sentences(ids, labels, vocab: BartVocab, n_classes: int, what: str) -> tuple[list, torch.Tensor]:
    """Sentences (id lists ending with </s>, the position the classifier reads) and one class id per sentence."""
    if isinstance(ids, (list, tuple)) and not ids:
        raise ValueError(f"{what} needs at least one sentence")
    ids = _check_documents(ids, "ids", len(vocab), what=what)
    for i, sentence in enumerate(ids):
        if sentence[-1] != vocab.eos_id:
            raise ValueError(f"ids[{i}] must end with </s> (id {vocab.eos_id}), the position the classifier reads")
    if isinstance(labels, str) or not hasattr(labels, "__len__"):
        raise TypeError(f"labels must be a list of int class ids, got {type(labels).__name__}")
    labels = check_int_sequence(list(labels), "labels")
    if len(labels) != len(ids):
        raise ValueError(f"labels must have one entry per sentence ({len(ids)}), got {len(labels)}")
    return ids, check_labels(torch.tensor(labels, dtype=torch.long), "labels", n_classes)


def starting_model(init: str, seed: int, vocab: BartVocab | None = None,
                   directory: str | Path | None = None) -> tuple[Bart, BartVocab]:
    """``init="pretrained"``: the committed BART (of ``directory``, default ``data/bart``); ``"random"``: the same
    architecture, freshly initialised."""
    if init not in ("pretrained", "random"):
        raise ValueError(f"init must be 'pretrained' or 'random', got {init!r}")
    _check_int(seed, "seed")
    if vocab is not None and not isinstance(vocab, BartVocab):
        raise TypeError(f"vocab must be a BartVocab or None, got {type(vocab).__name__}")
    if directory is not None and not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a folder path (str or Path) or None, got {type(directory).__name__}")
    if init == "pretrained":
        model, vocab, _ = load_pretrained_bart(directory)
        return model.train(), vocab
    if init == "random":
        vocab = vocab or BartVocab()
        torch.manual_seed(seed)
        return build_bart(RECIPE, vocab).train(), vocab
    raise ValueError(f"init must be 'pretrained' or 'random', got {init!r}")


def _optimizer(model: nn.Module, lr: float, warmup: int):
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-6)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, inverse_sqrt(warmup))


def _step(model: nn.Module, opt, sched, loss: torch.Tensor, clip: float) -> float:
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    sched.step()
    return loss.item()


# --------------------------------------------------------------------------- English → French


def translation_subset(n_pairs: int, vocab: BartVocab, data=None):
    """The benchmark (test and validation sentences as always) with its first ``n_pairs`` training pairs in
    a fixed shuffle; returns (data, sources, targets) with ``<s> … </s>`` around every sentence.

    By default the benchmark's ≤ 10-word band (:func:`~coursekit.translation.benchmark.load_short_benchmark`:
    its 1,000 short test sentences), the text the committed BART was pre-trained on and the benchmark that
    ``data/bart/downstream.json`` measured."""
    data = data or load_short_benchmark(tokenizer=vocab.subwords)
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or not 0 < n_pairs <= len(data.train):
        raise ValueError(f"n_pairs must be an int in [1, {len(data.train)}] (the benchmark's training pairs), "
                         f"got {n_pairs!r}")
    order = list(range(len(data.train)))
    random.Random(1).shuffle(order)
    pairs = [data.train[i] for i in order[:n_pairs]]
    return data, vocab.encode_many([e for e, _ in pairs]), vocab.encode_many([f for _, f in pairs])


def finetune_translation(model: Bart, sources: list[list[int]], targets: list[list[int]], vocab: BartVocab, *,
                         recipe: FinetuneRecipe = FINETUNE, seed: int = 0) -> list[float]:
    """Teacher-forced cross-entropy (label smoothing) on (English → French) pairs; returns the loss per update."""
    _check_bart(model)
    _check_vocab(vocab)
    _check_recipe(recipe)
    _check_int(seed, "seed")
    if len(sources) != len(targets):
        raise ValueError(f"sources and targets must be pairs: got {len(sources)} sources and {len(targets)} targets")
    if len(sources) == 0:
        raise ValueError("finetune_translation needs at least one pair")
    sources = _check_documents(sources, "sources", len(vocab), what="finetune_translation")
    targets = _check_documents(targets, "targets", len(vocab), what="finetune_translation")
    torch.manual_seed(seed)
    opt, sched = _optimizer(model, recipe.mt_lr, recipe.mt_warmup)
    src_len, tgt_len = [len(s) for s in sources], [len(t) for t in targets]
    losses, epoch = [], 0
    model.train()
    while len(losses) < recipe.mt_updates:
        for index in token_batches(src_len, tgt_len, recipe.mt_max_tokens,
                                   torch.Generator().manual_seed(seed * 1000 + epoch)):
            b = seq2seq_batch([sources[i] for i in index], [targets[i] for i in index], pad_id=vocab.pad_id,
                              decoder_start_id=vocab.eos_id)
            logits = model(b.src, b.tgt_in, src_keep=b.src_keep, tgt_keep=b.tgt_keep)
            loss = F.cross_entropy(logits[b.tgt_keep], b.tgt_out[b.tgt_keep], label_smoothing=recipe.label_smoothing)
            losses.append(_step(model, opt, sched, loss, recipe.clip))
            if len(losses) == recipe.mt_updates:
                break
        epoch += 1
    return losses


def bart_translator(model: Bart, vocab: BartVocab, max_len: int = 30):
    """``batch → target ids`` for :meth:`TranslationData.evaluate`: the benchmark's sources (``… </s>``)
    get BART's ``<s>`` in front; greedy decoding from ``</s>``."""

    @torch.no_grad()
    def translate(batch) -> list[list[int]]:
        model.eval()
        bos = torch.full((len(batch), 1), vocab.bos_id, dtype=batch.src.dtype, device=batch.src.device)
        src = torch.cat([bos, batch.src], 1)                                      # (B, 1 + S)
        keep = torch.cat([torch.ones_like(bos, dtype=torch.bool), batch.src_mask], 1)
        out = model.generate(src, keep, max_len=max_len).tokens       # the decoder writes <s> first
        return [[t for t in seq if t != vocab.bos_id] for seq in out]
    return translate


def translation_bleu(model: Bart, vocab: BartVocab, data, split: str = "test"):
    """The benchmark's :class:`~coursekit.translation.scoring.BleuReport` of greedy translations."""
    _check_bart(model)
    _check_vocab(vocab)
    if split not in ("train", "valid", "test"):
        raise ValueError(f"split must be one of ['train', 'valid', 'test'], got {split!r}")
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData (from load_benchmark), got {type(data).__name__}")
    return data.evaluate(bart_translator(model, vocab, max_len=2 * data.max_len + 10), split=split,   # as recipes do
                         device=next(model.parameters()).device)


# --------------------------------------------------------------------------- SST-2


def sst2_data(vocab: BartVocab, n_train: int, n_select: int = 0) -> dict:
    """``train_ids``/``train_labels``: the first ``n_train`` SST-2 training sentences (in a fixed shuffle) that
    fit the model's positions; ``select_ids``/``select_labels``: the next ``n_select`` of them (to choose a
    learning rate on, never trained on); ``test_ids``/``test_labels``: the 872 validation sentences,
    ``<s> … </s>``. The few validation sentences longer than the positions (10 of 872) keep their first pieces
    and their ``</s>``; ``test_truncated`` counts them."""
    check_positive_int(n_train, "n_train")
    if isinstance(n_select, bool) or not isinstance(n_select, int) or n_select < 0:
        raise ValueError(f"n_select must be an int ≥ 0, got {n_select!r}")
    sst = load_sst2()
    train = list(zip(sst["train"]["sentence"], sst["train"]["label"]))
    random.Random(2).shuffle(train)
    limit = RECIPE.arch["max_len"]
    wanted = n_train + n_select
    train = [(s, y) for s, y in train if s.strip()][: 2 * wanted]             # enough to find `wanted` that fit
    train = [(ids, y) for ids, (_, y) in zip(vocab.encode_many([split_tokens(s) for s, _ in train]), train)
             if len(ids) <= limit][:wanted]
    if len(train) < wanted:
        raise ValueError(f"only {len(train)} SST-2 training sentences fit {limit} positions, {wanted} asked")
    test = vocab.encode_many([split_tokens(s) for s in sst["validation"]["sentence"]])
    return {"train_ids": [t[0] for t in train[:n_train]], "train_labels": [t[1] for t in train[:n_train]],
            "select_ids": [t[0] for t in train[n_train:]], "select_labels": [t[1] for t in train[n_train:]],
            "test_ids": [ids if len(ids) <= limit else ids[:limit - 1] + [vocab.eos_id] for ids in test],
            "test_labels": list(sst["validation"]["label"]), "test_truncated": sum(len(ids) > limit for ids in test)}


def finetune_sst2(model: Bart, ids: list[list[int]], labels: list[int], vocab: BartVocab, *,
                  recipe: FinetuneRecipe = FINETUNE, seed: int = 0) -> tuple[BartForSequenceClassification, list]:
    """BART's classification head (§3.1) on top of ``model``; all weights fine-tuned with cross-entropy."""
    _check_bart(model)
    _check_vocab(vocab)
    _check_recipe(recipe)
    _check_int(seed, "seed")
    ids, _ = _check_labelled_sentences(ids, labels, vocab, 2, "finetune_sst2")
    torch.manual_seed(seed)
    clf = BartForSequenceClassification(model, 2, dropout=0.1).train()
    opt, sched = _optimizer(clf, recipe.sst2_lr, max(1, recipe.sst2_updates // 10))
    g = torch.Generator().manual_seed(seed)
    losses = []
    while len(losses) < recipe.sst2_updates:
        perm = torch.randperm(len(ids), generator=g)                                # one epoch
        for start in range(0, len(ids), recipe.sst2_batch):
            if len(losses) == recipe.sst2_updates:
                break
            index = perm[start:start + recipe.sst2_batch].tolist()
            x, keep, _ = pad_batch([ids[i] for i in index], vocab.pad_id)
            loss = F.cross_entropy(clf(x, keep), torch.tensor([labels[i] for i in index]))
            losses.append(_step(clf, opt, sched, loss, recipe.clip))
    return clf.eval(), losses


@torch.no_grad()
def sst2_accuracy(clf: BartForSequenceClassification, ids: list[list[int]], labels: list[int], vocab: BartVocab,
                  batch_size: int = 256) -> float:
    """Accuracy of ``clf`` on ``ids`` (sentences ending with </s>) against ``labels``."""
    if not isinstance(clf, BartForSequenceClassification):
        raise TypeError(f"clf must be a BartForSequenceClassification, got {type(clf).__name__}")
    _check_vocab(vocab)
    check_positive_int(batch_size, "batch_size")
    ids, _ = _check_labelled_sentences(ids, labels, vocab, clf.out_proj.out_features, "sst2_accuracy")
    labels = list(labels)
    clf.eval()
    right = 0
    for start in range(0, len(ids), batch_size):
        x, keep, _ = pad_batch(ids[start:start + batch_size], vocab.pad_id)
        right += int((clf(x, keep).argmax(-1) == torch.tensor(labels[start:start + batch_size])).sum())
    return right / len(ids)


# --------------------------------------------------------------------------- the comparison


def _summary(rows: list[dict], key: str) -> dict:
    out = {}
    for init in ("pretrained", "random"):
        values = [r[key] for r in rows if r["init"] == init]
        out[init] = {"mean": statistics.mean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
                     "values": values}
    out["difference"] = out["pretrained"]["mean"] - out["random"]["mean"]
    return out


def compare(seeds=(0, 1), *, recipe: FinetuneRecipe = FINETUNE, tasks=("translation", "sst2"),
            inits=("pretrained", "random"), log=print, directory: str | Path | None = None) -> dict:
    """Fine-tune pre-trained (the model of ``directory``, default ``data/bart``) and random-init BART on each
    task with each seed; the table and its summary.

    ``inits`` picks the starts to run: after the committed model changes, ``("pretrained",)`` re-measures
    its rows and :func:`merge` keeps the random-init rows of the committed table (they do not depend on it).
    """
    if isinstance(tasks, str):
        raise TypeError("tasks must be a tuple of task names, got one string")
    if isinstance(inits, str) or not isinstance(inits, (tuple, list)):
        raise TypeError(f"inits must be a tuple of starts, got {type(inits).__name__}")
    if not inits or set(inits) - {"pretrained", "random"}:
        raise ValueError(f"inits must be among ('pretrained', 'random'), got {tuple(inits)!r}")
    _check_recipe(recipe)
    if not callable(log):
        raise TypeError(f"log must be a function such as print, got {type(log).__name__}")
    seeds = tuple(seeds)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"seeds must be a non-empty sequence of ints, got {seeds!r}")
    unknown = set(tasks) - {"translation", "sst2"}
    if unknown or not tasks:
        raise ValueError(f"tasks must be among ('translation', 'sst2'), got {tasks!r}")
    vocab = BartVocab()
    result = {"recipe": asdict(recipe), "seeds": list(seeds), "hardware": hardware()}
    both = set(inits) == {"pretrained", "random"}
    if "pretrained" in inits:
        result["model_file_sha256"] = sha256_file(Path(directory or model_dir("bart")) / "model.safetensors")
    if "translation" in tasks:
        data, src, tgt = translation_subset(recipe.n_pairs, vocab)
        rows = []
        for seed in seeds:
            for init in inits:
                t0 = time.monotonic()
                model, _ = starting_model(init, seed, vocab, directory)
                losses = finetune_translation(model, src, tgt, vocab, recipe=recipe, seed=seed)
                report = translation_bleu(model, vocab, data)
                rows.append({"init": init, "seed": seed, "bleu": round(report.bleu, 2), "chrf": round(report.chrf, 2),
                             "final_train_loss": round(sum(losses[-50:]) / 50, 4),
                             "seconds": round(time.monotonic() - t0, 1), "examples": report.examples(5)})
                log(json.dumps({k: v for k, v in rows[-1].items() if k != "examples"}))
        result["translation"] = {"n_pairs": recipe.n_pairs, "n_test": len(data.test), "rows": rows}
        if both:                                      # with one start, merge() into a table makes the summary
            result["translation"].update(bleu=_summary(rows, "bleu"), chrf=_summary(rows, "chrf"))
    if "sst2" in tasks:
        sst = sst2_data(vocab, recipe.n_sst2, recipe.n_sst2_select)
        rows = []
        for seed in seeds:
            for init in inits:
                for lr in recipe.sst2_lrs:
                    t0 = time.monotonic()
                    model, _ = starting_model(init, seed, vocab, directory)
                    clf, _ = finetune_sst2(model, sst["train_ids"], sst["train_labels"], vocab,
                                           recipe=replace(recipe, sst2_lr=lr), seed=seed)
                    rows.append({"init": init, "lr": lr, "seed": seed,
                                 "select": round(sst2_accuracy(clf, sst["select_ids"], sst["select_labels"], vocab), 4),
                                 "test": round(sst2_accuracy(clf, sst["test_ids"], sst["test_labels"], vocab), 4),
                                 "seconds": round(time.monotonic() - t0, 1)})
                    log(json.dumps(rows[-1]))
        result["sst2"] = {"n_train": len(sst["train_ids"]), "n_select": len(sst["select_ids"]),
                          "n_test": len(sst["test_ids"]), "test_truncated": sst["test_truncated"], "rows": rows}
        if both:
            result["sst2"]["summary"] = select_then_test(rows, recipe.sst2_lrs)
    return result


def _downstream_table(directory: Path) -> tuple[dict, FinetuneRecipe, dict]:
    """``directory/downstream.json``, the fine-tuning recipe it records and each start's chosen SST-2 rate."""
    path = directory / "downstream.json"
    remake = (f"`python -m coursekit.bart compare --tasks sst2 --out {path}` (or `merge` of separate runs; it "
              f"chooses each start's learning rate)")
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run {remake} first")
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); re-run {remake}") from None
    summary = table.get("sst2", {}).get("summary", {}) if isinstance(table, dict) else {}
    lacking = [] if isinstance(table, dict) and isinstance(table.get("recipe"), dict) else ["recipe"]
    lacking += [f"sst2.summary.{init}.chosen_lr" for init in ("pretrained", "random")
                if not isinstance(summary, dict) or not isinstance(summary.get(init), dict)
                or "chosen_lr" not in summary[init]]
    if lacking:
        raise ValueError(f"{path} is not a compare() table with SST-2 results: it lacks {lacking}; re-run {remake}")
    try:
        recipe = FinetuneRecipe(**{**table["recipe"], "sst2_lrs": tuple(table["recipe"].get("sst2_lrs", ()))})
    except TypeError as exc:
        raise ValueError(f"{path} records a recipe FinetuneRecipe does not take ({exc}); re-run {remake}") from None
    return table, recipe, {init: summary[init]["chosen_lr"] for init in ("pretrained", "random")}


def sst2_gain(directory: str | Path | None = None, seeds=(0,), *, log=None) -> dict:
    """The committed SST-2 comparison, re-run in minutes: fine-tune the BART in ``directory`` (default: the
    committed ``data/bart``) and the same architecture from random init (seeded by the seed, as in
    :func:`starting_model`) with the recipe of ``directory/downstream.json``, each start at the learning rate
    that table chose for it (``sst2.summary.<init>.chosen_lr``), for every seed in ``seeds``.

    Returns ``{"pretrained", "random"}`` (mean SST-2 dev accuracy over the seeds), ``gain`` (in points),
    ``n_dev``, ``seconds``, ``seeds``, ``per_seed`` (each start's accuracies, in the order of ``seeds``),
    ``lr`` (the rates used) and ``committed`` (the table's mean accuracies beside them). ``log``, if given,
    gets one JSON line per fine-tuning run.
    """
    if directory is not None and not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a path (str or Path) or None for data/bart, got {type(directory).__name__}")
    if isinstance(seeds, (int, str, bytes)) or not isinstance(seeds, (tuple, list)):
        raise TypeError(f"seeds must be a non-empty tuple of ints, got {type(seeds).__name__} {seeds!r}")
    if not seeds:
        raise ValueError("seeds must be a non-empty tuple of ints, got an empty one")
    for s in seeds:
        _check_int(s, "each of seeds")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct (a repeated seed repeats the same run), got {tuple(seeds)!r}")
    if log is not None and not callable(log):
        raise TypeError(f"log must be a function such as print, or None, got {type(log).__name__}")
    directory = Path(directory) if directory is not None else model_dir("bart")
    table, recipe, lrs = _downstream_table(directory)
    pretrained, vocab, report = load_pretrained_bart(directory)
    arch = BartRecipe(**report["recipe"])
    if pretrained.config.max_len < RECIPE.arch["max_len"]:
        raise ValueError(f"the model in {directory} has {pretrained.config.max_len} positions; SST-2 sentences "
                         f"are cut to {RECIPE.arch['max_len']} (the committed recipe's)")
    sst = sst2_data(vocab, recipe.n_sst2, recipe.n_sst2_select)
    start = time.monotonic()
    accuracies: dict[str, list[float]] = {"pretrained": [], "random": []}
    for seed in seeds:
        for init in accuracies:
            t0 = time.monotonic()
            if init == "pretrained":
                model = copy.deepcopy(pretrained).train()
            else:
                torch.manual_seed(seed)
                model = build_bart(arch, vocab).train()
            clf, _ = finetune_sst2(model, sst["train_ids"], sst["train_labels"], vocab,
                                   recipe=replace(recipe, sst2_lr=lrs[init]), seed=seed)
            accuracies[init].append(round(sst2_accuracy(clf, sst["test_ids"], sst["test_labels"], vocab), 4))
            if log is not None:
                log(json.dumps({"init": init, "lr": lrs[init], "seed": seed, "test": accuracies[init][-1],
                                "seconds": round(time.monotonic() - t0, 1)}))
    mean = {init: round(statistics.mean(v), 4) for init, v in accuracies.items()}
    summary = table["sst2"]["summary"]
    return {"pretrained": mean["pretrained"], "random": mean["random"],
            "gain": round(100 * (mean["pretrained"] - mean["random"]), 2), "n_dev": len(sst["test_ids"]),
            "seconds": round(time.monotonic() - start, 1), "seeds": list(seeds), "per_seed": accuracies, "lr": lrs,
            "committed": {init: summary[init].get("mean") for init in accuracies}}


def _row_key(row: dict) -> tuple:
    return row["init"], row["seed"], row.get("lr")


def merge(parts: list[dict], into: dict | None = None) -> dict:
    """One table from runs made in separate processes (e.g. one per seed, ``compare --seeds 0`` and ``--seeds
    1``): each task's rows concatenated and its summary recomputed. From ``into`` (the committed table) it
    keeps the tasks none of ``parts`` ran, and the rows (start, seed, learning rate) they did not re-run. Each task
    records its own ``seeds`` (those of its rows); the table's ``seeds`` are all of them."""
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        raise TypeError("parts must be a non-empty list of compare() results")
    if len({json.dumps(p.get("recipe"), sort_keys=True) for p in parts}) != 1:
        raise ValueError("parts must come from the same recipe")
    out = dict(into or {})
    out.update(recipe=parts[0]["recipe"], hardware=parts[0]["hardware"],
               seeds=sorted({s for p in parts for s in p["seeds"]} | set((into or {}).get("seeds", []))))
    if any("model_file_sha256" in p for p in parts):
        out["model_file_sha256"] = next(p["model_file_sha256"] for p in parts if "model_file_sha256" in p)
    for task in ("translation", "sst2"):
        mine = [p[task] for p in parts if task in p]
        if not mine:
            continue
        new_rows = [r for m in mine for r in m["rows"]]
        ran = {_row_key(r) for r in new_rows}
        kept = [r for r in (out.get(task) or {}).get("rows", []) if _row_key(r) not in ran]   # e.g. random init
        rows = sorted(kept + new_rows, key=lambda r: (r["seed"], r["init"] != "pretrained", r.get("lr", 0)))
        seeds = sorted({r["seed"] for r in rows})                   # a task may have more seeds than another
        if task == "translation":
            out[task] = {**mine[0], "seeds": seeds, "rows": rows, "bleu": _summary(rows, "bleu"),
                         "chrf": _summary(rows, "chrf")}
        else:
            out[task] = {**mine[0], "seeds": seeds, "rows": rows,
                         "summary": select_then_test(rows, tuple(parts[0]["recipe"]["sst2_lrs"]))}
    return out
