"""Post-training the committed Transformer: formal or informal "you" on request (notebook 14).

The committed EN→FR Transformer (:mod:`coursekit.translation.recipes`) chooses *tu* or *vous* by habit. Post-training
changes that behaviour with the pieces of :mod:`coursekit.training.lora` and :mod:`coursekit.training.preference`,
on the register data of :mod:`coursekit.translation.register`:

* **SFT** — more cross-entropy training, on *vous* pairs only (:func:`sft_loss`), all weights or a LoRA adapter;
* **a register tag** — instruction tuning in miniature: ``formal :`` / ``informal :`` before the English, learned
  from tagged pairs mixed with untagged ones (so that an untagged sentence still translates as before);
* **DPO** — :func:`dpo_batch` scores the *vous* (chosen) and *tu* (rejected) translations of one English sentence
  under the policy and the frozen base (:func:`answer_logprob`), and :func:`~coursekit.training.preference.dpo_loss`
  does the rest; :func:`token_kl` measures how far the policy moved from the base;
* **a reward model and best-of-n** — :class:`RewardModel` is the base with its unembedding replaced by one output
  (Ouyang et al. 2022, §3.5), trained with the Bradley–Terry loss; :func:`sample_translations` draws ``n``
  translations and the reward model keeps the best.

:data:`RECIPES` are the runs whose figures the notebook quotes; :func:`train_run` runs one in a work folder with
checkpoints and ``--resume`` (``python -m coursekit.translation posttrain RECIPE``), :func:`export_run` writes its
report (and a LoRA adapter for the ``tagged`` recipe, which ``translate transformer --register`` uses).
"""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from coursekit.data import load_tatoeba, model_dir, sha256_file
from coursekit.decoding.sampling import sample_next
from coursekit.text import pad_batch
from coursekit.training.compact import STORAGE, expand_state, quantize_int8
from coursekit.training.loop import count_parameters, stamp_content_hash, verify_checkpoint
from coursekit.training.lora import add_lora, load_lora_state_dict, lora_state_dict
from coursekit.training.preference import DPOResult, dpo_loss, sequence_logprob
from coursekit.training.resumable import hardware, train_steps_in_folder
from coursekit.transformer.model import Transformer
from coursekit.translation.benchmark import BENCHMARK
from coursekit.translation.core import TranslationBatch, TranslationData, is_test_sentence, split_tokens
from coursekit.translation.recipes import evaluate, load_model
from coursekit.translation.register import REGISTERS, YouPairs, addresses_you, tag_source, vous_rate, you_pairs
from coursekit.translation.scoring import corpus_bleu
from coursekit.translation.subword import SubwordVocab
from coursekit.validation import check_choice, check_positive_float, check_positive_int, check_probability, received

__all__ = ["LORA_TARGETS", "ADAPTER_DIR", "PostRecipe", "RECIPES", "RewardModel", "pairs_data", "answer_logprob",
           "sft_loss", "dpo_batch", "token_kl", "sample_translations", "translate_tokens", "tagged_test",
           "held_out_preferences", "implicit_reward_accuracy", "you_test_sources", "repetition_rate",
           "register_figures", "prepare_model", "train_run", "export_run", "load_register_model"]

#: Where LoRA goes: the query and value projections of every attention layer (encoder self-attention, decoder
#: self- and cross-attention), as in Hu et al. (2021, §7.1).
LORA_TARGETS = ("q_proj", "v_proj")

#: The committed register adapter and the reports of :data:`RECIPES`.
ADAPTER_DIR = "register"


def _check_model(model) -> None:
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be the course's Transformer (coursekit.transformer.Transformer), got "
                        f"{type(model).__name__}")


def _check_batch(batch, name: str = "batch") -> None:
    if not isinstance(batch, TranslationBatch):
        raise TypeError(f"{name} must be a TranslationBatch (TranslationData.make_batch), got {received(batch)}")


def _check_pairs(pairs, name: str = "pairs") -> list:
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise TypeError(f"{name} must be a list of (english_tokens, french_tokens) pairs, got {received(pairs)}")
    return list(pairs)


# --------------------------------------------------------------------------- data and log-probabilities


def pairs_data(pairs: Sequence, tokenizer: SubwordVocab) -> TranslationData:
    """``pairs`` (``(english_tokens, french_tokens)``) as the training split of a :class:`TranslationData` on the
    benchmark's BPE, ready for ``make_batch``."""
    if not isinstance(tokenizer, SubwordVocab):
        raise TypeError(f"tokenizer must be the benchmark's SubwordVocab (load_tokenizer()), got {received(tokenizer)}")
    pairs = _check_pairs(pairs)
    # + 2: a register tag adds two words to a benchmark sentence
    return TranslationData(pairs, [], tokenizer, tokenizer, BENCHMARK["max_len"] + 2,
                           {"benchmark": {"tokenizer_sha256": tokenizer.sha256()}})


def answer_logprob(model: Transformer, batch: TranslationBatch) -> torch.Tensor:
    """``log π(y | x)`` per pair of ``batch``, shape ``(B,)``: the French tokens and ``<eos>`` summed, teacher-forced.

    In an encoder–decoder the prompt (the English) is read by the encoder and never scored, so every real
    target token is part of the answer: the mask is the batch's target mask."""
    _check_model(model)
    _check_batch(batch)
    logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)       # (B, T, V)
    return sequence_logprob(logits, batch.tgt_out, batch.tgt_mask)


def sft_loss(model: Transformer, batch: TranslationBatch, label_smoothing: float = 0.0) -> torch.Tensor:
    """Supervised fine-tuning is pre-training's loss on the chosen pairs: mean cross-entropy per target token
    (with the pre-training's label smoothing, if given)."""
    _check_model(model)
    _check_batch(batch)
    return model.loss(batch, label_smoothing=label_smoothing)


def dpo_batch(policy: Transformer, reference: Transformer, chosen: TranslationBatch, rejected: TranslationBatch,
              beta: float) -> DPOResult:
    """The DPO loss of a batch of preference pairs: ``chosen`` and ``rejected`` hold the same English sentences,
    in the same order, with the preferred and the dispreferred French. The reference is scored without
    gradients (it is frozen: only the policy learns)."""
    _check_model(policy)
    _check_model(reference)
    _check_batch(chosen, "chosen")
    _check_batch(rejected, "rejected")
    if chosen.src.shape != rejected.src.shape or not torch.equal(chosen.src, rejected.src):
        raise ValueError("chosen and rejected must hold the same English sentences in the same order (one "
                         "preference pair per row)")
    check_positive_float(beta, "beta")
    with torch.no_grad():
        ref_chosen, ref_rejected = answer_logprob(reference, chosen), answer_logprob(reference, rejected)
    return dpo_loss(answer_logprob(policy, chosen), answer_logprob(policy, rejected), ref_chosen, ref_rejected, beta)


def token_kl(policy: Transformer, reference: Transformer, batch: TranslationBatch) -> float:
    """Mean over the batch's real target tokens of ``KL(π(·|prefix) ‖ π_ref(·|prefix))`` (nats per token), along
    the batch's own French: how far the policy's next-token distributions moved from the base."""
    _check_model(policy)
    _check_model(reference)
    _check_batch(batch)
    with torch.no_grad():
        logp = torch.log_softmax(policy(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask).float(), -1)
        logq = torch.log_softmax(reference(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask).float(), -1)
        kl = (logp.exp() * (logp - logq)).sum(-1)                                     # (B, T)
        return float(kl[batch.tgt_mask].mean())


# --------------------------------------------------------------------------- translating and measuring


def _sources_batch(tokenizer: SubwordVocab, sources: list[list[str]]) -> tuple[torch.Tensor, torch.Tensor]:
    encoded = tokenizer.encode_batch(sources, add_eos=True)
    src, mask, _ = pad_batch(encoded, tokenizer.pad_id)
    return src, mask


def _check_sources(sources) -> list[list[str]]:
    if isinstance(sources, str) or not isinstance(sources, Sequence) or not all(
            isinstance(s, (list, tuple)) and s and all(isinstance(w, str) for w in s) for s in sources):
        raise TypeError(f"sources must be a list of English sentences as word-token lists, got {received(sources)}")
    return [list(s) for s in sources]


def translate_tokens(model: Transformer, tokenizer: SubwordVocab, sources: Sequence[Sequence[str]], *,
                     register: str | None = None, batch_size: int = 250) -> list[str]:
    """Greedy translations (normalised French) of English word-token lists, with the register tag if given."""
    _check_model(model)
    sources = _check_sources(sources)
    if register is not None:
        check_choice(register, "register", list(REGISTERS))
        sources = [tag_source(s, register) for s in sources]
    check_positive_int(batch_size, "batch_size")
    out: list[str] = []
    model.eval()
    for start in range(0, len(sources), batch_size):
        src, mask = _sources_batch(tokenizer, sources[start:start + batch_size])
        tokens = model.translate(src, mask, max_len=2 * BENCHMARK["max_len"] + 10).tokens
        out.extend(tokenizer.detokenize(t) for t in tokens)
    return out


@torch.no_grad()
def sample_translations(model: Transformer, tokenizer: SubwordVocab, sources: Sequence[Sequence[str]], n: int, *,
                        temperature: float = 1.0, generator: torch.Generator | None = None,
                        batch_size: int = 64) -> list[list[str]]:
    """``n`` sampled translations per source (ancestral sampling at ``temperature``): ``[[n strings], …]``.

    Sources go ``batch_size`` at a time (times ``n`` rows): a batch decodes until its longest sample ends, so one
    runaway sample holds up only its own batch."""
    _check_model(model)
    sources = _check_sources(sources)
    check_positive_int(n, "n")
    check_positive_float(temperature, "temperature")
    check_positive_int(batch_size, "batch_size")
    model.eval()
    eos, bos = model.config.eos_id, model.config.bos_id
    texts: list[str] = []
    for start in range(0, len(sources), batch_size):
        chunk = sources[start:start + batch_size]
        src, mask = _sources_batch(tokenizer, [s for s in chunk for _ in range(n)])     # (b·n, S)
        state = model.start(src, mask)
        last = torch.full((src.shape[0],), bos, dtype=torch.long)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        drawn = []                                                                      # (b·n,) per step
        for _ in range(2 * BENCHMARK["max_len"] + 10):
            logp = model.step(last, state)                                              # (b·n, V)
            last = torch.where(finished, torch.full_like(last, eos),
                               sample_next(logp, temperature=temperature, generator=generator))
            drawn.append(last)
            finished |= last == eos
            if bool(finished.all()):
                break
        texts += [tokenizer.detokenize(r) for r in torch.stack(drawn, dim=1).tolist()]
    return [texts[i * n:(i + 1) * n] for i in range(len(sources))]


def tagged_test(data: TranslationData, register: str) -> TranslationData:
    """``data`` with the register tag in front of every test source (the training split left out): what
    ``evaluate`` scores when a model is asked for one register on the whole test split."""
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData (load_benchmark), got {received(data)}")
    check_choice(register, "register", list(REGISTERS))
    return TranslationData([], [(tag_source(e, register), f) for e, f in data.test], data.src_vocab,
                           data.tgt_vocab, data.max_len + 2, dict(data.info))


def held_out_preferences(*, max_len: int = BENCHMARK["max_len"]) -> list:
    """Preference pairs ``(english, vous_french, tu_french)`` whose English is in the benchmark's held-out pool:
    every Tatoeba translation of those sentences is kept out of training (the test split holds only the first
    one), so these pairs were never seen by the base model nor by any post-training run."""
    check_positive_int(max_len, "max_len")
    raw = load_tatoeba("d2l")[:]
    pairs = []
    for en_raw, fr_raw in zip(raw["en"], raw["fr"]):
        if "you" not in en_raw.lower() or not is_test_sentence(en_raw, BENCHMARK["test_per_mille"]):
            continue
        en, fr = split_tokens(en_raw), split_tokens(fr_raw)
        if 0 < len(en) <= max_len and 0 < len(fr) <= max_len:
            pairs.append((en, fr))
    return you_pairs(pairs).preferences


def implicit_reward_accuracy(policy: Transformer, reference: Transformer, preferences: Sequence,
                             tokenizer: SubwordVocab, beta: float, batch_size: int = 128) -> dict:
    """On ``preferences`` (``(english, chosen, rejected)``), the share of pairs whose chosen answer gets the higher
    implicit reward ``β log π(y|x)/π_ref(y|x)``, and the mean reward margin."""
    preferences = _check_pairs(preferences, "preferences")
    if not preferences:
        raise ValueError("preferences is empty: an accuracy needs at least one pair")
    chosen = pairs_data([(e, c) for e, c, _ in preferences], tokenizer)
    rejected = pairs_data([(e, r) for e, _, r in preferences], tokenizer)
    right, margins = 0, []
    with torch.no_grad():
        for start in range(0, len(preferences), batch_size):
            idx = list(range(start, min(start + batch_size, len(preferences))))
            result = dpo_batch(policy, reference, chosen.make_batch(idx), rejected.make_batch(idx), beta)
            right += int((result.chosen_rewards > result.rejected_rewards).sum())
            margins += (result.chosen_rewards - result.rejected_rewards).tolist()
    return {"accuracy": right / len(preferences), "margin": sum(margins) / len(margins), "n": len(preferences)}


def you_test_sources(data: TranslationData, split: str = "test") -> list[list[str]]:
    """The English sentences of ``split`` that say *you* (:func:`~coursekit.translation.register.addresses_you`):
    held out from every training, the sentences on which a register is measured."""
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData (load_benchmark), got {received(data)}")
    check_choice(split, "split", ["test", "valid"])
    return [list(e) for e, _ in data.splits()[split] if addresses_you(e)]


def repetition_rate(translations: Sequence[str]) -> float:
    """The share of translations in which a word comes twice in a row (``je je``, ``vous vous vous``): the
    degenerate outputs of a policy pushed too far from its base. French *nous nous* / *vous vous* (reflexive
    verbs) are legitimate doubles and do not count; three in a row always do."""
    if isinstance(translations, str) or not isinstance(translations, Sequence) or not all(
            isinstance(t, str) for t in translations):
        raise TypeError(f"translations must be a list of strings, got {received(translations)}")
    if not translations:
        raise ValueError("translations is empty: a rate needs at least one translation")

    def repeats(text: str) -> bool:
        words = text.split()
        for i in range(1, len(words)):
            if words[i] == words[i - 1]:
                triple = i >= 2 and words[i - 2] == words[i]
                if triple or words[i] not in ("nous", "vous"):
                    return True
        return False

    return sum(map(repeats, translations)) / len(translations)


def register_figures(model: Transformer, tokenizer: SubwordVocab, sources: Sequence[Sequence[str]], *,
                     register: str | None = None) -> dict:
    """How a model addresses the reader on ``sources``: counts of *vous* / *tu* / both / neither, the *vous* rate
    among the decided ones, the repetition rate, and the translations."""
    translations = translate_tokens(model, tokenizer, sources, register=register)
    count = vous_rate(translations)
    return {"vous": count.vous, "tu": count.tu, "both": count.both, "neither": count.neither,
            "vous_rate": count.rate, "repetition": repetition_rate(translations), "translations": translations}


# --------------------------------------------------------------------------- a reward model


class RewardModel(nn.Module):
    """The base translation model with its unembedding ``out_proj`` (d → V) replaced by one output (d → 1): the
    reward of a translation is that output at its last token, after the decoder has read the English and the
    whole French (Ouyang et al. 2022, §3.5). The body is copied and frozen; only the head ``w·h + b`` is trained
    here, so :meth:`features` can be computed once and the head trained on them."""

    def __init__(self, base: Transformer) -> None:
        super().__init__()
        _check_model(base)
        self.body = copy.deepcopy(base).requires_grad_(False).eval()
        self.body.out_proj = nn.Identity()                     # the decoder's last hidden states, (B, T, d)
        self.head = nn.Linear(base.config.d_model, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    @torch.no_grad()
    def features(self, batch: TranslationBatch) -> torch.Tensor:
        """The decoder's hidden state ``(B, d)`` at the last real token of each French answer."""
        _check_batch(batch)
        hidden = self.body(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)      # (B, T, d)
        last = batch.tgt_mask.sum(dim=1) - 1                                          # the last real decoder input
        return hidden[torch.arange(hidden.shape[0]), last]

    def forward(self, batch: TranslationBatch) -> torch.Tensor:
        """Rewards ``(B,)`` of the French of ``batch`` for its English."""
        return self.head(self.features(batch)).squeeze(-1)


# --------------------------------------------------------------------------- the committed runs


@dataclass(frozen=True)
class PostRecipe:
    """One post-training run from the committed Transformer.

    ``method``: ``sft`` (cross-entropy on *vous* pairs), ``tagged`` (cross-entropy on tagged *vous*/*tu* pairs and
    as many untagged training pairs) or ``dpo`` (*vous* chosen, *tu* rejected, the base as reference).
    ``lora_r`` 0 trains every weight; otherwise a LoRA adapter of rank ``lora_r`` on :data:`LORA_TARGETS`."""

    method: str
    updates: int
    batch_size: int = 32
    lr: float = 1e-4
    lora_r: int = 0
    lora_alpha: float = 16.0
    beta: float = 0.1
    label_smoothing: float = 0.1     # the pre-training's (cross-entropy methods only)
    warmup: int = 20                 # then the learning rate falls linearly to zero at the last update
    eval_every: int = 50
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice(self.method, "method", ["sft", "tagged", "dpo"])
        check_positive_int(self.updates, "updates")
        check_positive_int(self.batch_size, "batch_size")
        check_positive_float(self.lr, "lr")
        if isinstance(self.lora_r, bool) or not isinstance(self.lora_r, int) or self.lora_r < 0:
            raise ValueError(f"lora_r must be an int ≥ 0 (0: train every weight), got {self.lora_r!r}")
        check_positive_float(self.lora_alpha, "lora_alpha")
        check_positive_float(self.beta, "beta")
        check_probability(self.label_smoothing, "label_smoothing", inclusive_high=False)
        check_positive_int(self.warmup, "warmup")
        if self.warmup >= self.updates:
            raise ValueError(f"warmup must be shorter than the run: {self.warmup} warm-up updates of {self.updates}")
        check_positive_int(self.eval_every, "eval_every")


#: The runs behind notebook 14's summary table and β sweep.
RECIPES = {
    "sft": PostRecipe("sft", 400, lr=1e-4),
    "sft_lora": PostRecipe("sft", 400, lr=1e-3, lora_r=8),
    "tagged": PostRecipe("tagged", 1200, lr=3e-3, lora_r=8),
    "dpo": PostRecipe("dpo", 300, lr=1e-4, lora_r=8, beta=0.1),
    "dpo_beta_0.01": PostRecipe("dpo", 300, lr=1e-4, lora_r=8, beta=0.01),
    "dpo_beta_1": PostRecipe("dpo", 300, lr=1e-4, lora_r=8, beta=1.0),
    # β = 1 stopped earlier: the 300-update run's validation BLEU peaks at update 100 while its vous rate is ≥ 0.91
    "dpo_beta_1_150": PostRecipe("dpo", 150, lr=1e-4, lora_r=8, beta=1.0),
    "dpo_beta_1_100": PostRecipe("dpo", 100, lr=1e-4, lora_r=8, beta=1.0),
}


def prepare_model(recipe: PostRecipe, base: Transformer) -> Transformer:
    """A copy of the base to train: a LoRA adapter on it, or every weight trainable. DPO compares the policy's
    log-probabilities with the reference's, so its policy runs without dropout (as ``trl``'s default)."""
    if not isinstance(recipe, PostRecipe):
        raise TypeError(f"recipe must be a PostRecipe (e.g. RECIPES['dpo']), got {received(recipe)}")
    _check_model(base)
    model = copy.deepcopy(base)
    if recipe.method == "dpo":
        for module in model.modules():
            if isinstance(module, nn.Dropout):
                module.p = 0.0
            elif isinstance(getattr(module, "dropout", None), float):       # attention's dropout on its weights
                module.dropout = 0.0
    if recipe.lora_r:
        add_lora(model, LORA_TARGETS, r=recipe.lora_r, alpha=recipe.lora_alpha)
    else:
        model.requires_grad_(True)
    return model


def _train_pairs(recipe: PostRecipe, data: TranslationData, you: YouPairs, rng: random.Random) -> list:
    if recipe.method == "sft":
        return you.vous
    tagged = ([(tag_source(e, "formal"), f) for e, f in you.vous] + [(tag_source(e, "informal"), f) for e, f in you.tu])
    untagged = rng.sample(data.train, len(tagged))                     # as many untagged pairs: keep the default
    return tagged + untagged


def train_run(name: str, work: str | Path, *, data: TranslationData, resume: bool = False,
              recipe: PostRecipe | None = None, quiet: bool = True) -> tuple[Transformer, Transformer, dict]:
    """Run :data:`RECIPES` ``[name]`` (or ``recipe``) from the committed Transformer in ``work`` (checkpoints,
    ``train.log``, ``resume=True`` continues). Returns ``(model, base, state)``. Validation every ``eval_every``
    updates: BLEU on the first 300 validation pairs (untagged) and the *vous* rate on the validation sentences
    that say *you* (untagged; for ``tagged``, asked formal and informal)."""
    if recipe is None:
        check_choice(name, "name", list(RECIPES))
        recipe = RECIPES[name]
    if not isinstance(recipe, PostRecipe):
        raise TypeError(f"recipe must be a PostRecipe, got {received(recipe)}")
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be the benchmark (load_benchmark()), got {received(data)}")
    torch.manual_seed(recipe.seed)
    base, _ = load_model("transformer", data=data)
    base.requires_grad_(False)
    model = prepare_model(recipe, base)
    tok = data.src_vocab
    you = you_pairs(data.train)
    rng = random.Random(recipe.seed)
    gen = torch.Generator().manual_seed(recipe.seed)
    if recipe.method == "dpo":
        chosen = pairs_data([(e, c) for e, c, _ in you.preferences], tok)
        rejected = pairs_data([(e, r) for e, _, r in you.preferences], tok)
        n_train = len(you.preferences)
    else:
        train = pairs_data(_train_pairs(recipe, data, you, rng), tok)
        n_train = len(train.train)
    valid_you = you_test_sources(data, "valid")
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=recipe.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(
        (step + 1) / recipe.warmup, (recipe.updates - step) / (recipe.updates - recipe.warmup)))

    def step_loss(step: int) -> tuple[torch.Tensor, dict]:
        idx = torch.randint(n_train, (recipe.batch_size,), generator=gen).tolist()
        if recipe.method == "dpo":
            result = dpo_batch(model, base, chosen.make_batch(idx), rejected.make_batch(idx), recipe.beta)
            return result.loss, {"loss": result.loss.item(), "reward_accuracy": result.reward_accuracy,
                                 "margin": float((result.chosen_rewards - result.rejected_rewards).mean())}
        loss = sft_loss(model, train.make_batch(idx), recipe.label_smoothing)
        return loss, {"loss": loss.item()}

    def evaluate_valid(step: int) -> dict:
        point = {"bleu_valid": evaluate(model, data, "valid", limit=300).bleu}      # untagged: what is kept
        if recipe.method == "tagged":
            return point | {f"vous_rate_{r}": register_figures(model, tok, valid_you, register=r)["vous_rate"]
                            for r in REGISTERS}
        return point | {"vous_rate": register_figures(model, tok, valid_you)["vous_rate"]}

    state = train_steps_in_folder(work, model, optimizer, scheduler, recipe=asdict(recipe), step_loss=step_loss,
                                  steps=recipe.updates, generators={"batches": gen}, eval_every=recipe.eval_every,
                                  evaluate=evaluate_valid, resume=resume, quiet=quiet)
    state["n_train"] = n_train
    state["data"] = you.summary()
    return model, base, state


def _test_figures(model: Transformer, base: Transformer, data: TranslationData, recipe: PostRecipe) -> dict:
    tok = data.src_vocab
    test_you = you_test_sources(data)
    report = evaluate(model, data, "test")
    out = {"bleu": round(report.bleu, 2), "n_test": len(report.references),
           "repetition_all": repetition_rate(report.hypotheses)}
    # BLEU where the register matters much less: the test pairs whose English does not say "you" (on the others a
    # reference in the other register costs BLEU even for a perfect translation)
    others = [i for i, (e, _) in enumerate(data.test) if not addresses_you(e)]
    out["bleu_not_you"] = round(corpus_bleu([report.hypotheses[i] for i in others],
                                            [report.references[i] for i in others]), 2)
    out["n_not_you"] = len(others)
    you_pairs_test = pairs_data([(e, f) for e, f in data.test if addresses_you(e)], tok)
    out["kl_per_token"] = token_kl(model, base, you_pairs_test.make_batch(list(range(len(you_pairs_test.train)))))
    if recipe.method == "dpo":
        out["held_out_pairs"] = implicit_reward_accuracy(model, base, held_out_preferences(), tok, recipe.beta)
    registers = [None] + (list(REGISTERS) if recipe.method == "tagged" else [])
    for register in registers:
        figures = register_figures(model, tok, test_you, register=register)
        key = "untagged" if register is None else register
        out[key] = {k: v for k, v in figures.items() if k != "translations"}
        if register is not None:
            tagged = evaluate(model, tagged_test(data, register), "test")
            out[key]["bleu"] = round(tagged.bleu, 2)
        out.setdefault("examples", {})["untagged" if register is None else register] = figures["translations"][:20]
    out["n_you"] = len(test_you)
    return out


def export_run(name: str, model: Transformer, base: Transformer, state: dict, out: str | Path, *,
               data: TranslationData, recipe: PostRecipe | None = None) -> dict:
    """Write ``out/NAME.json``: the recipe, trainable parameters, seconds, validation curve and the test figures
    (BLEU on the whole test split; *vous* rate, repetitions and per-token KL to the base on its *you* sentences).
    For a LoRA run of the ``tagged`` method, also ``out/NAME.safetensors``: the adapter, its matrices int8 with one
    scale per row (:mod:`coursekit.training.compact`); the figures are measured on the adapter as stored."""
    if recipe is None:
        check_choice(name, "name", list(RECIPES))
        recipe = RECIPES[name]
    if not isinstance(recipe, PostRecipe):
        raise TypeError(f"recipe must be a PostRecipe, got {received(recipe)}")
    _check_model(model)
    _check_model(base)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"name": name, "recipe": asdict(recipe), "trainable_parameters": count_parameters(model),
              "base_parameters": count_parameters(base, trainable_only=False), "updates": state["step"],
              "train_seconds": round(state["seconds"], 1), "n_train": state["n_train"], "data": state["data"],
              "valid_curve": state["evals"], "train_curve": state["parts"][::10], "hardware": hardware()}
    if recipe.lora_r and recipe.method == "tagged":
        adapter = {}
        for key, value in lora_state_dict(model).items():                 # int8, one scale per row (compact.py)
            adapter[key], adapter[key + ":scale"] = quantize_int8(value)
        path = out / f"{name}.safetensors"
        save_file(adapter, str(path), metadata={"recipe": json.dumps(asdict(recipe)), "storage": STORAGE})
        stamp_content_hash(path)                                          # checked on every load, as every model
        load_lora_state_dict(model, expand_state(adapter))                # measure the weights as stored
        report["adapter_file"], report["adapter_sha256"] = path.name, sha256_file(path)
        report["adapter_bytes"] = path.stat().st_size
    start = time.monotonic()
    report["test"] = _test_figures(model, base, data, recipe)
    report["test_seconds"] = round(time.monotonic() - start, 1)
    (out / f"{name}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


def load_register_model(data: TranslationData, name: str = "tagged", directory: str | Path | None = None
                        ) -> tuple[Transformer, dict]:
    """The committed Transformer with the committed register adapter loaded (eval mode) and its report; the
    adapter's sha256 must match the report."""
    directory = Path(directory) if directory is not None else model_dir("translation") / ADAPTER_DIR
    report_path = directory / f"{name}.json"
    reproduce = (f"python -m coursekit.translation posttrain {name} --work runs/posttrain/{name} "
                 f"--out data/translation/{ADAPTER_DIR}")
    if not report_path.is_file():
        raise FileNotFoundError(f"no register adapter report at {report_path}; make it with `{reproduce}`")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    path = directory / report.get("adapter_file", f"{name}.safetensors")
    if not path.is_file() or sha256_file(path) != report.get("adapter_sha256"):
        raise ValueError(f"{path} is missing or does not match its report's sha256; re-run `{reproduce}`")
    verify_checkpoint(path)
    recipe = PostRecipe(**report["recipe"])
    base, _ = load_model("transformer", data=data)
    model = prepare_model(recipe, base)
    load_lora_state_dict(model, expand_state(load_file(str(path))))
    return model.eval(), report
