"""Lesson 07 checkers: each accepts the reference solution, rejects each typical mistake with
its own hint, and reports 'not done' for the untouched TODO."""
from __future__ import annotations

import warnings

import pytest
import torch

from attnlab import causal_mask, decoder_mask, reversal
from attnlab.exercises import l07
from attnlab.course.i18n import t
from exercise_checks import graded

from solutions import l07 as solutions

SEP, PAD = reversal.SEP, reversal.PAD


@pytest.fixture(scope="module")
def model():
    return reversal.load_pretrained()


def assert_hint(check, diagnose, key, capsys):
    """``diagnose()`` picks the hint ``key``; ``check()`` prints exactly that hint and the verdict is False."""
    ok, got_key, fields = diagnose()
    assert (ok, got_key) == (False, key)
    assert check() is False
    assert capsys.readouterr().out == t("ex.wrong", "en", detail=t(key, "en", **fields)) + "\n"


def diagnose_loss_mask(fn, seed=0):
    return l07.judge_loss_mask(l07.probe_loss_mask(fn, seed=seed), seed=seed)


def diagnose_forward(fn, model, seed=0):
    return l07.judge_forward(l07.probe_forward(fn, model, seed=seed), seed=seed)


def diagnose_reversal_head(model, answer, seed=0):
    return l07.judge_reversal_head(l07.probe_reversal_head(model, answer, seed=seed), seed=seed)


def todo(*args):
    # TODO: the untouched exercise
    return None


# ---------------------------------------------------------------------------------- loss mask
def _from_sep(x):
    return torch.cumsum(x == SEP, dim=1) > 0


LOSS_MASK_MISTAKES = [
    (lambda i, tg: torch.ones_like(i, dtype=torch.bool), "l07.hint.mask_all"),
    (lambda i, tg: tg != PAD, "l07.hint.mask_source"),                                   # source digits too
    (lambda i, tg: _from_sep(tg) & (tg != PAD), "l07.hint.mask_early"),                   # separator searched in targets
    (lambda i, tg: _from_sep(i) & (i != SEP) & (tg != PAD), "l07.hint.mask_late"),        # strictly after the separator
    (lambda i, tg: _from_sep(i), "l07.hint.mask_padding"),                                # padding targets kept
    (lambda i, tg: _from_sep(i) & (i != PAD), "l07.hint.mask_padding"),                   # PAD tested on inputs
    (lambda i, tg: ~solutions.loss_mask(i, tg), "l07.hint.mask_inverted"),
    (lambda i, tg: (torch.arange(i.shape[1]) >= 8).expand_as(i), "l07.hint.mask_fixed"),  # n = 8 hard-coded
    (lambda i, tg: solutions.loss_mask(i, tg) & (torch.arange(i.shape[1]) != 10), "l07.hint.mask_missing"),
    (lambda i, tg: _from_sep(torch.cat([i, tg[:, -1:]], 1)), "l07.hint.mask_shape_full"),  # on the full rows
    (lambda i, tg: solutions.loss_mask(i, tg).any(1), "l07.hint.mask_shape"),
    (lambda i, tg: solutions.loss_mask(i, tg).long(), "l07.hint.mask_dtype"),
    (lambda i, tg: solutions.loss_mask(i, tg).float(), "l07.hint.mask_dtype"),
    (lambda i, tg: solutions.loss_mask(i, tg).tolist(), "l07.hint.not_tensor"),
]


def test_loss_mask_accepts_solution(capsys):
    assert diagnose_loss_mask(solutions.loss_mask) == (True, "l07.ok.loss_mask", {})
    assert graded(l07.check_loss_mask, solutions.loss_mask) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l07.ok.loss_mask", "en")) + "\n"


def test_loss_mask_accepts_variants():
    assert graded(l07.check_loss_mask, reversal.loss_mask) is True
    # the separator found in targets, then shifted by one: the same positions
    assert graded(l07.check_loss_mask, lambda i, tg: _from_sep(tg) & (tg != SEP) & (tg != PAD)) is True
    assert graded(l07.check_loss_mask, lambda i, tg: (i == SEP).long().cummax(1).values.bool() & (tg != PAD)) is True


@pytest.mark.parametrize("fn, key", LOSS_MASK_MISTAKES,
                         ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in enumerate(LOSS_MASK_MISTAKES)])
def test_loss_mask_rejects_mistake(fn, key, capsys):
    assert_hint(lambda: graded(l07.check_loss_mask, fn, seed=0), lambda: diagnose_loss_mask(fn), key, capsys)


def test_loss_mask_hint_names_a_real_position():
    ok, key, fields = diagnose_loss_mask(lambda i, tg: _from_sep(i) & (i != SEP) & (tg != PAD))
    ids = l07.loss_mask_cases(0)[0]
    assert key == "l07.hint.mask_late"
    assert fields["pos"] == int(reversal.lengths(ids)[fields["b"]])          # the separator of that row


def test_loss_mask_not_done(capsys):
    assert graded(l07.check_loss_mask, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l07.ex.loss_mask", "en")) + "\n"


def test_loss_mask_reports_errors(capsys):
    assert graded(l07.check_loss_mask, lambda i, tg: i.nonexistent) is False
    assert capsys.readouterr().out.startswith("❌ Your code raised AttributeError")


# ------------------------------------------------------------------------------------ forward
def _by_hand(model, ids, mask, positions=True, final_norm=True, blocks_masked=None):
    x = model.embed(ids)
    if positions:
        x = model.pos(x)
    for i, block in enumerate(model.blocks):
        use = mask if blocks_masked is None or i in blocks_masked else None
        x, _ = block(x, mask=use)
    return model.head(model.norm(x) if final_norm else x)


FORWARD_MISTAKES = [
    (lambda m, ids: _by_hand(m, ids, None), "l07.hint.fwd_no_mask"),
    (lambda m, ids: m(ids)[0], "l07.hint.fwd_no_mask"),                        # relies on the model's own mask
    (lambda m, ids: _by_hand(m, ids, torch.ones(1, 1, ids.shape[1], ids.shape[1], dtype=torch.bool)),
     "l07.hint.fwd_no_mask"),                                                    # a full mask
    (lambda m, ids: _by_hand(m, ids, ~causal_mask(ids.shape[1])), "l07.hint.fwd_inverted"),
    (lambda m, ids: _by_hand(m, ids, causal_mask(ids.shape[1]).transpose(-2, -1)), "l07.hint.fwd_inverted"),
    (lambda m, ids: _by_hand(m, ids, causal_mask(ids.shape[1]), blocks_masked={0}), "l07.hint.fwd_leak"),
    (lambda m, ids: _by_hand(m, ids, causal_mask(ids.shape[1]), positions=False), "l07.hint.fwd_no_pos"),
    (lambda m, ids: _by_hand(m, ids, causal_mask(ids.shape[1]), final_norm=False), "l07.hint.fwd_no_norm"),
    (lambda m, ids: m.head(m.norm(m.pos(m.pos(m.embed(ids))))), "l07.hint.fwd_values"),
    (lambda m, ids: (_by_hand(m, ids, causal_mask(ids.shape[1])), []), "l07.hint.fwd_tuple"),
    (lambda m, ids: _by_hand(m, ids, causal_mask(ids.shape[1]))[:, -1], "l07.hint.fwd_shape"),
    (lambda m, ids: _by_hand(m, ids, causal_mask(ids.shape[1])).detach().numpy(), "l07.hint.not_tensor"),
]


def test_forward_accepts_solution(model, capsys):
    assert diagnose_forward(solutions.forward, model) == (True, "l07.ok.forward", {})
    assert graded(l07.check_forward, solutions.forward, model) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l07.ok.forward", "en")) + "\n"


def test_forward_accepts_variants(model):
    # the decoder mask (causal AND padding) only changes the padding rows, which do not count
    assert graded(l07.check_forward, lambda m, ids: _by_hand(m, ids, decoder_mask(ids, PAD)), model) is True

    def with_weights(m, ids):
        x = m.pos(m.embed(ids))
        for block in m.blocks:
            x, _ = block(x, mask=causal_mask(ids.shape[1]), need_weights=True)
        return m.head(m.norm(x))
    assert graded(l07.check_forward, with_weights, model) is True


@pytest.mark.parametrize("fn, key", FORWARD_MISTAKES,
                         ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in enumerate(FORWARD_MISTAKES)])
def test_forward_rejects_mistake(fn, key, model, capsys):
    assert_hint(lambda: graded(l07.check_forward, fn, model, seed=0), lambda: diagnose_forward(fn, model), key, capsys)


def test_forward_does_not_touch_the_lessons_model(model):
    assert model.causal is True
    graded(l07.check_forward, lambda m, ids: m(ids)[0], model)
    assert model.causal is True


def test_forward_not_done(model, capsys):
    assert graded(l07.check_forward, todo, model) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l07.ex.forward", "en")) + "\n"


# ------------------------------------------------------------------------------- which head
@pytest.fixture(scope="module")
def heads(model):
    """The (layer, head) pairs, counted from 1, that pass and that fail the threshold."""
    mass = reversal.antidiagonal_mass(model)
    L, H = mass.shape
    good = [(l + 1, h + 1) for l in range(L) for h in range(H) if mass[l, h] >= reversal.ANTI_DIAGONAL_THRESHOLD]
    bad = [(l + 1, h + 1) for l in range(L) for h in range(H) if mass[l, h] < reversal.ANTI_DIAGONAL_THRESHOLD]
    return mass, good, bad


def test_head_accepts_the_computed_answer(model, heads, capsys):
    mass, good, _ = heads
    assert solutions.reversal_head(model) in good
    for answer in good:
        ok, key, fields = diagnose_reversal_head(model, answer)
        assert (ok, key) == (True, "l07.ok.head")
    assert graded(l07.check_reversal_head, model, list(good[0])) is True
    assert capsys.readouterr().out.startswith("✅ Correct! Layer")


def test_head_rejects_a_layer_without_the_pattern(model, heads, capsys):
    mass, good, bad = heads
    weak = [(l, h) for (l, h) in bad if mass[l - 1].max() < reversal.ANTI_DIAGONAL_THRESHOLD]
    assert weak, "expected a layer with no reversal head (layer 1 of the checkpoint)"
    assert_hint(lambda: graded(l07.check_reversal_head, model, weak[0], seed=0),
                lambda: diagnose_reversal_head(model, weak[0]), "l07.hint.head_layer", capsys)


def test_head_recognises_the_shifted_anti_diagonal(model, heads, capsys):
    """A head that looks one column right of the mirror (key 2n - t) gets its own hint."""
    mass, good, bad = heads
    echo = reversal.attention_mass(model, l07.echo_map)
    shifted = [(l, h) for (l, h) in bad if echo[l - 1, h - 1] >= reversal.ANTI_DIAGONAL_THRESHOLD]
    if not shifted:
        pytest.skip("no shifted head in this checkpoint")
    assert_hint(lambda: graded(l07.check_reversal_head, model, shifted[0], seed=0),
                lambda: diagnose_reversal_head(model, shifted[0]), "l07.hint.head_shifted", capsys)


# Every branch on made-up masses (layers x heads), so none depends on the checkpoint.
ANTI = [[0.27, 0.26, 0.08, 0.22], [0.77, 0.03, 0.62, 0.40]]
ECHO = [[0.10, 0.10, 0.10, 0.10], [0.05, 0.81, 0.10, 0.05]]


@pytest.fixture
def fake_masses(monkeypatch):
    anti, echo = torch.tensor(ANTI), torch.tensor(ECHO)
    monkeypatch.setattr(reversal, "antidiagonal_mass", lambda model, ids=None: anti)
    monkeypatch.setattr(reversal, "attention_mass",
                        lambda model, where=reversal.reversal_map, ids=None: echo if where is l07.echo_map else anti)


@pytest.mark.parametrize("answer, key", [
    ((2, 1), "l07.ok.head"),
    ((2, 3), "l07.ok.head"),
    ((2, 2), "l07.hint.head_shifted"),
    ((2, 4), "l07.hint.head_other"),
    ((1, 1), "l07.hint.head_layer"),
    ((1, 4), "l07.hint.head_layer"),
    ((1, 0), "l07.hint.head_zero_based"),      # (2, 1) counted from 0
    ((0, 0), "l07.hint.head_range"),           # (1, 1) is no reversal head either
    ((3, 1), "l07.hint.head_range"),
])
def test_head_branches(answer, key, model, fake_masses, capsys):
    ok, got_key, fields = diagnose_reversal_head(model, answer)
    assert (ok, got_key) == (key == "l07.ok.head", key)
    assert graded(l07.check_reversal_head, model, answer, seed=0) is ok
    verdict = "ex.correct" if ok else "ex.wrong"
    discussion = "\n" + t("ex.discussion", "en", text=t("l07.discuss.head", "en")) if ok else ""
    assert capsys.readouterr().out == t(verdict, "en", detail=t(key, "en", **fields)) + discussion + "\n"
    if key == "l07.hint.head_other":
        assert fields == {"layer": 2, "head": 4, "pct": 40, "need": 50}


@pytest.mark.parametrize("answer, key", [
    ((3, 1), "l07.hint.head_range"),
    ((1, 5), "l07.hint.head_range"),
    ((-1, 2), "l07.hint.head_range"),
    ("2, 4", "l07.hint.head_format"),
    ((2,), "l07.hint.head_format"),
    ((2.0, 4.0), "l07.hint.head_format"),
    ((True, 1), "l07.hint.head_format"),
])
def test_head_rejects_bad_answers(answer, key, model, capsys):
    assert_hint(lambda: graded(l07.check_reversal_head, model, answer, seed=0),
                lambda: diagnose_reversal_head(model, answer), key, capsys)


def test_head_not_done(model, capsys):
    assert graded(l07.check_reversal_head, model, None) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l07.ex.head", "en")) + "\n"


# ------------------------------------------------------------------------------------- all
def test_checkers_print_in_every_language(model, capsys):
    for lang in ("vi", "zh", "en"):
        assert graded(l07.check_loss_mask, lambda i, tg: tg != PAD, lang=lang) is False
        out = capsys.readouterr().out
        _, key, fields = diagnose_loss_mask(lambda i, tg: tg != PAD)
        assert out == t("ex.wrong", lang, detail=t(key, lang, **fields)) + "\n"


def test_checkers_are_silent_otherwise(model):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert graded(l07.check_loss_mask, solutions.loss_mask) is True
        assert graded(l07.check_forward, solutions.forward, model) is True
        assert graded(l07.check_reversal_head, model, solutions.reversal_head(model)) is True


def test_reference_solutions_match_the_package(model):
    ids = reversal.heldout()[:32]
    inputs, targets = reversal.split(ids)
    assert torch.equal(solutions.loss_mask(inputs, targets), reversal.loss_mask(inputs, targets))
    with torch.no_grad():
        torch.testing.assert_close(solutions.forward(model, inputs), model(inputs)[0])
    best = reversal.reversal_head(model)
    assert solutions.reversal_head(model) == (best.layer, best.head)


# ------------------------------------------------------------------------------- review 2026-12-01b
def forward_no_return(model, ids):
    x = model.pos(model.embed(ids))
    for block in model.blocks:
        x, _ = block(x, mask=causal_mask(ids.shape[1]))
    model.head(model.norm(x))                                             # the return forgotten


def test_forward_without_return_is_wrong_not_undone(model):
    feedback = l07.check_forward.evaluate(forward_no_return, model, lang="en")
    assert feedback.ok is False, feedback.text


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_a_2d_mask_is_named_in_the_lessons_language(model, lang):
    """Student report, hint 4: attnlab's own English ValueError reached the Vietnamese lesson."""
    def two_d(m, ids):
        return _by_hand(m, ids, torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).tril())
    feedback = l07.check_forward.evaluate(two_d, model, lang=lang)
    assert (feedback.ok, feedback.key) == (False, "l07.hint.fwd_mask_2d"), feedback.text
    assert "expected 4-D" not in feedback.text


def test_results_with_the_model_can_be_saved_and_swapped_for_the_checkpoint(model, tmp_path):
    """The grader saves the probe's results (the lesson model included: plain tensors) and may put the
    package checkpoint in results["model"]; the verdicts do not change."""
    from attnlab.exercises import EXERCISES, _models, load_results, save_results
    for i, (key, args) in enumerate([("l07.forward", (solutions.forward, model)),
                                     ("l07.forward", (FORWARD_MISTAKES[7][0], model)),
                                     ("l07.reversal_head", (model, solutions.reversal_head(model)))]):
        results = EXERCISES[key].probe(*args, seed=5)
        want = EXERCISES[key].judge(results, seed=5)
        results["model"] = _models.checkpoint_data("07")
        save_results(tmp_path / f"r{i}.pt", results)
        assert EXERCISES[key].judge(load_results(tmp_path / f"r{i}.pt"), seed=5) == want


def test_sizes_of_the_forward_probe_are_drawn_per_run():
    """B != T in every batch, a T other than the lesson's 16 (review W1: B == T == 16 let T = ids.shape[0] pass)."""
    shapes = {tuple(ids.shape) for s in range(10) for ids in l07.forward_cases(s)}
    assert all(B != T for B, T in shapes) and {T for _, T in shapes} - {16} and len(shapes) > 8
