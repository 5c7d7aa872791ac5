"""Lesson 04 checkers: each accepts the reference solution, rejects each typical mistake with
its own hint, and reports 'not done' for the untouched TODO."""
from __future__ import annotations

import warnings

import pytest
import torch

import attnlab
from attnlab.exercises import l04
from attnlab.course.i18n import t

from solutions import l04 as solutions

from exercise_checks import SEEDS, assert_hint, graded, todo


def ones(T):
    return torch.ones(T, T, dtype=torch.bool)


# ------------------------------------------------------------------------------- causal mask
CAUSAL_MISTAKES = [
    (lambda T: torch.triu(ones(T))[None, None], "l04.hint.causal_upper"),
    (lambda T: ~torch.tril(ones(T))[None, None], "l04.hint.causal_inverted"),
    (lambda T: torch.triu(ones(T), diagonal=1)[None, None], "l04.hint.causal_inverted"),
    (lambda T: torch.tril(ones(T), diagonal=-1)[None, None], "l04.hint.causal_no_diag"),
    (lambda T: torch.tril(torch.ones(T, T))[None, None], "l04.hint.dtype"),                  # float
    (lambda T: torch.tril(torch.ones(T, T, dtype=torch.int64))[None, None], "l04.hint.dtype"),
    (lambda T: torch.tril(ones(T)), "l04.hint.causal_2d"),                                   # (T, T)
    (lambda T: torch.tril(ones(T))[None], "l04.hint.shape"),                                 # (1, T, T)
    (lambda T: torch.tril(ones(T))[:, None, None], "l04.hint.shape"),
    (lambda T: torch.tril(ones(T), diagonal=1)[None, None], "l04.hint.causal_future"),
    (lambda T: torch.tril(ones(T))[None, None] & (torch.arange(T) != 0), "l04.hint.causal_past"),
    (lambda T: torch.zeros(T, T).masked_fill(~torch.tril(ones(T)), float("-inf"))[None, None],
     "l04.hint.additive"),
    (lambda T: torch.tril(ones(T)).tolist(), "l04.hint.not_tensor"),
]


def test_causal_accepts_solution(capsys):
    assert l04.CAUSAL.diagnose(solutions.causal_mask, seed=0) == (True, "l04.ok.causal", {})
    assert graded(l04.check_causal_mask, solutions.causal_mask) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l04.ok.causal", "en")) + "\n"


def test_causal_accepts_variants():
    assert graded(l04.check_causal_mask, lambda T: torch.ones(1, 1, T, T).tril().bool()) is True
    assert graded(l04.check_causal_mask, lambda T: (torch.arange(T)[:, None] >= torch.arange(T))[None, None]) is True
    assert graded(l04.check_causal_mask, attnlab.causal_mask) is False      # the forbidden function itself


@pytest.mark.parametrize("fn, key", CAUSAL_MISTAKES, ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in
                                                         enumerate(CAUSAL_MISTAKES)])
@pytest.mark.parametrize("seed", SEEDS)
def test_causal_rejects_mistake(fn, key, capsys, seed):
    assert_hint(l04.check_causal_mask, l04.CAUSAL.diagnose, fn, key, capsys, seed=seed)


def test_causal_hint_names_the_leak():
    ok, key, fields = l04.CAUSAL.diagnose(lambda T: torch.tril(ones(T), diagonal=1)[None, None], seed=0)
    assert (key, fields) == ("l04.hint.causal_future", {"T": l04._causal_cases(0)[0][0], "i": 0, "j": 1})


def test_causal_not_done(capsys):
    assert graded(l04.check_causal_mask, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l04.ex.causal", "en")) + "\n"


def test_causal_reports_other_errors(capsys):
    def broken(T):
        return torch.tril(torch.ones(T, T)).bool()[None, None] & undefined_name  # noqa: F821
    assert graded(l04.check_causal_mask, broken) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ " + t("ex.cause.name", "en")) and "NameError: name 'undefined_name'" in out


# ------------------------------------------------------------------------------ padding mask
PADDING_MISTAKES = [
    (lambda ids, pad=0: (ids == pad)[:, None, None, :], "l04.hint.pad_inverted"),
    (lambda ids, pad=0: ids != pad, "l04.hint.pad_2d"),
    (lambda ids, pad=0: (ids != pad)[:, None, :, None], "l04.hint.pad_rows"),
    (lambda ids, pad=0: (ids != pad)[:, None, :], "l04.hint.shape"),
    (lambda ids, pad=0: (ids != 0)[:, None, None, :], "l04.hint.pad_id"),
    (lambda ids, pad=0: (ids != pad).float()[:, None, None, :], "l04.hint.dtype"),
    (lambda ids, pad=0: (ids != pad).long()[:, None, None, :], "l04.hint.dtype"),
    (lambda ids, pad=0: (ids > pad)[:, None, None, :], "l04.hint.pad_values"),
    (lambda ids, pad=0: torch.zeros(ids.shape).masked_fill(ids == pad, float("-inf"))[:, None, None, :],
     "l04.hint.additive"),
    (lambda ids, pad=0: (ids != pad).numpy(), "l04.hint.not_tensor"),
]


def test_padding_accepts_solution(capsys):
    assert l04.PADDING.diagnose(solutions.padding_mask, seed=0) == (True, "l04.ok.padding", {})
    assert graded(l04.check_padding_mask, solutions.padding_mask) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l04.ok.padding", "en")) + "\n"


def test_padding_accepts_variants():
    assert graded(l04.check_padding_mask, lambda ids, pad=0: (ids != pad).unsqueeze(1).unsqueeze(2)) is True
    assert graded(l04.check_padding_mask, lambda ids, pad=0: ids.ne(pad).view(ids.shape[0], 1, 1, -1)) is True
    assert graded(l04.check_padding_mask, attnlab.padding_mask) is False


@pytest.mark.parametrize("fn, key", PADDING_MISTAKES, ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in
                                                           enumerate(PADDING_MISTAKES)])
@pytest.mark.parametrize("seed", SEEDS)
def test_padding_rejects_mistake(fn, key, capsys, seed):
    assert_hint(l04.check_padding_mask, l04.PADDING.diagnose, fn, key, capsys, seed=seed)


def test_padding_not_done(capsys):
    assert graded(l04.check_padding_mask, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l04.ex.padding", "en")) + "\n"


# ------------------------------------------------------------------------------ decoder mask
def buggy_decoder_mask(token_ids, pad_id=0):
    """The lesson's buggy version: OR instead of AND."""
    T = token_ids.shape[1]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
    padding = (token_ids != pad_id)[:, None, None, :]
    return causal | padding


def _causal(ids):
    T = ids.shape[1]
    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]


def _padding(ids, pad):
    return (ids != pad)[:, None, None, :]


DECODER_MISTAKES = [
    (buggy_decoder_mask, "l04.hint.dec_or"),
    (lambda ids, pad=0: ~solutions.decoder_mask(ids, pad), "l04.hint.dec_inverted"),
    (lambda ids, pad=0: _causal(ids).expand(ids.shape[0], 1, -1, -1), "l04.hint.dec_no_padding"),
    (lambda ids, pad=0: _padding(ids, pad).expand(-1, 1, ids.shape[1], -1), "l04.hint.dec_no_causal"),
    (lambda ids, pad=0: solutions.decoder_mask(ids, pad)[:, 0], "l04.hint.dec_no_head"),
    (lambda ids, pad=0: _causal(ids) & _padding(ids, pad).transpose(-2, -1), "l04.hint.dec_pad_rows"),
    (lambda ids, pad=0: _causal(ids) & _padding(ids, pad) & _padding(ids, pad).transpose(-2, -1), "l04.hint.dec_pad_rows_too"),
    (lambda ids, pad=0: solutions.decoder_mask(ids, 0), "l04.hint.pad_id"),
    (lambda ids, pad=0: solutions.decoder_mask(ids, pad).int(), "l04.hint.dtype"),
    (lambda ids, pad=0: solutions.decoder_mask(ids, pad)[:, :, None], "l04.hint.shape"),
    (lambda ids, pad=0: solutions.decoder_mask(ids, pad) & (torch.arange(ids.shape[1]) != 1),
     "l04.hint.dec_values"),
    (lambda ids, pad=0: torch.zeros(solutions.decoder_mask(ids, pad).shape).masked_fill(
        ~solutions.decoder_mask(ids, pad), float("-inf")), "l04.hint.additive"),
    (lambda ids, pad=0: [1], "l04.hint.not_tensor"),
]


def test_decoder_accepts_solution(capsys):
    assert l04.DECODER.diagnose(solutions.decoder_mask, seed=0) == (True, "l04.ok.decoder", {})
    assert graded(l04.check_decoder_mask, solutions.decoder_mask) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l04.ok.decoder", "en")) + "\n"


def test_decoder_accepts_variants():
    assert graded(l04.check_decoder_mask, attnlab.decoder_mask) is False
    assert graded(l04.check_decoder_mask, lambda ids, pad=0: _causal(ids) * _padding(ids, pad)) is True
    assert graded(l04.check_decoder_mask, lambda ids, pad=0: torch.logical_and(_causal(ids), _padding(ids, pad))) is True


@pytest.mark.parametrize("fn, key", DECODER_MISTAKES, ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in
                                                           enumerate(DECODER_MISTAKES)])
@pytest.mark.parametrize("seed", SEEDS)
def test_decoder_rejects_mistake(fn, key, capsys, seed):
    assert_hint(l04.check_decoder_mask, l04.DECODER.diagnose, fn, key, capsys, seed=seed)


def test_decoder_not_done(capsys):
    assert graded(l04.check_decoder_mask, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l04.ex.decoder", "en")) + "\n"


# ------------------------------------------------------------------ nn.MultiheadAttention mask
def _head_major(mask, H):
    return (~mask[:, 0]).repeat(H, 1, 1)                 # index h*B + b: the wrong order


MHA_MISTAKES = [
    (lambda m, H: m.expand(-1, H, -1, -1).reshape(-1, *m.shape[-2:]), "l04.hint.mha_not_inverted"),
    (lambda m, H: ~_head_major(m, H), "l04.hint.mha_not_inverted"),
    (lambda m, H: m, "l04.hint.mha_4d"),
    (lambda m, H: ~m, "l04.hint.mha_4d"),
    (lambda m, H: (~m).expand(-1, H, -1, -1), "l04.hint.mha_4d"),
    (lambda m, H: ~m[:, 0], "l04.hint.mha_no_heads"),
    (lambda m, H: _head_major(m, H), "l04.hint.mha_order"),
    (lambda m, H: solutions.mha_mask(m, H).float(), "l04.hint.mha_float"),
    (lambda m, H: (~solutions.mha_mask(m, H)).float(), "l04.hint.mha_float"),
    (lambda m, H: solutions.mha_mask(m, H).to(torch.uint8), "l04.hint.mha_dtype"),
    (lambda m, H: ~m[0, 0], "l04.hint.shape"),
    (lambda m, H: solutions.mha_mask(m, H) | (torch.arange(m.shape[-1]) == 1), "l04.hint.mha_values"),
    (lambda m, H: "mask", "l04.hint.not_tensor"),
]


def test_mha_accepts_solution(capsys):
    assert l04.MHA.diagnose(solutions.mha_mask, seed=0) == (True, "l04.ok.mha", {})
    assert graded(l04.check_mha_mask, solutions.mha_mask) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l04.ok.mha", "en")) + "\n"


def test_mha_accepts_variants():
    assert graded(l04.check_mha_mask, lambda m, H: (~m[:, 0]).repeat_interleave(H, dim=0)) is True
    assert graded(l04.check_mha_mask, lambda m, H: (~m).repeat(1, H, 1, 1).flatten(0, 1)) is True


@pytest.mark.parametrize("fn, key", MHA_MISTAKES, ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in
                                                       enumerate(MHA_MISTAKES)])
@pytest.mark.parametrize("seed", SEEDS)
def test_mha_rejects_mistake(fn, key, capsys, seed):
    assert_hint(l04.check_mha_mask, l04.MHA.diagnose, fn, key, capsys, seed=seed)


def test_mha_not_done(capsys):
    assert graded(l04.check_mha_mask, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l04.ex.mha", "en")) + "\n"


def test_mha_solution_really_drives_torch():
    """The reference mask makes nn.MultiheadAttention match the course module; the unchanged mask does not."""
    mask = attnlab.decoder_mask(torch.tensor([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]]))
    assert torch_mha_agrees(solutions.mha_mask(mask, 4), mask, 4)
    wrong = mask.expand(-1, 4, -1, -1).reshape(8, 5, 5)
    assert not torch_mha_agrees(wrong, mask, 4)


def torch_mha_agrees(attn_mask: torch.Tensor, mask: torch.Tensor, num_heads: int) -> bool:
    """nn.MultiheadAttention with ``attn_mask`` = attnlab.MultiHeadAttention with ``mask``."""
    B, _, T, _ = mask.shape
    d_model = 4 * num_heads
    gen = torch.Generator().manual_seed(0)
    ours = attnlab.MultiHeadAttention(d_model, num_heads).eval()
    theirs = torch.nn.MultiheadAttention(d_model, num_heads, batch_first=True).eval()
    with torch.no_grad():
        for p in ours.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
        ours.copy_to(theirs)
        x = torch.randn(B, T, d_model, generator=gen)
        expected, _ = ours(x, mask=mask)
        got, _ = theirs(x, x, x, attn_mask=attn_mask, need_weights=False)
    return bool(torch.allclose(got, expected, atol=1e-5, rtol=0))


# ------------------------------------------------------------------------------------- all
def test_checkers_print_in_every_language(capsys):
    for lang in ("vi", "zh", "en"):
        assert graded(l04.check_causal_mask, lambda T: torch.triu(ones(T))[None, None], lang=lang) is False
        out = capsys.readouterr().out
        assert out == t("ex.wrong", lang, detail=t("l04.hint.causal_upper", lang)) + "\n"


def test_checkers_are_silent_otherwise():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for check, fn in ((l04.check_causal_mask, solutions.causal_mask),
                          (l04.check_padding_mask, solutions.padding_mask),
                          (l04.check_decoder_mask, solutions.decoder_mask),
                          (l04.check_mha_mask, solutions.mha_mask)):
            assert graded(check, fn) is True


def test_reference_solutions_match_the_package():
    ids = torch.tensor([[0, 0, 3, 7, 2], [5, 1, 8, 4, 6]])
    assert torch.equal(solutions.causal_mask(6), attnlab.causal_mask(6))
    assert torch.equal(solutions.padding_mask(ids, 0), attnlab.padding_mask(ids, 0))
    assert torch.equal(solutions.decoder_mask(ids, 0), attnlab.decoder_mask(ids, 0))


def test_inputs_are_drawn_per_seed():
    """Lengths beyond a small table (review W5), pad ids other than 0 with a real token 0, B == S
    once, left padding first for the decoder; all change with the seed."""
    for seed in range(20):
        lengths = [T for (T,) in l04._causal_cases(seed)]
        assert 1 in lengths and max(lengths) > 16 and {T % 2 for T in lengths} == {0, 1}
        pads = l04._with_pad(l04._padding_cases(seed))
        assert any(ids.shape[0] == ids.shape[1] for ids, _ in pads)
        assert any(pad != 0 and (ids == 0).any() and (ids == pad).any() for ids, pad in pads)
        first, _ = l04._decoder_cases(seed)[0]
        assert (first[0, 0] == 0) and (first[:, -1] != 0).all()                        # padded on the left
    assert len({tuple(T for (T,) in l04._causal_cases(s)) for s in range(20)}) >= 15
    assert len({str(l04._padding_cases(s)[0][0].tolist()) for s in range(20)}) == 20


@pytest.mark.parametrize("alias", ["attnlab.causal_mask", "from attnlab import causal_mask as cm; cm",
                                   "getattr(attnlab, 'causal_mask')"])
def test_the_forbidden_function_is_caught_however_it_is_reached(alias):
    """Review 2026-12-01b (student): ``attnlab.causal_mask`` in exercise 1 was accepted."""
    from solutions import catalogue
    entry = next(e for e in catalogue.EXERCISES if e["key"] == "l04.causal")
    *imports, expression = alias.split("; ")
    source = "\n".join(imports + ["", "def my_causal_mask(T):", f"    return {expression}(T)", ""])
    got = catalogue.run(entry, source, seed=1)
    assert (got.ok, got.key) == (False, "ex.forbidden") and "attnlab.causal_mask" in got.text, got.text
    got = catalogue.run(entry, "my_causal_mask = attnlab.causal_mask\n", seed=1)
    assert (got.ok, got.key) == (False, "ex.forbidden"), got.text
