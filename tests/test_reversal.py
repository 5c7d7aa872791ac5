"""attnlab.reversal: the reversal task, the tiny model, its training recipe and the saved checkpoint.

The retraining test runs the full recipe on the CPU (about 6 s on a 2-core machine): it is part
of the normal test run on purpose, so a change to the package that breaks learning is caught.
"""
from __future__ import annotations

import copy

import pytest
import torch

from attnlab import causal_mask, reversal


# ------------------------------------------------------------------------------------- data
def test_encode_and_text():
    assert reversal.encode([3, 1, 4]) == [3, 1, 4, reversal.SEP, 4, 1, 3]
    assert reversal.to_text(reversal.encode([3, 1, 4]) + [reversal.PAD] * 2) == "3 1 4 | 4 1 3"
    for bad in ([], [10], [-1], [1, 2, 33]):
        with pytest.raises(ValueError):
            reversal.encode(bad)


def test_batches_are_reversals():
    ids = reversal.make_batch(200, torch.Generator().manual_seed(3))
    c = reversal.TinyConfig()
    assert ids.shape == (200, 2 * c.max_len + 1)
    n = reversal.lengths(ids)
    assert set(n.tolist()) == set(range(c.min_len, c.max_len + 1))
    for row, k in zip(ids.tolist(), n.tolist()):
        assert row[: 2 * k + 1] == reversal.encode(row[:k])
        assert row[2 * k + 1:] == [reversal.PAD] * (2 * c.max_len - 2 * k)


def test_batches_are_seeded():
    a = reversal.make_batch(8, torch.Generator().manual_seed(5))
    b = reversal.make_batch(8, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    assert torch.equal(next(reversal.training_batches(seed=1)), next(reversal.training_batches(seed=1)))


def test_loss_mask_marks_the_reversed_digits():
    ids = torch.tensor([reversal.encode([3, 1, 4, 1, 5, 9]) + [reversal.PAD] * 4])
    inputs, targets = reversal.split(ids)
    mask = reversal.loss_mask(inputs, targets)[0]
    assert mask.tolist() == [False] * 6 + [True] * 6 + [False] * 4
    assert targets[0, mask].tolist() == [9, 5, 1, 4, 1, 3]
    held = reversal.heldout()
    assert torch.equal(reversal.loss_mask(*reversal.split(held)).sum(1), reversal.lengths(held))


def test_heldout_is_disjoint_from_training():
    """The filter is not vacuous (unfiltered draws do hit held-out rows) and it removes every hit."""
    g = torch.Generator().manual_seed(reversal.TRAIN_SEED)
    raw_hits = sum(int(reversal.is_heldout(reversal.make_batch(reversal.BATCH_SIZE, g)).sum()) for _ in range(reversal.STEPS))
    assert raw_hits > 0
    batches = reversal.training_batches()
    assert not any(reversal.is_heldout(next(batches)).any() for _ in range(reversal.STEPS))
    held = reversal.heldout()
    assert held.shape[0] == reversal.HELDOUT_SIZE and reversal.is_heldout(held).all()


# ------------------------------------------------------------------------------------ model
def test_forward_shapes_and_weights():
    model = reversal.make_model()
    inputs, _ = reversal.split(reversal.heldout()[:3])
    logits, weights = model(inputs)
    c = model.config
    assert logits.shape == (3, c.context, c.vocab_size) and weights == []
    logits2, weights = model(inputs, need_weights=True)
    assert len(weights) == c.num_layers
    assert all(w.shape == (3, c.num_heads, c.context, c.context) for w in weights)
    torch.testing.assert_close(logits, logits2)
    upper = ~causal_mask(c.context)[0, 0]
    assert all((w[..., upper] == 0).all() for w in weights)                  # no weight on the future


def test_make_model_is_seeded_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    a = reversal.make_model(seed=7)
    assert torch.equal(torch.rand(1), expected)
    b = reversal.make_model(seed=7)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_model_is_built_from_the_course_blocks():
    from attnlab import PositionalEncoding, TransformerBlock
    model = reversal.make_model()
    assert isinstance(model.pos, PositionalEncoding)
    assert all(isinstance(b, TransformerBlock) and b.norm_first for b in model.blocks)


def test_train_is_quiet_without_progress(capsys):
    model = reversal.make_model()
    history = reversal.train(model, steps=5, device="cpu", progress=False)
    assert len(history) == 5 and all(isinstance(x, float) for x in history)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_lr_schedule():
    assert reversal.lr_at(0) == pytest.approx(reversal.LR / reversal.WARMUP)
    assert reversal.lr_at(reversal.WARMUP - 1) == pytest.approx(reversal.LR)
    assert reversal.lr_at(reversal.STEPS - 1) < 0.01 * reversal.LR


# ------------------------------------------------------------------------------ the recipe
@pytest.fixture(scope="module")
def retrained():
    """The full recipe from the fixed seed, on the CPU (the normal test run includes it: ~6 s)."""
    model = reversal.make_model(seed=reversal.TRAIN_SEED)
    history = reversal.train(model, device="cpu", progress=False)
    return model, history


@pytest.mark.slow
def test_retraining_reaches_the_stated_accuracy(retrained):
    model, history = retrained
    assert len(history) == reversal.STEPS
    assert sum(history[-50:]) / 50 < 0.05 < history[0]
    assert reversal.accuracy(model) >= reversal.ACCURACY_THRESHOLD


@pytest.mark.slow
def test_retrained_attention_is_an_anti_diagonal(retrained):
    model, _ = retrained
    assert reversal.reversal_head(model).mass >= reversal.ANTI_DIAGONAL_THRESHOLD
    assert reversal.antidiagonal_mass(reversal.make_model()).max() < 0.2           # the same model before training


@pytest.fixture(scope="module")
def pretrained():
    return reversal.load_pretrained()


def test_checkpoint_is_small():
    assert reversal.CHECKPOINT.exists()
    assert reversal.CHECKPOINT.stat().st_size < 1_000_000


def test_checkpoint_loads_and_reaches_the_stated_accuracy(pretrained):
    assert not pretrained.training and pretrained.config == reversal.TinyConfig()
    assert reversal.accuracy(pretrained) >= reversal.ACCURACY_THRESHOLD
    # under the causal mask, teacher forcing and greedy decoding agree on exact match
    assert reversal.accuracy(pretrained, mode="teacher") == reversal.accuracy(pretrained)
    assert reversal.reverse_digits(pretrained, [3, 1, 4, 1, 5, 9, 2, 6]) == [6, 2, 9, 5, 1, 4, 1, 3]


def test_checkpoint_records_its_recipe():
    ckpt = torch.load(reversal.CHECKPOINT, map_location="cpu", weights_only=True)
    assert ckpt["recipe"]["seed"] == reversal.TRAIN_SEED and ckpt["recipe"]["steps"] == reversal.STEPS
    assert ckpt["heldout_accuracy"] >= reversal.ACCURACY_THRESHOLD
    assert all(v.dtype == torch.float32 for v in ckpt["state_dict"].values())


def test_checkpoint_shows_the_anti_diagonal(pretrained):
    mass = reversal.antidiagonal_mass(pretrained)
    best = reversal.reversal_head(pretrained)
    assert best.mass >= reversal.ANTI_DIAGONAL_THRESHOLD
    assert best.mass == pytest.approx(float(mass.max()))
    assert float(mass[best.layer - 1, best.head - 1]) == pytest.approx(best.mass)
    # on one example, the best head's target rows put their largest weight on the mirror key
    tokens, weights = reversal.attention_for(pretrained, [3, 1, 4, 1, 5, 9, 2, 6])
    w = weights[best.layer - 1][best.head - 1]
    n = 8
    hits = sum(int(w[q].argmax()) == 2 * n - 1 - q for q in range(n, 2 * n))
    assert hits >= 6, f"only {hits} of the {n} target rows peak on their mirror key"


def test_checkpoint_roundtrip(tmp_path, pretrained):
    path = reversal.save_checkpoint(pretrained, tmp_path / "copy.pt")
    again = reversal.load_pretrained(path)
    assert all(torch.equal(p, q) for p, q in zip(pretrained.state_dict().values(), again.state_dict().values()))


# ------------------------------------------------------------------- breaking the causal mask
def test_the_causal_mask_holds_in_the_trained_model(pretrained):
    """Changing a later token changes no earlier prediction; without the mask it does."""
    inputs, _ = reversal.split(reversal.heldout()[:8])
    changed = inputs.clone()
    changed[:, 10] = (changed[:, 10] + 1) % 10
    with torch.no_grad():
        a, b = pretrained(inputs)[0], pretrained(changed)[0]
        assert torch.equal(a[:, :10], b[:, :10]) and not torch.equal(a[:, 10:], b[:, 10:])
        leaky = copy.deepcopy(pretrained)
        leaky.causal = False
        c, d = leaky(inputs)[0], leaky(changed)[0]
        assert (c[:, :10] - d[:, :10]).abs().max() > 1e-3


@pytest.mark.slow
def test_a_model_trained_without_the_mask_cheats():
    """Teacher forcing looks perfect, generation collapses, and the attention reads the next token."""
    cheater = reversal.make_model(causal=False)
    reversal.train(cheater, steps=reversal.CHEAT_STEPS, device="cpu", progress=False)
    assert reversal.accuracy(cheater, mode="teacher") >= 0.95
    assert reversal.accuracy(cheater) <= 0.05
    assert reversal.attention_mass(cheater, reversal.lookahead_map).max() >= 0.3
    assert reversal.attention_mass(reversal.load_pretrained(), reversal.lookahead_map).max() == 0     # masked: exactly 0


def test_accuracy_rejects_unknown_modes(pretrained):
    with pytest.raises(ValueError, match="mode"):
        reversal.accuracy(pretrained, mode="beam")


# ----------------------------------------------------------------------- for the explorer
def test_attention_for(pretrained):
    tokens, weights = reversal.attention_for(pretrained, [7, 0, 2, 8, 5, 3])
    assert tokens == ["7", "0", "2", "8", "5", "3", "|", "3", "5", "8", "2", "0"]
    c = pretrained.config
    assert len(weights) == c.num_layers and all(w.shape == (c.num_heads, 12, 12) for w in weights)
    assert all(torch.allclose(w.sum(-1), torch.ones(c.num_heads, 12)) for w in weights)
    assert pretrained.training is False
    for bad in ([], list(range(9)), [1, 2, 12]):
        with pytest.raises(ValueError):
            reversal.attention_for(pretrained, bad)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
def test_train_and_evaluate_on_cuda():
    model = reversal.make_model()
    history = reversal.train(model, steps=20, progress=False)                    # the default picks CUDA
    assert next(model.parameters()).is_cuda and len(history) == 20
    assert 0.0 <= reversal.accuracy(model) <= 1.0
    tokens, weights = reversal.attention_for(model, [1, 2, 3, 4, 5, 6])
    assert weights[0].device.type == "cpu"
    assert reversal.antidiagonal_mass(model).shape == (2, 4)
