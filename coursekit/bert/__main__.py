"""``python -m coursekit.bert``: the course's small BERT from the command line (notebook 09).

* ``sst2 [--model data/bert_reviews] [--seeds N] [--json]`` — fine-tune a committed model (by default the
  in-domain one, pre-trained on movie reviews) and the same architecture from random init on SST-2 with the
  committed protocol (each at its chosen learning rate) and print the gain, in minutes;
* ``pretrain [--config FILE] --work runs/bert --out data/bert`` — the MLM + NSP pre-training recipe, or ELECTRA's
  with ``"objective": "electra"`` in the config (``--resume`` continues, ``--sweep SNAPSHOTS`` fine-tunes every
  snapshot of a finished run);
* ``compare --out data/bert/downstream.json`` — the committed table: both starts, every learning rate and seed;
* ``recompact [--model data/bert] [--out DIR]`` — store a model directory written in full precision as int8
  (one scale per row) and measure its final held-out MLM and NSP losses again on the stored weights.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

import torch
from tokenizers import Tokenizer

from coursekit.bert import finetuning, pretraining
from coursekit.bert.checkpoint import CHECKPOINT_DIR, REVIEWS_DIR, load_small_bert
from coursekit.bert.corpus import PretrainConfig, build_corpus, held_out_batch
from coursekit.bert.finetuning import compare, finetune_by_step, sst2_gain
from coursekit.bert.pretraining import WORK_TOKENIZER, export, pretrain, recompact
from coursekit.bert.sst2 import PROTOCOL, SST2Protocol
from coursekit.runtime import run_subcommand
from coursekit.training.loop import config_from_json
from coursekit.viz.wording import counted


def sst2_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bert sst2",
                                     description="pre-trained vs random init on SST-2 dev with the committed "
                                                 "protocol, each start at its committed learning rate")
    parser.add_argument("--model", default=str(REVIEWS_DIR),
                        help="model directory (default: data/bert_reviews, the in-domain model; data/bert for the "
                             "Wikipedia one)")
    parser.add_argument("--seeds", type=int, default=1, help="how many fine-tuning seeds (0, 1, …; default 1)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.threads:
        torch.set_num_threads(args.threads)
    r = sst2_gain(args.model, tuple(range(args.seeds)))
    print(json.dumps(r, indent=1) if args.json else
          f"SST-2 dev ({r['n_dev']} sentences, {counted(len(r['seeds']), 'seed')}): pre-trained {r['pretrained']:.3f}, "
          f"random init {r['random']:.3f}, gain {r['gain']:+.1f} points ({r['seconds']:.0f} s; committed "
          f"table: {r['committed']['pretrained']:.3f} vs {r['committed']['random']:.3f})")
    return 0


def pretrain_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bert pretrain",
                                     description=pretraining.__doc__.splitlines()[0])
    parser.add_argument("--config", help="JSON file with PretrainConfig fields (missing fields keep their defaults)")
    parser.add_argument("--steps", type=int, help="override the number of steps")
    parser.add_argument("--out", help="directory for model.safetensors, tokenizer.json and report.json")
    parser.add_argument("--snapshots", help="directory for the weights at every evaluation")
    parser.add_argument("--work", help="directory for the checkpoint (every few minutes) and train.log")
    parser.add_argument("--resume", action="store_true", help="continue the checkpoint in --work exactly")
    parser.add_argument("--sweep", metavar="SNAPSHOTS", help="do not train: fine-tune every snapshot of a finished "
                        "run on SST-2 and add the accuracies to --out/report.json as 'sst2_by_step'")
    args = parser.parse_args(argv)
    if args.sweep:
        if not args.out:
            raise SystemExit("--sweep needs --out, the directory of the run's report.json")
        _, tokenizer, report = load_small_bert(args.out)
        report["sst2_by_step"] = finetune_by_step(args.sweep, tokenizer)
        for row in report["sst2_by_step"]:
            print(f"step {row['step']:>6}: SST-2 dev accuracy {row['dev_acc']:.3f} ({row['seconds']:.0f} s)")
        (Path(args.out) / "report.json").write_text(json.dumps(report, indent=1))
        return
    cfg = PretrainConfig()
    if args.config:
        cfg = config_from_json(args.config, cfg)
    if args.steps:
        cfg = dataclasses.replace(cfg, steps=args.steps)
    load = os.getloadavg()
    if args.resume and not args.work:
        raise SystemExit("--resume needs --work, the directory of the interrupted run")
    tokenizer = load_small_bert(cfg.init_from)[1] if cfg.init_from else None
    if args.resume and (Path(args.work) / WORK_TOKENIZER).is_file():   # the run's own vocabulary: WordPiece
        tokenizer = Tokenizer.from_file(str(Path(args.work) / WORK_TOKENIZER))  # trained again gives other ids
    corpus = build_corpus(cfg, tokenizer=tokenizer)
    model, report = pretrain(cfg, corpus, progress=True, snapshot_dir=args.snapshots, work=args.work,
                             resume=args.resume, whole_electra=True)
    report["load_average_before_after"] = [load, os.getloadavg()]
    if args.out:                    # int8 on disk; the final held-out figures are those of the stored weights
        report = export(args.out, model, corpus.tokenizer, report, held_out_batch(corpus, cfg))
    f = report["final"]
    if cfg.objective == "electra":
        losses = (f"held-out generator MLM {f['mlm']:.3f}, RTD {f['rtd']:.3f} (acc {f['rtd_acc']:.3f}; "
                  f"constant predictor {f['rtd_prior']:.3f})")
    else:
        losses = f"held-out MLM {f['mlm']:.3f} NSP {f['nsp']:.3f} (acc {f['nsp_acc']:.3f})"
    print(f"{losses} after {cfg.steps} steps; unigram {report['unigram_mlm']:.3f}; "
          f"wall {report['wall_seconds']:.0f} s, cpu {report['cpu_seconds']:.0f} s")


def compare_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bert", description=finetuning.__doc__.splitlines()[0])
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


def recompact_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bert recompact",
                                     description="store a full-precision model directory as int8 (one scale per "
                                                 "row) and measure its final held-out losses on the stored weights")
    parser.add_argument("--model", default=str(CHECKPOINT_DIR), help="model directory (default: data/bert)")
    parser.add_argument("--out", default=None, help="where to write the compact directory (default: over --model)")
    args = parser.parse_args(argv)
    report = recompact(args.model, args.out)
    old, new = report["recompacted_from"], report["final"]
    print(f"{args.out or args.model}: {old['size_bytes'] / 1e6:.2f} MB ({old['storage']}) -> "
          f"{report['size_bytes'] / 1e6:.2f} MB ({report['storage']}); held-out MLM {old['final']['mlm']:.4f} -> "
          f"{new['mlm']:.4f}, NSP {old['final']['nsp']:.4f} -> {new['nsp']:.4f} "
          f"(acc {old['final']['nsp_acc']:.4f} -> {new['nsp_acc']:.4f})")
    return 0


COMMANDS = {"sst2": lambda a: sst2_main(a[1:]), "pretrain": lambda a: pretrain_main(a[1:]), "compare": compare_main,
            "recompact": lambda a: recompact_main(a[1:])}


def main(argv: list[str] | None = None) -> int:
    return run_subcommand(__doc__, COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
