"""``python -m coursekit.bart``: the course's small BART from the command line (notebook 11).

* ``sst2 [--model DIR] [--seeds N] [--threads N] [--json]`` — fine-tune the committed model and the same
  architecture from random init on SST-2 with the committed protocol (each at the learning rate
  ``data/bart/downstream.json`` chose for it) and print the gain, in minutes;
* ``denoise [--json]`` — how well the committed model reconstructs corrupted held-out sentences;
* ``pretrain --work runs/bart --out data/bart`` — the denoising pre-training recipe (``--resume`` continues);
  ``pretrain --continue-from DIR --work runs/bart-reviews --out data/bart`` — its in-domain second stage
  (the model in ``DIR`` continued on the same corpus plus IMDB review passages, ``REVIEWS_STAGE``);
* ``recompact [--model DIR] [--out DIR]`` — rewrite a model committed in fp16 as int8 (one scale per output
  channel), keeping its training record and measuring its figures again on the weights as stored;
* ``compare`` / ``merge`` — pre-trained vs random init on EN→FR and SST-2 (``data/bart/downstream.json``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import torch

from coursekit.bart.corpus import RECIPE, REVIEWS_STAGE
from coursekit.bart.finetuning import compare, merge, sst2_gain
from coursekit.bart.pretraining import denoising_report, export, pretrain, recompact
from coursekit.data import sha256_file
from coursekit.runtime import run_subcommand
from coursekit.viz.wording import counted


def sst2_main(argv: list[str]) -> int:
    """``python -m coursekit.bart sst2 [--model DIR] [--seeds N] [--threads N] [--json]``: the twin of
    ``python -m coursekit.bert sst2`` (:func:`coursekit.bart.finetuning.sst2_gain` on seeds 0 … N-1)."""
    parser = argparse.ArgumentParser(prog="python -m coursekit.bart sst2",
                                     description="pre-trained vs random init on SST-2 dev with the committed "
                                                 "protocol, each start at its committed learning rate")
    parser.add_argument("--model", default=None, help="model directory with downstream.json (default: data/bart)")
    parser.add_argument("--seeds", type=int, default=1, help="how many fine-tuning seeds (0, 1, …; default 1)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.threads < 0:
        parser.error(f"--threads must be 0 (torch's default) or more, got {args.threads}")
    if args.threads:
        torch.set_num_threads(args.threads)
    r = sst2_gain(args.model, tuple(range(args.seeds)))
    print(json.dumps(r, indent=1) if args.json else
          f"SST-2 dev ({r['n_dev']} sentences, {counted(len(r['seeds']), 'seed')}): pre-trained {r['pretrained']:.3f}, "
          f"random init {r['random']:.3f}, gain {r['gain']:+.1f} points ({r['seconds']:.0f} s; committed "
          f"table: {r['committed']['pretrained']:.3f} vs {r['committed']['random']:.3f})")
    return 0


def denoise_main(argv: list[str] | None = None) -> int:
    """``python -m coursekit.bart denoise [--json]``: how well the committed pre-trained BART denoises (the JSON
    rates rounded to 4 decimals)."""
    parser = argparse.ArgumentParser(prog="python -m coursekit.bart", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("denoise", help="copy and fill accuracy on held-out sentences, next to the unigram guess")
    p.add_argument("--model", default=None, help="model directory (default: the committed data/bart)")
    p.add_argument("--seed", type=int, default=1234, help="seed of the corruption")
    p.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    r = denoising_report(args.model, seed=args.seed)
    rounded = {k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}
    print(json.dumps(rounded, indent=1) if args.json else
          f"{r['held_out_sentences']} held-out sentences, text infilling of {r['mask_ratio']:.0%} of the tokens:\n"
          f"  uncorrupted tokens copied: {r['copy_accuracy']:.3f} ({r['n_copy']} tokens)\n"
          f"  masked tokens filled:      {r['fill_accuracy']:.3f} ({r['n_fill']} tokens); unigram guess "
          f"{r['unigram_guess']!r}: {r['unigram_fill_accuracy']:.3f}")
    return 0


def pretrain_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bart", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pretrain", help="pre-train (checkpoints in --work, the committed model in --out)")
    p.add_argument("--work", default="runs/bart")
    p.add_argument("--out", default=None, help="export here when done (e.g. data/bart)")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--max-updates", type=int, default=None)
    p.add_argument("--continue-from", default=None,
                   help="the in-domain second stage: continue the committed model in this folder on the corpus "
                        "plus IMDB review passages (REVIEWS_STAGE)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    recipe = RECIPE
    if args.continue_from:
        weights = Path(args.continue_from) / "model.safetensors"
        if not weights.is_file():
            parser.error(f"--continue-from: no model at {weights}")
        recipe = replace(RECIPE, **REVIEWS_STAGE, init=args.continue_from, init_sha256=sha256_file(weights))
    if args.max_updates is not None:
        recipe = replace(recipe, max_updates=args.max_updates)
    model, state, corpus = pretrain(args.work, recipe=recipe, resume=args.resume)
    if args.out:
        report = export(model, state, corpus, args.out, recipe=recipe)
        print(json.dumps({k: report[k] for k in ("updates", "train_seconds", "held_out", "size_bytes")}, indent=1))


def recompact_main(argv: list[str] | None = None) -> int:
    """``python -m coursekit.bart recompact [--model DIR] [--out DIR]``: :func:`coursekit.bart.pretraining.recompact`;
    prints the file size and the held-out figures before and after (the rates rounded to 4 decimals)."""
    parser = argparse.ArgumentParser(prog="python -m coursekit.bart", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("recompact", help="rewrite an fp16 model as int8 (one scale per output channel), re-measured")
    p.add_argument("--model", default=None, help="model directory (default: the committed data/bart)")
    p.add_argument("--out", default=None, help="write the int8 model and its report here (default: over --model)")
    args = parser.parse_args(argv)
    report = recompact(args.model, args.out)
    old = report["recompacted_from"]
    keys = ("copy_accuracy", "fill_accuracy", "loss")
    print(json.dumps({"storage": [old["storage"], report["storage"]],
                      "size_bytes": [old["size_bytes"], report["size_bytes"]],
                      "held_out": {k: [round(old["held_out"][k], 4), round(report["held_out"][k], 4)] for k in keys}},
                     indent=1))
    return 0


def compare_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bart", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("compare", help="pre-trained vs random init on EN→FR and SST-2")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--tasks", nargs="+", default=["translation", "sst2"], choices=["translation", "sst2"])
    p.add_argument("--inits", nargs="+", default=["pretrained", "random"], choices=["pretrained", "random"],
                   help="the starts to run (after a new committed model: pretrained; merge keeps the others)")
    p.add_argument("--out", default=None, help="write the table as JSON here (e.g. data/bart/downstream.json)")
    p.add_argument("--model", default=None, help="the pre-trained model's folder (default: data/bart)")
    p.add_argument("--threads", type=int, default=0)
    m = sub.add_parser("merge", help="combine compare results of separate processes into one table")
    m.add_argument("parts", nargs="+", help="JSON files written by compare --out")
    m.add_argument("--into", required=True,
                   help="the table to update (keeps the tasks and rows the parts did not run)")
    args = parser.parse_args(argv)
    if args.command == "merge":
        into = Path(args.into)
        old = json.loads(into.read_text(encoding="utf-8")) if into.exists() else None
        result = merge([json.loads(Path(f).read_text(encoding="utf-8")) for f in args.parts], old)
        into.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(json.dumps({t: result[t].get("summary") or result[t].get("bleu") for t in ("translation", "sst2")
                          if t in result}))
        return
    if args.threads:
        torch.set_num_threads(args.threads)
    result = compare(tuple(args.seeds), tasks=tuple(args.tasks), inits=tuple(args.inits), directory=args.model)
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)


COMMANDS = {"sst2": lambda a: sst2_main(a[1:]), "denoise": denoise_main,
            "pretrain": pretrain_main, "recompact": recompact_main, "compare": compare_main, "merge": compare_main}


def main(argv: list[str] | None = None) -> int:
    return run_subcommand(__doc__, COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
