"""BART's noise functions: how a document is corrupted before the model learns to restore it (notebook 11).

Lewis et al. 2020, *BART: Denoising Sequence-to-Sequence Pre-training for Natural Language Generation,
Translation, and Comprehension*, §2.2 and Figure 2. BART is trained to reconstruct a document from a
corrupted version of it; the paper compares five corruptions:

* **token masking** — as BERT: random tokens are replaced by ``[MASK]``;
* **token deletion** — random tokens are deleted; the model must also find *where* input is missing;
* **text infilling** — spans with lengths drawn from Poisson(λ = 3) are each replaced by a *single*
  ``[MASK]`` (SpanBERT-style, but one mask per span); a span of length 0 inserts a ``[MASK]``, so the
  model must also learn how many tokens a mask stands for;
* **sentence permutation** — the document is split into sentences at full stops and they are shuffled;
* **document rotation** — a token is chosen uniformly at random and the document is rotated to start
  with it; the model must find the start of the document.

Every function here corrupts **one document**, a 1-D sequence of token ids, and has the form
``noise(ids, *, generator=None, **parameters) -> LongTensor``. Special tokens (``<bos>``, ``<eos>``,
``<pad>``, … given as ``special_ids``) are never masked, deleted or moved: the non-special tokens are
the *content*, and the specials stay where they are. All randomness comes from ``generator`` (a
``torch.Generator``), so a seeded generator reproduces a corruption exactly. Bind the parameters with
:func:`functools.partial` and chain corruptions with :func:`compose`, e.g. the paper's best scheme::

    noise = compose(partial(sentence_permutation, sentence_end_ids={dot}, special_ids=specials),
                    partial(text_infilling, mask_id=mask, ratio=0.3, special_ids=specials))
    corrupted = noise(ids, generator=torch.Generator().manual_seed(0))
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Callable, Iterable, Sequence

import torch

from coursekit.validation import check_generator as _check_generator
from coursekit.validation import check_int_sequence, check_positive_float, check_probability, received

__all__ = [
    "NoiseFn",
    "compose",
    "diff_html",
    "diff_tokens",
    "document_rotation",
    "poisson_span_lengths",
    "sentence_permutation",
    "split_sentences",
    "text_infilling",
    "token_deletion",
    "token_masking",
]

NoiseFn = Callable[..., torch.Tensor]  # noise(ids, *, generator=None) -> ids


# ---------------------------------------------------------------------------------------------
# Input handling shared by all noise functions
# ---------------------------------------------------------------------------------------------

def _as_ids(ids, name: str = "ids") -> torch.Tensor:
    """A 1-D int64 CPU tensor of one document's token ids (a list of ints is accepted)."""
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1:
            raise ValueError(f"{name} must be ONE document, a 1-D sequence of token ids, got shape {tuple(ids.shape)} "
                             "(apply the noise to each row of a batch separately)")
        if ids.is_floating_point() or ids.dtype == torch.bool or ids.is_complex():
            raise TypeError(f"{name} must hold integer token ids, got dtype {ids.dtype}")
        out = ids.detach().to("cpu", torch.long)
    elif isinstance(ids, (list, tuple)):
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            bad = next(i for i in ids if not isinstance(i, int) or isinstance(i, bool))
            raise TypeError(f"{name} must be a list of int token ids, found {bad!r} ({type(bad).__name__})")
        out = torch.tensor(ids, dtype=torch.long)
    else:
        raise TypeError(f"{name} must be a 1-D LongTensor or a list of ints, got {type(ids).__name__}")
    if len(out) and int(out.min()) < 0:
        raise ValueError(f"{name} must hold token ids ≥ 0, got {int(out.min())}")
    return out


def _as_id_set(ids: Iterable[int] | int | None, name: str) -> frozenset[int]:
    if ids is None:
        return frozenset()
    if isinstance(ids, int) and not isinstance(ids, bool):
        return frozenset({ids})
    try:
        out = frozenset(ids)
    except TypeError:
        raise TypeError(f"{name} must be an int or an iterable of ints, got {type(ids).__name__}") from None
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in out):
        raise TypeError(f"{name} must contain ints, got {sorted(map(repr, out))}")
    return out


def _content_mask(ids: torch.Tensor, special_ids: frozenset[int]) -> torch.Tensor:
    """Bool (T,): True at content (non-special) positions, the only ones a noise may touch."""
    if not special_ids:
        return torch.ones_like(ids, dtype=torch.bool)
    return ~torch.isin(ids, torch.tensor(sorted(special_ids), dtype=torch.long))


def _check_mask_id(mask_id) -> int:
    if isinstance(mask_id, bool) or not isinstance(mask_id, int):
        raise TypeError(f"mask_id must be an int token id, got {received(mask_id)}")
    if mask_id < 0:
        raise ValueError(f"mask_id must be a token id ≥ 0, got {mask_id}")
    return mask_id


MAX_POISSON_LAMBDA = 1e6  # a mean span length in tokens; torch's Poisson sampler overflows from about 9e18


def _check_lambda(poisson_lambda) -> float:
    check_positive_float(poisson_lambda, "poisson_lambda")
    if poisson_lambda > MAX_POISSON_LAMBDA:
        raise ValueError(f"poisson_lambda must be at most {MAX_POISSON_LAMBDA:g} (a mean span length in tokens), "
                         f"got {poisson_lambda:g}")
    return float(poisson_lambda)


def _rand(n: int, generator: torch.Generator | None) -> torch.Tensor:
    return torch.rand(n, generator=generator)


# ---------------------------------------------------------------------------------------------
# Token masking and token deletion (Figure 2, left)
# ---------------------------------------------------------------------------------------------

def token_masking(ids, *, mask_id: int, ratio: float = 0.15, special_ids: Iterable[int] = (),
                  generator: torch.Generator | None = None) -> torch.Tensor:
    """Replace each content token by ``mask_id`` with probability ``ratio`` (BERT's masking, no 80/10/10).

    The length is unchanged: ``A B C D`` → ``A [MASK] C D``.
    """
    ids = _as_ids(ids)
    special = _as_id_set(special_ids, "special_ids")
    mask_id = _check_mask_id(mask_id)
    check_probability(ratio, "ratio")
    _check_generator(generator)
    chosen = _content_mask(ids, special) & (_rand(len(ids), generator) < ratio)  # (T,)
    return ids.masked_fill(chosen, mask_id)


def token_deletion(ids, *, ratio: float = 0.15, special_ids: Iterable[int] = (),
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """Delete each content token with probability ``ratio``: ``A B C D`` → ``A C D`` (no trace left)."""
    ids = _as_ids(ids)
    special = _as_id_set(special_ids, "special_ids")
    check_probability(ratio, "ratio")
    _check_generator(generator)
    deleted = _content_mask(ids, special) & (_rand(len(ids), generator) < ratio)  # (T,)
    return ids[~deleted]


# ---------------------------------------------------------------------------------------------
# Text infilling (Figure 2, centre)
# ---------------------------------------------------------------------------------------------

def poisson_span_lengths(n_tokens: int, *, poisson_lambda: float = 3.0,
                         generator: torch.Generator | None = None) -> torch.Tensor:
    """Span lengths ~ Poisson(λ), drawn until they add up to ``n_tokens``; the last one is cut to fit.

    Zero-length spans are kept (each becomes an inserted ``[MASK]``), so ``lengths.sum() == n_tokens``.
    """
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int):
        raise TypeError(f"n_tokens must be an int, got {type(n_tokens).__name__}")
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be ≥ 0, got {n_tokens}")
    _check_lambda(poisson_lambda)
    _check_generator(generator)
    lengths: list[int] = []
    total = 0
    while total < n_tokens:
        draws = torch.poisson(torch.full((max(4, int(2 * (n_tokens - total) / poisson_lambda) + 1),),
                                         float(poisson_lambda)), generator=generator).long().tolist()
        for length in draws:
            length = min(length, n_tokens - total)
            lengths.append(length)
            total += length
            if total == n_tokens:
                break
    return torch.tensor(lengths, dtype=torch.long)


def text_infilling(ids, *, mask_id: int, ratio: float = 0.3, poisson_lambda: float = 3.0,
                   special_ids: Iterable[int] = (), generator: torch.Generator | None = None,
                   return_masked: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Replace spans covering ``round(ratio · n_content)`` tokens, each span by ONE ``mask_id``.

    1. Span lengths ~ Poisson(λ) (:func:`poisson_span_lengths`) add up to the number of tokens to mask.
    2. The ``n - n_mask`` tokens that stay cut the document into ``n - n_mask + 1`` *gaps* (before the
       first kept token, between two, after the last). Each span goes into its own randomly chosen gap,
       so two spans never touch (touching spans would be indistinguishable from one longer span); if there
       are more spans than gaps, the extra ones merge with another span in the same gap.
    3. Each gap with a span becomes one ``[MASK]``. A span of length 0 in a gap *inserts* a ``[MASK]``.

    So exactly ``round(ratio · n)`` content tokens disappear and the output holds one ``[MASK]`` per
    non-merged span. Special tokens are never inside a span: a span interrupted by a special token
    continues after it with a fresh ``[MASK]``.

    ``return_masked=True`` also returns which positions of ``ids`` were hidden, a (T,) bool tensor: the
    tokens a reconstruction must *fill* (the others it must *copy*).
    """
    if not isinstance(return_masked, bool):
        raise TypeError(f"return_masked must be a bool, got {return_masked!r}")
    ids = _as_ids(ids)
    special = _as_id_set(special_ids, "special_ids")
    mask_id = _check_mask_id(mask_id)
    check_probability(ratio, "ratio")
    _check_lambda(poisson_lambda)   # checked even when no span is drawn
    _check_generator(generator)
    content = _content_mask(ids, special)                                  # (T,)
    n = int(content.sum())
    n_mask = int(round(ratio * n))
    if n_mask == 0:
        return (ids.clone(), torch.zeros(len(ids), dtype=torch.bool)) if return_masked else ids.clone()
    lengths = poisson_span_lengths(n_mask, poisson_lambda=poisson_lambda, generator=generator)  # (k,)
    n_gaps = n - n_mask + 1
    k = len(lengths)
    # gap g of each span: distinct gaps while there are enough, then the extra spans join chosen ones
    gap_of_span = torch.randperm(n_gaps, generator=generator)[: min(k, n_gaps)]
    if k > n_gaps:
        gap_of_span = torch.cat([gap_of_span, gap_of_span[torch.randint(n_gaps, (k - n_gaps,), generator=generator)]])
    span_in_gap = torch.zeros(n_gaps, dtype=torch.long)                    # tokens masked in each gap
    has_span = torch.zeros(n_gaps, dtype=torch.bool)
    span_in_gap.index_add_(0, gap_of_span, lengths)
    has_span[gap_of_span] = True
    # content layout: gap 0, kept token 0, gap 1, kept token 1, ..., gap n-n_mask
    masked = torch.zeros(n, dtype=torch.bool)                              # over the content tokens
    insert_before = torch.zeros(n + 1, dtype=torch.bool)                   # zero-length spans
    pos = 0
    for g in range(n_gaps):
        if has_span[g] and span_in_gap[g] == 0:
            insert_before[pos] = True
        masked[pos:pos + int(span_in_gap[g])] = True
        pos += int(span_in_gap[g]) + 1                                     # skip the span, then one kept token
    out = _rebuild_with_masks(ids, content, masked, insert_before, mask_id)
    if not return_masked:
        return out
    hidden = torch.zeros(len(ids), dtype=torch.bool)                       # over all positions of ids
    hidden[content.nonzero().squeeze(1)[masked]] = True
    return out, hidden


def _rebuild_with_masks(ids: torch.Tensor, content: torch.Tensor, masked: torch.Tensor,
                        insert_before: torch.Tensor, mask_id: int) -> torch.Tensor:
    """Walk the document: specials copied, kept content copied, each run of masked content → one mask."""
    out: list[int] = []
    c = 0                          # index among the content tokens
    in_span = False
    for token, is_content in zip(ids.tolist(), content.tolist()):
        if not is_content:
            out.append(token)
            in_span = False        # a special token interrupts a span
            continue
        if insert_before[c]:
            out.append(mask_id)
        if masked[c]:
            if not in_span:
                out.append(mask_id)
            in_span = True
        else:
            out.append(token)
            in_span = False
        c += 1
        if c == len(masked) and insert_before[c]:   # a zero-length span after the last content token
            out.append(mask_id)                      # (before any trailing special such as <eos>)
    return torch.tensor(out, dtype=torch.long)


# ---------------------------------------------------------------------------------------------
# Sentence permutation and document rotation (Figure 2, right)
# ---------------------------------------------------------------------------------------------

def split_sentences(tokens: Sequence[int], sentence_end_ids: Iterable[int]) -> list[list[int]]:
    """Cut a token list after each sentence-final token; a last sentence without one is kept too.

    ``tokens`` is a list of ints or a 1-D integer tensor (read as its list of ints).
    """
    tokens = check_int_sequence(tokens, "tokens")
    ends = _as_id_set(sentence_end_ids, "sentence_end_ids")
    if not ends:
        raise ValueError("sentence_end_ids must name at least one token id (e.g. the id of '.')")
    sentences, current = [], []
    for t in tokens:
        current.append(t)
        if t in ends:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def _write_back(ids: torch.Tensor, content: torch.Tensor, new_content: list[int]) -> torch.Tensor:
    out = ids.clone()
    out[content] = torch.tensor(new_content, dtype=torch.long)
    return out


def sentence_permutation(ids, *, sentence_end_ids: Iterable[int], special_ids: Iterable[int] = (),
                         generator: torch.Generator | None = None) -> torch.Tensor:
    """Split the content into sentences after each ``sentence_end_ids`` token and shuffle them.

    Special tokens keep their positions; the length and the multiset of sentences are unchanged.
    """
    ids = _as_ids(ids)
    special = _as_id_set(special_ids, "special_ids")
    ends = _as_id_set(sentence_end_ids, "sentence_end_ids")
    if not ends:
        raise ValueError("sentence_end_ids must name at least one token id (e.g. the id of '.')")
    _check_generator(generator)
    content = _content_mask(ids, special)
    sentences = split_sentences(ids[content].tolist(), ends)
    order = torch.randperm(len(sentences), generator=generator).tolist()
    return _write_back(ids, content, [t for i in order for t in sentences[i]])


def document_rotation(ids, *, special_ids: Iterable[int] = (),
                      generator: torch.Generator | None = None) -> torch.Tensor:
    """Choose a content token uniformly at random and rotate the content to start with it.

    ``<bos> A B C D <eos>`` → ``<bos> C D A B <eos>``: the specials stay, the token multiset is unchanged.
    """
    ids = _as_ids(ids)
    content = _content_mask(ids, _as_id_set(special_ids, "special_ids"))
    _check_generator(generator)
    tokens = ids[content]
    if len(tokens) == 0:
        return ids.clone()
    start = int(torch.randint(len(tokens), (1,), generator=generator))
    return _write_back(ids, content, torch.cat([tokens[start:], tokens[:start]]).tolist())


# ---------------------------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------------------------

def compose(*noises: NoiseFn) -> NoiseFn:
    """Apply ``noises`` left to right, sharing one generator: ``compose(f, g)(x) = g(f(x))``.

    The paper's best scheme is sentence permutation followed by text infilling.
    """
    if not noises:
        raise ValueError("compose needs at least one noise function")
    for f in noises:
        if not callable(f):
            raise TypeError(f"compose expects callables noise(ids, *, generator=None), got {type(f).__name__}")

    def composed(ids, *, generator: torch.Generator | None = None) -> torch.Tensor:
        ids = _as_ids(ids)
        for f in noises:
            ids = f(ids, generator=generator)
        return ids

    composed.__name__ = " → ".join(getattr(getattr(f, "func", f), "__name__", "noise") for f in noises)
    return composed


# ---------------------------------------------------------------------------------------------
# Showing a corruption: align source and corrupted tokens
# ---------------------------------------------------------------------------------------------

def diff_tokens(source: Sequence[str], corrupted: Sequence[str]) -> list[tuple[str, list[str], list[str]]]:
    """Align two token lists (``difflib``): ``(op, source_tokens, corrupted_tokens)`` with op in
    ``equal`` / ``replace`` / ``delete`` / ``insert``."""
    _check_token_strings(source, "source")
    _check_token_strings(corrupted, "corrupted")
    matcher = difflib.SequenceMatcher(a=list(source), b=list(corrupted), autojunk=False)
    return [(op, list(source[i1:i2]), list(corrupted[j1:j2])) for op, i1, i2, j1, j2 in matcher.get_opcodes()]


def _check_token_strings(tokens, name: str) -> None:
    """A list of token strings (one string is refused: it would be compared character by character)."""
    if isinstance(tokens, str):
        raise TypeError(f"{name} must be a list of token strings, got one string")
    if not isinstance(tokens, Sequence):
        raise TypeError(f"{name} must be a list of token strings, got {type(tokens).__name__}")
    bad = next((t for t in tokens if not isinstance(t, str)), None)
    if bad is not None:
        raise TypeError(f"{name} must hold strings, got {bad!r} ({type(bad).__name__})")


_STYLE = {"delete": "background:#f8c7c7;text-decoration:line-through",
          "insert": "background:#c7e3f8", "replace_src": "background:#f8c7c7;text-decoration:line-through",
          "replace_out": "background:#fde9a9"}


def diff_html(source: Sequence[str], corrupted: Sequence[str], *, title: str = "") -> str:
    """One line of HTML showing the corrupted text against the source: deleted or replaced source tokens
    struck through in red, inserted/replacing tokens highlighted (``[MASK]`` in yellow or blue)."""
    if not isinstance(title, str):
        raise TypeError(f"title must be a string, got {type(title).__name__}")
    parts = []
    for op, src, out in diff_tokens(source, corrupted):
        esc_src, esc_out = html.escape(" ".join(src)), html.escape(" ".join(out))
        if op == "equal":
            parts.append(esc_src)
        elif op == "delete":
            parts.append(f'<span style="{_STYLE["delete"]}">{esc_src}</span>')
        elif op == "insert":
            parts.append(f'<span style="{_STYLE["insert"]}">{esc_out}</span>')
        else:
            parts.append(f'<span style="{_STYLE["replace_src"]}">{esc_src}</span> '
                         f'<span style="{_STYLE["replace_out"]}">{esc_out}</span>')
    head = f"<b>{html.escape(title)}</b>: " if title else ""
    return f'<div style="font-family:monospace;line-height:1.6">{head}{" ".join(parts)}</div>'
