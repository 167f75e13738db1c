"""Exercise checks for notebook 08 (the Transformer).

What the student writes:

* ``positional_encoding(T, d)`` — the ``(T, d)`` sinusoidal table of Vaswani et al. (2017) §3.5:
  PE[pos, 2i] = sin(pos / 10000^{2i/d}), PE[pos, 2i+1] = cos(pos / 10000^{2i/d}).
* ``sublayer(x, f, norm, norm_first)`` — one residual sublayer: post-LN ``norm(x + f(x))`` (the
  paper) or pre-LN ``x + f(norm(x))``.
* ``noam_lr(step, d_model, warmup)`` — the learning-rate schedule of §5.3:
  lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), for steps 1, 2, …; a number (a Python
  float; a one-element tensor is accepted).

The references are computed on the check's own copies of the inputs; every mismatch is compared with the
typical mistakes so the message can name the one made. Sizes vary between cases (T = 1 and d = 2 too,
d_model not a power of two, warmup = 1, the steps either side of the end of the warm-up).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.exercises.core import (
    CheckFailed,
    active_variant,
    case_generator,
    describe,
    exercise_check,
    expect_close,
    require_function,
    run_student,
)
from coursekit.transformer.layers import sinusoidal_positions

__all__ = ["check_noam_schedule", "check_positional_encoding", "check_residual_sublayer"]


# ----------------------------------------------------------------------------------------------
# sinusoidal positional encoding
# ----------------------------------------------------------------------------------------------

def _pe_variant(T: int, d: int, *, exponent: str = "2i", swap: bool = False, halves: bool = False,
                first_pos: int = 0, multiply: bool = False, base: float = 10000.0) -> torch.Tensor:
    pos = torch.arange(first_pos, first_pos + T, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d, 2, dtype=torch.float64)
    if exponent == "i":            # 10000^(i/d) with i = the pair index
        rate = base ** (two_i / 2 / d)
    elif exponent == "j":          # 10000^(j/d) with j = the column index of each entry
        rate = None
    elif exponent == "floor":      # 10000^(2i // d): an integer division
        rate = base ** torch.div(two_i, d, rounding_mode="floor")
    else:
        rate = base ** (two_i / d)
    pe = torch.empty(T, d, dtype=torch.float64)
    if rate is None:
        cols = torch.arange(d, dtype=torch.float64)
        angle = pos / base ** (cols / d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angle[:, 0::2]), torch.cos(angle[:, 1::2])
        return pe.float()
    angle = pos * rate if multiply else pos / rate
    first, second = (torch.cos, torch.sin) if swap else (torch.sin, torch.cos)
    if halves:
        pe = torch.cat([first(angle), second(angle)], dim=1)
    else:
        pe[:, 0::2], pe[:, 1::2] = first(angle), second(angle)
    return pe.float()


PE_SIZES = [(6, 4), (20, 16), (50, 64), (1, 10), (9, 6), (3, 2)]


def _hidden_pe_sizes() -> list[tuple[int, int]]:
    """Two more (T, d), d even, under the grader's hidden variants (none for the visible cases)."""
    if not active_variant():
        return []
    g = case_generator(7)
    return [(int(torch.randint(2, 80, (1,), generator=g)), 2 * int(torch.randint(1, 48, (1,), generator=g)))
            for _ in range(2)]


@exercise_check("sinusoidal positional encoding", reimplements=(
    "coursekit.transformer.layers.sinusoidal_positions", "coursekit.transformer.layers.SinusoidalPositions"))
def check_positional_encoding(positional_encoding: Callable[[int, int], torch.Tensor]) -> None:
    """``positional_encoding(T, d) -> (T, d)`` against :func:`coursekit.transformer.layers.sinusoidal_positions`."""
    require_function(positional_encoding, "positional_encoding")
    for T, d in PE_SIZES + _hidden_pe_sizes():
        case = f"T={T}, d={d}"
        want = sinusoidal_positions(T, d).float()
        got = run_student(positional_encoding, case, T, d)
        if not isinstance(got, torch.Tensor) or not got.is_floating_point() or tuple(got.shape) != (T, d):
            hint = ""
            if isinstance(got, torch.Tensor) and got.numel() == T * d and tuple(got.shape) != (T, d):
                hint = " (a leading batch dim? return the plain (T, d) table)"
            elif isinstance(got, torch.Tensor) and tuple(got.shape) == (T, d):
                hint = " (positions are integers, the table is not: compute in float)"
            raise CheckFailed(f"on {case}, expected the encoding, a float tensor of shape {(T, d)}, "
                              f"got {describe(got)}{hint}")
        expect_close(got.float(), want, case=case, atol=1e-5, what="the encoding", mistakes={
            "sin and cos are swapped: even columns 2i hold sin, odd columns 2i+1 hold cos":
                _pe_variant(T, d, swap=True),
            "sin and cos are concatenated as two halves; they must be interleaved (sin in 0::2, cos in 1::2)":
                _pe_variant(T, d, halves=True),
            "the exponent uses i (the pair index) over d; it is 2i/d, i.e. the even column index over d":
                _pe_variant(T, d, exponent="i"),
            "each column uses its own index in the exponent; a sin/cos pair (2i, 2i+1) shares the frequency "
            "1/10000^(2i/d)": _pe_variant(T, d, exponent="j"),
            "the exponent 2i/d was computed with integer division (//), which makes it 0: use / (true division)":
                _pe_variant(T, d, exponent="floor"),
            "the positions start at 1; they start at 0 (PE[0] = [0, 1, 0, 1, …])": _pe_variant(T, d, first_pos=1),
            "the position was multiplied by 10000^(2i/d); it is divided: pos / 10000^(2i/d)":
                _pe_variant(T, d, multiply=True),
            "the base is 1000; the paper's is 10000": _pe_variant(T, d, base=1000.0),
        })


# ----------------------------------------------------------------------------------------------
# residual sublayer: post-LN vs pre-LN
# ----------------------------------------------------------------------------------------------

def _sublayer_cases():
    g = case_generator(0)
    for shape, scales in [((2, 5, 8), None), ((1, 1, 6), None), ((3, 4, 12), (0.01, 1.0, 100.0))]:
        d = shape[-1]
        x = torch.randn(*shape, generator=g)
        if scales is not None:                                  # rows on very different scales
            x = x * torch.tensor(scales)[:, None, None]
        f = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d)) if d == 6 else nn.Linear(d, d)
        norm = nn.LayerNorm(d, eps=1e-3 if d == 12 else 1e-5)
        with torch.no_grad():
            for p in (*f.parameters(), *norm.parameters()):
                p.copy_(torch.randn(p.shape, generator=g))
        what = f"x of shape {shape}" + (" with rows on very different scales (x0.01, x1, x100)" if scales else "")
        what += ", f = Linear-ReLU-Linear" if d == 6 else ", f = Linear"
        yield what, x, f, norm


def _sublayer_mistakes(x, f, norm, norm_first: bool, other: torch.Tensor) -> dict[str, Any]:
    def fresh(t):   # a LayerNorm without the given weight, bias and eps
        return F.layer_norm(t, t.shape[-1:])

    return {
        "the two orders are swapped (or norm_first is ignored): post-LN (the paper) is norm(x + f(x)); "
        "pre-LN is x + f(norm(x))": other,
        "the residual connection is missing (add x back)": norm(f(x)) if not norm_first else f(norm(x)),
        "the residual adds the normalised input norm(x); pre-LN adds the raw x: x + f(norm(x))":
            norm(x) + f(norm(x)),
        "the LayerNorm is missing": x + f(x),
        "the LayerNorm was applied to f(x) only, x + norm(f(x)); post-LN normalises the sum: norm(x + f(x))":
            x + norm(f(x)),
        "the LayerNorm was applied to x only, norm(x) + f(x): post-LN is norm(x + f(x)), pre-LN x + f(norm(x))":
            norm(x) + f(x),
        "the pre-LN output was normalised again, norm(x + f(norm(x))): pre-LN is x + f(norm(x))":
            norm(x + f(norm(x))),
        "a new LayerNorm (or F.layer_norm without its weight, bias and eps) was used: use the norm passed in":
            fresh(x + f(x)) if not norm_first else x + f(fresh(x)),
    }


@exercise_check("residual sublayer (post-LN and pre-LN)")
def check_residual_sublayer(sublayer: Callable) -> None:
    """``sublayer(x, f, norm, norm_first)``: post-LN ``norm(x + f(x))``, pre-LN ``x + f(norm(x))``."""
    require_function(sublayer, "sublayer")
    for what, x, f, norm in _sublayer_cases():
        with torch.no_grad():
            x0 = x.clone()
            post, pre = norm(x0 + f(x0)), x0 + f(norm(x0))
            for norm_first, want in ((False, post), (True, pre)):
                case = f"{what}, norm_first={norm_first}"
                got = run_student(sublayer, case, x.clone(), f, norm, norm_first)
                if not isinstance(got, torch.Tensor) or not got.is_floating_point() or got.shape != x.shape:
                    raise CheckFailed(f"on {case}, expected a float tensor of the shape of x, {tuple(x.shape)}, "
                                      f"got {describe(got)}")
                other = pre if not norm_first else post
                expect_close(got, want, case=case, atol=1e-4,
                             mistakes=_sublayer_mistakes(x0, f, norm, norm_first, other))


# ----------------------------------------------------------------------------------------------
# the warm-up schedule of §5.3
# ----------------------------------------------------------------------------------------------

def _noam(step: float, d: float, warmup: float, *, d_pow: float = -0.5, w_pow: float = -1.5,
          s_pow: float = -0.5) -> float | None:
    if step <= 0:
        return None
    return d ** d_pow * min(step ** s_pow, step * warmup ** w_pow)


NOAM_CASES = [(512, 4000, (1, 2000, 3999, 4000, 4001, 12000)), (64, 100, (1, 50, 99, 100, 101, 300)),
              (96, 1, (1, 2, 10)), (1000, 7, (3, 7, 8, 50))]


def _as_number(got: Any, case: str) -> float:
    """The learning rate as a float: a number, or a one-element tensor / array; else a specific message."""
    if isinstance(got, bool) or not (isinstance(got, (numbers.Real, torch.Tensor)) or hasattr(got, "item")):
        raise CheckFailed(f"on {case}, expected the learning rate as a number (a float), got {describe(got)}")
    if isinstance(got, numbers.Real):
        return float(got)
    size = got.numel() if isinstance(got, torch.Tensor) else getattr(got, "size", None)
    if size != 1:
        raise CheckFailed(f"on {case}, expected the learning rate as a number (a float), got {describe(got)}: "
                          "one step has one learning rate")
    if isinstance(got, torch.Tensor) and (got.is_complex() or got.dtype == torch.bool):
        raise CheckFailed(f"on {case}, expected the learning rate as a number (a float), got {describe(got)}")
    value = got.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise CheckFailed(f"on {case}, expected the learning rate as a number (a float), got {describe(got)}")
    return float(value)


def _noam_mistakes(step: int, d: int, warmup: int) -> dict[str, float | None]:
    return {
        "the factor d_model^-0.5 is missing": _noam(step, d, warmup, d_pow=0.0),
        "warm-up uses warmup^-1 instead of warmup^-1.5 (the two branches must meet at step = warmup)":
            _noam(step, d, warmup, w_pow=-1.0),
        "warm-up uses warmup^-0.5 instead of warmup^-1.5 (the two branches must meet at step = warmup)":
            _noam(step, d, warmup, w_pow=-0.5),
        "max instead of min: the rate must rise linearly during warm-up, then decay as step^-0.5":
            d ** -0.5 * max(step ** -0.5, step * warmup ** -1.5),
        "d_model^-1 instead of d_model^-0.5": _noam(step, d, warmup, d_pow=-1.0),
        "d_model^0.5 instead of d_model^-0.5 (the exponent's sign)": _noam(step, d, warmup, d_pow=0.5),
        "step^0.5 instead of step^-0.5 (the exponent's sign)": _noam(step, d, warmup, s_pow=0.5),
        "the step is shifted by one (step + 1): the schedule's steps start at 1, use step as given":
            _noam(step + 1, d, warmup),
        "the step is shifted by one (step - 1): the schedule's steps start at 1, use step as given":
            _noam(step - 1, d, warmup),
        "the warm-up branch is missing: the rate must rise linearly for the first `warmup` steps":
            d ** -0.5 * step ** -0.5,
        "the decay branch is missing: after `warmup` steps the rate decays as step^-0.5":
            d ** -0.5 * step * warmup ** -1.5,
    }


def _hidden_noam_cases() -> list:
    """One more (d_model, warmup, steps) under the grader's hidden variants: steps around its own warm-up."""
    if not active_variant():
        return []
    g = case_generator(11)
    d, warmup = 8 * int(torch.randint(4, 128, (1,), generator=g)), int(torch.randint(5, 3000, (1,), generator=g))
    return [(d, warmup, (1, warmup // 2 + 1, warmup - 1, warmup, warmup + 1, 3 * warmup))]


def _matches(got: list[float], wrong: list[float | None]) -> bool:
    """A mistake's schedule equals the student's at every step where the mistake has a value."""
    pairs = [(g, w) for g, w in zip(got, wrong) if w is not None]
    return bool(pairs) and all(abs(g - w) <= 1e-12 + 1e-6 * abs(w) for g, w in pairs)


@exercise_check("warm-up learning-rate schedule", reimplements=("coursekit.training.loop.inverse_sqrt",))
def check_noam_schedule(noam_lr: Callable[[int, int, int], float]) -> None:
    """``noam_lr(step, d_model, warmup)`` = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    require_function(noam_lr, "noam_lr")
    for d, warmup, steps in NOAM_CASES + _hidden_noam_cases():
        cases = [f"step={step}, d_model={d}, warmup={warmup}" for step in steps]
        got = [_as_number(run_student(noam_lr, case, step, d, warmup), case) for step, case in zip(steps, cases)]
        # a mistake is named only if it explains the whole schedule (several coincide at a single step)
        wrong = [_noam_mistakes(step, d, warmup) for step in steps]
        named = [hint for hint in wrong[0] if _matches(got, [w[hint] for w in wrong])]
        for step, case, value, mistakes in zip(steps, cases, got, wrong):
            hints = {"; or ".join(named): mistakes[named[0]]} if named else {}
            expect_close(value, _noam(step, d, warmup), case=case, atol=1e-12, rtol=1e-6, what="the learning rate",
                         mistakes=hints)
