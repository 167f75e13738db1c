"""Pre-training the course's small BART on monolingual English and French (notebook 11).

Lewis et al. 2020 pre-train BART by **text infilling** — spans with Poisson(3) lengths covering 30 % of
the tokens, each replaced by one ``<mask>`` (§2.2) — and reconstructing the original document. The
recipe here is that objective on a corpus built so that pre-training can pay off downstream and the
comparison stays honest (in the spirit of mBART, Liu et al. 2020, which pre-trains one model on the
monolingual text of several languages before fine-tuning it to translate):

* **English** sentences: the English side of one half of the benchmark's training pairs;
* **French** sentences: the French side of the *other* half — so no translation pair is ever seen
  whole, and nothing of the test or validation sentences;
* **SST-2 training sentences** (unlabelled): in-domain text for the sentiment task (Gururangan et al.
  2020, *Don't Stop Pretraining*); the labels and the validation sentences are never used.

Every document is one sentence, written in the benchmark's BPE (:mod:`coursekit.translation.benchmark`)
with one extra piece, ``<mask>`` (id 8000): the ids of the 8,000 translation pieces are unchanged, so the
pre-trained model fine-tunes on the benchmark as it is. Sentence permutation needs documents of several
*related* sentences; Tatoeba's sentences are unrelated, so the recipe uses text infilling alone (Table 1
of the paper: text infilling alone is within a few tenths of the best combination).

:func:`pretrain` checkpoints every few minutes into a work folder and resumes exactly (``--resume``);
:func:`export` writes the committed model (fp16 safetensors with its content hash, recipe, report).
:func:`denoising_accuracy` measures what the issue asks of a working denoiser on held-out sentences:
the share of *uncorrupted* tokens the decoder copies (teacher forced, argmax) and the share of *masked*
tokens it fills, next to the unigram guess (always the most frequent piece).

``python -m coursekit.bart_pretraining pretrain --work runs/bart --out data/bart`` reproduces it;
``python -m coursekit.bart denoise --json`` prints the reconstruction figures of the committed weights.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.bart import Bart, BartConfig
from coursekit.bart_batches import seq2seq_batch
from coursekit.checks import check_int as _check_int
from coursekit.checks import check_int_sequence, check_positive_float, check_positive_int, check_probability
from coursekit.data import model_dir, sha256_file
from coursekit.noising import text_infilling
from coursekit.resumable import train_in_folder
from coursekit.train import count_parameters, save_checkpoint
from coursekit.translation.benchmark import load_benchmark, load_tokenizer, token_batches
from coursekit.translation.core import split_tokens
from coursekit.translation.recipes import inverse_sqrt

__all__ = ["MASK", "BartRecipe", "RECIPE", "BartVocab", "PretrainingCorpus", "build_corpus", "held_out_sentences",
           "build_bart", "corrupt", "denoising_accuracy", "denoising_report", "pretrain", "export",
           "load_pretrained_bart"]

MASK = "<mask>"


@dataclass(frozen=True)
class BartRecipe:
    """Everything that decides the committed BART: size, noise, optimisation and corpus."""

    arch: dict = field(default_factory=lambda: dict(d_model=256, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
                                                    d_ff=1024, dropout=0.1, max_len=64))
    mask_ratio: float = 0.3          # share of the tokens hidden by text infilling (§2.2, the paper's best)
    poisson_lambda: float = 3.0      # mean span length
    max_tokens: int = 3000           # per batch, corrupted source + original target, padding included
    lr: float = 7e-4
    warmup: int = 500
    max_updates: int = 4000
    clip: float = 1.0
    eval_every: int = 250
    n_held_out: int = 500            # validation sentences of each language, never trained on
    seed: int = 0

    ARCH_KEYS = ("d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "dropout", "max_len")

    def __post_init__(self) -> None:
        if not isinstance(self.arch, dict):
            raise TypeError(f"arch must be a dict, got {type(self.arch).__name__}")
        missing = sorted(set(self.ARCH_KEYS) - set(self.arch))
        unknown = sorted(set(self.arch) - set(self.ARCH_KEYS))
        if missing or unknown:
            raise ValueError(f"arch must have the keys {list(self.ARCH_KEYS)}; "
                             + "; ".join(f"{what} {keys}" for what, keys in (("missing", missing), ("unknown", unknown))
                                         if keys))
        check_probability(self.mask_ratio, "mask_ratio")
        check_positive_float(self.poisson_lambda, "poisson_lambda")
        for name in ("max_tokens", "warmup", "max_updates", "eval_every", "n_held_out"):
            check_positive_int(getattr(self, name), name)
        check_positive_float(self.lr, "lr")
        check_positive_float(self.clip, "clip")
        _check_int(self.seed, "seed")


RECIPE = BartRecipe()


def _check_recipe(recipe) -> None:
    if not isinstance(recipe, BartRecipe):
        raise TypeError(f"recipe must be a BartRecipe, got {type(recipe).__name__}")


def _check_vocab(vocab) -> None:
    if not isinstance(vocab, BartVocab):
        raise TypeError(f"vocab must be a BartVocab, got {type(vocab).__name__}")


def _check_corpus(corpus, *, optional: bool = False) -> None:
    if not (isinstance(corpus, PretrainingCorpus) or (optional and corpus is None)):
        raise TypeError(f"corpus must be a PretrainingCorpus{' or None' if optional else ''}, "
                        f"got {type(corpus).__name__}")


def _check_vocab_id(value, name: str, vocab_size: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int token id, got {type(value).__name__}")
    if not 0 <= value < vocab_size:
        raise ValueError(f"{name} must be a token id in [0, {vocab_size}), got {value}")
    return value


def _check_documents(docs, name: str, vocab_size: int, *, what: str) -> list[list[int]]:
    """A non-empty list of documents, each a non-empty list of token ids in ``[0, vocab_size)``."""
    if isinstance(docs, (str, torch.Tensor)) or not isinstance(docs, (list, tuple)):
        raise TypeError(f"{name} must be a list of documents (lists of token ids), got {type(docs).__name__}")
    if not docs:
        raise ValueError(f"{what} needs at least one document")
    out = []
    for i, doc in enumerate(docs):
        ids = check_int_sequence(doc, f"{name}[{i}]")
        if not ids:
            raise ValueError(f"{name}[{i}] is empty")
        outside = [t for t in ids if not 0 <= t < vocab_size]
        if outside:
            raise ValueError(f"{name}[{i}] must hold ids in [0, {vocab_size}), got {outside[0]}")
        out.append(ids)
    return out


class BartVocab:
    """The benchmark BPE (ids 0–7999 unchanged) plus ``<mask>``; BART's ids: ``<pad>`` 0, ``<s>`` 2, ``</s>`` 3."""

    def __init__(self, subwords=None) -> None:
        from coursekit.translation.subword import SubwordVocab

        if subwords is not None and not isinstance(subwords, SubwordVocab):
            raise TypeError(f"subwords must be a SubwordVocab (from coursekit.translation.benchmark.load_tokenizer), "
                            f"got {type(subwords).__name__}")
        self.subwords = subwords or load_tokenizer()
        self.itos = list(self.subwords.itos) + [MASK]
        self.mask_id = len(self.itos) - 1
        self.pad_id, self.unk_id, self.bos_id, self.eos_id = (self.subwords.pad_id, self.subwords.unk_id,
                                                              self.subwords.bos_id, self.subwords.eos_id)
        self.special_ids = (self.pad_id, self.bos_id, self.eos_id, self.mask_id)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, words: list[str]) -> list[int]:
        """The words of one normalised sentence → ``<s> pieces </s>``."""
        _check_words(words, "words")
        return self.subwords.encode(words, add_bos=True, add_eos=True)

    def encode_text(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        return self.encode(split_tokens(text))

    def encode_many(self, sentences: list[list[str]]) -> list[list[int]]:
        """:meth:`encode` of many word lists at once (the tokenizer's parallel batch encoder)."""
        if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)):
            raise TypeError(f"sentences must be a list of word lists, got {type(sentences).__name__}")
        for i, words in enumerate(sentences):
            if not isinstance(words, (list, tuple)):
                raise TypeError(f"sentences[{i}] must be a list of words, got {type(words).__name__}")
        return [[self.bos_id] + ids for ids in self.subwords.encode_batch(sentences, add_eos=True)]

    def detokenize(self, ids) -> str:
        """Ids → the sentence (specials and ``<mask>`` dropped by the BPE decoder, ``<mask>`` kept visible)."""
        ids = check_int_sequence(ids, "ids")
        outside = [i for i in ids if not 0 <= i < len(self)]
        if outside:
            raise ValueError(f"ids must hold ids in [0, {len(self)}), got {outside[0]}")
        parts, run = [], []
        for i in ids:
            if i == self.mask_id:
                parts += [self.subwords.detokenize(run), MASK] if run else [MASK]
                run = []
            else:
                run.append(i)
        parts.append(self.subwords.detokenize(run))
        return " ".join(p for p in parts if p)


def _check_words(words, name: str) -> None:
    if isinstance(words, str):
        raise TypeError(f"{name} must be a list of word strings, got one string")
    if not isinstance(words, (list, tuple)):
        raise TypeError(f"{name} must be a list of word strings, got {type(words).__name__}")


@dataclass
class PretrainingCorpus:
    """Pre-training documents (one sentence each, as ids) and held-out sentences, with where they came from."""

    vocab: BartVocab
    train: list[list[int]]
    held_out: list[list[int]]
    sources: dict
    unigram_top: int                 # the most frequent content piece of the training documents

    def __post_init__(self) -> None:
        _check_vocab(self.vocab)
        for name in ("train", "held_out"):
            if not isinstance(getattr(self, name), list):
                raise TypeError(f"{name} must be a list of documents, got {type(getattr(self, name)).__name__}")
        if not self.train:
            raise ValueError("train must not be empty")
        _check_vocab_id(self.unigram_top, "unigram_top", len(self.vocab))


def build_corpus(recipe: BartRecipe = RECIPE, *, data=None,
                 sst_sentences: list[str] | None = None) -> PretrainingCorpus:
    """English of half the training pairs, French of the other half, SST-2 training sentences; held out:
    ``n_held_out`` validation sentences of each language. Sentences longer than the model's positions are
    counted and left out (none of the benchmark's are; a few SST-2 sentences are)."""
    from coursekit.data import load_sst2

    _check_recipe(recipe)
    if isinstance(sst_sentences, str):
        raise TypeError("sst_sentences must be a list of strings, got one string")
    vocab = BartVocab()
    data = data or load_benchmark(tokenizer=vocab.subwords)
    order = list(range(len(data.train)))
    random.Random(recipe.seed).shuffle(order)
    half = len(order) // 2
    english = vocab.encode_many([data.train[i][0] for i in order[:half]])
    french = vocab.encode_many([data.train[i][1] for i in order[half:]])
    if sst_sentences is None:
        sst_sentences = list(load_sst2()["train"]["sentence"])
    sst = vocab.encode_many([split_tokens(s) for s in sst_sentences if s.strip()])
    limit = recipe.arch["max_len"]
    too_long = sum(len(d) > limit for d in sst)
    sst = [d for d in sst if len(d) <= limit]
    held_out = held_out_sentences(recipe, vocab, data)
    train = english + french + sst
    counts = Counter(t for d in train for t in d if t not in vocab.special_ids)
    sources = {"english_sentences": len(english), "french_sentences": len(french), "sst2_sentences": len(sst),
               "sst2_too_long_left_out": too_long, "tokens": sum(len(d) for d in train),
               "held_out_sentences": len(held_out), "held_out_from": "benchmark validation split (EN and FR sides)"}
    return PretrainingCorpus(vocab, train, held_out, sources, counts.most_common(1)[0][0])


def held_out_sentences(recipe: BartRecipe, vocab: BartVocab, data=None) -> list[list[int]]:
    """The first ``n_held_out`` validation pairs of the benchmark: their English sentences, then their French."""
    _check_recipe(recipe)
    _check_vocab(vocab)
    data = data or load_benchmark(tokenizer=vocab.subwords)
    return (vocab.encode_many([e for e, _ in data.valid[:recipe.n_held_out]])
            + vocab.encode_many([f for _, f in data.valid[:recipe.n_held_out]]))


def denoising_report(directory: str | Path | None = None, *, seed: int = 1234) -> dict:
    """What ``python -m coursekit.bart denoise`` prints: the committed model's copy and fill accuracy on the
    held-out sentences (a fresh corruption per ``seed``) next to the unigram guess."""
    _check_int(seed, "seed")
    model, vocab, report = load_pretrained_bart(directory)
    recipe = BartRecipe(**report["recipe"])
    docs = held_out_sentences(recipe, vocab)
    acc = denoising_accuracy(model, docs, vocab, recipe, unigram_top=vocab.itos.index(report["unigram_top"]),
                             seed=seed)
    return {"held_out_sentences": len(docs), "mask_ratio": recipe.mask_ratio, **acc,
            "unigram_guess": report["unigram_top"], "updates": report["updates"]}


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


def _evaluate(model: Bart, corpus: PretrainingCorpus, recipe: BartRecipe, update: int, seconds: float) -> dict:
    start = time.monotonic()
    acc = denoising_accuracy(model, corpus.held_out, corpus.vocab, recipe, unigram_top=corpus.unigram_top)
    model.train()
    return {"update": update, "seconds": round(seconds, 1), "held_out_loss": round(acc["loss"], 4),
            "copy_accuracy": round(acc["copy_accuracy"], 4), "fill_accuracy": round(acc["fill_accuracy"], 4),
            "eval_seconds": round(time.monotonic() - start, 1)}


# --------------------------------------------------------------------------- the committed model


def _reproduce(out) -> str:
    return f"python -m coursekit.bart_pretraining pretrain --work runs/bart --out {out}"


def export(model: Bart, state: dict, corpus: PretrainingCorpus, out: str | Path, *,
           recipe: BartRecipe = RECIPE) -> dict:
    """Write ``out/model.safetensors`` (fp16, content hash) and ``out/report.json``; the figures are measured
    on the weights as stored (fp16 → fp32)."""
    if not isinstance(model, Bart):
        raise TypeError(f"model must be a coursekit.bart.Bart, got {type(model).__name__}")
    _check_corpus(corpus)
    _check_recipe(recipe)
    needed = ("update", "epoch", "position", "seconds", "hardware", "curve", "train")
    lacking = sorted(k for k in needed if not isinstance(state, dict) or k not in state)
    if lacking:
        raise ValueError(f"state must be the training state of pretrain(); it lacks {lacking}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model = model.half().float().eval()
    vocab = corpus.vocab
    path = save_checkpoint(out / "model.safetensors", model.half(), model.config,
                           extra={"recipe": asdict(recipe), "tokenizer_sha256": vocab.subwords.sha256(),
                                  "mask_id": str(vocab.mask_id)})
    model = model.float()
    held_out = denoising_accuracy(model, corpus.held_out, vocab, recipe, unigram_top=corpus.unigram_top)
    examples = []
    g = torch.Generator().manual_seed(7)
    for doc in corpus.held_out[:5] + corpus.held_out[recipe.n_held_out:recipe.n_held_out + 5]:
        batch, _ = corrupt([doc], vocab, recipe, g)
        restored = model.generate(batch.src, max_len=len(doc) + 4).tokens[0]
        examples.append({"original": vocab.detokenize(doc), "corrupted": vocab.detokenize(batch.src[0].tolist()),
                         "reconstruction": vocab.detokenize(restored)})
    report = {"recipe": asdict(recipe), "corpus": corpus.sources, "parameters": count_parameters(model),
              "updates": state["update"],
              "epochs": round(state["epoch"] + state["position"] / _epoch_len(corpus, recipe), 3),
              "train_seconds": round(state["seconds"], 1), "hardware": state["hardware"],
              "held_out": held_out, "unigram_top": vocab.itos[corpus.unigram_top], "examples": examples,
              "curve": state["curve"], "train_log": state["train"],
              "file_sha256": sha256_file(path), "size_bytes": path.stat().st_size, "reproduce": _reproduce(out)}
    (out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


def _epoch_len(corpus: PretrainingCorpus, recipe: BartRecipe) -> int:
    lengths = [len(d) for d in corpus.train]
    return len(token_batches(lengths, lengths, recipe.max_tokens, torch.Generator().manual_seed(recipe.seed * 1000)))


def load_pretrained_bart(directory: str | Path | None = None) -> tuple[Bart, BartVocab, dict]:
    """The committed pre-trained BART (fp32, eval mode), its vocabulary and report; hashes are checked."""
    from coursekit.train import load_model_directory

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
        raise ValueError(f"{report_path} is not a report of coursekit.bart_pretraining: it lacks {lacking}; "
                         f"re-run `{_reproduce(directory)}`")
    path = directory / "model.safetensors"
    if path.is_file() and sha256_file(path) != report["file_sha256"]:
        raise ValueError(f"{path} does not match its report (sha256 {sha256_file(path)[:12]}… vs "
                         f"{report['file_sha256'][:12]}…): a truncated or replaced file; re-run "
                         f"`{_reproduce(directory)}`")
    vocab = BartVocab()

    def build(config: dict, extra: dict) -> nn.Module:
        lacking = sorted(k for k in ("recipe", "tokenizer_sha256") if k not in extra)
        if lacking:
            raise ValueError(f"{path} is not a BART checkpoint of coursekit.bart_pretraining: its metadata lacks "
                             f"{lacking}; re-run `{_reproduce(directory)}`")
        if extra.get("tokenizer_sha256") != vocab.subwords.sha256():
            raise ValueError(f"{path} was trained with another tokenizer than the benchmark's")
        return build_bart(BartRecipe(**extra["recipe"]), vocab).half()

    model, _ = load_model_directory(directory, build, reproduce=_reproduce(directory))
    return model.float().eval(), vocab, report


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m coursekit.bart_pretraining", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pretrain", help="pre-train (checkpoints in --work, the committed model in --out)")
    p.add_argument("--work", default="runs/bart")
    p.add_argument("--out", default=None, help="export here when done (e.g. data/bart)")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--max-updates", type=int, default=None)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    model, state, corpus = pretrain(args.work, resume=args.resume, max_updates=args.max_updates)
    if args.out:
        report = export(model, state, corpus, args.out)
        print(json.dumps({k: report[k] for k in ("updates", "train_seconds", "held_out", "size_bytes")}, indent=1))


if __name__ == "__main__":
    main()
