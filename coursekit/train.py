"""A small, reusable training loop and safetensors checkpoints.

``fit`` is deliberately plain — the loop a student would write — plus what every run needs: a
progress bar that works in notebooks and terminals, the loss history, periodic evaluation and
gradient clipping. Checkpoints store the weights as safetensors (no pickle) and the model's
config as JSON in the file's metadata, so loading into a differently shaped model is a clear error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import platform
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn


@dataclass
class History:
    """What a run leaves behind: per-step training loss and the periodic evaluations."""

    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    evals: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)  # global gradient norm before clipping
    seconds: float = 0.0

    def eval_curve(self, key: str) -> tuple[list[int], list[float]]:
        """(steps, values) of one evaluated quantity, for plotting."""
        pairs = [(s, d[key]) for s, d in self.evals if key in d]
        return [s for s, _ in pairs], [v for _, v in pairs]

    def smoothed_loss(self, window: int = 20) -> tuple[list[int], list[float]]:
        """Running mean of the training loss over ``window`` steps."""
        out, total = [], 0.0
        for i, loss in enumerate(self.train_loss):
            total += loss
            if i >= window:
                total -= self.train_loss[i - window]
            out.append(total / min(i + 1, window))
        return self.steps, out


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False, mininterval=1.0)


def fit(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Iterable | Callable[[int], Any],
        loss_fn: Callable[[nn.Module, Any], torch.Tensor], *, steps: int, clip: float | None = 1.0,
        scheduler: Any = None, eval_fn: Callable[[nn.Module], dict[str, float]] | None = None,
        eval_every: int | None = None, progress: bool | None = None, desc: str = "train") -> History:
    """Train ``model`` for ``steps`` optimizer steps and return its :class:`History`.

    ``batches`` is an iterable (cycled when exhausted) or a function ``step -> batch``;
    ``loss_fn(model, batch)`` returns the scalar loss; ``eval_fn(model)`` is called (in eval mode,
    without gradients) every ``eval_every`` steps and after the last step. A non-finite loss stops
    the run with a ``FloatingPointError`` naming the step, rather than training on NaNs.
    ``progress=None`` shows a progress bar except when running headless (CI, nbval, stored notebooks).
    """
    if progress is None:
        from coursekit.widgets import headless

        progress = not headless()
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative int, got {steps!r}")
    if eval_every is not None and eval_every <= 0:
        raise ValueError(f"eval_every must be positive, got {eval_every}")
    if callable(batches):
        get_batch = batches
    else:
        cycle = itertools.cycle(batches) if not isinstance(batches, torch.Tensor) else None
        if cycle is None:
            raise TypeError("batches must be an iterable of batches or a function step -> batch")
        get_batch = lambda _step: next(cycle)  # noqa: E731

    history = History()
    start = time.perf_counter()

    def evaluate(step: int) -> None:
        if eval_fn is None:
            return
        was_training = model.training
        model.eval()
        with torch.no_grad():
            result = {k: float(v) for k, v in eval_fn(model).items()}
        model.train(was_training)
        history.evals.append((step, result))
        bar.set_postfix({k: f"{v:.3f}" for k, v in result.items()}, refresh=False)

    model.train()
    with _progress(steps, desc, progress) as bar:
        for step in range(1, steps + 1):
            loss = loss_fn(model, get_batch(step))
            if not torch.isfinite(loss):
                raise FloatingPointError(f"loss became {loss.item()} at step {step}; lower the learning rate "
                                         f"or enable gradient clipping")
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), clip if clip is not None else float("inf"))
            history.grad_norm.append(norm.item())
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            history.steps.append(step)
            history.train_loss.append(loss.item())
            bar.update(1)
            if eval_every and step % eval_every == 0 and step != steps:
                evaluate(step)
        evaluate(steps)
    model.eval()
    history.seconds = time.perf_counter() - start
    return history


def warmup_cosine(optimizer: torch.optim.Optimizer, warmup: int, total: int, min_ratio: float = 0.1):
    """Linear warm-up for ``warmup`` steps, then cosine decay to ``min_ratio`` × the base LR at ``total``."""

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


# --------------------------------------------------------------------------- checkpoints


def _config_dict(config: Any) -> dict:
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    if isinstance(config, dict):
        return dict(config)
    raise TypeError(f"config must be a dataclass instance or a dict, got {type(config).__name__}")


def save_checkpoint(path: str | Path, model: nn.Module, config: Any, extra: dict | None = None) -> Path:
    """Save ``model``'s weights as safetensors with ``config`` (and ``extra``) as JSON metadata.

    Tied weights (e.g. an output layer sharing the embedding matrix) are stored once. The metadata also
    holds ``content_sha256``, the hash of the tensor bytes, which :func:`load_checkpoint` verifies.
    """
    from safetensors.torch import save_model

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"config": json.dumps(_config_dict(config), sort_keys=True)}
    if extra:
        metadata["extra"] = json.dumps(extra, sort_keys=True)
    save_model(model, str(path), metadata=metadata)
    return stamp_content_hash(path)


def stamp_content_hash(path: str | Path, **more_metadata: str) -> Path:
    """Rewrite a safetensors file with ``content_sha256`` (the hash of its tensor bytes) in its metadata.

    The tensors are written back unchanged (same names, order and bytes), so the hash stays valid.
    """
    from safetensors.torch import load_file, save_file

    path = Path(path)
    digest, meta = checkpoint_content(path)
    save_file(load_file(str(path)), str(path), metadata={**meta, **more_metadata, "content_sha256": digest})
    if checkpoint_content(path)[0] != digest:  # pragma: no cover - safetensors changed its layout rules
        raise RuntimeError(f"rewriting {path} changed its tensor bytes")
    return path


def checkpoint_content(path: str | Path) -> tuple[str, dict]:
    """``(sha256 of the tensor bytes, metadata)`` of a safetensors file; a truncated file is a ``ValueError``."""
    path = Path(path)
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little") if len(raw) >= 8 else -1
    try:
        header = json.loads(raw[8:8 + n]) if 0 <= n <= len(raw) - 8 else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        header = None
    if not isinstance(header, dict):
        raise ValueError(f"{path} is not a safetensors file (or its header is damaged)")
    end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    if 8 + n + end != len(raw):
        raise ValueError(f"{path} is truncated or damaged: its header announces {8 + n + end:,} bytes, the file has "
                         f"{len(raw):,}")
    return hashlib.sha256(raw[8 + n:]).hexdigest(), header.get("__metadata__") or {}


def verify_checkpoint(path: str | Path) -> dict:
    """Check a checkpoint's tensor bytes against the ``content_sha256`` in its metadata; return the metadata."""
    digest, meta = checkpoint_content(path)
    stored = meta.get("content_sha256")
    if stored is not None and stored != digest:
        raise ValueError(f"{path} is corrupt: its tensors hash to {digest[:16]}…, the checkpoint recorded "
                         f"{stored[:16]}…; restore the file (git checkout) or re-run the command that made it")
    return meta


def read_checkpoint_metadata(path: str | Path) -> tuple[dict, dict]:
    """(config, extra) stored in a checkpoint, without loading the weights."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    meta = checkpoint_content(path)[1]
    if "config" not in meta:
        raise ValueError(f"{path} has no config in its metadata; was it saved with coursekit.train.save_checkpoint?")
    return json.loads(meta["config"]), json.loads(meta.get("extra", "{}"))


def load_checkpoint(path: str | Path, model: nn.Module, expected_config: Any = None) -> dict:
    """Load weights saved by :func:`save_checkpoint` into ``model``; return the stored config.

    If ``expected_config`` is given and differs from the stored one, raise a ``ValueError`` listing
    the differing fields. Missing or unexpected weight names are a ``ValueError`` listing them.
    """
    from safetensors.torch import load_model

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    verify_checkpoint(path)
    stored, _ = read_checkpoint_metadata(path)
    if expected_config is not None:
        expected = _config_dict(expected_config)
        diff = {k: (stored.get(k, "<absent>"), expected.get(k, "<absent>"))
                for k in sorted(set(stored) | set(expected)) if stored.get(k) != expected.get(k)}
        if diff:
            lines = ", ".join(f"{k}: checkpoint {a!r} vs expected {b!r}" for k, (a, b) in diff.items())
            raise ValueError(f"{path}: config mismatch — {lines}")
    try:
        missing, unexpected = load_model(model, str(path), strict=False)
    except RuntimeError as exc:  # shape mismatch
        raise ValueError(f"{path}: weights do not fit this model: {exc}") from exc
    if missing or unexpected:
        raise ValueError(f"{path}: weight names differ from the model's. Missing in checkpoint: {sorted(missing)}; "
                         f"unexpected in checkpoint: {sorted(unexpected)}")
    return stored


def load_model_directory(directory: str | Path, build: Callable[[dict, dict], nn.Module], *,
                         reproduce: str) -> tuple[nn.Module, dict]:
    """Load a committed model directory's ``model.safetensors``: ``(model in eval mode, extra metadata)``.

    ``build(config, extra)`` makes the empty model from the checkpoint's metadata; the weights are then
    loaded with a config check. A missing checkpoint is a ``FileNotFoundError`` naming ``reproduce``,
    the command that writes it.
    """
    path = Path(directory) / "model.safetensors"
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}; make it with `{reproduce}`")
    config, extra = read_checkpoint_metadata(path)
    model = build(config, extra)
    load_checkpoint(path, model, expected_config=model.config)
    return model.eval(), extra


def count_parameters(model: nn.Module, trainable_only: bool = True) -> int:
    """Number of (trainable) parameters, counting shared tensors once."""
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) in seen or (trainable_only and not p.requires_grad):
            continue
        seen.add(id(p))
        total += p.numel()
    return total


# --------------------------------------------------------------------------- long runs in a work folder


def hardware() -> dict:
    """The machine a run trained on (recorded in reports): architecture, CPUs, torch threads and version."""
    return {"machine": platform.machine(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "torch": str(torch.__version__),
            "device": "cpu"}


def append_jsonl(path: str | Path, record: dict) -> None:
    """Append one JSON record as a line to a run's log (``tail -f`` shows the progress)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def save_state_atomic(path: str | Path, state: dict) -> None:
    """``torch.save`` to a temporary file, then rename: an interruption never leaves a half-written checkpoint."""
    path = Path(path)
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def train_in_folder(work: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler, *,
                    recipe: dict, step_loss: Callable[[list[int], int], tuple[torch.Tensor, dict]],
                    lengths: tuple[list[int], list[int]], max_tokens: int, max_updates: int, seed: int,
                    clip: float, eval_every: int, evaluate: Callable[[int, float], dict] | None = None,
                    evaluate_at_start: bool = False, resume: bool = False, checkpoint_minutes: float = 3.0,
                    quiet: bool = False) -> dict:
    """The resumable loop of the committed models: length-grouped batches, a checkpoint every few minutes.

    ``work`` holds ``checkpoint.pt`` and ``train.log`` (one JSON line per 50 updates and per evaluation).
    An epoch's batches are :func:`coursekit.translation.benchmark.token_batches` of ``lengths`` (source and
    target lengths) seeded by ``seed`` and the epoch; ``step_loss(index, update)`` builds the batch of those
    items and returns ``(loss, counts)`` — ``counts`` (e.g. ``{"tokens": …}``) are summed in the log. Every
    ``eval_every`` updates ``evaluate(update, seconds)`` gives a point of the curve. ``resume=True`` continues
    ``work/checkpoint.pt`` exactly (weights, optimiser, schedule, position in the epoch, torch's RNG for
    dropout); the checkpoint's ``recipe`` must equal ``recipe`` up to ``max_updates``. Returns the state:
    ``update``, ``epoch``, ``position``, ``seconds``, ``curve``, ``train``, ``hardware``.
    """
    from coursekit.translation.benchmark import token_batches

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    ckpt, log_path = work / "checkpoint.pt", work / "train.log"
    st = {"update": 0, "epoch": 0, "position": 0, "seconds": 0.0, "curve": [], "train": []}
    if resume and ckpt.exists():
        saved = torch.load(ckpt, weights_only=True)
        if saved["recipe"] != recipe | {"max_updates": saved["recipe"]["max_updates"]}:
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
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            scheduler.step()
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
