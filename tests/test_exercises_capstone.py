"""Capstone checkers: they accept the reference solution, reject each typical mistake with its own
hint, and say "not done yet" for the untouched skeleton."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import attnlab
from attnlab.exercises import capstone, capstone_block, capstone_mha
from attnlab.course.i18n import t
from exercise_checks import SEEDS, graded
from solutions import capstone as sol


def diagnose_multihead(cls, seed=0):
    return capstone.judge_multihead(capstone.probe_multihead(cls, seed=seed), seed=seed)


def diagnose_block(cls, seed=0):
    return capstone.judge_block(capstone.probe_block(cls, seed=seed), seed=seed)


# --------------------------------------------------------------------------- multi-head attention
class Skeleton(nn.Module):
    """The exercise cell as handed out: nothing written yet."""

    def __init__(self, d_model, num_heads, d_ff=None, dropout=0.1, norm_first=False):
        super().__init__()
        # TODO

    def forward(self, *args, **kwargs):
        # TODO
        return None


class NoScale(sol.MultiHeadAttention):
    def forward(self, query, key=None, value=None, mask=None):
        key = query if key is None else key
        value = key if value is None else value
        q, k, v = (self.split_heads(p(x)) for p, x in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
        scores = q @ k.transpose(-2, -1)                                     # no / sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        B, H, T, d_k = (w @ v).shape
        return self.out_proj((w @ v).transpose(1, 2).reshape(B, T, H * d_k)), w


class SplitNoTranspose(sol.MultiHeadAttention):
    def split_heads(self, x):
        B, L, D = x.shape
        return x.view(B, self.num_heads, L, self.d_k)                       # heads and positions mixed


class MergeNoTranspose(sol.MultiHeadAttention):
    def forward(self, query, key=None, value=None, mask=None):
        key = query if key is None else key
        value = key if value is None else value
        q, k, v = (self.split_heads(p(x)) for p, x in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        B, H, T, d_k = (w @ v).shape
        return self.out_proj((w @ v).reshape(B, T, H * d_k)), w             # no transpose(1, 2)


def _with_mask_fill(fill):
    class Masked(sol.MultiHeadAttention):
        def forward(self, query, key=None, value=None, mask=None):
            key = query if key is None else key
            value = key if value is None else value
            q, k, v = (self.split_heads(p(x)) for p, x in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
            if mask is not None:
                scores = fill(scores, mask)
            w = torch.softmax(scores, dim=-1)
            B, H, T, d_k = (w @ v).shape
            return self.out_proj((w @ v).transpose(1, 2).reshape(B, T, H * d_k)), w
    return Masked


MaskInverted = _with_mask_fill(lambda s, m: s.masked_fill(m, float("-inf")))        # PyTorch's convention
MaskZero = _with_mask_fill(lambda s, m: s.masked_fill(~m, 0.0))
MaskIgnored = _with_mask_fill(lambda s, m: s)


class KVFromQuery(sol.MultiHeadAttention):
    def forward(self, query, key=None, value=None, mask=None):
        return super().forward(query, None, None, mask)


class OnlyOut(sol.MultiHeadAttention):
    def forward(self, query, key=None, value=None, mask=None):
        return super().forward(query, key, value, mask)[0]


class OtherNames(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, query, key=None, value=None, mask=None):
        return self.W_o(query), None


def test_multihead_solution_accepted(capsys):
    assert graded(capstone.check_multihead, sol.MultiHeadAttention) is True
    assert capsys.readouterr().out.startswith("✅")


def test_multihead_skeleton_not_done(capsys):
    assert graded(capstone.check_multihead, Skeleton) is None
    assert capsys.readouterr().out.startswith("⏳")


@pytest.mark.parametrize("cls, key", [
    (NoScale, "capstone.hint.no_scale"),
    (SplitNoTranspose, "capstone.hint.split_heads"),
    (MergeNoTranspose, "capstone.hint.merge_heads"),
    (MaskInverted, "capstone.hint.mask_inverted"),
    (MaskZero, "capstone.hint.mask_zero"),
    (MaskIgnored, "capstone.hint.mask_ignored"),
    (KVFromQuery, "capstone.hint.kv_from_query"),
    (OnlyOut, "capstone.hint.return_pair"),
    (OtherNames, "capstone.hint.names"),
], ids=lambda v: v.rsplit(".", 1)[-1] if isinstance(v, str) else v.__name__)
def test_multihead_mistakes(cls, key, capsys):
    for seed in SEEDS:
        ok, got, fields = diagnose_multihead(cls, seed)
        assert (ok, got) == (False, key), seed
    assert graded(capstone.check_multihead, cls, seed=0) is False
    assert capsys.readouterr().out == t("ex.wrong", "en", detail=t(key, "en", **fields)) + "\n"


# --------------------------------------------------------------------------- the block
class Block(sol.TransformerBlock):
    """The reference block; mistakes override forward."""


class Swapped(Block):
    def forward(self, x, mask=None):
        self.norm_first = not self.norm_first
        try:
            return super().forward(x, mask)
        finally:
            self.norm_first = not self.norm_first


class NoResidualAttention(Block):
    def forward(self, x, mask=None):
        if self.norm_first:
            x = self.dropout(self.attention(self.norm1(x), mask=mask)[0])
            return x + self.dropout(self.ffn(self.norm2(x)))
        x = self.norm1(self.dropout(self.attention(x, mask=mask)[0]))
        return self.norm2(x + self.dropout(self.ffn(x)))


class DropoutAlwaysOn(Block):
    def forward(self, x, mask=None):
        p = self.dropout.p
        a = F.dropout(self.attention(x, mask=mask)[0], p)                   # training=True by default
        x = self.norm1(x + a) if not self.norm_first else x
        if self.norm_first:
            x = x + F.dropout(self.attention(self.norm1(x), mask=mask)[0], p)
            return x + F.dropout(self.ffn(self.norm2(x)), p)
        return self.norm2(x + F.dropout(self.ffn(x), p))


class NoDropout(Block):
    def forward(self, x, mask=None):
        self.dropout.p = 0.0
        return super().forward(x, mask)


class MaskNotPassed(Block):
    def forward(self, x, mask=None):
        return super().forward(x, None)


class WrongAttention(Block):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first, attention_class=NoScale)


class FFNInside(nn.Module):
    """linear1/linear2 nested in a Sequential: other names than the exercise asks for."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False):
        super().__init__()
        self.attention = sol.MultiHeadAttention(d_model, num_heads)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask=None):
        return x


def test_block_solution_accepted(capsys):
    assert graded(capstone.check_block, sol.TransformerBlock) is True
    assert capsys.readouterr().out.startswith("✅")


def test_block_skeleton_not_done(capsys):
    assert graded(capstone.check_block, Skeleton) is None
    assert capsys.readouterr().out.startswith("⏳")


@pytest.mark.parametrize("cls, key", [
    (Swapped, "capstone.hint.pre_post_swapped"),
    (NoResidualAttention, "capstone.hint.no_residual"),
    (DropoutAlwaysOn, "capstone.hint.dropout_eval"),
    (NoDropout, "capstone.hint.dropout_never"),
    (MaskNotPassed, "capstone.hint.block_mask"),
    (WrongAttention, "capstone.hint.attention_first"),
    (FFNInside, "capstone.hint.names"),
], ids=lambda v: v.rsplit(".", 1)[-1] if isinstance(v, str) else v.__name__)
def test_block_mistakes(cls, key, capsys):
    for seed in SEEDS:
        ok, got, fields = diagnose_block(cls, seed)
        assert (ok, got) == (False, key), seed
    assert graded(capstone.check_block, cls, seed=0) is False
    assert capsys.readouterr().out == t("ex.wrong", "en", detail=t(key, "en", **fields)) + "\n"


def test_the_reference_agrees_with_pytorch():
    """What 'ok' claims: attnlab's layer (the checker's oracle) = torch.nn.MultiheadAttention on every
    case of the checker, distinct key and value and padding included (same weights)."""
    for seed in SEEDS:
        for i, (B, T, S, H, d_k) in enumerate(capstone_mha.mha_configs(seed)):
            ref = capstone_mha.reference_mha(seed, i, H * d_k, H)
            D = ref.d_model
            tm = torch.nn.MultiheadAttention(D, H, batch_first=True).eval()
            ref.copy_to(tm)
            for query, key, value, mask in capstone_mha.mha_cases(seed, i):
                out, w = ref(query, key, value, mask)
                key = query if key is None else key
                value = key if value is None else value
                B, T, S = query.shape[0], query.shape[1], key.shape[1]
                attn_mask = None if mask is None else (~mask.expand(B, H, T, S)).reshape(B * H, T, S)
                t_out, t_w = tm(query, key, value, attn_mask=attn_mask, average_attn_weights=False)
                assert capstone_mha._close(out, t_out) and capstone_mha._close(w, t_w)


def test_sizes_are_drawn_per_run_never_the_lessons():
    """Issue 27 §2: no constant of the lesson (12 = 3 heads x d_k 4) can pass: two sizes per run, both
    with other heads and d_k, B != T != S; the block's sizes and dropout change with the seed too."""
    configs = [capstone_mha.mha_configs(s) for s in range(20)]
    assert len({tuple(c) for c in configs}) == 20
    for (B1, T1, S1, H1, k1), (B2, T2, S2, H2, k2) in configs:
        assert H1 != H2 and k1 != k2 and 3 not in (H1, H2) and 4 not in (k1, k2)
        assert B1 != T1 != S1 and B2 != T2 != S2
    blocks = [capstone_block.block_config(s) for s in range(20)]
    assert len(set(blocks)) > 15 and all(H != 3 and d_k != 4 and p != 0.1 for _, _, H, d_k, _, p in blocks)


def test_the_dropout_draws_are_the_reference_blocks():
    """The checker's training-mode oracle draws dropout exactly as attnlab.TransformerBlock does with the
    exercise's layout: dropout on each sublayer's output and inside the FFN, none on the attention
    weights (the student's MultiHeadAttention has no dropout of its own: attn_dropout=0)."""
    for seed in SEEDS:
        B, T, H, d_k, d_ff, p = capstone_block.block_config(seed)
        x, mask = capstone_block.block_inputs(seed)
        for norm_first in (False, True):
            ref = capstone_block.reference_block(seed, norm_first)
            train = attnlab.TransformerBlock(H * d_k, H, d_ff, dropout=p, norm_first=norm_first, attn_dropout=0.0)
            train.load_state_dict(ref.state_dict())
            train.train()
            torch.manual_seed(7)
            with torch.no_grad():
                expected = train(x, mask)[0]
                got = capstone_block.train_variant(ref, x, mask, 7, p)
            assert capstone_mha._close(got, expected) and not capstone_mha._close(got, ref(x, mask)[0])


def test_checkers_leave_the_global_random_state_alone():
    """The checkers seed their own weights and dropout on a forked random state: a notebook's later
    cells do not depend on whether a checker ran."""
    torch.manual_seed(7)
    state = torch.get_rng_state()
    capstone.evaluate_multihead(sol.MultiHeadAttention)
    capstone.evaluate_block(sol.TransformerBlock)
    assert torch.equal(torch.get_rng_state(), state)


# --------------------------------------------------------------------------- review 2026-12-01b
class NoReturnMHA(sol.MultiHeadAttention):
    def forward(self, query, key=None, value=None, mask=None):
        super().forward(query, key, value, mask)                           # the return forgotten


class NoReturnBlock(sol.TransformerBlock):
    def forward(self, x, mask=None):
        super().forward(x, mask)


@pytest.mark.parametrize("check, cls", [(capstone.check_multihead, NoReturnMHA), (capstone.check_block, NoReturnBlock)])
def test_a_forgotten_return_is_wrong_not_undone(check, cls):
    """Student report, hint 6: forward without a return is the student's mistake, not an untouched TODO."""
    feedback = check.evaluate(cls, lang="en")
    assert feedback.ok is False, feedback.text


class ScoresAsWeights(sol.MultiHeadAttention):
    def forward(self, query, key=None, value=None, mask=None):
        out, w = super().forward(query, key, value, mask)
        return out, torch.log(w)                                          # pre-softmax-like, out still right


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_a_wrong_answer_never_reads_largest_difference_zero(lang):
    """Student report, hint 7: 'differs (largest difference 0.0e+00)' contradicts itself."""
    feedback = capstone.check_multihead.evaluate(ScoresAsWeights, lang=lang)
    assert feedback.ok is False
    assert "0.0e+00" not in feedback.text and "0,0e+00" not in feedback.text, feedback.text


class DefaultPreLN(sol.TransformerBlock):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)


class DefaultDropout(sol.TransformerBlock):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.3, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)


@pytest.mark.parametrize("cls", [DefaultPreLN, DefaultDropout])
def test_block_keeps_the_interfaces_defaults(cls):
    """Mutation testing: defaults other than the interface's (dropout=0.1, norm_first=False) survived,
    since the checker always passed both; it now also builds the block with the defaults."""
    for seed in SEEDS:
        assert diagnose_block(cls, seed)[:2] == (False, "capstone.hint.block_defaults")
