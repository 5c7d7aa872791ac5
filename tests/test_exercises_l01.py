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
from exercise_checks import graded

from solutions import l01 as solutions


def verdict(capsys, checker, fn):
    result = graded(checker, fn)
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


def test_softmax_accepts_the_solution(capsys):
    ok, out = verdict(capsys, l01.check_softmax, solutions.my_softmax)
    assert ok is True
    assert out.startswith("✅") and hint_of("l01.softmax.ok") in out


def test_softmax_accepts_torch_softmax(capsys):
    ok, _ = verdict(capsys, l01.check_softmax, lambda x: torch.softmax(x, dim=-1))
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
])
def test_softmax_rejects_typical_mistakes(capsys, fn, key):
    ok, out = verdict(capsys, l01.check_softmax, fn)
    assert ok is False
    assert out.startswith("❌")
    if key == "l01.softmax.mismatch":
        assert hint_of(key, diff=0.0).split("(")[0] in out
    else:
        assert hint_of(key) in out, out


def test_softmax_square_only_keepdim_mistake(capsys):
    # Silent on square inputs (no broadcasting error): recognised from the values.
    def fn(x):
        if x.dim() == 2 and x.shape[0] == x.shape[1]:
            return softmax_no_keepdim(x)
        return solutions.my_softmax(x)
    ok, out = verdict(capsys, l01.check_softmax, fn)
    assert ok is False and wrong_with(out, "l01.softmax.keepdim"), out


def test_softmax_wrong_shape_and_type(capsys):
    ok, out = verdict(capsys, l01.check_softmax, softmax_reshaped)
    assert ok is False and wrong_with(out, "l01.softmax.shape", want="(3, 5)", got="(15)"), out
    ok, out = verdict(capsys, l01.check_softmax, softmax_list)
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


def test_attention_accepts_the_solution(capsys):
    ok, out = verdict(capsys, l01.check_attention, solutions.my_attention)
    assert ok is True
    assert out.startswith("✅") and hint_of("l01.attn.ok") in out


def test_attention_accepts_attnlab(capsys):
    ok, _ = verdict(capsys, l01.check_attention, attnlab.scaled_dot_product_attention)
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
])
def test_attention_rejects_typical_mistakes(capsys, fn, key):
    ok, out = verdict(capsys, l01.check_attention, fn)
    assert ok is False
    assert wrong_with(out, key), out


@pytest.mark.parametrize("fn", [attn_dot_T, attn_transpose_01])
def test_attention_batched_transpose(capsys, fn):
    # Right on 2-D matrices; on (B, H, T, d_k) inputs k.T / transpose(0, 1) pick the wrong axes.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # torch's deprecation note for .T on 4-D
        ok, out = verdict(capsys, l01.check_attention, fn)
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
def test_dot_std_rejects_typical_mistakes(capsys, fn, key):
    ok, out = verdict(capsys, l01.check_dot_std, fn)
    assert ok is False and wrong_with(out, key), out


def test_dot_std_accepts_the_solution(capsys):
    ok, out = verdict(capsys, l01.check_dot_std, solutions.dot_std)
    assert ok is True and out.startswith("✅"), out


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
    ok, out = verdict(capsys, l01.check_dot_std, lambda d, s=1.0: 2 * s * s * math.sqrt(d))
    assert ok is False and out.startswith("❌") and "d_k = 4" in out
    ok, out = verdict(capsys, l01.check_dot_std, lambda d, s=1.0: "sqrt(d)")
    assert ok is False and wrong_with(out, "l01.std.number", got="str"), out


def test_dot_std_not_done(capsys):
    ok, out = verdict(capsys, l01.check_dot_std, lambda d, s=1.0: None)
    assert ok is None and out.startswith("⏳")


def test_measured_std_is_close_to_the_formula():
    for d_k, sigma in l01._STD_CASES:
        assert math.isclose(l01._measured_std(d_k, sigma), solutions.dot_std(d_k, sigma), rel_tol=0.02)


# --------------------------------------------------------------------------- languages
@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_hints_print_in_the_lesson_language(capsys, lang):
    attnlab.set_language(lang)
    assert graded(l01.check_attention, attn_no_scale) is False
    out = capsys.readouterr().out
    assert t("l01.attn.no_scale", lang) in out and t("ex.wrong", lang, detail="").strip() in out
    assert graded(l01.check_softmax, softmax_todo) is None
    assert t("l01.ex.softmax", lang) in capsys.readouterr().out
