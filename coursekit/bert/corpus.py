"""What the small BERT is pre-trained on: the recipe, the corpus and the MLM + NSP batches (notebook 09).

Devlin et al. 2019, §3.1 and Appendix A.2. :class:`PretrainConfig` is the recipe (vocabulary, model size,
batches, optimisation); :mod:`coursekit.bert.pretraining` trains with it and is the command that makes the
checkpoint. The config is defined here, next to the data it describes, because that command runs as
``__main__`` and the checks below must see the one class. Read top to bottom:

1. **Corpus** (:func:`build_corpus`): WikiText-2 articles (validation + test, the splits of the offline
   mirror) give the documents for next-sentence pairs; the *sentences* of SST-2's training split give
   in-domain text for the masked LM only (task-adaptive pre-training, Gururangan et al. 2020: the
   labels are never read, and the SST-2 dev set is never seen). One WordPiece vocabulary is trained
   on both. The last ``held_out_articles`` articles are kept aside to measure both losses.
   :func:`pretraining_text` can also keep SST-2's learning-rate selection sentences out
   (``hold_out_selection``) and add the translation benchmark's English sentences (``extra_mlm_text``);
   docs/PRETRAINING_TRIALS.md says what that trial measured.
2. **Batch** (:func:`make_batch`): NSP pairs ``[CLS] A [SEP] B [SEP]`` and in-domain sequences
   ``[CLS] A [SEP]``, padded, dynamically masked (15%; 80/10/10). In-domain sequences carry the NSP
   label ``-100``, so they add to the MLM loss only. With ``pack_in_domain`` each in-domain sequence is
   filled with whole sentences separated by ``[SEP]`` up to ``max_len`` (RoBERTa's FULL-SENTENCES,
   Liu et al. 2019 §4.2): SST-2 sentences are short, so one sentence per row would be mostly padding.
   :func:`sample_batch` draws a training batch, :func:`held_out_batch` the fixed held-out one;
   :func:`unigram_entropy` is the MLM loss of a predictor that ignores the context.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from coursekit import data
from coursekit.bert.heads import _check_tokenizer
from coursekit.bert.model import BertConfig, _check_id
from coursekit.bert.objectives import (
    IGNORE_INDEX,
    IS_NEXT,
    NOT_NEXT,
    build_pair,
    make_nsp_pairs,
    mask_tokens,
    split_sentences,
    wikitext_documents,
)
from coursekit.bert.sst2 import PROTOCOL, sst2_splits
from coursekit.text import pad_batch, train_wordpiece
from coursekit.translation.benchmark import load_short_benchmark
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_int as _check_int
from coursekit.validation import check_positive_float, check_positive_int, check_probability

__all__ = ["LAYOUTS", "OBJECTIVES", "PretrainConfig", "PretrainingCorpus", "build_corpus", "doc_sentence_rows",
           "held_out_batch", "make_batch", "pack_sentences", "sample_batch", "unigram_entropy"]

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
EXTRA_MLM_TEXT = ("", "translation_en")
#: Where the documents (NSP pairs + MLM) come from: WikiText-2 validation + test (raw, ~0.5M words; the first
#: committed run), IMDB reviews (unlabelled + training texts, 17.4M words; movie reviews like SST-2's), WikiText-2's
#: training split (tokenized, 2.1M words; general text), or both of the last two (reviews first, so the held-out
#: documents are Wikipedia articles).
DOCUMENTS = ("wikitext2", "imdb", "wikitext2-train", "imdb+wikitext2-train")
#: The pre-training objective: BERT's masked LM + next-sentence prediction, or ELECTRA's replaced-token detection
#: (Clark et al. 2020; :mod:`coursekit.bert.electra`: a small generator MLM + the discriminator, no NSP).
OBJECTIVES = ("mlm_nsp", "electra")
#: How a document becomes the rows of a training batch: BERT's NSP pairs ``[CLS] A [SEP] B [SEP]`` (half of them
#: with B from another document), or RoBERTa's DOC-SENTENCES (Liu et al. 2019, §4.2): a run of consecutive
#: sentences of one document, as many as fit in ``max_len``, with no NSP label. The held-out batch is NSP pairs
#: of the held-out documents in both layouts, so that the held-out figures of two runs compare.
LAYOUTS = ("nsp_pairs", "doc_sentences")
#: The fields only an ELECTRA run reads (left out of an MLM + NSP run's resumable recipe, which stays as it was).
ELECTRA_FIELDS = ("generator_layers", "rtd_weight", "sample_temperature")


@dataclass
class PretrainConfig:
    """The recipe. The defaults are the committed run (``data/bert/``); notebook 09 runs the same recipe
    with fewer ``steps`` live. ``objective="electra"`` trains the same discriminator size with ELECTRA's
    replaced-token detection instead of MLM + NSP (:mod:`coursekit.bert.electra`; the batches are the same,
    their NSP labels unread)."""

    vocab_size: int = 8000           # WordPiece vocabulary trained on the pre-training text
    d_model: int = 128               # H
    n_layers: int = 4                # L
    n_heads: int = 4                 # A
    d_ff: int = 256
    max_len: int = 64                # tokens per sequence, [CLS] and [SEP]s included
    batch_size: int = 64             # sequences per step
    in_domain_fraction: float = 0.5  # share of each batch that is SST-2 train sentences (MLM only)
    pack_in_domain: bool = False     # fill each in-domain sequence with several sentences up to max_len
    steps: int = 10_000
    learning_rate: float = 1e-3
    warmup_steps: int = 500
    min_lr_ratio: float = 0.1        # cosine decay to learning_rate × min_lr_ratio at the last step
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    eval_every: int = 500
    held_out_articles: int = 12
    held_out_pairs: int = 256
    seed: int = 0
    threads: int = 0                 # torch intra-op threads; 0 keeps the current setting
    init_from: str = ""              # a model directory (save_pretrained) to continue from: its weights and
                                     # tokenizer start the run (domain-adaptive pre-training); "" = random init
    hold_out_selection: bool = False  # leave SST-2's learning-rate selection sentences out of the MLM text
    extra_mlm_text: str = ""         # "translation_en": add the English side of the translation benchmark's
                                     # training pairs (short everyday sentences) as MLM-only text
    documents: str = "wikitext2"     # one of DOCUMENTS: the text of the NSP pairs (and most of the MLM)
    objective: str = "mlm_nsp"       # one of OBJECTIVES; "electra" trains a generator + discriminator and keeps D
    generator_layers: int = 1        # ELECTRA: the generator's depth (same width as D, fewer layers: < n_layers)
    rtd_weight: float = 50.0         # ELECTRA: λ, the weight of the discriminator's loss (50 in the paper)
    sample_temperature: float = 1.0  # ELECTRA: x̂ ~ softmax(logits / T) (the released code's `temperature`)
    layout: str = "nsp_pairs"        # one of LAYOUTS: NSP pairs, or runs of one document's sentences (no NSP)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_len", "batch_size", "steps",
                     "eval_every", "held_out_articles", "held_out_pairs"):
            check_positive_int(getattr(self, name), name)
        check_probability(self.in_domain_fraction, "in_domain_fraction")
        check_positive_float(self.learning_rate, "learning_rate")
        _check_count(self.warmup_steps, "warmup_steps")
        check_probability(self.min_lr_ratio, "min_lr_ratio")
        check_positive_float(self.weight_decay, "weight_decay", allow_zero=True)
        check_positive_float(self.grad_clip, "grad_clip")
        _check_int(self.seed, "seed")
        _check_count(self.threads, "threads")
        if not isinstance(self.init_from, str):
            raise TypeError(f"init_from must be a directory path as a str ('' for random init), "
                            f"got {type(self.init_from).__name__}")
        for name in ("pack_in_domain", "hold_out_selection"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        if self.documents not in DOCUMENTS:
            raise ValueError(f"documents must be one of {DOCUMENTS}, got {self.documents!r}")
        if self.extra_mlm_text not in EXTRA_MLM_TEXT:
            raise ValueError(f"extra_mlm_text must be one of {EXTRA_MLM_TEXT}, got {self.extra_mlm_text!r}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        check_positive_int(self.generator_layers, "generator_layers")
        check_positive_float(self.rtd_weight, "rtd_weight", allow_zero=True)
        check_positive_float(self.sample_temperature, "sample_temperature")
        if self.objective == "electra" and self.generator_layers >= self.n_layers:
            raise ValueError(f"generator_layers must be below n_layers={self.n_layers} (ELECTRA's generator is the "
                             f"smaller model), got {self.generator_layers}")
        if self.objective == "electra" and self.init_from:
            raise ValueError(f"init_from={self.init_from!r} continues a saved BERT, which has no generator: "
                             f"objective='electra' starts from random init (use init_from='')")
        if self.max_len < 5:
            raise ValueError(f"max_len must leave room for [CLS] A [SEP] B [SEP] (at least 5), got {self.max_len}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if self.n_in_domain >= self.batch_size:
            raise ValueError(f"in_domain_fraction={self.in_domain_fraction} leaves no NSP pair in a batch of "
                             f"{self.batch_size}; use a fraction below {1 - 1 / self.batch_size:.3f}")

    @property
    def n_in_domain(self) -> int:
        """Single in-domain sentences per batch (the rest are NSP pairs)."""
        return round(self.batch_size * self.in_domain_fraction)

    def model_config(self, vocab_size: int) -> BertConfig:
        return BertConfig(vocab_size=vocab_size, d_model=self.d_model, n_layers=self.n_layers,
                          n_heads=self.n_heads, d_ff=self.d_ff, max_len=max(128, self.max_len))


@dataclass
class PretrainingCorpus:
    """Token ids ready for batching: documents are lists of sentences, sentences lists of ids."""

    tokenizer: object                            # a tokenizers.Tokenizer (WordPiece)
    train_docs: list[list[list[int]]]            # WikiText-2 articles for NSP pairs and MLM
    held_docs: list[list[list[int]]]             # the last articles, never trained on
    in_domain: list[list[int]]                   # SST-2 train sentences, MLM only

    def __post_init__(self) -> None:
        _check_tokenizer(self.tokenizer)
        for name in ("train_docs", "held_docs"):
            docs = getattr(self, name)
            if not isinstance(docs, list) or not all(isinstance(doc, list) for doc in docs):
                raise TypeError(f"{name} must be a list of documents, each a list of sentences of token ids")
            wrong = next((s for doc in docs for s in doc if not isinstance(s, (list, tuple))), None)
            if wrong is not None:
                raise TypeError(f"{name} must be a list of documents, each a list of sentences of token ids; "
                                f"got a {type(wrong).__name__} sentence")
        if not isinstance(self.in_domain, list) or not all(isinstance(s, (list, tuple)) for s in self.in_domain):
            raise TypeError("in_domain must be a list of sentences, each a list of token ids")

    def special_id(self, token: str) -> int:
        """The id of a special token such as ``"[MASK]"``."""
        found = self.tokenizer.token_to_id(token)
        if found is None:
            raise ValueError(f"the tokenizer has no token {token!r}")
        return found


def _check_cfg(cfg) -> None:
    if not isinstance(cfg, PretrainConfig):
        raise TypeError(f"cfg must be a PretrainConfig, got {type(cfg).__name__}")


def _check_corpus(corpus, *, optional: bool = False) -> None:
    if not (isinstance(corpus, PretrainingCorpus) or (optional and corpus is None)):
        raise TypeError(f"corpus must be a PretrainingCorpus{' or None' if optional else ''}, "
                        f"got {type(corpus).__name__}")


def _check_rng(rng) -> None:
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")


def _check_text_list(values, name: str) -> None:
    if isinstance(values, str):
        raise TypeError(f"{name} must be a list of strings, got one string")


def pretraining_text(cfg: PretrainConfig | None = None) -> tuple[list[str], list[str]]:
    """``(wikitext_lines, in_domain_sentences)`` from ``coursekit.data`` (mirror, cache or download).

    The in-domain sentences are SST-2's training sentences (without the fine-tuning protocol's
    learning-rate selection sentences if ``cfg.hold_out_selection``), followed by the English side of
    the translation benchmark's training pairs, once each and sorted, if ``cfg.extra_mlm_text`` is
    ``"translation_en"``. SST-2's validation sentences (the test set of notebook 09) are never included.
    """
    if cfg is not None:
        _check_cfg(cfg)
    wiki = data.load_wikitext2("raw")
    lines = list(wiki["validation"]["text"]) + list(wiki["test"]["text"])
    sentences = list(data.load_sst2()["train"]["sentence"])
    if cfg is not None and cfg.hold_out_selection:
        selection = set(sst2_splits(1, PROTOCOL.n_select)["select"]["sentence"])
        sentences = [s for s in sentences if s not in selection]
    if cfg is not None and cfg.extra_mlm_text == "translation_en":
        sentences += sorted({" ".join(english) for english, _ in load_short_benchmark().train})
    return lines, sentences


def review_documents(reviews: list[str], *, min_sentences: int = 2) -> list[list[str]]:
    """Reviews (cleaned text, :func:`coursekit.data.clean_review`) → documents, each a list of sentences
    (:func:`coursekit.bert.objectives.split_sentences`); reviews of fewer than ``min_sentences`` sentences
    are left out."""
    _check_text_list(reviews, "reviews")
    check_positive_int(min_sentences, "min_sentences")
    docs = [split_sentences(review) for review in reviews]
    return [doc for doc in docs if len(doc) >= min_sentences]


def pretraining_documents(cfg: PretrainConfig) -> list[list[str]]:
    """The documents ``cfg.documents`` names, each a list of sentences (see :data:`DOCUMENTS`).

    IMDB's test reviews are never read; SST-2 is not IMDB (Rotten Tomatoes snippets), and the overlap of its
    dev sentences with these reviews is measured in docs/PRETRAINING_TRIALS.md.
    """
    _check_cfg(cfg)
    if cfg.documents == "wikitext2":
        return wikitext_documents(pretraining_text(cfg)[0])
    docs: list[list[str]] = []
    if "imdb" in cfg.documents:
        reviews = list(data.load_imdb("unsup")["text"]) + list(data.load_imdb("train")["text"])
        docs += review_documents(reviews)
    if "wikitext2-train" in cfg.documents:
        docs += wikitext_documents(data.load_wikitext2("tokens", ("train",))["train"]["text"])
    return docs


def build_corpus(cfg: PretrainConfig, wiki_lines: list[str] | None = None,
                 in_domain_sentences: list[str] | None = None, tokenizer=None) -> PretrainingCorpus:
    """Train the WordPiece vocabulary on all the text (unless ``tokenizer`` is given) and encode it.

    The documents are the articles of ``wiki_lines`` if given, else :func:`pretraining_documents` (what
    ``cfg.documents`` names); the in-domain sentences not given come from ``pretraining_text(cfg)``.
    """
    _check_cfg(cfg)
    for name, value in (("wiki_lines", wiki_lines), ("in_domain_sentences", in_domain_sentences)):
        if value is not None:
            _check_text_list(value, name)
    if tokenizer is not None:
        _check_tokenizer(tokenizer)
    default_wiki = wiki_lines is None and cfg.documents == "wikitext2"
    if in_domain_sentences is None or default_wiki:
        default_lines, default_sentences = pretraining_text(cfg)
        if default_wiki:
            wiki_lines = default_lines                 # the vocabulary is trained on the lines, headings included
        in_domain_sentences = default_sentences if in_domain_sentences is None else in_domain_sentences
    docs = wikitext_documents(wiki_lines) if wiki_lines is not None else pretraining_documents(cfg)
    if tokenizer is None:
        text = list(wiki_lines) if wiki_lines is not None else [s for doc in docs for s in doc]
        tokenizer = train_wordpiece(text + list(in_domain_sentences), vocab_size=cfg.vocab_size)
    missing = [t for t in SPECIAL_TOKENS if tokenizer.token_to_id(t) is None]
    if missing:
        raise ValueError(f"the tokenizer lacks the BERT special tokens {missing}")
    if len(docs) <= cfg.held_out_articles + 1:
        raise ValueError(f"need more than {cfg.held_out_articles + 1} articles, got {len(docs)}")
    # a sentence that encodes to no piece at all cannot be an NSP sentence: it is left out, as in in_domain
    id_docs = [[e.ids for e in tokenizer.encode_batch(doc, add_special_tokens=False) if e.ids] for doc in docs]
    in_domain = [e.ids for e in tokenizer.encode_batch(list(in_domain_sentences), add_special_tokens=False)]
    return PretrainingCorpus(tokenizer, id_docs[:-cfg.held_out_articles], id_docs[-cfg.held_out_articles:],
                             [s for s in in_domain if s])


def make_batch(corpus: PretrainingCorpus, pairs: list[tuple], singles: list[list[int]], *, max_len: int,
               generator: torch.Generator | None = None) -> tuple[torch.Tensor, ...]:
    """NSP pairs ``(A, B, label)`` + single sentences → a masked batch.

    Returns ``(input_ids, token_type_ids, attention_mask, mlm_labels, nsp_labels)``: the first four
    (B, T), ``nsp_labels`` (B,) with ``-100`` for the single sentences. Masking is dynamic: a fresh
    15% selection on every call.
    """
    _check_corpus(corpus)
    if not pairs and not singles:
        raise ValueError("make_batch needs at least one pair or sentence")
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 3:
            got = f"{len(pair)} items" if isinstance(pair, (tuple, list)) else type(pair).__name__
            raise ValueError(f"pairs[{i}] must be (A, B, label), got {got}")
        if not isinstance(pair[2], int) or isinstance(pair[2], bool) or pair[2] not in (IS_NEXT, NOT_NEXT):
            raise ValueError(f"pairs[{i}] has NSP label {pair[2]!r}; expected IS_NEXT (0) or NOT_NEXT (1)")
    cls_id, sep_id, pad_id, mask_id = (corpus.special_id(t) for t in ("[CLS]", "[SEP]", "[PAD]", "[MASK]"))
    built = [build_pair(a, b, cls_id=cls_id, sep_id=sep_id, max_len=max_len) for a, b, _ in pairs]
    built += [build_pair(a, None, cls_id=cls_id, sep_id=sep_id, max_len=max_len) for a in singles]
    ids, keep, _ = pad_batch([i for i, _ in built], pad_id)                      # (B, T)
    segments, _, _ = pad_batch([s for _, s in built], 0)                         # (B, T)
    corrupted, mlm_labels = mask_tokens(ids, vocab_size=corpus.tokenizer.get_vocab_size(), mask_id=mask_id,
                                        special_ids=(cls_id, sep_id), pad_id=pad_id, generator=generator)
    nsp_labels = torch.tensor([label for *_, label in pairs] + [IGNORE_INDEX] * len(singles))
    return corrupted, segments, keep.long(), mlm_labels, nsp_labels


def pack_sentences(sentences: list[list[int]], n: int, *, max_len: int, sep_id: int,
                   rng: random.Random) -> list[list[int]]:
    """``n`` rows of randomly drawn whole sentences joined by ``[SEP]``, each as long as fits in ``max_len``
    once ``[CLS]`` and the final ``[SEP]`` are added (a first sentence longer than that is cut by
    :func:`coursekit.bert.objectives.build_pair`)."""
    if not sentences:
        raise ValueError("pack_sentences needs at least one sentence")
    for i, sentence in enumerate(sentences):
        if len(sentence) == 0:
            raise ValueError(f"sentences[{i}] is empty")
    check_positive_int(n, "n")
    check_positive_int(max_len, "max_len")
    if max_len < 3:
        raise ValueError(f"max_len must leave room for [CLS] and [SEP] and one token (at least 3), got {max_len}")
    _check_id(sep_id, "sep_id")
    _check_rng(rng)
    budget = max_len - 2
    rows = []
    for _ in range(n):
        row = list(rng.choice(sentences))
        while True:
            nxt = rng.choice(sentences)
            if len(row) + 1 + len(nxt) > budget:
                break
            row += [sep_id, *nxt]
        rows.append(row)
    return rows


def doc_sentence_rows(documents: list[list[list[int]]], n: int, *, max_len: int,
                      rng: random.Random) -> list[list[int]]:
    """``n`` rows of RoBERTa's DOC-SENTENCES: each a random document's sentences from a random one on, joined
    as running text (no separator), as many whole sentences as fit in ``max_len`` once ``[CLS]`` and ``[SEP]``
    are added (a first sentence longer than that is cut by :func:`coursekit.bert.objectives.build_pair`).
    Every row holds one document only, so what a sentence says about its document (a review's verdict) is
    context for the others."""
    if isinstance(documents, list):
        for i, doc in enumerate(documents):
            if isinstance(doc, list) and not all(isinstance(s, (list, tuple)) and s for s in doc):
                raise ValueError(f"documents[{i}] must be a non-empty list of non-empty sentences of token ids")
    return _sentence_runs(documents, n, max_len=max_len, rng=rng)


def _sentence_runs(documents: list[list[list[int]]], n: int, *, max_len: int,
                   rng: random.Random) -> list[list[int]]:
    """:func:`doc_sentence_rows` without reading every sentence: :func:`sample_batch` calls this every step on a
    corpus whose sentences were checked when it was built, and reading all ~1M sentences of the reviews there
    cost 60 ms a step. The documents themselves are still checked (a few ms)."""
    if not isinstance(documents, list) or not documents:
        raise ValueError("doc_sentence_rows needs a non-empty list of documents")
    for i, doc in enumerate(documents):
        if not isinstance(doc, list) or not doc:
            raise ValueError(f"documents[{i}] must be a non-empty list of non-empty sentences of token ids")
    check_positive_int(n, "n")
    check_positive_int(max_len, "max_len")
    if max_len < 3:
        raise ValueError(f"max_len must leave room for [CLS] and [SEP] and one token (at least 3), got {max_len}")
    _check_rng(rng)
    budget = max_len - 2
    rows = []
    for _ in range(n):
        doc = rng.choice(documents)
        i = rng.randrange(len(doc))
        row = list(doc[i])
        for sentence in doc[i + 1:]:
            if len(row) + len(sentence) > budget:
                break
            row += sentence
        rows.append(row)
    return rows


def sample_batch(corpus: PretrainingCorpus, cfg: PretrainConfig, rng: random.Random,
                 generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """One training batch: ``batch_size - n_in_domain`` document rows — fresh NSP pairs, or with
    ``cfg.layout == "doc_sentences"`` runs of one document's sentences (:func:`doc_sentence_rows`, NSP label
    -100) — + ``n_in_domain`` in-domain rows (one SST-2 sentence each, or several packed with
    ``cfg.pack_in_domain``)."""
    _check_corpus(corpus)
    _check_cfg(cfg)
    _check_rng(rng)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    n_docs = cfg.batch_size - cfg.n_in_domain
    if cfg.layout == "doc_sentences":
        pairs, runs = [], _sentence_runs(corpus.train_docs, n_docs, max_len=cfg.max_len, rng=rng)
    else:
        pairs, runs = make_nsp_pairs(corpus.train_docs, n_docs, rng=rng), []
    if not corpus.in_domain:
        singles = []
    elif cfg.pack_in_domain:
        singles = pack_sentences(corpus.in_domain, cfg.n_in_domain, max_len=cfg.max_len,
                                 sep_id=corpus.special_id("[SEP]"), rng=rng)
    else:
        singles = [rng.choice(corpus.in_domain) for _ in range(cfg.n_in_domain)]
    return make_batch(corpus, pairs, runs + singles, max_len=cfg.max_len, generator=generator)


def held_out_batch(corpus: PretrainingCorpus, cfg: PretrainConfig) -> tuple[torch.Tensor, ...]:
    """A fixed batch of NSP pairs from the held-out articles (fixed pairs and fixed mask)."""
    _check_corpus(corpus)
    _check_cfg(cfg)
    pairs = make_nsp_pairs(corpus.held_docs, cfg.held_out_pairs, rng=cfg.seed + 1)
    return make_batch(corpus, pairs, [], max_len=cfg.max_len, generator=torch.Generator().manual_seed(cfg.seed + 1))


def unigram_entropy(corpus: PretrainingCorpus) -> float:
    """Entropy (nats) of the piece frequencies of the training text: the MLM loss of a model that ignores
    the context and always predicts the corpus's piece distribution."""
    _check_corpus(corpus)
    ids = [i for doc in corpus.train_docs for sentence in doc for i in sentence]
    ids += [i for sentence in corpus.in_domain for i in sentence]
    if not ids:
        raise ValueError("the corpus has no tokens: the unigram entropy is undefined")
    counts = torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=corpus.tokenizer.get_vocab_size()).double()
    p = counts[counts > 0] / counts.sum()
    return float(-(p * p.log()).sum())
