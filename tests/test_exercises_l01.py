"""Lesson 01 checkers: they accept the reference solutions, reject each typical mistake with
its own hint, and say "not done yet" for the untouched TODO."""
from __future__ import annotations

import math
import warnings

import pytest
import torch

import attnlab
from attnlab.exercises import l01
from attnlab.course.i18n import t
from exercise_checks import SEEDS, graded

from solutions import l01 as solutions


def verdict(capsys, checker, fn, seed=None):
    result = graded(checker, fn, seed=seed)
    return result, capsys.readouterr().out


def hint_of(key: str, **fields) -> str:
    return t(key, "en", **fields)


def wrong_with(out: str, key: str, **fields) -> bool:
    return out.startswith("❌") and hint_of(key, **fields) in out


# --------------------------------------------------------------------------- exercise 1: softmax
def softmax_no_max(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_dim_minus2(x):
    z = x - x.amax(dim=-2, keepdim=True)
    e = torch.exp(z)
    return e / e.sum(dim=-2, keepdim=True)


def softmax_dim0(x):
    z = x - x.amax(dim=0, keepdim=True)
    e = torch.exp(z)
    return e / e.sum(dim=0, keepdim=True)


def softmax_sum_all(x):
    e = torch.exp(x - x.max())
    return e / e.sum()


def softmax_global_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def softmax_no_keepdim(x):
    e = torch.exp(x - x.max(dim=-1).values)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_no_keepdim_sum(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1)


def softmax_max_tuple(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def softmax_not_normalised(x):
    return torch.exp(x - x.amax(dim=-1, keepdim=True))


def softmax_reshaped(x):
    return solutions.my_softmax(x).reshape(-1)


def softmax_list(x):
    return solutions.my_softmax(x).tolist()


def softmax_other(x):
    return torch.sigmoid(x)


def softmax_todo(x):
    # TODO
    return None


def softmax_in_place(x):                       # review 2026-12-01b, W6: the caller's x is destroyed
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    x /= x.sum(dim=-1, keepdim=True)
    return x


def softmax_no_return(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    probs = e / e.sum(dim=-1, keepdim=True)      # noqa: F841


@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_accepts_the_solution(capsys, seed):
    ok, out = verdict(capsys, l01.check_softmax, solutions.my_softmax, seed)
    assert ok is True
    assert out.startswith("✅") and hint_of("l01.softmax.ok") in out


@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_accepts_torch_softmax(capsys, seed):
    ok, _ = verdict(capsys, l01.check_softmax, lambda x: torch.softmax(x, dim=-1), seed)
    assert ok is True


@pytest.mark.parametrize("fn, key", [
    (softmax_no_max, "l01.softmax.overflow"),
    (softmax_dim_minus2, "l01.softmax.axis"),
    (softmax_dim0, "l01.softmax.axis"),
    (softmax_sum_all, "l01.softmax.axis"),
    (softmax_global_max, "l01.softmax.global_max"),
    (softmax_no_keepdim, "l01.softmax.keepdim"),
    (softmax_no_keepdim_sum, "l01.softmax.keepdim"),
    (softmax_max_tuple, "l01.softmax.max_values"),
    (softmax_not_normalised, "l01.softmax.normalize"),
    (softmax_other, "l01.softmax.mismatch"),
    (softmax_in_place, "ex.changed_input"),
    (softmax_no_return, "ex.returned_none"),
])
@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_rejects_typical_mistakes(capsys, fn, key, seed):
    ok, out = verdict(capsys, l01.check_softmax, fn, seed)
    assert ok is False
    assert out.startswith("❌")
    if key == "l01.softmax.mismatch":
        assert hint_of(key, diff=0.0).split("(")[0] in out and "0.0e+00" not in out
    elif key == "ex.changed_input":
        assert hint_of(key, name="x") in out, out
    else:
        assert hint_of(key) in out, out


def test_sizes_are_drawn_from_the_seed():
    """No constant of the lesson can pass: the shapes change from seed to seed (and never touch
    torch's global generator)."""
    state = torch.random.get_rng_state()
    shapes = {tuple(tuple(x.shape) for x in l01._softmax_cases(seed)) for seed in range(20)}
    attention = {tuple(tuple(q.shape) for _, (q, _, _) in l01._attention_cases(seed)) for seed in range(20)}
    assert len(shapes) >= 15 and len(attention) >= 15
    assert torch.equal(torch.random.get_rng_state(), state)
    for seed in range(20):                                  # the same seed, the same inputs (the judge rebuilds them)
        assert all(torch.equal(a, b) for a, b in zip(l01._softmax_cases(seed), l01._softmax_cases(seed)))
        d_ks = [q.shape[-1] for _, (q, _, _) in l01._attention_cases(seed)]
        assert len(set(d_ks)) == 3                          # no single √d_k fits two cases


def test_softmax_square_only_keepdim_mistake(capsys):
    # Silent on square inputs (no broadcasting error): recognised from the values.
    def fn(x):
        if x.dim() == 2 and x.shape[0] == x.shape[1]:
            return softmax_no_keepdim(x)
        return solutions.my_softmax(x)
    ok, out = verdict(capsys, l01.check_softmax, fn)
    assert ok is False and wrong_with(out, "l01.softmax.keepdim"), out


@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_wrong_shape_and_type(capsys, seed):
    rows, cols = l01._softmax_cases(seed)[0].shape
    ok, out = verdict(capsys, l01.check_softmax, softmax_reshaped, seed)
    assert ok is False and wrong_with(out, "l01.softmax.shape", want=f"({rows}, {cols})", got=f"({rows * cols})"), out
    ok, out = verdict(capsys, l01.check_softmax, softmax_list, seed)
    assert ok is False and wrong_with(out, "l01.softmax.not_tensor", got="list"), out


def test_softmax_not_done(capsys):
    ok, out = verdict(capsys, l01.check_softmax, softmax_todo)
    assert ok is None
    assert out.strip() == t("ex.not_done", "en", name=t("l01.ex.softmax", "en"))


def test_softmax_does_not_print_the_solution(capsys):
    for fn in (softmax_no_max, softmax_global_max, softmax_no_keepdim):
        _, out = verdict(capsys, l01.check_softmax, fn)
        assert "exp(x - x.amax" not in out and "e / e.sum" not in out


# --------------------------------------------------------------------------- exercise 2: attention
def attn_no_scale(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return w @ v, w


def attn_scale_dk(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1], dim=-1)
    return w @ v, w


def attn_softmax_dim_minus2(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-2)
    return w @ v, w


def attn_no_v(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w, w


def attn_transpose_q(q, k, v):
    w = torch.softmax(q.transpose(-2, -1) @ k / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w


def attn_k_q_order(q, k, v):
    w = torch.softmax(k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w


def attn_sqrt_of_T(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[0]), dim=-1)
    return w @ v, w


def attn_sqrt_of_dv(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), dim=-1)
    return w @ v, w


def attn_dot_T(q, k, v):
    w = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w


def attn_transpose_01(q, k, v):
    w = torch.softmax(q @ k.transpose(0, 1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w


def attn_weights_before_softmax(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(scores, dim=-1) @ v, scores


def attn_only_out(q, k, v):
    return solutions.my_attention(q, k, v)[0]


def attn_v_first(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return v.transpose(-2, -1)[..., : w.shape[-2]] @ w, w


def attn_todo(q, k, v):
    # TODO
    return None


def attn_size_1(q, k, v):                      # d_k = q.size(1): right on 2-D inputs only
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(1)), dim=-1)
    return w @ v, w


def attn_fixed_scale(q, k, v):                 # √d_k written as a number
    w = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
    return w @ v, w


def attn_q_in_place(q, k, v):
    q /= math.sqrt(q.shape[-1])
    w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return w @ v, w


@pytest.mark.parametrize("seed", SEEDS)
def test_attention_accepts_the_solution(capsys, seed):
    ok, out = verdict(capsys, l01.check_attention, solutions.my_attention, seed)
    assert ok is True
    assert out.startswith("✅") and hint_of("l01.attn.ok") in out


@pytest.mark.parametrize("seed", SEEDS)
def test_attention_accepts_attnlab(capsys, seed):
    ok, _ = verdict(capsys, l01.check_attention, attnlab.scaled_dot_product_attention, seed)
    assert ok is True


@pytest.mark.parametrize("fn, key", [
    (attn_no_scale, "l01.attn.no_scale"),
    (attn_scale_dk, "l01.attn.scale_dk"),
    (attn_softmax_dim_minus2, "l01.attn.softmax_dim"),
    (attn_no_v, "l01.attn.no_v"),
    (attn_transpose_q, "l01.attn.transpose_q"),
    (attn_k_q_order, "l01.attn.order"),
    (attn_sqrt_of_T, "l01.attn.which_dk"),
    (attn_sqrt_of_dv, "l01.attn.which_dk"),
    (attn_weights_before_softmax, "l01.attn.weights_not_softmax"),
    (attn_only_out, "l01.attn.return_pair"),
    (attn_size_1, "l01.attn.which_dk"),
])
@pytest.mark.parametrize("seed", SEEDS)
def test_attention_rejects_typical_mistakes(capsys, fn, key, seed):
    ok, out = verdict(capsys, l01.check_attention, fn, seed)
    assert ok is False
    assert wrong_with(out, key), out


@pytest.mark.parametrize("seed", SEEDS)
def test_attention_fixed_scale_and_changed_input(capsys, seed):
    graded(l01.check_attention, attn_fixed_scale, seed=seed)
    out = capsys.readouterr().out
    feedback = l01.evaluate_attention(attn_fixed_scale, seed=seed)
    assert (feedback.ok, feedback.key) == (False, "l01.attn.scale_fixed") and out.startswith("❌")
    d_k = next(q.shape[-1] for _, (q, _, _) in l01._attention_cases(seed) if q.shape[-1] != 4)
    assert f"divided by 2, but for these inputs d_k = {d_k}" in out, out
    feedback = l01.evaluate_attention(attn_q_in_place, seed=seed)
    assert (feedback.ok, feedback.key) == (False, "ex.changed_input") and "tensor q " in feedback.text


@pytest.mark.parametrize("fn", [attn_dot_T, attn_transpose_01])
@pytest.mark.parametrize("seed", SEEDS)
def test_attention_batched_transpose(capsys, fn, seed):
    # Right on 2-D matrices; on (B, H, T, d_k) inputs k.T / transpose(0, 1) pick the wrong axes.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # torch's deprecation note for .T on 4-D
        ok, out = verdict(capsys, l01.check_attention, fn, seed)
    assert ok is False
    assert out.startswith("❌") and hint_of("l01.attn.batched", error="X").split("(")[0] in out, out


def test_attention_generic_mismatch(capsys):
    ok, out = verdict(capsys, l01.check_attention, attn_v_first)
    assert ok is False and out.startswith("❌"), out


def test_attention_error_in_square_case_is_reported(capsys):
    def broken(q, k, v):
        raise ValueError("boom")
    ok, out = verdict(capsys, l01.check_attention, broken)
    assert ok is False and out.strip() == t("ex.error", "en", error="ValueError", message="boom")


def test_attention_not_done(capsys):
    ok, out = verdict(capsys, l01.check_attention, attn_todo)
    assert ok is None
    assert out.strip() == t("ex.not_done", "en", name=t("l01.ex.attention", "en"))


def test_attention_not_implemented_counts_as_not_done(capsys):
    def fn(q, k, v):
        raise NotImplementedError
    ok, out = verdict(capsys, l01.check_attention, fn)
    assert ok is None and out.startswith("⏳")


# --------------------------------------------------------------------------- exercise 3: std of q·k
@pytest.mark.parametrize("fn, key", [
    (lambda d, s=1.0: d * s ** 4, "l01.std.variance"),
    (lambda d, s=1.0: d, "l01.std.variance"),
    (lambda d, s=1.0: 1 / math.sqrt(d), "l01.std.scale"),
    (lambda d, s=1.0: 1.0, "l01.std.one"),
    (lambda d, s=1.0: math.sqrt(d), "l01.std.sigma_missing"),
    (lambda d, s=1.0: s * math.sqrt(d), "l01.std.sigma_once"),
])
@pytest.mark.parametrize("seed", SEEDS)
def test_dot_std_rejects_typical_mistakes(capsys, fn, key, seed):
    ok, out = verdict(capsys, l01.check_dot_std, fn, seed)
    assert ok is False and wrong_with(out, key), out


@pytest.mark.parametrize("seed", SEEDS)
def test_dot_std_accepts_the_solution(capsys, seed):
    ok, out = verdict(capsys, l01.check_dot_std, solutions.dot_std, seed)
    assert ok is True and out.startswith("✅"), out


def test_dot_std_keeps_the_default_sigma(capsys):
    """The exercise cell gives ``sigma=1.0``: one probe calls ``dot_std(d_k)`` alone."""
    ok, out = verdict(capsys, l01.check_dot_std, lambda d, s=2.0: s ** 2 * math.sqrt(d), 0)
    assert ok is False and out.startswith("❌")


def test_dot_std_accepts_a_tensor_and_a_simulation(capsys):
    ok, _ = verdict(capsys, l01.check_dot_std, lambda d, s=1.0: torch.tensor(s * s * math.sqrt(d)))
    assert ok is True

    def simulate(d, s=1.0):
        g = torch.Generator().manual_seed(7)
        q = torch.randn(50_000, d, generator=g) * s
        k = torch.randn(50_000, d, generator=g) * s
        return (q * k).sum(-1).std().item()
    ok, _ = verdict(capsys, l01.check_dot_std, simulate)
    assert ok is True


def test_dot_std_other_answers(capsys):
    ok, out = verdict(capsys, l01.check_dot_std, lambda d, s=1.0: 2 * s * s * math.sqrt(d), 3)
    d_k, sigma = l01._std_cases(3)[0]
    assert ok is False and out.startswith("❌") and f"for d_k = {d_k}, sigma = {sigma} you return" in out, out
    ok, out = verdict(capsys, l01.check_dot_std, lambda d, s=1.0: "sqrt(d)")
    assert ok is False and wrong_with(out, "l01.std.number", got="str"), out


def test_dot_std_not_done_and_no_return(capsys):
    ok, out = verdict(capsys, l01.check_dot_std, lambda d, s=1.0: None)
    assert ok is None and out.startswith("⏳")

    def no_return(d_k, sigma=1.0):
        std = sigma ** 2 * math.sqrt(d_k)        # noqa: F841
    ok, out = verdict(capsys, l01.check_dot_std, no_return)
    assert ok is False and wrong_with(out, "ex.returned_none"), out


def test_the_judges_reference_is_the_measured_std():
    """The judge's reference (sigma² √d_k) is what 20 000 random (q, k) pairs give, for the drawn cases
    (the relative error of such an estimate is about 0.5 %)."""
    g = torch.Generator().manual_seed(0)
    for d_k, sigma in l01._std_cases(0):
        sigma = 1.0 if sigma is None else sigma
        q = torch.randn(20_000, d_k, generator=g) * sigma
        k = torch.randn(20_000, d_k, generator=g) * sigma
        assert math.isclose(float((q * k).sum(-1).std()), l01._std(d_k, sigma), rel_tol=0.02)


# --------------------------------------------------------------------------- languages
@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_hints_print_in_the_lesson_language(capsys, lang):
    attnlab.set_language(lang)
    assert graded(l01.check_attention, attn_no_scale) is False
    out = capsys.readouterr().out
    assert t("l01.attn.no_scale", lang) in out and t("ex.wrong", lang, detail="").strip() in out
    assert graded(l01.check_softmax, softmax_todo) is None
    assert t("l01.ex.softmax", lang) in capsys.readouterr().out
