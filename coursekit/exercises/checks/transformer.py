"""Exercise checks for notebook 08 (the Transformer).

What the student writes:

* ``positional_encoding(T, d)`` — the ``(T, d)`` sinusoidal table of Vaswani et al. (2017) §3.5:
  PE[pos, 2i] = sin(pos / 10000^{2i/d}), PE[pos, 2i+1] = cos(pos / 10000^{2i/d}).
* ``sublayer(x, f, norm, norm_first)`` — one residual sublayer: post-LN ``norm(x + f(x))`` (the
  paper) or pre-LN ``x + f(norm(x))``.
* ``noam_lr(step, d_model, warmup)`` — the learning-rate schedule of §5.3:
  lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), for steps 1, 2, ….
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from coursekit.exercises.core import exercise_check, expect_close, require_function, run_student
from coursekit.transformer import sinusoidal_positions

__all__ = ["check_noam_schedule", "check_positional_encoding", "check_residual_sublayer"]


# ----------------------------------------------------------------------------------------------
# sinusoidal positional encoding
# ----------------------------------------------------------------------------------------------

def _pe_variant(T: int, d: int, *, exponent: str = "2i", swap: bool = False, halves: bool = False) -> torch.Tensor:
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d, 2, dtype=torch.float64)
    if exponent == "i":            # 10000^(i/d) with i = the pair index
        rate = 10000 ** (two_i / 2 / d)
    elif exponent == "j":          # 10000^(j/d) with j = the column index of each entry
        rate = None
    else:
        rate = 10000 ** (two_i / d)
    pe = torch.empty(T, d, dtype=torch.float64)
    if rate is None:
        cols = torch.arange(d, dtype=torch.float64)
        angle = pos / 10000 ** (cols / d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angle[:, 0::2]), torch.cos(angle[:, 1::2])
        return pe.float()
    angle = pos / rate
    first, second = (torch.cos, torch.sin) if swap else (torch.sin, torch.cos)
    if halves:
        pe = torch.cat([first(angle), second(angle)], dim=1)
    else:
        pe[:, 0::2], pe[:, 1::2] = first(angle), second(angle)
    return pe.float()


@exercise_check("sinusoidal positional encoding", reimplements=(
    "coursekit.transformer.sinusoidal_positions", "coursekit.transformer.SinusoidalPositions"))
def check_positional_encoding(positional_encoding: Callable[[int, int], torch.Tensor]) -> None:
    """``positional_encoding(T, d) -> (T, d)`` against :func:`coursekit.transformer.sinusoidal_positions`."""
    require_function(positional_encoding, "positional_encoding")
    for T, d in [(6, 4), (20, 16), (50, 64)]:
        case = f"T={T}, d={d}"
        got = run_student(positional_encoding, case, T, d)
        if isinstance(got, torch.Tensor):
            got = got.float()
        expect_close(got, sinusoidal_positions(T, d).float(), case=case, atol=1e-5, what="the encoding", mistakes={
            "sin and cos are swapped: even columns 2i hold sin, odd columns 2i+1 hold cos":
                _pe_variant(T, d, swap=True),
            "sin and cos are concatenated as two halves; they must be interleaved (sin in 0::2, cos in 1::2)":
                _pe_variant(T, d, halves=True),
            "the exponent uses i (the pair index) over d; it is 2i/d, i.e. the even column index over d":
                _pe_variant(T, d, exponent="i"),
            "each column uses its own index in the exponent; a sin/cos pair (2i, 2i+1) shares the frequency "
            "1/10000^(2i/d)": _pe_variant(T, d, exponent="j"),
        })


# ----------------------------------------------------------------------------------------------
# residual sublayer: post-LN vs pre-LN
# ----------------------------------------------------------------------------------------------

@exercise_check("residual sublayer (post-LN and pre-LN)")
def check_residual_sublayer(sublayer: Callable) -> None:
    """``sublayer(x, f, norm, norm_first)``: post-LN ``norm(x + f(x))``, pre-LN ``x + f(norm(x))``."""
    require_function(sublayer, "sublayer")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 5, 8, generator=g)
    f = nn.Linear(8, 8)
    norm = nn.LayerNorm(8)
    with torch.no_grad():
        for p in (*f.parameters(), *norm.parameters()):
            p.copy_(torch.randn(p.shape, generator=g))
    with torch.no_grad():
        post, pre = norm(x + f(x)), x + f(norm(x))
        for norm_first, want in ((False, post), (True, pre)):
            case = f"x of shape (2, 5, 8) with norm_first={norm_first}"
            got = run_student(sublayer, case, x.clone(), f, norm, norm_first)
            other = pre if not norm_first else post
            expect_close(got, want, case=case, mistakes={
                "the two orders are swapped: post-LN (the paper) is norm(x + f(x)); pre-LN is x + f(norm(x))": other,
                "the residual connection is missing (add x back)": norm(f(x)) if not norm_first else f(norm(x)),
                "the residual adds the normalised input norm(x); pre-LN adds the raw x: x + f(norm(x))":
                    norm(x) + f(norm(x)),
                "the LayerNorm is missing": x + f(x),
            })


# ----------------------------------------------------------------------------------------------
# the warm-up schedule of §5.3
# ----------------------------------------------------------------------------------------------

def _noam(step: int, d: int, warmup: int, *, d_pow: float = -0.5, w_pow: float = -1.5) -> float:
    return d ** d_pow * min(step ** -0.5, step * warmup ** w_pow)


@exercise_check("warm-up learning-rate schedule", reimplements=("coursekit.translation.recipes.inverse_sqrt",))
def check_noam_schedule(noam_lr: Callable[[int, int, int], float]) -> None:
    """``noam_lr(step, d_model, warmup)`` = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    require_function(noam_lr, "noam_lr")
    for d, warmup in [(512, 4000), (64, 100)]:
        for step in (1, warmup // 2, warmup, 3 * warmup):
            case = f"step={step}, d_model={d}, warmup={warmup}"
            got = run_student(noam_lr, case, step, d, warmup)
            if isinstance(got, torch.Tensor):
                got = got.item()
            want = _noam(step, d, warmup)
            expect_close(got, want, case=case, atol=1e-12, rtol=1e-6, what="the learning rate", mistakes={
                "the factor d_model^-0.5 is missing": _noam(step, d, warmup, d_pow=0.0),
                "warm-up uses warmup^-1 instead of warmup^-1.5 (the two branches must meet at step = warmup)":
                    _noam(step, d, warmup, w_pow=-1.0),
                "max instead of min: the rate must rise linearly during warm-up, then decay as step^-0.5":
                    d ** -0.5 * max(step ** -0.5, step * warmup ** -1.5),
                "d_model^-1 instead of d_model^-0.5": _noam(step, d, warmup, d_pow=-1.0),
            })
