"""``python -m coursekit.bench``: how fast the course's models train and what attention costs, on this machine.

* ``python -m coursekit.bench [--quick] [--json] [--out FILE] [--compile] [--threads N]`` — one training update
  of each from-scratch model next to the torch module it mirrors (:mod:`coursekit.bench.speed`);
* ``python -m coursekit.bench cost [--quick] [--out FILE] [--plot PNG]`` — time and memory of attention as the
  sequence grows (:mod:`coursekit.bench.cost`; notebook 07, ``docs/attention_cost.png``);
* ``python -m coursekit.bench grading [--n 30] [--jobs 2]`` — how fast a class is graded
  (:mod:`coursekit.bench.grading`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

from coursekit.bench import cost, speed
from coursekit.bench.cost import BATCHES, LENGTHS, attention_cost, plot_cost, quadratic_onset, transformer_cost
from coursekit.bench.grading import grading_bench
from coursekit.bench.speed import FULL, QUICK, run
from coursekit.validation import check_positive_int


def speed_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bench", description=speed.__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a few seconds (what CI runs)")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    parser.add_argument("--out", help="also write the whole result (rows and machine) as JSON here")
    parser.add_argument("--compile", action="store_true",
                        help="add the GPT under torch.compile vs eager (the first update compiles: tens of seconds)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        check_positive_int(args.threads, "--threads")
        torch.set_num_threads(args.threads)
    result = run(QUICK if args.quick else FULL, log=None if args.json else print, compile=args.compile)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    if args.json:
        print(json.dumps(result["rows"]))
    else:
        print(f"fp32 matmul {result['matmul_gflops']} GFLOP/s, {result['torch_threads']} torch threads, "
              f"load average {result['load_average_before']:.2f} → {result['load_average_after']:.2f}")
    return 0


def cost_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bench cost", description=cost.__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="lengths 16 and 32 only (what CI runs)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", help="write the measurements as JSON here")
    parser.add_argument("--plot", help="save the figure here (e.g. docs/attention_cost.png)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(check_positive_int(args.threads, "--threads"))
    lengths = (16, 32) if args.quick else LENGTHS
    load = os.getloadavg()[0]
    repeat = 1 if args.quick else 3
    rows = attention_cost(lengths, repeat=repeat)
    rows += transformer_cost(lengths, batch=2 if args.quick else 4, repeat=1 if args.quick else 2)
    at = lengths[-2]                                        # the batch sweep, at one length
    for batch in ((1, 2) if args.quick else BATCHES):
        rows += [{**r, "sweep": "batch"} for r in attention_cost((at,), batch=batch, repeat=repeat)]
    onset = {f"{m}: {i}": quadratic_onset([r for r in rows if (r["model"], r["impl"]) == (m, i)
                                           and r.get("sweep") != "batch"])
             for m, i in dict.fromkeys((r["model"], r["impl"]) for r in rows)}
    result = {"rows": rows, "quadratic_onset_T": onset, "torch_threads": torch.get_num_threads(),
              "load_average_before": load, "load_average_after": os.getloadavg()[0], "torch": torch.__version__}
    for r in rows:
        print(f"{r['model']:<12} {r['impl']:<15} T={r['T']:>5} B={r['batch']:>3} {r['seconds'] * 1e3:>9.1f} ms  "
              f"peak {r['peak_MiB']:>9.1f} MiB  saved {r['saved_MiB']:>9.1f} MiB")
    print("length from which each doubling of T more than triples the time:", onset)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    if args.plot:
        plot_cost(rows, args.plot, threads=torch.get_num_threads())
    return 0


def grading_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.bench grading",
                                     description="How fast a class of notebooks is graded, with 1 and N jobs.")
    parser.add_argument("--n", type=int, default=30, help="submissions in the class (default 30)")
    parser.add_argument("--jobs", type=int, default=2, help="jobs to compare with one (default 2)")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    result = grading_bench(check_positive_int(args.n, "--n"), check_positive_int(args.jobs, "--jobs"))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "cost":
        return cost_main(argv[1:])
    if argv and argv[0] == "grading":
        return grading_main(argv[1:])
    return speed_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
