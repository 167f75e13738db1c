"""Command line of the course's translation models.

    python -m coursekit.translation evaluate MODEL [--json] [--beam K] [--limit N] [--register formal|informal]
    python -m coursekit.translation translate MODEL [--beam K] [--raw] [--register formal|informal] < en.txt > fr.txt
    python -m coursekit.translation train MODEL --work runs/MODEL --out data/translation/MODEL [--resume]
    python -m coursekit.translation posttrain RECIPE --work runs/posttrain/RECIPE --out data/translation/register
    python -m coursekit.translation tokenizer [--out DIR]

MODEL is one of ``seq2seq``, ``attention``, ``transformer`` (the committed models in data/translation/).
``--register`` (Transformer only) loads the committed register adapter (``data/translation/register``, notebook 14)
and asks for formal (*vous*) or informal (*tu*) French; ``evaluate --register`` adds the *vous* rate on the test
sentences that say *you*. RECIPE is one of :data:`coursekit.translation.posttrain.RECIPES`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from coursekit.data import model_dir
from coursekit.translation import throughput
from coursekit.translation.benchmark import (
    BENCHMARK,
    TOKENIZER_FILE,
    benchmark_figures,
    load_benchmark,
    load_tokenizer,
    train_tokenizer,
)
from coursekit.translation.core import TranslationData, readable_french, split_tokens
from coursekit.translation.posttrain import RECIPES as POST_RECIPES
from coursekit.translation.posttrain import (
    export_run,
    load_register_model,
    register_figures,
    tagged_test,
    train_run,
    you_test_sources,
)
from coursekit.translation.recipes import (
    MAX_SOURCE_TOKENS,
    MODELS,
    evaluate,
    export,
    load_model,
    train,
    translate_sentences,
)
from coursekit.translation.register import REGISTERS
from coursekit.viz.wording import counted


def _load(args, data: TranslationData):
    """The committed model, or with ``--register`` the Transformer with the register adapter."""
    if args.register is None:
        return load_model(args.model, args.dir, data=data)
    if args.model != "transformer":
        raise ValueError(f"--register needs the transformer model (its adapter is a LoRA of it), got {args.model}")
    model, report = load_register_model(data)
    return model, {"test": {"bleu": report["test"][args.register]["bleu"]}}


def _evaluate_register(args, data: TranslationData, model) -> dict:
    """``evaluate --register``: BLEU of the whole test split asked in that register, and its *vous* rate."""
    result = evaluate(model, tagged_test(data, args.register), "test", beam_size=args.beam, limit=args.limit)
    figures = register_figures(model, data.src_vocab, you_test_sources(data), register=args.register)
    return {"bleu": round(result.bleu, 2), "chrf": round(result.chrf, 2), "exact": round(result.exact, 4),
            "n_test": len(result.references), "register": args.register,
            "vous_rate": round(figures["vous_rate"], 4), "n_you": figures["vous"] + figures["tu"] + figures["both"]
            + figures["neither"], "vous": figures["vous"], "tu": figures["tu"], "both": figures["both"],
            "neither": figures["neither"], "bleu_by_length": []}


def _evaluate(args) -> int:
    import time

    data = load_benchmark(n_valid=0, n_valid_long=0)
    model, report = _load(args, data)
    start = time.monotonic()
    if args.register is not None:
        figures = _evaluate_register(args, data, model)
    elif args.limit is None:
        figures = benchmark_figures(evaluate(model, data, "test", beam_size=args.beam), data)
    else:                     # the first N test sentences only: no bands, buckets of what there is
        result = evaluate(model, data, "test", beam_size=args.beam, limit=args.limit)
        figures = {"bleu": round(result.bleu, 2), "chrf": round(result.chrf, 2), "exact": round(result.exact, 4),
                   "n_test": len(result.references),
                   "bleu_by_length": [{**row, "bleu": round(row["bleu"], 2)} for row in result.by_length]}
    out = {"model": args.model, **figures, "beam": args.beam, "reported_bleu": report["test"]["bleu"],
           "seconds": round(time.monotonic() - start, 1)}
    if args.json:
        print(json.dumps(out))
        return 0
    if args.register is not None:
        print(f"{args.model} asked {args.register}: vous in {out['vous']} and tu in {out['tu']} of the "
              f"{out['n_you']} test sentences that say 'you' (vous rate {out['vous_rate']:.1%}; both {out['both']}, "
              f"neither {out['neither']})")
    print(f"{args.model}: BLEU {out['bleu']:.2f}  chrF {out['chrf']:.2f}  exact {out['exact']:.1%}  "
          f"on {out['n_test']} test sentences (report: {out['reported_bleu']:.2f})")
    for row in out["bleu_by_length"]:
        print(f"  source length {row['bucket']:>5}: BLEU {row['bleu']:6.2f}  ({row['n']} sentences)")
    if "bleu_long" in out:
        print(f"  sources of 11-25 words: BLEU {out['bleu_long']:.2f} ({out['n_long']} sentences); the "
              f"{out['short']['n']} short pairs (both sides <= 10 words, the earlier test set): BLEU "
              f"{out['short']['bleu']:.2f}")
    return 0


def _too_long(data: TranslationData, line: str) -> str | None:
    """Why ``line`` cannot be translated (too many subword tokens for the models' context), or None."""
    n = len(data.src_vocab.encode(split_tokens(line)))
    if n + 1 > MAX_SOURCE_TOKENS:                                   # + <eos>
        return (f"{n} subword tokens ({len(split_tokens(line))} words), more than the {MAX_SOURCE_TOKENS - 1} the "
                f"models take: split it into shorter sentences")
    return None


def _translate(args) -> int:
    """One French line per English line, each line on its own: a line the models cannot take gets a message on
    stderr and an empty output line (the others are still translated) and the exit status is 1 at the end.
    Typed at a terminal, each line is translated as soon as it is entered."""
    tok = load_tokenizer()
    data = TranslationData([], [], tok, tok, BENCHMARK["max_len"], {"benchmark": {"tokenizer_sha256": tok.sha256()}})
    model, _ = _load(args, data)
    interactive = sys.stdin.isatty()
    if interactive:
        print(f"Type English sentences, one per line (Ctrl-D to end). The {args.model} model was trained on "
              f"sentences of at most {BENCHMARK['max_len']} words; longer ones come out worse.", file=sys.stderr)
    refused, pending = 0, []

    def flush() -> None:
        outputs = translate_sentences(model, data, [line for _, line in pending], beam_size=args.beam)
        for french in outputs:
            print(french if args.raw else readable_french(french), flush=True)
        pending.clear()

    for number, line in enumerate(sys.stdin, start=1):
        line = line.rstrip("\n")
        why = _too_long(data, line)
        if why is not None:
            flush()
            print(f"line {number}: not translated: {why}", file=sys.stderr)
            print("", flush=True)                       # one output line per input line, so outputs stay aligned
            refused += 1
            continue
        pending.append((number, line if args.register is None else f"{args.register}: {line}"))
        if interactive or len(pending) == 64:
            flush()
    flush()
    if refused:
        print(f"{counted(refused, 'line')} not translated (see above)", file=sys.stderr)
    return 1 if refused else 0


def _train(args) -> int:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    data = load_benchmark()
    model, state = train(args.model, args.work, resume=args.resume, max_updates=args.max_updates, data=data,
                         init_from=args.init_from)
    if args.out:
        figures = export(args.model, model, state, args.out, data)
        print(json.dumps({k: figures[k] for k in ("model", "updates", "train_seconds", "test")}))
    return 0


def _posttrain(args) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    data = load_benchmark()
    model, base, state = train_run(args.recipe, args.work, data=data, resume=args.resume, quiet=False)
    if args.out:
        report = export_run(args.recipe, model, base, state, args.out, data=data)
        print(json.dumps({k: report[k] for k in ("name", "updates", "train_seconds", "trainable_parameters")}
                         | {"test": {k: v for k, v in report["test"].items() if k != "examples"}}))
    return 0


def _tokenizer(args) -> int:
    out = Path(args.out) if args.out else model_dir("translation")
    path = train_tokenizer().save(out / TOKENIZER_FILE)
    print(f"wrote {path} (the committed models need the committed file: retraining reorders tied ids)")
    return 0


def _throughput(args) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    result = throughput.compare(updates=args.updates)
    print(json.dumps(result) if args.json else
          f"ours {result['ours_per_s']:.0f} tok/s, nn.Transformer {result['reference_per_s']:.0f} tok/s, "
          f"ratio {result['ratio']:.2f} ({result['torch_threads']} threads, load {result['load_average']:.1f})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m coursekit.translation",
                                     description="The course's EN→FR translation models.")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="BLEU/chrF of a committed model on the test split")
    ev.add_argument("model", choices=MODELS)
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument("--beam", type=int, default=1, help="beam size (default 1: greedy)")
    ev.add_argument("--limit", type=int, default=None, help="only the first N test sentences")
    ev.add_argument("--dir", default=None, help="model folder (default data/translation/MODEL)")
    ev.add_argument("--register", choices=list(REGISTERS), default=None,
                    help="ask the Transformer's register adapter for formal (vous) or informal (tu) French")
    ev.set_defaults(run=_evaluate)
    tr = sub.add_parser("translate", help="translate English lines from standard input",
                        description=f"Translate English lines from standard input, one French line each. The models "
                                    f"were trained on sentences of at most {BENCHMARK['max_len']} words (longer ones "
                                    f"come out worse); a line of more than {MAX_SOURCE_TOKENS - 1} subword tokens "
                                    f"(about 55 words) is not translated: a message on stderr, an empty output line, "
                                    f"and exit status 1 at the end.")
    tr.add_argument("model", choices=MODELS)
    tr.add_argument("--raw", action="store_true", help="print the normalised form BLEU scores (lower case, "
                    "a space before every punctuation mark) instead of readable French")
    tr.add_argument("--beam", type=int, default=1, help="beam size (default 1: greedy)")
    tr.add_argument("--dir", default=None, help="model folder (default data/translation/MODEL)")
    tr.add_argument("--register", choices=list(REGISTERS), default=None,
                    help="formal (vous) or informal (tu) French, through the committed register adapter")
    tr.set_defaults(run=_translate)
    tn = sub.add_parser("train", help="train a recipe (checkpoints in --work; --resume continues)")
    tn.add_argument("model", choices=MODELS)
    tn.add_argument("--work", required=True, help="folder for checkpoint.pt and train.log")
    tn.add_argument("--out", default=None, help="write the committed model and report here at the end")
    tn.add_argument("--resume", action="store_true", help="continue from --work/checkpoint.pt")
    tn.add_argument("--max-updates", type=int, default=None, help="override the recipe's number of updates")
    tn.add_argument("--threads", type=int, default=None, help="torch threads")
    tn.add_argument("--init-from", default=None, metavar="DIR",
                    help="continue the exported model in DIR (e.g. its cool-down) instead of starting from scratch")
    tn.set_defaults(run=_train)
    pt = sub.add_parser("posttrain", help="a post-training run of notebook 14 from the committed Transformer")
    pt.add_argument("recipe", choices=list(POST_RECIPES))
    pt.add_argument("--work", required=True, help="folder for checkpoint.pt and train.log")
    pt.add_argument("--out", default=None, help="write RECIPE.json (and a tagged run's adapter) here at the end")
    pt.add_argument("--resume", action="store_true", help="continue from --work/checkpoint.pt")
    pt.add_argument("--threads", type=int, default=None, help="torch threads")
    pt.set_defaults(run=_posttrain)
    tk = sub.add_parser("tokenizer", help="train the benchmark BPE on the training pairs")
    tk.add_argument("--out", default=None, help="folder (default data/translation)")
    tk.set_defaults(run=_tokenizer)
    th = sub.add_parser("throughput", help="training tokens per second: our Transformer vs nn.Transformer")
    th.add_argument("--updates", type=int, default=20)
    th.add_argument("--threads", type=int, default=None)
    th.add_argument("--json", action="store_true")
    th.set_defaults(run=_throughput)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "beam", 1) < 1:
        print("error: --beam must be ≥ 1", file=sys.stderr)
        return 2
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
