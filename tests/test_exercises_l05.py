"""Lesson 05 checkers: each accepts the reference solution, recognises each typical mistake
with its own hint, and says "not done yet" for the untouched TODO."""

import pytest
import torch

import attnlab
from attnlab.exercises import l05

from exercise_checks import SEEDS, graded
from solutions import l05 as sol


def todo(*args):
    return None


# ----------------------------------------------------------------- exercise 1: post-LN

def post_as_pre(x, attn, ffn, norm1, norm2):            # pre-LN when post-LN was asked
    x = x + attn(norm1(x))
    return x + ffn(norm2(x))


def post_ln_before_add(x, attn, ffn, norm1, norm2):     # LayerNorm on x, then the add
    x = norm1(x) + attn(x)
    return norm2(x) + ffn(x)


def post_norm_branch(x, attn, ffn, norm1, norm2):       # LN on the sublayer output only
    x = x + norm1(attn(x))
    return x + norm2(ffn(x))


def post_no_residual(x, attn, ffn, norm1, norm2):
    x = norm1(attn(x))
    return norm2(ffn(x))


def post_no_residual_second(x, attn, ffn, norm1, norm2):
    x = norm1(x + attn(x))
    return norm2(ffn(x))


def post_ln_once_end(x, attn, ffn, norm1, norm2):       # a single LN, at the very end
    x = x + attn(x)
    return norm2(x + ffn(x))


def post_ln_once_first(x, attn, ffn, norm1, norm2):     # a single LN, after attention only
    x = norm1(x + attn(x))
    return x + ffn(x)


def post_same_norm(x, attn, ffn, norm1, norm2):
    x = norm1(x + attn(x))
    return norm1(x + ffn(x))


def post_ffn_reads_x(x, attn, ffn, norm1, norm2):
    h = norm1(x + attn(x))
    return norm2(h + ffn(x))


POST_MISTAKES = [
    (post_as_pre, "l05.hint.post_is_pre"),
    (post_ln_before_add, "l05.hint.post_is_pre"),
    (post_norm_branch, "l05.hint.norm_branch"),
    (post_no_residual, "l05.hint.no_residual"),
    (post_no_residual_second, "l05.hint.no_residual"),
    (post_ln_once_end, "l05.hint.post.ln_once"),
    (post_ln_once_first, "l05.hint.post.ln_once"),
    (post_same_norm, "l05.hint.norms_mixed"),
    (post_ffn_reads_x, "l05.hint.ffn_input"),
]


def test_post_ln_reference_passes(capsys):
    assert l05.diagnose_post_ln_block(sol.post_ln_block)[:2] == (True, "l05.ok.post_ln")
    assert graded(l05.check_post_ln_block, sol.post_ln_block, lang="en") is True
    assert "✅" in capsys.readouterr().out


def test_post_ln_todo_is_not_done(capsys):
    assert graded(l05.check_post_ln_block, todo, lang="en") is None
    assert "not done yet" in capsys.readouterr().out


@pytest.mark.parametrize("fn,key", POST_MISTAKES, ids=[f.__name__ for f, _ in POST_MISTAKES])
@pytest.mark.parametrize("seed", SEEDS)
def test_post_ln_mistakes(fn, key, capsys, seed):
    ok, got_key, fields = l05.diagnose_post_ln_block(fn, seed)
    assert (ok, got_key) == (False, key)
    assert graded(l05.check_post_ln_block, fn, lang="en", seed=seed) is False
    out = capsys.readouterr().out
    assert "❌" in out and attnlab.t(key, "en", **fields) in out


def test_post_ln_other_failures(capsys):
    assert l05.diagnose_post_ln_block(lambda x, a, f, n1, n2: (n2(n1(x + a(x)) + f(x)), None))[1] == \
        "l05.hint.not_tensor"
    assert l05.diagnose_post_ln_block(lambda x, a, f, n1, n2: sol.post_ln_block(x, a, f, n1, n2)[:, -1])[1] == \
        "l05.hint.shape"
    ok, key, fields = l05.diagnose_post_ln_block(lambda x, a, f, n1, n2: 2 * sol.post_ln_block(x, a, f, n1, n2))
    assert (ok, key) == (False, "l05.hint.generic_block") and fields["diff"] > 1e-3

    def crashes(x, attn, ffn, norm1, norm2):
        raise ValueError("boom")
    assert graded(l05.check_post_ln_block, crashes, lang="en") is False
    assert "ValueError: boom" in capsys.readouterr().out


# ----------------------------------------------------------------- exercise 2: pre-LN

def pre_as_post(x, attn, ffn, norm1, norm2):
    x = norm1(x + attn(x))
    return norm2(x + ffn(x))


def pre_norm_stream(x, attn, ffn, norm1, norm2):        # normalises the residual stream itself
    x = norm1(x)
    x = x + attn(x)
    x = norm2(x)
    return x + ffn(x)


def pre_norm_stream_first(x, attn, ffn, norm1, norm2):
    x = norm1(x)
    x = x + attn(x)
    return x + ffn(norm2(x))


def pre_no_residual(x, attn, ffn, norm1, norm2):
    x = attn(norm1(x))
    return ffn(norm2(x))


def pre_no_residual_second(x, attn, ffn, norm1, norm2):
    x = x + attn(norm1(x))
    return ffn(norm2(x))


def pre_ln_once(x, attn, ffn, norm1, norm2):
    x = x + attn(norm1(x))
    return x + ffn(x)


def pre_same_norm(x, attn, ffn, norm1, norm2):
    x = x + attn(norm1(x))
    return x + ffn(norm1(x))


def pre_ffn_reads_x(x, attn, ffn, norm1, norm2):
    h = x + attn(norm1(x))
    return h + ffn(norm2(x))


def pre_residual_from_x(x, attn, ffn, norm1, norm2):
    h = x + attn(norm1(x))
    return x + ffn(norm2(h))


PRE_MISTAKES = [
    (pre_as_post, "l05.hint.pre_is_post"),
    (pre_norm_stream, "l05.hint.pre.norm_stream"),
    (pre_norm_stream_first, "l05.hint.pre.norm_stream"),
    (pre_no_residual, "l05.hint.no_residual"),
    (pre_no_residual_second, "l05.hint.no_residual"),
    (pre_ln_once, "l05.hint.pre.ln_once"),
    (pre_same_norm, "l05.hint.norms_mixed"),
    (pre_ffn_reads_x, "l05.hint.ffn_input"),
    (pre_residual_from_x, "l05.hint.ffn_input"),
]


def test_pre_ln_reference_passes(capsys):
    assert l05.diagnose_pre_ln_block(sol.pre_ln_block)[:2] == (True, "l05.ok.pre_ln")
    assert graded(l05.check_pre_ln_block, sol.pre_ln_block, lang="en") is True
    assert "✅" in capsys.readouterr().out


def test_pre_ln_todo_is_not_done(capsys):
    assert graded(l05.check_pre_ln_block, todo, lang="en") is None
    assert "not done yet" in capsys.readouterr().out


@pytest.mark.parametrize("fn,key", PRE_MISTAKES, ids=[f.__name__ for f, _ in PRE_MISTAKES])
@pytest.mark.parametrize("seed", SEEDS)
def test_pre_ln_mistakes(fn, key, capsys, seed):
    ok, got_key, fields = l05.diagnose_pre_ln_block(fn, seed)
    assert (ok, got_key) == (False, key)
    assert graded(l05.check_pre_ln_block, fn, lang="en", seed=seed) is False
    out = capsys.readouterr().out
    assert "❌" in out and attnlab.t(key, "en", **fields) in out


def test_the_two_blocks_are_not_interchangeable():
    assert l05.diagnose_post_ln_block(sol.pre_ln_block)[1] == "l05.hint.post_is_pre"
    assert l05.diagnose_pre_ln_block(sol.post_ln_block)[1] == "l05.hint.pre_is_post"


@pytest.mark.parametrize("norm_first,table", [(False, l05._POST_MISTAKES), (True, l05._PRE_MISTAKES)])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_listed_mistake_differs_from_the_right_answer(norm_first, table, seed):
    for case_seed, B, T, d_model, heads, d_ff in l05._cases(seed):
        block = l05._make_block(norm_first, case_seed, d_model, heads, d_ff)
        x = l05._block_input(case_seed, B, T, d_model)
        with torch.no_grad():
            right, _ = block(x, mask=attnlab.causal_mask(T))
            for variants in table.values():
                for variant in variants:
                    assert (variant(x, *l05._sublayers(block)) - right).abs().max() > 1e-3


# ----------------------------------------------------------------- exercise 3: the masks

def float_tril(T):
    return torch.tril(torch.ones(T, T))


def fixed_size(T):                                       # the lesson's T = 10, written as a number
    return torch.tril(torch.ones(10, 10, dtype=torch.bool))


def upper(T):
    return torch.triu(torch.ones(T, T, dtype=torch.bool))


def inverted(T):
    return ~torch.tril(torch.ones(T, T, dtype=torch.bool))


def no_mask_at_all(T):
    return torch.ones(T, T, dtype=torch.bool)


def no_diagonal(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def only_itself(T):
    return torch.eye(T, dtype=torch.bool)


MASK_MISTAKES = [
    (sol.safe_mask, sol.safe_mask, "l05.hint.leaky_is_safe"),
    (sol.leaky_mask, float_tril, "l05.hint.mask_type"),
    (lambda T: [[True] * T] * T, sol.safe_mask, "l05.hint.mask_type"),
    (sol.leaky_mask, fixed_size, "l05.hint.mask_shape"),
    (sol.leaky_mask, upper, "l05.hint.safe_upper"),
    (sol.leaky_mask, inverted, "l05.hint.safe_inverted"),
    (sol.leaky_mask, no_mask_at_all, "l05.hint.safe_leaks"),
    (sol.leaky_mask, no_diagonal, "l05.hint.safe_no_diagonal"),
    (sol.leaky_mask, only_itself, "l05.hint.safe_too_strict"),
]


def test_masks_reference_passes(capsys):
    ok, key, fields = l05.diagnose_masks(sol.leaky_mask, sol.safe_mask)
    assert (ok, key) == (True, "l05.ok.masks")
    assert fields["safe"] == 0.0 and fields["leak"] > 1e-3
    assert graded(l05.check_masks, sol.leaky_mask, sol.safe_mask, lang="en") is True
    assert "✅" in capsys.readouterr().out


def test_masks_other_leaks_are_accepted():
    upper_leak = lambda T: torch.triu(torch.ones(T, T, dtype=torch.bool))  # noqa: E731
    one_peek = lambda T: torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # noqa: E731
    for leaky in (upper_leak, one_peek, inverted):
        assert l05.diagnose_masks(leaky, sol.safe_mask)[:2] == (True, "l05.ok.masks")


def test_masks_todo_is_not_done(capsys):
    assert graded(l05.check_masks, todo, todo, lang="en") is None
    assert graded(l05.check_masks, sol.leaky_mask, todo, lang="en") is None
    assert graded(l05.check_masks, todo, sol.safe_mask, lang="en") is None
    assert capsys.readouterr().out.count("not done yet") == 3


@pytest.mark.parametrize("leaky,safe,key", MASK_MISTAKES, ids=[k.split(".")[-1] + str(i) for i, (_, _, k)
                                                                in enumerate(MASK_MISTAKES)])
@pytest.mark.parametrize("seed", SEEDS)
def test_masks_mistakes(leaky, safe, key, capsys, seed):
    ok, got_key, fields = l05.diagnose_masks(leaky, safe, seed)
    assert (ok, got_key) == (False, key)
    assert graded(l05.check_masks, leaky, safe, lang="en", seed=seed) is False
    out = capsys.readouterr().out
    assert "❌" in out and attnlab.t(key, "en", **fields) in out


# ----------------------------------------------------------------- the checkers' manners

def test_checkers_leave_the_random_state_alone(capsys):
    torch.manual_seed(123)
    state = torch.get_rng_state()
    graded(l05.check_post_ln_block, sol.post_ln_block)
    graded(l05.check_pre_ln_block, post_as_pre)
    graded(l05.check_masks, sol.leaky_mask, sol.safe_mask)
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_checkers_speak_the_lesson_language(lang, capsys):
    graded(l05.check_pre_ln_block, pre_norm_stream, lang=lang)
    out = capsys.readouterr().out
    assert attnlab.t("l05.hint.pre.norm_stream", lang) in out


@pytest.mark.parametrize("seed", SEEDS)
def test_blocks_accept_the_reference_on_every_seed(seed):
    assert l05.diagnose_post_ln_block(sol.post_ln_block, seed)[:2] == (True, "l05.ok.post_ln")
    assert l05.diagnose_pre_ln_block(sol.pre_ln_block, seed)[:2] == (True, "l05.ok.pre_ln")
    assert l05.diagnose_masks(sol.leaky_mask, sol.safe_mask, seed)[:2] == (True, "l05.ok.masks")


def test_sizes_are_drawn_per_seed():
    cases = [l05._cases(seed) for seed in range(20)]
    assert len({tuple(c[1:] for c in cs) for cs in cases}) == 20
    assert all(B != T for cs in cases for _, B, T, *_ in cs)
    lengths = [l05._mask_lengths(seed) for seed in range(20)]
    assert all(a % 2 == 0 and b % 2 == 1 for a, b in lengths) and len(set(lengths)) > 10


def test_a_block_that_changes_its_input_in_place(capsys):
    def in_place(x, attn, ffn, norm1, norm2):
        x += attn(norm1(x))
        x += ffn(norm2(x))
        return x
    assert l05.diagnose_pre_ln_block(in_place, 0)[:2] == (False, "ex.changed_input")


def test_a_block_with_a_forgotten_return(capsys):
    def no_return(x, attn, ffn, norm1, norm2):
        x = norm1(x + attn(x))
        x = norm2(x + ffn(x))
    assert l05.diagnose_post_ln_block(no_return, 0)[:2] == (False, "ex.returned_none")
