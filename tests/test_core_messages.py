"""The core's input checks speak the course language: after ``set_language("vi"/"zh")`` a bad
mask, size or shape is explained in Vietnamese or Chinese (messages/core_checks.json), in English
by default; no check of the core writes its sentence in the code."""
import ast
import pathlib

import pytest
import torch

import attnlab
from attnlab import MultiHeadAttention, PositionalEncoding, causal_mask, padding_mask, scaled_dot_product_attention
from attnlab.course.i18n import t

PACKAGE = pathlib.Path(attnlab.__file__).resolve().parent
CORE = ["_checks.py", "attention.py", "masks.py", "multihead.py", "block.py", "positional.py", "poet/model.py"]

D, H = 8, 2


def _raises(fn):
    with pytest.raises((TypeError, ValueError)) as err:
        fn()
    return str(err.value)


CASES = [  # (what goes wrong, the message key, its fields)
    (lambda: MultiHeadAttention(10, 3), "checks.heads_divide", dict(d_model=10, num_heads=3)),
    (lambda: MultiHeadAttention(0, 2), "checks.int_positive", dict(name="d_model", got="0")),
    (lambda: scaled_dot_product_attention(*[torch.randn(1, 1, 4, 8)] * 3, mask=torch.zeros(1, 1, 4, 4)),
     "checks.mask_float", dict(dtype="torch.float32")),
    (lambda: MultiHeadAttention(D, H)(torch.randn(2, 4, D), mask=torch.ones(4, 4, dtype=torch.bool)),
     "checks.attn_mask_fit", dict(shape="(4, 4)", target="(2, 2, 4, 4)", fix=None)),
    (lambda: causal_mask(4, 2), "checks.causal_s_lt_t", dict(what="causal_mask", T=4, S=2)),
    (lambda: padding_mask(torch.zeros(2, 3)), "checks.token_ids_dtype", dict(dtype="torch.float32")),
    (lambda: MultiHeadAttention(D, H, cross=True)(torch.randn(1, 2, D)), "checks.cross_needs_key", {}),
    (lambda: MultiHeadAttention(D, H)(torch.randn(1, 1, D), torch.randn(1, 1, D), use_cache=True),
     "checks.self_cache_key", {}),
    (lambda: PositionalEncoding(D, max_len=4)(torch.randn(1, 6, D)), "checks.pe_too_long", dict(T=6, max_len=4)),
    (lambda: scaled_dot_product_attention(torch.randn(5), torch.randn(5), torch.randn(5)),
     "checks.tensor_ndim", dict(name="q", want=None, shape="(5,)")),
]


@pytest.mark.parametrize("lang", ["en", "vi", "zh"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[1] for c in CASES])
def test_the_core_checks_speak_the_course_language(lang, case):
    fn, key, fields = CASES[case]
    attnlab.set_language(lang)
    message = _raises(fn)
    if key == "checks.attn_mask_fit":
        fields = {**fields, "fix": t("checks.mask_fix_2d", lang=lang)}
    if key == "checks.tensor_ndim":
        fields = {**fields, "want": "2" + t("checks.list_sep", lang=lang) + "3" + t("checks.list_or", lang=lang) + "4"}
    assert message == t(key, lang=lang, **fields)
    if lang != "en":
        assert message != t(key, lang="en", **fields)


def test_the_english_messages_stay_precise():
    assert _raises(CASES[0][0]) == ("d_model=10 is not divisible by num_heads=3: each head needs "
                                    "d_k = d_model / num_heads dimensions")
    float_hint = _raises(CASES[2][0])
    assert "`mask == 0`" in float_hint and "`mask == 1`" in float_hint and "Not with `mask.bool()`" in float_hint


def _literal_messages(path: pathlib.Path):
    """`raise X("...")` / `raise X(f"...")`: a sentence written in the code instead of the catalogue."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            first = node.exc.args[0]
            if isinstance(first, (ast.JoinedStr, ast.Constant)) and not (
                    isinstance(first, ast.Constant) and not isinstance(first.value, str)):
                yield f"{path.relative_to(PACKAGE)}:{node.lineno}"


def test_no_core_check_writes_its_sentence_in_the_code():
    found = [where for name in CORE for where in _literal_messages(PACKAGE / name)]
    assert not found, f"messages outside messages/core_checks.json: {found}"
