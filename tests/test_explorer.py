"""The attention explorer: the pure functions (compute, render) and the widget, without a browser.

Runs under ipywidgets 8 and 7.7 (see test_explorer_ipywidgets7.py).
"""
import io
import os

import ipywidgets
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure
from PIL import Image

import attnlab
from attnlab import explorer as ex
from attnlab.explorer import ALL_HEADS, MASK_TYPES, ExplorerState, InputError, compute, render, to_png
from attnlab.i18n import LANGUAGES, t

matplotlib.use("Agg")

EN = "The cat sat on the mat because it was tired"
VI = "Con mèo ngồi trên tấm thảm vì nó mệt"
ZH = "小猫坐在垫子上因为它累了"

# Bad input: control changes (the last one breaks it), catalog key, fields.
# 🤖 and 🎉 are drawn by no course font (😀 is: DejaVu Sans has it).
BAD_INPUTS = {
    "empty": ([("sentence", "")], "explorer.error.empty", {}),
    "blank": ([("sentence", "   \t ")], "explorer.error.empty", {}),
    "emoji": ([("sentence", "Tôi yêu 🤖 bạn 🎉")], "explorer.error.chars", {"chars": "🤖 🎉"}),
    "too_long": ([("pad", 0), ("sentence", " ".join(["w"] * 33))], "explorer.error.too_long", {"n": 33, "max": 32}),
    "too_long_zh": ([("pad", 0), ("sentence", "我" * 40)], "explorer.error.too_long", {"n": 40, "max": 32}),
    "pad_overflow": ([("sentence", " ".join(["w"] * 30)), ("pad", 3)], "explorer.error.too_long_pad",
                     {"n": 30, "pad": 3, "total": 33, "max": 32}),
}


def png_size(png: bytes) -> tuple:
    return Image.open(io.BytesIO(png)).size


# ----------------------------------------------------------------------------- compute

def test_compute_default_shapes_and_rows_sum_to_one():
    tokens, weights, mask, message = compute(ExplorerState())
    assert tokens == EN.split() + ["<pad>", "<pad>"]
    assert weights.shape == (8, 12, 12) and mask.shape == (12, 12) and mask.all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(8, 12))
    assert message == ""


def test_compute_is_deterministic_and_leaves_the_global_rng_alone():
    ex._model.cache_clear()
    ex._embedding.cache_clear()
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a = compute(ExplorerState(mask="causal", num_heads=4))
    assert torch.equal(torch.random.get_rng_state(), before)
    ex._model.cache_clear()
    ex._embedding.cache_clear()
    b = compute(ExplorerState(mask="causal", num_heads=4))
    assert torch.equal(a.weights, b.weights)


def test_same_word_same_embedding_and_heads_share_projections():
    w = compute(ExplorerState(sentence="the cat the", pad=0)).weights
    torch.testing.assert_close(w[:, 0], w[:, 2])          # no positions: equal tokens, equal rows
    one, eight = ex._model(1), ex._model(8)
    assert torch.equal(one.q_proj.weight, eight.q_proj.weight)


@pytest.mark.parametrize("side", ["left", "right"])
def test_masks(side):
    base = ExplorerState(sentence="a b c d", pad=2, pad_side=side)
    is_pad = torch.tensor(ex.pad_flags(base, 6))
    assert is_pad.tolist() == ([True, True] + [False] * 4 if side == "left" else [False] * 4 + [True, True])
    masks = {m: compute(base.replace(mask=m)).mask for m in MASK_TYPES}
    assert masks["none"].all()
    assert torch.equal(masks["padding"], (~is_pad)[None].expand(6, 6))
    assert torch.equal(masks["causal"], torch.ones(6, 6, dtype=torch.bool).tril())
    assert torch.equal(masks["causal+padding"], masks["causal"] & masks["padding"])
    for m in MASK_TYPES:
        w = compute(base.replace(mask=m)).weights
        assert (w[:, ~masks[m]] == 0).all()


def test_left_padding_with_causal_mask_gives_zero_rows_and_a_note():
    r = compute(ExplorerState(sentence="a b c", pad=2, pad_side="left", mask="causal+padding"))
    assert ex.empty_rows(r.mask) == 2
    assert (r.weights[:, :2] == 0).all() and torch.isfinite(r.weights).all()
    torch.testing.assert_close(r.weights[:, 2:].sum(-1), torch.ones(8, 3))
    assert r.message == t("explorer.note.empty_rows", "en", n=2)
    right = compute(ExplorerState(sentence="a b c", pad=2, pad_side="right", mask="causal+padding"))
    assert ex.empty_rows(right.mask) == 0 and right.message == ""


def test_padding_mask_without_pad_tokens_says_so():
    assert compute(ExplorerState(mask="padding", pad=0)).message == t("explorer.note.no_pad", "en")


def test_unscaled_scores_saturate_the_softmax():
    scaled = compute(ExplorerState(num_heads=1, pad=0)).weights
    unscaled = compute(ExplorerState(num_heads=1, pad=0, scaled=False)).weights
    assert unscaled.amax(-1).mean() > 0.7 and scaled.amax(-1).mean() < 0.4


@pytest.mark.parametrize("sentence,tokens", [
    (VI, VI.split()),
    (ZH, list(ZH)),
    ("我爱你。", ["我", "爱", "你", "。"]),
])
def test_tokenization(sentence, tokens):
    r = compute(ExplorerState(sentence=sentence, pad=0))
    assert r.tokens == tokens and r.message == ""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_mixed_scripts_are_tokenized_with_a_note(lang):
    r = compute(ExplorerState(sentence="Tôi yêu 中文 lắm", pad=0, lang=lang))
    assert r.tokens == ["Tôi", "yêu", "中", "文", "lắm"]
    assert r.message == t("explorer.note.mixed", lang)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_gives_a_message_in_the_ui_language(case, lang):
    changes, key, values = BAD_INPUTS[case]
    with pytest.raises(InputError) as info:
        compute(ExplorerState(lang=lang, **dict(changes)))
    assert info.value.message == t(key, lang, **values)
    assert "\n" not in info.value.message


def test_state_rejects_impossible_values():
    for bad in (dict(mask="diagonal"), dict(num_heads=3), dict(head=8), dict(num_heads=2, head=2),
                dict(pad=-1), dict(pad=99), dict(pad_side="top"), dict(lang="fr")):
        with pytest.raises(ValueError):
            ExplorerState(**bad)


# ----------------------------------------------------------------------------- render

@pytest.mark.parametrize("state", [
    ExplorerState(),
    ExplorerState(num_heads=1, scaled=False),
    ExplorerState(head=3, annotate=True, mask="causal"),
    ExplorerState(sentence=" ".join(["word"] * 30), pad=2, mask="causal+padding", pad_side="left"),
    ExplorerState(sentence=ZH, lang="zh", num_heads=2, annotate=True),
])
def test_render_has_a_fixed_size_and_stays_out_of_pyplot(state):
    before = plt.get_fignums()
    fig = render(state)
    assert isinstance(fig, Figure) and plt.get_fignums() == before
    assert png_size(to_png(fig)) == (720, 432)
    assert png_size(to_png(render(state.replace(large=True)))) == (864, 518)


def test_render_is_deterministic_and_reacts_to_every_control():
    base = ExplorerState()
    png = to_png(render(base))
    assert to_png(render(base)) == png
    for change in (dict(mask="causal"), dict(num_heads=2), dict(head=0), dict(pad=3), dict(pad_side="left"),
                   dict(scaled=False), dict(head=0, annotate=True), dict(lang="vi"), dict(sentence=VI)):
        assert to_png(render(base.replace(**change))) != png, change


def test_redrawing_a_canvas_in_place_gives_the_same_picture_as_a_new_one():
    canvas = ex.new_canvas()
    for state in (ExplorerState(annotate=True, head=0), ExplorerState(mask="causal+padding", pad_side="left"),
                  ExplorerState(sentence=ZH, lang="zh", num_heads=2), ExplorerState(num_heads=1, scaled=False)):
        fig, _ = ex.draw(state, compute(state), canvas)
        assert fig is canvas.fig
        assert canvas.png() == to_png(render(state)), state


def test_cached_text_looks_like_text():
    """The bitmap cache must not change what a label looks like."""
    from matplotlib.text import Text

    from attnlab.heatmap_grid import CachedText

    def draw(cls):
        fig = Figure(figsize=(2, 1), dpi=80)
        for k, (s, rot) in enumerate([("Tôi", 0), ("注意力", 0), ("because", 90)]):
            fig.add_artist(cls(0.2 + 0.3 * k, 0.5, s, ha="center", va="center", rotation=rot, fontsize=9))
        return np.asarray(Image.open(io.BytesIO(to_png(fig)))).astype(int)

    plain, cached, again = draw(Text), draw(CachedText), draw(CachedText)
    assert np.array_equal(cached, again)
    assert np.abs(plain - cached).max(-1).astype(bool).mean() < 0.02     # at most a 1-pixel shift


def test_plot_grid_is_a_pyplot_figure_mask_by_head():
    fig = ex.plot_grid(num_heads=2, lang="zh")
    try:
        assert fig.number in plt.get_fignums()
        assert len(fig.axes[0].images) == len(MASK_TYPES) * 2 + 1     # panels + colour bar
    finally:
        plt.close(fig)


# ----------------------------------------------------------------------------- widget

def test_widget_runs_under_the_expected_ipywidgets():
    expected = os.environ.get("ATTNLAB_EXPECT_IPYWIDGETS")
    if expected:
        assert ipywidgets.__version__.split(".")[0] == expected, ipywidgets.__version__


def test_widget_construct_and_defaults():
    w = attnlab.explore(lang="vi", mask="causal", num_heads=4)
    assert isinstance(w, attnlab.AttentionExplorer) and isinstance(w, ipywidgets.VBox)
    assert w.state == ExplorerState(sentence=VI, lang="vi", mask="causal", num_heads=4)
    assert w.controls["sentence"].value == VI and w.controls["head"].value == ALL_HEADS
    assert png_size(w.image.value) == (720, 432)
    assert w.image.layout.height == "432px"
    assert w.read_state() == w.state


def test_widget_starting_with_bad_input_shows_the_message():
    w = attnlab.explore(lang="vi", sentence="🤖")
    assert html_text(w.message.value) == "⚠ " + t("explorer.error.chars", "vi", chars="🤖")
    assert w.image.value == b""
    w.controls["sentence"].value = VI
    assert "⚠" not in w.message.value and png_size(w.image.value) == (720, 432)


def test_widget_default_language_follows_the_course():
    attnlab.set_language("zh")
    try:
        assert attnlab.explore().state.sentence == ZH
    finally:
        attnlab.set_language("en")


def test_widget_control_changes_change_the_image():
    w = attnlab.explore(lang="en")
    seen = {w.image.value}
    for name, value in [("mask", "causal"), ("mask", "causal+padding"), ("num_heads", 2), ("num_heads", 1),
                        ("pad", 4), ("pad_side", "left"), ("scaled", False), ("num_heads", 8), ("head", 5),
                        ("annotate", True), ("sentence", ZH)]:
        w.controls[name].value = value
        assert w.message.value.count("⚠") == 0, (name, w.message.value)
        assert w.image.value not in seen, name
        seen.add(w.image.value)
        assert getattr(w.state, name) == value


def test_widget_head_options_follow_the_head_count():
    w = attnlab.explore(lang="en")
    assert len(w.controls["head"].options) == 9
    w.controls["head"].value = 1
    w.controls["num_heads"].value = 2
    assert [v for _, v in w.controls["head"].options] == [ALL_HEADS, 0, 1] and w.controls["head"].value == 1
    w.controls["num_heads"].value = 1
    assert w.controls["head"].value == ALL_HEADS and w.state.num_heads == 1


def _labels(w):
    return {name: (c.description, tuple(label for label, _ in getattr(c, "options", ())))
            for name, c in w.controls.items()}


def test_widget_language_switch_relabels_every_control():
    w = attnlab.explore(lang="en", mask="causal", pad_side="left", head=2)
    labels = {"en": _labels(w)}
    for lang in ("vi", "zh", "en"):
        values = {name: c.value for name, c in w.controls.items() if name != "lang"}
        w.controls["lang"].value = lang
        labels[lang] = _labels(w)
        assert {name: c.value for name, c in w.controls.items() if name != "lang"} == values
        assert w.state.lang == lang
        assert labels[lang]["mask"] == (t("explorer.mask", lang),
                                        tuple(t(f"explorer.mask.{m}", lang) for m in MASK_TYPES))
        assert w.controls["sentence"].placeholder == t("explorer.sentence_hint", lang)
    for name in w.controls:
        if name != "lang":
            assert labels["vi"][name][0] != labels["en"][name][0] != labels["zh"][name][0], name
    assert labels["vi"]["head"][1][1] == "đầu 1" and labels["zh"]["head"][1][0] == "所有头"
    assert labels["vi"]["lang"][1] == labels["zh"]["lang"][1] == ("Tiếng Việt", "中文", "English")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_widget_bad_input_shows_a_message_and_keeps_the_last_figure(lang):
    w = attnlab.explore(lang=lang)
    first_png, first_state = w.image.value, w.state
    for case, (changes, key, values) in BAD_INPUTS.items():
        for name, value in changes[:-1]:
            w.controls[name].value = value
        assert "⚠" not in w.message.value
        good_png, good_state = w.image.value, w.state
        name, value = changes[-1]
        w.controls[name].value = value
        assert html_text(w.message.value) == "⚠ " + t(key, lang, **values), case
        assert w.image.value == good_png and w.state == good_state, case
        w.controls["sentence"].value = first_state.sentence
        w.controls["pad"].value = first_state.pad
        assert "⚠" not in w.message.value and w.image.value == first_png
    w.controls["sentence"].value = "🤖"
    w.controls["lang"].value = "vi" if lang != "vi" else "zh"     # the message follows the language
    assert html_text(w.message.value) == "⚠ " + t("explorer.error.chars", w.controls["lang"].value, chars="🤖")


def html_text(value: str) -> str:
    import html
    import re
    return html.unescape(re.sub(r"<[^>]+>", "", value))


def test_widget_unexpected_error_is_one_line_and_keeps_the_figure(monkeypatch):
    w = attnlab.explore(lang="en")
    good = w.image.value

    def broken(*args):
        raise RuntimeError("boom\nTraceback (most recent call last): ...")

    monkeypatch.setattr(ex, "draw", broken)
    w.controls["mask"].value = "causal"
    assert html_text(w.message.value) == "⚠ " + t("explorer.error.unexpected", "en", kind="RuntimeError", detail="boom")
    assert w.image.value == good
    monkeypatch.undo()
    w.controls["mask"].value = "padding"
    assert "⚠" not in w.message.value and w.image.value != good


def test_widget_unexpected_error_while_relabelling_is_one_line(monkeypatch):
    w = attnlab.explore(lang="en")
    monkeypatch.setattr(ex, "t", lambda key, lang=None, **f: 1 / 0 if key == "explorer.sentence" else t(key, lang, **f))
    w.controls["lang"].value = "vi"
    assert html_text(w.message.value).startswith("⚠ ") and "ZeroDivisionError" in w.message.value
    assert "\n" not in html_text(w.message.value)


def test_widget_notes_are_shown():
    w = attnlab.explore(lang="zh", sentence="a b c", pad=2, pad_side="left")
    w.controls["mask"].value = "causal+padding"
    assert html_text(w.message.value) == "ℹ " + t("explorer.note.empty_rows", "zh", n=2)
    w.controls["sentence"].value = ZH                   # 14 tokens, 8 heads: cells too small for numbers
    w.controls["annotate"].value = True
    assert t("explorer.note.no_numbers", "zh") in html_text(w.message.value)
    w.controls["head"].value = 0
    assert t("explorer.note.no_numbers", "zh") not in html_text(w.message.value)


def test_widget_large_font_mode():
    w = attnlab.explore(lang="en")
    w.controls["large"].value = True
    assert ex.LARGE_CLASS in w._dom_classes
    assert png_size(w.image.value) == (864, 518) and w.image.layout.height == "518px"
    assert w.controls["mask"].style.description_width == ex.LABEL_WIDTH[True]
    w.controls["large"].value = False
    assert ex.LARGE_CLASS not in w._dom_classes and w.image.layout.height == "432px"


def test_widget_updates_do_not_leak_figures():
    before = len(plt.get_fignums())
    w = attnlab.explore(lang="en")
    for k in range(12):
        w.controls["mask"].value = MASK_TYPES[k % 4]
        w.controls["num_heads"].value = (1, 2, 4, 8)[k % 4]
    assert len(plt.get_fignums()) == before


# ----------------------------------------------------------------------------- trained model

TRAINED = ExplorerState(model="trained")               # digits "3 1 4 1 5 9", last layer
BAD_DIGITS = {                                          # digits typed -> catalog key, fields
    "": ("explorer.error.digits_empty", {"max": 8}),
    "  , ": ("explorer.error.digits_empty", {"max": 8}),
    "3 1 x 4 y": ("explorer.error.digits_chars", {"chars": "x y"}),
    "3.14": ("explorer.error.digits_chars", {"chars": "."}),
    "-1 2": ("explorer.error.digits_chars", {"chars": "-"}),
    "123456789": ("explorer.error.digits_count", {"n": 9, "max": 8}),
}


def _mirror_mass(weights: torch.Tensor, n: int) -> torch.Tensor:
    """(H,) mean weight that the target queries t = n..2n-1 put on their mirror key 2n-1-t."""
    return torch.stack([weights[:, q, 2 * n - 1 - q] for q in range(n, 2 * n)], -1).mean(-1)


@pytest.mark.parametrize("digits,n", [("3 1 4 1 5 9", 6), ("31415926", 8), ("7,0,7", 3), ("３１４", 3)])
def test_trained_compute_tokens_and_shapes(digits, n):
    r = compute(TRAINED.replace(digits=digits))
    ds = [str(int(c)) for c in digits if c.isdecimal()]
    assert r.tokens == ds + ["|"] + ds[::-1][:-1]                     # the input: all but the last token
    assert r.weights.shape == (4, 2 * n, 2 * n) and r.mask.shape == (2 * n, 2 * n)
    assert torch.equal(r.mask, torch.ones(2 * n, 2 * n, dtype=torch.bool).tril())
    assert (r.weights[:, ~r.mask] == 0).all()
    torch.testing.assert_close(r.weights.sum(-1), torch.ones(4, 2 * n))


def test_trained_last_layer_draws_the_anti_diagonal():
    for digits in ("3 1 4 1 5 9", "2 7 1 8 2 8 1", "9 8 7 6 5 4 3 2"):
        state = TRAINED.replace(digits=digits)
        n = len(digits.split())
        last = _mirror_mass(compute(state).weights, n)
        assert last.max() > 0.5, (digits, last)
        first = _mirror_mass(compute(state.replace(layer=1)).weights, n)
        assert first.max() < last.max()                               # the first layer does not reverse


def test_trained_compute_is_pure_cached_and_ignores_the_random_controls():
    a = compute(TRAINED)
    a.weights.zero_()                                                 # a caller's change must not reach the cache
    b = compute(TRAINED)
    assert b.weights.sum() > 0
    c = compute(TRAINED.replace(mask="padding", num_heads=1, pad=5, pad_side="left", scaled=False,
                                sentence="anything"))
    assert c.tokens == b.tokens and torch.equal(c.weights, b.weights)
    assert not torch.equal(compute(TRAINED.replace(layer=1)).weights, b.weights)
    assert b.message == t("explorer.note.trained", "en")
    short = compute(TRAINED.replace(digits="1 2 3", lang="zh")).message
    assert t("explorer.note.short", "zh", min=6, max=8, n=3) in short


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("digits", sorted(BAD_DIGITS))
def test_trained_bad_digits_give_a_message_in_the_ui_language(digits, lang):
    key, values = BAD_DIGITS[digits]
    with pytest.raises(InputError) as info:
        compute(TRAINED.replace(digits=digits, lang=lang))
    assert info.value.message == t(key, lang, **values) and "\n" not in info.value.message


def test_trained_state_validation():
    ExplorerState(model="trained", num_heads=1, head=3)               # head counts the trained model's 4 heads
    for bad in (dict(model="gpt"), dict(model="trained", head=4), dict(model="trained", layer=0),
                dict(model="trained", layer=3)):
        with pytest.raises(ValueError):
            ExplorerState(**bad)


def test_trained_render_uses_the_same_canvas_and_size():
    canvas = ex.new_canvas()
    for state in (TRAINED, TRAINED.replace(head=3, annotate=True, lang="vi"), TRAINED.replace(layer=1, lang="zh")):
        fig, note = ex.draw(state, compute(state), canvas)
        assert fig is canvas.fig and canvas.png() == to_png(render(state)), state
        assert png_size(canvas.png()) == (720, 432)
    assert to_png(render(TRAINED)) != to_png(render(TRAINED.replace(layer=1)))
    assert to_png(render(TRAINED)) != to_png(render(TRAINED.replace(digits="2 7 1 8 2 8")))
    assert to_png(render(TRAINED.replace(large=True))) and png_size(to_png(render(TRAINED.replace(large=True)))) == (864, 518)


def _disabled(w):
    return {name for name, c in w.controls.items() if c.disabled}


def test_widget_model_switch_changes_the_image_and_locks_controls():
    w = attnlab.explore(lang="en", num_heads=8, head=5, mask="causal")
    random_png, random_state = w.image.value, w.state
    assert _disabled(w) == {"layer"} and w.mode_note.layout.display == "none"
    w.controls["model"].value = "trained"
    assert "⚠" not in w.message.value and w.image.value != random_png
    assert w.state.trained and w.state.digits == "3 1 4 1 5 9" and w.controls["sentence"].value == "3 1 4 1 5 9"
    assert w.state.head == ALL_HEADS and [v for _, v in w.controls["head"].options] == [ALL_HEADS, 0, 1, 2, 3]
    assert _disabled(w) == set(ex.AttentionExplorer.TRAINED_FIXED)
    assert html_text(w.mode_note.value).endswith(t("explorer.trained_fixed", "en", h=4))
    assert w.mode_note.layout.display != "none"
    assert w.controls["sentence"].description == t("explorer.digits", "en")
    assert w.controls["sentence"].placeholder == t("explorer.digits_hint", "en")
    seen = {random_png, w.image.value}
    for name, value in [("layer", 1), ("head", 2), ("sentence", "27182818"), ("annotate", True), ("layer", 2)]:
        w.controls[name].value = value
        assert "⚠" not in w.message.value, (name, w.message.value)
        assert w.image.value not in seen, name
        seen.add(w.image.value)
    w.controls["model"].value = "random"
    assert _disabled(w) == {"layer"} and w.mode_note.layout.display == "none"
    assert w.controls["sentence"].value == random_state.sentence
    assert w.state.sentence == random_state.sentence and w.state.mask == "causal" and w.state.num_heads == 8
    w.controls["annotate"].value = False
    w.controls["head"].value = 5
    assert w.image.value == random_png                                 # the same figure as before the switch
    w.controls["model"].value = "trained"                             # and the digits come back too
    assert w.controls["sentence"].value == "27182818" and w.state.digits == "27182818"


def test_widget_model_switch_restores_an_edited_sentence():
    w = attnlab.explore(lang="vi")
    w.controls["sentence"].value = "Tôi thích học máy"
    w.controls["model"].value = "trained"
    w.controls["sentence"].value = "1 2 3 4 5 6 7"
    w.controls["model"].value = "random"
    assert w.controls["sentence"].value == "Tôi thích học máy" and w.state.sentence == "Tôi thích học máy"
    assert compute(w.state).tokens[:4] == ["Tôi", "thích", "học", "máy"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_widget_trained_bad_digits_keep_the_last_figure(lang):
    w = attnlab.explore(lang=lang, model="trained")
    good_png, good_state = w.image.value, w.state
    for digits, (key, values) in BAD_DIGITS.items():
        w.controls["sentence"].value = digits
        assert html_text(w.message.value) == "⚠ " + t(key, lang, **values), digits
        assert w.image.value == good_png and w.state == good_state, digits
    w.controls["sentence"].value = "9 8 7 6 5 4"
    assert "⚠" not in w.message.value and w.image.value != good_png


def test_widget_trained_mode_labels_follow_the_language():
    w = attnlab.explore(lang="en", model="trained")
    for lang in ("vi", "zh"):
        w.controls["lang"].value = lang
        assert w.controls["model"].options[1][0] == t("explorer.model.trained", lang)
        assert w.controls["layer"].description == t("explorer.layer", lang)
        assert [label for label, _ in w.controls["layer"].options] == [t("explorer.layer_option", lang, i=i)
                                                                     for i in (1, 2)]
        assert w.controls["sentence"].description == t("explorer.digits", lang)
        assert html_text(w.mode_note.value).endswith(t("explorer.trained_fixed", lang, h=4))
        assert html_text(w.message.value) == "ℹ " + t("explorer.note.trained", lang)
    assert w.controls["layer"].options[0][0] == "第 1 层" and w.controls["model"].options[0][0] == "随机权重"
