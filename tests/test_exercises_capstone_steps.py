"""Lesson 09's stepwise checks: each accepts the reference solution, rejects each typical mistake
with its own hint, says "not done yet" for the untouched TODO; the lesson-07 plug-in reproduces
the checkpoint's accuracy with the reference block and refuses a wrong block."""
from __future__ import annotations

import math

import pytest
import torch

from attnlab.exercises import capstone_steps as cs
from attnlab.course.i18n import CATALOG, t
from exercise_checks import SEEDS, graded, todo
from solutions import capstone as sol_block
from solutions import capstone_steps as sol

P = "capstone_steps."


def assert_hint(check, exercise, fn, key, capsys):
    """On every seed the judge picks the hint ``key``; ``check`` prints exactly that hint."""
    for seed in SEEDS:
        ok, got, fields = exercise.judge(exercise.probe(fn, seed=seed), seed=seed)
        assert (ok, got) == (False, key), seed
    assert graded(check, fn, seed=SEEDS[-1]) is False
    assert capsys.readouterr().out == t("ex.wrong", "en", detail=t(key, "en", **fields)) + "\n"


def diagnose(exercise, *args, seed=0):
    return exercise.judge(exercise.probe(*args, seed=seed), seed=seed)


@pytest.mark.parametrize("check, fn", [(cs.check_split, sol.split_heads), (cs.check_scores, sol.attention_scores),
                                       (cs.check_mask, sol.apply_mask), (cs.check_merge, sol.merge_heads)])
def test_reference_passes_and_todo_is_not_done(check, fn, capsys):
    assert graded(check, fn) is True
    assert graded(check, todo) is None
    out = capsys.readouterr().out
    assert "✅" in out and "⏳" in out


def test_check_prints_and_returns_none(capsys):
    assert cs.check_split(sol.split_heads) is None
    assert capsys.readouterr().out.startswith("✅")


# ----------------------------------------------------------------------------------- split
def split_view(x, H):
    B, L, D = x.shape
    return x.view(B, H, L, D // H)                                        # no transpose


def split_wrong_features(x, H):
    B, L, D = x.shape
    return x.view(B, L, D // H, H).permute(0, 3, 1, 2)                    # interleaved features


def split_flat(x, H):
    return x


@pytest.mark.parametrize("fn, key", [(split_view, "hint.split_no_transpose"), (split_wrong_features, "hint.split_values"),
                                     (split_flat, "hint.split_shape")])
def test_split_mistakes(fn, key, capsys):
    assert_hint(cs.check_split, cs.SPLIT, fn, P + key, capsys)


# ----------------------------------------------------------------------------------- scores
def scores_no_scale(q, k):
    return q @ k.transpose(-2, -1)


def scores_dk(q, k):
    return q @ k.transpose(-2, -1) / q.shape[-1]


def scores_transposed(q, k):
    return k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])


def scores_sqrt_d_model(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1] * q.shape[1])  # √(H·d_k): not a factor 2 here


def scores_flat(q, k):
    return (q * q).sum(-1)


@pytest.mark.parametrize("fn, key", [(scores_no_scale, "hint.scores_no_scale"), (scores_dk, "hint.scores_dk"),
                                     (scores_transposed, "hint.scores_transposed"), (scores_sqrt_d_model, "hint.scores_values"),
                                     (scores_flat, "hint.scores_shape")])
def test_scores_mistakes(fn, key, capsys):
    assert_hint(cs.check_scores, cs.SCORES, fn, P + key, capsys)


# ----------------------------------------------------------------------------------- mask
def mask_inverted(scores, mask):
    return scores.masked_fill(mask, float("-inf"))


def mask_zero(scores, mask):
    return scores.masked_fill(~mask, 0.0)


def mask_multiply(scores, mask):
    return scores * mask


def mask_large_negative(scores, mask):
    return scores.masked_fill(~mask, -1e9)                                 # right too: same weights


def mask_only_causal(scores, mask):
    T, S = scores.shape[-2:]
    return scores.masked_fill(~torch.ones(T, S, dtype=torch.bool).tril(), float("-inf"))


def mask_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)   # the weights, not the scores


def mask_squeezed(scores, mask):
    return scores.masked_fill(~mask, float("-inf"))[0]


@pytest.mark.parametrize("fn, key", [(mask_inverted, "hint.mask_inverted"), (mask_zero, "hint.mask_zero"),
                                     (mask_multiply, "hint.mask_zero"), (mask_only_causal, "hint.mask_values"),
                                     (mask_softmax, "hint.mask_softmax"), (mask_squeezed, "hint.mask_shape")])
def test_mask_mistakes(fn, key, capsys):
    assert_hint(cs.check_mask, cs.MASK, fn, P + key, capsys)


def test_mask_accepts_a_large_negative_number():
    assert all(diagnose(cs.MASK, mask_large_negative, seed=s)[0] is True for s in SEEDS)


# ----------------------------------------------------------------------------------- merge
def merge_no_transpose(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, T, H * d_k)


def merge_wrong_order(x):
    B, H, T, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)                   # features interleaved


def merge_keep_heads(x):
    return x.transpose(1, 2)


@pytest.mark.parametrize("fn, key", [(merge_no_transpose, "hint.merge_no_transpose"), (merge_wrong_order, "hint.merge_values"),
                                     (merge_keep_heads, "hint.merge_shape")])
def test_merge_mistakes(fn, key, capsys):
    assert_hint(cs.check_merge, cs.MERGE, fn, P + key, capsys)


# ----------------------------------------------------------------------------------- lesson 07's model
def test_reference_block_in_tiny_model_reproduces_the_checkpoint():
    ok, key, fields = diagnose(cs.IN_TINY_MODEL, sol_block.TransformerBlock)
    assert (ok, key) == (True, P + "ok.tiny")
    assert fields["mine"] == fields["ref"]


class PostLNAlways(sol_block.TransformerBlock):
    """Ignores norm_first: a post-LN block in a pre-LN model."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout=dropout, norm_first=False)


class Skeleton(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, mask=None):
        return None


def test_wrong_block_in_tiny_model_is_refused_and_skeleton_is_not_done():
    ok, key, fields = diagnose(cs.IN_TINY_MODEL, PostLNAlways)
    assert (ok, key) == (False, "capstone.hint.pre_post_swapped")              # named at the model's sizes too
    assert cs.evaluate_in_tiny_model(Skeleton).ok is None


class SkeletonWithLayers(sol_block.TransformerBlock):
    """The block's layers written (the right names), but forward still the TODO: returns None."""

    def forward(self, x, mask=None):
        return None


@pytest.mark.parametrize("cls", [Skeleton, SkeletonWithLayers])
@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_an_unfinished_block_points_to_the_block_exercise_not_to_this_cell(cls, lang):
    """The in-model cell has no TODO of its own: 'not done' names the block's exercise above."""
    feedback = cs.evaluate_in_tiny_model(cls, lang=lang)
    assert feedback.ok is None
    assert feedback.text == t(P + "not_done.tiny", lang, block=t("capstone.ex.block", lang))
    assert feedback.text != t("ex.not_done", lang, name=t(P + "ex.tiny", lang))


def test_every_message_has_three_languages():
    keys = [k for k in CATALOG if k.startswith(P)]
    assert len(keys) >= 25
    for k in keys:
        assert set(CATALOG[k]) >= {"vi", "zh", "en"}
        for lang in ("vi", "zh", "en"):
            assert t(k, lang, got=(1, 2), want=(1, 2), mine=99.9, ref=99.9, block="…", diff=0.5, divisor=2.0, sqrt_dk=2.2, d_k=5,
                     d_model=32, heads=4, d_ff=128, exercise1="…", exercise2="…", error="E", message="m")


# ----------------------------------------------------------------------------------- review 2026-12-01b
class HardDk(sol_block.MultiHeadAttention):
    """Exercise 1 with d_k written as the lesson's 4 (12 / 3): right at those sizes only."""

    def forward(self, query, key=None, value=None, mask=None):
        self.d_k = 4
        return super().forward(query, key, value, mask)


class HardHeads(sol_block.MultiHeadAttention):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, 3)


def _block_on(attention):
    class Block(sol_block.TransformerBlock):
        def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
            super().__init__(d_model, num_heads, d_ff, dropout, norm_first, attention_class=attention)
    return Block


class TupleBlock(sol_block.TransformerBlock):
    def forward(self, x, mask=None):
        return super().forward(x, mask), None


@pytest.mark.parametrize("attention", [HardDk, HardHeads])
@pytest.mark.parametrize("lang", ["vi", "en"])
def test_in_tiny_model_blames_exercise_1_when_its_attention_fails_at_the_models_sizes(attention, lang):
    """Student report, hint 8: a size hard-coded in exercise 1 shows first at lesson 07's sizes
    (d_model 32, 4 heads); the cell names exercise 1 and the sizes, not 'get exercise 2 right'."""
    feedback = cs.evaluate_in_tiny_model(_block_on(attention), lang=lang)
    assert (feedback.ok, feedback.key) == (False, P + "hint.tiny_attention"), feedback.text
    assert t("capstone.ex.multihead", lang) in feedback.text


def test_in_tiny_model_refuses_a_block_that_returns_a_tuple():
    """Student report, accepted wrong answer 5: the interface says forward returns x."""
    feedback = cs.evaluate_in_tiny_model(TupleBlock, lang="en")
    assert (feedback.ok, feedback.key) == (False, "capstone.hint.block_tuple"), feedback.text


def apply_mask_in_place(scores, mask):
    scores.masked_fill_(~mask, float("-inf"))                             # no return: None


def test_a_forgotten_return_is_not_reported_as_not_done():
    """Student report, hint 6: the student wrote code; 'not done' would send them back to a TODO."""
    feedback = cs.evaluate_mask(apply_mask_in_place, lang="en")
    assert feedback.ok is False, feedback.text
