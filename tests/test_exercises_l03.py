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
    def in_place(x, pe, start=0):
        x += pe[start:start + x.shape[1]]
        return x
    _expect_hint(l03.check_add_positional_encoding, in_place, "l03.hint.add_inplace", capsys, seed)


def _checked(add):
    """``add`` with the size check of the reference in front (to test the other mistakes alone)."""
    def fn(x, pe, start=0):
        if start + x.shape[1] > pe.shape[0]:
            raise ValueError(f"start = {start}, T = {x.shape[1]}: start + T = {start + x.shape[1]} > max_len = {pe.shape[0]}")
        return add(x, pe, start)
    return fn


@pytest.mark.parametrize("mistake, key", [
    (lambda x, pe, s: x + pe, "l03.hint.add_slice"),
    (lambda x, pe, s: torch.cat([x, pe[s: s + x.shape[1]].expand_as(x)], dim=-1), "l03.hint.add_concat"),
    (lambda x, pe, s: torch.cat([x, pe.expand(x.shape[0], *pe.shape)], dim=1), "l03.hint.add_concat"),
    (lambda x, pe, s: x + pe[: x.shape[0]], "l03.hint.add_batch"),
    (lambda x, pe, s: x + pe[s + 1: s + x.shape[1] + 1], "l03.hint.add_offset"),
    (lambda x, pe, s: x + pe[max(s - 1, 0): max(s - 1, 0) + x.shape[1]], "l03.hint.add_offset"),
    (lambda x, pe, s: x + pe[-x.shape[1]:], "l03.hint.add_offset"),
    (lambda x, pe, s: x * pe[s: s + x.shape[1]], "l03.hint.add_values"),
    (lambda x, pe, s: x[:, :, None] + pe[s: s + x.shape[1]], "l03.hint.shape"),
    (lambda x, pe, s: x + pe[: x.shape[1]], "l03.hint.add_start_ignored"),
    (lambda x, pe, s: x + pe[s: x.shape[1]], "l03.hint.add_start_end"),
    (lambda x, pe, s: x + pe[s: s + x.shape[1] + 1], "l03.hint.add_start_end"),
    (lambda x, pe, s: x + pe[s: s + x.shape[1], : x.shape[1]], "l03.hint.add_columns"),
], ids=["whole_table", "concat_features", "concat_positions", "sliced_by_batch", "off_by_one",
        "off_by_one_before", "last_rows", "multiplied", "bad_broadcast", "start_ignored", "slice_ends_at_T",
        "one_row_too_many", "columns_cut"])
def test_add_typical_mistakes(mistake, key, capsys, seed):
    _expect_hint(l03.check_add_positional_encoding, _checked(mistake), key, capsys, seed)


def test_add_without_a_start_parameter(capsys, seed):
    _expect_hint(l03.check_add_positional_encoding, lambda x, pe: x + pe[: x.shape[1]],
                 "l03.hint.add_no_start", capsys, seed)


def test_add_past_the_end_of_the_table(capsys, seed):
    """start + T > max_len: a ValueError naming the sizes, not a result, a torch error or a vague message;
    start + T = max_len still fits."""
    def unchecked(x, pe, start=0):
        return x + pe[start:start + x.shape[1]]

    def padded(x, pe, start=0):                                   # quietly pads the table: a result, no error
        rows = pe[start:start + x.shape[1]]
        return x + torch.cat([rows, rows.new_zeros(x.shape[1] - rows.shape[0], rows.shape[1])])

    def vague(x, pe, start=0):
        if start + x.shape[1] > pe.shape[0]:
            raise ValueError("the sentence is too long")
        return unchecked(x, pe, start)

    def index_error(x, pe, start=0):
        if start + x.shape[1] > pe.shape[0]:
            raise IndexError(f"start + T = {start + x.shape[1]} > max_len = {pe.shape[0]}")
        return unchecked(x, pe, start)

    def too_strict(x, pe, start=0):
        if start + x.shape[1] >= pe.shape[0]:
            raise ValueError(f"start + T = {start + x.shape[1]} >= max_len = {pe.shape[0]}")
        return unchecked(x, pe, start)
    _expect_hint(l03.check_add_positional_encoding, unchecked, "l03.hint.add_range_error", capsys, seed)
    _expect_hint(l03.check_add_positional_encoding, padded, "l03.hint.add_range", capsys, seed)
    _expect_hint(l03.check_add_positional_encoding, vague, "l03.hint.add_range_message", capsys, seed)
    _expect_hint(l03.check_add_positional_encoding, index_error, "l03.hint.add_range_error", capsys, seed)
    _expect_hint(l03.check_add_positional_encoding, too_strict, "l03.hint.add_range_strict", capsys, seed)


def test_add_reference_names_the_sizes():
    x, pe = torch.zeros(2, 4, 6), attnlab.sinusoidal_encoding(10, 6)
    assert torch.equal(sol.add_positional_encoding(x, pe, start=6), pe[6:10].expand(2, 4, 6))
    with pytest.raises(ValueError, match="start = 7, T = 4.*max_len = 10"):
        sol.add_positional_encoding(x, pe, start=7)


# ------------------------------------------------------------------------------ exercise 3

def test_predict_reference_passes(capsys, seed):
    result, out = _verdict(l03.check_predict_permuted_output, sol.predict_permuted_output, capsys, seed)
    assert result is True, out
    assert "f(y[:, perm], x) = f(y, x)[:, perm]" in out and "f(y, x[:, perm]) = f(y, x)" in out


def test_predict_ok_message_quotes_the_measured_positional_gaps(seed):
    """The figures of the ok message are the real layer's: the prediction with positions encoded on
    both sequences, against the layer run on the permuted input (never 0: positions break both rules)."""
    ok, key, fields = l03.PREDICT.diagnose(sol.predict_permuted_output, seed=seed)
    gaps = {"queries": 0.0, "memory": 0.0}
    for i, case in enumerate(l03._predict_cases(seed)):
        data = l03._predict_data(seed, i, *case)
        gaps["queries"] = max(gaps["queries"], (data["pe_out"][:, case[5]] - data["pe_queries"]).abs().max().item())
        gaps["memory"] = max(gaps["memory"], (data["pe_out"] - data["pe_memory"]).abs().max().item())
    assert (ok, key) == (True, "l03.ok.predict")
    assert fields == pytest.approx({"diff_queries": gaps["queries"], "diff_memory": gaps["memory"]}, rel=1e-6)
    assert min(gaps.values()) > 1e-2


def test_predict_data_is_cross_attention():
    """The checker's truths come from a real cross-attention layer: the queries' permutation moves the
    output rows, the memory's leaves the output as it is (to rounding), and S differs from T."""
    cases = l03._predict_cases(0)
    assert [c[2] == c[1] for c in cases] == [True, False, False]
    for i, case in enumerate(cases):
        data = l03._predict_data(0, i, *case)
        assert torch.allclose(data["queries"], data["out"][:, case[5]], atol=1e-6)
        assert torch.allclose(data["memory"], data["out"], atol=1e-6)
        assert not torch.allclose(data["memory"], data["out"][:, case[5]], atol=1e-3)


def test_predict_todo_is_not_done(capsys, seed):
    result, out = _verdict(l03.check_predict_permuted_output, _todo, capsys, seed)
    assert result is None
    assert "not done yet" in out


def _queries(mistake):
    """``mistake`` when the queries are permuted, the right answer for the memory."""
    return lambda out, perm, permuted: mistake(out, perm) if permuted == "queries" else out


def _memory(mistake):
    """The right answer for the queries, ``mistake`` when the memory is permuted."""
    return lambda out, perm, permuted: out[:, perm] if permuted == "queries" else mistake(out, perm)


@pytest.mark.parametrize("mistake, key", [
    (_queries(lambda out, perm: out), "l03.hint.predict_same"),
    (_queries(lambda out, perm: out[:, torch.argsort(torch.tensor(perm))]), "l03.hint.predict_inverse"),
    (_queries(lambda out, perm: out.flip(1)), "l03.hint.predict_flip"),
    (_queries(lambda out, perm: out[..., perm]), "l03.hint.predict_axis"),
    (_queries(lambda out, perm: out[perm]), "l03.hint.predict_axis"),
    (_queries(lambda out, perm: out[:, perm] * 2), "l03.hint.predict_values"),
    (_queries(lambda out, perm: out[:, perm].mean(1)), "l03.hint.shape"),
    (lambda out, perm, permuted: out[:, perm], "l03.hint.predict_memory_moved"),          # self-attention's rule
    (_memory(lambda out, perm: out[:, torch.argsort(torch.tensor(perm))]), "l03.hint.predict_memory_moved"),
    (_memory(lambda out, perm: out.flip(1)), "l03.hint.predict_memory_moved"),
    (_memory(lambda out, perm: out * 2), "l03.hint.predict_memory_values"),
    (_memory(lambda out, perm: out.mean(1, keepdim=True).expand_as(out)), "l03.hint.predict_memory_values"),
    (_memory(lambda out, perm: out.mean(1)), "l03.hint.shape"),
    (lambda out, perm, permuted: out, "l03.hint.predict_same"),
    (lambda out, perm, permuted: out if permuted == "queries" else out[:, perm], "l03.hint.predict_same"),
], ids=["same_order", "inverse", "reversed", "feature_axis", "batch_axis", "scaled", "pooled",
        "memory_reordered", "memory_inverse", "memory_flipped", "memory_scaled", "memory_mean", "memory_pooled",
        "never_moves", "cases_swapped"])
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
    ranges = [l03._range_case(s) for s in range(20)]
    predict = [[c[:5] + (tuple(c[5]), tuple(c[6])) for c in l03._predict_cases(s)] for s in range(20)]
    assert len({tuple(c) for c in pe}) == len({tuple(c) for c in add}) == len({tuple(c) for c in predict}) == 20
    assert all(L != D and D % 2 == 0 for cases in pe for L, D in cases)
    assert all(any(T == L for _, T, _, L, _ in cases) and cases[0][1] < cases[0][2] for cases in add)
    assert all(cases[0][4] == 0 and any(s > 0 and s + T == L for _, T, _, L, s in cases)
               and any(s > 0 and s + T < L for _, T, _, L, s in cases) for cases in add)   # from 0, later, to the end
    assert all(s + T > L for _, T, _, L, s in ranges) and len(set(ranges)) > 10
    assert all(p != i for cases in predict for c in cases for perm in c[5:] for i, p in enumerate(perm))


def test_predict_must_not_change_out(capsys, seed):
    def in_place(out, perm, permuted):
        out[:] = out[:, perm].clone() if permuted == "queries" else out
        return out
    feedback = l03.evaluate_predict_permuted_output(in_place, seed=seed)
    assert (feedback.ok, feedback.key) == (False, "ex.changed_input")


def test_add_must_not_change_the_table(capsys, seed):
    def in_place(x, pe, start=0):
        pe[start:start + x.shape[1]] += x[0]
        return x + pe[start:start + x.shape[1]] - x[0]
    feedback = l03.evaluate_add_positional_encoding(in_place, seed=seed)
    assert (feedback.ok, feedback.key) == (False, "ex.changed_input") and " pe " in feedback.text
