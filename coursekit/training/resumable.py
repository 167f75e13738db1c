"""Training loops that survive interruptions: checkpoint every few minutes, exact ``--resume``.

Long runs (the committed translation models, BART, and the small BERT with its 70+ minutes on a laptop
CPU) must outlive a closed terminal or a killed session. Both loops keep their run in a work folder ``work/``:

* ``checkpoint.pt`` — weights, optimiser, schedule, the position reached, the history and the state of
  torch's global generator (dropout), written atomically (:func:`save_state_atomic`) every
  ``checkpoint_minutes``;
* ``train.log`` — one JSON line per evaluation, per logged window and per resume (:func:`append_jsonl`;
  ``tail -f`` shows the progress).

:func:`train_in_folder` is the epoch-based loop of the translation recipes and BART: length-grouped
batches, an epoch's order fixed by the seed. :func:`train_steps_in_folder` is the step-based loop of BERT,
whose batches are fresh samples per step: it also saves every random generator that decides the batches
(Python's ``random.Random``, ``torch.Generator``). A resumed run draws the very batches, masks and dropout
an uninterrupted run would have drawn, so it ends with the same weights (tested). :func:`hardware`
describes the machine a run trained on, for the reports.
"""

from __future__ import annotations

import json
import os
import platform
import random
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from coursekit.text import token_batches
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_positive_float, check_positive_int

__all__ = ["append_jsonl", "hardware", "save_state_atomic", "train_in_folder", "train_steps_in_folder"]


# --------------------------------------------------------------------------- long runs in a work folder


def hardware() -> dict:
    """The machine a run trained on (recorded in reports): architecture, CPUs, torch threads and version."""
    return {"machine": platform.machine(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "torch": str(torch.__version__),
            "device": "cpu"}


def append_jsonl(path: str | Path, record: dict) -> None:
    """Append one JSON record as a line to a run's log (``tail -f`` shows the progress)."""
    if not isinstance(record, dict):
        raise TypeError(f"record must be a dict, got {type(record).__name__}")
    try:
        line = json.dumps(record)
    except TypeError as exc:
        raise TypeError(f"record must be JSON-serialisable: {exc}") from None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def save_state_atomic(path: str | Path, state: dict) -> None:
    """``torch.save`` to a temporary file, then rename: an interruption never leaves a half-written checkpoint."""
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict, got {type(state).__name__}")
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: the folder {path.parent} does not exist")
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_state(path: Path, keys: tuple[str, ...]) -> dict:
    """Read a resumable loop's ``checkpoint.pt`` (written by :func:`save_state_atomic`): a dict holding ``keys``."""
    try:
        saved = torch.load(path, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - a damaged file fails in unpickling, in torch or at EOF
        raise ValueError(f"{path} is truncated or not a checkpoint of this training loop ({type(exc).__name__}); "
                         f"remove it to start again") from exc
    missing = [k for k in keys if not isinstance(saved, dict) or k not in saved]
    if missing:
        raise ValueError(f"{path} is not a checkpoint of this training loop: it lacks {missing}; remove it to start "
                         f"again")
    return saved


def _update(model: nn.Module, optimizer: torch.optim.Optimizer, scheduler, loss: torch.Tensor, clip: float, *,
            at: str) -> None:
    """One optimiser update of both loops: backward, clip the gradient norm to ``clip``, step, schedule.
    A non-finite loss stops the run, naming where (``at``, e.g. ``"update 12"``)."""
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss became {loss.item()} at {at}; lower the learning rate")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    scheduler.step()


def train_in_folder(work: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler, *,
                    recipe: dict, step_loss: Callable[[list[int], int], tuple[torch.Tensor, dict]],
                    lengths: tuple[list[int], list[int]], max_tokens: int, max_updates: int, seed: int,
                    clip: float, eval_every: int, evaluate: Callable[[int, float], dict] | None = None,
                    evaluate_at_start: bool = False, resume: bool = False, checkpoint_minutes: float = 3.0,
                    quiet: bool = False) -> dict:
    """The resumable loop of the committed models: length-grouped batches, a checkpoint every few minutes.

    ``work`` holds ``checkpoint.pt`` and ``train.log`` (one JSON line per 50 updates and per evaluation).
    An epoch's batches are :func:`coursekit.text.token_batches` of ``lengths`` (source and
    target lengths) seeded by ``seed`` and the epoch; ``step_loss(index, update)`` builds the batch of those
    items and returns ``(loss, counts)`` — ``counts`` (e.g. ``{"tokens": …}``) are summed in the log. Every
    ``eval_every`` updates ``evaluate(update, seconds)`` gives a point of the curve. ``resume=True`` continues
    ``work/checkpoint.pt`` exactly (weights, optimiser, schedule, position in the epoch, torch's RNG for
    dropout); the checkpoint's ``recipe`` must equal ``recipe`` up to ``max_updates``. Returns the state:
    ``update``, ``epoch``, ``position``, ``seconds``, ``curve``, ``train``, ``hardware``.
    """
    if not isinstance(recipe, dict):
        raise TypeError(f"recipe must be a dict, got {type(recipe).__name__}")
    if not callable(step_loss):
        raise TypeError(f"step_loss must be a function (index, update) -> (loss, counts), "
                        f"got {type(step_loss).__name__}")
    check_positive_int(max_tokens, "max_tokens")
    check_positive_int(max_updates, "max_updates")
    check_positive_float(clip, "clip")
    if evaluate is not None:
        check_positive_int(eval_every, "eval_every")
    check_positive_float(checkpoint_minutes, "checkpoint_minutes")
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    ckpt, log_path = work / "checkpoint.pt", work / "train.log"
    st = {"update": 0, "epoch": 0, "position": 0, "seconds": 0.0, "curve": [], "train": []}
    if resume and ckpt.exists():
        saved = load_state(ckpt, ("model", "optimizer", "scheduler", "state", "recipe", "rng"))
        if saved["recipe"] != recipe | {"max_updates": saved["recipe"].get("max_updates")}:
            raise ValueError(f"{ckpt} was written by another recipe: {saved['recipe']} (now {recipe})")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        st = saved["state"]
        torch.set_rng_state(saved["rng"])  # dropout continues with the numbers the interrupted run would have drawn
        append_jsonl(log_path, {"event": "resume", "update": st["update"], "seconds": st["seconds"]})
    elif not resume and ckpt.exists():
        raise FileExistsError(f"{ckpt} exists: pass resume=True (--resume) to continue it, or remove it")
    st.setdefault("hardware", hardware())  # the machine and threads of the first training run
    model.train()
    t0, last_save, window = time.monotonic() - st["seconds"], time.monotonic(), []

    def save() -> None:
        st["seconds"] = time.monotonic() - t0
        save_state_atomic(ckpt, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                 "scheduler": scheduler.state_dict(), "state": st, "recipe": recipe,
                                 "rng": torch.get_rng_state()})

    def add_point(point: dict) -> None:
        st["curve"].append(point)
        append_jsonl(log_path, {"event": "eval", **point})
        if not quiet:
            print(json.dumps(point), flush=True)

    if evaluate is not None and evaluate_at_start and not st["curve"]:
        st["curve"].append(evaluate(0, 0.0))
    while st["update"] < max_updates:
        order = token_batches(*lengths, max_tokens, torch.Generator().manual_seed(seed * 1000 + st["epoch"]))
        for index in order[st["position"]:]:
            loss, counts = step_loss(index, st["update"])
            _update(model, optimizer, scheduler, loss, clip, at=f"update {st['update'] + 1}")
            st["update"] += 1
            st["position"] += 1
            window.append((loss.item(), counts))
            if st["update"] % 50 == 0:
                rec = {"update": st["update"], "epoch": st["epoch"] + st["position"] / len(order),
                       "seconds": round(time.monotonic() - t0, 1), "loss": sum(w[0] for w in window) / len(window),
                       **{k: sum(w[1][k] for w in window) for k in counts}, "lr": scheduler.get_last_lr()[0]}
                st["train"].append(rec)
                append_jsonl(log_path, rec)
                window = []
            if evaluate is not None and (st["update"] % eval_every == 0 or st["update"] == max_updates):
                add_point(evaluate(st["update"], time.monotonic() - t0))
                model.train()
            if time.monotonic() - last_save > 60 * checkpoint_minutes:
                save()
                last_save = time.monotonic()
            if st["update"] >= max_updates:
                break
        else:
            st["epoch"] += 1
            st["position"] = 0
    save()
    model.eval()
    return st


# --------------------------------------------------------------------------- step-based loop


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
        saved = load_state(ckpt, ("model", "optimizer", "scheduler", "state", "recipe", "generators", "rng"))
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
        _update(model, optimizer, scheduler, loss, clip, at=f"step {st['step'] + 1}")
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
