"""Lesson 03 checkers: each accepts the reference solution, rejects each typical mistake with its
own hint, and reports "not done" for the untouched TODO."""
from __future__ import annotations

import math

import pytest
import torch

import attnlab
from attnlab import t
from attnlab.exercises import l03

from exercise_checks import SEEDS, graded
from solutions import l03 as sol


@pytest.fixture(params=SEEDS)
def seed(request):
    """Every test of this file runs on each of the probes' seeds (sizes are drawn from it)."""
    return request.param


def _verdict(checker, fn, capsys, seed=None):
    result = graded(checker, fn, seed=seed)
    return result, capsys.readouterr().out


def _expect_hint(checker, fn, key, capsys, seed=None):
    result, out = _verdict(checker, fn, capsys, seed)
    assert result is False, out
    assert attnlab.course.i18n.CATALOG[key]["en"].split("{")[0] in out, out
    # no other hint of this lesson fired
    others = [k for k in attnlab.course.i18n.CATALOG if k.startswith("l03.hint.") and k != key]
    for k in others:
        prefix = attnlab.course.i18n.CATALOG[k]["en"].split("{")[0]
        if len(prefix) > 20:
            assert prefix not in out, (k, out)


def _todo(*args):
    # TODO: the untouched exercise cell
    return None


# ------------------------------------------------------------------------------ exercise 1

def test_sinusoidal_reference_passes(capsys, seed):
    result, out = _verdict(l03.check_sinusoidal_encoding, sol.my_sinusoidal_encoding, capsys, seed)
    assert result is True, out
    assert out.startswith("✅")


def test_sinusoidal_todo_is_not_done(capsys, seed):
    result, out = _verdict(l03.check_sinusoidal_encoding, _todo, capsys, seed)
    assert result is None
    assert "not done yet" in out


def _pe(max_len, d_model, exponent=lambda two_i, i, j: two_i, base=10000.0, swap=False, dtype=torch.float64):
    pe = torch.zeros(max_len, d_model, dtype=dtype)
    for pos in range(max_len):
        for i in range(d_model // 2):
            e_sin = exponent(2 * i, i, 2 * i) / d_model
            e_cos = exponent(2 * i, i, 2 * i + 1) / d_model
            s, c = math.sin(pos / base ** e_sin), math.cos(pos / base ** e_cos)
            pe[pos, 2 * i], pe[pos, 2 * i + 1] = (c, s) if swap else (s, c)
    return pe


def test_sinusoidal_loop_version_passes(capsys, seed):
    result, out = _verdict(l03.check_sinusoidal_encoding, lambda L, d: _pe(L, d, dtype=torch.float32), capsys, seed)
    assert result is True, out


def test_sinusoidal_numpy_result_is_accepted(capsys, seed):
    result, out = _verdict(l03.check_sinusoidal_encoding, lambda L, d: sol.my_sinusoidal_encoding(L, d).numpy(),
                           capsys, seed)
    assert result is True, out


@pytest.mark.parametrize("mistake, key", [
    (lambda L, d: _pe(L, d, exponent=lambda two_i, i, j: i), "l03.hint.pe_exponent_i"),
    (lambda L, d: _pe(L, d, exponent=lambda two_i, i, j: j), "l03.hint.pe_exponent_odd"),
    (lambda L, d: _pe(L, d, swap=True), "l03.hint.pe_sin_cos"),
    (lambda L, d: _pe(L, d, exponent=lambda two_i, i, j: two_i // d * d), "l03.hint.pe_integer"),
    (lambda L, d: sol.my_sinusoidal_encoding(L, d).T, "l03.hint.pe_orientation"),
    (lambda L, d: sol.my_sinusoidal_encoding(d, L), "l03.hint.pe_orientation"),
    (lambda L, d: _pe(L, d, base=math.e), "l03.hint.pe_base"),       # exp(-2i/d): ln(10000) forgotten
    (lambda L, d: _pe(L, d, base=1000.0), "l03.hint.pe_base"),
], ids=["i_not_2i", "odd_column_index", "sin_cos_swapped", "integer_division", "transposed",
        "built_sideways", "no_log_base", "base_1000"])
def test_sinusoidal_typical_mistakes(mistake, key, capsys, seed):
    _expect_hint(l03.check_sinusoidal_encoding, mistake, key, capsys, seed)


def test_sinusoidal_divide_by_exponent_without_base(capsys, seed):
    def no_base(L, d):
        pos = torch.arange(L, dtype=torch.float32)[:, None]
        two_i = torch.arange(0, d, 2, dtype=torch.float32)
        pe = torch.zeros(L, d)
        pe[:, 0::2] = torch.sin(pos / (two_i / d))
        pe[:, 1::2] = torch.cos(pos / (two_i / d))
        return pe
    _expect_hint(l03.check_sinusoidal_encoding, no_base, "l03.hint.pe_nonfinite", capsys, seed)


def test_sinusoidal_multiplied_instead_of_divided(capsys, seed):
    def times(L, d):
        return _pe(L, d, exponent=lambda two_i, i, j: -two_i)     # pos * 10000^(2i/d)
    _expect_hint(l03.check_sinusoidal_encoding, times, "l03.hint.pe_frequencies", capsys, seed)


def test_sinusoidal_other_values_point_at_first_mismatch(capsys, seed):
    def off(L, d):
        pe = sol.my_sinusoidal_encoding(L, d)
        pe[3, 0] += 0.5
        return pe
    result, out = _verdict(l03.check_sinusoidal_encoding, off, capsys, seed)
    assert result is False
    assert "PE[3, 0]" in out


def test_sinusoidal_wrong_shape_and_type(capsys, seed):
    _expect_hint(l03.check_sinusoidal_encoding, lambda L, d: sol.my_sinusoidal_encoding(L, d)[None],
                 "l03.hint.shape", capsys, seed)
    _expect_hint(l03.check_sinusoidal_encoding, lambda L, d: sol.my_sinusoidal_encoding(L, d).tolist(),
                 "l03.hint.not_tensor", capsys, seed)


def test_sinusoidal_error_is_reported_briefly(capsys, seed):
    def broken(L, d):
        raise ValueError("oops")
    result, out = _verdict(l03.check_sinusoidal_encoding, broken, capsys, seed)
    assert result is False
    assert "ValueError" in out and "Traceback" not in out


# ------------------------------------------------------------------------------ exercise 2

def test_add_reference_passes(capsys, seed):
    result, out = _verdict(l03.check_add_positional_encoding, sol.add_positional_encoding, capsys, seed)
    assert result is True, out


def test_add_todo_is_not_done(capsys, seed):
    result, out = _verdict(l03.check_add_positional_encoding, _todo, capsys, seed)
    assert result is None
    assert "not done yet" in out


def test_add_in_place_is_rejected(capsys, seed):
    def in_place(x, pe):
        x += pe[: x.shape[1]]
        return x
    _expect_hint(l03.check_add_positional_encoding, in_place, "l03.hint.add_inplace", capsys, seed)


@pytest.mark.parametrize("mistake, key", [
    (lambda x, pe: x + pe, "l03.hint.add_slice"),
    (lambda x, pe: torch.cat([x, pe[: x.shape[1]].expand_as(x)], dim=-1), "l03.hint.add_concat"),
    (lambda x, pe: torch.cat([x, pe.expand(x.shape[0], *pe.shape)], dim=1), "l03.hint.add_concat"),
    (lambda x, pe: x + pe[: x.shape[0]], "l03.hint.add_batch"),
    (lambda x, pe: x + pe[1: x.shape[1] + 1], "l03.hint.add_offset"),
    (lambda x, pe: x + pe[-x.shape[1]:], "l03.hint.add_offset"),
    (lambda x, pe: x * pe[: x.shape[1]], "l03.hint.add_values"),
    (lambda x, pe: x[:, :, None] + pe[: x.shape[1]], "l03.hint.shape"),
], ids=["whole_table", "concat_features", "concat_positions", "sliced_by_batch", "off_by_one",
        "last_rows", "multiplied", "bad_broadcast"])
def test_add_typical_mistakes(mistake, key, capsys, seed):
    _expect_hint(l03.check_add_positional_encoding, mistake, key, capsys, seed)


# ------------------------------------------------------------------------------ exercise 3

def test_predict_reference_passes(capsys, seed):
    result, out = _verdict(l03.check_predict_permuted_output, sol.predict_permuted_output, capsys, seed)
    assert result is True, out
    assert "f(x[:, perm]) = f(x)[:, perm]" in out


def test_predict_todo_is_not_done(capsys, seed):
    result, out = _verdict(l03.check_predict_permuted_output, _todo, capsys, seed)
    assert result is None
    assert "not done yet" in out


@pytest.mark.parametrize("mistake, key", [
    (lambda out, perm: out, "l03.hint.predict_same"),
    (lambda out, perm: out[:, torch.argsort(torch.tensor(perm))], "l03.hint.predict_inverse"),
    (lambda out, perm: out.flip(1), "l03.hint.predict_flip"),
    (lambda out, perm: out[..., perm], "l03.hint.predict_axis"),
    (lambda out, perm: out[perm], "l03.hint.predict_axis"),
    (lambda out, perm: out[:, perm] * 2, "l03.hint.predict_values"),
    (lambda out, perm: out[:, perm].mean(1), "l03.hint.shape"),
], ids=["same_order", "inverse", "reversed", "feature_axis", "batch_axis", "scaled", "pooled"])
def test_predict_typical_mistakes(mistake, key, capsys, seed):
    _expect_hint(l03.check_predict_permuted_output, mistake, key, capsys, seed)


# ------------------------------------------------------------------------------ all checkers

CHECKERS = [
    (l03.check_sinusoidal_encoding, sol.my_sinusoidal_encoding),
    (l03.check_add_positional_encoding, sol.add_positional_encoding),
    (l03.check_predict_permuted_output, sol.predict_permuted_output),
]


@pytest.mark.parametrize("lang", ["vi", "zh"])
@pytest.mark.parametrize("checker, solution", CHECKERS)
def test_checkers_speak_the_lesson_language(checker, solution, lang, capsys, seed):
    attnlab.set_language(lang)
    assert graded(checker, solution, seed=seed) is True
    out = capsys.readouterr().out
    assert out.startswith(t("ex.correct", lang=lang, detail="").strip()[:4])
    assert graded(checker, _todo) is None
    assert t("ex.not_done", lang=lang, name=" ").split(" ")[1] in capsys.readouterr().out


@pytest.mark.parametrize("checker, solution", CHECKERS)
def test_checkers_leave_the_global_random_state_alone(checker, solution, capsys, seed):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    graded(checker, solution, seed=seed)
    assert torch.equal(torch.rand(3), expected)


def test_hints_never_print_the_table(capsys, seed):
    """A wrong answer's feedback contains no values of the correct table."""
    graded(l03.check_sinusoidal_encoding, lambda L, d: _pe(L, d, swap=True), seed=seed)
    out = capsys.readouterr().out
    assert "0.8415" not in out and "tensor(" not in out


def test_sizes_are_drawn_per_seed():
    """No size of the lesson can pass: the cases change from seed to seed; never square tables, the
    whole table used once in exercise 2, permutations that move every position."""
    pe = [l03._pe_cases(s) for s in range(20)]
    add = [l03._add_cases(s) for s in range(20)]
    predict = [[c[:4] + (tuple(c[4]),) for c in l03._predict_cases(s)] for s in range(20)]
    assert len({tuple(c) for c in pe}) == len({tuple(c) for c in add}) == len({tuple(c) for c in predict}) == 20
    assert all(L != D and D % 2 == 0 for cases in pe for L, D in cases)
    assert all(any(T == L for _, T, _, L in cases) and cases[0][1] < cases[0][2] for cases in add)
    assert all(all(p != i for i, p in enumerate(c[4])) for cases in predict for c in cases)


def test_predict_must_not_change_out(capsys, seed):
    def in_place(out, perm):
        out[:] = out[:, perm].clone()
        return out
    feedback = l03.evaluate_predict_permuted_output(in_place, seed=seed)
    assert (feedback.ok, feedback.key) == (False, "ex.changed_input")


def test_add_must_not_change_the_table(capsys, seed):
    def in_place(x, pe):
        pe[: x.shape[1]] += x[0]
        return x + pe[: x.shape[1]] - x[0]
    feedback = l03.evaluate_add_positional_encoding(in_place, seed=seed)
    assert (feedback.ok, feedback.key) == (False, "ex.changed_input") and " pe " in feedback.text
