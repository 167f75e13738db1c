"""Store the whole ELECTRA of a run that finished before ``electra.safetensors`` existed (issue 36, 2026-11-27).

``python -m coursekit.bert pretrain`` now writes an ELECTRA run's generator and detection head beside its
discriminator and measures the report's final figures on both as loaded back. Runs made before that kept only
the discriminator in ``--out``; their ``--work`` folder still holds the whole model (``checkpoint.pt`` at the
last step). This reads it back and exports the directory as the command now does, after two checks: the
checkpoint's discriminator is the one stored in ``--out`` (to the int8 rounding), and the held-out batch built
with ``--out``'s tokenizer reproduces the run's last evaluation on the checkpoint's weights (so it is the batch
the run measured, with the vocabulary the weights were trained with).

    python docs/trials/export_electra_from_work.py --work W --out OUT --to NEW_DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from coursekit.bert.checkpoint import load_small_bert
from coursekit.bert.corpus import PretrainConfig, build_corpus, held_out_batch
from coursekit.bert.electra import Electra
from coursekit.bert.pretraining import electra_evaluation, export
from coursekit.training.resumable import load_state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="the run's work folder (checkpoint.pt)")
    parser.add_argument("--out", required=True, help="the run's --out directory (discriminator, tokenizer, report)")
    parser.add_argument("--to", required=True, help="where to write the whole-ELECTRA directory")
    args = parser.parse_args()
    discriminator, tokenizer, report = load_small_bert(args.out)
    cfg = PretrainConfig(**report["config"])
    if cfg.objective != "electra":
        raise SystemExit(f"{args.out} is not an ELECTRA run")
    saved = load_state(Path(args.work) / "checkpoint.pt", ("model", "state"))
    if saved["state"]["step"] != cfg.steps:
        raise SystemExit(f"{args.work}: the checkpoint is at step {saved['state']['step']}, not the last ({cfg.steps})")
    electra = Electra(discriminator.config, generator_layers=cfg.generator_layers)
    electra.load_state_dict(saved["model"])
    electra.eval()
    stored = discriminator.state_dict()
    worst = max((electra.discriminator.state_dict()[k] - v).abs().max().item() for k, v in stored.items())
    print(f"checkpoint vs stored discriminator: largest difference {worst:.4f} (int8 rounding)")
    assert worst < 0.05, "the checkpoint's discriminator is not the one stored in --out"
    held = held_out_batch(build_corpus(cfg, tokenizer=tokenizer), cfg)
    again = electra_evaluation(electra, held, cfg)
    last = report["history"]["evals"][-1][1]
    print(f"held-out figures on the checkpoint: {again}\n  the run's last evaluation: {last}")
    assert all(abs(again[k] - last[k]) < 1e-3 for k in last), "not the held-out batch the run measured"
    report = {**report, "electra_parts_from": f"{args.work}/checkpoint.pt at step {cfg.steps} (the run predates "
                                              f"electra.safetensors; docs/trials/export_electra_from_work.py)"}
    written = export(args.to, electra, tokenizer, report, held)
    print(f"{args.to}: final on the stored weights {written['final']}; model {written['size_bytes']:,} B, "
          f"electra parts {written['electra_size_bytes']:,} B")


if __name__ == "__main__":
    torch.set_num_threads(2)
    main()
