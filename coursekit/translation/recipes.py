"""Recipes of the course's three committed translation models, and the loop that trains them.

One recipe per model, all on :mod:`coursekit.translation.benchmark` (shared BPE, tied embeddings):

* ``seq2seq`` — GRU encoder–decoder without attention (Sutskever et al. 2014; Cho et al. 2014): a
  bidirectional GRU reads the source, its final states are the decoder's initial state, and nothing
  else of the source reaches the decoder: the bottleneck of notebook 05;
* ``attention`` — the same GRUs with Bahdanau (additive) attention (Bahdanau et al. 2015): at every step
  the decoder re-reads all encoder states (notebook 06);
* ``transformer`` — an encoder–decoder Transformer (Vaswani et al. 2017), d 256, 4 heads, FFN 1024,
  3 + 3 layers, pre-LN (notebook 08).

All three train with Adam(0.9, 0.98), a linear warm-up then inverse-square-root decay (Vaswani et al.
2017, Eq. 3), label smoothing 0.1, gradient clipping at 1, and length-grouped batches of at most
``max_tokens`` tokens (:func:`~coursekit.text.token_batches`). A recipe may end with a *cool-down*: over its
last ``cooldown`` updates the learning rate falls linearly to zero (the "decay" of a warmup-stable-decay
schedule: Hägele et al. 2024 find that a short cool-down matches a schedule planned for the whole length, and
that it can be branched off any checkpoint of a longer run). The Transformer's recipe is its first 7,000
updates, unchanged, then a 1,500-update cool-down.

:func:`train` runs a recipe with a checkpoint every few minutes in a work folder and resumes from it
(``resume=True``): the batches of an epoch depend only on the seed and the epoch number, so a resumed run
continues with exactly the batches the interrupted one would have seen. ``init_from`` continues an exported
model instead (its weights as stored, its update count, its place in the data; Adam's moments start again).
Every ``eval_every`` updates it logs validation loss and BLEU (500 held-out sentences, never the test set).
:func:`export` writes the committed model: int8 safetensors (one scale per output channel), the recipe, and a
report with curves, wall time, hardware, test BLEU/chrF by length (measured on the weights as stored) and the
showcase translations.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch
from torch import nn

from coursekit.data import model_dir, sha256_file
from coursekit.decoding.translate import check_translation_model, translator
from coursekit.rnn.seq2seq import Seq2Seq, Seq2SeqConfig
from coursekit.text import pad_batch, token_batches
from coursekit.training.compact import STORAGE
from coursekit.training.loop import (
    count_parameters,
    inverse_sqrt,
    load_checkpoint,
    load_model_directory,
    save_checkpoint,
)
from coursekit.training.resumable import hardware, save_state_atomic, train_in_folder
from coursekit.transformer.model import Transformer, TransformerConfig
from coursekit.translation.benchmark import LENGTH_BUCKETS, benchmark_figures, check_banded, load_benchmark, showcase
from coursekit.translation.core import TranslationData, split_tokens
from coursekit.translation.scoring import BleuReport, _check_strings
from coursekit.validation import check_choice, check_positive_float, check_positive_int, check_probability
from coursekit.validation import check_count as _check_count

__all__ = ["Recipe", "RECIPES", "MODELS", "MAX_SOURCE_TOKENS", "build_model", "train", "export", "load_model",
           "evaluate", "subset_indices", "translate_sentences", "lr_factor",
           "start_from_model"]

MODELS = ("seq2seq", "attention", "transformer")
SUBSET_SHORT, SUBSET_LONG = 60, 40  # test sentences whose translations the reload test reproduces (fast in CI)


@dataclass(frozen=True)
class Recipe:
    """Everything that decides a committed model: architecture, optimisation, batches, length of training."""

    model: str                       # one of MODELS
    arch: dict = field(default_factory=dict)
    max_tokens: int = 3000           # per batch, source + target, padding included
    lr: float = 1e-3                 # peak learning rate, reached after `warmup` updates
    warmup: int = 400
    max_updates: int = 3000
    label_smoothing: float = 0.1
    clip: float = 1.0
    eval_every: int = 250
    seed: int = 0
    cooldown: int = 0                # the last `cooldown` updates decay the learning rate linearly to zero

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if not isinstance(self.arch, dict):
            raise TypeError(f"arch must be a dict, got {type(self.arch).__name__}")
        for name in ("max_tokens", "warmup", "max_updates", "eval_every"):
            check_positive_int(getattr(self, name), name)
        _check_count(self.seed, "seed")
        check_positive_float(self.lr, "lr")
        check_probability(self.label_smoothing, "label_smoothing", inclusive_high=False)
        check_positive_float(self.clip, "clip")
        _check_count(self.cooldown, "cooldown")
        if self.cooldown > self.max_updates - self.warmup:
            raise ValueError(f"cooldown must leave the warm-up whole: at most max_updates - warmup = "
                             f"{self.max_updates - self.warmup} updates, got {self.cooldown}")


# One embedding table for both languages and the output layer (Press & Wolf 2017): with a shared BPE of 8,000
# pieces the tables are most of a small model, so tying them is what keeps the committed files small.
_GRU = dict(d_emb=320, d_hidden=320, cell="gru", num_layers=1, dropout=0.2, bidirectional=True,
            share_embeddings=True, tie_output=True)

RECIPES: dict[str, Recipe] = {
    "seq2seq": Recipe("seq2seq", dict(_GRU), lr=2e-3, warmup=200, max_updates=3000),
    "attention": Recipe("attention", dict(_GRU, attention="additive", style="bahdanau", d_attn=320),
                        lr=2e-3, warmup=200, max_updates=3000),
    "transformer": Recipe("transformer", dict(d_model=256, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
                                              d_ff=1024, dropout=0.1, norm_first=True, max_len=64,
                                              share_embeddings=True, tie_output=True),
                          lr=1e-3, warmup=400, max_updates=8500, eval_every=500, cooldown=1500),
}


#: The longest source, in subword tokens, that every committed model takes: the Transformer's context less the
#: ``<eos>`` that ends a source. The GRU models have no such limit, but the command line gives all three models
#: the same one (``python -m coursekit.translation translate`` refuses longer lines one by one).
MAX_SOURCE_TOKENS = RECIPES["transformer"].arch["max_len"] - 1


def build_model(recipe: Recipe, vocab_size: int) -> nn.Module:
    """The untrained model of ``recipe`` for a shared vocabulary of ``vocab_size`` pieces."""
    if not isinstance(recipe, Recipe):
        raise TypeError(f"recipe must be a Recipe, got {type(recipe).__name__}")
    check_positive_int(vocab_size, "vocab_size")
    if recipe.model == "transformer":
        return Transformer(TransformerConfig(vocab_size, vocab_size, **recipe.arch))

    model = Seq2Seq(Seq2SeqConfig(vocab_size, vocab_size, **recipe.arch))
    nn.init.normal_(model.encoder.embedding.weight, std=recipe.arch["d_emb"] ** -0.5)  # not N(0, 1)
    return model


def lr_factor(recipe: Recipe):
    """LR factor after u updates (:class:`torch.optim.lr_scheduler.LambdaLR`): :func:`inverse_sqrt`, then over the
    last ``recipe.cooldown`` updates a straight line from the factor reached down to zero (the last update
    gets 1/cooldown of it). Without a cool-down this is :func:`inverse_sqrt`, whatever ``max_updates`` is."""
    if not isinstance(recipe, Recipe):
        raise TypeError(f"recipe must be a Recipe, got {type(recipe).__name__}")
    decay = inverse_sqrt(recipe.warmup)
    if not recipe.cooldown:
        return decay
    start = recipe.max_updates - recipe.cooldown                 # the cool-down's first update is start + 1
    return lambda u: decay(u) if u < start else decay(start) * max(recipe.max_updates - u, 0) / recipe.cooldown


@torch.no_grad()
def valid_nll(model: nn.Module, data: TranslationData, split: str = "valid", batch_size: int = 250) -> float:
    """Mean NLL per target token (no smoothing) on ``split``."""
    was = model.training
    model.eval()
    total, count = 0.0, 0
    for batch in data.batches(batch_size, split=split):
        n = int(batch.tgt_mask.sum())
        total, count = total + model.loss(batch).item() * n, count + n
    model.train(was)
    return total / count


def evaluate(model: nn.Module, data: TranslationData, split: str = "test", *, beam_size: int = 1,
             limit: int | None = None, indices: list[int] | None = None, batch_size: int = 250) -> BleuReport:
    """BLEU / chrF / by-length (:data:`~coursekit.translation.benchmark.LENGTH_BUCKETS`) of greedy (or beam)
    translations of ``split`` (its first ``limit`` pairs, or those at ``indices``)."""
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData, got {type(data).__name__}")
    device = next(model.parameters()).device                 # batches go where the model is (CPU or GPU)
    return data.evaluate(translator(model, beam_size=beam_size, max_len=2 * data.max_len + 10), split=split,
                         limit=limit, indices=indices, batch_size=batch_size, buckets=LENGTH_BUCKETS, device=device)


def subset_indices(data: TranslationData) -> list[int]:
    """The test pairs whose translations a report records and the reload test reproduces in CI: the first
    ``SUBSET_SHORT`` short and ``SUBSET_LONG`` long ones (fewer if the data has fewer)."""
    check_banded(data)
    n_short, n_long = data.info["bands"]["test_short"], data.info["bands"]["test_long"]
    return list(range(min(SUBSET_SHORT, n_short))) + [n_short + i for i in range(min(SUBSET_LONG, n_long))]


def translate_sentences(model: nn.Module, data: TranslationData, sentences: list[str], *,
                        beam_size: int = 1) -> list[str]:
    """Raw English sentences → normalised French strings (the CLI's ``translate``)."""
    check_translation_model(model)
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData, got {type(data).__name__}")
    _check_strings(sentences, "sentences")
    check_positive_int(beam_size, "beam_size")
    if not sentences:
        return []
    vocab = data.src_vocab
    words = [split_tokens(s) for s in sentences]
    out = [""] * len(sentences)
    todo = [i for i, w in enumerate(words) if w]
    if not todo:
        return out
    encoded = [vocab.encode(words[i], add_eos=True) for i in todo]
    longest = max(len(ids) for ids in encoded)
    if longest > MAX_SOURCE_TOKENS:
        i = todo[max(range(len(encoded)), key=lambda k: len(encoded[k]))]
        raise ValueError(f"sentence {i} has {longest - 1} subword tokens, more than the {MAX_SOURCE_TOKENS - 1} the "
                         f"committed models take: split it into shorter sentences")
    src, mask, _ = pad_batch(encoded, vocab.pad_id)
    model.eval()
    device = next(model.parameters()).device
    # sentences within the benchmark's length decode as in evaluation; longer ones get room for a French
    # sentence somewhat longer than their source, within the Transformer's context
    max_len = 2 * data.max_len + 10
    if max(len(words[i]) for i in todo) > data.max_len:
        max_len = min(MAX_SOURCE_TOKENS, max(max_len, 2 * longest + 10))
    result = model.translate(src.to(device), mask.to(device), beam_size=beam_size, max_len=max_len)
    for i, ids in zip(todo, result.tokens):
        out[i] = data.detokenize(ids)
    return out


# --------------------------------------------------------------------------- training with checkpoints


def train(name: str, work: str | Path, *, resume: bool = False, max_updates: int | None = None,
          checkpoint_minutes: float = 3.0, data: TranslationData | None = None,
          recipe: Recipe | None = None, init_from: str | Path | None = None, quiet: bool = False
          ) -> tuple[nn.Module, dict]:
    """Train recipe ``name`` in the folder ``work`` (``checkpoint.pt``, ``train.log``); returns (model, log).

    ``resume=True`` continues from ``work/checkpoint.pt`` when there is one. ``max_updates`` overrides the
    recipe's length. Without a cool-down the schedule does not depend on it, so stopping early equals a shorter
    recipe and a longer run goes on decaying as 1/√u. With one, it can only stop the run early: the schedule
    stays the recipe's, so ``resume`` can later finish it with its cool-down. ``init_from`` (a folder written
    by :func:`export`) starts ``work`` from that model instead of from scratch: see :func:`start_from_model`.
    """
    check_choice(name, "name", list(RECIPES))
    if recipe is not None and not isinstance(recipe, Recipe):
        raise TypeError(f"recipe must be a Recipe or None, got {type(recipe).__name__}")
    if data is not None and not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData or None, got {type(data).__name__}")
    check_positive_float(checkpoint_minutes, "checkpoint_minutes")
    recipe = recipe or RECIPES[name]
    if max_updates is not None:
        check_positive_int(max_updates, "max_updates")
        if not recipe.cooldown:
            recipe = replace(recipe, max_updates=max_updates)
        elif max_updates > recipe.max_updates:
            raise ValueError(f"max_updates can only stop a recipe with a cool-down early: at most "
                             f"{recipe.max_updates}, got {max_updates}")
    stop = max_updates or recipe.max_updates
    data = data or load_benchmark()
    torch.manual_seed(recipe.seed)
    model = build_model(recipe, len(data.tgt_vocab))
    opt, sched = _optimizer(model, recipe)
    if init_from is not None and not (Path(work) / "checkpoint.pt").exists():
        start_from_model(name, init_from, work, data=data, recipe=recipe)
        resume = True

    def step_loss(index: list[int], update: int):
        batch = data.make_batch(index)
        return (model.loss(batch, label_smoothing=recipe.label_smoothing),
                {"tokens": int(batch.tgt_mask.sum()), "sentences": len(batch)})

    st = train_in_folder(work, model, opt, sched, recipe=asdict(recipe), step_loss=step_loss,
                         lengths=data.lengths("train"), max_tokens=recipe.max_tokens,
                         max_updates=stop, seed=recipe.seed, clip=recipe.clip,
                         eval_every=recipe.eval_every,
                         evaluate=(lambda update, seconds: _evaluate_point(model, data, update, seconds))
                         if data.valid else None,
                         resume=resume, checkpoint_minutes=checkpoint_minutes, quiet=quiet)
    return model, st


def _optimizer(model: nn.Module, recipe: Recipe, last_update: int = 0):
    """Adam(0.9, 0.98) and the recipe's schedule, the schedule standing at ``last_update`` updates done."""
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr, betas=(0.9, 0.98), eps=1e-9)
    for group in opt.param_groups:
        group.setdefault("initial_lr", recipe.lr)               # what LambdaLR needs to start past update 0
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_factor(recipe), last_epoch=last_update - 1)


def start_from_model(name: str, directory: str | Path, work: str | Path, *, data: TranslationData,
                     recipe: Recipe | None = None) -> dict:
    """Write ``work/checkpoint.pt`` so that :func:`train` (``resume=True``) continues the model in ``directory``.

    The run goes on from the model's last update as :func:`export` stored it: its weights (as stored, so int8
    rows dequantised), the schedule at that update, the same place in the epoch's batches, and its curve,
    training log, seconds and hardware. What the export did not keep cannot be restored: Adam's moment
    estimates start again from zero (with Adam's bias correction, the first steps are sign-like steps of the
    current learning rate), and dropout draws new numbers. The recipe must be the model's up to its length, and
    the model must stop before the recipe's cool-down begins. Returns the ``continued_from`` record.
    """
    check_choice(name, "name", list(RECIPES))
    if recipe is not None and not isinstance(recipe, Recipe):
        raise TypeError(f"recipe must be a Recipe or None, got {type(recipe).__name__}")
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData, got {type(data).__name__}")
    for value, what in ((directory, "directory"), (work, "work")):
        if not isinstance(value, (str, Path)):
            raise TypeError(f"{what} must be a folder path (str or Path), got {type(value).__name__}")
    recipe = recipe or RECIPES[name]
    work = Path(work)
    if (work / "checkpoint.pt").exists():
        raise FileExistsError(f"{work / 'checkpoint.pt'} exists: resume it, or remove it to start from {directory}")
    start, report = load_model(name, directory, data=data)
    stored = Recipe(**report["recipe"])
    done = report["updates"]
    if replace(stored, max_updates=recipe.max_updates, cooldown=recipe.cooldown) != recipe:
        raise ValueError(f"{directory} was trained with another recipe: {asdict(stored)} (now {asdict(recipe)})")
    if done > recipe.max_updates - recipe.cooldown:
        raise ValueError(f"{directory} has {done} updates, past the start of the cool-down at "
                         f"{recipe.max_updates - recipe.cooldown}: a cool-down cannot be branched off there")
    epoch, position = _stopped_at(report, data, recipe, directory)
    opt, sched = _optimizer(start, recipe, last_update=done)          # fresh Adam; the schedule at `done`
    origin = {"directory": str(directory), "file_sha256": report["file_sha256"], "updates": done,
              "train_seconds": report["train_seconds"], "hardware": report["hardware"],
              "optimizer": "Adam moments restarted from zero; weights as stored (int8 rows dequantised)"}
    state = {"update": done, "epoch": epoch, "position": position,
             "seconds": report["train_seconds"], "curve": report["curve"], "train": report["train_log"],
             "hardware": report["hardware"], "continued_from": origin}
    work.mkdir(parents=True, exist_ok=True)
    save_state_atomic(work / "checkpoint.pt", {"model": start.state_dict(), "optimizer": opt.state_dict(),
                                               "scheduler": sched.state_dict(), "state": state,
                                               "recipe": asdict(recipe), "rng": torch.get_rng_state()})
    return origin


def _stopped_at(report: dict, data: TranslationData, recipe: Recipe, directory) -> tuple[int, int]:
    """(epoch, batch within it) where an exported run stopped: recorded by :func:`export` since the cool-downs;
    for an older report, from its training log when that ends at the last update (one line per 50 updates)."""
    if "stopped_at" in report:
        return report["stopped_at"]["epoch"], report["stopped_at"]["position"]
    last = report["train_log"][-1] if report["train_log"] else {"update": 0}
    if last["update"] != report["updates"]:
        raise ValueError(f"{directory}: its report does not say where in the data it stopped (the training log "
                         f"ends at update {last['update']}, the model at {report['updates']})")
    epoch = int(last["epoch"])
    return epoch, round((last["epoch"] - epoch) * _epoch_len(data, recipe, epoch))


def _evaluate_point(model, data, update, seconds) -> dict:
    start = time.monotonic()
    report = evaluate(model, data, "valid")
    return {"update": update, "seconds": round(seconds, 1), "valid_nll": round(valid_nll(model, data), 4),
            "valid_bleu": round(report.bleu, 2), "valid_chrf": round(report.chrf, 2),
            "eval_seconds": round(time.monotonic() - start, 1)}


# --------------------------------------------------------------------------- the committed model


def export(name: str, model: nn.Module, state: dict, out: str | Path, data: TranslationData, *,
           recipe: Recipe | None = None) -> dict:
    """Write ``out/model.safetensors`` (int8 matrices, :mod:`coursekit.training.compact`) and ``out/report.json``.

    Every figure of the report is measured on the weights *as stored*: the model is loaded back from the file
    it was just written to before it translates anything.
    """
    check_choice(name, "name", list(RECIPES))
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData, got {type(data).__name__}")
    if "benchmark" not in data.info or "bands" not in data.info:
        raise ValueError("data must come from load_benchmark (its info has no 'benchmark' entry)")
    lacking = sorted({"update", "epoch", "position", "seconds", "train", "curve"} - set(state))
    if lacking:
        raise ValueError(f"state must be the state train() returns; it lacks {lacking}")
    recipe = recipe or RECIPES[name]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = save_checkpoint(out / "model.safetensors", model, model.config, compact=True,
                           extra={"recipe": asdict(recipe), "model": name,
                                  "tokenizer_sha256": data.info["benchmark"]["tokenizer_sha256"]})
    model = build_model(recipe, len(data.tgt_vocab))
    load_checkpoint(path, model, expected_config=model.config)       # exactly what a reader of the file gets
    model.eval()
    start = time.monotonic()
    report = evaluate(model, data, "test")
    test_seconds = time.monotonic() - start
    indices = subset_indices(data)
    subset = evaluate(model, data, "test", indices=indices)          # what the reload test in CI reproduces
    shown = showcase(data)
    hyps = translate_sentences(model, data, [r["source"] for r in shown])

    figures = {
        "model": name, "recipe": asdict(recipe), "benchmark": data.info["benchmark"],
        "parameters": count_parameters(model),
        "updates": state["update"],
        "epochs": round(state["epoch"] + state["position"] / _epoch_len(data, recipe), 3),
        "stopped_at": {"epoch": state["epoch"], "position": state["position"]},   # where a continuation goes on
        "train_seconds": round(state["seconds"], 1), "hardware": state.get("hardware", hardware()),
        "test": {**benchmark_figures(report, data), "decode_seconds": round(test_seconds, 1)},
        "test_subset": {"indices": indices, "bleu": subset.bleu, "chrf": subset.chrf,
                        "hypotheses": subset.hypotheses},
        "target_tokens_per_wall_second": round(sum(r["tokens"] for r in state["train"]) / max(state["seconds"], 1), 1),
        "curve": state["curve"], "train_log": state["train"],
        "showcase": [{**r, "hypothesis": h} for r, h in zip(shown, hyps)],
        "samples": report.examples(20),
        "long_samples": [{"source": report.sources[i], "reference": report.references[i],
                          "hypothesis": report.hypotheses[i]}
                         for i in [k for k, s in enumerate(report.sources) if len(s.split()) > 15][:10]],
        "storage": STORAGE, "file_sha256": sha256_file(path), "size_bytes": path.stat().st_size,
        "reproduce": f"python -m coursekit.translation train {name} --work runs/{name} --out data/translation/{name}",
    }
    if "continued_from" in state:     # how this file was made: the recipe's tail run on a committed model
        figures["continued_from"] = {**state["continued_from"], "hardware_after": hardware()}
        figures["made_by"] = (f"python -m coursekit.translation train {name} --work runs/{name}-continued "
                              f"--init-from DIR --out data/translation/{name}, DIR holding the model of sha256 "
                              f"{state['continued_from']['file_sha256'][:12]}… (git history of "
                              f"data/translation/{name})")
    (out / "report.json").write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return figures


def _epoch_len(data: TranslationData, recipe: Recipe, epoch: int = 0) -> int:
    """Batches in epoch ``epoch`` of the recipe (the order train_in_folder draws: seed × 1000 + epoch)."""
    src_len, tgt_len = data.lengths("train")
    return len(token_batches(src_len, tgt_len, recipe.max_tokens,
                             torch.Generator().manual_seed(recipe.seed * 1000 + epoch)))


def load_model(name: str, directory: str | Path | None = None, *, data: TranslationData | None = None
               ) -> tuple[nn.Module, dict]:
    """The committed model ``name`` (fp32, eval mode) and its report; the file's sha256 must match the report."""
    if name not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {name!r}")
    if directory is not None and not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a folder path (str or Path) or None, got {type(directory).__name__}")
    directory = Path(directory) if directory is not None else model_dir("translation") / name
    report_path = directory / "report.json"
    reproduce = f"python -m coursekit.translation train {name} --work runs/{name} --out {directory}"
    if not report_path.is_file():
        raise FileNotFoundError(f"no report at {report_path}; make the model with `{reproduce}`")
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{report_path} is not valid JSON ({exc}); make the model again with `{reproduce}`") from None
    path = directory / "model.safetensors"
    recorded = report.get("file_sha256") if isinstance(report, dict) else None
    if path.is_file() and sha256_file(path) != recorded:
        raise ValueError(f"{path} does not match its report (sha256 {sha256_file(path)[:12]}… vs "
                         f"{str(recorded)[:12]}…): a truncated or replaced file; re-run `{reproduce}`")

    def build(config: dict, extra: dict) -> nn.Module:
        recipe = Recipe(**extra["recipe"])
        if extra["model"] != name:
            raise ValueError(f"{path} holds the {extra['model']!r} model, not {name!r}")
        if data is not None and extra["tokenizer_sha256"] != data.info["benchmark"]["tokenizer_sha256"]:
            raise ValueError(f"{path} was trained with another tokenizer than the benchmark's")
        return build_model(recipe, config["tgt_vocab_size"])

    model, _ = load_model_directory(directory, build, reproduce=reproduce)
    return model.eval(), report
