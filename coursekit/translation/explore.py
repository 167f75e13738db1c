"""Looking inside the translation models: translations of raw sentences, their attention, an explorer.

* :func:`translate_with_attention` — translate one raw English sentence and return the attention the
  decoder paid to each source piece while writing each output piece: (T, S) for the GRU with attention,
  (layers, heads, T, S) cross-attention for the Transformer.
* :func:`alignment_monotonicity` — how diagonal an alignment is: the share of output steps whose most
  attended source position does not move backwards (1.0 for a perfectly monotone alignment).
* :func:`translation_explorer` — a text box: each model's translation and, where it has one, its
  attention map (a static view on fixed sentences when headless).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from coursekit.decoding.translate import check_translation_model
from coursekit.translation.core import TranslationData, split_tokens
from coursekit.validation import check_finite, check_non_empty, check_positive_int, check_tensor
from coursekit.viz import plots as viz
from coursekit.viz import widgets

__all__ = ["Attended", "translate_with_attention", "alignment_monotonicity", "translation_explorer"]


@dataclass
class Attended:
    """One translated sentence and its attention."""

    source: list[str]        # source pieces, <eos> included (S)
    output: list[str]        # output pieces, <eos> included when produced (T)
    translation: str         # the detokenised output
    weights: torch.Tensor | None  # (T, S) RNN attention, (L, H, T, S) Transformer cross-attention, None


def _is_transformer(model: nn.Module) -> bool:
    return hasattr(model, "attention_maps")


@torch.no_grad()
def translate_with_attention(model: nn.Module, data: TranslationData, sentence: str, *, max_len: int = 30
                             ) -> Attended:
    """Greedy translation of a raw English sentence, then one teacher-forced pass over the model's own
    output to read the attention weights of every output step."""
    check_translation_model(model)
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData, got {type(data).__name__}")
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    check_positive_int(max_len, "max_len")
    words = split_tokens(sentence)
    if not words:
        raise ValueError("the sentence has no words")
    vocab = data.src_vocab
    ids = vocab.encode(words, add_eos=True)
    device = next(model.parameters()).device
    src = torch.tensor([ids], device=device)
    keep = torch.ones_like(src, dtype=torch.bool)
    model.eval()
    out = model.translate(src, keep, max_len=max_len)
    tokens = out.tokens[0] + ([data.tgt_vocab.eos_id] if bool(out.finished[0]) else [])
    tgt_in = torch.tensor([[data.tgt_vocab.bos_id] + tokens[:-1] if tokens else [data.tgt_vocab.bos_id]],
                          device=device)
    if _is_transformer(model):
        weights = model.attention_maps(src, tgt_in, keep)["cross"][:, 0]         # (L, H, T, S)
    else:
        _, w = model(src, keep, tgt_in)
        weights = None if w is None else w[0]                                   # (T, S)
    return Attended(vocab.decode(ids), data.tgt_vocab.decode(tokens) if tokens else [],
                    data.detokenize(out.tokens[0]), None if weights is None else weights.cpu())


def alignment_monotonicity(weights: torch.Tensor) -> float:
    """Share of output steps t > 0 whose arg-max source position is ≥ that of step t − 1 (weights (T, S))."""
    check_tensor(weights, "weights", ndim=2, floating=True)
    if weights.shape[0] < 2:
        raise ValueError(f"weights must be (T, S) with T ≥ 2 output steps, got shape {tuple(weights.shape)}")
    check_finite(weights, "weights")
    peak = weights.argmax(dim=-1)
    return (peak[1:] >= peak[:-1]).float().mean().item()


def translation_explorer(models: dict[str, nn.Module], data: TranslationData, examples: list[str], *,
                         layer: int = -1):
    """Type an English sentence: every model's translation, and the attention map of each model that has
    one (the Transformer's cross-attention of ``layer``, counted from 0 as ``attention_maps`` stacks them, by
    default the last, averaged over heads)."""
    import matplotlib.pyplot as plt

    if not isinstance(models, dict):
        raise TypeError(f"models must be a dict {{name: model}}, got {type(models).__name__}")
    check_non_empty(models, "models")
    for model in models.values():
        check_translation_model(model)
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData, got {type(data).__name__}")
    if isinstance(examples, str) or not isinstance(examples, (list, tuple)):
        raise TypeError(f"examples must be a list of str, got {type(examples).__name__}")
    check_non_empty(examples, "examples")
    if isinstance(layer, bool) or not isinstance(layer, int):
        raise TypeError(f"layer must be an int, got {type(layer).__name__}")

    def render(sentence: str = examples[0]):
        if not split_tokens(sentence):
            print("type an English sentence")
            return
        shown = {name: translate_with_attention(m, data, sentence) for name, m in models.items()}
        width = max(map(len, shown))
        for name, a in shown.items():
            print(f"{name:<{width}} : {a.translation}")
        maps = {n: a for n, a in shown.items() if a.weights is not None and a.output}
        if not maps:
            return
        fig, axes = plt.subplots(1, len(maps), figsize=(4.8 * len(maps), 3.8), squeeze=False)
        for ax, (name, a) in zip(axes[0], maps.items()):
            w = a.weights if a.weights.dim() == 2 else a.weights[layer].mean(0)
            viz.heatmap(w, xlabels=a.source, ylabels=a.output, ax=ax, vmin=0, vmax=1, cmap="Blues", cbar=False,
                        title=name if a.weights.dim() == 2 else f"{name} (layer {layer % a.weights.shape[0]}, "
                                                               "mean of heads)")
        plt.tight_layout()
        plt.show()

    return widgets.explorer(render, [{"sentence": s} for s in examples], sentence=examples[0])
