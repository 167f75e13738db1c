"""A small, reusable training loop and safetensors checkpoints.

``fit`` is deliberately plain — the loop a student would write — plus what every run needs: a
progress bar that works in notebooks and terminals, the loss history, periodic evaluation and
gradient clipping; ``warmup_cosine`` is the linear warm-up then cosine decay schedule to pass it.
Checkpoints store the weights as safetensors (no pickle) and the model's config as JSON in the file's
metadata, so loading into a differently shaped model is a clear error. The loops for long runs that
survive interruptions, in a work folder, live in :mod:`coursekit.training.resumable`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from coursekit.training.compact import STORAGE, compact_state, expand_state
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_positive_float, check_positive_int, check_probability
from coursekit.viz.widgets import headless


def _check_module(model, name: str = "model") -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"{name} must be an nn.Module, got {type(model).__name__}")


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")


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
        if not pairs:
            recorded = sorted({k for _, d in self.evals for k in d})
            if self.evals:
                raise KeyError(f"no evaluation recorded {key!r}; the evaluations hold {recorded}")
            raise KeyError(f"no evaluation recorded {key!r}; this run has no evaluations (pass eval_fn to fit)")
        return [s for s, _ in pairs], [v for _, v in pairs]

    def smoothed_loss(self, window: int = 20) -> tuple[list[int], list[float]]:
        """Running mean of the training loss over ``window`` steps."""
        check_positive_int(window, "window")
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
    ``clip`` is the largest global gradient norm (``None`` turns clipping off); ``steps`` must be ≥ 1.
    """
    if progress is None:
        progress = not headless()
    _check_module(model)
    _check_optimizer(optimizer)
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be a function (model, batch) -> loss, got {type(loss_fn).__name__}")
    check_positive_int(steps, "steps")
    if clip is not None:
        check_positive_float(clip, "clip")
    if eval_every is not None:
        check_positive_int(eval_every, "eval_every")
    if callable(batches):
        get_batch = batches
    elif isinstance(batches, Iterable) and not isinstance(batches, torch.Tensor):
        cycle = itertools.cycle(batches)

        def get_batch(_step):
            try:
                return next(cycle)
            except StopIteration:  # the iterable was empty: cycle() has nothing to repeat
                raise ValueError("batches is empty: it gave no batch to train on") from None
    else:
        raise TypeError(f"batches must be an iterable of batches or a function step -> batch, "
                        f"got {type(batches).__name__}")

    history = History()
    start = time.perf_counter()

    def evaluate(step: int) -> None:
        if eval_fn is None:
            return
        was_training = model.training
        model.eval()
        with torch.no_grad():
            result = eval_fn(model)
        if not isinstance(result, Mapping):
            raise TypeError(f"eval_fn must return a dict of numbers, got {type(result).__name__}")
        result = {k: float(v) for k, v in result.items()}
        model.train(was_training)
        history.evals.append((step, result))
        bar.set_postfix({k: f"{v:.3f}" for k, v in result.items()}, refresh=False)

    model.train()
    with _progress(steps, desc, progress) as bar:
        for step in range(1, steps + 1):
            loss = loss_fn(model, get_batch(step))
            if not isinstance(loss, torch.Tensor):
                raise TypeError(f"loss_fn must return a scalar tensor, got {type(loss).__name__}")
            if loss.numel() != 1:
                raise ValueError(f"loss_fn must return a scalar tensor, got shape {tuple(loss.shape)}; "
                                 f"average the per-example losses (.mean())")
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
    _check_optimizer(optimizer)
    _check_count(warmup, "warmup")
    check_positive_int(total, "total")
    check_probability(min_ratio, "min_ratio")

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def inverse_sqrt(warmup: int):
    """LR factor at update u (from 0, as :class:`torch.optim.lr_scheduler.LambdaLR` counts): (u + 1) / warmup
    during warm-up, then √(warmup / (u + 1)) — peak 1 at the end of warm-up. The shape of Vaswani et al.'s
    schedule (§5.3), the peak set by the optimiser's learning rate instead of by d_model^-0.5."""
    check_positive_int(warmup, "warmup")
    return lambda u: (u + 1) / warmup if u + 1 < warmup else math.sqrt(warmup / (u + 1))


# --------------------------------------------------------------------------- checkpoints


def _config_dict(config: Any) -> dict:
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    if isinstance(config, dict):
        return dict(config)
    raise TypeError(f"config must be a dataclass instance or a dict, got {type(config).__name__}")


def config_from_json(path: str | Path, base: Any) -> Any:
    """``base`` (a config dataclass instance) with the fields set in the JSON object at ``path`` replaced.

    What every training CLI's ``--config`` does: fields missing from the file keep ``base``'s values, an
    unknown field is an error naming the known ones (a typo must not silently train the default recipe),
    and the dataclass's own checks (``__post_init__``) judge the values.
    """
    if not (dataclasses.is_dataclass(base) and not isinstance(base, type)):
        raise TypeError(f"base must be a config dataclass instance, got {type(base).__name__}")
    path = Path(path)
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(values, dict):
        raise ValueError(f"{path} must hold a JSON object of {type(base).__name__} fields, "
                         f"got a {type(values).__name__}")
    known = [f.name for f in dataclasses.fields(base)]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"unknown {type(base).__name__} fields in {path}: {unknown}; known fields: {known}")
    return dataclasses.replace(base, **values)


def save_checkpoint(path: str | Path, model: nn.Module, config: Any, extra: dict | None = None, *,
                    compact: bool = False) -> Path:
    """Save ``model``'s weights as safetensors with ``config`` (and ``extra``) as JSON metadata.

    Tied weights (e.g. an output layer sharing the embedding matrix) are stored once. The metadata also
    holds ``content_sha256``, the hash of the tensor bytes, which :func:`load_checkpoint` verifies.
    ``compact=True`` stores the matrices as int8 with one scale per row (:mod:`coursekit.training.compact`,
    metadata ``storage``), a quarter of their fp32 size; :func:`load_checkpoint` reads both kinds.
    """
    from safetensors.torch import save_file, save_model

    _check_module(model)
    if extra is not None and not isinstance(extra, dict):
        raise TypeError(f"extra must be a dict, got {type(extra).__name__}")
    if not isinstance(compact, bool):
        raise TypeError(f"compact must be a bool, got {type(compact).__name__}")
    path = Path(path)
    metadata = {"config": _json(_config_dict(config), "config")}
    if extra:
        metadata["extra"] = _json(extra, "extra")
    path.parent.mkdir(parents=True, exist_ok=True)
    if compact:
        save_file(compact_state(model), str(path), metadata={**metadata, "storage": STORAGE})
    else:
        save_model(model, str(path), metadata=metadata)
    return stamp_content_hash(path)


def _json(value: dict, name: str) -> str:
    try:
        return json.dumps(value, sort_keys=True)
    except TypeError as exc:
        raise TypeError(f"{name} must be JSON-serialisable: {exc}") from None


def stamp_content_hash(path: str | Path, **more_metadata: str) -> Path:
    """Rewrite a safetensors file with ``content_sha256`` (the hash of its tensor bytes) in its metadata.

    The tensors are written back unchanged (same names, order and bytes), so the hash stays valid.
    """
    from safetensors.torch import load_file, save_file

    for key, value in more_metadata.items():
        if not isinstance(value, str):
            raise TypeError(f"metadata values must be str, got {type(value).__name__} for {key!r}")
    path = Path(path)
    digest, meta = checkpoint_content(path)
    save_file(load_file(str(path)), str(path), metadata={**meta, **more_metadata, "content_sha256": digest})
    if checkpoint_content(path)[0] != digest:  # pragma: no cover - safetensors changed its layout rules
        raise RuntimeError(f"rewriting {path} changed its tensor bytes")
    return path


def checkpoint_content(path: str | Path) -> tuple[str, dict]:
    """``(sha256 of the tensor bytes, metadata)`` of a safetensors file; a truncated file is a ``ValueError``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little") if len(raw) >= 8 else -1
    try:
        header = json.loads(raw[8:8 + n]) if 0 <= n <= len(raw) - 8 else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        header = None
    end = _data_end(header) if isinstance(header, dict) else None
    if end is None:
        raise ValueError(f"{path} is not a safetensors file (or its header is damaged); restore it or re-run the "
                         f"command that wrote it")
    if 8 + n + end != len(raw):
        raise ValueError(f"{path} is truncated or damaged: its header announces {8 + n + end:,} bytes, the file has "
                         f"{len(raw):,}; restore it or re-run the command that wrote it")
    return hashlib.sha256(raw[8 + n:]).hexdigest(), header.get("__metadata__") or {}


def _data_end(header: dict) -> int | None:
    """Where the tensor bytes announced by a safetensors header end; ``None`` if the header is malformed."""
    ends = []
    for key, entry in header.items():
        if key == "__metadata__":
            if not isinstance(entry, dict):
                return None
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)):
            return None
        ends.append(offsets[1])
    return max(ends, default=0)


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
    meta = checkpoint_content(path)[1]
    if "config" not in meta:
        raise ValueError(f"{path} is not a coursekit checkpoint: its metadata has no config (models are saved with "
                         f"coursekit.training.loop.save_checkpoint)")
    try:
        return json.loads(meta["config"]), json.loads(meta.get("extra", "{}"))
    except json.JSONDecodeError:
        raise ValueError(f"{path} is not a coursekit checkpoint: its config is not valid JSON") from None


#: safetensors' names of the floating dtypes, as reports name them.
_FLOAT_NAMES = {"F16": "fp16", "BF16": "bf16", "F32": "fp32", "F64": "fp64"}


def checkpoint_storage(path: str | Path) -> str:
    """How a checkpoint stores its weights: its ``storage`` metadata (``"int8-rowwise"``, :func:`save_checkpoint`
    with ``compact=True``), else the dtypes of its floating tensors (``"fp16"``, ``"fp32"``; ``"fp16+fp32"``
    when mixed), read from the header without loading the weights."""
    from safetensors import safe_open

    if not Path(path).is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    with safe_open(str(path), "pt") as f:
        storage = (f.metadata() or {}).get("storage")
        if storage:
            return storage
        kinds = {_FLOAT_NAMES[d] for d in (f.get_slice(k).get_dtype() for k in f.keys()) if d in _FLOAT_NAMES}
    return "+".join(sorted(kinds, key=list(_FLOAT_NAMES.values()).index)) or "no floating tensors"


def load_checkpoint(path: str | Path, model: nn.Module, expected_config: Any = None) -> dict:
    """Load weights saved by :func:`save_checkpoint` into ``model``; return the stored config.

    If ``expected_config`` is given and differs from the stored one, raise a ``ValueError`` listing
    the differing fields (a field the file lacks counts as the config class's default: the file was written
    before the field existed). Missing or unexpected weight names are a ``ValueError`` listing them.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_model

    _check_module(model)
    path = Path(path)
    meta = verify_checkpoint(path)
    stored, _ = read_checkpoint_metadata(path)
    if expected_config is not None:
        expected = _config_dict(expected_config)
        # a field the checkpoint lacks was added to the config class after the file was written: it holds the
        # field's default (what the model was built with then), so compare that
        defaults = ({f.name: f.default for f in dataclasses.fields(expected_config)
                     if f.default is not dataclasses.MISSING} if dataclasses.is_dataclass(expected_config) else {})
        stored_or_default = {k: stored.get(k, defaults.get(k, "<absent>")) for k in set(stored) | set(expected)}
        diff = {k: (stored.get(k, "<absent>"), expected.get(k, "<absent>"))
                for k in sorted(stored_or_default) if stored_or_default[k] != expected.get(k, "<absent>")}
        if diff:
            lines = ", ".join(f"{k}: checkpoint {a!r} vs expected {b!r}" for k, (a, b) in diff.items())
            raise ValueError(f"{path}: config mismatch — {lines}")
    storage = meta.get("storage")
    if storage not in (None, STORAGE):
        raise ValueError(f"{path} stores its weights as {storage!r}; this version of coursekit reads fp16/fp32 "
                         f"and {STORAGE!r}")
    try:
        if storage == STORAGE:
            missing, unexpected = _load_compact(path, model)
        else:
            missing, unexpected = load_model(model, str(path), strict=False)
    except RuntimeError as exc:  # shape mismatch
        raise ValueError(f"{path}: weights do not fit this model: {exc}") from exc
    except SafetensorError as exc:  # a header our size check accepts but safetensors does not (e.g. a dtype)
        raise ValueError(f"{path} could not be read as safetensors ({exc}); restore it or re-run the command that "
                         f"wrote it") from exc
    if missing or unexpected:
        raise ValueError(f"{path}: weight names differ from the model's. Missing in checkpoint: {sorted(missing)}; "
                         f"unexpected in checkpoint: {sorted(unexpected)}")
    return stored


def _load_compact(path: Path, model: nn.Module) -> tuple[list[str], list[str]]:
    """Load an int8 checkpoint into ``model``: (missing, unexpected) names, a tied name counting as loaded
    when the tensor it shares was."""
    from safetensors.torch import load_file

    state = expand_state(load_file(str(path)))
    own = model.state_dict()
    unexpected = sorted(set(state) - set(own))
    shapes = [f"{k}: checkpoint {tuple(state[k].shape)} vs model {tuple(own[k].shape)}"
              for k in state if k in own and state[k].shape != own[k].shape]
    if shapes:
        raise RuntimeError("size mismatch: " + "; ".join(shapes))
    with torch.no_grad():
        for name, tensor in state.items():
            if name in own:
                own[name].copy_(tensor)
    loaded = {(own[k].untyped_storage().data_ptr(), own[k].storage_offset()) for k in state if k in own}
    missing = sorted(k for k, t in own.items() if k not in state
                     and (t.untyped_storage().data_ptr(), t.storage_offset()) not in loaded)
    return missing, unexpected


def load_model_directory(directory: str | Path, build: Callable[[dict, dict], nn.Module], *,
                         reproduce: str) -> tuple[nn.Module, dict]:
    """Load a committed model directory's ``model.safetensors``: ``(model in eval mode, extra metadata)``.

    ``build(config, extra)`` makes the empty model from the checkpoint's metadata; the weights are then
    loaded with a config check. A missing checkpoint is a ``FileNotFoundError`` naming ``reproduce``,
    the command that writes it.
    """
    if not callable(build):
        raise TypeError(f"build must be a function (config, extra) -> model, got {type(build).__name__}")
    path = Path(directory) / "model.safetensors"
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}; make it with `{reproduce}`")
    try:
        config, extra = read_checkpoint_metadata(path)
    except ValueError as exc:
        raise ValueError(f"{exc}; make it again with `{reproduce}`") from exc
    model = build(config, extra)
    if not isinstance(model, nn.Module) or not hasattr(model, "config"):
        got = f"{type(model).__name__} without one" if isinstance(model, nn.Module) else type(model).__name__
        raise TypeError(f"build(config, extra) must return an nn.Module with a .config, got {got}")
    try:
        load_checkpoint(path, model, expected_config=model.config)
    except ValueError as exc:
        raise ValueError(f"{exc}; make it again with `{reproduce}`") from exc
    return model.eval(), extra


def count_parameters(model: nn.Module, trainable_only: bool = True) -> int:
    """Number of (trainable) parameters, counting shared tensors once."""
    _check_module(model)
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) in seen or (trainable_only and not p.requires_grad):
            continue
        seen.add(id(p))
        total += p.numel()
    return total
