"""Is the small BERT's pre-training worth anything on SST-2? Pre-trained vs random init, fairly (notebook 09).

Both conditions fine-tune the *same* architecture with the same recipe (:func:`coursekit.bert.heads.fine_tune`:
mean-pooled head, AdamW, warm-up + cosine) on the same ``n_train`` SST-2 training sentences; only the
starting weights differ (the committed pre-trained ones, or a fresh initialisation seeded by ``seed``).

A pre-trained and a random model need not want the same learning rate, and picking each one's rate on
the test set would flatter both. So each condition chooses its rate from ``lrs`` by its mean accuracy
(over seeds) on ``n_select`` *other* SST-2 training sentences, and only then is the 872-sentence
validation set — our test set — read. :func:`compare` returns every run and the summary (mean ± sd
over seeds at each condition's chosen rate); ``python -m coursekit.bert compare --out
data/bert/downstream.json`` reproduces the committed table. :func:`finetune_by_step` measures the same
thing along a pre-training run (one fixed recipe, every snapshot).
"""

from __future__ import annotations

import copy
import json
import re
import time
from dataclasses import asdict
from pathlib import Path

import torch

from coursekit.bert.checkpoint import CHECKPOINT_DIR, REVIEWS_DIR, load_small_bert
from coursekit.bert.heads import classifier_accuracy, fine_tune, sentence_batches
from coursekit.bert.model import Bert, BertConfig, _check_bert
from coursekit.bert.sst2 import PROTOCOL, SST2Protocol, sst2_splits
from coursekit.data import sha256_file
from coursekit.metrics import select_then_test
from coursekit.runtime import seed_everything
from coursekit.training.loop import load_checkpoint, read_checkpoint_metadata, verify_checkpoint
from coursekit.training.resumable import hardware
from coursekit.validation import check_int as _check_int
from coursekit.validation import check_positive_float, check_positive_int

__all__ = ["finetune_once", "compare", "finetune_by_step", "sst2_gain"]


def finetune_once(body: Bert, tokenizer, splits: dict, *, lr: float, seed: int, epochs: int,
                  batch_size: int) -> dict:
    """Fine-tune ``body`` (trained in place) once; accuracy on the selection and test sentences."""
    _check_bert(body, "body")
    if not isinstance(splits, dict):
        raise TypeError(f"splits must be a dict {{'train', 'select', 'test'}} (from sst2_splits), "
                        f"got {type(splits).__name__}")
    if set(splits) != {"train", "select", "test"}:
        raise ValueError(f"splits must have the keys ['select', 'test', 'train'], got {sorted(splits)}")
    check_positive_float(lr, "lr")
    _check_int(seed, "seed")
    check_positive_int(epochs, "epochs")
    check_positive_int(batch_size, "batch_size")
    seed_everything(seed)
    train = splits["train"]
    batches = [b for e in range(epochs) for b in sentence_batches(tokenizer, train["sentence"], train["label"],
                                                                  batch_size=batch_size, shuffle_seed=e + 10 * seed)]
    t0 = time.monotonic()
    clf, _ = fine_tune(body, batches, lr=lr)
    seconds = time.monotonic() - t0

    def accuracy(split):
        return classifier_accuracy(clf, sentence_batches(tokenizer, split["sentence"], split["label"], batch_size=64))

    return {"select": round(accuracy(splits["select"]), 4) if len(splits["select"]) else None,
            "test": round(accuracy(splits["test"]), 4),
            "seconds": round(seconds, 3)}


def starting_body(init: str, seed: int, pretrained: Bert) -> Bert:
    """A copy of the pre-trained weights, or the same architecture freshly initialised with ``seed``."""
    if init == "pretrained":
        return copy.deepcopy(pretrained)
    if init == "random":
        torch.manual_seed(seed)
        return Bert(pretrained.config)
    raise ValueError(f"init must be 'pretrained' or 'random', got {init!r}")


def compare(directory: str | Path = CHECKPOINT_DIR, protocol: SST2Protocol = PROTOCOL, *, log=print) -> dict:
    """Every (init, lr, seed) run, each init's learning rate chosen on the selection sentences, and the
    test accuracy at that rate (mean ± sd over seeds) for pre-trained and random init."""
    if not isinstance(protocol, SST2Protocol):
        raise TypeError(f"protocol must be an SST2Protocol, got {type(protocol).__name__}")
    if not callable(log):
        raise TypeError(f"log must be a function such as print, got {type(log).__name__}")
    pretrained, tokenizer, _ = load_small_bert(directory)
    splits = sst2_splits(protocol.n_train, protocol.n_select)
    rows = []
    for init in ("pretrained", "random"):
        for lr in protocol.lrs:
            for seed in protocol.seeds:
                body = starting_body(init, seed, pretrained)
                rows.append({"init": init, "lr": lr, "seed": seed,
                             **finetune_once(body, tokenizer, splits, lr=lr, seed=seed, epochs=protocol.epochs,
                                             batch_size=protocol.batch_size)})
                log(json.dumps(rows[-1]))
    summary = select_then_test(rows, protocol.lrs)
    return {"protocol": asdict(protocol), "model_sha256": sha256_file(Path(directory) / "model.safetensors"),
            "n_test": len(splits["test"]), "rows": rows, "summary": summary, "hardware": hardware()}


def finetune_by_step(snapshot_dir: str | Path, tokenizer, *, n_train: int = 3000, epochs: int = 3, lr: float = 1e-3,
                     batch_size: int = 16, seed: int = 0) -> list[dict]:
    """SST-2 accuracy after fine-tuning each snapshot of a run (and its random initialisation, step 0)
    with one recipe: how much pre-training is worth as it goes on. Every snapshot is fine-tuned on the
    same ``n_train`` sentences with the same seed."""
    check_positive_int(n_train, "n_train")
    check_positive_int(epochs, "epochs")
    check_positive_float(lr, "lr")
    check_positive_int(batch_size, "batch_size")
    _check_int(seed, "seed")
    paths = list(Path(snapshot_dir).glob("step_*.safetensors"))
    if not paths:
        raise FileNotFoundError(f"no step_*.safetensors snapshots in {snapshot_dir}")
    for path in paths:
        if not re.fullmatch(r"step_\d+", path.stem):
            raise ValueError(f"{path} is not named step_<number>.safetensors")
    paths.sort(key=lambda p: int(p.stem.split("_")[1]))
    # every snapshot is checked before the first fine-tuning run: a damaged one must not stop the sweep hours in
    stored = read_checkpoint_metadata(paths[0])[0]
    for path in paths:
        verify_checkpoint(path)
        if read_checkpoint_metadata(path)[0] != stored:
            raise ValueError(f"{path} is not a snapshot of the same BERT: its config differs from {paths[0].stem}'s")
    config = BertConfig.from_dict(stored)
    splits = sst2_splits(n_train, 0)
    rows = []
    for path in [None, *paths]:
        torch.manual_seed(seed)
        model = Bert(config)                                     # step 0: the random initialisation itself
        if path is not None:
            load_checkpoint(path, model, expected_config=config)
        result = finetune_once(model, tokenizer, splits, lr=lr, seed=seed, epochs=epochs, batch_size=batch_size)
        rows.append({"step": 0 if path is None else int(path.stem.split("_")[1]),
                     "dev_acc": result["test"], "seconds": result["seconds"]})
    return rows


def sst2_gain(directory: str | Path = REVIEWS_DIR, seeds: tuple[int, ...] = (0,), *, log=None) -> dict:
    """The committed comparison, re-run in minutes: fine-tune the model in ``directory`` (by default the
    in-domain one, ``data/bert_reviews``) and the same architecture from random init with the committed
    protocol, each at the learning rate it chose in the committed table (``downstream.json``'s ``summary``),
    for every seed in ``seeds``.

    Returns ``{"pretrained", "random"}`` (mean SST-2 dev accuracy over the seeds), ``gain`` (in points),
    ``n_dev``, ``seconds``, the per-seed accuracies, the rates used and the committed figures beside them.
    """
    if isinstance(seeds, int) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"seeds must be a non-empty tuple of ints, got {seeds!r}")
    table_path = Path(directory) / "downstream.json"
    if not table_path.is_file():
        raise FileNotFoundError(f"{table_path} is missing: run `python -m coursekit.bert compare --out "
                                f"{table_path}` first (it chooses each start's learning rate)")
    table = json.loads(table_path.read_text(encoding="utf-8"))
    protocol = SST2Protocol(**{**table["protocol"], "lrs": tuple(table["protocol"]["lrs"]),
                               "seeds": tuple(seeds)})
    pretrained, tokenizer, _ = load_small_bert(directory)
    splits = sst2_splits(protocol.n_train, 0)
    start = time.monotonic()
    accuracies: dict[str, list[float]] = {"pretrained": [], "random": []}
    for init in accuracies:
        lr = table["summary"][init]["chosen_lr"]
        for seed in seeds:
            body = starting_body(init, seed, pretrained)
            result = finetune_once(body, tokenizer, splits, lr=lr, seed=seed, epochs=protocol.epochs,
                                   batch_size=protocol.batch_size)
            accuracies[init].append(result["test"])
            if log is not None:
                log(json.dumps({"init": init, "lr": lr, "seed": seed, **result}))
    mean = {init: round(sum(v) / len(v), 4) for init, v in accuracies.items()}
    return {"pretrained": mean["pretrained"], "random": mean["random"],
            "gain": round(100 * (mean["pretrained"] - mean["random"]), 2), "n_dev": len(splits["test"]),
            "seconds": round(time.monotonic() - start, 1), "seeds": list(seeds), "per_seed": accuracies,
            "lr": {init: table["summary"][init]["chosen_lr"] for init in accuracies},
            "committed": {init: table["summary"][init]["mean"] for init in accuracies}}

