"""In-context learning, trained and measured: the recipe of ``data/icl``, its checkpoint, evaluation (notebook 12).

The recipe (:class:`ICLTrainConfig`, :func:`train_icl`) trains a 2-layer GPT from scratch on a 50/50 mix of
the task sequences and the repeated random segments of :mod:`coursekit.gpt.icl` — a Transformer trained to
learn a class of functions in context, as in Garg et al. (2022), *What Can Transformers Learn In-Context?
A Case Study of Simple Function Classes*. Training records the loss, the held-out accuracy and every
head's induction score (:mod:`coursekit.gpt.induction`) over time: the phase change of Olsson et al. (2022),
*In-context Learning and Induction Heads*, where all three move together.

:func:`evaluate_shots` gives per-task accuracy by number of shots (labels read by likelihood over the
task's label set), :func:`heldout_accuracy` the same on strictly held-out tasks next to the ideal learner;
:func:`save_icl_checkpoint` / :func:`load_icl_checkpoint` write and read the committed model (its content
hash checked against its report). :func:`finetune_on_demonstrations` and :func:`evaluate_finetuning` are the
other column of GPT-3's Fig. 2.1: gradient descent on the same k examples instead of prompting with them.

``python -m coursekit.gpt train-icl --work runs/icl --out data/icl`` reproduces the committed model
(checkpoints in ``--work``, ``--resume`` continues an interrupted run exactly);
``python -m coursekit.gpt icl --json`` prints its held-out accuracy by number of shots.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.data import model_dir, sha256_file
from coursekit.gpt.icl import (
    ICLTaskFamily,
    Task,
    _check_family,
    _check_tasks,
    _token_format,
    demo_order,
    icl_batch,
    ideal_accuracy,
    repeated_segment_batch,
    sample_tasks,
    training_batch,
)
from coursekit.gpt.induction import attention_maps, induction_scores, previous_token_scores, repeated_random_tokens
from coursekit.gpt.model import GPT, GPTConfig, _check_gpt
from coursekit.gpt.prompting import TokenFormat, build_token_prompt, classify_by_likelihood, model_logits
from coursekit.training.loop import load_model_directory, save_checkpoint, warmup_cosine
from coursekit.training.resumable import append_jsonl, hardware, load_state, save_state_atomic
from coursekit.validation import (
    check_choice,
    check_int_sequence,
    check_labels,
    check_non_empty,
    check_positive_float,
    check_positive_int,
)
from coursekit.validation import check_count as _check_count

__all__ = ["ICLTrainConfig", "train_icl", "heldout_accuracy", "save_icl_checkpoint", "load_icl_checkpoint",
           "evaluate_shots", "finetune_on_demonstrations", "evaluate_finetuning"]


@dataclass
class ICLTrainConfig:
    """The recipe of ``data/icl``: a 2-layer, 4-head GPT (d 64) trained on K = 8 → L = 4 tasks (bare format)
    alternating with repeated random segments. Held-out accuracy and induction scores sit near chance for
    a few thousand steps, then jump together (the phase change)."""

    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    steps: int = 15000
    batch_size: int = 64
    learning_rate: float = 1e-3
    warmup: int = 200
    weight_decay: float = 0.01
    seed: int = 0
    repeat_every: int = 2          # every 2nd batch is repeated random segments (0: task sequences only)
    eval_tasks: int = 64           # held-out tasks measured during training
    eval_every: int = 250
    format: str = "bare"
    family: dict = dataclasses.field(default_factory=lambda: dataclasses.asdict(ICLTaskFamily()))

    def __post_init__(self) -> None:
        for name in ("n_layers", "n_heads", "d_model", "steps", "batch_size", "eval_tasks", "eval_every"):
            check_positive_int(getattr(self, name), name)
        for name in ("warmup", "seed", "repeat_every"):
            _check_count(getattr(self, name), name)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        check_positive_float(self.learning_rate, "learning_rate")
        check_positive_float(self.weight_decay, "weight_decay", allow_zero=True)
        if not isinstance(self.family, dict):
            raise TypeError(f"family must be a dict of ICLTaskFamily fields, got {type(self.family).__name__}")
        known = [f.name for f in dataclasses.fields(ICLTaskFamily)]
        unknown = sorted(set(self.family) - set(known))
        if unknown:
            raise ValueError(f"family has unknown fields {unknown}; ICLTaskFamily has {known}")
        check_choice(self.format, "format", list(self.task_family().formats()))   # builds the family: checks it

    def task_family(self) -> ICLTaskFamily:
        return ICLTaskFamily(**self.family)

    def model_config(self) -> GPTConfig:
        fam = self.task_family()
        return GPTConfig(vocab_size=fam.vocab_size, max_len=fam.max_len(), n_layers=self.n_layers,
                         n_heads=self.n_heads, d_model=self.d_model, dropout=0.0, bias=False)

    def batch(self, step: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """The training batch of ``step`` (0-based): task sequences, or repeated segments of the same length."""
        fam = self.task_family()
        if self.repeat_every and step % self.repeat_every == self.repeat_every - 1:
            length = fam.n_pairs * fam.formats()[self.format].pair_length()
            return repeated_segment_batch(fam, self.batch_size, length, generator)
        return training_batch(fam, self.batch_size, generator, self.format)


PROBE = {"n": 64, "period": 16, "seed": 999}     # the repeated sequences of the induction curve
EVAL_TASKS_SEED = 12345                          # the held-out tasks of the accuracy curve


def _optimizer(model: GPT, cfg: ICLTrainConfig):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.learning_rate, betas=(0.9, 0.98))
    return opt, warmup_cosine(opt, cfg.warmup, cfg.steps, 0.1)


@torch.no_grad()
def _measure(model: GPT, cfg: ICLTrainConfig, tasks: list, probe: torch.Tensor) -> dict:
    """One point of the curves: held-out accuracy at 2 and 8 shots, induction/previous-token score per head."""
    fam = cfg.task_family()
    acc = evaluate_shots(model, fam, tasks, (2, 8), cfg.format, seed=1)
    maps = attention_maps(model, probe)
    model.train()
    return {"heldout_acc_2shot": round(acc[2].mean().item(), 4), "heldout_acc_8shot": round(acc[8].mean().item(), 4),
            "induction": [[round(v, 4) for v in r] for r in induction_scores(maps, PROBE["period"]).mean(1).tolist()],
            "previous_token": [[round(v, 4) for v in r] for r in previous_token_scores(maps).mean(1).tolist()]}


def train_icl(cfg: ICLTrainConfig, work: str | Path | None = None, *, resume: bool = False,
              checkpoint_minutes: float = 2.0, log: bool = False, stop_at: int | None = None) -> tuple[GPT, dict]:
    """Train the recipe; return ``(model, report)``. With ``work``, a checkpoint is saved every
    ``checkpoint_minutes`` (``work/checkpoint.pt``) and ``resume=True`` continues it exactly (model,
    optimiser, schedule and the batch generator's state). ``stop_at`` ends early on the same schedule."""
    if not isinstance(cfg, ICLTrainConfig):
        raise TypeError(f"cfg must be an ICLTrainConfig, got {type(cfg).__name__}")
    if work is not None and not isinstance(work, (str, Path)):
        raise TypeError(f"work must be a folder path (str or Path) or None, got {type(work).__name__}")
    check_positive_float(checkpoint_minutes, "checkpoint_minutes")
    if stop_at is not None:
        check_positive_int(stop_at, "stop_at")
    fam = cfg.task_family()
    if fam.vocab_size - 4 < PROBE["period"] or fam.max_len() < 2 * PROBE["period"]:
        raise ValueError(f"train_icl measures induction on repeated segments of {PROBE['period']} distinct tokens: "
                         f"the family needs at least {PROBE['period']} content tokens and a context of "
                         f"{2 * PROBE['period']}, got {fam.vocab_size - 4} tokens and max_len={fam.max_len()} "
                         f"(raise n_input_tokens or n_pairs)")
    torch.manual_seed(cfg.seed)
    model = GPT(cfg.model_config())
    opt, sched = _optimizer(model, cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    tasks = sample_tasks(fam, cfg.eval_tasks, "heldout", torch.Generator().manual_seed(EVAL_TASKS_SEED))
    probe = repeated_random_tokens(PROBE["n"], PROBE["period"], torch.arange(4, fam.vocab_size),
                                   torch.Generator().manual_seed(PROBE["seed"]))
    st = {"step": 0, "seconds": 0.0, "loss": [], "curve": [], "hardware": hardware()}
    ckpt = Path(work) / "checkpoint.pt" if work is not None else None
    if ckpt is not None:
        ckpt.parent.mkdir(parents=True, exist_ok=True)
        if resume and ckpt.exists():
            saved = load_state(ckpt, ("model", "optimizer", "scheduler", "generator", "state", "config"))
            if saved["config"] != dataclasses.asdict(cfg):
                raise ValueError(f"{ckpt} was written by another recipe: {saved['config']}")
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["optimizer"])
            sched.load_state_dict(saved["scheduler"])
            gen.set_state(saved["generator"])
            st = saved["state"]
        elif ckpt.exists():
            raise FileExistsError(f"{ckpt} exists: pass resume=True (--resume) to continue it, or remove it")
    if not st["curve"]:
        st["curve"].append({"step": 0, "loss": None, **_measure(model, cfg, tasks, probe)})
    t0, last_save = time.monotonic() - st["seconds"], time.monotonic()
    model.train()
    end = min(cfg.steps, stop_at or cfg.steps)
    while st["step"] < end:
        x, y = cfg.batch(st["step"], gen)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        st["loss"].append(round(loss.item(), 4))
        st["step"] += 1
        if st["step"] % cfg.eval_every == 0 or st["step"] == end:
            window = st["loss"][-cfg.eval_every:]
            point = {"step": st["step"], "loss": round(sum(window) / len(window), 4),
                     "seconds": round(time.monotonic() - t0, 1), **_measure(model, cfg, tasks, probe)}
            st["curve"].append(point)
            if log:
                print(json.dumps(point), flush=True)
            if ckpt is not None:
                append_jsonl(ckpt.parent / "train.log", point)
        if ckpt is not None and (time.monotonic() - last_save > 60 * checkpoint_minutes or st["step"] == end):
            st["seconds"] = time.monotonic() - t0
            save_state_atomic(ckpt, {"model": model.state_dict(), "optimizer": opt.state_dict(),
                                     "scheduler": sched.state_dict(), "generator": gen.get_state(), "state": st,
                                     "config": dataclasses.asdict(cfg)})
            last_save = time.monotonic()
    st["seconds"] = time.monotonic() - t0
    model.eval()
    report = {"config": dataclasses.asdict(cfg), "steps_done": st["step"], "seconds": round(st["seconds"], 1),
              "hardware": st["hardware"], "train_loss": st["loss"], "curve": st["curve"],
              "probe": PROBE, "eval_tasks_seed": EVAL_TASKS_SEED, "parameters": model.num_params()}
    return model, report


def heldout_accuracy(model: GPT, cfg: ICLTrainConfig, *, shots: Sequence[int] = (0, 1, 2, 4, 8, 16),
                     n_tasks: int = 256, tasks_seed: int = 2024, prompts_seed: int = 7) -> dict:
    """Accuracy on ``n_tasks`` strictly held-out tasks by number of shots (every input of a task asked
    once, fresh demonstrations each time): mean, sd over tasks and the ideal learner's accuracy."""
    if not isinstance(cfg, ICLTrainConfig):
        raise TypeError(f"cfg must be an ICLTrainConfig, got {type(cfg).__name__}")
    check_positive_int(n_tasks, "n_tasks")
    fam = cfg.task_family()
    tasks = sample_tasks(fam, n_tasks, "heldout", torch.Generator().manual_seed(tasks_seed))
    acc = evaluate_shots(model, fam, tasks, shots, cfg.format, seed=prompts_seed)
    K, L = fam.inputs_per_task, fam.labels_per_task
    return {"n_tasks": n_tasks, "tasks_seed": tasks_seed, "prompts_seed": prompts_seed, "format": cfg.format,
            "by_shots": {str(k): {"accuracy": round(a.mean().item(), 4), "sd_over_tasks": round(a.std().item(), 4),
                                  "ideal": round(ideal_accuracy(k, K, L), 4)} for k, a in acc.items()}}


def save_icl_checkpoint(directory: str | Path, model: GPT, cfg: ICLTrainConfig, report: dict) -> Path:
    """model.safetensors (weights + model config + the recipe, content hash), report.json and config.json."""
    _check_gpt(model)
    if not isinstance(cfg, ICLTrainConfig):
        raise TypeError(f"cfg must be an ICLTrainConfig, got {type(cfg).__name__}")
    if not isinstance(report, dict):
        raise TypeError(f"report must be a dict, got {type(report).__name__}")
    if model.config != cfg.model_config():
        raise ValueError(f"the model is not the recipe's: model.config differs from cfg.model_config() "
                         f"({model.config} vs {cfg.model_config()})")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = save_checkpoint(out / "model.safetensors", model, cfg.model_config(),
                           extra={"train_config": dataclasses.asdict(cfg)})
    report = dict(report, file_sha256=sha256_file(path), size_bytes=path.stat().st_size,
                  reproduce=f"python -m coursekit.gpt train-icl --work runs/icl --out {directory}")
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=1) + "\n")
    return out


def load_icl_checkpoint(directory: str | Path | None = None) -> tuple[GPT, ICLTrainConfig, dict]:
    """The committed in-context learner: ``(model, train config, report)``; the file must match its report."""
    directory = model_dir("icl") if directory is None else Path(directory)
    reproduce = f"python -m coursekit.gpt train-icl --work runs/icl --out {directory}"

    def build(config: dict, extra: dict) -> GPT:
        if "train_config" not in extra:
            raise ValueError(f"{directory} holds no in-context learner (its metadata has no 'train_config'); "
                             f"make one with `{reproduce}`")
        return GPT(ICLTrainConfig(**extra["train_config"]).model_config())

    model, extra = load_model_directory(directory, build, reproduce=reproduce)
    report_path = directory / "report.json"
    if not report_path.is_file():
        raise FileNotFoundError(f"no report at {report_path}; make the model with `{reproduce}`")
    try:
        report = json.loads(report_path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{report_path} is not valid JSON ({exc}); make the model again with `{reproduce}`") from None
    digest = sha256_file(directory / "model.safetensors")
    if digest != report.get("file_sha256"):
        raise ValueError(f"{directory / 'model.safetensors'} does not match its report (sha256 {digest[:12]}…): "
                         f"a truncated or replaced file; re-run `{reproduce}`")
    return model, ICLTrainConfig(**extra["train_config"]), report



@torch.no_grad()
def evaluate_shots(model: nn.Module, family: ICLTaskFamily | None, tasks: Sequence[Task], shots: Sequence[int],
                   fmt: str | TokenFormat = "arrow", seed: int = 0, **batch_kw) -> dict[int, torch.Tensor]:
    """Per-task accuracy (n_tasks,) at each number of shots, labels read by likelihood over the
    task's label set. The prompts are a fixed function of ``seed``."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    shots = check_non_empty(check_int_sequence(shots, "shots"), "shots")
    _check_tasks(tasks)
    _check_count(seed, "seed")
    model.eval()
    out = {}
    for k in shots:
        gen = torch.Generator().manual_seed(seed + 1000 * k)
        b = icl_batch(family, tasks, k, fmt, gen, **batch_kw)
        correct = (classify_by_likelihood(model, b["prompts"], b["candidates"]).argmax(-1) == b["answer"]).float()
        per_task = torch.zeros(len(tasks)).index_add_(0, b["task"], correct)
        out[k] = per_task / torch.bincount(b["task"], minlength=len(tasks))
    return out



def finetune_on_demonstrations(model: nn.Module, demos: Sequence[tuple[int, int]], fmt: TokenFormat, *,
                               steps: int = 30, lr: float = 1e-2, params: str = "all") -> nn.Module:
    """Fine-tuning with the same k examples: a copy of ``model`` trained by gradient descent (Adam)
    to predict y from the zero-shot prompt ``x =>`` for each demonstration (x, y)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(fmt, TokenFormat):
        raise TypeError(f"fmt must be a TokenFormat, got {type(fmt).__name__}")
    check_positive_int(steps, "steps")
    check_positive_float(lr, "lr")
    for d in demos:
        if not (isinstance(d, (tuple, list)) and len(d) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in d)):
            raise TypeError(f"demos must be a list of (x, y) pairs of int token ids, got {d!r}")
    ft = copy.deepcopy(model).train()
    trainable = [p for n, p in ft.named_parameters() if params == "all" or n.startswith(params)]
    if not trainable:
        raise ValueError(f"params={params!r} matches no parameter name of the model (use 'all' or a prefix such "
                         f"as 'blocks.1.')")
    if not demos:
        return ft.eval()
    x = torch.tensor([build_token_prompt([], xi, fmt) for xi, _ in demos])            # (k, T)
    y = torch.tensor([yi for _, yi in demos])                                          # (k,)
    opt = torch.optim.Adam(trainable, lr=lr)
    for step in range(steps):
        logits = model_logits(ft, x)[:, -1]                                            # (k, V)
        if step == 0:
            check_labels(y, "the demonstrations' labels y", logits.shape[-1])
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return ft.eval()


def evaluate_finetuning(model: nn.Module, family: ICLTaskFamily, tasks: Sequence[Task], k: int, *,
                        fmt: str = "arrow", seed: int = 0, **ft_kw) -> torch.Tensor:
    """Per-task accuracy (n_tasks,) after fine-tuning a copy of ``model`` on k demonstrations of each
    task (the same demonstration sampling as :func:`icl_batch`), then asking zero-shot ``x =>``."""
    _check_family(family)
    _check_tasks(tasks)
    tf = _token_format(family, fmt)
    _check_count(k, "k")
    _check_count(seed, "seed")
    gen = torch.Generator().manual_seed(seed + 1000 * k)
    accs = []
    for task in tasks:
        order = demo_order(len(task.inputs), k, gen)
        demos = [(int(task.inputs[j]), task.label_of(j)) for j in order.tolist()]
        ft = finetune_on_demonstrations(model, demos, tf, **ft_kw)
        prompts = torch.tensor([build_token_prompt([], x, tf) for x in task.inputs.tolist()])
        with torch.no_grad():
            pred = classify_by_likelihood(ft, prompts, task.labels.expand(len(prompts), -1)).argmax(-1)
        accs.append((pred == task.mapping).float().mean())
    return torch.stack(accs)

