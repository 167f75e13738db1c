"""coursekit.prompting: prompt building, label likelihood and greedy answers on models whose answer is
known, the synthetic task family, induction scores, the GPT-2 directory path, the committed checkpoint."""

import dataclasses
import json
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from coursekit import prompting as P
from coursekit.gpt import GPT, GPTConfig

ROOT = Path(__file__).resolve().parents[1]


class Bigram:
    """A stub language model whose logits at position t depend only on token t: logits = W[idx]."""

    def __init__(self, W):
        self.W = W

    def __call__(self, idx):
        return self.W[idx], None                                    # (B, T, V), like GPT.forward


def bigram(V=7, seed=0):
    return Bigram(torch.randn(V, V, generator=torch.Generator().manual_seed(seed)))


# ------------------------------------------------------------------ prompts

def test_build_prompt_formats_exactly():
    demos = [("sea otter", "loutre de mer"), ("cheese", "fromage")]
    assert P.build_prompt(demos, "plush giraffe", task_description="Translate English to French:") == (
        "Translate English to French:\nsea otter => loutre de mer\ncheese => fromage\nplush giraffe =>")
    assert P.build_prompt(demos, "mint", fmt="io") == (
        "Input: sea otter\nOutput: loutre de mer\n\nInput: cheese\nOutput: fromage\n\nInput: mint\nOutput:")
    assert P.build_prompt([], "cheese", fmt="bare") == "cheese"          # zero-shot, no description
    assert P.build_prompt(demos[:1], "x", fmt="bare") == "sea otter loutre de mer\nx"


def test_build_prompt_errors():
    with pytest.raises(ValueError, match="unknown prompt format"):
        P.build_prompt([], "x", fmt="yaml")
    with pytest.raises(TypeError, match="pairs"):
        P.build_prompt(["a => b"], "x")
    with pytest.raises(TypeError, match="query"):
        P.build_prompt([], 3)
    with pytest.raises(ValueError, match="template"):
        P.PromptFormat("bad", "{x} -> {y}!")


def test_token_prompt_layout():
    fmt = P.TokenFormat("arrow", between=(0,), after_y=(1,))
    assert P.build_token_prompt([(5, 9), ([6], [10])], 7, fmt, prefix=[3]) == [3, 5, 0, 9, 1, 6, 0, 10, 1, 7, 0]
    with pytest.raises(TypeError):
        P.build_token_prompt([], 7, "arrow")


# ------------------------------------------------------------------ scoring

def test_label_logprobs_equal_hand_computation_on_a_bigram_stub():
    model = bigram()
    logp = F.log_softmax(model.W.double(), dim=-1)
    prompt, labels = [1, 2, 3], [[4], [5, 6], [6, 0, 2]]
    want = torch.stack([logp[3, 4], logp[3, 5] + logp[5, 6], logp[3, 6] + logp[6, 0] + logp[0, 2]])
    got = P.label_logprobs(model, prompt, labels)
    assert torch.allclose(got, want, atol=1e-6)
    mean = P.label_logprobs(model, prompt, labels, reduce="mean")
    assert torch.allclose(mean, want / torch.tensor([1.0, 2.0, 3.0], dtype=torch.double), atol=1e-6)


def test_label_likelihood_picks_the_label_the_model_prefers():
    W = torch.zeros(6, 6)
    W[2, 4] = 5.0                                                   # after token 2 the model says 4
    scores = P.label_logprobs(Bigram(W), [0, 1, 2], [[3], [4], [5]])
    assert scores.argmax().item() == 1
    assert abs(scores[1].exp().item() - math.exp(5) / (math.exp(5) + 5)) < 1e-6


def test_label_logprobs_errors():
    model = bigram()
    with pytest.raises(ValueError, match="reduce"):
        P.label_logprobs(model, [1], [[2]], reduce="max")
    with pytest.raises(ValueError, match="prompt"):
        P.label_logprobs(model, [], [[2]])
    with pytest.raises(ValueError, match="labels"):
        P.label_logprobs(model, [1], [[]])
    with pytest.raises(ValueError, match=r"\(B, T, V\)"):
        P.label_logprobs(lambda idx: idx.float(), [1], [[2]])


def test_batched_single_token_scoring_equals_label_logprobs_on_a_gpt():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=16, n_layer=2, n_head=2, n_embd=16)).eval()
    prompts = torch.randint(0, 20, (3, 9))
    cands = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    got = P.classify_by_likelihood(model, prompts, cands)
    for b in range(3):
        want = P.label_logprobs(model, prompts[b].tolist(), [[c] for c in cands[b].tolist()])
        assert torch.allclose(got[b].double(), want, atol=1e-5)
    with pytest.raises(ValueError, match="one row per prompt"):
        P.classify_by_likelihood(model, prompts, cands[:2])


def test_greedy_continuation_follows_the_argmax_chain_and_stops():
    V = 8
    W = torch.full((V, V), -5.0)
    W[torch.arange(V), (torch.arange(V) + 1) % V] = 5.0            # next token = current + 1
    assert P.greedy_continuation(Bigram(W), [2], 4) == [3, 4, 5, 6]
    assert P.greedy_continuation(Bigram(W), [2], 10, stop=[6]) == [3, 4, 5]
    with pytest.raises(ValueError):
        P.greedy_continuation(Bigram(W), [], 3)


def test_greedy_continuation_equals_gpt_generate():
    torch.manual_seed(1)
    model = GPT(GPTConfig(vocab_size=30, block_size=32, n_layer=2, n_head=2, n_embd=16)).eval()
    prompt = torch.randint(0, 30, (1, 6))
    want = model.generate(prompt, 8, temperature=0)[0, 6:].tolist()
    assert P.greedy_continuation(model, prompt[0].tolist(), 8) == want


# ------------------------------------------------------------------ synthetic tasks

FAM = P.ICLTaskFamily()


def test_train_and_heldout_tasks_use_disjoint_pool_pairings():
    g = torch.Generator().manual_seed(0)
    half_in = lambda t: int(t.inputs[0] >= FAM.input_ids(1)[0])                     # noqa: E731
    half_lab = lambda t: int(t.labels[0] >= FAM.label_ids(1)[0])                    # noqa: E731
    for task in P.sample_tasks(FAM, 50, "train", g):
        assert half_in(task) == half_lab(task)
        assert set(task.inputs.tolist()) <= set(FAM.input_ids(half_in(task)).tolist())
        assert torch.bincount(task.mapping).tolist() == [2, 2, 2, 2]             # balanced labels
    for task in P.sample_tasks(FAM, 50, "heldout", g):
        assert half_in(task) != half_lab(task)
        assert set(task.labels.tolist()) <= set(FAM.label_ids(half_lab(task)).tolist())
    with pytest.raises(ValueError, match="split"):
        P.sample_tasks(FAM, 2, "test", g)


def test_training_batch_targets_are_the_labels_of_the_mapping():
    g = torch.Generator().manual_seed(1)
    idx, targets = P.training_batch(FAM, 8, g, "arrow")
    assert idx.shape == targets.shape == (8, FAM.n_pairs * 4 - 1)
    label_lo = FAM.label_ids(0)[0]
    for b in range(8):
        pos = (targets[b] >= 0).nonzero().squeeze(1)
        assert len(pos) == FAM.n_pairs
        assert (idx[b, pos] == FAM.ARROW).all()                                  # predicted right after "=>"
        assert (targets[b, pos] >= label_lo).all()
        x_to_y = {}
        for p in pos.tolist():                                                   # a consistent mapping
            assert x_to_y.setdefault(int(idx[b, p - 1]), int(targets[b, p])) == int(targets[b, p])


def test_icl_batch_answers_shown_labels_and_noise():
    g = torch.Generator().manual_seed(2)
    tasks = P.sample_tasks(FAM, 5, "heldout", g)
    b = P.icl_batch(FAM, tasks, 8, "arrow", g)
    assert b["prompts"].shape == (5 * 8, 8 * 4 + 2) and b["candidates"].shape == (40, 4)
    assert b["seen"].all() and (b["shown"] == b["answer"]).all()                 # k = K: every input shown once
    q = b["prompts"][:, -2]                                                      # the query token
    for i in range(40):
        t = tasks[b["task"][i]]
        j = (t.inputs == q[i]).nonzero().item()
        assert b["answer"][i] == t.mapping[j]
    z = P.icl_batch(FAM, tasks, 0, "bare", g)
    assert z["prompts"].shape == (40, 1) and not z["seen"].any()
    flip = P.icl_batch(FAM, tasks, 8, "arrow", g, label_noise=1.0, noise="flip")
    assert (flip["shown"] == (flip["answer"] + 1) % 4).all()
    rnd = P.icl_batch(FAM, tasks, 8, "arrow", g, label_noise=1.0)
    assert (rnd["shown"] != rnd["answer"]).all()
    with pytest.raises(ValueError, match="shots"):
        P.icl_batch(FAM, tasks, -1, "arrow", g)


def test_ideal_accuracy():
    assert P.ideal_accuracy(0, 8, 4) == 0.25
    assert P.ideal_accuracy(4, 8, 4) == 0.5 + 0.5 * 0.25
    assert P.ideal_accuracy(16, 8, 4) == 1.0


def test_finetuning_memorises_its_k_examples():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=FAM.vocab_size, block_size=FAM.block_size(), n_layer=1, n_head=2, n_embd=16))
    task = P.sample_tasks(FAM, 1, "heldout", torch.Generator().manual_seed(3))[0]
    fmt = FAM.formats()["arrow"]
    demos = [(int(task.inputs[j]), task.label_of(j)) for j in range(4)]
    ft = P.finetune_on_demonstrations(model, demos, fmt, steps=60, lr=1e-2)
    prompts = torch.tensor([P.build_token_prompt([], x, fmt) for x, _ in demos])
    pred = P.classify_by_likelihood(ft, prompts, task.labels.expand(4, -1)).argmax(-1)
    assert (task.labels[pred] == torch.tensor([y for _, y in demos])).all()
    assert not any(torch.equal(a, b) for a, b in zip(model.parameters(), ft.parameters()))  # a copy was trained


# ------------------------------------------------------------------ induction heads

def test_induction_score_of_ideal_and_other_patterns():
    p = 5
    T = 2 * p
    ideal = torch.zeros(T, T)
    prev = torch.zeros(T, T)
    for i in range(T):
        ideal[i, i - p + 1 if i >= p else 0] = 1.0
        prev[i, max(i - 1, 0)] = 1.0
    uniform = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
    scores = P.induction_scores(torch.stack([ideal, prev, uniform]), p)
    assert scores[0] == 1.0 and scores[1] == 0.0
    assert torch.allclose(scores[2], (1 / torch.arange(p + 1, T + 1).double()).mean().float())
    with pytest.raises(ValueError, match="2·period"):
        P.induction_scores(ideal, 4)


def test_attention_maps_are_causal_distributions_and_match_the_forward_pass():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=16, n_layer=2, n_head=2, n_embd=16)).eval()
    idx = P.repeated_random_tokens(3, 6, torch.arange(20), torch.Generator().manual_seed(0))
    assert idx.shape == (3, 12) and torch.equal(idx[:, :6], idx[:, 6:])
    maps = P.attention_maps(model, idx)
    assert maps.shape == (2, 3, 2, 12, 12)
    assert torch.allclose(maps.sum(-1), torch.ones(2, 3, 2, 12), atol=1e-5)
    assert (maps.triu(1) == 0).all()
    # the last layer's attention recomputed from the model's own modules gives the same weights
    x = model.wte(idx) + model.wpe(12, 0)
    x, _ = model.blocks[0](x, causal=True)
    _, w = model.blocks[1].self_attn(model.blocks[1].norm1(x), causal=True, need_weights=True)
    assert torch.allclose(w, maps[1], atol=1e-6)
    with pytest.raises(TypeError):
        P.attention_maps(Bigram(torch.zeros(3, 3)), idx)


# ------------------------------------------------------------------ real-checkpoint path

def test_hf_dir_absent_is_none(monkeypatch, tmp_path):
    monkeypatch.delenv("COURSEKIT_GPT2_DIR", raising=False)
    assert P.hf_gpt2_dir() is None
    monkeypatch.setenv("COURSEKIT_GPT2_DIR", str(tmp_path))                    # exists but no config.json
    assert P.hf_gpt2_dir() is None
    with pytest.raises(FileNotFoundError):
        P.load_hf_gpt2(tmp_path)


def test_slide_prompts_run_end_to_end_through_a_tiny_random_gpt2_directory(monkeypatch, tmp_path):
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    texts = [P.build_prompt(v["demonstrations"], v["query"], task_description=v["description"])
             for v in P.SLIDE_PROMPTS.values()]
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(tmp_path)
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=tok.get_vocab_size(), n_positions=256, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=None, eos_token_id=None)).eval()
    hf.save_pretrained(tmp_path)
    monkeypatch.setenv("COURSEKIT_GPT2_DIR", str(tmp_path))

    directory = P.hf_gpt2_dir()
    assert directory == tmp_path
    model, tokenizer = P.load_hf_gpt2(directory)
    out = P.run_slide_prompts(model, tokenizer, max_new_tokens=5)
    assert out["translation"]["prompt"].endswith("plush girafe => girafe peluche\ncheese =>")
    assert isinstance(out["translation"]["completion"], str)
    assert out["sentiment"]["prediction"] in ("positive", "negative")
    # the course's GPT scores the labels exactly like Hugging Face's model would
    ids = tokenizer.encode(out["sentiment"]["prompt"])
    labels = [tokenizer.encode(" positive"), tokenizer.encode(" negative")]
    ours = P.label_logprobs(model, ids, labels, reduce="mean")
    theirs = P.label_logprobs(hf, ids, labels, reduce="mean")
    assert torch.allclose(ours, theirs, atol=1e-5)
    assert list(out["sentiment"]["scores"].values()) == pytest.approx(ours.tolist(), abs=1e-9)


# ------------------------------------------------------------------ the committed checkpoint

ICL_DIR = ROOT / "data" / "icl"


@pytest.mark.skipif(not (ICL_DIR / "model.safetensors").exists(), reason="data/icl not committed yet")
def test_committed_checkpoint_reproduces_its_recorded_accuracy():
    model, cfg, report = P.load_icl_checkpoint(ICL_DIR)
    ev = report["eval"]
    fam = cfg.task_family()
    tasks = P.sample_tasks(fam, ev["n_tasks"], "heldout", torch.Generator().manual_seed(ev["tasks_seed"]))
    acc = P.evaluate_shots(model, fam, tasks, (0, 8), ev["format"], seed=ev["prompts_seed"])
    assert abs(acc[8].mean().item() - ev["accuracy_mean"]["8"]) < 1.5 / (8 * ev["n_tasks"])   # ≤ one prompt flips
    assert abs(acc[0].mean().item() - ev["accuracy_mean"]["0"]) < 1.5 / (8 * ev["n_tasks"])
    assert acc[8].mean() > 0.5 and abs(acc[0].mean() - 0.25) < 0.1               # it learns in context; 0-shot ≈ chance
    assert json.loads((ICL_DIR / "config.json").read_text()) == report["config"]


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m coursekit.prompting train"):
        P.load_icl_checkpoint(tmp_path)


def test_ablating_a_head_zeroes_its_slice_before_the_output_projection():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=16, n_layer=1, n_head=2, n_embd=16)).eval()
    idx = torch.randint(0, 20, (2, 10))
    seen = {}
    model.blocks[0].self_attn.out_proj.register_forward_hook(lambda m, a, o: seen.__setitem__("x", a[0]))
    full = model(idx)[0]
    with P.ablate_heads(model, [(0, 1)]):
        ablated = model(idx)[0]
        assert (seen["x"][..., 8:] == 0).all() and (seen["x"][..., :8] != 0).any()
    assert not torch.allclose(full, ablated)
    assert torch.allclose(model(idx)[0], full)                                  # hooks removed afterwards
    with pytest.raises(ValueError, match="head"):
        with P.ablate_heads(model, [(0, 2)]):
            pass


def test_recipe_runs_and_reports(tmp_path):
    cfg = P.ICLTrainConfig(n_layer=1, n_head=2, n_embd=16, steps=3, batch_size=4, eval_tasks=2, eval_every=3)
    model, report = P.train_icl(cfg, progress=False)
    assert set(report["eval"]["accuracy_mean"]) == {0, 1, 2, 4, 8, 16}
    assert len(report["history"]["train_loss"]) == 3 and report["history"]["evals"][-1][0] == 3
    assert all(0 <= v <= 1 for v in report["eval"]["accuracy_mean"].values())
    P.main(["train", "--steps", "2", "--out", str(tmp_path), "--config", str(_write(tmp_path / "c.json", cfg))])
    loaded, cfg2, rep2 = P.load_icl_checkpoint(tmp_path)
    assert cfg2.steps == 2 and cfg2.n_embd == 16 and rep2["config"]["steps"] == 2


def _write(path, cfg):
    path.write_text(json.dumps({k: v for k, v in dataclasses.asdict(cfg).items() if k != "steps"}))
    return path


def test_previous_token_head_initialisation_attends_to_the_previous_position():
    from coursekit.transformer import sinusoidal_positions

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=FAM.vocab_size, block_size=68, n_layer=2, n_head=4, n_embd=64))
    with torch.no_grad():
        model.wpe.embedding.weight.copy_(0.1 * sinusoidal_positions(68, 64))
    idx = torch.randint(0, FAM.vocab_size, (4, 40))
    before = P.attention_maps(model, idx)[0, :, 0]
    P.init_previous_token_head(model, 3.0)
    after = P.attention_maps(model, idx)[0, :, 0]                                  # (B, T, T)
    prev = lambda a: a[:, torch.arange(1, 40), torch.arange(0, 39)]                # noqa: E731
    assert prev(before).mean() < 0.2 < 0.5 < prev(after).mean()
    assert (after[:, 1:].argmax(-1) == torch.arange(0, 39)).float().mean() > 0.6
