"""Is the small BERT's pre-training worth anything on SST-2? Pre-trained vs random init, fairly (notebook 09).

Both conditions fine-tune the *same* architecture with the same recipe (:func:`coursekit.bert_heads.fine_tune`:
mean-pooled head, AdamW, warm-up + cosine) on the same ``n_train`` SST-2 training sentences; only the
starting weights differ (the committed pre-trained ones, or a fresh initialisation seeded by ``seed``).

A pre-trained and a random model need not want the same learning rate, and picking each one's rate on
the test set would flatter both. So each condition chooses its rate from ``lrs`` by its mean accuracy
(over seeds) on ``n_select`` *other* SST-2 training sentences, and only then is the 872-sentence
validation set — our test set — read. :func:`compare` returns every run and the summary (mean ± sd
over seeds at each condition's chosen rate); ``python -m coursekit.bert_finetuning compare --out
data/bert/downstream.json`` reproduces the committed table. :func:`finetune_by_step` measures the same
thing along a pre-training run (one fixed recipe, every snapshot).
"""

from __future__ import annotations

import copy
import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from coursekit.bert import Bert, BertConfig, _check_bert
from coursekit.bert_checkpoint import CHECKPOINT_DIR, load_small_bert
from coursekit.bert_heads import classifier_accuracy, fine_tune, sentence_batches
from coursekit.checks import check_count as _check_count
from coursekit.checks import check_int as _check_int
from coursekit.checks import check_positive_float, check_positive_int
from coursekit.metrics import select_then_test
from coursekit.runtime import seed_everything

__all__ = ["SST2Protocol", "PROTOCOL", "sst2_splits", "finetune_once", "compare", "finetune_by_step"]


@dataclass(frozen=True)
class SST2Protocol:
    """The fine-tuning budget and the learning-rate choice, the same for both starting points."""

    n_train: int = 3000                # SST-2 training sentences to fine-tune on (a fixed shuffled subset)
    n_select: int = 1000               # other training sentences, to choose the learning rate on
    epochs: int = 3
    batch_size: int = 16
    lrs: tuple[float, ...] = (3e-4, 1e-3)
    seeds: tuple[int, ...] = (0, 1)

    def __post_init__(self) -> None:
        for name in ("n_train", "n_select", "epochs", "batch_size"):
            check_positive_int(getattr(self, name), name)
        if not self.lrs or not all(isinstance(x, float) and x > 0 for x in self.lrs):
            raise ValueError(f"lrs must be positive floats, got {self.lrs!r}")
        if not self.seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in self.seeds):
            raise ValueError(f"seeds must be a non-empty tuple of ints, got {self.seeds!r}")


PROTOCOL = SST2Protocol()
SELECT_OFFSET = 60_000   # the selection sentences are rows 60,000… of the shuffled training split


def sst2_splits(n_train: int, n_select: int) -> dict:
    """``{"train", "select", "test"}``: disjoint rows of SST-2 train (shuffled with seed 0) and the
    validation split (the test set here: GLUE's test labels are not public)."""
    from coursekit import data

    check_positive_int(n_train, "n_train")
    _check_count(n_select, "n_select")
    if n_train > SELECT_OFFSET:
        raise ValueError(f"n_train must be ≤ {SELECT_OFFSET} (the selection sentences start there), got {n_train}")
    sst = data.load_sst2()
    shuffled = sst["train"].shuffle(seed=0)
    if SELECT_OFFSET + n_select > len(shuffled):
        raise ValueError(f"n_train must be ≤ {SELECT_OFFSET} and n_select ≤ {len(shuffled) - SELECT_OFFSET}, "
                         f"got {n_train} and {n_select}")
    return {"train": shuffled.select(range(n_train)),
            "select": shuffled.select(range(SELECT_OFFSET, SELECT_OFFSET + n_select)),
            "test": sst["validation"]}


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
    from coursekit.data import sha256_file
    from coursekit.resumable import hardware

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
    from coursekit.train import load_checkpoint, read_checkpoint_metadata, verify_checkpoint

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


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m coursekit.bert_finetuning", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("compare", help="pre-trained vs random init on SST-2, learning rate chosen per init")
    p.add_argument("--model", default=str(CHECKPOINT_DIR), help="the pre-trained model's directory")
    p.add_argument("--seeds", type=int, nargs="+", default=list(PROTOCOL.seeds))
    p.add_argument("--lrs", type=float, nargs="+", default=list(PROTOCOL.lrs))
    p.add_argument("--n-train", type=int, default=PROTOCOL.n_train)
    p.add_argument("--out", default=None, help="write the table as JSON here (e.g. data/bert/downstream.json)")
    p.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    protocol = SST2Protocol(n_train=args.n_train, lrs=tuple(args.lrs), seeds=tuple(args.seeds))
    result = compare(args.model, protocol)
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
