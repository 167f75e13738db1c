"""Bad calls to coursekit.training (the loop: fit, schedules, checkpoints; resumable runs; the compact int8
storage of committed weights): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
Files are damaged in a temporary folder, never in ``data/``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import torch
from helpers.bad_inputs import NAN, Bad, bad_call_test, cut, f16, i64, randn, tmp
from helpers.tiny_models import toy_vectors
from safetensors.torch import save_file
from torch import nn

from coursekit.gpt.char import TrainConfig
from coursekit.training import compact, lora, preference, resumable
from coursekit.training import loop as train

EXEMPT = {
    "coursekit.training.preference.DPOResult": "a record dpo_loss fills from checked tensors; no input of its own",
    "coursekit.training.resumable.hardware": "takes no arguments: it describes the machine",
}


# ==============================================================================================
# coursekit.training.loop
# ==============================================================================================

def linear_problem():
    model = nn.Linear(3, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def mse(m, b):
    return nn.functional.mse_loss(m(b[0]), b[1])


def run_fit(batches=None, loss_fn=mse, **kw):
    model, opt = kw.pop("model", None), kw.pop("optimizer", None)
    default_model, default_opt = linear_problem()
    batches = [(torch.ones(4, 3), torch.zeros(4, 1))] if batches is None else batches
    kw = {"steps": 2, "progress": False} | kw
    return train.fit(model or default_model, opt if opt is not None else default_opt, batches, loss_fn, **kw)


def history(evals=(), losses=(1.0, 0.5)):
    h = train.History(steps=list(range(1, len(losses) + 1)), train_loss=list(losses))
    h.evals = list(evals)
    return h


def sgd():
    return torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)


def saved_checkpoint(name="ck.safetensors"):
    path = tmp() / name
    return train.save_checkpoint(path, nn.Linear(3, 2), {"d": 3})


def truncated_checkpoint():
    path = saved_checkpoint()
    cut(path)
    return path


def header_cut_checkpoint():
    path = saved_checkpoint()
    path.write_bytes(path.read_bytes()[:30])
    return path


def flipped_checkpoint():
    path = saved_checkpoint()
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0x01
    path.write_bytes(bytes(raw))
    return path


def junk_file():
    path = tmp() / "junk.safetensors"
    path.write_bytes(b"not a checkpoint at all")
    return path


def empty_file():
    path = tmp() / "empty.safetensors"
    path.write_bytes(b"")
    return path


def vectors_file():
    folder = tmp()
    toy_vectors().save(folder / "v")
    return folder / "v.safetensors"


def raw_safetensors(header: dict, payload: bytes = b"") -> Path:
    """A file in the safetensors layout (8-byte header length, JSON header, tensor bytes), written by hand."""
    head = json.dumps(header).encode()
    path = tmp() / "hand.safetensors"
    path.write_bytes(len(head).to_bytes(8, "little") + head + payload)
    return path


def without_config():
    path = tmp() / "plain.safetensors"
    save_file({"weight": torch.zeros(2, 3), "bias": torch.zeros(2)}, str(path))
    return path


def config_not_json():
    path = tmp() / "badconfig.safetensors"
    save_file({"weight": torch.zeros(2, 3), "bias": torch.zeros(2)}, str(path), metadata={"config": "{d: 3"})
    return path


def unknown_dtype():
    return raw_safetensors({"__metadata__": {"config": "{\"d\": 3}"},
                            "weight": {"dtype": "Q7", "shape": [2, 3], "data_offsets": [0, 24]},
                            "bias": {"dtype": "F32", "shape": [2], "data_offsets": [24, 32]}}, bytes(32))


def model_folder(make):
    """A model directory whose model.safetensors is made by ``make()``."""
    folder = tmp()
    make().rename(folder / "model.safetensors")
    return folder


class Configured(nn.Linear):
    def __init__(self, config):
        super().__init__(config["d"], 2)
        self.config = config


def load_folder(folder, build=lambda config, extra: Configured(config)):
    return train.load_model_directory(folder, build, reproduce="make-it")


TRAIN = [
    Bad("unknown key", train.History.eval_curve, lambda: history(evals=[(1, {"mse": 0.1})]).eval_curve("acc"),
        KeyError, r"no evaluation recorded 'acc'; the evaluations hold \['mse'\]"),
    Bad("no evaluations at all", train.History.eval_curve, lambda: history().eval_curve("acc"), KeyError,
        r"no evaluation recorded 'acc'; this run has no evaluations \(pass eval_fn to fit\)"),
    Bad("window 0", train.History.smoothed_loss, lambda: history().smoothed_loss(0), ValueError,
        r"window must be positive, got 0"),
    Bad("float window", train.History.smoothed_loss, lambda: history().smoothed_loss(2.5), TypeError,
        r"window must be an int, got float"),

    Bad("negative clip (gradients flipped)", train.fit, lambda: run_fit(clip=-1.0), ValueError,
        r"clip must be positive and finite, got -1.0"),
    Bad("clip 0 (no update at all)", train.fit, lambda: run_fit(clip=0.0), ValueError,
        r"clip must be positive and finite, got 0.0"),
    Bad("NaN clip", train.fit, lambda: run_fit(clip=NAN), ValueError, r"clip must be positive and finite, got nan"),
    Bad("steps 0", train.fit, lambda: run_fit(steps=0), ValueError, r"steps must be positive, got 0"),
    Bad("negative steps", train.fit, lambda: run_fit(steps=-1), ValueError, r"steps must be positive, got -1"),
    Bad("float steps", train.fit, lambda: run_fit(steps=2.5), TypeError, r"steps must be an int, got float 2.5"),
    Bad("an empty list of batches", train.fit, lambda: run_fit(batches=[]), ValueError,
        r"batches is empty: it gave no batch to train on"),
    Bad("an exhausted iterator", train.fit, lambda: run_fit(batches=iter([])), ValueError,
        r"batches is empty: it gave no batch to train on"),
    Bad("a tensor for batches", train.fit, lambda: run_fit(batches=torch.ones(3, 3)), TypeError,
        r"batches must be an iterable of batches or a function step -> batch, got Tensor"),
    Bad("an int for batches", train.fit, lambda: run_fit(batches=5), TypeError,
        r"batches must be an iterable of batches or a function step -> batch, got int"),
    Bad("eval_every 0", train.fit, lambda: run_fit(eval_every=0, eval_fn=lambda m: {}), ValueError,
        r"eval_every must be positive, got 0"),
    Bad("float eval_every", train.fit, lambda: run_fit(eval_every=1.5, eval_fn=lambda m: {}), TypeError,
        r"eval_every must be an int, got float"),
    Bad("per-example losses", train.fit, lambda: run_fit(loss_fn=lambda m, b: (m(b[0]) - b[1]).pow(2).flatten()),
        ValueError, r"loss_fn must return a scalar tensor, got shape \(4,\)"),
    Bad("a float loss", train.fit, lambda: run_fit(loss_fn=lambda m, b: 1.0), TypeError,
        r"loss_fn must return a scalar tensor, got float"),
    Bad("loss_fn not callable", train.fit, lambda: run_fit(loss_fn="mse"), TypeError,
        r"loss_fn must be a function \(model, batch\) -> loss, got str"),
    Bad("no optimizer", train.fit, lambda: run_fit(optimizer=0), TypeError,
        r"optimizer must be a torch.optim.Optimizer, got int"),
    Bad("a function for model", train.fit, lambda: run_fit(model=lambda x: x), TypeError,
        r"model must be an nn.Module, got function"),
    Bad("eval_fn returns a number", train.fit, lambda: run_fit(eval_fn=lambda m: 0.5), TypeError,
        r"eval_fn must return a dict of numbers, got float"),
    Bad("NaN loss stops the run", train.fit,
        lambda: run_fit(loss_fn=lambda m, b: m(b[0]).sum() * NAN), FloatingPointError,
        r"loss became nan at step 1"),

    Bad("zero warm-up", train.inverse_sqrt, lambda: train.inverse_sqrt(0), ValueError,
        r"warmup must be positive, got 0"),
    Bad("float warm-up", train.inverse_sqrt, lambda: train.inverse_sqrt(1.5), TypeError,
        r"warmup must be an int, got float"),
    Bad("negative warmup", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), -1, 10), ValueError,
        r"warmup must be (an int )?≥ 0, got -1"),
    Bad("float warmup", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), 2.5, 10), TypeError,
        r"warmup must be an int, got float"),
    Bad("total 0", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), 0, 0), ValueError,
        r"total must be positive, got 0"),
    Bad("min_ratio above 1", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), 1, 10, min_ratio=1.5),
        ValueError, r"min_ratio must lie in \[0, 1\], got 1.5"),
    Bad("no optimizer", train.warmup_cosine, lambda: train.warmup_cosine(None, 1, 10), TypeError,
        r"optimizer must be a torch.optim.Optimizer, got NoneType"),

    Bad("a dict for model", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", {"w": torch.zeros(1)}, {"d": 1}), TypeError,
        r"model must be an nn.Module, got dict"),
    Bad("a string for config", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), "cfg"), TypeError,
        r"config must be a dataclass instance or a dict, got str"),
    Bad("extra not a dict", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), {"d": 1}, extra=[1]), TypeError,
        r"extra must be a dict, got list"),
    Bad("extra that JSON cannot hold", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), {"d": 1}, extra={"w": torch.ones(1)}),
        TypeError, r"extra must be JSON-serialisable: .*Tensor"),
    Bad("config that JSON cannot hold", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), {"dtype": torch.float32}), TypeError,
        r"config must be JSON-serialisable: .*dtype"),

    Bad("missing file", train.stamp_content_hash, lambda: train.stamp_content_hash(tmp() / "nope.safetensors"),
        FileNotFoundError, r"no checkpoint at .*nope.safetensors"),
    Bad("metadata that is not a string", train.stamp_content_hash,
        lambda: train.stamp_content_hash(saved_checkpoint(), epoch=3), TypeError,
        r"metadata values must be str, got int for 'epoch'"),
    Bad("junk", train.stamp_content_hash,
        lambda: train.stamp_content_hash(junk_file()), ValueError,
        r"is not a safetensors file"),

    Bad("missing file", train.checkpoint_content, lambda: train.checkpoint_content(tmp() / "nope.safetensors"),
        FileNotFoundError, r"no checkpoint at .*nope.safetensors"),
    Bad("junk", train.checkpoint_content, lambda: train.checkpoint_content(junk_file()), ValueError,
        r"junk.safetensors is not a safetensors file \(or its header is damaged\); restore it or re-run"),
    Bad("empty file", train.checkpoint_content, lambda: train.checkpoint_content(empty_file()), ValueError,
        r"is not a safetensors file"),
    Bad("truncated", train.checkpoint_content, lambda: train.checkpoint_content(truncated_checkpoint()), ValueError,
        r"is truncated or damaged: its header announces .* bytes, the file has .*; restore it or re-run the "
        r"command that wrote it"),
    Bad("cut inside the header", train.checkpoint_content, lambda: train.checkpoint_content(header_cut_checkpoint()),
        ValueError, r"is not a safetensors file \(or its header is damaged\)"),
    Bad("a header without data offsets", train.checkpoint_content,
        lambda: train.checkpoint_content(raw_safetensors({"w": {"dtype": "F32", "shape": [1]}}, bytes(4))),
        ValueError, r"is not a safetensors file \(or its header is damaged\)"),
    Bad("a header entry that is not a dict", train.checkpoint_content,
        lambda: train.checkpoint_content(raw_safetensors({"w": 1})), ValueError,
        r"is not a safetensors file \(or its header is damaged\)"),

    Bad("a flipped bit", train.verify_checkpoint, lambda: train.verify_checkpoint(flipped_checkpoint()), ValueError,
        r"is corrupt: its tensors hash to .*re-run the command that made it"),
    Bad("truncated", train.verify_checkpoint, lambda: train.verify_checkpoint(truncated_checkpoint()), ValueError,
        r"is truncated or damaged"),
    Bad("missing file", train.verify_checkpoint, lambda: train.verify_checkpoint(tmp() / "nope.safetensors"),
        FileNotFoundError, r"no checkpoint at"),

    Bad("missing file", train.checkpoint_storage, lambda: train.checkpoint_storage(tmp() / "nope.safetensors"),
        FileNotFoundError, r"no checkpoint at .*nope.safetensors"),

    Bad("no config in the metadata", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(without_config()), ValueError,
        r"plain.safetensors is not a coursekit checkpoint: its metadata has no config.*save_checkpoint"),
    Bad("word vectors, not a model", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(vectors_file()), ValueError, r"is not a coursekit checkpoint"),
    Bad("config that is not JSON", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(config_not_json()), ValueError,
        r"badconfig.safetensors is not a coursekit checkpoint: its config is not valid JSON"),
    Bad("truncated", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(truncated_checkpoint()), ValueError, r"is truncated or damaged"),
    Bad("missing file", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(tmp() / "nope.safetensors"), FileNotFoundError, r"no checkpoint at"),

    Bad("truncated", train.load_checkpoint, lambda: train.load_checkpoint(truncated_checkpoint(), nn.Linear(3, 2)),
        ValueError, r"is truncated or damaged"),
    Bad("no config (not a coursekit checkpoint)", train.load_checkpoint,
        lambda: train.load_checkpoint(without_config(), nn.Linear(3, 2)), ValueError,
        r"is not a coursekit checkpoint: its metadata has no config"),
    Bad("a dtype safetensors does not know", train.load_checkpoint,
        lambda: train.load_checkpoint(unknown_dtype(), nn.Linear(3, 2)), ValueError,
        r"hand.safetensors could not be read as safetensors .*; restore it or re-run the command that wrote it"),
    Bad("config mismatch", train.load_checkpoint,
        lambda: train.load_checkpoint(saved_checkpoint(), nn.Linear(3, 2), expected_config={"d": 4}), ValueError,
        r"config mismatch — d: checkpoint 3 vs expected 4"),
    Bad("weights of another shape", train.load_checkpoint,
        lambda: train.load_checkpoint(saved_checkpoint(), nn.Linear(4, 2)), ValueError, r"do not fit this model"),
    Bad("weights of another model", train.load_checkpoint,
        lambda: train.load_checkpoint(saved_checkpoint(), nn.Sequential(nn.Linear(3, 2))), ValueError,
        r"weight names differ from the model's"),
    Bad("a dict for model", train.load_checkpoint, lambda: train.load_checkpoint(saved_checkpoint(), {}), TypeError,
        r"model must be an nn.Module, got dict"),
    Bad("missing file", train.load_checkpoint,
        lambda: train.load_checkpoint(tmp() / "nope.safetensors", nn.Linear(3, 2)), FileNotFoundError,
        r"no checkpoint at"),

    Bad("missing", train.load_model_directory, lambda: load_folder(tmp()), FileNotFoundError,
        r"no checkpoint at .*model.safetensors; make it with `make-it`"),
    Bad("truncated", train.load_model_directory, lambda: load_folder(model_folder(truncated_checkpoint)), ValueError,
        r"is truncated or damaged.*; make it again with `make-it`"),
    Bad("not a coursekit checkpoint", train.load_model_directory,
        lambda: load_folder(model_folder(without_config)), ValueError,
        r"is not a coursekit checkpoint.*; make it again with `make-it`"),
    Bad("build returns a model without .config", train.load_model_directory,
        lambda: load_folder(model_folder(saved_checkpoint), build=lambda config, extra: nn.Linear(3, 2)), TypeError,
        r"build\(config, extra\) must return an nn.Module with a .config, got Linear without one"),
    Bad("build returns no model", train.load_model_directory,
        lambda: load_folder(model_folder(saved_checkpoint), build=lambda config, extra: None), TypeError,
        r"build\(config, extra\) must return an nn.Module with a .config, got NoneType"),
    Bad("build is not callable", train.load_model_directory,
        lambda: load_folder(model_folder(saved_checkpoint), build="Linear"), TypeError,
        r"build must be a function \(config, extra\) -> model, got str"),

    Bad("a list for model", train.count_parameters, lambda: train.count_parameters([nn.Linear(1, 1)]), TypeError,
        r"model must be an nn.Module, got list"),

    Bad("--config with a typo", train.config_from_json, lambda: config_json('{"max_iter": 5}'), ValueError,
        r"unknown TrainConfig fields in .*config\.json: \['max_iter'\]; known fields: \[.*'max_iters'"),
    Bad("--config holding a list", train.config_from_json, lambda: config_json("[5]"), ValueError,
        r"must hold a JSON object of TrainConfig fields, got a list"),
    Bad("--config not JSON", train.config_from_json, lambda: config_json("max_iters: 5"), ValueError,
        r"config\.json is not valid JSON"),
    Bad("--config with a bad value", train.config_from_json, lambda: config_json('{"max_iters": -5}'), ValueError,
        r"max_iters"),
    Bad("the class, not an instance", train.config_from_json, lambda: config_json("{}", base=TrainConfig), TypeError,
        r"base must be a config dataclass instance, got type"),
]


def config_json(text: str, base=None):
    """config_from_json on a file holding ``text``, over char_gpt's TrainConfig (a real recipe with checks)."""
    path = tmp() / "config.json"
    path.write_text(text)
    return train.config_from_json(path, TrainConfig() if base is None else base)


# ==============================================================================================
# coursekit.training.resumable
# ==============================================================================================

def folder_run(work=None, **kw):
    """train_in_folder on a two-pair toy problem; ``kw`` overrides one argument."""
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    args = dict(recipe={"lr": 0.1}, step_loss=lambda index, update: (model(torch.ones(len(index), 2)).pow(2).mean(),
                                                                      {"tokens": len(index)}),
                lengths=([3, 3], [3, 3]), max_tokens=100, max_updates=2, seed=0, clip=1.0, eval_every=1,
                quiet=True) | kw
    return resumable.train_in_folder(work if work is not None else tmp(), model, opt, sched, **args)


def folder_with(content: bytes | dict):
    work = tmp()
    if isinstance(content, bytes):
        (work / "checkpoint.pt").write_bytes(content)
    else:
        torch.save(content, work / "checkpoint.pt")
    return work


def steps_run(work=None, **kw):
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    args = dict(recipe={"lr": 0.1}, step_loss=lambda step: (model(torch.ones(1, 2)).pow(2).mean(), {}), steps=2,
                generators={"batches": random.Random(0)}) | kw
    return resumable.train_steps_in_folder(work if work is not None else tmp(), model, opt, sched, **args)


RESUMABLE = [
    Bad("a list for record", resumable.append_jsonl, lambda: resumable.append_jsonl(tmp() / "log", [1, 2]),
        TypeError, r"record must be a dict, got list"),
    Bad("a tensor in the record", resumable.append_jsonl,
        lambda: resumable.append_jsonl(tmp() / "log", {"loss": torch.tensor(1.0)}), TypeError,
        r"record must be JSON-serialisable: .*Tensor"),

    Bad("a list for state", resumable.save_state_atomic, lambda: resumable.save_state_atomic(tmp() / "s.pt", [1]),
        TypeError, r"state must be a dict, got list"),
    Bad("a folder that does not exist", resumable.save_state_atomic,
        lambda: resumable.save_state_atomic(tmp() / "absent" / "s.pt", {}), FileNotFoundError,
        r"cannot write .*s.pt: the folder .*absent does not exist"),

    Bad("max_updates 0", resumable.train_in_folder, lambda: folder_run(max_updates=0), ValueError,
        r"max_updates must be positive, got 0"),
    Bad("negative clip", resumable.train_in_folder, lambda: folder_run(clip=-1.0), ValueError,
        r"clip must be positive and finite, got -1.0"),
    Bad("eval_every 0 with an evaluation", resumable.train_in_folder,
        lambda: folder_run(eval_every=0, evaluate=lambda u, s: {}), ValueError, r"eval_every must be positive, got 0"),
    Bad("checkpoint_minutes 0", resumable.train_in_folder, lambda: folder_run(checkpoint_minutes=0), ValueError,
        r"checkpoint_minutes must be positive and finite, got 0"),
    Bad("max_tokens 0", resumable.train_in_folder, lambda: folder_run(max_tokens=0), ValueError,
        r"max_tokens must be positive, got 0"),
    Bad("lengths of different sizes", resumable.train_in_folder, lambda: folder_run(lengths=([3, 3], [3])), ValueError,
        r"need as many source as target lengths"),
    Bad("a list for recipe", resumable.train_in_folder, lambda: folder_run(recipe=[1]), TypeError,
        r"recipe must be a dict, got list"),
    Bad("step_loss not callable", resumable.train_in_folder, lambda: folder_run(step_loss=None), TypeError,
        r"step_loss must be a function \(index, update\) -> \(loss, counts\), got NoneType"),
    Bad("NaN loss stops the run", resumable.train_in_folder,
        lambda: folder_run(step_loss=lambda index, update: (torch.tensor(NAN, requires_grad=True), {})),
        FloatingPointError, r"loss became nan at update 1"),
    Bad("a damaged checkpoint.pt", resumable.train_in_folder,
        lambda: folder_run(folder_with(b"half a checkpoint"), resume=True), ValueError,
        r"checkpoint.pt is truncated or not a checkpoint of this training loop.*remove it"),
    Bad("a checkpoint of another loop", resumable.train_in_folder,
        lambda: folder_run(folder_with({"model": {}}), resume=True), ValueError,
        r"checkpoint.pt is not a checkpoint of this training loop: it lacks"),
    Bad("a checkpoint without --resume", resumable.train_in_folder, lambda: folder_run(folder_with({}), resume=False),
        FileExistsError, r"checkpoint.pt exists: pass resume=True \(--resume\) to continue it, or remove it"),

    Bad("steps 0", resumable.train_steps_in_folder, lambda: steps_run(steps=0), ValueError,
        r"steps must be positive, got 0"),
    Bad("float steps", resumable.train_steps_in_folder, lambda: steps_run(steps=2.0), TypeError,
        r"steps must be an int, got float 2.0"),
    Bad("negative clip", resumable.train_steps_in_folder, lambda: steps_run(clip=-1.0), ValueError,
        r"clip must be positive and finite, got -1.0"),
    Bad("NaN clip", resumable.train_steps_in_folder, lambda: steps_run(clip=NAN), ValueError,
        r"clip must be positive and finite, got nan"),
    Bad("negative eval_every", resumable.train_steps_in_folder, lambda: steps_run(eval_every=-1), ValueError,
        r"eval_every must be (an int )?≥ 0, got -1"),
    Bad("checkpoint_minutes 0", resumable.train_steps_in_folder, lambda: steps_run(checkpoint_minutes=0), ValueError,
        r"checkpoint_minutes must be positive and finite, got 0"),
    Bad("stop_at 0", resumable.train_steps_in_folder, lambda: steps_run(stop_at=0), ValueError,
        r"stop_at must be positive, got 0"),
    Bad("a seed instead of a generator", resumable.train_steps_in_folder,
        lambda: steps_run(generators={"batches": 0}), TypeError,
        r"generator 'batches' must be a random.Random or torch.Generator, got int"),
    Bad("step_loss not callable", resumable.train_steps_in_folder, lambda: steps_run(step_loss=None), TypeError,
        r"step_loss must be a function step -> \(loss, parts\), got NoneType"),
    Bad("NaN loss stops the run", resumable.train_steps_in_folder,
        lambda: steps_run(step_loss=lambda step: (torch.tensor(NAN, requires_grad=True), {})), FloatingPointError,
        r"loss became nan at step 1"),
    Bad("a damaged checkpoint.pt", resumable.train_steps_in_folder,
        lambda: steps_run(folder_with(b"\x80\x02 half"), resume=True), ValueError,
        r"checkpoint.pt is truncated or not a checkpoint of this training loop"),
    Bad("a checkpoint of another loop", resumable.train_steps_in_folder,
        lambda: steps_run(folder_with({"recipe": {"lr": 0.1}, "model": {}}), resume=True), ValueError,
        r"checkpoint.pt is not a checkpoint of this training loop: it lacks"),
    Bad("a checkpoint of another recipe", resumable.train_steps_in_folder,
        lambda: steps_run(folder_with({k: {} for k in ("model", "optimizer", "scheduler", "state", "generators",
                                                         "rng")} | {"recipe": {"lr": 1.0}}), resume=True),
        ValueError, r"was written by another recipe: \{'lr': 1.0\} \(now \{'lr': 0.1\}\)"),
]


# ==============================================================================================
# coursekit.training.compact
# ==============================================================================================

def stored(**changes) -> dict:
    q, s = compact.quantize_int8(randn(3, 4))
    return {"w": q, "w:scale": s, "b": torch.zeros(3, dtype=f16)} | changes


COMPACT = [
    Bad("a list", compact.quantize_int8, lambda: compact.quantize_int8([[1.0, 2.0]]), TypeError,
        r"weight must be a torch.Tensor, got list"),
    Bad("a vector", compact.quantize_int8, lambda: compact.quantize_int8(randn(5)), ValueError,
        r"weight must be a floating matrix \(2 or more dims\), got torch.float32 of shape \(5,\)"),
    Bad("an integer matrix", compact.quantize_int8, lambda: compact.quantize_int8(torch.ones(2, 3, dtype=i64)),
        ValueError, r"weight must be a floating matrix \(2 or more dims\), got torch.int64 of shape \(2, 3\)"),
    Bad("NaN weights", compact.quantize_int8, lambda: compact.quantize_int8(torch.tensor([[1.0, NAN]])), ValueError,
        r"weight holds NaN or ±inf"),
    Bad("rows of no entries", compact.quantize_int8, lambda: compact.quantize_int8(randn(3, 0)), ValueError,
        r"weight must have at least one entry per row, got shape \(3, 0\)"),

    Bad("float q", compact.dequantize_int8, lambda: compact.dequantize_int8(torch.ones(2, 2), torch.ones(2)), TypeError,
        r"q must be an int8 tensor, got torch.float32"),
    Bad("a list for q", compact.dequantize_int8, lambda: compact.dequantize_int8([[1, 2]], torch.ones(1)), TypeError,
        r"q must be an int8 tensor, got list"),
    Bad("a scale per column", compact.dequantize_int8,
        lambda: compact.dequantize_int8(torch.ones(2, 3, dtype=torch.int8), torch.ones(3)), ValueError,
        r"scale must have one entry per row of q \(2\), got \(3,\)"),
    Bad("a list of scales", compact.dequantize_int8,
        lambda: compact.dequantize_int8(torch.ones(2, 3, dtype=torch.int8), [1.0, 1.0]), ValueError,
        r"scale must have one entry per row of q \(2\), got list"),
    Bad("a scalar q", compact.dequantize_int8,
        lambda: compact.dequantize_int8(torch.tensor(3, dtype=torch.int8), torch.ones(1)), ValueError,
        r"q must have at least one dimension \(rows first\), got a scalar"),

    Bad("a state dict, not a model", compact.compact_state, lambda: compact.compact_state(nn.Linear(2, 3).state_dict()),
        TypeError, r"model must be an nn.Module, got OrderedDict"),

    Bad("a list", compact.expand_state, lambda: compact.expand_state([("w", torch.ones(2))]), TypeError,
        r"tensors must be a dict of name -> tensor, got list"),
    Bad("a matrix without its scales", compact.expand_state,
        lambda: compact.expand_state({k: v for k, v in stored().items() if k != "w:scale"}), ValueError,
        r"the int8 matrix 'w' has no scales \('w:scale'\): a damaged checkpoint"),
    Bad("scales without their matrix", compact.expand_state,
        lambda: compact.expand_state({k: v for k, v in stored().items() if k != "w"}), ValueError,
        r"'w:scale' has no matrix 'w' to scale: a damaged checkpoint"),
    Bad("scales of another matrix", compact.expand_state,
        lambda: compact.expand_state(stored(**{"w:scale": torch.ones(4)})),
        ValueError, r"scale must have one entry per row of q \(3\), got \(4,\)"),
    Bad("a list among the tensors", compact.expand_state, lambda: compact.expand_state(stored(b=[0.0, 0.0, 0.0])),
        TypeError, r"tensors must map names to tensors, got list for 'b'"),
    Bad("a number for a name", compact.expand_state, lambda: compact.expand_state({0: torch.ones(2)}), TypeError,
        r"tensors must map names \(str\) to tensors, got the key 0 \(int\)"),
]


# ==============================================================================================
# coursekit.training.lora
# ==============================================================================================

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj, self.v_proj, self.ff = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 4)


def adapted_block():
    block = Block()
    lora.add_lora(block, ["q_proj"], r=2, alpha=4)
    return block


LORA = [
    Bad("a conv layer", lora.LoRALinear, lambda: lora.LoRALinear(nn.Conv1d(4, 4, 1), 2, 4), TypeError,
        r"base must be an nn.Linear, got Conv1d"),
    Bad("rank 0", lora.LoRALinear, lambda: lora.LoRALinear(nn.Linear(8, 8), 0, 4), ValueError,
        r"r must be positive, got 0"),
    Bad("a float rank", lora.LoRALinear, lambda: lora.LoRALinear(nn.Linear(8, 8), 2.0, 4), TypeError,
        r"r must be an int, got float 2.0"),
    Bad("a rank above the matrix's", lora.LoRALinear, lambda: lora.LoRALinear(nn.Linear(8, 4), 5, 4), ValueError,
        r"r=5 is above the rank of a 4 × 8 matrix: a low-rank update needs r ≤ 4"),
    Bad("alpha 0", lora.LoRALinear, lambda: lora.LoRALinear(nn.Linear(8, 8), 2, 0), ValueError,
        r"alpha must be positive and finite, got 0"),
    Bad("alpha NaN", lora.LoRALinear, lambda: lora.LoRALinear(nn.Linear(8, 8), 2, NAN), ValueError,
        r"alpha must be positive and finite, got nan"),
    Bad("dropout 1", lora.LoRALinear, lambda: lora.LoRALinear(nn.Linear(8, 8), 2, 4, dropout=1.0), ValueError,
        r"dropout must lie in \[0, 1\), got 1.0"),

    Bad("a dict for the model", lora.add_lora, lambda: lora.add_lora({}, ["q_proj"], r=2, alpha=4), TypeError,
        r"model must be an nn.Module, got dict"),
    Bad("one name instead of a list", lora.add_lora, lambda: lora.add_lora(Block(), "q_proj", r=2, alpha=4),
        TypeError, r"targets must be a non-empty list of module-name suffixes, got str 'q_proj'"),
    Bad("no targets", lora.add_lora, lambda: lora.add_lora(Block(), [], r=2, alpha=4), TypeError,
        r"targets must be a non-empty list of module-name suffixes, got list \[\]"),
    Bad("a target that is no linear layer of the model", lora.add_lora,
        lambda: lora.add_lora(Block(), ["q_proj", "query"], r=2, alpha=4), ValueError,
        r"no nn.Linear of the model is named like \['query'\]; its linear layers are e.g. "
        r"\['q_proj', 'v_proj', 'ff'\]"),
    Bad("adapters added twice", lora.add_lora, lambda: lora.add_lora(adapted_block(), ["v_proj"], r=2, alpha=4),
        ValueError, r"model already holds LoRA adapters: merge_lora\(model\) first"),

    Bad("a dict for the model", lora.merge_lora, lambda: lora.merge_lora({}), TypeError,
        r"model must be an nn.Module, got dict"),
    Bad("a model without adapters merges nothing", lora.merge_lora, lambda: lora.merge_lora(Block()),
        returns=lambda n: n == 0),

    Bad("a model without adapters", lora.lora_state_dict, lambda: lora.lora_state_dict(Block()), ValueError,
        r"model holds no LoRA adapters \(add_lora adds them\)"),
    Bad("a dict for the model", lora.lora_state_dict, lambda: lora.lora_state_dict({}), TypeError,
        r"model must be an nn.Module, got dict"),

    Bad("a list for the state", lora.load_lora_state_dict, lambda: lora.load_lora_state_dict(adapted_block(), []),
        TypeError, r"state must be a dict of name → tensor, got list"),
    Bad("a model without adapters", lora.load_lora_state_dict,
        lambda: lora.load_lora_state_dict(Block(), lora.lora_state_dict(adapted_block())), ValueError,
        r"model holds no LoRA adapters: call add_lora with the same targets, r and alpha first"),
    Bad("adapters of other layers", lora.load_lora_state_dict,
        lambda: lora.load_lora_state_dict(adapted_block(), {"v_proj.lora_A": torch.zeros(2, 8)}), ValueError,
        r"the adapters do not match the model: missing \['q_proj.lora_A', 'q_proj.lora_B'\], "
        r"unexpected \['v_proj.lora_A'\]"),
    Bad("adapters of another rank", lora.load_lora_state_dict,
        lambda: lora.load_lora_state_dict(adapted_block(), {"q_proj.lora_A": torch.zeros(3, 8),
                                                              "q_proj.lora_B": torch.zeros(8, 3)}), ValueError,
        r"q_proj.lora_A: expected a tensor of shape \(2, 8\), got \(3, 8\)"),
]

# ==============================================================================================
# coursekit.training.preference
# ==============================================================================================

LOGITS, IDS, ANSWER = randn(2, 3, 5), torch.tensor([[1, 2, 3], [0, 4, 4]]), torch.tensor([[0, 1, 1], [0, 1, 0]])
SCORES = randn(4)

PREFERENCE = [
    Bad("logits without a batch", preference.sequence_logprob,
        lambda: preference.sequence_logprob(randn(3, 5), IDS, ANSWER), ValueError,
        r"logits must have 3 dimensions, got shape \(3, 5\)"),
    Bad("targets of another length", preference.sequence_logprob,
        lambda: preference.sequence_logprob(LOGITS, IDS[:, :2], ANSWER[:, :2]), ValueError,
        r"logits \(B, T, V\), targets \(B, T\) and mask \(B, T\) must agree, got \(2, 3, 5\), \(2, 2\)"),
    Bad("float targets", preference.sequence_logprob,
        lambda: preference.sequence_logprob(LOGITS, IDS.float(), ANSWER), TypeError,
        r"targets must hold token ids \(integers\), got torch.float32"),
    Bad("a row with no answer token", preference.sequence_logprob,
        lambda: preference.sequence_logprob(LOGITS, IDS, torch.tensor([[0, 1, 1], [0, 0, 0]])), ValueError,
        r"every row needs at least one answer token in mask"),

    Bad("rewards of different sizes", preference.bradley_terry_loss,
        lambda: preference.bradley_terry_loss(SCORES, randn(3)), ValueError,
        r"reward_chosen, reward_rejected must be \(B,\) tensors of one size, got \[\(4,\), \(3,\)\]"),
    Bad("integer rewards", preference.bradley_terry_loss,
        lambda: preference.bradley_terry_loss(torch.ones(4, dtype=i64), SCORES), TypeError,
        r"reward_chosen must be a floating-point tensor"),

    Bad("beta 0", preference.dpo_loss, lambda: preference.dpo_loss(SCORES, SCORES, SCORES, SCORES, beta=0),
        ValueError, r"beta must be positive and finite, got 0"),
    Bad("beta as a string", preference.dpo_loss, lambda: preference.dpo_loss(SCORES, SCORES, SCORES, SCORES, "0.1"),
        TypeError, r"beta must be a number, got str"),
    Bad("per-token log-probabilities instead of per-sequence ones", preference.dpo_loss,
        lambda: preference.dpo_loss(randn(4, 3), randn(4, 3), randn(4, 3), randn(4, 3), beta=0.1), ValueError,
        r"policy_chosen must have 1 dimensions, got shape \(4, 3\)"),
    Bad("a reference of another batch", preference.dpo_loss,
        lambda: preference.dpo_loss(SCORES, SCORES, randn(3), randn(3), beta=0.1), ValueError,
        r"must be \(B,\) tensors of one size"),
]

ROWS = TRAIN + RESUMABLE + COMPACT + LORA + PREFERENCE

test_bad_call = bad_call_test(ROWS)
