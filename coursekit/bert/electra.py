"""ELECTRA's replaced-token detection: a second pre-training objective for the course's small BERT (notebook 09).

Clark et al. 2020, *ELECTRA: Pre-training Text Encoders as Discriminators Rather Than Generators*. A masked LM
learns only from the 15% of the positions it must fill in; ELECTRA's discriminator learns from *every* token,
which is why it does more with a small compute budget (§3, Table 1). Read top to bottom:

1. **Two encoders, one embedding block** (§3.2, "Weight sharing"): the *generator* G is a small masked LM
   (a :class:`coursekit.bert.model.Bert` with its MLM head), the *discriminator* D a full-size BERT. They share
   the token, position and segment embeddings — here the whole :class:`coursekit.bert.model.BertEmbeddings`
   block with its LayerNorm, as the released code's shared ``electra/embeddings`` scope does — so both must
   have the same ``d_model``. The paper makes G smaller by *width* (¼–½ of D's hidden size, §3.2 and Figure 3)
   and then needs a projection between the tables and the narrower generator; here G keeps D's width and is
   smaller by *depth* (``generator_layers``, default 1 layer against D's 4), so the tables are shared as they
   are, no projection is added, and G's MLM head stays tied to the same embedding matrix. (The released code
   has the same knob, ``generator_layers``, beside ``generator_hidden_size``.) :class:`Electra` holds G, D and
   the detection head.
2. **Corruption** (§2): G reads ``x^masked`` (the batches of :mod:`coursekit.bert.corpus`, masked 80/10/10 like
   BERT's; the released code uses 85% ``[MASK]`` / 15% kept) and :func:`corrupt` *samples*
   ``x̂_i ~ p_G(x_i | x^masked)`` at each masked position i ∈ m — sampling, not the argmax, and without a
   gradient through the sample (the loss cannot be back-propagated through sampling; G is trained by its own
   MLM loss, not adversarially). ``x^corrupt`` is the original text with ``x̂_i`` at the masked positions; a
   position counts as *replaced* only where ``x̂_i ≠ x_i``: a sample equal to the original is labelled
   *original* (§2: "if the generator happens to generate the correct token, that token is considered real").
3. **The detection head** (:class:`ReplacedTokenDetectionHead`): ``D(x, t) = sigmoid(wᵀ GELU(W h_D(x)_t + b))``
   — dense H→H, GELU, dense H→1, the layout of Hugging Face's ``ElectraDiscriminatorPredictions``. Its logit is
   positive for *replaced* (the paper's D(x, t) is the probability of *real*, i.e. sigmoid(−logit)).
4. **The loss** (§2, the equation after L_Disc): :func:`electra_loss` is
   ``L_MLM(x, θ_G) + λ · L_Disc(x, θ_D)`` with

       L_MLM  = E[ Σ_{i ∈ m} −log p_G(x_i | x^masked) ]                                  (mean over masked positions)
       L_Disc = E[ Σ_t −1(x^corrupt_t = x_t) log D(x^corrupt, t)
                        −1(x^corrupt_t ≠ x_t) log(1 − D(x^corrupt, t)) ]   (mean over real, non-padding tokens)

   and λ = ``rtd_weight`` (50 in the paper: the binary loss is much smaller than the MLM loss). The two terms
   meet only in the shared embeddings. After pre-training G is thrown away and D is fine-tuned: D is a plain
   :class:`coursekit.bert.model.Bert`, saved and loaded like an MLM-pre-trained one.

:mod:`coursekit.bert.pretraining` runs this objective with ``PretrainConfig(objective="electra")``.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.bert.model import Bert, BertConfig, _check_config, _check_keep_mask
from coursekit.bert.objectives import IGNORE_INDEX
from coursekit.validation import (
    check_generator,
    check_labels,
    check_positive_float,
    check_positive_int,
    check_size,
    check_tensor,
    check_token_ids,
)

__all__ = ["Electra", "ReplacedTokenDetectionHead", "corrupt", "electra_loss"]


# ---------------------------------------------------------------------------------------------
# 1. Generator and discriminator, sharing one embedding block
# ---------------------------------------------------------------------------------------------

class ReplacedTokenDetectionHead(nn.Module):
    """The discriminator's head: one logit per token, positive = *replaced* (Hugging Face's
    ``ElectraDiscriminatorPredictions``: ``dense`` H→H, GELU, ``dense_prediction`` H→1).

    Initialised like the rest of BERT: N(0, 0.02) weights, zero biases.
    """

    def __init__(self, d_model: int) -> None:
        super().__init__()
        check_positive_int(d_model, "d_model")
        self.dense = nn.Linear(d_model, d_model)
        self.dense_prediction = nn.Linear(d_model, 1)
        for layer in (self.dense, self.dense_prediction):
            nn.init.normal_(layer.weight, std=0.02)
            nn.init.zeros_(layer.bias)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """``h`` (..., C) → logits (...): the discriminator's hidden states, one logit per position."""
        check_tensor(h, "h", floating=True)
        check_size(h, "h", -1, self.dense.in_features, "d_model")
        return self.dense_prediction(F.gelu(self.dense(h))).squeeze(-1)  # (...)


class Electra(nn.Module):
    """ELECTRA's two encoders and the detection head (§3.2), with the embedding block shared.

    * ``discriminator``: ``Bert(config)`` — the model that is kept. It has BERT's pooler, MLM and NSP heads
      so that :func:`coursekit.bert.checkpoint.save_pretrained` writes, and ``load_small_bert`` reads, the
      same kind of file as an MLM + NSP run; ELECTRA trains none of the three (they keep their initialisation:
      the forward pass skips them, and fine-tuning does not read the MLM and NSP heads).
    * ``generator``: a ``Bert`` of ``generator_layers`` layers with the same width and an MLM head, no
      pooler and no NSP head. Its ``embeddings`` *are* the discriminator's (one module, not a copy), and its
      MLM head is tied to that token table.
    * ``rtd_head``: a :class:`ReplacedTokenDetectionHead` on the discriminator's last layer.
    """

    def __init__(self, config: BertConfig, *, generator_layers: int = 1) -> None:
        super().__init__()
        _check_config(config)
        check_positive_int(generator_layers, "generator_layers")
        if generator_layers >= config.n_layers:
            raise ValueError(f"generator_layers must be below the discriminator's n_layers={config.n_layers} "
                             f"(ELECTRA's generator is the smaller model), got {generator_layers}")
        self.config = config
        self.generator_config = dataclasses.replace(config, n_layers=generator_layers)
        self.discriminator = Bert(config)
        self.generator = Bert(self.generator_config, pooler=False, nsp_head=False)
        self.generator.embeddings = self.discriminator.embeddings          # shared, not copied (§3.2)
        self.generator.mlm.embedding = self.discriminator.embeddings.token  # G's output layer: the same table
        self.rtd_head = ReplacedTokenDetectionHead(config.d_model)


def _check_electra(model) -> None:
    if not isinstance(model, Electra):
        raise TypeError(f"model must be a coursekit.bert.electra.Electra, got {type(model).__name__}")


# ---------------------------------------------------------------------------------------------
# 2. Corruption: sample from the generator at the masked positions
# ---------------------------------------------------------------------------------------------

@torch.no_grad()
def corrupt(input_ids: torch.Tensor, mlm_labels: torch.Tensor, generator_logits: torch.Tensor, *,
            generator: torch.Generator | None = None, temperature: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x^corrupt, replaced)`` from a masked batch and the generator's logits at its masked positions (§2).

    ``input_ids`` (B, T) is the generator's input ``x^masked``; ``mlm_labels`` (B, T) holds the original id at
    the masked positions and ``-100`` elsewhere (as :func:`coursekit.bert.objectives.mask_tokens` returns
    them); ``generator_logits`` (N, V) are the generator's logits at the N masked positions in row-major order
    (``Bert(..., mlm_positions=mlm_labels != -100).mlm_logits``). At each masked position a token is *sampled*
    from ``softmax(logits)``: one uniform number per position, drawn on the CPU from ``generator`` (a seeded
    ``torch.Generator`` makes the draw reproducible, on any device), is looked up in the cumulative
    distribution. Nothing is differentiated through the sample. Returns ``x^corrupt`` (B, T: the original
    text, the samples at the masked positions) and ``replaced`` (bool (B, T): True where ``x^corrupt`` differs
    from the original — a sample equal to the original is *not* replaced). The inputs are not modified.

    ``temperature`` T samples from ``softmax(logits / T)`` instead (the released code's ``temperature``, 1 by
    default there too): T > 1 flattens the generator's distribution, so that the replacements are less
    plausible and easier to detect; T → ∞ replaces with uniformly random tokens.
    """
    check_generator(generator)
    check_positive_float(temperature, "temperature")
    check_tensor(generator_logits, "generator_logits", ndim=2, floating=True)
    V = generator_logits.shape[1]
    check_tensor(input_ids, "input_ids", ndim=2)
    check_token_ids(input_ids, "input_ids", V)
    check_labels(mlm_labels, "mlm_labels", V, ignore_index=IGNORE_INDEX)
    if mlm_labels.shape != input_ids.shape:
        raise ValueError(f"mlm_labels must have the shape of input_ids {tuple(input_ids.shape)}, "
                         f"got {tuple(mlm_labels.shape)}")
    selected = mlm_labels != IGNORE_INDEX                                     # (B, T): the positions in m
    N = int(selected.sum())
    if generator_logits.shape[0] != N:
        raise ValueError(f"generator_logits must have one row per masked position ({N}, the entries of "
                         f"mlm_labels that are not {IGNORE_INDEX}), got shape {tuple(generator_logits.shape)}")
    original = torch.where(selected, mlm_labels, input_ids)                   # x: the text before masking
    cdf = F.softmax(generator_logits.detach().float() / temperature, dim=-1).cumsum(-1)  # (N, V); float32: 8× faster
    total = cdf[:, -1]                                                        # 1 up to rounding
    broken = ~torch.isfinite(total) | (total <= 0)
    if broken.any():
        raise ValueError(f"generator_logits must give a distribution in every row (finite logits, or -inf for a token "
                         f"that may not be drawn); row {int(broken.nonzero()[0])} holds NaN, +inf or only -inf")
    u = torch.rand(N, generator=generator).to(cdf.device) * total             # (N,): one uniform per position
    sampled = torch.searchsorted(cdf, u.unsqueeze(1), right=True).squeeze(1).clamp_(max=V - 1)  # x̂ ~ p_G
    corrupted = original.clone()
    corrupted[selected] = sampled.to(corrupted.dtype)
    return corrupted, corrupted != original


# ---------------------------------------------------------------------------------------------
# 3. The loss: L_MLM(G) + λ · L_Disc(D)
# ---------------------------------------------------------------------------------------------

def electra_loss(model: Electra, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None,
                 attention_mask: torch.Tensor | None, mlm_labels: torch.Tensor, *, rtd_weight: float = 50.0,
                 generator: torch.Generator | None = None, temperature: float = 1.0
                 ) -> tuple[torch.Tensor, dict[str, float]]:
    """ELECTRA's pre-training loss ``L_MLM + rtd_weight · L_Disc`` on a masked batch; ``(loss, parts)``.

    ``input_ids`` is ``x^masked`` and ``mlm_labels`` the original ids at the masked positions (``-100``
    elsewhere), as for :func:`coursekit.bert.objectives.pretraining_loss`; ``attention_mask`` (1/True at real
    tokens; ``None``: every token is real) decides which tokens the discriminator loss averages over.
    ``generator`` (a ``torch.Generator``) drives the sampling of :func:`corrupt`, at ``temperature``. ``parts``
    holds ``mlm`` (the generator's mean cross-entropy at the masked positions; 0 when nothing is masked),
    ``rtd`` (the mean binary cross-entropy of the replaced-token detection over the real tokens), ``rtd_acc``
    (the share of real tokens the discriminator classifies right, logit > 0 = replaced) and ``replaced`` (the
    share of real tokens that were replaced).
    """
    _check_electra(model)
    check_positive_float(rtd_weight, "rtd_weight", allow_zero=True)
    check_generator(generator)
    check_tensor(input_ids, "input_ids", ndim=2)
    check_labels(mlm_labels, "mlm_labels", model.config.vocab_size, ignore_index=IGNORE_INDEX)
    if mlm_labels.shape != input_ids.shape:
        raise ValueError(f"mlm_labels must have the shape of input_ids {tuple(input_ids.shape)}, "
                         f"got {tuple(mlm_labels.shape)}")
    real = (torch.ones_like(input_ids, dtype=torch.bool) if attention_mask is None
            else _check_keep_mask(attention_mask, "attention_mask", input_ids.shape))   # (B, T)
    if not real.any():
        raise ValueError("attention_mask marks no real token: the discriminator loss is undefined")
    selected = mlm_labels != IGNORE_INDEX                                                # (B, T)
    logits = model.generator(input_ids, token_type_ids, attention_mask, mlm_positions=selected).mlm_logits  # (N, V)
    if selected.any():
        mlm = F.cross_entropy(logits, mlm_labels[selected])
    else:
        mlm = logits.sum() * 0.0  # nothing masked: no MLM term (0, still part of the graph)
    corrupted, replaced = corrupt(input_ids, mlm_labels, logits, generator=generator,   # no gradient through x̂
                                  temperature=temperature)
    h = model.discriminator(corrupted, token_type_ids, attention_mask, heads=False).last_hidden_state  # (B, T, C)
    rtd_logits = model.rtd_head(h)                                                       # (B, T)
    target = replaced[real].to(rtd_logits.dtype)
    rtd = F.binary_cross_entropy_with_logits(rtd_logits[real], target)
    with torch.no_grad():
        acc = ((rtd_logits[real] > 0) == replaced[real]).float().mean()
    parts = {"mlm": mlm.item(), "rtd": rtd.item(), "rtd_acc": acc.item(), "replaced": target.mean().item()}
    return mlm + rtd_weight * rtd, parts
