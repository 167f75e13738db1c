"""``python -m coursekit.gpt``: the course's GPTs from the command line (notebooks 10 and 12).

* ``train [--config FILE] [--nanogpt-cpu] [--out DIR]`` — the character-level GPT of notebook 10 on Tiny Shakespeare;
* ``induction [--json]`` — induction and previous-token score of every head of the committed in-context learner;
* ``icl [--json]`` — its strict held-out accuracy by number of shots;
* ``train-icl --work runs/icl --out data/icl`` — the recipe of that committed model (``--resume`` continues).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch

from coursekit.gpt import char, icl_training, induction
from coursekit.gpt.char import TrainConfig, char_data, estimate_loss, fixed_val_loss, train
from coursekit.gpt.model import GPT
from coursekit.runtime import run_subcommand
from coursekit.training.loop import config_from_json, load_checkpoint, save_checkpoint


def char_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m coursekit.gpt", description=char.__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a character-level GPT on Tiny Shakespeare")
    t.add_argument("--config", help="JSON file with TrainConfig fields (missing fields keep their defaults)")
    t.add_argument("--nanogpt-cpu", action="store_true", help="nanoGPT's CPU recipe instead of the course's")
    t.add_argument("--out", help="directory for model.safetensors + report.json")
    args = parser.parse_args(argv)

    cfg = TrainConfig.nanogpt_cpu() if args.nanogpt_cpu else TrainConfig()
    if args.config:
        cfg = config_from_json(args.config, cfg)
    load = os.getloadavg()
    model, report = train(cfg, progress=False)
    report["load_average_before_after"] = [load, os.getloadavg()]
    if args.out:                    # the committed form: int8 matrices; every figure below is measured on it
        out = Path(args.out)
        save_checkpoint(out / "model.safetensors", model, model.config, extra={"chars": report["chars"]},
                        compact=True)
        stored = GPT(model.config)
        load_checkpoint(out / "model.safetensors", stored, model.config)
        model = stored.eval()
        report["stored"] = "int8 matrices with one fp32 scale per row (coursekit.training.compact)"
    val_ids = char_data()[2]
    report["fixed_val_loss"] = fixed_val_loss(model, val_ids)
    report["val_loss_200_batches"] = estimate_loss(model, val_ids, batch_size=cfg.batch_size, iters=200,
                                                   generator=torch.Generator().manual_seed(0))
    r = report
    print(f"val {r['final']['val']:.4f} train {r['final']['train']:.4f} after {cfg.max_iters} iters; "
          f"wall {r['wall_seconds']:.1f} s, cpu {r['cpu_seconds']:.1f} s; reached 1.886: {r['reached_1_886']}; "
          f"{r['tokens_per_second']:.0f} tok/s wall, {r['tokens_per_cpu_second']:.0f} tok/cpu-s; "
          f"MFU {r['mfu_wall']:.2f} (wall), {r['mfu_cpu']:.2f} (cpu: model "
          f"{r['model_flops_per_cpu_second'] / 1e9:.1f} vs matmul {r['matmul_flops_per_cpu_second'] / 1e9:.1f} "
          f"GFLOP/cpu-s); val over 200 batches {r['val_loss_200_batches']:.4f}; load {load} -> {os.getloadavg()}")
    if args.out:
        (out / "report.json").write_text(json.dumps(report, indent=1))


def prompting_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.gpt",
                                     description=icl_training.__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train-icl", help="train the in-context learner of data/icl (checkpoints in --work)")
    t.add_argument("--config", help="JSON file with ICLTrainConfig fields (missing ones keep their defaults)")
    t.add_argument("--work", default="runs/icl", help="checkpoint folder (default runs/icl)")
    t.add_argument("--resume", action="store_true", help="continue the checkpoint in --work")
    t.add_argument("--stop-at", type=int, help="stop after this many steps of the schedule")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--out", help="directory for model.safetensors + report.json (e.g. data/icl)")
    for name, text in (("induction", "induction and previous-token score of every head, on fresh repeated tokens"),
                       ("icl", "strict held-out accuracy by number of shots")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--model", default=None, help="model directory (default: the committed data/icl)")
        p.add_argument("--seed", type=int, default=0, help="seed of the fresh sequences / tasks")
        p.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    if args.command == "train-icl":
        torch.set_num_threads(args.threads)
        cfg = icl_training.ICLTrainConfig()
        if args.config:
            cfg = config_from_json(args.config, cfg)
        model, report = icl_training.train_icl(cfg, args.work, resume=args.resume, log=True, stop_at=args.stop_at)
        report["heldout"] = icl_training.heldout_accuracy(model, cfg)
        report["heads"] = induction.head_scores(model, torch.arange(4, cfg.task_family().vocab_size))
        print(json.dumps({"seconds": report["seconds"], "heldout": report["heldout"]["by_shots"],
                          "best_head": report["heads"]["best_head"], "best_score": report["heads"]["best_score"]}))
        if args.out:
            icl_training.save_icl_checkpoint(args.out, model, cfg, report)
        return 0
    model, cfg, _ = icl_training.load_icl_checkpoint(args.model)
    if args.command == "induction":
        result = induction.head_scores(model, torch.arange(4, cfg.task_family().vocab_size), seed=args.seed)
        lines = [f"layer {layer} head {h}: induction {s:.3f}, previous-token {p:.3f}"
                 for layer, (row, prow) in enumerate(zip(result["induction"], result["previous_token"]))
                 for h, (s, p) in enumerate(zip(row, prow))]
        lines.append(f"best head: layer {result['best_head'][0]} head {result['best_head'][1]} "
                     f"({result['best_score']:.3f}; uniform attention {result['uniform']:.3f})")
    else:
        result = icl_training.heldout_accuracy(model, cfg, tasks_seed=2024 + args.seed)
        lines = ["strict held-out accuracy by number of shots; 'copy-or-guess' is a learner that copies the answer "
                 "when the query was among the shots and guesses among the labels otherwise (not an upper bound: "
                 "the tasks are label-balanced, so ruling out labels already shown can do better)"]
        lines += [f"{k:>2} shot{'' if int(k) == 1 else 's'}: {r['accuracy']:.3f} (copy-or-guess {r['ideal']:.3f})"
                  for k, r in result["by_shots"].items()]
    print(json.dumps(result, indent=1) if args.json else "\n".join(lines))
    return 0


COMMANDS = {"train": char_main, "train-icl": prompting_main, "induction": prompting_main, "icl": prompting_main}


def main(argv: list[str] | None = None) -> int:
    return run_subcommand(__doc__, COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
