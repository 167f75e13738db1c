"""Bad calls to coursekit.bench (the speed and cost measurements): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
"""

from __future__ import annotations

import torch
from helpers.bad_inputs import Bad, bad_call_test

from coursekit.bench import cost
from coursekit.bench import speed as bench
from coursekit.bench.grading import grading_bench

BENCH = [
    Bad("an odd width for the heads", bench.Sizes, lambda: bench.Sizes(2, 8, 30, 4, 1, 10, 8, 1), ValueError,
        r"d_model=30 must be divisible by n_heads=4"),
    Bad("zero steps", bench.Sizes, lambda: bench.Sizes(2, 8, 32, 4, 1, 10, 8, 0), ValueError, r"steps"),
    Bad("a float batch", bench.Sizes, lambda: bench.Sizes(2.5, 8, 32, 4, 1, 10, 8, 1), TypeError, r"batch"),
    Bad("a zero matrix size", bench.matmul_gflops, lambda: bench.matmul_gflops(0), ValueError, r"n must be"),
    Bad("zero repeats", bench.matmul_gflops, lambda: bench.matmul_gflops(64, repeat=0), ValueError, r"repeat"),
    Bad("zero steps", bench.time_pair, lambda: bench.time_pair(print, print, steps=0, warmup=0), ValueError,
        r"steps"),
    Bad("a result instead of a function", bench.time_pair, lambda: bench.time_pair(print, 3, steps=1, warmup=0),
        TypeError, r"ours and reference must be functions of no arguments, got int"),
    Bad("a dict for the sizes", bench.run, lambda: bench.run({"batch": 2}), TypeError,
        r"sizes must be a coursekit.bench.speed.Sizes, got dict"),
    Bad("a string for compile", bench.run, lambda: bench.run(bench.QUICK, compile="yes"), TypeError,
        r"compile must be a bool, got str"),
    Bad("a dict for the sizes", bench.bench_compile, lambda: bench.bench_compile({"batch": 2}), TypeError,
        r"sizes must be a coursekit.bench.speed.Sizes, got dict"),
    Bad("a string for the log", bench.run, lambda: bench.run(bench.QUICK, log="print"), TypeError,
        r"log must be a function"),
]


COST = [
    Bad("a tensor instead of a function", cost.saved_bytes, lambda: cost.saved_bytes(torch.ones(2)), TypeError,
        r"fn must be a function of no arguments, got Tensor"),
    Bad("one length as an int", cost.attention_cost, lambda: cost.attention_cost(64), TypeError,
        r"lengths must be a non-empty sequence of ints, got int"),
    Bad("a zero length", cost.attention_cost, lambda: cost.attention_cost((64, 0)), ValueError, r"each length"),
    Bad("a float length", cost.transformer_cost, lambda: cost.transformer_cost((64.5,)), TypeError,
        r"each length"),
    Bad("one tensor to exclude, not a tuple", cost.PeakMemory, lambda: cost.PeakMemory(exclude=torch.ones(2)),
        TypeError, r"exclude must be a tuple or list of tensors .* got Tensor"),
    Bad("a list of arrays to exclude", cost.PeakMemory, lambda: cost.PeakMemory(exclude=[[1.0, 2.0]]),
        TypeError, r"exclude must be a tuple or list of tensors"),
    Bad("zero heads", cost.attention_cost, lambda: cost.attention_cost((8,), n_heads=0), ValueError, r"n_heads"),
    Bad("zero batch", cost.transformer_cost, lambda: cost.transformer_cost((8,), batch=0), ValueError, r"batch"),
    Bad("one measurement", cost.quadratic_onset,
        lambda: cost.quadratic_onset([{"model": "m", "impl": "i", "T": 8, "seconds": 1.0}]), ValueError,
        r"at least two measurements"),
    Bad("two implementations mixed", cost.quadratic_onset,
        lambda: cost.quadratic_onset([{"model": "m", "impl": i, "T": 8, "seconds": 1.0} for i in "ab"]),
        ValueError, r"one model and implementation"),
    Bad("a zero factor", cost.quadratic_onset,
        lambda: cost.quadratic_onset([{"model": "m", "impl": "i", "T": T, "seconds": 1.0} for T in (8, 16)], 0.0),
        ValueError, r"factor"),
    Bad("no rows to plot", cost.plot_cost, lambda: cost.plot_cost([]), ValueError, r"non-empty list"),
    Bad("a float thread count", cost.plot_cost,
        lambda: cost.plot_cost([{"model": "m", "impl": "ours", "T": 8, "seconds": 1.0, "peak_MiB": 1.0}], threads=1.0),
        TypeError, r"threads must be an int, got float 1.0"),
]


GRADING = [
    Bad("zero submissions", grading_bench, lambda: grading_bench(0), ValueError, r"n must be positive, got 0"),
    Bad("a float for the jobs", grading_bench, lambda: grading_bench(4, jobs=1.5), TypeError,
        r"jobs must be an int, got float"),
]

EXEMPT = {"coursekit.bench.grading.homework": "writes a notebook from two function bodies; any str is Python or a "
                                              "submission that does not run, which is what the benchmark wants"}

ROWS = BENCH + COST + GRADING

test_bad_call = bad_call_test(ROWS)
