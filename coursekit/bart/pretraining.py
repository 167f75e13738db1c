"""Pre-training the course's small BART on monolingual English and French (notebook 11).

Lewis et al. 2020 pre-train BART by **text infilling** — spans with Poisson(3) lengths covering 30 % of
the tokens, each replaced by one ``<mask>`` (§2.2) — and reconstructing the original document. The
recipe here is that objective on the corpus of :mod:`coursekit.bart.corpus` (English of one half of the
benchmark's training pairs, French of the other half, SST-2 training sentences; one sentence per
document, in the benchmark's BPE plus ``<mask>``). Sentence permutation needs documents of several
*related* sentences; Tatoeba's sentences are unrelated, so the recipe uses text infilling alone (Table 1
of the paper: text infilling alone is within a few tenths of the best combination).

:func:`pretrain` checkpoints every few minutes into a work folder and resumes exactly (``--resume``);
:func:`export` writes the committed model: safetensors with its content hash and recipe, the matrices stored as
int8 with one scale per output channel (:mod:`coursekit.training.compact`, a quarter of their fp32 size), and a
report whose figures are measured on the weights as loaded back from that file. :func:`recompact` rewrites a
model committed in fp16 that way (keeping its training record, re-measuring the rest).
:func:`denoising_accuracy` measures what the issue asks of a working denoiser on held-out sentences:
the share of *uncorrupted* tokens the decoder copies (teacher forced, argmax) and the share of *masked*
tokens it fills, next to the unigram guess (always the most frequent piece).

``python -m coursekit.bart pretrain --work runs/bart --out data/bart`` reproduces it;
``python -m coursekit.bart denoise --json`` prints the reconstruction figures of the committed weights;
``python -m coursekit.bart recompact`` rewrites an fp16 ``data/bart`` as int8.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.bart.batches import seq2seq_batch
from coursekit.bart.corpus import (
    RECIPE,
    BartRecipe,
    BartVocab,
    PretrainingCorpus,
    _check_corpus,
    _check_documents,
    _check_recipe,
    _check_vocab,
    _check_vocab_id,
    build_corpus,
    held_out_sentences,
)
from coursekit.bart.model import Bart, BartConfig
from coursekit.bart.noising import text_infilling
from coursekit.data import model_dir, sha256_file
from coursekit.text import token_batches
from coursekit.training.compact import STORAGE
from coursekit.training.loop import (
    checkpoint_storage,
    count_parameters,
    inverse_sqrt,
    load_checkpoint,
    load_model_directory,
    read_checkpoint_metadata,
    save_checkpoint,
)
from coursekit.training.resumable import train_in_folder
from coursekit.validation import check_int as _check_int
from coursekit.validation import check_positive_float, check_positive_int

__all__ = ["build_bart", "continue_from", "first_stage_record", "corrupt", "denoising_accuracy", "denoising_report",
           "pretrain", "export", "load_pretrained_bart", "recompact"]


def denoising_report(directory: str | Path | None = None, *, seed: int = 1234) -> dict:
    """What ``python -m coursekit.bart denoise`` prints: the committed model's copy and fill accuracy on the
    held-out sentences (a fresh corruption per ``seed``) next to the unigram guess, shown as text (``"."``) and
    as the BPE piece it is (``".</w>"``). The rates are exact (the command rounds them for printing)."""
    _check_int(seed, "seed")
    model, vocab, report = load_pretrained_bart(directory)
    recipe = BartRecipe(**report["recipe"])
    docs = held_out_sentences(recipe, vocab)
    acc = denoising_accuracy(model, docs, vocab, recipe, unigram_top=vocab.itos.index(report["unigram_top"]),
                             seed=seed)
    piece = report["unigram_top"]
    return {"held_out_sentences": len(docs), "mask_ratio": recipe.mask_ratio, **acc,
            "unigram_guess": piece.removesuffix("</w>"), "unigram_guess_piece": piece, "updates": report["updates"]}


def build_bart(recipe: BartRecipe, vocab: BartVocab) -> Bart:
    """The untrained BART of ``recipe`` (seeded by the caller)."""
    _check_recipe(recipe)
    _check_vocab(vocab)
    a = recipe.arch
    return Bart(BartConfig(vocab_size=len(vocab), d_model=a["d_model"], n_heads=a["n_heads"], d_ff=a["d_ff"],
                           n_encoder_layers=a["n_encoder_layers"], n_decoder_layers=a["n_decoder_layers"],
                           max_len=a["max_len"], dropout=a["dropout"], pad_id=vocab.pad_id, bos_id=vocab.bos_id,
                           eos_id=vocab.eos_id, decoder_start_id=vocab.eos_id))


def corrupt(docs: list[list[int]], vocab: BartVocab, recipe: BartRecipe, generator: torch.Generator):
    """Text infilling of each document → (seq2seq batch of corrupted → original, hidden (B, T) bool)."""
    _check_vocab(vocab)
    _check_recipe(recipe)
    docs = _check_documents(docs, "docs", len(vocab), what="corrupt")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    pairs = [text_infilling(torch.tensor(d), mask_id=vocab.mask_id, ratio=recipe.mask_ratio,
                            poisson_lambda=recipe.poisson_lambda, special_ids=vocab.special_ids,
                            generator=generator, return_masked=True) for d in docs]
    batch = seq2seq_batch([p[0] for p in pairs], docs, pad_id=vocab.pad_id, decoder_start_id=vocab.eos_id)
    hidden = torch.zeros_like(batch.tgt_keep)
    for row, (_, h) in enumerate(pairs):
        hidden[row, : len(h)] = h
    return batch, hidden


@torch.no_grad()
def denoising_accuracy(model: Bart, docs: list[list[int]], vocab: BartVocab, recipe: BartRecipe = RECIPE, *,
                       unigram_top: int | None = None, seed: int = 1234, batch_size: int = 250) -> dict:
    """Teacher-forced reconstruction of ``docs`` corrupted by text infilling (a fixed corruption per ``seed``).

    ``copy_accuracy``: argmax = original at the content tokens the corruption kept; ``fill_accuracy``: at
    the tokens it hid; ``loss``: cross-entropy per target token; ``unigram_fill_accuracy``: always
    guessing ``unigram_top`` at the hidden tokens. A corruption that hides no token (or every token) leaves
    the fill (or copy) accuracy undefined: that is a ``ValueError``, not a division by zero.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    _check_vocab(vocab)
    _check_recipe(recipe)
    docs = _check_documents(docs, "docs", len(vocab), what="denoising_accuracy")
    if unigram_top is not None:
        _check_vocab_id(unigram_top, "unigram_top", len(vocab))
    _check_int(seed, "seed")
    check_positive_int(batch_size, "batch_size")
    was = model.training
    model.eval()
    device = next(model.parameters()).device
    g = torch.Generator().manual_seed(seed)
    special = torch.tensor(vocab.special_ids)
    n = Counter()
    for start in range(0, len(docs), batch_size):
        batch, hidden = corrupt(docs[start:start + batch_size], vocab, recipe, g)
        batch = batch.to(device)
        logits = model(batch.src, batch.tgt_in, src_keep=batch.src_keep, tgt_keep=batch.tgt_keep)  # (B, T, V)
        right = (logits.argmax(-1) == batch.tgt_out).cpu()
        content = batch.tgt_keep.cpu() & ~torch.isin(batch.tgt_out.cpu(), special)
        copy, fill = content & ~hidden, content & hidden
        n["copy"] += int(copy.sum())
        n["copy_right"] += int(right[copy].sum())
        n["fill"] += int(fill.sum())
        n["fill_right"] += int(right[fill].sum())
        if unigram_top is not None:
            n["unigram_right"] += int((batch.tgt_out.cpu()[fill] == unigram_top).sum())
        keep = batch.tgt_keep
        n["nll"] += F.cross_entropy(logits[keep], batch.tgt_out[keep], reduction="sum").item()
        n["targets"] += int(keep.sum())
    model.train(was)
    for kind, what in (("fill", "hid no token"), ("copy", "hid every token")):
        if n[kind] == 0:
            raise ValueError(f"the corruption {what} of these documents (mask_ratio={recipe.mask_ratio}): the "
                             f"{kind} accuracy is undefined")
    out = {"copy_accuracy": n["copy_right"] / n["copy"], "fill_accuracy": n["fill_right"] / n["fill"],
           "loss": n["nll"] / n["targets"], "n_copy": n["copy"], "n_fill": n["fill"], "seed": seed}
    if unigram_top is not None:
        out["unigram_fill_accuracy"] = n["unigram_right"] / n["fill"]
    return out


# --------------------------------------------------------------------------- pre-training with checkpoints


def pretrain(work: str | Path, *, recipe: BartRecipe = RECIPE, corpus: PretrainingCorpus | None = None,
             resume: bool = False, max_updates: int | None = None, checkpoint_minutes: float = 3.0,
             quiet: bool = False) -> tuple[Bart, dict, PretrainingCorpus]:
    """Denoising pre-training in ``work`` (``checkpoint.pt``, ``train.log``); ``resume=True`` continues exactly:
    the batches of an epoch depend on the seed and epoch, the noise of an update on the seed and update."""
    _check_recipe(recipe)
    _check_corpus(corpus, optional=True)
    check_positive_float(checkpoint_minutes, "checkpoint_minutes")
    if max_updates is not None:
        check_positive_int(max_updates, "max_updates")
        recipe = replace(recipe, max_updates=max_updates)
    corpus = corpus or build_corpus(recipe)
    vocab = corpus.vocab
    torch.manual_seed(recipe.seed)
    model = build_bart(recipe, vocab)
    if recipe.init:
        continue_from(model, recipe)
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr, betas=(0.9, 0.98), eps=1e-6)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, inverse_sqrt(recipe.warmup))

    def step_loss(index: list[int], update: int):
        noise = torch.Generator().manual_seed(recipe.seed * 1_000_003 + update)
        batch, _ = corrupt([corpus.train[i] for i in index], vocab, recipe, noise)
        logits = model(batch.src, batch.tgt_in, src_keep=batch.src_keep, tgt_keep=batch.tgt_keep)
        loss = F.cross_entropy(logits[batch.tgt_keep], batch.tgt_out[batch.tgt_keep])
        return loss, {"tokens": int(batch.tgt_keep.sum()) + int(batch.src_keep.sum())}

    lengths = [len(d) for d in corpus.train]
    st = train_in_folder(work, model, opt, sched, recipe=asdict(recipe), step_loss=step_loss,
                         lengths=(lengths, lengths), max_tokens=recipe.max_tokens, max_updates=recipe.max_updates,
                         seed=recipe.seed, clip=recipe.clip, eval_every=recipe.eval_every,
                         evaluate=lambda update, seconds: _evaluate(model, corpus, recipe, update, seconds),
                         evaluate_at_start=True, resume=resume, checkpoint_minutes=checkpoint_minutes, quiet=quiet)
    return model, st, corpus


def _first_stage_file(recipe: BartRecipe, name: str, *, empty: str, missing: str) -> Path:
    """``recipe.init / name``, the file of the first stage's folder that a second-stage recipe needs; ``empty`` and
    ``missing`` say what a recipe without ``init``, or a folder without that file, lacks."""
    _check_recipe(recipe)
    if not recipe.init:
        raise ValueError(f"recipe.init is empty: {empty}")
    path = Path(recipe.init) / name
    if not path.is_file():
        raise FileNotFoundError(f"{missing} at {path}")
    return path


def continue_from(model: Bart, recipe: BartRecipe) -> Bart:
    """Load into ``model`` the weights of the committed model in ``recipe.init`` (as stored: int8 dequantised),
    once its ``model.safetensors`` has the content hash ``recipe.init_sha256`` and its architecture is ``model``'s:
    the second, in-domain stage continues the first instead of starting again (Gururangan et al. 2020)."""
    if not isinstance(model, Bart):
        raise TypeError(f"model must be a coursekit.bart.model.Bart, got {type(model).__name__}")
    path = _first_stage_file(recipe, "model.safetensors", empty="there is no model to continue from",
                             missing="no model to continue from")
    if sha256_file(path) != recipe.init_sha256:
        raise ValueError(f"{path} has sha256 {sha256_file(path)[:12]}…, the recipe continues from "
                         f"{recipe.init_sha256[:12]}…: another model than the one this run started from")
    with torch.random.fork_rng(devices=[]):                  # building the empty model draws weights
        start, _, _ = load_pretrained_bart(recipe.init)
    if start.config != model.config:
        raise ValueError(f"the model in {recipe.init} has another architecture ({start.config}) than the recipe's "
                         f"({model.config})")
    model.load_state_dict(start.state_dict())
    return model


def _evaluate(model: Bart, corpus: PretrainingCorpus, recipe: BartRecipe, update: int, seconds: float) -> dict:
    start = time.monotonic()
    acc = denoising_accuracy(model, corpus.held_out, corpus.vocab, recipe, unigram_top=corpus.unigram_top)
    model.train()
    return {"update": update, "seconds": round(seconds, 1), "held_out_loss": round(acc["loss"], 4),
            "copy_accuracy": round(acc["copy_accuracy"], 4), "fill_accuracy": round(acc["fill_accuracy"], 4),
            "unigram_fill_accuracy": round(acc["unigram_fill_accuracy"], 4),
            "eval_seconds": round(time.monotonic() - start, 1)}


# --------------------------------------------------------------------------- the committed model


def _reproduce(out, recipe: BartRecipe | None = None) -> str:
    if recipe is not None and recipe.init:
        return (f"python -m coursekit.bart pretrain --work runs/bart-stage1 --out runs/bart-stage1; "
                f"python -m coursekit.bart pretrain --continue-from runs/bart-stage1 --work runs/bart-reviews "
                f"--out {out}")
    return f"python -m coursekit.bart pretrain --work runs/bart --out {out}"


def export(model: Bart, state: dict, corpus: PretrainingCorpus, out: str | Path, *,
           recipe: BartRecipe = RECIPE) -> dict:
    """Write ``out/model.safetensors`` (int8 matrices with one scale per output channel, fp16 vectors:
    :mod:`coursekit.training.compact`; content hash) and ``out/report.json``.

    ``model`` is the fp32 model :func:`pretrain` returns; it is left as it is. Every figure of the report
    (``held_out``, ``examples``) is measured on the weights *as stored*: a fresh model is loaded back from the
    file just written (dequantised to fp32, on the CPU, exactly what :func:`load_pretrained_bart` gives a reader)
    before anything is measured.
    """
    if not isinstance(model, Bart):
        raise TypeError(f"model must be a coursekit.bart.model.Bart, got {type(model).__name__}")
    _check_corpus(corpus)
    _check_recipe(recipe)
    needed = ("update", "epoch", "position", "seconds", "hardware", "curve", "train")
    lacking = sorted(k for k in needed if not isinstance(state, dict) or k not in state)
    if lacking:
        raise ValueError(f"state must be the training state of pretrain(); it lacks {lacking}")
    out = Path(out)
    training = {"recipe": asdict(recipe), "corpus": corpus.sources, "parameters": count_parameters(model),
                "updates": state["update"],
                "epochs": round(state["epoch"] + state["position"] / _epoch_len(corpus, recipe), 3),
                "train_seconds": round(state["seconds"], 1), "hardware": state["hardware"],
                "curve": state["curve"], "train_log": state["train"],
                "unigram_top": corpus.vocab.itos[corpus.unigram_top], "reproduce": _reproduce(out, recipe)}
    if recipe.init:
        training["first_stage"] = first_stage_record(recipe)
    return _write_measured(model, corpus, recipe, out, training)


#: What the report of a second-stage model keeps of the first stage's report (its run and figures).
FIRST_STAGE_FIELDS = ("recipe", "corpus", "updates", "epochs", "train_seconds", "hardware", "curve", "held_out",
                      "file_sha256", "reproduce")


def first_stage_record(recipe: BartRecipe) -> dict:
    """The first stage's run, from the report beside the model ``recipe.init`` continued (whose weights have
    ``recipe.init_sha256``): the second stage's report carries it, so the whole recipe stays on record once that
    folder is gone."""
    path = _first_stage_file(recipe, "report.json", empty="a first-stage model has no first stage",
                             missing="no report of the first stage")
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("file_sha256") != recipe.init_sha256:
        raise ValueError(f"{path} describes the model {str(report.get('file_sha256'))[:12]}…, the recipe continued "
                         f"{recipe.init_sha256[:12]}…")
    lacking = [k for k in FIRST_STAGE_FIELDS if k not in report]
    if lacking:
        raise ValueError(f"{path} lacks {lacking}: not a report written by export()")
    return {k: report[k] for k in FIRST_STAGE_FIELDS}


#: The fields of a report that record the training run (what :func:`recompact` keeps as they are).
_TRAINING_FIELDS = ("recipe", "corpus", "parameters", "updates", "epochs", "train_seconds", "hardware", "curve",
                    "train_log", "unigram_top", "reproduce")


def _write_measured(model: Bart, corpus: PretrainingCorpus, recipe: BartRecipe, out: Path, training: dict,
                    recompacted_from: dict | None = None) -> dict:
    """Store ``model`` compactly in ``out``, load it back, measure the report's figures on what was loaded, and
    write ``out/report.json`` (what :func:`export` and :func:`recompact` share).

    ``training`` holds :data:`_TRAINING_FIELDS`. The weights are written under a temporary name and take the
    place of ``model.safetensors`` only once the figures are measured, so a failure while measuring leaves the
    files of ``out`` as they were (an in-place :func:`recompact` keeps a loadable model).
    """
    out.mkdir(parents=True, exist_ok=True)
    vocab = corpus.vocab
    path, partial = out / "model.safetensors", out / "model.safetensors.partial"
    try:
        save_checkpoint(partial, model, model.config, compact=True,
                        extra={"recipe": asdict(recipe), "tokenizer_sha256": vocab.subwords.sha256(),
                               "mask_id": str(vocab.mask_id)})
        stored = _load_stored(partial, vocab, training["reproduce"])       # exactly what a reader of the file gets
        held_out = denoising_accuracy(stored, corpus.held_out, vocab, recipe, unigram_top=corpus.unigram_top)
        examples = []
        g = torch.Generator().manual_seed(7)
        for doc in corpus.held_out[:5] + corpus.held_out[recipe.n_held_out:recipe.n_held_out + 5]:
            batch, _ = corrupt([doc], vocab, recipe, g)
            restored = stored.generate(batch.src, max_len=len(doc) + 4).tokens[0]
            examples.append({"original": vocab.detokenize(doc),
                             "corrupted": vocab.detokenize(batch.src[0].tolist()),
                             "reconstruction": vocab.detokenize(restored)})
        file_sha256, size_bytes = sha256_file(partial), partial.stat().st_size
        if path.exists():
            shutil.copymode(path, partial)            # safetensors creates files readable by their owner only
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    t = training
    report = {"recipe": t["recipe"], "corpus": t["corpus"], "parameters": t["parameters"], "updates": t["updates"],
              "epochs": t["epochs"], "train_seconds": t["train_seconds"], "hardware": t["hardware"],
              "held_out": held_out, "unigram_top": t["unigram_top"], "examples": examples,
              "curve": t["curve"], "train_log": t["train_log"], "storage": STORAGE,
              **({"first_stage": t["first_stage"]} if "first_stage" in t else {}),
              **({"recompacted_from": recompacted_from} if recompacted_from is not None else {}),
              "file_sha256": file_sha256, "size_bytes": size_bytes, "reproduce": t["reproduce"]}
    text = json.dumps(report, indent=1, ensure_ascii=False) + "\n"
    partial_report = out / "report.json.partial"
    partial_report.write_text(text, encoding="utf-8")
    partial_report.replace(out / "report.json")
    return report


def _load_stored(path: Path, vocab: BartVocab, reproduce: str) -> Bart:
    """A fresh BART (fp32, CPU, eval mode) with the weights of the checkpoint at ``path``; the global random
    state is left as it was (building the empty model draws its initial weights)."""
    config, extra = read_checkpoint_metadata(path)
    with torch.random.fork_rng(devices=[]):
        model = _builder(path, vocab, reproduce)(config, extra)
    load_checkpoint(path, model, expected_config=model.config)
    return model.eval()


def recompact(directory: str | Path | None = None, out: str | Path | None = None, *,
              corpus: PretrainingCorpus | None = None) -> dict:
    """Rewrite the committed BART of ``directory`` (default ``data/bart``), stored in fp16 (or fp32), as
    :func:`export` writes it now: int8 matrices with one scale per output channel, into ``out`` (default: the
    same directory; ``model.safetensors`` and ``report.json`` are replaced, nothing else is touched).

    The report keeps the training fields of the old one (recipe, corpus, parameters, updates, epochs,
    train_seconds, hardware, curve, train_log, unigram_top, reproduce); ``held_out`` and ``examples`` are measured
    again, as :func:`export` measures them, on the weights as loaded back from the new file; ``recompacted_from``
    records the old file (``file_sha256``, ``size_bytes``, ``storage``) and its ``held_out``. ``corpus`` gives the
    held-out sentences and the unigram guess; by default it is built from the report's recipe as :func:`pretrain`
    builds it (:func:`~coursekit.bart.corpus.build_corpus`), and it must match the report's ``corpus`` and
    ``unigram_top``.
    """
    for name, value in (("directory", directory), ("out", out)):
        if value is not None and not isinstance(value, (str, Path)):
            raise TypeError(f"{name} must be a folder path (str or Path) or None, got {type(value).__name__}")
    _check_corpus(corpus, optional=True)
    model, vocab, report = load_pretrained_bart(directory)
    directory = Path(directory) if directory is not None else model_dir("bart")
    out = Path(out) if out is not None else directory
    lacking = sorted(k for k in (*_TRAINING_FIELDS, "held_out", "size_bytes") if k not in report)
    if lacking:
        raise ValueError(f"{directory / 'report.json'} lacks {lacking}: recompact keeps the training record of a "
                         f"report written by export(); re-run `{_reproduce(directory)}` instead")
    storage = checkpoint_storage(directory / "model.safetensors")
    if storage == STORAGE:
        raise ValueError(f"{directory / 'model.safetensors'} is already stored as {storage!r}: nothing to recompact")
    recipe = BartRecipe(**report["recipe"])
    if corpus is None:
        corpus = build_corpus(recipe)
    if corpus.vocab.subwords.sha256() != vocab.subwords.sha256():
        raise ValueError("corpus was encoded with another tokenizer than the model's (the benchmark's BPE)")
    top = corpus.vocab.itos[corpus.unigram_top]
    if top != report["unigram_top"] or corpus.sources != report["corpus"]:
        raise ValueError(f"corpus is not the one the model of {directory} was trained on: its unigram_top {top!r} "
                         f"and sources {corpus.sources} vs the report's {report['unigram_top']!r} and "
                         f"{report['corpus']}")
    old = {"file_sha256": report["file_sha256"], "size_bytes": report["size_bytes"], "storage": storage,
           "held_out": report["held_out"]}
    return _write_measured(model, corpus, recipe, out, {k: report[k] for k in _TRAINING_FIELDS}, old)


def _epoch_len(corpus: PretrainingCorpus, recipe: BartRecipe) -> int:
    lengths = [len(d) for d in corpus.train]
    return len(token_batches(lengths, lengths, recipe.max_tokens, torch.Generator().manual_seed(recipe.seed * 1000)))


def load_pretrained_bart(directory: str | Path | None = None) -> tuple[Bart, BartVocab, dict]:
    """The committed pre-trained BART (fp32, eval mode), its vocabulary and report; hashes are checked.

    The file may store int8 matrices with their scales (what :func:`export` writes, dequantised here) or fp16
    weights (models committed before; fp16 → fp32 is exact)."""
    if directory is not None and not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a folder path (str or Path) or None, got {type(directory).__name__}")
    directory = Path(directory) if directory is not None else model_dir("bart")
    report_path = directory / "report.json"
    if not report_path.is_file():
        raise FileNotFoundError(f"no report at {report_path}; make the model with `{_reproduce(directory)}`")
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{report_path} is not valid JSON ({exc}); re-run `{_reproduce(directory)}`") from None
    lacking = sorted(k for k in ("file_sha256", "recipe") if not isinstance(report, dict) or k not in report)
    if lacking:
        raise ValueError(f"{report_path} is not a report of coursekit.bart.pretraining: it lacks {lacking}; "
                         f"re-run `{_reproduce(directory)}`")
    path = directory / "model.safetensors"
    if path.is_file() and sha256_file(path) != report["file_sha256"]:
        raise ValueError(f"{path} does not match its report (sha256 {sha256_file(path)[:12]}… vs "
                         f"{report['file_sha256'][:12]}…): a truncated or replaced file; re-run "
                         f"`{_reproduce(directory)}`")
    vocab = BartVocab()
    model, _ = load_model_directory(directory, _builder(path, vocab, _reproduce(directory)),
                                    reproduce=_reproduce(directory))
    return model.eval(), vocab, report


def _builder(path: Path, vocab: BartVocab, reproduce: str):
    """``build(config, extra)`` for :func:`~coursekit.training.loop.load_model_directory`: the empty fp32 BART
    of the checkpoint's recipe, once its metadata shows a BART of this module on ``vocab``'s tokenizer. The
    weights are loaded into fp32 parameters whatever the file stores (int8 dequantised, fp16 exactly)."""

    def build(config: dict, extra: dict) -> nn.Module:
        lacking = sorted(k for k in ("recipe", "tokenizer_sha256") if k not in extra)
        if lacking:
            raise ValueError(f"{path} is not a BART checkpoint of coursekit.bart.pretraining: its metadata lacks "
                             f"{lacking}; re-run `{reproduce}`")
        if extra.get("tokenizer_sha256") != vocab.subwords.sha256():
            raise ValueError(f"{path} was trained with another tokenizer than the benchmark's")
        return build_bart(BartRecipe(**extra["recipe"]), vocab)

    return build
