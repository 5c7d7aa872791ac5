"""Lesson 06 checkers: each accepts the reference solution, rejects each typical mistake with
its own hint, and says 'not done yet' for the untouched TODO."""

import pytest
import torch

import attnlab
from attnlab import t
from attnlab.exercises import l06

from exercise_checks import graded
from solutions import l06 as sol

EN = "en"


SEEDS = (0, 1, 2, 3)


def run(checker, fn, capsys):
    result = graded(checker, fn, lang=EN)
    return result, capsys.readouterr().out


def verdicts(checker, fn) -> set:
    """(ok, key) of the checker on several seeds: sizes change from seed to seed, the verdict must not."""
    return {(fb.ok, fb.key) for fb in (checker.evaluate(fn, lang=EN, seed=s) for s in SEEDS)}


def hint(key, **fields):
    return t(key, EN, **{k: t(v, EN) if v.startswith("l06.") else v for k, v in fields.items()})


# ------------------------------------------------------------------ exercise 1: parameters

def test_block_params_formula_is_exact_for_the_configs():
    for cfg in {c for s in SEEDS for c in l06.param_configs(s)}:
        assert sol.block_params(*cfg) == l06.true_block_params(*cfg)
    assert sol.block_params(768, 12, 3072) == 7_087_872          # one GPT-2 small block
    assert sol.block_params(512, 8, 2048) == 3_152_384           # one encoder layer of the paper's base model


def test_block_params_accepts_solution_and_int_like_answers(capsys):
    ok, out = run(l06.check_block_params, sol.block_params, capsys)
    assert ok is True and t("l06.params.ok", EN, n=l06.N_CONFIGS) in out
    ok, _ = run(l06.check_block_params, lambda d, h, f: float(sol.block_params(d, h, f)), capsys)
    assert ok is True
    ok, _ = run(l06.check_block_params, lambda d, h, f: torch.tensor(sol.block_params(d, h, f)), capsys)
    assert ok is True


def _lin(i, o, bias=True):
    return i * o + (o if bias else 0)


PARAM_MISTAKES = {
    "forgot biases": (lambda d, h, f: 4 * d * d + 2 * d * f + 4 * d, "l06.params.no_bias"),
    "forgot biases and norms": (lambda d, h, f: 4 * d * d + 2 * d * f, "l06.params.no_bias_no_norm"),
    "forgot LayerNorm": (lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + _lin(f, d), "l06.params.no_norm"),
    "LayerNorm gamma only": (lambda d, h, f: sol.block_params(d, h, f) - 2 * d, "l06.params.norm_half"),
    "d_ff assumed 4 d_model": (lambda d, h, f: sol.block_params(d, h, 4 * d), "l06.params.dff"),
    "FFN counted once": (lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + 4 * d, "l06.params.dff"),
    "FFN second bias d_ff": (lambda d, h, f: 4 * _lin(d, d) + 2 * _lin(d, f) + 4 * d, "l06.params.dff"),
    "per-head projections": (lambda d, h, f: 4 * h * _lin(d, d) + _lin(d, f) + _lin(f, d) + 4 * d,
                             "l06.params.per_head"),
    "no output projection": (lambda d, h, f: sol.block_params(d, h, f) - _lin(d, d), "l06.params.proj"),
}


@pytest.mark.parametrize("name", PARAM_MISTAKES)
def test_block_params_recognises_typical_mistakes(name, capsys):
    fn, key = PARAM_MISTAKES[name]
    assert verdicts(l06.check_block_params, fn) == {(False, key)}
    ok, out = run(l06.check_block_params, fn, capsys)
    assert ok is False
    assert hint(key) in out


def test_block_params_generic_hint_does_not_print_the_answer(capsys):
    fb = l06.check_block_params.evaluate(lambda d, h, f: sol.block_params(d, h, f) + 1, lang=EN, seed=0)
    out = fb.text
    d, h, f = l06.param_configs(0)[0]
    assert fb.ok is False and t("l06.too_large", EN) in out and f"d_model={d}," in out
    for cfg in l06.param_configs(0):
        n = l06.true_block_params(*cfg)
        assert str(n) not in out and f"{n:,}" not in out


def test_block_params_rejects_non_numbers(capsys):
    ok, out = run(l06.check_block_params, lambda d, h, f: "many", capsys)
    assert ok is False and hint("l06.params.not_int", kind="str") in out


def test_block_params_todo_is_not_done(capsys):
    def block_params(d_model, num_heads, d_ff):
        # TODO
        return None
    ok, out = run(l06.check_block_params, block_params, capsys)
    assert ok is None and t("ex.not_done", EN, name=t("l06.ex.params", EN)) in out


# ------------------------------------------------------------------ exercise 2: masks

def test_reference_masks_agree_with_solution():
    for src, tgt, pad in (case for s in SEEDS for case in l06.mask_cases(s)):
        for a, b in zip(sol.make_masks(src, tgt, pad), l06.reference_masks(src, tgt, pad)):
            assert torch.equal(a, b)


def test_masks_accept_solution(capsys):
    ok, out = run(l06.check_masks, sol.make_masks, capsys)
    assert ok is True and t("l06.masks.ok", EN) in out


def _replace(index, make):
    """The solution with mask number ``index`` replaced by make(src, tgt, pad)."""
    def fn(src, tgt, pad_id=0):
        masks = list(sol.make_masks(src, tgt, pad_id))
        masks[index] = make(src, tgt, pad_id)
        return tuple(masks)
    return fn


def _shape(src, tgt):
    return src.shape[0], src.shape[1], tgt.shape[1]           # B, S, T


def enc_causal(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return attnlab.padding_mask(src, pad) & attnlab.causal_mask(S)


def enc_no_pad(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return torch.ones(B, 1, S, S, dtype=torch.bool)


def enc_pad_rows(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return (src != pad)[:, None, :, None].expand(B, 1, S, S)


def enc_pad_rows_too(src, tgt, pad):
    keep = src != pad
    return keep[:, None, :, None] & keep[:, None, None, :]


def dec_no_causal(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return attnlab.padding_mask(tgt, pad).expand(B, 1, T, T)


def dec_no_pad(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return attnlab.causal_mask(T).expand(B, 1, T, T)


def dec_upper(src, tgt, pad):
    T = tgt.shape[1]
    return attnlab.padding_mask(tgt, pad) & torch.ones(T, T, dtype=torch.bool).triu()


def dec_strict(src, tgt, pad):
    T = tgt.shape[1]
    return attnlab.padding_mask(tgt, pad) & torch.ones(T, T, dtype=torch.bool).tril(-1)


def cross_causal(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return attnlab.padding_mask(src, pad) & torch.ones(T, S, dtype=torch.bool).tril()


def cross_tgt_pad(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return (tgt != pad)[:, None, :, None].expand(B, 1, T, S)


def cross_transposed(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return attnlab.padding_mask(src, pad).transpose(-1, -2).expand(B, 1, S, T)


def cross_broadcast_only(src, tgt, pad):
    return attnlab.padding_mask(src, pad)                    # (B, 1, 1, S): broadcasts, not full


def cross_no_pad(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return torch.ones(B, 1, T, S, dtype=torch.bool)


def enc_float(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return attnlab.padding_mask(src, pad).expand(B, 1, S, S).float()


def dec_inverted(src, tgt, pad):
    return ~attnlab.decoder_mask(tgt, pad)


def enc_pad_zero(src, tgt, pad):
    B, S, T = _shape(src, tgt)
    return attnlab.padding_mask(src, 0).expand(B, 1, S, S)      # ignores pad_id


MASK_MISTAKES = {
    "causal mask on the encoder": (_replace(0, enc_causal), "l06.masks.enc_causal", {}),
    "encoder ignores padding": (_replace(0, enc_no_pad), "l06.masks.no_pad",
                                {"name": "l06.masks.name.enc", "side": "l06.masks.side.src"}),
    "encoder masks padding rows": (_replace(0, enc_pad_rows), "l06.masks.pad_rows",
                                   {"name": "l06.masks.name.enc"}),
    "encoder masks padding rows too": (_replace(0, enc_pad_rows_too), "l06.masks.pad_rows_too",
                                       {"name": "l06.masks.name.enc"}),
    "float mask": (_replace(0, enc_float), "l06.masks.not_bool", {"name": "l06.masks.name.enc", "dtype": "float32"}),
    "pad_id ignored": (_replace(0, enc_pad_zero), "l06.masks.pad_id", {}),
    "decoder without causal mask": (_replace(1, dec_no_causal), "l06.masks.dec_no_causal", {}),
    "decoder ignores padding": (_replace(1, dec_no_pad), "l06.masks.no_pad",
                                {"name": "l06.masks.name.dec", "side": "l06.masks.side.tgt"}),
    "upper triangle": (_replace(1, dec_upper), "l06.masks.dec_upper", {}),
    "diagonal masked": (_replace(1, dec_strict), "l06.masks.dec_diag", {}),
    "inverted convention": (_replace(1, dec_inverted), "l06.masks.inverted", {"name": "l06.masks.name.dec"}),
    "causal mask on cross-attention": (_replace(2, cross_causal), "l06.masks.cross_causal", {}),
    "target padding on cross-attention": (_replace(2, cross_tgt_pad), "l06.masks.cross_tgt_pad", {}),
    "cross-attention (S, T)": (_replace(2, cross_transposed), "l06.masks.cross_shape",
                               {"name": "l06.masks.name.cross"}),
    "cross-attention not expanded": (_replace(2, cross_broadcast_only), "l06.masks.expand",
                                     {"name": "l06.masks.name.cross", "got": "(2, 1, 1, 5)",
                                      "want": "(B, 1, T, S)"}),
    "cross-attention ignores padding": (_replace(2, cross_no_pad), "l06.masks.no_pad",
                                        {"name": "l06.masks.name.cross", "side": "l06.masks.side.src"}),
    "decoder mask for the cross-attention": (_replace(2, lambda s, tg, p: attnlab.decoder_mask(tg, p)),
                                             "l06.masks.shape",
                                             {"name": "l06.masks.name.cross", "got": "(2, 1, 4, 4)",
                                              "want": "(B, 1, T, S)"}),
}


@pytest.mark.parametrize("name", MASK_MISTAKES)
def test_masks_recognise_typical_mistakes(name, capsys):
    fn, key, fields = MASK_MISTAKES[name]
    assert verdicts(l06.check_masks, fn) == {(False, key)}
    fb = l06.check_masks.evaluate(fn, lang=EN)
    assert fb.ok is False
    if not {"got", "want"} & set(fields):                     # sizes are drawn per run
        assert hint(key, **fields) in fb.text, fb.text


def test_masks_need_three(capsys):
    ok, out = run(l06.check_masks, lambda s, tg, p=0: attnlab.padding_mask(s, p), capsys)
    assert ok is False and t("l06.masks.not_three", EN) in out


def test_masks_todo_is_not_done(capsys):
    def make_masks(src_ids, tgt_ids, pad_id=0):
        # TODO
        return None
    ok, out = run(l06.check_masks, make_masks, capsys)
    assert ok is None and t("ex.not_done", EN, name=t("l06.ex.masks", EN)) in out


# ------------------------------------------------------------------ exercise 3: greedy step

def test_greedy_accepts_solution(capsys):
    ok, out = run(l06.check_greedy_step, sol.greedy_step, capsys)
    assert ok is True and t("l06.greedy.ok", EN) in out


def test_greedy_solution_matches_reference_and_cases_are_discriminating():
    for seed in SEEDS:
        model, batches = l06.greedy_setup(seed)
        m = model.max_len
        assert m not in (6, 16)                                   # neither the old probe's nor the lesson's
        for ids in batches:
            want = l06.reference_greedy_step(model, ids, m)
            assert torch.equal(sol.greedy_step(model, ids, m), want)
            if ids.shape[1] > 1:
                logits = model(ids[:, -m:])
                assert (logits[:, 0].argmax(-1) != want[:, -1]).all()
            if ids.shape[1] > m:
                assert (model(ids[:, :m])[:, -1].argmax(-1) != want[:, -1]).all()
        assert max(ids.shape[1] for ids in batches) > 2 * m


def first_position(model, ids, max_len):
    logits = model(ids[:, -max_len:])
    return torch.cat([ids, logits[:, 0].argmax(-1, keepdim=True)], dim=1)


def no_crop(model, ids, max_len):
    logits = model(ids)
    return torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)


def crop_front(model, ids, max_len):
    logits = model(ids[:, :max_len])
    return torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)


def crop_return(model, ids, max_len):
    ids = ids[:, -max_len:]
    return torch.cat([ids, model(ids)[:, -1].argmax(-1, keepdim=True)], dim=1)


def only_new(model, ids, max_len):
    return model(ids[:, -max_len:])[:, -1].argmax(-1, keepdim=True)


def max_values(model, ids, max_len):
    return torch.cat([ids, model(ids[:, -max_len:])[:, -1].max(-1, keepdim=True).values], dim=1)


def argmax_over_batch(model, ids, max_len):
    return torch.cat([ids, model(ids[:, -max_len:])[:, -1].argmax(0, keepdim=True)], dim=1)


def argmax_over_time(model, ids, max_len):
    return torch.cat([ids, model(ids[:, -max_len:]).argmax(1)], dim=1)


def argmax_every_position(model, ids, max_len):
    return torch.cat([ids, model(ids[:, -max_len:]).argmax(-1, keepdim=True)], dim=1)


def argmin(model, ids, max_len):
    return torch.cat([ids, model(ids[:, -max_len:])[:, -1].argmin(-1, keepdim=True)], dim=1)


def prepend(model, ids, max_len):
    return torch.cat([model(ids[:, -max_len:])[:, -1].argmax(-1, keepdim=True), ids], dim=1)


GREEDY_MISTAKES = {
    "first position": (first_position, "l06.greedy.first", {}),
    "no crop": (no_crop, "l06.greedy.no_crop", {}),
    "crop the front": (crop_front, "l06.greedy.crop_front", {}),
    "return the cropped sequence": (crop_return, "l06.greedy.crop_return", {}),
    "only the new token": (only_new, "l06.greedy.no_append", {}),
    "max values": (max_values, "l06.greedy.values", {}),
    "argmax over the batch axis": (argmax_over_batch, "l06.greedy.shape", {"got": "", "want": ""}),
    "argmax over the time axis": (argmax_over_time, "l06.greedy.shape", {"got": "", "want": ""}),
    "argmax at every position": (argmax_every_position, "l06.greedy.cat", {}),
    "argmin": (argmin, "l06.greedy.wrong", {"shape": ""}),
    "prepended": (prepend, "l06.greedy.changed", {}),
}


@pytest.mark.parametrize("name", GREEDY_MISTAKES)
def test_greedy_recognises_typical_mistakes(name, capsys):
    fn, key, fields = GREEDY_MISTAKES[name]
    assert verdicts(l06.check_greedy_step, fn) == {(False, key)}
    fb = l06.check_greedy_step.evaluate(fn, lang=EN)
    assert fb.ok is False
    if not fields:                                            # sizes are drawn per run
        assert hint(key) in fb.text, fb.text


def test_greedy_todo_is_not_done(capsys):
    def greedy_step(model, ids, max_len):
        # TODO
        return None
    ok, out = run(l06.check_greedy_step, greedy_step, capsys)
    assert ok is None and t("ex.not_done", EN, name=t("l06.ex.greedy", EN)) in out


def test_checkers_speak_the_current_language(capsys):
    attnlab.set_language("zh")
    try:
        assert graded(l06.check_block_params, lambda d, h, f: None) is None
        assert "练习" in capsys.readouterr().out
    finally:
        attnlab.set_language("en")


# ------------------------------------------------------------------ sizes drawn per run (issue 27 §2)
def test_sizes_are_drawn_per_run_and_never_only_the_lessons():
    seeds = range(12)
    assert len({tuple(l06.param_configs(s)) for s in seeds}) == 12
    assert len({tuple(tuple(c[0].shape) + tuple(c[1].shape) for c in l06.mask_cases(s)) for s in seeds}) > 6
    assert {l06.greedy_setup(s)[0].max_len for s in seeds} >= {4, 5, 7, 8, 9} - {6}
    for s in seeds:
        src, tgt, _ = l06.mask_cases(s)[0]
        assert src.shape[1] != tgt.shape[1]                           # T != S
        assert l06.mask_cases(s)[2][2] != 0                           # a pad_id other than 0


def test_the_reference_passes_whatever_the_seed():
    for s in range(20):
        assert l06.evaluate_block_params(sol.block_params, seed=s).ok is True
        assert l06.evaluate_masks(sol.make_masks, seed=s).ok is True
        assert l06.evaluate_greedy_step(sol.greedy_step, seed=s).ok is True


def test_masks_keep_the_signatures_default_pad_id():
    """Mutation testing: a default pad_id other than the exercise's 0 (make_masks(src, tgt, pad_id=0))
    survived, since every case passed pad_id; the checker now also calls without it."""
    def default_one(src, tgt, pad_id=1):
        return sol.make_masks(src, tgt, pad_id)

    def no_default(src, tgt, pad_id):
        return sol.make_masks(src, tgt, pad_id)

    assert verdicts(l06.check_masks, default_one) == {(False, "l06.masks.default")}
    assert verdicts(l06.check_masks, no_default) == {(False, "l06.masks.default")}


@pytest.mark.parametrize("seed", [15, 29, 44, 59])
def test_an_argmin_is_never_read_as_the_first_position(seed):
    """On these seeds the batches once let the last position's argmin equal the first position's
    argmax, so an argmin was told 'you took the first position's logits'. The draws keep them apart."""
    def argmin_step(model, ids, max_len):
        with torch.no_grad():
            logits = model(ids[:, -max_len:])
        return torch.cat([ids, logits[:, -1, :].argmin(dim=-1, keepdim=True)], dim=1)
    outcome = l06.evaluate_greedy_step(argmin_step, seed=seed)
    assert (outcome.ok, outcome.key) == (False, "l06.greedy.wrong")
