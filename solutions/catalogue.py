"""The catalogue of the course's exercises: for each one the reference solution and plausible wrong
solutions, each with the hint its checker must give (tests/test_catalogue.py asserts both; a grader
can run the same entries).

``EXERCISES`` is a list of dicts, one per exercise of lessons 01-09 (09 is the capstone), in lesson order:

* ``key``: ``"l01.softmax"``; ``lesson``: the notebook's name, ``"01_self_attention"``;
* ``evaluate``: ``"module:function"``, the checker's unprinted twin, which returns a ``Feedback``;
* ``names``: the names the notebook's TODO cell defines (functions, classes or values);
* ``args``: the source expressions, evaluated in the lesson context after the solution ran, passed
  to ``evaluate`` in this order (``lang=`` is passed by keyword). Absent: ``args == names``. Lessons
  07 and 08 pass the lesson's model: ``args=("my_forward", "model")``, ``("model", "my_head")``;
* ``context``: source run before the solution, on top of ``BASE`` (``math``, ``torch``, ``nn``,
  ``F``, ``attnlab``): what the exercise cell needs from the cells above it (``reversal``, ``tr``,
  ``model``, ``token_ids``, the capstone's ``MultiHeadAttention``). Absent: ``""``;
* ``reference``: source defining ``names``, derived from ``solutions/lNN.py`` (the capstone's from
  ``solutions/capstone_steps.py`` and ``solutions/capstone.py``) with inspect (one source of truth):
  the checker says ok True;
* ``wrong``: at least four ``dict(label, source, hint)``: source defining the same names, wrong in one
  plausible way (from the review of 2026-12-01, the exercise run and the lessons' own warnings);
  ``hint`` is the message key of the hint the checker must give (``Feedback.key``, ok False);
  ``hint_by_lang`` (optional): the hint in another language's lesson, where it depends on that
  lesson's model (lesson 08's vocabulary: "triệu" is missing in vi, zh has every word);
* ``todo``: the notebook's TODO cell without its check line (read from ``lessons_vi``; the code is
  the same in ``lessons_zh``): the checker says ok None ("not done").

``run(entry, source, lang="en")`` executes ``BASE + context + source`` in a fresh namespace and
returns the checker's ``Feedback``; ``namespace(entry)`` builds the namespace before ``source``.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import linecache
import textwrap
from pathlib import Path

from . import capstone, capstone_steps, l01, l02, l03, l04, l05, l06, l07, l08

ROOT = Path(__file__).resolve().parents[1]
BASE = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport attnlab\n"


def _src(*objects, alias: dict[str, str] | None = None, prefix: str = "") -> str:
    """The source of ``objects`` from solutions/, plus ``name = object`` lines for the notebook's names."""
    parts = [prefix] if prefix else []
    parts += [textwrap.dedent(inspect.getsource(o)) for o in objects]
    parts += [f"{new} = {old}\n" for new, old in (alias or {}).items()]
    return "\n\n".join(parts)


def _changed(source: str, *edits: tuple[str, str]) -> str:
    """``source`` with each (old, new) replaced: a wrong solution one plausible change away from the
    reference; every ``old`` must occur, so a changed reference cannot silently empty the entry."""
    for old, new in edits:
        if old not in source:
            raise ValueError(f"the reference no longer contains {old!r}")
        source = source.replace(old, new)
    return source


def _w(label: str, hint: str, source: str) -> dict:
    return {"label": label, "source": textwrap.dedent(source).strip() + "\n", "hint": hint}


def _todo(lesson: str, names: tuple[str, ...]) -> str:
    """The notebook's TODO cell that defines ``names``, without its check line."""
    cells = json.loads((ROOT / "lessons_vi" / f"{lesson}.ipynb").read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and "TODO" in source and ".check_" in source and all(
                f"def {n}(" in source or f"class {n}(" in source or f"{n} = " in source for n in names):
            return "\n".join(line for line in source.splitlines() if ".check_" not in line).rstrip() + "\n"
    raise LookupError(f"no TODO cell defining {names} in {lesson}")


# ============================================================================ lesson 01
L01 = "01_self_attention"
_L01 = [
    dict(key="l01.softmax", lesson=L01, evaluate="attnlab.exercises.l01:evaluate_softmax", names=("my_softmax",),
         reference=_src(l01.my_softmax),
         wrong=[
             _w("no max subtraction", "l01.softmax.overflow", """
                def my_softmax(x):
                    e = torch.exp(x)
                    return e / e.sum(dim=-1, keepdim=True)"""),
             _w("one maximum for the whole tensor", "l01.softmax.global_max", """
                def my_softmax(x):
                    e = torch.exp(x - x.max())
                    return e / e.sum(dim=-1, keepdim=True)"""),
             _w("normalised over dim 0", "l01.softmax.axis", """
                def my_softmax(x):
                    e = torch.exp(x - x.amax(dim=0, keepdim=True))
                    return e / e.sum(dim=0, keepdim=True)"""),
             _w("exp without the division", "l01.softmax.normalize", """
                def my_softmax(x):
                    return torch.exp(x - x.amax(dim=-1, keepdim=True))"""),
             _w("x.max(dim) used as a tensor", "l01.softmax.max_values", """
                def my_softmax(x):
                    e = torch.exp(x - x.max(dim=-1, keepdim=True))
                    return e / e.sum(dim=-1, keepdim=True)"""),
             _w("max without keepdim", "l01.softmax.keepdim", """
                def my_softmax(x):
                    e = torch.exp(x - x.amax(dim=-1))
                    return e / e.sum(dim=-1, keepdim=True)"""),
             _w("overwrites its input (review 2026-12-01b, W6)", "ex.changed_input", """
                def my_softmax(x):
                    x -= x.amax(dim=-1, keepdim=True)
                    x.exp_()
                    x /= x.sum(dim=-1, keepdim=True)
                    return x"""),
             _w("return forgotten", "ex.returned_none", """
                def my_softmax(x):
                    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
                    probs = e / e.sum(dim=-1, keepdim=True)"""),
             _w("sigmoid, not softmax", "l01.softmax.mismatch", """
                def my_softmax(x):
                    return torch.sigmoid(x)"""),
             _w("a list", "l01.softmax.not_tensor", """
                def my_softmax(x):
                    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
                    return (e / e.sum(dim=-1, keepdim=True)).tolist()"""),
             _w("flattened", "l01.softmax.shape", """
                def my_softmax(x):
                    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
                    return (e / e.sum(dim=-1, keepdim=True)).flatten()"""),
         ]),
    dict(key="l01.attention", lesson=L01, evaluate="attnlab.exercises.l01:evaluate_attention", names=("my_attention",),
         reference=_src(l01.my_attention),
         wrong=[
             _w("no scaling", "l01.attn.no_scale", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
                    return w @ v, w"""),
             _w("divided by d_k", "l01.attn.scale_dk", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1], dim=-1)
                    return w @ v, w"""),
             _w("softmax over the queries", "l01.attn.softmax_dim", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-2)
                    return w @ v, w"""),
             _w("(weights, out) in the wrong order", "l01.attn.swapped", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return w, w @ v"""),
             _w("V never multiplied", "l01.attn.no_v", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return w, w"""),
             _w("square root of the number of keys", "l01.attn.which_dk", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2]), dim=-1)
                    return w @ v, w"""),
             _w("Q transposed instead of K", "l01.attn.transpose_q", """
                def my_attention(q, k, v):
                    w = torch.softmax(q.transpose(-2, -1) @ k / math.sqrt(q.shape[-1]), dim=-1)
                    return w @ v, w"""),
             _w("k.transpose(0, 1): breaks on batches", "l01.attn.batched", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(0, 1) / math.sqrt(q.shape[-1]), dim=-1)
                    return w @ v, w"""),
             _w("d_k = q.size(1): the last axis only on 2-D inputs", "l01.attn.which_dk", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(1)), dim=-1)
                    return w @ v, w"""),
             _w("√d_k hard-coded", "l01.attn.scale_fixed", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(4), dim=-1)
                    return w @ v, w"""),
             _w("q scaled in place", "ex.changed_input", """
                def my_attention(q, k, v):
                    q /= math.sqrt(q.shape[-1])
                    w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
                    return w @ v, w"""),
             _w("the weights before the softmax", "l01.attn.weights_not_softmax", """
                def my_attention(q, k, v):
                    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                    return torch.softmax(scores, dim=-1) @ v, scores"""),
             _w("only the output", "l01.attn.return_pair", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return w @ v"""),
             _w("K Qᵀ", "l01.attn.order", """
                def my_attention(q, k, v):
                    w = torch.softmax(k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return w @ v, w"""),
             _w("a (T, T) table added: only works when T = S", "l01.attn.cross", """
                def my_attention(q, k, v):
                    scores = q @ k.transpose(-2, -1) + torch.zeros(q.shape[-2], q.shape[-2])
                    w = torch.softmax(scores / math.sqrt(q.shape[-1]), dim=-1)
                    return w @ v, w"""),
             _w("the output doubled", "l01.attn.mismatch", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return 2 * (w @ v), w"""),
             _w("the output summed over d_v", "l01.attn.out_shape", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return (w @ v).sum(dim=-1), w"""),
             _w("V itself and the mean weight per query", "l01.attn.weights_shape", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return v, w.mean(dim=-1)"""),
             _w("return forgotten", "ex.returned_none", """
                def my_attention(q, k, v):
                    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    out = w @ v"""),
         ]),
    dict(key="l01.dot_std", lesson=L01, evaluate="attnlab.exercises.l01:evaluate_dot_std", names=("dot_std",),
         reference=_src(l01.dot_std),
         wrong=[
             _w("the variance", "l01.std.variance", """
                def dot_std(d_k, sigma=1.0):
                    return d_k * sigma ** 4"""),
             _w("the scaling factor", "l01.std.scale", """
                def dot_std(d_k, sigma=1.0):
                    return 1 / math.sqrt(d_k)"""),
             _w("sigma forgotten", "l01.std.sigma_missing", """
                def dot_std(d_k, sigma=1.0):
                    return math.sqrt(d_k)"""),
             _w("sigma once", "l01.std.sigma_once", """
                def dot_std(d_k, sigma=1.0):
                    return sigma * math.sqrt(d_k)"""),
             _w("a list, not a number", "l01.std.number", """
                def dot_std(d_k, sigma=1.0):
                    return [sigma ** 2 * math.sqrt(d_k)]"""),
             _w("the variance of one product", "l01.std.one", """
                def dot_std(d_k, sigma=1.0):
                    return sigma ** 2"""),
             _w("twice too large", "l01.std.mismatch", """
                def dot_std(d_k, sigma=1.0):
                    return 2 * sigma ** 2 * math.sqrt(d_k)"""),
             _w("return forgotten", "ex.returned_none", """
                def dot_std(d_k, sigma=1.0):
                    std = sigma ** 2 * math.sqrt(d_k)"""),
         ]),
]

# ============================================================================ lesson 02
L02 = "02_multi_head_attention"
_L02 = [
    dict(key="l02.split_heads", lesson=L02, evaluate="attnlab.exercises.l02:evaluate_split_heads",
         names=("my_split_heads",), reference=_src(l02.split_heads, alias={"my_split_heads": "split_heads"}),
         wrong=[
             _w("view straight to (B, H, T, d_k)", "l02.hint.split_no_transpose", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.view(B, num_heads, T, D // num_heads)"""),
             _w("transpose forgotten", "l02.hint.split_forgot_transpose", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.view(B, T, num_heads, D // num_heads)"""),
             _w("d_k = D / num_heads", "l02.hint.float_size", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.view(B, T, num_heads, D / num_heads).transpose(1, 2)"""),
             _w("sizes hard-coded from the first example", "l02.hint.hard_coded", """
                def my_split_heads(x, num_heads):
                    return x.view(2, 5, 3, 4).transpose(1, 2)"""),
             _w("heads interleaved", "l02.hint.split_interleaved", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.view(B, T, D // num_heads, num_heads).permute(0, 3, 1, 2)"""),
             _w("d_k hard-coded (the lesson's 4)", "l02.hint.hard_coded", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.view(B, T, num_heads, 4).transpose(1, 2)"""),
             _w("last axis not d_k", "l02.hint.wrong_dk", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.view(B, T, D // num_heads, num_heads).transpose(1, 2)"""),
             _w("a list of heads", "l02.hint.not_tensor", """
                def my_split_heads(x, num_heads):
                    return list(x.chunk(num_heads, dim=-1))"""),
             _w("return forgotten", "ex.returned_none", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    heads = x.view(B, T, num_heads, D // num_heads).transpose(1, 2)"""),
             _w("unrelated values", "l02.hint.values", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.flip(1).view(B, T, num_heads, D // num_heads).transpose(1, 2)"""),
             _w("reshape to (B, T, H, d_k) with a float d_k", "l02.hint.float_size", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.reshape(B, T, num_heads, D / num_heads).transpose(1, 2)"""),
             _w("sizes that do not fit", "l02.hint.bad_sizes", """
                def my_split_heads(x, num_heads):
                    B, T, D = x.shape
                    return x.view(B, T, num_heads + 1, D // num_heads).transpose(1, 2)"""),
         ]),
    dict(key="l02.merge_heads", lesson=L02, evaluate="attnlab.exercises.l02:evaluate_merge_heads",
         names=("my_merge_heads",), reference=_src(l02.merge_heads, alias={"my_merge_heads": "merge_heads"}),
         wrong=[
             _w("reshape without the transpose", "l02.hint.merge_no_transpose", """
                def my_merge_heads(x):
                    B, H, T, d_k = x.shape
                    return x.reshape(B, T, H * d_k)"""),
             _w("view after the transpose", "l02.hint.merge_view", """
                def my_merge_heads(x):
                    B, H, T, d_k = x.shape
                    return x.transpose(1, 2).view(B, T, H * d_k)"""),
             _w("heads interleaved", "l02.hint.merge_interleaved", """
                def my_merge_heads(x):
                    B, H, T, d_k = x.shape
                    return x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)"""),
             _w("sizes hard-coded from the first example", "l02.hint.hard_coded", """
                def my_merge_heads(x):
                    return x.transpose(1, 2).reshape(2, 5, 12)"""),
             _w("transposed, never merged", "l02.hint.shape", """
                def my_merge_heads(x):
                    return x.transpose(1, 2)"""),
             _w("flip of the heads", "l02.hint.values", """
                def my_merge_heads(x):
                    B, H, T, d_k = x.shape
                    return x.flip(1).transpose(1, 2).reshape(B, T, H * d_k)"""),
             _w("transpose_ on the input: x itself changed", "ex.changed_input", """
                def my_merge_heads(x):
                    B, H, T, d_k = x.shape
                    return x.transpose_(1, 2).reshape(B, T, H * d_k)"""),
             _w("return forgotten", "ex.returned_none", """
                def my_merge_heads(x):
                    B, H, T, d_k = x.shape
                    merged = x.transpose(1, 2).reshape(B, T, H * d_k)"""),
         ]),
    dict(key="l02.mha_size", lesson=L02, evaluate="attnlab.exercises.l02:evaluate_mha_size",
         names=("my_mha_size",), reference=_src(l02.mha_size, alias={"my_mha_size": "mha_size"}),
         wrong=[
             _w("K and V as in multi-head attention: num_kv_heads ignored", "l02.hint.size_kv_full", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 4 * (d_model * d_model + d_model)"""),
             _w("K and V num_kv_heads wide, not num_kv_heads * d_k", "l02.hint.size_kv_width", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * num_kv_heads + num_kv_heads)"""),
             _w("no biases", "l02.hint.size_no_bias", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * d_model * d_model + 2 * d_model * w"""),
             _w("one set of projections per head", "l02.hint.size_scales_h", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, num_heads * (2 * (d_model * d_model + d_model) + 2 * (d_model * w + w))"""),
             _w("W_o forgotten", "l02.hint.size_no_wo", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("assert instead of ValueError", "l02.hint.size_assert", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    assert d_model % num_heads == 0 and num_heads % num_kv_heads == 0
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("d_k as a float", "l02.hint.size_int", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    d_k = d_model / num_heads
                    return d_k, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("no divisibility check", "l02.hint.size_divisible", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("num_heads % num_kv_heads not checked", "l02.hint.size_divisible_kv", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads:
                        raise ValueError("d_model not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("builds the lesson's layer (review 2026-12-01b, student: accepted): K and V full", "l02.hint.size_kv_full", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    layer = attnlab.MultiHeadAttention(d_model, num_heads)
                    return layer.d_k, sum(p.numel() for p in layer.parameters())"""),
             _w("builds the four nn.Linear layers", "l02.hint.size_built_layer", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    layers = [nn.Linear(d_model, d_model), nn.Linear(d_model, w), nn.Linear(d_model, w), nn.Linear(d_model, d_model)]
                    return d_model // num_heads, sum(p.numel() for layer in layers for p in layer.parameters())"""),
             _w("TypeError instead of ValueError (review 2026-12-01b)", "l02.hint.size_raise_type", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise TypeError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("None when not divisible", "l02.hint.size_divisible", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        return None
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("d_k from the key/value heads", "l02.hint.size_dk", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_kv_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("d_k written as a number", "l02.hint.size_dk", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return 4, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)"""),
             _w("one linear layer too many", "l02.hint.size_count", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return d_model // num_heads, 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w) + d_model * d_model + d_model"""),
             _w("a dict", "l02.hint.size_format", """
                def my_mha_size(d_model, num_heads, num_kv_heads):
                    if d_model % num_heads or num_heads % num_kv_heads:
                        raise ValueError("not divisible")
                    w = num_kv_heads * (d_model // num_heads)
                    return {"d_k": d_model // num_heads, "n": 2 * (d_model * d_model + d_model) + 2 * (d_model * w + w)}"""),
         ]),
]

# ============================================================================ lesson 03
L03 = "03_positional_encoding"
_PE = textwrap.dedent(inspect.getsource(l03.my_sinusoidal_encoding))
_L03 = [
    dict(key="l03.sinusoidal", lesson=L03, evaluate="attnlab.exercises.l03:evaluate_sinusoidal_encoding",
         names=("my_sinusoidal_encoding",), reference=_PE,
         wrong=[
             _w("sin and cos swapped", "l03.hint.pe_sin_cos",
                _changed(_PE, ("pe[:, 0::2] = torch.sin", "pe[:, 0::2] = torch.cos"),
                         ("pe[:, 1::2] = torch.cos", "pe[:, 1::2] = torch.sin"))),
             _w("exponent i instead of 2i", "l03.hint.pe_exponent_i",
                _changed(_PE, ("freq = torch.exp(-two_i *", "freq = torch.exp(-two_i / 2 *"))),
             _w("torch.cat([sin, cos])", "l03.hint.pe_halves", """
                def my_sinusoidal_encoding(max_len, d_model):
                    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
                    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
                    return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1)"""),
             _w("positions from 1", "l03.hint.pe_start",
                _changed(_PE, ("torch.arange(max_len, dtype=torch.float32)", "torch.arange(1, max_len + 1, dtype=torch.float32)"))),
             _w("rows and columns swapped", "l03.hint.pe_orientation",
                _changed(_PE, ("    return pe\n", "    return pe.T\n"))),
             _w("base 1000", "l03.hint.pe_base", _changed(_PE, ("math.log(10000.0)", "math.log(1000.0)"))),
             _w("a list of rows", "l03.hint.not_tensor", _changed(_PE, ("    return pe\n", "    return pe.tolist()\n"))),
             _w("one extra row", "l03.hint.shape", _changed(_PE, ("    return pe\n", "    return torch.cat([pe, pe[:1]])\n"))),
             _w("no ln(10000): division by the exponent", "l03.hint.pe_nonfinite",
                _changed(_PE, ("freq = torch.exp(-two_i * math.log(10000.0) / d_model)", "freq = 1 / (two_i / d_model)"))),
             _w("multiplied by the frequency's inverse", "l03.hint.pe_frequencies",
                _changed(_PE, ("freq = torch.exp(-two_i *", "freq = torch.exp(two_i *"))),
             _w("one value off", "l03.hint.pe_values", _changed(_PE, ("    return pe\n", "    pe[3, 1] += 0.5\n    return pe\n"))),
             _w("odd columns with 2i+1", "l03.hint.pe_exponent_odd", _changed(_PE, (
                "pe[:, 1::2] = torch.cos(pos * freq)",
                "pe[:, 1::2] = torch.cos(pos * torch.exp(-(two_i + 1) * math.log(10000.0) / d_model))"))),
             _w("2i // d_model (integer division)", "l03.hint.pe_integer",
                _changed(_PE, ("freq = torch.exp(-two_i * math.log(10000.0) / d_model)",
                               "freq = torch.exp(-(two_i // d_model) * math.log(10000.0))"))),
         ]),
    dict(key="l03.add_pe", lesson=L03, evaluate="attnlab.exercises.l03:evaluate_add_positional_encoding",
         names=("add_positional_encoding",), reference=_src(l03.add_positional_encoding),
         wrong=[
             _w("the whole table", "l03.hint.add_slice", """
                def add_positional_encoding(x, pe, start=0):
                    return x + pe"""),
             _w("pe[:T, :T]: the columns cut too", "l03.hint.add_columns", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    return x + pe[:T, :T]"""),
             _w("added in place", "l03.hint.add_inplace", """
                def add_positional_encoding(x, pe, start=0):
                    x += pe[start:start + x.shape[1]]
                    return x"""),
             _w("concatenated", "l03.hint.add_concat", """
                def add_positional_encoding(x, pe, start=0):
                    B, T, D = x.shape
                    return torch.cat([x, pe[start:start + T].expand(B, T, D)], dim=-1)"""),
             _w("positions from start + 1", "l03.hint.add_offset", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    return x + pe[start + 1:start + T + 1]"""),
             _w("B rows of the table", "l03.hint.add_batch", """
                def add_positional_encoding(x, pe, start=0):
                    return x + pe[:x.shape[0]]"""),
             _w("the table changed in place", "ex.changed_input", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    pe[start:start + T] += x[0]
                    return x + pe[start:start + T] - x[0]"""),
             _w("multiplied", "l03.hint.add_values", """
                def add_positional_encoding(x, pe, start=0):
                    return x * pe[start:start + x.shape[1]]"""),
             _w("return forgotten", "ex.returned_none", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    out = x + pe[start:start + T]"""),
             _w("start ignored: pe[:T]", "l03.hint.add_start_ignored", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    return x + pe[:T]"""),
             _w("pe[start:T]: the slice ends at T", "l03.hint.add_start_end", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    return x + pe[start:T]"""),
             _w("no start parameter", "l03.hint.add_no_start", """
                def add_positional_encoding(x, pe):
                    return x + pe[:x.shape[1]]"""),
             _w("no size check: torch's error", "l03.hint.add_range_error", """
                def add_positional_encoding(x, pe, start=0):
                    return x + pe[start:start + x.shape[1]]"""),
             _w("start clamped to fit: no error", "l03.hint.add_range", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    start = min(start, pe.shape[0] - T)
                    return x + pe[start:start + T]"""),
             _w("a ValueError that names no size", "l03.hint.add_range_message", """
                def add_positional_encoding(x, pe, start=0):
                    if start + x.shape[1] > pe.shape[0]:
                        raise ValueError("the sentence is too long")
                    return x + pe[start:start + x.shape[1]]"""),
             _w("the check one too strict (>=)", "l03.hint.add_range_strict", """
                def add_positional_encoding(x, pe, start=0):
                    T = x.shape[1]
                    if start + T >= pe.shape[0]:
                        raise ValueError(f"start + T = {start + T} >= max_len = {pe.shape[0]}")
                    return x + pe[start:start + T]"""),
         ]),
    dict(key="l03.predict", lesson=L03, evaluate="attnlab.exercises.l03:evaluate_predict_permuted_output",
         names=("predict_permuted_output",), reference=_src(l03.predict_permuted_output),
         wrong=[
             _w("the output unchanged for the queries too", "l03.hint.predict_same", """
                def predict_permuted_output(out, perm, permuted):
                    return out"""),
             _w("the two cases swapped", "l03.hint.predict_same", """
                def predict_permuted_output(out, perm, permuted):
                    return out if permuted == "queries" else out[:, perm]"""),
             _w("the memory treated like self-attention: the output reordered", "l03.hint.predict_memory_moved", """
                def predict_permuted_output(out, perm, permuted):
                    return out[:, perm]"""),
             _w("the inverse permutation", "l03.hint.predict_inverse", """
                def predict_permuted_output(out, perm, permuted):
                    return out[:, torch.argsort(torch.tensor(perm))] if permuted == "queries" else out"""),
             _w("permuted along the features", "l03.hint.predict_axis", """
                def predict_permuted_output(out, perm, permuted):
                    return out[..., perm] if permuted == "queries" else out"""),
             _w("reversed", "l03.hint.predict_flip", """
                def predict_permuted_output(out, perm, permuted):
                    return out.flip(1) if permuted == "queries" else out"""),
             _w("permuted along the batch", "l03.hint.predict_axis", """
                def predict_permuted_output(out, perm, permuted):
                    return out[perm] if permuted == "queries" else out"""),
             _w("out reordered in place", "ex.changed_input", """
                def predict_permuted_output(out, perm, permuted):
                    if permuted == "queries":
                        out[:] = out[:, perm].clone()
                    return out"""),
             _w("scaled", "l03.hint.predict_values", """
                def predict_permuted_output(out, perm, permuted):
                    return 2 * out[:, perm] if permuted == "queries" else out"""),
             _w("pooled over the positions", "l03.hint.shape", """
                def predict_permuted_output(out, perm, permuted):
                    return out[:, perm].mean(dim=1) if permuted == "queries" else out"""),
             _w("the memory's output scaled", "l03.hint.predict_memory_values", """
                def predict_permuted_output(out, perm, permuted):
                    return out[:, perm] if permuted == "queries" else 2 * out"""),
         ]),
]

# ============================================================================ lesson 04
L04 = "04_attention_masks"
_L04 = [
    dict(key="l04.causal", lesson=L04, evaluate="attnlab.exercises.l04:evaluate_causal_mask", names=("my_causal_mask",),
         reference=_src(l04.causal_mask, alias={"my_causal_mask": "causal_mask"}),
         wrong=[
             _w("upper triangle", "l04.hint.causal_upper", """
                def my_causal_mask(T):
                    return torch.triu(torch.ones(T, T, dtype=torch.bool))[None, None]"""),
             _w("diagonal left out", "l04.hint.causal_no_diag", """
                def my_causal_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)[None, None]"""),
             _w("2-D", "l04.hint.causal_2d", """
                def my_causal_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool))"""),
             _w("True = blocked", "l04.hint.causal_inverted", """
                def my_causal_mask(T):
                    return ~torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]"""),
             _w("an additive float mask", "l04.hint.additive", """
                def my_causal_mask(T):
                    keep = torch.tril(torch.ones(T, T, dtype=torch.bool))
                    return torch.zeros(T, T).masked_fill(~keep, float("-inf"))[None, None]"""),
             _w("float ones and zeros", "l04.hint.dtype", """
                def my_causal_mask(T):
                    return torch.tril(torch.ones(T, T))[None, None]"""),
             _w("calls attnlab.causal_mask (review 2026-12-01b, student: accepted)", "ex.forbidden", """
                def my_causal_mask(T):
                    return attnlab.causal_mask(T)"""),
             _w("imports causal_mask", "ex.forbidden", """
                def my_causal_mask(T):
                    from attnlab import causal_mask
                    return causal_mask(T)"""),
             _w("one 8 x 8 table, sliced (review 2026-12-01b, W5)", "l04.hint.shape", """
                _M = torch.tril(torch.ones(8, 8, dtype=torch.bool))

                def my_causal_mask(T):
                    return _M[:T, :T][None, None]"""),
             _w("a band: only the last 4 keys", "l04.hint.causal_past", """
                def my_causal_mask(T):
                    i = torch.arange(T)
                    return ((i[:, None] >= i[None, :]) & (i[:, None] - i[None, :] < 4))[None, None]"""),
             _w("the diagonal and one key into the future", "l04.hint.causal_future", """
                def my_causal_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)[None, None]"""),
             _w("a list", "l04.hint.not_tensor", """
                def my_causal_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None].tolist()"""),
         ]),
    dict(key="l04.padding", lesson=L04, evaluate="attnlab.exercises.l04:evaluate_padding_mask",
         names=("my_padding_mask",), reference=_src(l04.padding_mask, alias={"my_padding_mask": "padding_mask"}),
         wrong=[
             _w("(B, S), no broadcasting axes", "l04.hint.pad_2d", """
                def my_padding_mask(token_ids, pad_id=0):
                    return token_ids != pad_id"""),
             _w("(B, 1, S, 1): the rows", "l04.hint.pad_rows", """
                def my_padding_mask(token_ids, pad_id=0):
                    return (token_ids != pad_id)[:, None, :, None]"""),
             _w("True on the padding", "l04.hint.pad_inverted", """
                def my_padding_mask(token_ids, pad_id=0):
                    return (token_ids == pad_id)[:, None, None, :]"""),
             _w("pad_id ignored (0 hard-coded)", "l04.hint.pad_id", """
                def my_padding_mask(token_ids, pad_id=0):
                    return (token_ids != 0)[:, None, None, :]"""),
             _w("integers", "l04.hint.dtype", """
                def my_padding_mask(token_ids, pad_id=0):
                    return (token_ids != pad_id).long()[:, None, None, :]"""),
             _w("the default pad_id=0 dropped", "l04.hint.pad_default", """
                def my_padding_mask(token_ids, pad_id):
                    return (token_ids != pad_id)[:, None, None, :]"""),
             _w("default pad_id=1", "l04.hint.pad_default_value", """
                def my_padding_mask(token_ids, pad_id=1):
                    return (token_ids != pad_id)[:, None, None, :]"""),
             _w("calls attnlab.padding_mask", "ex.forbidden", """
                def my_padding_mask(token_ids, pad_id=0):
                    return attnlab.padding_mask(token_ids, pad_id)"""),
             _w("token_ids > pad_id", "l04.hint.pad_values", """
                def my_padding_mask(token_ids, pad_id=0):
                    return (token_ids > pad_id)[:, None, None, :]"""),
             _w("token_ids changed in place", "ex.changed_input", """
                def my_padding_mask(token_ids, pad_id=0):
                    token_ids[token_ids == pad_id] = -1
                    return (token_ids != -1)[:, None, None, :]"""),
             _w("(B, 1, S, 1) and a shape that fits nothing", "l04.hint.shape", """
                def my_padding_mask(token_ids, pad_id=0):
                    return (token_ids != pad_id)[:, None, :]"""),
             _w("additive float mask", "l04.hint.additive", """
                def my_padding_mask(token_ids, pad_id=0):
                    keep = (token_ids != pad_id)[:, None, None, :]
                    return torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))"""),
         ]),
    dict(key="l04.decoder", lesson=L04, evaluate="attnlab.exercises.l04:evaluate_decoder_mask",
         names=("my_decoder_mask",), reference=_src(l04.decoder_mask, alias={"my_decoder_mask": "decoder_mask"}),
         context="token_ids = torch.tensor([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]])\n",
         wrong=[
             _w("the buggy version: causal | padding", "l04.hint.dec_or", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    return causal | (token_ids != pad_id)[:, None, None, :]"""),
             _w("padding on the rows", "l04.hint.dec_pad_rows", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    return causal & (token_ids != pad_id)[:, None, :, None]"""),
             _w("padding on rows and columns", "l04.hint.dec_pad_rows_too", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    keep = token_ids != pad_id
                    return causal & keep[:, None, None, :] & keep[:, None, :, None]"""),
             _w("no head axis", "l04.hint.dec_no_head", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
                    return causal & (token_ids != pad_id)[:, None, :]"""),
             _w("inverted", "l04.hint.dec_inverted", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    return ~(causal & (token_ids != pad_id)[:, None, None, :])"""),
             _w("causal only", "l04.hint.dec_no_padding", """
                def my_decoder_mask(token_ids, pad_id=0):
                    B, T = token_ids.shape
                    return torch.tril(torch.ones(T, T, dtype=torch.bool)).expand(B, 1, T, T)"""),
             _w("padding only", "l04.hint.dec_no_causal", """
                def my_decoder_mask(token_ids, pad_id=0):
                    B, T = token_ids.shape
                    return (token_ids != pad_id)[:, None, None, :].expand(B, 1, T, T)"""),
             _w("the default pad_id=0 dropped", "l04.hint.pad_default", """
                def my_decoder_mask(token_ids, pad_id):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    return causal & (token_ids != pad_id)[:, None, None, :]"""),
             _w("default pad_id=1", "l04.hint.pad_default_value", """
                def my_decoder_mask(token_ids, pad_id=1):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    return causal & (token_ids != pad_id)[:, None, None, :]"""),
             _w("calls attnlab.decoder_mask", "ex.forbidden", """
                def my_decoder_mask(token_ids, pad_id=0):
                    return attnlab.decoder_mask(token_ids, pad_id)"""),
             _w("pad_id ignored (0 hard-coded)", "l04.hint.pad_id", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    return causal & (token_ids != 0)[:, None, None, :]"""),
             _w("no diagonal", "l04.hint.dec_values", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)[None, None]
                    return causal & (token_ids != pad_id)[:, None, None, :]"""),
             _w("int mask", "l04.hint.dtype", """
                def my_decoder_mask(token_ids, pad_id=0):
                    T = token_ids.shape[1]
                    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]
                    return (causal & (token_ids != pad_id)[:, None, None, :]).int()"""),
         ]),
    dict(key="l04.mha", lesson=L04, evaluate="attnlab.exercises.l04:evaluate_mha_mask", names=("my_mha_mask",),
         reference=_src(l04.mha_mask, alias={"my_mha_mask": "mha_mask"}),
         wrong=[
             _w("not inverted", "l04.hint.mha_not_inverted", """
                def my_mha_mask(mask, num_heads):
                    B, _, T, S = mask.shape
                    return mask.expand(B, num_heads, T, S).reshape(B * num_heads, T, S)"""),
             _w("heads first: repeat", "l04.hint.mha_order", """
                def my_mha_mask(mask, num_heads):
                    return (~mask[:, 0]).repeat(num_heads, 1, 1)"""),
             _w("left 4-D", "l04.hint.mha_4d", """
                def my_mha_mask(mask, num_heads):
                    B, _, T, S = mask.shape
                    return ~mask.expand(B, num_heads, T, S)"""),
             _w("heads not repeated", "l04.hint.mha_no_heads", """
                def my_mha_mask(mask, num_heads):
                    return ~mask[:, 0]"""),
             _w("a float mask", "l04.hint.mha_float", """
                def my_mha_mask(mask, num_heads):
                    B, _, T, S = mask.shape
                    return (~mask).expand(B, num_heads, T, S).reshape(B * num_heads, T, S).float()"""),
             _w("an int mask", "l04.hint.mha_dtype", """
                def my_mha_mask(mask, num_heads):
                    B, _, T, S = mask.shape
                    return (~mask).expand(B, num_heads, T, S).reshape(B * num_heads, T, S).int()"""),
             _w("num_heads hard-coded", "l04.hint.mha_no_heads", """
                def my_mha_mask(mask, num_heads):
                    B, _, T, S = mask.shape
                    return (~mask).expand(B, 4, T, S).reshape(B * 4, T, S)"""),
             _w("the heads of another sentence", "l04.hint.mha_values", """
                def my_mha_mask(mask, num_heads):
                    B, _, T, S = mask.shape
                    return (~mask.flip(0)).expand(B, num_heads, T, S).reshape(B * num_heads, T, S)"""),
             _w("a (T, S, B*H) mask", "l04.hint.shape", """
                def my_mha_mask(mask, num_heads):
                    B, _, T, S = mask.shape
                    return (~mask).expand(B, num_heads, T, S).reshape(B * num_heads, T, S).permute(1, 2, 0)"""),
         ]),
]

# ============================================================================ lesson 05
L05 = "05_transformer_block"
_L05 = [
    dict(key="l05.post_ln", lesson=L05, evaluate="attnlab.exercises.l05:evaluate_post_ln_block",
         names=("my_post_ln_block",), reference=_src(l05.post_ln_block, alias={"my_post_ln_block": "post_ln_block"}),
         wrong=[
             _w("pre-LN written", "l05.hint.post_is_pre", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = x + attn(norm1(x))
                    return x + ffn(norm2(x))"""),
             _w("no residual", "l05.hint.no_residual", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    return norm2(ffn(norm1(attn(x))))"""),
             _w("norm1 twice", "l05.hint.norms_mixed", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = norm1(x + attn(x))
                    return norm1(x + ffn(x))"""),
             _w("FFN reads the block's input", "l05.hint.ffn_input", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    h = norm1(x + attn(x))
                    return norm2(h + ffn(x))"""),
             _w("normalised branch", "l05.hint.norm_branch", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = x + norm1(attn(x))
                    return x + norm2(ffn(x))"""),
             _w("one LayerNorm at the end", "l05.hint.post.ln_once", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = x + attn(x)
                    return norm2(x + ffn(x))"""),
             _w("returns (x, None), as the package's block does", "l05.hint.not_tensor", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = norm1(x + attn(x))
                    return norm2(x + ffn(x)), None"""),
             _w("return forgotten", "ex.returned_none", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = norm1(x + attn(x))
                    x = norm2(x + ffn(x))"""),
             _w("the last position only", "l05.hint.shape", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = norm1(x + attn(x))
                    return norm2(x + ffn(x))[:, -1]"""),
             _w("twice the residual", "l05.hint.generic_block", """
                def my_post_ln_block(x, attn, ffn, norm1, norm2):
                    x = norm1(2 * x + attn(x))
                    return norm2(x + ffn(x))"""),
         ]),
    dict(key="l05.pre_ln", lesson=L05, evaluate="attnlab.exercises.l05:evaluate_pre_ln_block",
         names=("my_pre_ln_block",), reference=_src(l05.pre_ln_block, alias={"my_pre_ln_block": "pre_ln_block"}),
         wrong=[
             _w("post-LN written", "l05.hint.pre_is_post", """
                def my_pre_ln_block(x, attn, ffn, norm1, norm2):
                    x = norm1(x + attn(x))
                    return norm2(x + ffn(x))"""),
             _w("the stream normalised", "l05.hint.pre.norm_stream", """
                def my_pre_ln_block(x, attn, ffn, norm1, norm2):
                    x = norm1(x)
                    x = x + attn(x)
                    x = norm2(x)
                    return x + ffn(x)"""),
             _w("FFN input not normalised", "l05.hint.pre.ln_once", """
                def my_pre_ln_block(x, attn, ffn, norm1, norm2):
                    x = x + attn(norm1(x))
                    return x + ffn(x)"""),
             _w("norm1 twice", "l05.hint.norms_mixed", """
                def my_pre_ln_block(x, attn, ffn, norm1, norm2):
                    x = x + attn(norm1(x))
                    return x + ffn(norm1(x))"""),
             _w("no residual", "l05.hint.no_residual", """
                def my_pre_ln_block(x, attn, ffn, norm1, norm2):
                    return ffn(norm2(attn(norm1(x))))"""),
             _w("the residual stream changed in place", "ex.changed_input", """
                def my_pre_ln_block(x, attn, ffn, norm1, norm2):
                    x += attn(norm1(x))
                    x += ffn(norm2(x))
                    return x"""),
             _w("FFN on the block's input", "l05.hint.ffn_input", """
                def my_pre_ln_block(x, attn, ffn, norm1, norm2):
                    h = x + attn(norm1(x))
                    return h + ffn(norm2(x))"""),
         ]),
    dict(key="l05.masks", lesson=L05, evaluate="attnlab.exercises.l05:evaluate_masks", names=("leaky_mask", "safe_mask"),
         reference=_src(l05.leaky_mask, l05.safe_mask),
         wrong=[
             _w("the leaky mask is causal", "l05.hint.leaky_is_safe", """
                def leaky_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool))

                def safe_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool))"""),
             _w("a leak that never reaches the last token", "l05.hint.leak_not_last", """
                def leaky_mask(T):
                    m = torch.tril(torch.ones(T, T, dtype=torch.bool))
                    m[0, 1] = True
                    return m

                def safe_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool))"""),
             _w("safe mask: upper triangle", "l05.hint.safe_upper", """
                def leaky_mask(T):
                    return torch.ones(T, T, dtype=torch.bool)

                def safe_mask(T):
                    return torch.triu(torch.ones(T, T, dtype=torch.bool))"""),
             _w("safe mask inverted", "l05.hint.safe_inverted", """
                def leaky_mask(T):
                    return torch.ones(T, T, dtype=torch.bool)

                def safe_mask(T):
                    return ~torch.tril(torch.ones(T, T, dtype=torch.bool))"""),
             _w("safe mask without the diagonal", "l05.hint.safe_no_diagonal", """
                def leaky_mask(T):
                    return torch.ones(T, T, dtype=torch.bool)

                def safe_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)"""),
             _w("a float mask", "l05.hint.mask_type", """
                def leaky_mask(T):
                    return torch.ones(T, T)

                def safe_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool))"""),
             _w("the lesson's T = 10 written as a number", "l05.hint.mask_shape", """
                def leaky_mask(T):
                    return torch.ones(T, T, dtype=torch.bool)

                def safe_mask(T):
                    return torch.tril(torch.ones(10, 10, dtype=torch.bool))"""),
             _w("safe mask: each token sees itself only", "l05.hint.safe_too_strict", """
                def leaky_mask(T):
                    return torch.ones(T, T, dtype=torch.bool)

                def safe_mask(T):
                    return torch.eye(T, dtype=torch.bool)"""),
             _w("safe mask sees one step ahead", "l05.hint.safe_leaks", """
                def leaky_mask(T):
                    return torch.ones(T, T, dtype=torch.bool)

                def safe_mask(T):
                    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)"""),
             _w("safe_mask without a return", "ex.returned_none", """
                def leaky_mask(T):
                    return torch.ones(T, T, dtype=torch.bool)

                def safe_mask(T):
                    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))"""),
         ]),
]

# ============================================================================ lesson 06
L06 = "06_encoder_decoder_gpt"
_MASKS = textwrap.dedent(inspect.getsource(l06.make_masks))
_GREEDY = textwrap.dedent(inspect.getsource(l06.greedy_step))
_L06 = [
    dict(key="l06.params", lesson=L06, evaluate="attnlab.exercises.l06:evaluate_block_params", names=("block_params",),
         reference=_src(l06.block_params),
         wrong=[
             _w("no biases, no LayerNorms", "l06.params.no_bias_no_norm", """
                def block_params(d_model, num_heads, d_ff):
                    return 4 * d_model * d_model + 2 * d_model * d_ff"""),
             _w("LayerNorms forgotten", "l06.params.no_norm", """
                def block_params(d_model, num_heads, d_ff):
                    return 4 * (d_model * d_model + d_model) + (d_model * d_ff + d_ff) + (d_ff * d_model + d_model)"""),
             _w("projections per head", "l06.params.per_head", """
                def block_params(d_model, num_heads, d_ff):
                    attention = 4 * num_heads * (d_model * d_model + d_model)
                    return attention + (d_model * d_ff + d_ff) + (d_ff * d_model + d_model) + 4 * d_model"""),
             _w("W_o forgotten", "l06.params.proj", """
                def block_params(d_model, num_heads, d_ff):
                    return 3 * (d_model * d_model + d_model) + (d_model * d_ff + d_ff) + (d_ff * d_model + d_model) + 4 * d_model"""),
             _w("one parameter per LayerNorm dimension", "l06.params.norm_half", """
                def block_params(d_model, num_heads, d_ff):
                    return 4 * (d_model * d_model + d_model) + (d_model * d_ff + d_ff) + (d_ff * d_model + d_model) + 2 * d_model"""),
             _w("a string", "l06.params.not_int", """
                def block_params(d_model, num_heads, d_ff):
                    return str(4 * (d_model * d_model + d_model) + 2 * d_model * d_ff + d_ff + d_model + 4 * d_model)"""),
             _w("biases forgotten", "l06.params.no_bias", """
                def block_params(d_model, num_heads, d_ff):
                    return 4 * d_model * d_model + 2 * d_model * d_ff + 4 * d_model"""),
             _w("d_ff assumed to be 4 d_model", "l06.params.dff", """
                def block_params(d_model, num_heads, d_ff):
                    d_ff = 4 * d_model
                    return 4 * (d_model * d_model + d_model) + (d_model * d_ff + d_ff) + (d_ff * d_model + d_model) + 4 * d_model"""),
             _w("one parameter too many", "l06.params.off", """
                def block_params(d_model, num_heads, d_ff):
                    return 4 * (d_model * d_model + d_model) + (d_model * d_ff + d_ff) + (d_ff * d_model + d_model) + 4 * d_model + 1"""),
         ]),
    dict(key="l06.masks", lesson=L06, evaluate="attnlab.exercises.l06:evaluate_masks", names=("make_masks",),
         reference=_MASKS,
         wrong=[
             _w("a causal encoder", "l06.masks.enc_causal",
                _changed(_MASKS, ("enc = src_keys.expand(B, 1, S, S)",
                                  "enc = src_keys.expand(B, 1, S, S) & attnlab.causal_mask(S)"))),
             _w("decoder without the causal part", "l06.masks.dec_no_causal",
                _changed(_MASKS, ("dec = attnlab.decoder_mask(tgt_ids, pad_id)",
                                  "dec = attnlab.padding_mask(tgt_ids, pad_id).expand(B, 1, T, T)"))),
             _w("a causal cross-attention", "l06.masks.cross_causal",
                _changed(_MASKS, ("cross = src_keys.expand(B, 1, T, S)",
                                  "cross = src_keys.expand(B, 1, T, S) & torch.ones(T, S, dtype=torch.bool).tril()"))),
             _w("cross mask (B, 1, S, T)", "l06.masks.cross_shape",
                _changed(_MASKS, ("cross = src_keys.expand(B, 1, T, S)", "cross = src_keys.expand(B, 1, T, S).transpose(-2, -1)"))),
             _w("cross mask left (B, 1, 1, S)", "l06.masks.expand",
                _changed(_MASKS, ("cross = src_keys.expand(B, 1, T, S)", "cross = src_keys"))),
             _w("cross mask from the target's padding", "l06.masks.cross_tgt_pad",
                _changed(_MASKS, ("cross = src_keys.expand(B, 1, T, S)",
                                  "cross = (tgt_ids != pad_id)[:, None, :, None].expand(B, 1, T, S)"))),
             _w("two masks", "l06.masks.not_three", _changed(_MASKS, ("return enc, dec, cross", "return enc, dec"))),
             _w("decoder without the diagonal", "l06.masks.dec_diag",
                _changed(_MASKS, ("dec = attnlab.decoder_mask(tgt_ids, pad_id)",
                                  "dec = attnlab.decoder_mask(tgt_ids, pad_id) & torch.ones(T, T, dtype=torch.bool).tril(-1)"))),
             _w("decoder with the upper triangle", "l06.masks.dec_upper",
                _changed(_MASKS, ("dec = attnlab.decoder_mask(tgt_ids, pad_id)",
                                  "dec = attnlab.padding_mask(tgt_ids, pad_id).expand(B, 1, T, T) & torch.ones(T, T, dtype=torch.bool).triu()"))),
             _w("another default pad_id", "l06.masks.default", _changed(_MASKS, ("pad_id: int = 0", "pad_id: int = 1"))),
             _w("encoder mask inverted", "l06.masks.inverted",
                _changed(_MASKS, ("enc = src_keys.expand(B, 1, S, S)", "enc = ~src_keys.expand(B, 1, S, S)"))),
             _w("no padding mask in the encoder", "l06.masks.no_pad",
                _changed(_MASKS, ("enc = src_keys.expand(B, 1, S, S)", "enc = torch.ones(B, 1, S, S, dtype=torch.bool)"))),
             _w("a float encoder mask", "l06.masks.not_bool",
                _changed(_MASKS, ("enc = src_keys.expand(B, 1, S, S)", "enc = src_keys.expand(B, 1, S, S).float()"))),
             _w("padding at id 0 whatever pad_id", "l06.masks.pad_id",
                _changed(_MASKS, ("src_keys = attnlab.padding_mask(src_ids, pad_id)", "src_keys = attnlab.padding_mask(src_ids, 0)"))),
             _w("padding queries masked instead of keys", "l06.masks.pad_rows",
                _changed(_MASKS, ("enc = src_keys.expand(B, 1, S, S)", "enc = (src_ids != pad_id)[:, None, :, None].expand(B, 1, S, S)"))),
             _w("padding queries masked too", "l06.masks.pad_rows_too",
                _changed(_MASKS, ("enc = src_keys.expand(B, 1, S, S)", "enc = src_keys.expand(B, 1, S, S) & (src_ids != pad_id)[:, None, :, None]"))),
             _w("cross mask without its head axis", "l06.masks.shape",
                _changed(_MASKS, ("cross = src_keys.expand(B, 1, T, S)", "cross = src_keys.expand(B, 1, T, S)[:, 0]"))),
             _w("the first query of the encoder sees nothing", "l06.masks.wrong",
                _changed(_MASKS, ("enc = src_keys.expand(B, 1, S, S)", "enc = src_keys.expand(B, 1, S, S).clone()\n    enc[:, :, 0, :] = False"))),
         ]),
    dict(key="l06.greedy", lesson=L06, evaluate="attnlab.exercises.l06:evaluate_greedy_step", names=("greedy_step",),
         reference=_GREEDY,
         wrong=[
             _w("context never cropped", "l06.greedy.no_crop", _changed(_GREEDY, ("model(ids[:, -max_len:])", "model(ids)"))),
             _w("the first position's logits", "l06.greedy.first", _changed(_GREEDY, ("logits[:, -1, :]", "logits[:, 0, :]"))),
             _w("only the new token", "l06.greedy.no_append",
                _changed(_GREEDY, ("return torch.cat([ids, next_id], dim=1)", "return next_id"))),
             _w("the first max_len tokens", "l06.greedy.crop_front",
                _changed(_GREEDY, ("model(ids[:, -max_len:])", "model(ids[:, :max_len])"))),
             _w("the cropped sequence returned", "l06.greedy.crop_return", """
                def greedy_step(model, ids, max_len):
                    ids = ids[:, -max_len:]
                    with torch.no_grad():
                        logits = model(ids)
                    return torch.cat([ids, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)"""),
             _w("argmax without keepdim", "l06.greedy.cat",
                _changed(_GREEDY, ("argmax(dim=-1, keepdim=True)", "argmax(dim=-1)"))),
             # review 2026-12-01b (engineering W3, checkers issue 27 §2): crops of the wrong length
             _w("cropped one token short", "l06.greedy.crop_length",
                _changed(_GREEDY, ("model(ids[:, -max_len:])", "model(ids[:, -(max_len - 1):])"))),
             _w("max_len hard-coded as 6", "l06.greedy.crop_length",
                _changed(_GREEDY, ("model(ids[:, -max_len:])", "model(ids[:, -6:])"))),
             _w("the new token in front", "l06.greedy.changed",
                _changed(_GREEDY, ("return torch.cat([ids, next_id], dim=1)", "return torch.cat([next_id, ids], dim=1)"))),
             _w("a list returned", "l06.greedy.not_tensor",
                _changed(_GREEDY, ("return torch.cat([ids, next_id], dim=1)", "return torch.cat([ids, next_id], dim=1).tolist()"))),
             _w("argmax over the batch axis", "l06.greedy.shape", _changed(_GREEDY, ("argmax(dim=-1, keepdim=True)", "argmax(dim=0, keepdim=True)"))),
             _w("the largest value, not its index", "l06.greedy.values",
                _changed(_GREEDY, ("argmax(dim=-1, keepdim=True)", "max(dim=-1, keepdim=True).values"))),
             _w("argmin", "l06.greedy.wrong", _changed(_GREEDY, ("argmax(dim=-1, keepdim=True)", "argmin(dim=-1, keepdim=True)"))),
         ]),
]

# ============================================================================ lesson 07
L07 = "07_train_tiny_transformer"
_TINY = "from attnlab import reversal\n"
_TINY_MODEL = _TINY + "model = reversal.load_pretrained()\n"
_FORWARD = _src(l07.forward, alias={"my_forward": "forward"}, prefix="from attnlab import causal_mask\n")
_L07 = [
    dict(key="l07.loss_mask", lesson=L07, evaluate="attnlab.exercises.l07:evaluate_loss_mask", names=("my_loss_mask",),
         context=_TINY, reference=_src(l07.loss_mask, alias={"my_loss_mask": "loss_mask"}),
         wrong=[
             _w("every position", "l07.hint.mask_all", """
                def my_loss_mask(inputs, targets):
                    return torch.ones_like(inputs, dtype=torch.bool)"""),
             _w("cumsum > 1: never true", "l07.hint.mask_none", """
                def my_loss_mask(inputs, targets):
                    return (torch.cumsum(inputs == reversal.SEP, dim=1) > 1) & (targets != reversal.PAD)"""),
             _w("separator searched in targets", "l07.hint.mask_early", """
                def my_loss_mask(inputs, targets):
                    return (torch.cumsum(targets == reversal.SEP, dim=1) > 0) & (targets != reversal.PAD)"""),
             _w("strictly after the separator", "l07.hint.mask_late", """
                def my_loss_mask(inputs, targets):
                    after = torch.cumsum(inputs == reversal.SEP, dim=1) > 0
                    return after & (inputs != reversal.SEP) & (targets != reversal.PAD)"""),
             _w("padding targets kept", "l07.hint.mask_padding", """
                def my_loss_mask(inputs, targets):
                    return torch.cumsum(inputs == reversal.SEP, dim=1) > 0"""),
             _w("inverted", "l07.hint.mask_inverted", """
                def my_loss_mask(inputs, targets):
                    return ~((torch.cumsum(inputs == reversal.SEP, dim=1) > 0) & (targets != reversal.PAD))"""),
             _w("n = 8 hard-coded", "l07.hint.mask_fixed", """
                def my_loss_mask(inputs, targets):
                    return (torch.arange(inputs.shape[1]) >= 8).expand_as(inputs)"""),
             _w("start hard-coded at 8, padding dropped", "l07.hint.mask_fixed", """
                def my_loss_mask(inputs, targets):
                    t = torch.arange(inputs.shape[1])
                    return (t >= 8).expand_as(inputs) & (targets != reversal.PAD)"""),
             _w("source digits counted too", "l07.hint.mask_source", """
                def my_loss_mask(inputs, targets):
                    return targets != reversal.PAD"""),
             _w("one target position left out", "l07.hint.mask_missing", """
                def my_loss_mask(inputs, targets):
                    keep = (torch.cumsum(inputs == reversal.SEP, dim=1) > 0) & (targets != reversal.PAD)
                    return keep & (torch.arange(inputs.shape[1]) != 10)"""),
             _w("one flag per row", "l07.hint.mask_shape", """
                def my_loss_mask(inputs, targets):
                    return ((torch.cumsum(inputs == reversal.SEP, dim=1) > 0) & (targets != reversal.PAD)).any(1)"""),
             _w("the shape of the full rows", "l07.hint.mask_shape_full", """
                def my_loss_mask(inputs, targets):
                    keep = (torch.cumsum(inputs == reversal.SEP, dim=1) > 0) & (targets != reversal.PAD)
                    return torch.cat([keep, keep[:, -1:]], dim=1)"""),
             _w("an integer mask", "l07.hint.mask_dtype", """
                def my_loss_mask(inputs, targets):
                    return ((torch.cumsum(inputs == reversal.SEP, dim=1) > 0) & (targets != reversal.PAD)).long()"""),
             _w("a list returned", "l07.hint.not_tensor", """
                def my_loss_mask(inputs, targets):
                    return ((torch.cumsum(inputs == reversal.SEP, dim=1) > 0) & (targets != reversal.PAD)).tolist()"""),
         ]),
    dict(key="l07.forward", lesson=L07, evaluate="attnlab.exercises.l07:evaluate_forward", names=("my_forward",),
         args=("my_forward", "model"), context=_TINY_MODEL, reference=_FORWARD,
         wrong=[
             _w("no mask", "l07.hint.fwd_no_mask", _changed(_FORWARD, ("x, _ = block(x, mask=mask)", "x, _ = block(x)"))),
             _w("inverted mask", "l07.hint.fwd_inverted", _changed(_FORWARD, ("mask=mask)", "mask=~mask)"))),
             _w("no positional encoding", "l07.hint.fwd_no_pos",
                _changed(_FORWARD, ("x = model.pos(model.embed(ids))", "x = model.embed(ids)"))),
             _w("no final LayerNorm", "l07.hint.fwd_no_norm",
                _changed(_FORWARD, ("return model.head(model.norm(x))", "return model.head(x)"))),
             _w("x = block(x, mask): a tuple", "l07.hint.fwd_block_tuple",
                _changed(_FORWARD, ("x, _ = block(x, mask=mask)", "x = block(x, mask)"))),
             _w("(logits, x) returned", "l07.hint.fwd_tuple",
                _changed(_FORWARD, ("return model.head(model.norm(x))", "return model.head(model.norm(x)), x"))),
             # review 2026-12-01b (student, engineering W1): sizes and masks the old probe let through or misnamed
             _w("T from the batch axis", "l07.hint.fwd_mask_batch", _changed(_FORWARD, ("T = ids.shape[1]", "T = ids.shape[0]"))),
             _w("mask size hard-coded as 16", "l07.hint.fwd_mask_size",
                _changed(_FORWARD, ("causal_mask(T, device=ids.device)", "causal_mask(16)"))),
             _w("mask without the diagonal", "l07.hint.fwd_no_diagonal",
                _changed(_FORWARD, ("causal_mask(T, device=ids.device)",
                                    "torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)[None, None]"))),
             _w("a sliding window of 8 keys", "l07.hint.fwd_mask_past",
                _changed(_FORWARD, ("causal_mask(T, device=ids.device)",
                                    "((torch.arange(T)[:, None] >= torch.arange(T)[None, :]) "
                                    "& (torch.arange(T)[:, None] - torch.arange(T)[None, :] < 8))[None, None]"))),
             _w("a 2-D (T, T) mask", "l07.hint.fwd_mask_2d",
                _changed(_FORWARD, ("causal_mask(T, device=ids.device)", "torch.ones(T, T, dtype=torch.bool).tril()"))),
             _w("the mask in the first block only", "l07.hint.fwd_leak",
                _changed(_FORWARD, ("    for block in model.blocks:\n        x, _ = block(x, mask=mask)",
                                    "    for i, block in enumerate(model.blocks):\n        x, _ = block(x, mask=mask if i == 0 else None)"))),
             _w("the last position only", "l07.hint.fwd_shape",
                _changed(_FORWARD, ("return model.head(model.norm(x))", "return model.head(model.norm(x))[:, -1]"))),
             _w("positions added twice", "l07.hint.fwd_values",
                _changed(_FORWARD, ("x = model.pos(model.embed(ids))", "x = model.pos(model.pos(model.embed(ids)))"))),
             _w("numpy returned", "l07.hint.not_tensor",
                _changed(_FORWARD, ("return model.head(model.norm(x))", "return model.head(model.norm(x)).detach().numpy()"))),
         ]),
    dict(key="l07.head", lesson=L07, evaluate="attnlab.exercises.l07:evaluate_reversal_head", names=("my_head",),
         args=("model", "my_head"), context=_TINY_MODEL,
         reference=_src(l07.reversal_head) + "\nmy_head = reversal_head(model)\n",
         wrong=[
             _w("the echo head next to it", "l07.hint.head_shifted", "my_head = (2, 2)"),
             _w("a head of the first layer", "l07.hint.head_layer", "my_head = (1, 1)"),
             _w("counted from 0", "l07.hint.head_zero_based", "my_head = (1, 0)"),
             _w("counted from 0, inside the range", "l07.hint.head_zero_based",
                _src(l07.reversal_head) + "\nmy_head = tuple(i - 1 for i in reversal_head(model))\n"),
             _w("no such layer", "l07.hint.head_range", "my_head = (3, 1)"),
             _w("a head of the last layer that does not look at the mirror", "l07.hint.head_other", """
                import copy
                model = copy.deepcopy(model)                     # the lesson's model with its head (2, 1) flattened
                with torch.no_grad():
                    d_k = model.config.d_model // model.config.num_heads
                    model.blocks[1].attention.q_proj.weight[:d_k] = 0
                    model.blocks[1].attention.q_proj.bias[:d_k] = 0
                my_head = (2, 1)"""),
             _w("a string", "l07.hint.head_format", 'my_head = "2, 1"'),
         ]),
]

# ============================================================================ lesson 08
L08 = "08_number_translator"
_TR = ("from attnlab import translator as tr\nfrom attnlab.translator import numwords\nfrom attnlab.exercises import l08\n"
       'LANG = "vi"\nmodel = tr.load_pretrained(LANG)\n')
_STEP = _src(l08.attend_step, alias={"my_attend_step": "attend_step"})
_L08 = [
    dict(key="l08.cache", lesson=L08, evaluate="attnlab.exercises.l08:evaluate_cache_step", names=("my_attend_step",),
         args=("my_attend_step", "model"), context=_TR, reference=_STEP,
         wrong=[
             _w("the new key never cached", "l08.hint.cache_no_append", """
                def my_attend_step(q, k_cache, v_cache, k_new, v_new):
                    k = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=2)
                    v = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=2)
                    out = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v
                    return out, k_cache, v_cache"""),
             _w("the new key in front of the cache", "l08.hint.cache_order",
                _changed(_STEP, ("torch.cat([k_cache, k_new], dim=2)", "torch.cat([k_new, k_cache], dim=2)"),
                         ("torch.cat([v_cache, v_new], dim=2)", "torch.cat([v_new, v_cache], dim=2)"))),
             _w("no scaling", "l08.hint.cache_scale", _changed(_STEP, (" / q.shape[-1] ** 0.5", ""))),
             _w("the weights returned", "l08.hint.cache_weights",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v", "return torch.softmax(scores, dim=-1), k, v"))),
             _w("concatenated on the feature axis", "l08.hint.cache_dim",
                _changed(_STEP, ("torch.cat([k_cache, k_new], dim=2)", "torch.cat([k_cache, k_new], dim=-1)"),
                         ("torch.cat([v_cache, v_new], dim=2)", "torch.cat([v_cache, v_new], dim=-1)"))),
             _w("no empty cache at the first step", "l08.hint.cache_first",
                _changed(_STEP, ("k = k_new if k_cache is None else torch.cat", "k = torch.cat"),
                         ("v = v_new if v_cache is None else torch.cat", "v = torch.cat"))),
             _w("sizes hard-coded from the probe", "l08.hint.cache_sizes",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v",
                                 "return (torch.softmax(scores, dim=-1) @ v).reshape(2, 4, 1, 16), k, v"))),
             _w("(out, k) only", "l08.hint.cache_return_count",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v", "return torch.softmax(scores, dim=-1) @ v, k"))),
             # review 2026-12-01b (student, engineering W2)
             _w("sqrt(d_k) hard-coded from the lesson's model (16)", "l08.hint.cache_scale_fixed",
                _changed(_STEP, ("/ q.shape[-1] ** 0.5", "/ 16 ** 0.5"))),
             _w("attends to the old cache, then appends", "l08.hint.cache_attend_old", """
                def my_attend_step(q, k_cache, v_cache, k_new, v_new):
                    if k_cache is None:
                        k_cache, v_cache = k_new, v_new
                    out = torch.softmax(q @ k_cache.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v_cache
                    return out, torch.cat([k_cache, k_new], dim=2), torch.cat([v_cache, v_new], dim=2)"""),
             _w("only the new key and value attended", "l08.hint.cache_ignored",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v",
                                 "return torch.softmax(q @ k_new.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v_new, k, v"))),
             _w("the value cache reversed", "l08.hint.cache_kv",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v", "return torch.softmax(scores, dim=-1) @ v, k, v.flip(2)"))),
             _w("numpy returned for the keys", "l08.hint.cache_return",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v", "return torch.softmax(scores, dim=-1) @ v, k.numpy(), v"))),
             _w("the position axis squeezed out", "l08.hint.cache_shape",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v", "return (torch.softmax(scores, dim=-1) @ v).squeeze(2), k, v"))),
             _w("the keys used as values", "l08.hint.cache_values",
                _changed(_STEP, ("return torch.softmax(scores, dim=-1) @ v, k, v", "return torch.softmax(scores, dim=-1) @ k, k, v"))),
         ]),
    dict(key="l08.head", lesson=L08, evaluate="attnlab.exercises.l08:evaluate_aligned_head", names=("my_head",),
         args=("model", "my_head"), context=_TR, reference=_src(l08.aligned_head) + "\nmy_head = aligned_head(model)\n",
         wrong=[
             # Read off the lesson's own model (vi and zh checkpoints differ): the same mistakes in both.
             _w("the head that spreads its weight most", "l08.hint.head_weak", """
                m = tr.alignment_mass(model)                     # (layers, heads)
                i = int(m.flatten().argmin())
                my_head = (i // m.shape[1] + 1, i % m.shape[1] + 1)"""),
             _w("a weak head of the last layer", "l08.hint.head_weak", """
                m = tr.alignment_mass(model)
                my_head = (m.shape[0], int(m[-1].argmin()) + 1)"""),
             _w("counted from 0", "l08.hint.head_zero", "my_head = (0, tr.aligned_head(model).head - 1)"),
             _w("counted from 0, inside the range", "l08.hint.head_zero",
                _src(l08.aligned_head) + "\nmy_head = tuple(i - 1 for i in aligned_head(model))\n"),
             _w("no such layer", "l08.hint.head_range", "my_head = (model.config.dec_layers + 1, 1)"),
             _w("a string", "l08.hint.head_format", 'my_head = "2, 3"'),
         ]),
    dict(key="l08.seven", lesson=L08, evaluate="attnlab.exercises.l08:evaluate_seven_digits", names=("my_guess",),
         args=("model", "my_guess"), context=_TR, reference=f"my_guess = {l08.SEVEN_DIGITS!r}\n",
         wrong=[
             dict(_w("A: it reads the number right", "l08.hint.seven_right_vocab", 'my_guess = "A"'),
                  hint_by_lang={"zh": "l08.hint.seven_right"}),   # the zh model's vocabulary is complete
             _w("C: an error", "l08.hint.seven_error", 'my_guess = "C"'),
             _w("not a choice", "l08.hint.seven_format", 'my_guess = "D"'),
             _w("two choices", "l08.hint.seven_format", 'my_guess = "A or B"'),
         ]),
]

# ============================================================================ lesson 09: the capstone
L09 = "09_capstone"
_MHA = textwrap.dedent(inspect.getsource(capstone.MultiHeadAttention))
_BLOCK = textwrap.dedent(inspect.getsource(capstone.TransformerBlock))
_SPLIT = _src(capstone_steps.split_heads)
_SCORES = _src(capstone_steps.attention_scores)
_APPLY_MASK = _src(capstone_steps.apply_mask)
_MERGE = _src(capstone_steps.merge_heads)
_STEPS = "attnlab.exercises.capstone_steps:evaluate_"
_L09 = [
    dict(key="capstone.split", lesson=L09, evaluate=_STEPS + "split", names=("split_heads",), reference=_SPLIT,
         wrong=[
             _w("viewed straight into (B, H, L, d_k)", "capstone_steps.hint.split_no_transpose",
                _changed(_SPLIT, ("x.view(B, L, num_heads, D // num_heads).transpose(1, 2)",
                                  "x.view(B, num_heads, L, D // num_heads)"))),
             _w("(B, L, H, d_k): the transpose forgotten", "capstone_steps.hint.split_shape",
                _changed(_SPLIT, (".transpose(1, 2)", ""))),
             _w("transpose(2, 3) instead of (1, 2)", "capstone_steps.hint.split_shape",
                _changed(_SPLIT, (".transpose(1, 2)", ".transpose(2, 3)"))),
             _w("features dealt out to the heads in turn", "capstone_steps.hint.split_values",
                _changed(_SPLIT, ("x.view(B, L, num_heads, D // num_heads).transpose(1, 2)",
                                  "x.view(B, L, D // num_heads, num_heads).permute(0, 3, 1, 2)"))),
             _w("d_k = D / num_heads: a float", "ex.cause.float_int",
                _changed(_SPLIT, ("D // num_heads", "D / num_heads"))),
         ]),
    dict(key="capstone.scores", lesson=L09, evaluate=_STEPS + "scores", names=("attention_scores",), reference=_SCORES,
         wrong=[
             _w("no scaling", "capstone_steps.hint.scores_no_scale", _changed(_SCORES, (" / q.shape[-1] ** 0.5", ""))),
             _w("divided by d_k", "capstone_steps.hint.scores_dk",
                _changed(_SCORES, ("q.shape[-1] ** 0.5", "q.shape[-1]"))),
             _w("k @ qᵀ: keys as rows", "capstone_steps.hint.scores_transposed",
                _changed(_SCORES, ("q @ k.transpose(-2, -1)", "k @ q.transpose(-2, -1)"))),
             _w("square root of d_model = H · d_k", "capstone_steps.hint.scores_values",
                _changed(_SCORES, ("q.shape[-1] ** 0.5", "(q.shape[1] * q.shape[-1]) ** 0.5"))),
             _w("square root of the number of keys", "capstone_steps.hint.scores_values",
                _changed(_SCORES, ("q.shape[-1] ** 0.5", "k.shape[-2] ** 0.5"))),
             _w("sqrt(d_k) hard-coded as 2 (d_k = 4 in the lesson)", "capstone_steps.hint.scores_fixed",
                _changed(_SCORES, (" / q.shape[-1] ** 0.5", " / 2"))),
             _w("the heads summed", "capstone_steps.hint.scores_shape",
                _changed(_SCORES, ("return q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5", "return (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).sum(1)"))),
             _w("Q transposed instead of K", "ex.cause.shapes",
                _changed(_SCORES, ("q @ k.transpose(-2, -1)", "q.transpose(-2, -1) @ k"))),
         ]),
    dict(key="capstone.mask", lesson=L09, evaluate=_STEPS + "mask", names=("apply_mask",), reference=_APPLY_MASK,
         wrong=[
             _w("mask inverted", "capstone_steps.hint.mask_inverted", _changed(_APPLY_MASK, ("masked_fill(~mask,", "masked_fill(mask,"))),
             _w("masked scores set to 0", "capstone_steps.hint.mask_zero", _changed(_APPLY_MASK, ('float("-inf")', "0.0"))),
             _w("scores multiplied by the mask", "capstone_steps.hint.mask_zero",
                _changed(_APPLY_MASK, ('scores.masked_fill(~mask, float("-inf"))', "scores * mask"))),
             _w("the softmax taken already", "capstone_steps.hint.mask_softmax",
                _changed(_APPLY_MASK, ('return scores.masked_fill(~mask, float("-inf"))',
                                       'return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)'))),
             _w("a causal mask of its own, the argument ignored", "capstone_steps.hint.mask_values",
                _changed(_APPLY_MASK, ('masked_fill(~mask,', 'masked_fill(~torch.ones_like(scores, dtype=torch.bool).tril(),'))),
             _w("the first batch only", "capstone_steps.hint.mask_shape",
                _changed(_APPLY_MASK, ('float("-inf"))', 'float("-inf"))[0]'))),
         ]),
    dict(key="capstone.merge", lesson=L09, evaluate=_STEPS + "merge", names=("merge_heads",), reference=_MERGE,
         wrong=[
             _w("reshaped without the transpose", "capstone_steps.hint.merge_no_transpose",
                _changed(_MERGE, ("x.transpose(1, 2).reshape(B, T, H * d_k)", "x.reshape(B, T, H * d_k)"))),
             _w("viewed without the transpose", "capstone_steps.hint.merge_no_transpose",
                _changed(_MERGE, ("x.transpose(1, 2).reshape(B, T, H * d_k)", "x.view(B, T, H * d_k)"))),
             _w("features interleaved across the heads", "capstone_steps.hint.merge_values",
                _changed(_MERGE, ("x.transpose(1, 2).reshape(", "x.permute(0, 2, 3, 1).reshape("))),
             _w("transposed but never merged", "capstone_steps.hint.merge_shape",
                _changed(_MERGE, ("x.transpose(1, 2).reshape(B, T, H * d_k)", "x.transpose(1, 2)"))),
             _w("batch and positions flattened together", "capstone_steps.hint.merge_shape",
                _changed(_MERGE, ("reshape(B, T, H * d_k)", "reshape(B * T, H * d_k)"))),
         ]),
    dict(key="capstone.multihead", lesson=L09, evaluate="attnlab.exercises.capstone:evaluate_multihead",
         names=("MultiHeadAttention",), reference=_MHA,
         wrong=[
             _w("value ignored: v_proj(key)", "capstone.hint.value_ignored",
                _changed(_MHA, ("self.v_proj(value)", "self.v_proj(key)"))),
             _w("value defaults to query", "capstone.hint.value_default",
                _changed(_MHA, ("value = key if value is None else value", "value = query if value is None else value"))),
             _w("out_proj never applied", "capstone.hint.no_out_proj",
                _changed(_MHA, ("return self.out_proj(out), weights", "return out, weights"))),
             _w("no scaling", "capstone.hint.no_scale", _changed(_MHA, (" / self.d_k ** 0.5", ""))),
             _w("scaled by the square root of d_model", "capstone.hint.scale_d_model",
                _changed(_MHA, ("self.d_k ** 0.5", "(self.num_heads * self.d_k) ** 0.5"))),
             _w("heads merged without the transpose", "capstone.hint.merge_heads",
                _changed(_MHA, ("out.transpose(1, 2).reshape(B, T, H * d_k)", "out.reshape(B, T, H * d_k)"))),
             _w("mask inverted", "capstone.hint.mask_inverted", _changed(_MHA, ("masked_fill(~mask,", "masked_fill(mask,"))),
             _w("masked scores set to 0", "capstone.hint.mask_zero", _changed(_MHA, ('float("-inf")', "0.0"))),
             _w("(weights, out) returned", "capstone.hint.return_order",
                _changed(_MHA, ("return self.out_proj(out), weights", "return weights, self.out_proj(out)"))),
             _w("d_k = d_model / num_heads: a float", "ex.cause.float_int",
                _changed(_MHA, ("d_model // num_heads", "d_model / num_heads"))),
             _w("keys and values from the query", "capstone.hint.kv_from_query",
                _changed(_MHA, ("self.k_proj(key)", "self.k_proj(query)"), ("self.v_proj(value)", "self.v_proj(query)"))),
             _w("heads viewed straight out of (B, T, D)", "capstone.hint.split_heads",
                _changed(_MHA, ("x.view(B, L, self.num_heads, self.d_k).transpose(1, 2)", "x.view(B, self.num_heads, L, self.d_k)"))),
             _w("mask never applied", "capstone.hint.mask_ignored",
                _changed(_MHA, ('            scores = scores.masked_fill(~mask, float("-inf"))\n', '            pass\n'))),
             _w("softmax over the queries", "capstone.hint.softmax_dim",
                _changed(_MHA, ("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)"))),
             _w("the query's length used to split the keys", "capstone.hint.cross_sizes",
                _changed(_MHA, ("    def split_heads(self, x):\n        B, L, D = x.shape", "    def split_heads(self, x, L=None):\n        B, _, D = x.shape\n        L = x.shape[1] if L is None else L"),
                         ("k = self.split_heads(self.k_proj(key))", "k = self.split_heads(self.k_proj(key), query.shape[1])"),
                         ("v = self.split_heads(self.v_proj(value))", "v = self.split_heads(self.v_proj(value), query.shape[1])"))),
             _w("only the output returned", "capstone.hint.return_pair",
                _changed(_MHA, ("return self.out_proj(out), weights", "return self.out_proj(out)"))),
             _w("the weights averaged over the heads", "capstone.hint.shapes",
                _changed(_MHA, ("return self.out_proj(out), weights", "return self.out_proj(out), weights.mean(1)"))),
             _w("the weights transposed", "capstone.hint.weights_mismatch",
                _changed(_MHA, ("return self.out_proj(out), weights", "return self.out_proj(out), weights.transpose(-2, -1)"))),
             _w("weights slightly too large", "capstone.hint.mha_mismatch",
                _changed(_MHA, ("weights = torch.softmax(scores, dim=-1)", "weights = 1.01 * torch.softmax(scores, dim=-1)"))),
             _w("other submodule names", "capstone.hint.names",
                _changed(_MHA, ("self.q_proj = nn.Linear(d_model, d_model)", "self.W_q = nn.Linear(d_model, d_model)"),
                         ("self.split_heads(self.q_proj(query))", "self.split_heads(self.W_q(query))"))),
             # review 2026-12-01b (student; engineering W8)
             _w("d_k hard-coded as 4 (the lesson's 12 / 3)", "capstone.hint.scale_fixed",
                _changed(_MHA, ("/ self.d_k ** 0.5", "/ 4 ** 0.5"))),
             _w("num_heads hard-coded as 3", "capstone.hint.sizes_fixed",
                _changed(_MHA, ("self.num_heads, self.d_k = num_heads, d_model // num_heads",
                                "self.num_heads, self.d_k = 3, d_model // 3"))),
             _w("the scores returned instead of the weights", "capstone.hint.weights_scores",
                _changed(_MHA, ("return self.out_proj(out), weights", "return self.out_proj(out), scores"))),
             _w("mask applied after the softmax", "capstone.hint.mask_after_softmax",
                _changed(_MHA, ('        if mask is not None:\n            scores = scores.masked_fill(~mask, float("-inf"))\n'
                                '        weights = torch.softmax(scores, dim=-1)\n',
                                '        weights = torch.softmax(scores, dim=-1)\n'
                                '        if mask is not None:\n            weights = weights.masked_fill(~mask, 0.0)\n'))),
         ]),
    dict(key="capstone.block", lesson=L09, evaluate="attnlab.exercises.capstone:evaluate_block",
         names=("TransformerBlock",), context=_MHA, reference=_BLOCK,
         wrong=[
             _w("no dropout inside the FFN", "capstone.hint.ffn_dropout",
                _changed(_BLOCK, ("self.linear2(self.dropout(torch.relu(self.linear1(x))))", "self.linear2(torch.relu(self.linear1(x)))"))),
             _w("dropout never applied", "capstone.hint.dropout_never",
                _changed(_BLOCK, ("self.linear2(self.dropout(torch.relu(self.linear1(x))))", "self.linear2(torch.relu(self.linear1(x)))"),
                         ("self.dropout = nn.Dropout(dropout)", "self.dropout = nn.Identity()"))),
             _w("F.dropout on in eval mode too", "capstone.hint.dropout_eval",
                _changed(_BLOCK, ("self.linear2(self.dropout(torch.relu(self.linear1(x))))",
                                  "self.linear2(F.dropout(torch.relu(self.linear1(x)), self.dropout.p))"))),
             _w("only the FFN's inner dropout", "capstone.hint.dropout_outputs",
                _changed(_BLOCK, ("x + self.dropout(self.attention(self.norm1(x), mask=mask)[0])",
                                  "x + self.attention(self.norm1(x), mask=mask)[0]"),
                         ("x + self.dropout(self.ffn(self.norm2(x)))", "x + self.ffn(self.norm2(x))"),
                         ("x + self.dropout(self.attention(x, mask=mask)[0])", "x + self.attention(x, mask=mask)[0]"),
                         ("x + self.dropout(self.ffn(x))", "x + self.ffn(x)"))),
             _w("the attention's (out, weights) pair used as a tensor", "ex.cause.tuple",
                _changed(_BLOCK, ("self.dropout(self.attention(x, mask=mask)[0])", "self.dropout(self.attention(x, mask=mask))"))),
             _w("pre-LN and post-LN swapped", "capstone.hint.pre_post_swapped",
                _changed(_BLOCK, ("if self.norm_first:", "if not self.norm_first:"))),
             _w("mask not passed on", "capstone.hint.block_mask", _changed(_BLOCK, (", mask=mask)", ")"))),
             _w("no residual around the FFN", "capstone.hint.no_residual",
                _changed(_BLOCK, ("x = x + self.dropout(self.ffn(self.norm2(x)))", "x = self.dropout(self.ffn(self.norm2(x)))"),
                         ("x = self.norm2(x + self.dropout(self.ffn(x)))", "x = self.norm2(self.dropout(self.ffn(x)))"))),
             _w("a block on exercise 1 without the scale", "capstone.hint.attention_first",
                _changed(_MHA, (" / self.d_k ** 0.5", "")) + "\n\n" + _BLOCK),
             _w("defaults other than the interface's", "capstone.hint.block_defaults",
                _changed(_BLOCK, ("dropout=0.1, norm_first=False,", "dropout=0.3, norm_first=False,"))),
             _w("the feed-forward output doubled", "capstone.hint.block_mismatch",
                _changed(_BLOCK, ("return self.linear2(self.dropout(torch.relu(self.linear1(x))))",
                                  "return 2 * self.linear2(self.dropout(torch.relu(self.linear1(x))))"))),
             _w("the last position only", "capstone.hint.block_shape", _changed(_BLOCK, ("        return x\n", "        return x[:, -1]\n"))),
             _w("dropout after the LayerNorm", "capstone.hint.dropout_where",
                _changed(_BLOCK, ("x = self.norm1(x + self.dropout(self.attention(x, mask=mask)[0]))",
                                  "x = self.dropout(self.norm1(x + self.attention(x, mask=mask)[0]))"),
                         ("x = self.norm2(x + self.dropout(self.ffn(x)))", "x = self.dropout(self.norm2(x + self.ffn(x)))"))),
             _w("the FFN in an nn.Sequential", "capstone.hint.names",
                _changed(_BLOCK, ("self.linear1 = nn.Linear(d_model, d_ff)\n        self.linear2 = nn.Linear(d_ff, d_model)",
                                  "self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))"),
                         ("return self.linear2(self.dropout(torch.relu(self.linear1(x))))", "return self.ff(x)"))),
             # review 2026-12-01b (student)
             _w("returns (x, None)", "capstone.hint.block_tuple", _changed(_BLOCK, ("        return x\n", "        return x, None\n"))),
             _w("nn.Dropout(0.1): the dropout argument ignored", "capstone.hint.dropout_p",
                _changed(_BLOCK, ("nn.Dropout(dropout)", "nn.Dropout(0.1)"))),
             _w("GELU instead of ReLU", "capstone.hint.ffn_activation", _changed(_BLOCK, ("torch.relu(", "F.gelu("))),
             _w("norm1 used twice", "capstone.hint.norm_twice",
                _changed(_BLOCK, ("self.ffn(self.norm2(x))", "self.ffn(self.norm1(x))"),
                         ("x = self.norm2(x + self.dropout(self.ffn(x)))", "x = self.norm1(x + self.dropout(self.ffn(x)))"))),
             _w("pre-LN residual taken from the normalised x", "capstone.hint.residual_normed",
                _changed(_BLOCK, ("x = x + self.dropout(self.attention(self.norm1(x), mask=mask)[0])",
                                  "x = self.norm1(x)\n            x = x + self.dropout(self.attention(x, mask=mask)[0])"),
                         ("x = x + self.dropout(self.ffn(self.norm2(x)))",
                          "x = self.norm2(x)\n            x = x + self.dropout(self.ffn(x))"))),
         ]),
]

#: Registry entries without a TODO cell of their own, so without a catalogue entry: lesson 09 §5 plugs
#: the block of exercise 2 into lesson 07's model (tests/test_exercises_capstone_steps.py tests it).
WITHOUT_TODO = frozenset({"capstone_steps.in_tiny_model"})

EXERCISES: list[dict] = _L01 + _L02 + _L03 + _L04 + _L05 + _L06 + _L07 + _L08 + _L09
for _entry in EXERCISES:
    _entry.setdefault("context", "")
    _entry.setdefault("args", _entry["names"])
    _entry["todo"] = _todo(_entry["lesson"], _entry["names"])


def namespace(entry: dict) -> dict:
    """A namespace like the notebook's at the exercise: ``BASE`` and the entry's context, executed."""
    ns: dict = {"__name__": "__lesson__"}
    exec(compile(BASE + entry["context"], f"<{entry['key']} context>", "exec"), ns)   # noqa: S102
    return ns


def cell(source: str, label: str) -> object:
    """``source`` compiled as a notebook cell is: under a file name that ``linecache`` knows (as
    IPython does), so ``inspect.getsource`` finds the source of what it defines (the checkers read
    the source for forbidden calls)."""
    filename = f"<{label} {hashlib.sha1(source.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return compile(source, filename, "exec")


def evaluator(entry: dict):
    module, function = entry["evaluate"].split(":")
    return getattr(importlib.import_module(module), function)


def registry_key(entry: dict) -> str:
    """The entry's key in ``attnlab.exercises.EXERCISES``: ``<module>.<evaluate_x without "evaluate_">``
    (``l04.causal_mask``), as a grader derives it from the check call."""
    module, function = entry["evaluate"].split(":")
    return f"{module.rsplit('.', 1)[1]}.{function.removeprefix('evaluate_')}"


def takes_seed(entry: dict) -> bool:
    """Is the entry's checker split into probe and judge (it takes ``seed=``)?"""
    return "seed" in inspect.signature(evaluator(entry)).parameters


def run(entry: dict, source: str, lang: str = "en", ns: dict | None = None, seed: int | None = None):
    """The checker's Feedback for ``source`` (defining ``entry['names']``), executed on a copy of
    ``ns`` (default: a fresh ``namespace(entry)``); ``seed``: the probe's seed (None: a fresh one),
    for the checkers that take one."""
    ns = dict(namespace(entry) if ns is None else ns)
    exec(cell(source, f"{entry['key']} solution"), ns)                                 # noqa: S102
    evaluate = evaluator(entry)
    kwargs = {"lang": lang, **({"seed": seed} if seed is not None and takes_seed(entry) else {})}
    return evaluate(*(eval(a, ns) for a in entry["args"]), **kwargs)                  # noqa: S307
