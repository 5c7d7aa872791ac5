"""Lesson 02 checkers: each accepts the reference solution, rejects each typical mistake with
its own hint, and reports 'not done' for the untouched TODO."""
from __future__ import annotations

import functools

import pytest
import torch

import attnlab
from attnlab.exercises import l02, l02_size
from attnlab.course.i18n import t

from solutions import l02 as solutions

from exercise_checks import SEEDS, assert_hint, graded, todo


# ------------------------------------------------------------------------------- split_heads
def split_no_transpose(x, h):
    B, T, D = x.shape
    return x.view(B, h, T, D // h)


def split_forgot_transpose(x, h):
    B, T, D = x.shape
    return x.view(B, T, h, D // h)


def split_interleaved(x, h):
    B, T, D = x.shape
    return x.view(B, T, D // h, h).permute(0, 3, 1, 2)


def split_dk_is_h(x, h):
    B, T, D = x.shape
    return x.view(B, T, -1, h).transpose(1, 2)


def split_float_dk(x, h):
    B, T, D = x.shape
    return x.view(B, T, h, D / h).transpose(1, 2)


def split_hard_coded(x, h):
    return x.view(2, 5, 3, 4).transpose(1, 2)


def split_shuffled(x, h):
    return solutions.split_heads(x, h).flip(2)


def split_wrong_shape(x, h):
    B, T, D = x.shape
    return x.view(B * h, T, D // h)


SPLIT_MISTAKES = [
    (split_no_transpose, "l02.hint.split_no_transpose"),
    (split_forgot_transpose, "l02.hint.split_forgot_transpose"),
    (split_interleaved, "l02.hint.split_interleaved"),
    (split_dk_is_h, "l02.hint.wrong_dk"),
    (split_float_dk, "l02.hint.float_size"),
    (split_hard_coded, "l02.hint.hard_coded"),
    (split_shuffled, "l02.hint.values"),
    (split_wrong_shape, "l02.hint.shape"),
    (lambda x, h: x.numpy(), "l02.hint.not_tensor"),
]


@pytest.mark.parametrize("seed", SEEDS)
def test_split_accepts_solution(capsys, seed):
    assert l02.SPLIT.diagnose(solutions.split_heads, seed=seed) == (True, "l02.ok.split", {})
    assert graded(l02.check_split_heads, solutions.split_heads, seed=seed) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l02.ok.split", "en")) + "\n"


@pytest.mark.parametrize("seed", SEEDS)
def test_split_accepts_reshape_variant(seed):
    def via_reshape(x, h):
        B, T, D = x.shape
        return x.reshape(B, T, h, -1).permute(0, 2, 1, 3)
    assert graded(l02.check_split_heads, via_reshape, seed=seed) is True


def test_the_sizes_are_drawn_per_seed():
    """After the lesson's example, sizes drawn from the seed: B ≠ T in the general cases, one
    sentence, d_k = 1, one head; they change from seed to seed."""
    drawn = [l02._head_cases(seed) for seed in range(20)]
    assert all(cases[0] == (2, 5, 12, 3) for cases in drawn)
    assert len({tuple(cases[1:]) for cases in drawn}) == 20
    for cases in drawn:
        assert all(B != T for B, T, _, _ in cases[1:3]) and cases[3][0] == 1
        assert cases[4][2] == cases[4][3] and cases[5][3] == 1
    sizes = [l02_size._size_cases(seed) for seed in range(20)]
    assert len({tuple(good) for good, _ in sizes}) == 20


@pytest.mark.parametrize("fn, key", SPLIT_MISTAKES, ids=[k.split(".")[-1] for _, k in SPLIT_MISTAKES])
@pytest.mark.parametrize("seed", SEEDS)
def test_split_rejects_mistake(fn, key, capsys, seed):
    assert_hint(l02.check_split_heads, l02.SPLIT.diagnose, fn, key, capsys, seed=seed)


def test_split_not_done(capsys):
    assert graded(l02.check_split_heads, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l02.ex.split_heads", "en")) + "\n"


def test_split_reports_other_errors(capsys):
    def broken(x, h):
        return undefined_name  # noqa: F821
    assert graded(l02.check_split_heads, broken) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ " + t("ex.cause.name", "en")) and "NameError: name 'undefined_name'" in out


# ------------------------------------------------------------------------------- merge_heads
def merge_no_transpose(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, T, H * d_k)


def merge_view_without_contiguous(x):
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).view(B, T, H * d_k)


def merge_interleaved(x):
    B, H, T, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)


def merge_forgot_flatten(x):
    return x.transpose(1, 2)


MERGE_MISTAKES = [
    (merge_no_transpose, "l02.hint.merge_no_transpose"),
    (merge_view_without_contiguous, "l02.hint.merge_view"),
    (merge_interleaved, "l02.hint.merge_interleaved"),
    (merge_forgot_flatten, "l02.hint.shape"),
    (lambda x: solutions.merge_heads(x) * 2, "l02.hint.values"),
]


@pytest.mark.parametrize("seed", SEEDS)
def test_merge_accepts_solution(capsys, seed):
    assert l02.MERGE.diagnose(solutions.merge_heads, seed=seed) == (True, "l02.ok.merge", {})
    assert graded(l02.check_merge_heads, solutions.merge_heads, seed=seed) is True
    assert "✅" in capsys.readouterr().out


def test_merge_accepts_contiguous_view():
    def via_view(x):
        B, H, T, d_k = x.shape
        return x.transpose(1, 2).contiguous().view(B, T, -1)
    assert graded(l02.check_merge_heads, via_view) is True


def test_merge_inverts_split():
    x = torch.randn(2, 5, 12)
    assert torch.equal(solutions.merge_heads(solutions.split_heads(x, 3)), x)


@pytest.mark.parametrize("fn, key", MERGE_MISTAKES, ids=[k.split(".")[-1] for _, k in MERGE_MISTAKES])
@pytest.mark.parametrize("seed", SEEDS)
def test_merge_rejects_mistake(fn, key, capsys, seed):
    assert_hint(l02.check_merge_heads, l02.MERGE.diagnose, fn, key, capsys, seed=seed)


def test_merge_not_done(capsys):
    assert graded(l02.check_merge_heads, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l02.ex.merge_heads", "en")) + "\n"


# ---------------------------------------------------------------------------------- mha_size
# Grouped-query attention: W_Q, W_O d_model × d_model; W_K, W_V d_model × (num_kv_heads · d_k); biases.
def _checked(fn):
    @functools.wraps(fn)
    def wrapped(d_model, h, kv):
        if d_model % h or h % kv:
            raise ValueError("not divisible")
        return fn(d_model, h, kv)
    return wrapped


def _gqa(d_model, h, kv, *, bias=True, wo=True, width=None):
    w = kv * (d_model // h) if width is None else width
    b = 1 if bias else 0
    return (1 + wo) * (d_model * d_model + b * d_model) + 2 * (d_model * w + b * w)


def size_kv_full(d_model, h, kv):               # K and V counted as in multi-head attention (the old formula)
    return d_model // h, 4 * (d_model * d_model + d_model)


def size_kv_width(d_model, h, kv):              # K and V num_kv_heads wide instead of num_kv_heads · d_k
    return d_model // h, _gqa(d_model, h, kv, width=kv)


def size_kv_width_is_d_k(d_model, h, kv):       # K and V one head wide (d_k): no such hint, the generic one
    return d_model // h, _gqa(d_model, h, kv, width=d_model // h)


def size_scales_with_h(d_model, h, kv):
    return d_model // h, h * _gqa(d_model, h, kv)


def size_old_scales_with_h(d_model, h, kv):     # the old mistake kept: h times multi-head attention
    return d_model // h, h * 4 * (d_model * d_model + d_model)


def size_no_bias(d_model, h, kv):
    return d_model // h, _gqa(d_model, h, kv, bias=False)


def size_no_wo(d_model, h, kv):
    return d_model // h, _gqa(d_model, h, kv, wo=False)


def size_per_head_slices(d_model, h, kv):       # one head's share only
    d_k = d_model // h
    return d_k, 4 * (d_model * d_k + d_k)


def size_unsplit_dk(d_model, h, kv):
    return d_model, _gqa(d_model, h, kv)


def size_dk_from_kv(d_model, h, kv):            # d_k from the key/value heads
    return d_model // kv, _gqa(d_model, h, kv)


def size_float(d_model, h, kv):
    return d_model / h, _gqa(d_model, h, kv)


def size_no_check(d_model, h, kv):
    return d_model // h, _gqa(d_model, h, kv)


def size_no_kv_check(d_model, h, kv):           # d_model % h checked, h % num_kv_heads forgotten
    if d_model % h:
        raise ValueError("d_model not divisible")
    return d_model // h, _gqa(d_model, h, kv)


def size_assert(d_model, h, kv):
    assert d_model % h == 0 and h % kv == 0
    return d_model // h, _gqa(d_model, h, kv)


def size_assert_kv(d_model, h, kv):             # ValueError for d_model, assert for the heads
    if d_model % h:
        raise ValueError("d_model not divisible")
    assert h % kv == 0
    return d_model // h, _gqa(d_model, h, kv)


def size_type_error(d_model, h, kv):            # review 2026-12-01b (student): only "TypeError" was said
    if d_model % h or h % kv:
        raise TypeError("not divisible")
    return d_model // h, _gqa(d_model, h, kv)


def size_built_linears(d_model, h, kv):         # the four projections built, their parameters counted
    if d_model % h or h % kv:
        raise ValueError("not divisible")
    w = kv * (d_model // h)
    layers = [torch.nn.Linear(d_model, d_model), torch.nn.Linear(d_model, w), torch.nn.Linear(d_model, w),
              torch.nn.Linear(d_model, d_model)]
    return d_model // h, sum(p.numel() for layer in layers for p in layer.parameters())


def size_built_layer(d_model, h, kv):           # review 2026-12-01b (student): the lesson's layer, kv ignored
    layer = attnlab.MultiHeadAttention(d_model, h)
    return layer.d_k, sum(p.numel() for p in layer.parameters())


SIZE_MISTAKES = [
    (_checked(size_kv_full), "l02.hint.size_kv_full"),
    (_checked(size_kv_width), "l02.hint.size_kv_width"),
    (_checked(size_kv_width_is_d_k), "l02.hint.size_count"),
    (_checked(size_scales_with_h), "l02.hint.size_scales_h"),
    (_checked(size_old_scales_with_h), "l02.hint.size_scales_h"),
    (_checked(size_no_bias), "l02.hint.size_no_bias"),
    (_checked(size_no_wo), "l02.hint.size_no_wo"),
    (_checked(size_per_head_slices), "l02.hint.size_count"),
    (_checked(size_unsplit_dk), "l02.hint.size_dk"),
    (_checked(size_dk_from_kv), "l02.hint.size_dk"),
    (_checked(size_float), "l02.hint.size_int"),
    (size_no_check, "l02.hint.size_divisible"),
    (size_no_kv_check, "l02.hint.size_divisible_kv"),
    (size_assert, "l02.hint.size_assert"),
    (size_assert_kv, "l02.hint.size_assert"),
    (_checked(lambda d_model, h, kv: _gqa(d_model, h, kv)), "l02.hint.size_format"),
    (size_type_error, "l02.hint.size_raise_type"),
    (size_built_linears, "l02.hint.size_built_layer"),
    (size_built_layer, "l02.hint.size_kv_full"),
]


@pytest.mark.parametrize("seed", SEEDS)
def test_size_accepts_solution(capsys, seed):
    assert l02.SIZE.diagnose(solutions.mha_size, seed=seed) == (True, "l02.ok.size", {})
    assert graded(l02.check_mha_size, solutions.mha_size, seed=seed) is True
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize("fn, key", SIZE_MISTAKES,
                         ids=[f"{getattr(fn, '__wrapped__', fn).__name__}-{k.split('.')[-1]}" for fn, k in SIZE_MISTAKES])
@pytest.mark.parametrize("seed", SEEDS)
def test_size_rejects_mistake(fn, key, capsys, seed):
    assert_hint(l02.check_mha_size, l02.SIZE.diagnose, fn, key, capsys, seed=seed)


def test_size_mistakes_are_told_apart_on_many_seeds():
    """The hint named for each miscount holds on 300 seeds, not only on SEEDS: a count that two
    mistakes give on one case is told apart by the others (_count_mistake)."""
    counted = [(fn, key) for fn, key in SIZE_MISTAKES if key.startswith("l02.hint.size_")
               and key not in ("l02.hint.size_format", "l02.hint.size_built_layer")]
    wrong = [(seed, fn.__name__, key, got) for seed in range(300) for fn, key in counted
             if (got := l02.SIZE.diagnose(fn, seed=seed)[1]) != key]
    assert not wrong, wrong[:10]


def test_size_cases_cover_each_kind_of_attention():
    """Every seed checks multi-head (num_kv_heads == h), multi-query (1 < h, num_kv_heads == 1) and
    grouped (1 < num_kv_heads < h) sizes with d_k > 1, both divisibility failures, never the lesson's example."""
    for seed in range(300):
        good, bad = l02_size._size_cases(seed)
        assert any(kv == h > 1 for _, h, kv in good) and any(kv == 1 < h for _, h, kv in good)
        assert any(1 < kv < h and d // h > 1 for d, h, kv in good)
        assert all(d % h == 0 and h % kv == 0 for d, h, kv in good) and l02_size.LESSON_EXAMPLE not in good
        assert [bool(d % h) for d, h, kv in bad] == [True, True, False, False]
        assert all(h % kv == 0 for d, h, kv in bad[:2]) and all(h % kv for d, h, kv in bad[2:])


def test_the_reference_count_is_torchs():
    """The judge's count is the parameters of torch's nn.Linear layers of GQA's shapes: equal to the
    solution's formula, and to attnlab.MultiHeadAttention's (and torch's) when num_kv_heads == h."""
    for d_model, h, kv in ((64, 8, 8), (64, 8, 2), (64, 8, 1), (12, 3, 3), (4096, 32, 8), (8192, 64, 8)):
        assert l02_size._size_of(d_model, h, kv) == solutions.mha_size(d_model, h, kv)
    for d_model, h in ((64, 1), (64, 2), (64, 4), (64, 8), (12, 3)):
        mha = attnlab.MultiHeadAttention(d_model, h)
        assert l02_size._size_of(d_model, h, h) == (mha.d_k, sum(p.numel() for p in mha.parameters()))


def test_a_layer_built_in_another_cell_is_caught_too():
    """The ready layer reached through a name defined elsewhere (no torch in the function)."""
    ns = {"torch": torch}
    exec("Linear = torch.nn.Linear\n"                                         # noqa: S102
         "def my_mha_size(d_model, num_heads, num_kv_heads):\n"
         "    if d_model % num_heads or num_heads % num_kv_heads:\n"
         "        raise ValueError('not divisible')\n"
         "    w = num_kv_heads * (d_model // num_heads)\n"
         "    layers = [Linear(d_model, d_model), Linear(d_model, w), Linear(d_model, w), Linear(d_model, d_model)]\n"
         "    return d_model // num_heads, sum(p.numel() for l in layers for p in l.parameters())\n", ns)
    assert l02.SIZE.diagnose(ns["my_mha_size"], seed=0)[1] == "l02.hint.size_built_layer"


def test_size_not_done(capsys):
    assert graded(l02.check_mha_size, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l02.ex.mha_size", "en")) + "\n"


def test_solution_matches_the_package():
    for d_model, h in ((64, 1), (64, 2), (64, 4), (64, 8), (12, 3)):
        mha = attnlab.MultiHeadAttention(d_model, h)
        assert solutions.mha_size(d_model, h, h) == (mha.d_k, sum(p.numel() for p in mha.parameters()))
        x = torch.randn(2, 5, d_model)
        assert torch.equal(solutions.split_heads(x, h), mha.split_heads(x))
        assert torch.equal(solutions.merge_heads(mha.split_heads(x)), mha.merge_heads(mha.split_heads(x)))
    assert solutions.mha_size(*l02_size.LESSON_EXAMPLE) == (2, 216)        # the lesson's example (prose)
    for bad in ((10, 4, 2), (12, 6, 4), (12, 4, 8)):
        with pytest.raises(ValueError):
            solutions.mha_size(*bad)


# ------------------------------------------------------------------------------ languages
@pytest.mark.parametrize("lang, mark", [("vi", "Chưa đúng"), ("zh", "还不对")])
def test_hints_follow_the_language(lang, mark, capsys):
    attnlab.set_language(lang)
    assert graded(l02.check_split_heads, split_no_transpose) is False
    out = capsys.readouterr().out
    assert mark in out and t("l02.hint.split_no_transpose", lang) in out
    assert graded(l02.check_mha_size, todo) is None
    assert t("l02.ex.mha_size", lang) in capsys.readouterr().out


def test_checkers_leave_the_random_state_alone(capsys):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    for check, fn in ((l02.check_split_heads, solutions.split_heads), (l02.check_merge_heads, solutions.merge_heads),
                      (l02.check_mha_size, solutions.mha_size)):
        assert graded(check, fn) is True
    assert torch.equal(torch.rand(3), expected)
