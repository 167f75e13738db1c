"""A step-based training loop that survives interruptions: checkpoint every few minutes, exact ``--resume``.

Long pre-training runs (the committed small BERT, 70+ minutes on a laptop CPU) must outlive a closed
terminal or a killed session. :func:`train_steps_in_folder` keeps in ``work/``:

* ``checkpoint.pt`` — weights, optimiser, schedule, the step reached, the loss history and the state of
  every random generator that decides the batches (Python's ``random.Random``, ``torch.Generator``) and
  of torch's global generator (dropout), written atomically every ``checkpoint_minutes``;
* ``train.log`` — one JSON line per evaluation and per resume (``tail -f`` shows the progress).

A resumed run draws the very batches, masks and dropout an uninterrupted run would have drawn, so it ends
with the same weights (tested). :func:`coursekit.train.train_in_folder` is the epoch-based sibling used by
the translation recipes, whose batches are length-grouped epochs rather than fresh samples per step.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from coursekit.checks import check_count as _check_count
from coursekit.checks import check_positive_float, check_positive_int
from coursekit.train import _load_state, append_jsonl, hardware, save_state_atomic

__all__ = ["train_steps_in_folder"]


def _check_generators(generators) -> None:
    if not isinstance(generators, dict):
        raise TypeError(f"generators must be a dict name -> generator, got {type(generators).__name__}")
    for name, g in generators.items():
        if not isinstance(g, (random.Random, torch.Generator)):
            raise TypeError(f"generator {name!r} must be a random.Random or torch.Generator, got {type(g).__name__}")


def _generator_states(generators: dict[str, random.Random | torch.Generator]) -> dict:
    states = {}
    for name, g in generators.items():
        if isinstance(g, torch.Generator):
            states[name] = g.get_state()
        else:
            version, internal, gauss = g.getstate()
            states[name] = {"version": version, "internal": torch.tensor(internal, dtype=torch.int64),
                            "gauss": gauss}
    return states


def _restore_generators(generators: dict[str, random.Random | torch.Generator], states: dict) -> None:
    if set(states) != set(generators):
        raise ValueError(f"the checkpoint holds generators {sorted(states)}, the run has {sorted(generators)}")
    for name, g in generators.items():
        s = states[name]
        if isinstance(g, torch.Generator):
            g.set_state(s)
        else:
            g.setstate((s["version"], tuple(s["internal"].tolist()), s["gauss"]))


def train_steps_in_folder(work: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler, *,
                          recipe: dict, step_loss: Callable[[int], tuple[torch.Tensor, dict]], steps: int,
                          generators: dict[str, random.Random | torch.Generator], clip: float = 1.0,
                          eval_every: int = 0, evaluate: Callable[[int], dict] | None = None,
                          resume: bool = False, checkpoint_minutes: float = 3.0,
                          on_eval: Callable[[int, nn.Module], None] | None = None, stop_at: int | None = None,
                          quiet: bool = True) -> dict:
    """Run ``steps`` optimiser steps of ``step_loss(step) -> (loss, parts)`` with checkpoints in ``work``.

    ``parts`` (floats, e.g. the MLM and NSP losses) are kept per step in ``state["parts"]``; every
    ``eval_every`` steps and after the last, ``evaluate(step)`` (eval mode, no gradients) gives a point of
    ``state["evals"]`` and ``on_eval(step, model)`` may save a snapshot. ``resume=True`` continues
    ``work/checkpoint.pt`` exactly; its ``recipe`` must equal ``recipe``. ``stop_at`` ends early (a
    checkpoint is written) on the same schedule, as an interruption would. Returns the state: ``step``,
    ``parts``, ``evals``, ``seconds``, ``hardware``.
    """
    if not callable(step_loss):
        raise TypeError(f"step_loss must be a function step -> (loss, parts), got {type(step_loss).__name__}")
    check_positive_int(steps, "steps")
    check_positive_float(clip, "clip")
    _check_count(eval_every, "eval_every")
    check_positive_float(checkpoint_minutes, "checkpoint_minutes")
    if stop_at is not None:
        check_positive_int(stop_at, "stop_at")
    _check_generators(generators)
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    ckpt, log_path = work / "checkpoint.pt", work / "train.log"
    st = {"step": 0, "seconds": 0.0, "parts": [], "evals": [], "hardware": hardware()}
    if resume and ckpt.exists():
        saved = _load_state(ckpt, ("model", "optimizer", "scheduler", "state", "recipe", "generators", "rng"))
        if saved["recipe"] != recipe:
            raise ValueError(f"{ckpt} was written by another recipe: {saved['recipe']} (now {recipe})")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        _restore_generators(generators, saved["generators"])
        torch.set_rng_state(saved["rng"])  # dropout continues with the numbers the interrupted run would have drawn
        st = saved["state"]
        append_jsonl(log_path, {"event": "resume", "step": st["step"], "seconds": st["seconds"]})
    elif not resume and ckpt.exists():
        raise FileExistsError(f"{ckpt} exists: pass resume=True (--resume) to continue it, or remove it")
    t0, last_save = time.monotonic() - st["seconds"], time.monotonic()

    def save() -> None:
        st["seconds"] = time.monotonic() - t0
        save_state_atomic(ckpt, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                 "scheduler": scheduler.state_dict(), "state": st, "recipe": recipe,
                                 "generators": _generator_states(generators), "rng": torch.get_rng_state()})

    end = steps if stop_at is None else min(steps, stop_at)
    model.train()
    while st["step"] < end:
        loss, parts = step_loss(st["step"])
        if not torch.isfinite(loss):
            raise FloatingPointError(f"loss became {loss.item()} at step {st['step'] + 1}; lower the learning rate")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        scheduler.step()
        st["step"] += 1
        st["parts"].append({k: round(float(v), 4) for k, v in parts.items()})
        if evaluate is not None and (st["step"] == steps or (eval_every and st["step"] % eval_every == 0)):
            model.eval()
            with torch.no_grad():
                point = {k: float(v) for k, v in evaluate(st["step"]).items()}
            if on_eval is not None:
                on_eval(st["step"], model)
            model.train()
            st["evals"].append([st["step"], point])
            append_jsonl(log_path, {"event": "eval", "step": st["step"],
                                    "seconds": round(time.monotonic() - t0, 1), **point})
            if not quiet:
                print(st["step"], point, flush=True)
        if time.monotonic() - last_save > 60 * checkpoint_minutes:
            save()
            last_save = time.monotonic()
    save()
    model.eval()
    return st
