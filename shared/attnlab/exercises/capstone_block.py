"""Capstone exercise 2: a Transformer block from scratch (``capstone.check_block(cls)``).

``cls(d_model, num_heads, d_ff, dropout=0.1, norm_first=False)`` with submodules ``attention, norm1,
norm2, linear1, linear2`` (and ``dropout``); ``forward(x, mask=None)`` returns x, (B, T, D).

The probe builds the student's block post-LN and pre-LN at sizes drawn from the seed (heads, d_k,
d_ff, the dropout probability), copies attnlab.TransformerBlock's weights into it (LayerNorms with
random gains and biases) and records: its attention sublayer on self-attention (the student's class
of exercise 1: a wrong one is named as such, never mistaken for a mistake of the block), two runs in
eval mode, one in training mode with seeded random draws, and the dropout probabilities it holds.
The judge rebuilds attnlab's block from the seed and matches a wrong answer against the typical
mistakes, each with its own hint.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..block import TransformerBlock
from ..masks import causal_mask
from ._common import (Draw, Exercise, Feedback, Verdict, attempt, call_student, evaluate_exercise, is_tensor, judging,
                      raises, seeded, value_of)
from ._common import max_diff
from .capstone_weights import _close, build, built, load, mismatched, state_shapes

BLOCK_NAMES = ("attention", "norm1", "norm2", "linear1", "linear2")


def block_rename(key: str) -> str:
    return key.replace("feed_forward.", "")                     # attnlab nests linear1/linear2 in feed_forward


def block_config(seed: int) -> tuple[int, int, int, int, int, float]:
    """(B, T, heads, d_k, d_ff, dropout p), drawn from ``seed``: never the lesson's 3 heads and d_k 4,
    p never the lesson's default 0.1."""
    d = Draw(seed, "capstone.block")
    H, d_k = d.choice((2, 4, 5)), d.choice((2, 3, 5, 6))
    return d.int(2, 3), d.int(4, 7), H, d_k, d.int(H * d_k + 1, 4 * H * d_k + 3), d.choice((0.3, 0.4, 0.5, 0.6))


def block_inputs(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    B, T, H, d_k, _, _ = block_config(seed)
    return Draw(seed, "capstone.block/x").randn(B, T, H * d_k), causal_mask(T)       # (B, T, D), (1, 1, T, T)


def reference_block(seed: int, norm_first: bool) -> TransformerBlock:
    _, _, H, d_k, d_ff, _ = block_config(seed)
    with seeded(seed * 11 + norm_first), torch.no_grad():
        block = TransformerBlock(H * d_k, H, d_ff, dropout=0.0, norm_first=norm_first)
        for norm in (block.norm1, block.norm2):                 # gains and biases that make the order of LN matter
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    return block.eval()


def train_seed(seed: int, norm_first: bool) -> int:
    return seed * 13 + 5 + norm_first


# ------------------------------------------------------------------------ the typical mistakes
def block_variant(ref: TransformerBlock, x, mask, *, norm_first, residual=(True, True), use_mask=True,
                  activation=torch.relu, norms=(1, 2), residual_from_norm=False):
    """attnlab's block with one typical mistake."""
    m = mask if use_mask else None
    ff = ref.feed_forward

    def attn(h):
        return ref.attention(h, mask=m)[0]

    def ffn(h):
        return ff.linear2(activation(ff.linear1(h)))

    layer_norms = {1: ref.norm1, 2: ref.norm2}
    for sub, norm, res in zip((attn, ffn), (layer_norms[n] for n in norms), residual):
        if norm_first and residual_from_norm:
            x = norm(x)
            x = (x if res else 0) + sub(x)
        elif norm_first:
            x = (x if res else 0) + sub(norm(x))
        else:
            x = norm((x if res else 0) + sub(x))
    return x


def train_variant(ref: TransformerBlock, x, mask, seed: int, p: float, *, inner=True, outer=True):
    """attnlab's block in training mode, dropout p drawn from ``seed`` in the order any right block
    draws it (attention output, the FFN's hidden layer, the FFN output); ``inner`` / ``outer`` switch
    the FFN's inner dropout / the dropouts on the sublayer outputs off."""
    ff = ref.feed_forward

    def drop(h, on):
        return F.dropout(h, p, training=True) if on else h

    def ffn(h):
        return ff.linear2(drop(torch.relu(ff.linear1(h)), inner))

    with seeded(seed):
        if ref.norm_first:
            x = x + drop(ref.attention(ref.norm1(x), mask=mask)[0], outer)
            return x + drop(ffn(ref.norm2(x)), outer)
        x = ref.norm1(x + drop(ref.attention(x, mask=mask)[0], outer))
        return ref.norm2(x + drop(ffn(x), outer))


def block_mistake(ref, x, mask, out, expected, norm_first):
    style = "pre-LN" if norm_first else "post-LN"
    mistakes = [("capstone.hint.pre_post_swapped", {"norm_first": not norm_first})]
    mistakes += [("capstone.hint.no_residual", {"norm_first": norm_first, "residual": r})
                 for r in ((False, True), (True, False), (False, False))]
    mistakes += [("capstone.hint.block_mask", {"norm_first": norm_first, "use_mask": False}),
                 ("capstone.hint.ffn_activation", {"norm_first": norm_first, "activation": F.gelu}),
                 ("capstone.hint.norm_twice", {"norm_first": norm_first, "norms": (1, 1)}),
                 ("capstone.hint.norm_twice", {"norm_first": norm_first, "norms": (2, 2)}),
                 ("capstone.hint.residual_normed", {"norm_first": norm_first, "residual_from_norm": True})]
    for key, flags in mistakes:
        if _close(out, block_variant(ref, x, mask, **flags)):
            return False, key, {"style": style}
    return False, "capstone.hint.block_mismatch", {"style": style, "diff": max_diff(out, expected)}


def dropout_mistake(ref, x, mask, got, out_eval, seed, p, dropout_ps):
    """In training mode, with the random draws of a right block, the student's block gives its output."""
    if _close(got, train_variant(ref, x, mask, seed, p)):
        return None
    if _close(got, out_eval):
        return False, "capstone.hint.dropout_never", {}
    wrong_p = sorted({q for q in dropout_ps if isinstance(q, float) and abs(q - p) > 1e-9})
    if wrong_p or _close(got, train_variant(ref, x, mask, seed, 0.1)):
        return False, "capstone.hint.dropout_p", {"got": wrong_p[0] if wrong_p else 0.1, "want": p}
    if _close(got, train_variant(ref, x, mask, seed, p, inner=False)):
        return False, "capstone.hint.ffn_dropout", {}
    if _close(got, train_variant(ref, x, mask, seed, p, outer=False)):
        return False, "capstone.hint.dropout_outputs", {}
    return False, "capstone.hint.dropout_where", {}


# ------------------------------------------------------------------------ probe and judge
def _module_facts(module: nn.Module) -> dict:
    """{"state": {name: shape}, "dropout": the p of every nn.Dropout in it}."""
    return {"state": state_shapes(module),
            "dropout": [float(m.p) for m in call_student(module.modules) if isinstance(m, nn.Dropout)]}


def _attention_kind(module: nn.Module) -> str:
    """'own' when ``self.attention`` is the student's own class, 'torch' for one of torch's, '' if none."""
    attention = getattr(module, "attention", None)
    if not isinstance(attention, nn.Module):
        return ""
    return "torch" if type(attention).__module__.startswith("torch.") else "own"


def probe_block(cls, *, seed: int) -> dict:
    """The student's block, post-LN then pre-LN, with attnlab's weights: its attention sublayer, two
    runs in eval mode, one in training mode (seeded draws), its dropout probabilities."""
    B, T, H, d_k, d_ff, p = block_config(seed)
    x, mask = block_inputs(seed)
    results: dict = {}
    for nf in (False, True):
        student, failure = build(cls, H * d_k, H, d_ff, dropout=p, norm_first=nf)
        if failure is not None:
            results["build"] = failure
            return results
        results[f"names{nf:d}"] = names = attempt(_module_facts, student)
        results[f"attention{nf:d}"] = _attention_kind(student)
        if "value" not in names:
            return results
        load(student, {block_rename(k): v for k, v in reference_block(seed, nf).state_dict().items()})
        call_student(student.eval)
        with torch.no_grad():
            results[f"sublayer{nf:d}"] = attempt(lambda h: student.attention(h, mask=mask), x.clone())
            for run in ("eval0", "eval1"):
                results[f"{run}.{nf:d}"] = attempt(student, x.clone(), mask=mask)
            call_student(student.train)
            with seeded(train_seed(seed, nf)):
                results[f"train.{nf:d}"] = attempt(student, x.clone(), mask=mask)
    default, failure = build(cls, H * d_k, H, d_ff)              # the interface's defaults: dropout=0.1, post-LN
    if failure is None:
        load(default, {block_rename(k): v for k, v in reference_block(seed, False).state_dict().items()})
        call_student(default.eval)
        with torch.no_grad():
            results["defaults"] = attempt(lambda: {"dropout": _module_facts(default)["dropout"],
                                                   "out": call_student(default, x.clone(), mask=mask)})
    return results


def _output(results: dict, key: str, want_shape):
    """The block's output tensor in ``results[key]``; a Verdict for a tuple or a wrong shape."""
    out = value_of(results, key)
    if isinstance(out, (tuple, list)):
        raise Verdict(False, "capstone.hint.block_tuple", n=len(out))
    if not is_tensor(out) or tuple(out.shape) != tuple(want_shape):
        raise Verdict(False, "capstone.hint.block_shape", want=tuple(want_shape))
    return out


def _sublayer_error(error: dict):
    """Exercise 1's class fails in view/reshape at the block's sizes: a size written as a number."""
    if raises(error, "RuntimeError") and "invalid for input of size" in error["message"]:
        return False, "capstone.hint.attention_first", {}
    return None


def sublayer_wrong(results: dict, key: str, ref, x, mask) -> bool:
    """The block's attention sublayer (the student's class of exercise 1, with attnlab's weights)
    differs from attnlab's on self-attention: every block mistake would then be a guess."""
    got = value_of(results, key, errors=_sublayer_error)      # exercise 1's error, as it is, when it raises
    got = got[0] if isinstance(got, (tuple, list)) and got else got
    return not _close(got, ref.attention(x, mask=mask)[0])


@judging
def judge_block(results: dict, *, seed: int):
    built(results)
    B, T, H, d_k, d_ff, p = block_config(seed)
    x, mask = block_inputs(seed)
    for nf in (False, True):
        ref = reference_block(seed, nf)
        wanted = {block_rename(k): v for k, v in ref.state_dict().items()}
        facts = value_of(results, f"names{nf:d}")
        if not isinstance(facts, dict) or not isinstance(facts.get("dropout"), list) \
                or not all(isinstance(q, float) for q in facts["dropout"]):
            raise Verdict(False, "ex.no_result")
        bad = mismatched(facts.get("state"), wanted)
        if bad and results.get(f"attention{nf:d}") == "own" and all(k.startswith("attention.") for k in bad):
            return False, "capstone.hint.attention_first", {}     # exercise 1 not done, or other names
        if bad:
            return False, "capstone.hint.names", {"names": ", ".join(BLOCK_NAMES)}
        with torch.no_grad():
            if sublayer_wrong(results, f"sublayer{nf:d}", ref, x, mask):
                return False, "capstone.hint.attention_first", {}   # exercise 1's mistake, not the block's
            out = _output(results, f"eval0.{nf:d}", x.shape)
            if not _close(_output(results, f"eval1.{nf:d}", x.shape), out, 0.0):
                return False, "capstone.hint.dropout_eval", {}
            expected = ref(x, mask)[0]
            if not _close(out, expected):
                return block_mistake(ref, x, mask, out, expected, nf)
            got = _output(results, f"train.{nf:d}", x.shape)
            mistake = dropout_mistake(ref, x, mask, got, out, train_seed(seed, nf), p, facts["dropout"])
        if mistake:
            return mistake
    facts = value_of(results, "defaults")
    if not isinstance(facts, dict) or not isinstance(facts.get("dropout"), list):
        raise Verdict(False, "ex.no_result")
    with torch.no_grad():
        post_ln = reference_block(seed, False)(x, mask)[0]
    if any(not isinstance(q, float) or abs(q - 0.1) > 1e-9 for q in facts["dropout"]) \
            or not _close(facts.get("out"), post_ln):
        return False, "capstone.hint.block_defaults", {}
    return True, "capstone.ok.block", {}


BLOCK = Exercise("capstone.block", "capstone.ex.block", ("TransformerBlock",), probe_block, judge_block)


def evaluate_block(cls, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Capstone 2: ``cls(d_model, num_heads, d_ff, dropout, norm_first)``, a Transformer block from scratch."""
    return evaluate_exercise(BLOCK, (cls,), lang, seed)
