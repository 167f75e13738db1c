"""Pre-training a small BERT with MLM + NSP (or ELECTRA): the recipe of notebook 09 and the command that makes its
checkpoint.

Devlin et al. 2019, §3.1 and Appendix A.2. The recipe (:class:`coursekit.bert.corpus.PretrainConfig`), the
corpus and the batches are :mod:`coursekit.bert.corpus` (steps 1 and 2: WikiText-2 articles for MLM + NSP,
SST-2's training sentences for the MLM only, one WordPiece vocabulary, dynamically masked batches). Then:

3. **Training** (:func:`pretrain`): AdamW, linear warm-up + cosine decay, gradient clipping, in
   :func:`coursekit.training.resumable.train_steps_in_folder` — a checkpoint every few minutes and an exact
   ``--resume``, so a run of an hour or more survives an interruption. :func:`held_out_losses` measures
   both losses on the held-out batch.
4. **Checkpoint**: ``python -m coursekit.bert pretrain --out data/bert`` writes the weights (with
   the config), the tokenizer and a report (recipe, curves, times) with :func:`export`: the weights are
   stored as int8 with one scale per row (:func:`coursekit.bert.checkpoint.save_pretrained`), and the
   report's ``final`` held-out figures are measured on them as loaded back from the file
   (:func:`coursekit.bert.checkpoint.load_small_bert`), what every reader gets. :func:`recompact` does the same
   for a directory written earlier in full precision (``python -m coursekit.bert recompact``). The model
   directory on disk is :mod:`coursekit.bert.checkpoint`'s business.
5. **Domain-adaptive continuation** (``init_from``; Gururangan et al. 2020, "Don't Stop Pretraining"):
   a second run starts from a saved model and its tokenizer and goes on with more in-domain text per
   batch (packed SST-2 sentences). Its report carries the first run's report under ``continued_from``
   (:func:`coursekit.bert.checkpoint.stage_reports` and ``combined_history`` read the stages back).
6. **ELECTRA** (``objective="electra"``; Clark et al. 2020, :mod:`coursekit.bert.electra`): the same batches
   train a ``generator_layers``-layer generator MLM and the discriminator (the recipe's size) with
   replaced-token detection, ``L_MLM + rtd_weight · L_Disc``, and no NSP. :func:`held_out_electra_losses`
   measures the generator's MLM loss and the discriminator's loss and accuracy on the held-out batch. The
   run returns the *discriminator*, a :class:`coursekit.bert.model.Bert` of the same config as an MLM + NSP
   run's, which ``model.safetensors`` holds, so loading and SST-2 fine-tuning read it unchanged; the
   command also stores the generator and the detection head beside it (``electra.safetensors``), so that the
   committed figures are measured on what is stored and the generator can still fill in blanks.

At a CPU budget the MLM loss first sits near the unigram entropy (the model predicts frequent pieces
regardless of context) and NSP near ln 2; only after a couple of thousand steps does attention start to
use the context and both losses fall — which is why notebook 09 trains live for a few hundred steps and
then loads the committed run of the same recipe.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from coursekit.bert.checkpoint import (
    ELECTRA_FILE,
    load_electra,
    load_small_bert,
    origin_record,
    save_electra_parts,
    save_pretrained,
)
from coursekit.bert.corpus import (
    ELECTRA_FIELDS,
    PretrainConfig,
    PretrainingCorpus,
    _check_cfg,
    _check_corpus,
    build_corpus,
    held_out_batch,
    sample_batch,
    unigram_entropy,
)
from coursekit.bert.electra import Electra, _check_electra, electra_loss
from coursekit.bert.model import Bert, _check_bert
from coursekit.bert.objectives import IGNORE_INDEX, pretraining_loss
from coursekit.data import sha256_file
from coursekit.runtime import device as pick_device
from coursekit.training.compact import STORAGE
from coursekit.training.loop import checkpoint_storage, save_checkpoint, warmup_cosine
from coursekit.training.resumable import train_steps_in_folder
from coursekit.validation import check_int, check_labels, check_positive_float, check_positive_int

__all__ = ["WORK_TOKENIZER", "continue_from", "electra_evaluation", "export", "held_out_electra_losses",
           "held_out_losses", "keep_work_tokenizer", "pretrain", "recompact"]


@torch.no_grad()
def held_out_losses(model: Bert, batch: tuple[torch.Tensor, ...]) -> dict[str, float]:
    """MLM and NSP cross-entropy (nats) and NSP accuracy on a held-out batch (from :func:`held_out_batch`).

    Rows with the NSP label -100 (single sentences) count for the MLM loss only, in the NSP accuracy too.
    """
    _check_held_batch(model, batch)
    device = next(model.parameters()).device
    ids, segments, keep, mlm_labels, nsp_labels = (t.to(device) for t in batch)
    selected = mlm_labels != IGNORE_INDEX
    labelled = nsp_labels != IGNORE_INDEX
    if not selected.any():
        raise ValueError("the batch has no masked position: the held-out MLM loss is undefined")
    if not labelled.any():
        raise ValueError("the batch has no NSP label: the held-out NSP loss is undefined (add sentence pairs)")
    out = model(ids, segments, keep, mlm_positions=selected)
    return {"mlm": F.cross_entropy(out.mlm_logits, mlm_labels[selected]).item(),
            "nsp": F.cross_entropy(out.nsp_logits, nsp_labels).item(),
            "nsp_acc": (out.nsp_logits.argmax(-1) == nsp_labels)[labelled].float().mean().item()}


def _check_held_batch(model: Bert, batch) -> None:
    """What :func:`held_out_losses` needs: an MLM + NSP model and a five-part batch with labels it can score."""
    _check_bert(model)
    if model.mlm is None or model.nsp is None:
        raise ValueError("held_out_losses needs a model with MLM and NSP heads")
    if not isinstance(batch, (tuple, list)) or len(batch) != 5:
        got = f"{len(batch)} items" if isinstance(batch, (tuple, list)) else type(batch).__name__
        raise ValueError(f"batch must be (input_ids, token_type_ids, attention_mask, mlm_labels, nsp_labels), "
                         f"got {got}")
    check_labels(batch[3], "mlm_labels", model.config.vocab_size, ignore_index=IGNORE_INDEX)
    check_labels(batch[4], "nsp_labels", 2, ignore_index=IGNORE_INDEX)


@torch.no_grad()
def held_out_electra_losses(model: Electra, batch: tuple[torch.Tensor, ...], *, seed: int = 0,
                            temperature: float = 1.0) -> dict[str, float]:
    """ELECTRA on a held-out batch (from :func:`held_out_batch`; its NSP labels are not read): the generator's MLM
    cross-entropy ``mlm``, the discriminator's binary cross-entropy ``rtd`` and accuracy ``rtd_acc`` over the
    real tokens, the share of real tokens ``replaced``, and ``rtd_prior``, the binary cross-entropy of always
    predicting that share (what ``rtd`` must beat). The generator's samples come from a generator seeded with
    ``seed``, so every evaluation corrupts the batch with the same random numbers, at the run's sampling
    ``temperature``.
    """
    _check_electra(model)
    check_int(seed, "seed")
    if not isinstance(batch, (tuple, list)) or len(batch) != 5:
        got = f"{len(batch)} items" if isinstance(batch, (tuple, list)) else type(batch).__name__
        raise ValueError(f"batch must be (input_ids, token_type_ids, attention_mask, mlm_labels, nsp_labels), "
                         f"got {got}")
    device = next(model.parameters()).device
    ids, segments, keep, mlm_labels = (t.to(device) for t in batch[:4])
    if not bool((mlm_labels != IGNORE_INDEX).any()):
        raise ValueError("the batch has no masked position: the held-out MLM loss is undefined")
    _, parts = electra_loss(model, ids, segments, keep, mlm_labels, rtd_weight=0.0,
                            generator=torch.Generator().manual_seed(seed), temperature=temperature)
    p = parts["replaced"]
    parts["rtd_prior"] = 0.0 if p in (0.0, 1.0) else -(p * math.log(p) + (1 - p) * math.log(1 - p))
    return parts


def electra_evaluation(model: Electra, held: tuple[torch.Tensor, ...], cfg: PretrainConfig) -> dict[str, float]:
    """A run's ELECTRA evaluation: :func:`held_out_electra_losses` with the recipe's sampling temperature and the
    run's evaluation seed, ``cfg.seed + 2`` (apart from the batches' and the masks' draws), so that every
    evaluation during training and the export's measurement on the stored weights corrupt ``held`` alike."""
    _check_cfg(cfg)
    return held_out_electra_losses(model, held, seed=cfg.seed + 2, temperature=cfg.sample_temperature)


def continue_from(model: Bert, corpus: PretrainingCorpus, start: Bert, tokenizer, _report: dict, *,
                   directory: str) -> None:
    """Copy the weights of the model in ``directory`` into ``model`` (same architecture, same vocabulary)."""
    if start.config != model.config:
        raise ValueError(f"init_from={directory!r} holds a BERT with config {dataclasses.asdict(start.config)}, "
                         f"but the recipe builds {dataclasses.asdict(model.config)}")
    if corpus.tokenizer.get_vocab() != tokenizer.get_vocab():
        raise ValueError(f"the corpus was encoded with another vocabulary than init_from={directory!r}'s "
                         f"tokenizer.json: pass that tokenizer to build_corpus")
    model.load_state_dict(start.state_dict())


#: The vocabulary a run in a work folder was encoded with, kept beside its checkpoint: WordPiece training is not
#: deterministic across processes (pieces of equal frequency come out in another order, and ties at the end of the
#: vocabulary differ), so ``--resume`` must encode the text with this file, never with a vocabulary trained again.
WORK_TOKENIZER = "tokenizer.json"


def keep_work_tokenizer(work: str | Path, tokenizer, *, resume: bool) -> None:
    """A fresh run writes its tokenizer into ``work``; a resumed one must have been encoded with that file."""
    from tokenizers import Tokenizer

    work = Path(work)
    path, started = work / WORK_TOKENIZER, (work / "checkpoint.pt").exists()
    if not started:
        work.mkdir(parents=True, exist_ok=True)
        tokenizer.save(str(path))
    elif resume:
        if not path.is_file():
            raise ValueError(f"{work} holds a checkpoint but no {WORK_TOKENIZER} (a run started before coursekit "
                             f"kept it): which vocabulary its weights belong to cannot be checked, and WordPiece "
                             f"trained again gives other ids; copy the run's tokenizer there to resume it")
        if Tokenizer.from_file(str(path)).get_vocab() != tokenizer.get_vocab():
            raise ValueError(f"the corpus was encoded with another vocabulary than {path}, the one {work}'s checkpoint "
                             f"was trained with: build the corpus with that tokenizer (the command does on --resume)")


def pretrain(cfg: PretrainConfig, corpus: PretrainingCorpus | None = None, *, device: torch.device | str | None = None,
             progress: bool | None = None, snapshot_dir: str | Path | None = None, work: str | Path | None = None,
             resume: bool = False, checkpoint_minutes: float = 3.0, stop_at: int | None = None,
             whole_electra: bool = False) -> tuple[Bert | Electra, dict]:
    """Pre-train a BERT with MLM + NSP (BERT §3.1) following ``cfg``; return ``(model, report)``.

    ``report`` holds the config, the per-step training losses (``mlm``, ``nsp``), the held-out
    evaluations, the unigram entropy of the training pieces (the loss of a context-free predictor)
    and the wall and CPU time. With ``cfg.objective == "electra"`` the run trains ELECTRA's generator and
    discriminator (:mod:`coursekit.bert.electra`) and returns the discriminator: ``mlm`` is then the
    generator's loss, ``nsp`` is NaN, the history adds ``rtd``, ``rtd_acc`` and ``replaced`` per step, the
    evaluations are :func:`held_out_electra_losses`, and ``report["generator"]`` gives the generator's size.
    ``whole_electra=True`` returns such a run's whole :class:`coursekit.bert.electra.Electra` instead (what
    :func:`export` stores in two files).
    ``work`` keeps a checkpoint every ``checkpoint_minutes``, a log and the tokenizer (``resume=True`` continues
    it exactly, and only with the corpus encoded by that tokenizer; without ``work`` a temporary folder is used).
    ``snapshot_dir`` keeps the weights at every evaluation (``step_<n>.safetensors``), to measure how
    fine-tuning profits as pre-training goes on. ``progress=True`` prints every evaluation.
    """
    import tempfile

    _check_cfg(cfg)
    _check_corpus(corpus, optional=True)
    device = pick_device(device) if device is not None else torch.device("cpu")
    check_positive_float(checkpoint_minutes, "checkpoint_minutes")
    if stop_at is not None:
        check_positive_int(stop_at, "stop_at")
    if not isinstance(whole_electra, bool):
        raise TypeError(f"whole_electra must be a bool, got {type(whole_electra).__name__}")
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    start_from = load_small_bert(cfg.init_from) if cfg.init_from else None
    if corpus is None:
        corpus = build_corpus(cfg, tokenizer=start_from[1] if start_from else None)
    torch.manual_seed(cfg.seed)
    electra = cfg.objective == "electra"
    if electra:                                                                      # initialised on the CPU
        trained = Electra(cfg.model_config(corpus.tokenizer.get_vocab_size()), generator_layers=cfg.generator_layers)
        model = trained.discriminator                                                # the Bert that is kept
    else:
        model = trained = Bert(cfg.model_config(corpus.tokenizer.get_vocab_size()))
    if start_from is not None:
        continue_from(model, corpus, *start_from, directory=cfg.init_from)
    if work is not None:
        keep_work_tokenizer(work, corpus.tokenizer, resume=resume)
    trained = trained.to(device)                                                     # in place: model moves too
    decay = [p for p in trained.parameters() if p.dim() >= 2]                        # weights and embeddings
    no_decay = [p for p in trained.parameters() if p.dim() < 2]                      # biases and LayerNorm
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=cfg.learning_rate)
    scheduler = warmup_cosine(optimizer, min(cfg.warmup_steps, cfg.steps), cfg.steps, cfg.min_lr_ratio)
    rng, generator = random.Random(cfg.seed), torch.Generator().manual_seed(cfg.seed)
    held = held_out_batch(corpus, cfg)

    def evaluate(step: int) -> dict[str, float]:
        if electra:    # a fixed seed: every evaluation samples the same corruption, and the training draws go on
            return electra_evaluation(trained, held, cfg)
        return held_out_losses(model, held)

    def step_loss(step: int) -> tuple[torch.Tensor, dict]:
        batch = sample_batch(corpus, cfg, rng, generator)
        if electra:    # the NSP labels are not read; the masks' generator also draws the generator's samples
            return electra_loss(trained, *(t.to(device) for t in batch[:4]), rtd_weight=cfg.rtd_weight,
                                generator=generator, temperature=cfg.sample_temperature)
        return pretraining_loss(model, *(t.to(device) for t in batch))

    def snapshot(step: int, m: torch.nn.Module) -> None:
        kept = m.discriminator if electra else m     # the model that is kept: an ELECTRA run's discriminator
        if snapshot_dir is not None:
            save_checkpoint(Path(snapshot_dir) / f"step_{step}.safetensors", kept, kept.config)

    trained.eval()
    before = evaluate(0)
    recipe = dataclasses.asdict(cfg)
    if not electra:    # an MLM + NSP run's recipe is what it was before ELECTRA: an older checkpoint resumes
        recipe = {k: v for k, v in recipe.items() if k not in ("objective", *ELECTRA_FIELDS)}
    if cfg.layout == "nsp_pairs":    # likewise before the layouts: a run of NSP pairs resumes its older checkpoint
        del recipe["layout"]

    start, start_cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        st = train_steps_in_folder(work if work is not None else tmp, trained, optimizer, scheduler,
                                   recipe=recipe, step_loss=step_loss, steps=cfg.steps,
                                   generators={"batches": rng, "masks": generator}, clip=cfg.grad_clip,
                                   eval_every=cfg.eval_every, evaluate=evaluate,
                                   on_eval=snapshot, resume=resume, checkpoint_minutes=checkpoint_minutes,
                                   stop_at=stop_at, quiet=not progress)
    report = {
        "config": dataclasses.asdict(cfg), "model_config": dataclasses.asdict(model.config),
        "n_params": sum(p.numel() for p in model.parameters()), "device": str(device),
        "torch_threads": torch.get_num_threads(), "hardware": st["hardware"],
        "history": {"steps": list(range(1, st["step"] + 1)), "mlm": [p["mlm"] for p in st["parts"]],   # per step
                    "nsp": [p.get("nsp", math.nan) for p in st["parts"]], "evals": [[0, before], *st["evals"]]},
        "before": before, "final": st["evals"][-1][1],
        "uniform_mlm": math.log(model.config.vocab_size), "unigram_mlm": unigram_entropy(corpus),
        "wall_seconds": st["seconds"],                        # training time over all resumed pieces
        "cpu_seconds": time.process_time() - start_cpu,       # CPU time of this process (the last piece)
        "wall_seconds_this_process": time.perf_counter() - start,
    }
    report["objective"] = cfg.objective
    if electra:
        for key in ("rtd", "rtd_acc", "replaced"):
            report["history"][key] = [p[key] for p in st["parts"]]
        shared = {id(p) for p in model.parameters()}
        report["generator"] = {
            "model_config": dataclasses.asdict(trained.generator_config),
            "n_params": sum(p.numel() for p in trained.generator.parameters()),       # with the shared embeddings
            "n_params_own": sum(p.numel() for p in trained.generator.parameters() if id(p) not in shared),
        }
        report["rtd_head_params"] = sum(p.numel() for p in trained.rtd_head.parameters())
    if start_from is not None:
        report["continued_from"] = origin_record(cfg.init_from, start_from[2])
    trained.eval()
    return (trained if electra and whole_electra else model), report


# ---------------------------------------------------------------------------------------------
# The committed model directory: stored compactly, its final figures measured on the stored weights
# ---------------------------------------------------------------------------------------------

#: A stored figure reproduced within this (nats, or a share for the accuracy): the same batch on the same
#: weights, summed in another order by another thread count, differs by far less.
_REPRODUCED = 1e-3


def export(directory: str | Path, model: Bert | Electra, tokenizer, report: dict,
           held: tuple[torch.Tensor, ...]) -> dict:
    """Write ``directory`` as the committed model (int8 matrices, :func:`coursekit.bert.checkpoint.save_pretrained`)
    and return its report, whose ``final`` figures are measured on the weights *as loaded back* from the file.

    ``held`` is the run's held-out batch (:func:`coursekit.bert.corpus.held_out_batch` of its corpus and recipe):
    the model is read back with :func:`coursekit.bert.checkpoint.load_small_bert` (fp32, the dequantised file)
    and :func:`held_out_losses` on it gives ``report["final"]``; ``history["evals"]`` keeps the figures of the
    weights in training, its last row those of the fp32 weights before storage. An ELECTRA run is exported
    from its whole :class:`coursekit.bert.electra.Electra` (``pretrain(..., whole_electra=True)``): the
    discriminator goes to ``model.safetensors``, the generator and the detection head to ``electra.safetensors``
    (:func:`coursekit.bert.checkpoint.save_electra_parts`), and ``final`` is :func:`held_out_electra_losses` of
    both as loaded back, with the run's evaluation seed and temperature. Given only its discriminator, an
    ELECTRA run keeps its training-time ``final`` (``final_measured_on`` says which). The report also gets
    ``storage`` (``"int8-rowwise"``), ``model_sha256`` and ``size_bytes`` of the written file (and
    ``electra_sha256``, ``electra_size_bytes``).
    """
    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a path (str or Path), got {type(directory).__name__}")
    if not isinstance(report, dict):
        raise TypeError(f"report must be a dict (what pretrain returns), got {type(report).__name__}")
    whole = model if isinstance(model, Electra) else None
    discriminator = whole.discriminator if whole is not None else model
    _check_held_batch(discriminator, held)         # before anything is written (save_pretrained checks the rest)
    electra = report.get("objective") == "electra"
    if whole is not None and not electra:
        raise ValueError("an Electra was given but the report is not an ELECTRA run's (report['objective'])")
    directory = Path(directory)
    report = {**report, "storage": STORAGE}
    save_pretrained(directory, discriminator, tokenizer, report)
    if whole is not None:
        save_electra_parts(directory, whole)
        stored_electra, _, _ = load_electra(directory)
        report["final"] = electra_evaluation(stored_electra, held, PretrainConfig(**report["config"]))
        report["final_measured_on"] = f"model.safetensors + {ELECTRA_FILE} as loaded back"
        path = directory / ELECTRA_FILE
        report["electra_sha256"], report["electra_size_bytes"] = sha256_file(path), path.stat().st_size
    elif electra:
        report["final_measured_on"] = "the weights in training (the generator and the RTD head are not stored)"
    else:
        stored, _, _ = load_small_bert(directory)      # exactly what a reader of the directory gets
        report["final"] = held_out_losses(stored, held)
        report["final_measured_on"] = "model.safetensors as loaded back"
    path = directory / "model.safetensors"
    report["model_sha256"], report["size_bytes"] = sha256_file(path), path.stat().st_size
    (directory / "report.json").write_text(json.dumps(report, indent=1))
    return report


def recompact(directory: str | Path, out: str | Path | None = None, *,
              corpus: PretrainingCorpus | None = None) -> dict:
    """Store a model directory written in full precision compactly (:func:`export`) and return the new report.

    The model of ``directory`` (:func:`coursekit.bert.checkpoint.load_small_bert`) is written to ``out``
    (default: ``directory`` itself) with its tokenizer and report; the final held-out MLM and NSP figures are
    measured again on the weights as loaded back, on the held-out batch of the report's recipe
    (:func:`coursekit.bert.corpus.held_out_batch` of ``corpus``; by default :func:`coursekit.bert.corpus.build_corpus`
    of the recipe with the directory's tokenizer). That batch must first reproduce the report's ``final`` on
    the full-precision weights — else it is not the one the run measured, and nothing is written. The report
    records what it was made from under ``recompacted_from``: ``model_sha256``, ``size_bytes``, ``storage``
    and ``final`` of the full-precision file.
    """
    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a path (str or Path), got {type(directory).__name__}")
    if out is not None and not isinstance(out, (str, Path)):
        raise TypeError(f"out must be a path (str or Path) or None (write over directory), got {type(out).__name__}")
    _check_corpus(corpus, optional=True)
    directory = Path(directory)
    path = directory / "model.safetensors"
    model, tokenizer, report = load_small_bert(directory)
    storage = checkpoint_storage(path)                     # the file was verified by load_small_bert
    if storage == STORAGE:
        raise ValueError(f"{path} is already stored as {storage!r}: there is nothing to recompact")
    lacking = [key for key in ("config", "final") if not isinstance(report.get(key), dict)]
    if lacking:
        raise ValueError(f"{directory / 'report.json'} is not a report of python -m coursekit.bert pretrain: "
                         f"it lacks the dicts {lacking}")
    known = {f.name for f in dataclasses.fields(PretrainConfig)}
    unknown = sorted(set(report["config"]) - known)
    if unknown:
        raise ValueError(f"{directory / 'report.json'}: its recipe has fields PretrainConfig does not know: {unknown}")
    cfg = PretrainConfig(**report["config"])
    if cfg.objective == "electra":
        raise ValueError(f"{directory} holds an ELECTRA run: its final figures need the generator and the RTD head, "
                         f"which the directory does not hold, so they cannot be measured again")
    if corpus is None:
        corpus = build_corpus(cfg, tokenizer=tokenizer)
    elif corpus.tokenizer.get_vocab() != tokenizer.get_vocab():
        raise ValueError(f"corpus was encoded with another vocabulary than {directory / 'tokenizer.json'}")
    held = held_out_batch(corpus, cfg)
    again = held_out_losses(model, held)
    old = report["final"]
    if any(not isinstance(old.get(k), (int, float)) or abs(again[k] - old[k]) > _REPRODUCED for k in again):
        raise ValueError(f"the held-out batch of the report's recipe gives {again} on the full-precision weights of "
                         f"{path}, not the report's final {old}: it is not the batch the run measured "
                         f"(pass the run's corpus)")
    origin = {"model_sha256": sha256_file(path), "size_bytes": path.stat().st_size, "storage": storage,
              "final": old}
    return export(directory if out is None else out, model, tokenizer, {**report, "recompacted_from": origin}, held)

