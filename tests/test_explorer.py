"""The attention explorer: the pure functions (compute, the SVG) and the widget, without a browser.

Runs under ipywidgets 8 and 7.7 (see test_explorer_ipywidgets7.py).
"""
import os
import re
import xml.etree.ElementTree as ET

import ipywidgets
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import importlib

import attnlab
from attnlab import explorer as ex
from attnlab.explorer import ALL_HEADS, MASK_TYPES, ExplorerState, InputError, compute, render
from attnlab.explorer import controls as cw, figure as fx, launch as dx, svg, widgets as wx
from attnlab.course.i18n import LANGUAGES, t
from attnlab.course.style import MASKED_COLOR

from attnlab.explorer.models import poet_model, random_weights as cx, translator_model as tx

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


SVG_NS = "{http://www.w3.org/2000/svg}"


def parse_svg(fragment: str) -> ET.Element:
    """The <svg> element of an explorer HTML fragment (it must be well-formed XML)."""
    return ET.fromstring(re.search(r"<svg .*?</svg>", fragment, re.S).group(0))


def rows(root: ET.Element) -> list:
    return [g for g in root.iter(SVG_NS + "g") if (g.get("class") or "").startswith("row ")]


def cells(root: ET.Element) -> list:
    """(row index, rect, tip text) of every cell, in document order (row by row, head by head)."""
    out = []
    for i, g in enumerate(rows(root)):
        kids = list(g)
        out += [(i, a, b) for a, b in zip(kids, kids[1:]) if a.tag == SVG_NS + "rect"]
    return out


# ----------------------------------------------------------------------------- compute

def test_compute_default_shapes_and_rows_sum_to_one():
    r = compute(ExplorerState())
    tokens, weights, mask, message = r.tokens, r.weights, r.mask, r.message
    assert tokens == r.keys == EN.split() + ["<pad>", "<pad>"]
    assert r.muted_queries == r.muted_keys == (False,) * 10 + (True, True) and r.fixed == {}
    assert weights.shape == (8, 12, 12) and mask.shape == (12, 12) and mask.all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(8, 12))
    assert message == ""


def test_compute_is_deterministic_and_leaves_the_global_rng_alone():
    cx._model.cache_clear()
    cx._embedding.cache_clear()
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a = compute(ExplorerState(mask="causal", num_heads=4))
    assert torch.equal(torch.random.get_rng_state(), before)
    cx._model.cache_clear()
    cx._embedding.cache_clear()
    b = compute(ExplorerState(mask="causal", num_heads=4))
    assert torch.equal(a.weights, b.weights)


def test_same_word_same_embedding_and_heads_share_projections():
    w = compute(ExplorerState(sentence="the cat the", pad=0)).weights
    torch.testing.assert_close(w[:, 0], w[:, 2])          # no positions: equal tokens, equal rows
    one, eight = cx._model(1), cx._model(8)
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


# ----------------------------------------------------------------------------- SVG

@pytest.mark.parametrize("state,panels", [
    (ExplorerState(), 8),
    (ExplorerState(num_heads=1, scaled=False), 1),
    (ExplorerState(head=3, annotate=True, mask="causal"), 1),
    (ExplorerState(sentence=" ".join(["word"] * 30), pad=2, mask="causal+padding", pad_side="left"), 8),
    (ExplorerState(sentence=ZH, lang="zh", num_heads=2, annotate=True), 2),
])
def test_svg_cells_labels_masked_colour_and_viewbox(state, panels):
    full = compute(state)
    shown = fx.plan(state, full)                       # 32 tokens x 8 heads: a window of them (test_view_...)
    r = shown.crop(full)
    T, S = len(r.queries), len(r.keys)
    assert (T, S) == (len(full.queries), len(full.keys)) or T * S * panels <= ex.view.MAX_CELLS
    root = parse_svg(render(state))
    x0, y0, w, h = map(float, root.get("viewBox").split())
    assert (x0, y0, w) == (0, 0, svg.WIDTH) and h > 0 and root.get("width") == "100%"
    ks = cells(root)
    assert len(ks) == panels * T * S and len(rows(root)) == T
    heads = list(shown.heads)
    for k, (row, rect, tip) in enumerate(ks):
        i, rest = divmod(k, panels * S)
        p, j = divmod(rest, S)
        fill, tip = rect.get("fill"), tip.text
        assert row == i and rows(root)[i].get("class") == f"row r{i}"
        if r.mask[i, j]:
            v = float(r.weights[heads[p], i, j])
            assert fill == svg.LUT[int(np.rint(np.float32(v) * np.float32(255)))] and fill != MASKED_COLOR
            assert tip == f"{r.queries[i]} → {r.keys[j]} · {v:.3f}"
        else:
            assert fill == MASKED_COLOR
            assert tip == f"{r.queries[i]} → {r.keys[j]} · {t('explorer.tip.masked', state.lang)}"
    labels = [e.text for e in root.iter(SVG_NS + "text") if (e.get("class") or "").startswith("q ")]
    R = svg.Layout(panels, T, S, r.queries, r.keys, state.large).R
    assert labels == [svg.short_label(tok) for tok in r.queries for _ in range(R)]    # per panel row, first in the row
    for i, g in enumerate(rows(root)):
        kids = list(g)
        assert all(e.get("class") == f"q q{i}" and e.get("tabindex") == "0" for e in kids[:R])
        assert all(e.tag == SVG_NS + "rect" for e in kids[R:R + 2 * panels * S:2]) and len(kids[R:]) >= 2 * panels * S


def test_svg_masked_colour_is_the_course_colour_everywhere():
    from attnlab.figures import heatmap_grid

    assert heatmap_grid.CMAP.get_bad()[:3] == pytest.approx(matplotlib.colors.to_rgb(MASKED_COLOR))
    state = ExplorerState(mask="causal", lang="vi")
    html = render(state)
    assert f'background:{MASKED_COLOR}' in html and t("explorer.legend_masked", "vi") in html


def test_svg_x_labels_all_rotated_the_same_way():
    for sentence, rotated in (("a b c", False), ("我 爱 你", False), (EN, True)):
        root = parse_svg(render(ExplorerState(sentence=sentence, pad=0, num_heads=8)))
        xl = [e for e in root.iter(SVG_NS + "text") if e.get("class") == "kl"]
        assert xl and {("rotate(-90)" in (e.get("transform") or "")) for e in xl} == {rotated}, sentence


def _label_sizes(fragment: str) -> dict:
    """Font sizes (viewBox units) of the labels of an explorer SVG: tokens, head and axis titles."""
    root = parse_svg(fragment)
    base = float(root.get("font-size"))
    sizes = {"tokens": base}
    for e in root.iter(SVG_NS + "text"):
        kind = (e.get("class") or "").split()
        if not kind or kind[0] not in ("t", "v"):          # hover tips and the numbers in the cells aside
            sizes.setdefault("titles", []).append(float(e.get("font-size", base)))
    return {"tokens": base, "titles": min(sizes["titles"]), "height": float(root.get("viewBox").split()[3])}


def test_svg_large_font_labels_are_projector_sized_and_never_smaller():
    """Large font: every label (tokens, head and axis titles) at svg.FONT[True] units and the figure
    inside WIDTH x LARGE_HEIGHT (the CSS draws that box at >= 0.9 px per unit on the three screens);
    never smaller than in normal font. Every model: the translator's three attentions with all heads
    too (tests/test_browser_room.py measures it on screen with one head only)."""
    long = " ".join(f"w{i}" for i in range(30))
    translator = [ExplorerState(model=f"translator-{lang}", attention=kind, number=number, lang=lang)
                  for lang in ("vi", "zh") for kind in ("enc_self", "dec_self", "cross") for number in ("2024", "99999")]
    for state in (ExplorerState(), ExplorerState(num_heads=1), ExplorerState(num_heads=2), ExplorerState(num_heads=4),
                  ExplorerState(sentence=long, pad=2), ExplorerState(sentence=long, num_heads=1, pad=0),
                  ExplorerState(sentence=ZH, lang="zh"), TRAINED, TRAINED.replace(head=1),
                  ExplorerState(model="poet-vi"), ExplorerState(model="poet-zh", head=2, layer=3), *translator):
        large = _label_sizes(render(state.replace(large=True)))
        small = _label_sizes(render(state))
        assert large["tokens"] == large["titles"] == svg.FONT[True], (state, large)
        assert large["height"] <= svg.LARGE_HEIGHT + 1e-6, (state, large)
        assert large["tokens"] >= small["tokens"] and large["titles"] >= small["titles"], (state, large, small)


def test_svg_is_deterministic_and_reacts_to_every_control():
    base = ExplorerState()
    html = render(base)
    strip = lambda h: re.sub(r"attnlab-svg-\d+", "ID", h)
    assert strip(render(base)) == strip(html)
    for change in (dict(mask="causal"), dict(num_heads=2), dict(head=0), dict(pad=3), dict(pad_side="left"),
                   dict(scaled=False), dict(head=0, annotate=True), dict(lang="vi"), dict(sentence=VI),
                   dict(large=True)):
        assert strip(render(base.replace(**change))) != strip(html), change


def test_svg_escapes_tokens():
    root = parse_svg(render(ExplorerState(sentence="<b> & \"x\"", pad=0)))
    assert "<b>" in [e.text for e in root.iter(SVG_NS + "text")]


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
    assert len(cells(parse_svg(w.heatmap.value))) == 4 * len(compute(w.state).tokens) ** 2
    assert w.read_state() == w.state


def test_widget_starting_with_bad_input_shows_the_message():
    w = attnlab.explore(lang="vi", sentence="🤖")
    assert html_text(w.message.value) == "⚠ " + t("explorer.error.chars", "vi", chars="🤖")
    assert w.heatmap.value == ""
    w.controls["sentence"].value = VI
    assert "⚠" not in w.message.value and "<svg" in w.heatmap.value


def test_widget_default_language_follows_the_course():
    attnlab.set_language("zh")
    try:
        assert attnlab.explore().state.sentence == ZH
    finally:
        attnlab.set_language("en")


def test_widget_control_changes_change_the_image():
    w = attnlab.explore(lang="en")
    seen = {w.heatmap.value}
    for name, value in [("mask", "causal"), ("mask", "causal+padding"), ("num_heads", 2), ("num_heads", 1),
                        ("pad", 4), ("pad_side", "left"), ("scaled", False), ("num_heads", 8), ("head", 5),
                        ("sentence", "the cat sat"), ("annotate", True), ("sentence", ZH)]:
        w.controls[name].value = value
        assert w.message.value.count("⚠") == 0, (name, w.message.value)
        assert w.heatmap.value not in seen, name
        seen.add(w.heatmap.value)
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
        values = {name: c.value for name, c in w.controls.items() if name not in ("lang", "sentence")}
        w.controls["lang"].value = lang
        labels[lang] = _labels(w)
        assert {name: c.value for name, c in w.controls.items() if name not in ("lang", "sentence")} == values
        assert w.controls["sentence"].value == w.state.sentence == t("example.long", lang)   # the example follows
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
    first_png, first_state = w.heatmap.value, w.state
    for case, (changes, key, values) in BAD_INPUTS.items():
        for name, value in changes[:-1]:
            w.controls[name].value = value
        assert "⚠" not in w.message.value
        good_png, good_state = w.heatmap.value, w.state
        name, value = changes[-1]
        w.controls[name].value = value
        assert html_text(w.message.value) == "⚠ " + t(key, lang, **values), case
        assert w.heatmap.value == good_png and w.state == good_state, case
        w.controls["sentence"].value = first_state.sentence
        w.controls["pad"].value = first_state.pad
        assert "⚠" not in w.message.value and w.heatmap.value == first_png
    w.controls["sentence"].value = "🤖"
    w.controls["lang"].value = "vi" if lang != "vi" else "zh"     # the message follows the language
    assert html_text(w.message.value) == "⚠ " + t("explorer.error.chars", w.controls["lang"].value, chars="🤖")


def html_text(value: str) -> str:
    import html
    import re
    return html.unescape(re.sub(r"<[^>]+>", "", value))


def test_widget_unexpected_error_is_one_line_and_keeps_the_figure(monkeypatch):
    w = attnlab.explore(lang="en")
    good = w.heatmap.value

    def broken(*args):
        raise RuntimeError("boom\nTraceback (most recent call last): ...")

    monkeypatch.setattr(wx, "draw", broken)
    w.controls["mask"].value = "causal"
    assert html_text(w.message.value) == "⚠ " + t("explorer.error.unexpected", "en", kind="RuntimeError", detail="boom")
    assert w.heatmap.value == good
    monkeypatch.undo()
    w.controls["mask"].value = "padding"
    assert "⚠" not in w.message.value and w.heatmap.value != good


def test_widget_unexpected_error_while_relabelling_is_one_line(monkeypatch):
    w = attnlab.explore(lang="en")
    monkeypatch.setattr(cw, "t", lambda key, lang=None, **f: 1 / 0 if key == "explorer.sentence" else t(key, lang, **f))
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
    assert ex.widgets.LARGE_CLASS in w._dom_classes
    assert all(c.style.description_width == "initial" for c in w.controls.values() if hasattr(c.style, "description_width"))
    large = parse_svg(w.heatmap.value)
    assert float(large.get("font-size")) > float(parse_svg(render(w.state.replace(large=False))).get("font-size"))
    w.controls["large"].value = False
    assert ex.widgets.LARGE_CLASS not in w._dom_classes


def test_widget_text_fallback_is_short_and_in_the_ui_language():
    for lang in LANGUAGES:
        w = attnlab.explore(lang=lang)
        assert repr(w) == t("explorer.fallback", lang) and "ExplorerState" not in repr(w)


def test_widget_message_area_takes_no_room_when_empty():
    w = attnlab.explore(lang="en")
    assert w.message.value == "" and w.message.layout.display == "none"
    w.controls["sentence"].value = ""
    assert w.message.layout.display != "none"


class _Kernel:                                            # a stand-in: "a front end is connected"
    pass


@pytest.fixture
def sent(monkeypatch):
    """The messages widgets send to the front end, as (widget, state keys), in order: every live
    widget behaves as if a kernel were connected (ipywidgets 7.7 and 8)."""
    class Log(list):
        pass

    log = Log()
    from ipywidgets.widgets import widget as widget_module

    def connect():
        """From now on (what was sent before is forgotten)."""
        log.clear()
        live = getattr(widget_module, "_instances", None) or ipywidgets.Widget.widgets   # 8 / 7.7
        for w in list(live.values()):
            comm = w.comm
            if comm is None:
                continue
            if hasattr(comm, "_trait_values"):               # 7.7: ipykernel's Comm (a traitlets object)
                comm._trait_values["kernel"] = _Kernel()
            else:                                            # 8: the comm package's DummyComm
                comm.kernel = _Kernel()

    monkeypatch.setattr(ipywidgets.Widget, "_send", lambda self, msg, buffers=None: log.append(
        (self, sorted(msg.get("state", {})))))
    log.connect = connect
    return log


@pytest.mark.parametrize("change", ["lang", "large", "head", "model"])
def test_widget_one_message_per_widget_heatmap_first_to_arrive(sent, change):
    """One message per widget a change touches (unbatched, a language switch sent ~35), and
    nothing the browser must handle before the new heatmap but what the same frame shows: the
    heatmap ends the first batch; a language switch relabels the controls after it."""
    w = ex.dashboard(lang="vi")
    sent.connect()
    control = w.controls[change]
    control.value = {"lang": "zh", "large": True, "head": 2, "model": "trained"}[change]
    ours = [(widget, keys) for widget, keys in sent if widget is not control]   # the control's own value first
    widgets_sent = [widget for widget, _ in ours]
    assert len(widgets_sent) == len(set(map(id, widgets_sent))), [(type(x).__name__, k) for x, k in ours]
    at = widgets_sent.index(w.heatmap)
    assert ours[at][1] == ["value"]
    if change == "lang":                                # the heatmap first, then every control relabelled
        assert at == 0
        assert {id(c) for c in w.controls.values() if c is not control} <= set(map(id, widgets_sent[1:]))
    else:                                               # the class, the locked controls... then the heatmap
        assert at == len(ours) - 1
        # Large font: the class, the settings put behind "More settings" (their layouts), the heatmap.
        hidden = [w.controls[name].layout for name in ex.widgets.SECONDARY] + [w.more.layout]
        hidden += [w.controls["head"], w.controls["start"], w.controls["start"].layout]   # pages, windows
        assert change != "large" or (w in widgets_sent and widgets_sent[-1] is w.heatmap
                                     and set(map(id, widgets_sent[:-1])) <= set(map(id, hidden + [w])))


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


def test_trained_render_reacts_to_layer_and_digits():
    strip = lambda h: re.sub(r"attnlab-svg-\d+", "ID", h)
    for state in (TRAINED, TRAINED.replace(head=3, annotate=True, lang="vi"), TRAINED.replace(layer=1, lang="zh")):
        n = len(compute(state).tokens)
        assert len(cells(parse_svg(render(state)))) == (4 if state.head == ALL_HEADS else 1) * n * n
    assert strip(render(TRAINED)) != strip(render(TRAINED.replace(layer=1)))
    assert strip(render(TRAINED)) != strip(render(TRAINED.replace(digits="2 7 1 8 2 8")))


def _disabled(w):
    return {name for name, c in w.controls.items() if c.disabled}


def test_widget_model_switch_changes_the_image_and_locks_controls():
    w = attnlab.explore(lang="en", num_heads=8, head=5, mask="causal")
    random_png, random_state = w.heatmap.value, w.state
    assert _disabled(w) == {"layer"} and w.mode_note.layout.display == "none"
    w.controls["model"].value = "trained"
    assert "⚠" not in w.message.value and w.heatmap.value != random_png
    assert w.state.model == "trained" and w.state.digits == "3 1 4 1 5 9" and w.controls["sentence"].value == "3 1 4 1 5 9"
    assert w.state.head == ALL_HEADS and [v for _, v in w.controls["head"].options] == [ALL_HEADS, 0, 1, 2, 3]
    assert _disabled(w) == set(ex.AttentionExplorer.TRAINED_FIXED)
    shown = {name: w.controls[name].value for name in ("mask", "num_heads", "pad", "scaled")}
    assert shown == {"mask": "causal", "num_heads": 4, "pad": 0, "scaled": True}      # the model's real settings
    assert all(w.controls[n].description.endswith(t("explorer.fixed_suffix", "en")) for n in shown)
    assert html_text(w.mode_note.value).endswith(t("explorer.trained_fixed", "en", h=4))
    assert w.mode_note.layout.display != "none"
    assert w.controls["sentence"].description == t("explorer.digits", "en")
    assert w.controls["sentence"].placeholder == t("explorer.digits_hint", "en")
    seen = {random_png, w.heatmap.value}
    for name, value in [("layer", 1), ("head", 2), ("sentence", "2718"), ("annotate", True), ("sentence", "27182818"),
                        ("layer", 2)]:
        w.controls[name].value = value
        assert "⚠" not in w.message.value, (name, w.message.value)
        assert w.heatmap.value not in seen, name
        seen.add(w.heatmap.value)
    w.controls["model"].value = "random"
    assert _disabled(w) == {"layer"} and w.mode_note.layout.display == "none"
    assert w.controls["sentence"].value == random_state.sentence
    assert w.state.sentence == random_state.sentence and w.state.mask == "causal" and w.state.num_heads == 8
    assert (w.controls["pad"].value, w.controls["num_heads"].value) == (random_state.pad, 8)   # the user's values back
    w.controls["annotate"].value = False
    w.controls["head"].value = 5
    assert w.heatmap.value == random_png                                 # the same figure as before the switch
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
    good_png, good_state = w.heatmap.value, w.state
    for digits, (key, values) in BAD_DIGITS.items():
        w.controls["sentence"].value = digits
        assert html_text(w.message.value) == "⚠ " + t(key, lang, **values), digits
        assert w.heatmap.value == good_png and w.state == good_state, digits
    w.controls["sentence"].value = "9 8 7 6 5 4"
    assert "⚠" not in w.message.value and w.heatmap.value != good_png


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


# ----------------------------------------------------------------------------- translator adapter (lesson 08)

class FakeMaps:
    """What ``attnlab.translator.attention_maps`` returns (the agreed API), with made-up weights."""

    def __init__(self, number: int):
        self.src_tokens = list(str(number))
        self.tgt_tokens = ["<bos>"] + [f"w{k}" for k in range(len(self.src_tokens) + 1)]
        S, T = len(self.src_tokens), len(self.tgt_tokens)
        g = torch.Generator().manual_seed(number)
        soft = lambda *shape: torch.rand(*shape, generator=g).softmax(-1)
        self.enc_self = [soft(2, S, S) for _ in range(3)]
        self.dec_self = [torch.rand(2, T, T, generator=g).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(),
                                                                       float("-inf")).softmax(-1) for _ in range(3)]
        self.cross = [soft(2, T, S) for _ in range(3)]


@pytest.fixture
def fake_translator(monkeypatch):
    import sys
    import types

    module = types.ModuleType("attnlab.translator")
    module.load_pretrained = lambda lang: f"model-{lang}"
    def attention_maps(model, number):
        if number > 10 ** 9:
            raise ValueError("at most 9 digits")
        return FakeMaps(number)
    module.attention_maps = attention_maps
    monkeypatch.setitem(sys.modules, "attnlab.translator", module)
    monkeypatch.setattr(attnlab, "translator", module, raising=False)
    for f in (tx._translator, tx._translator_maps, tx._translator_status):
        f.cache_clear()
    yield module
    for f in (tx._translator, tx._translator_maps, tx._translator_status):
        f.cache_clear()


def test_translator_adapter_rows_columns_and_masks(fake_translator):
    state = ExplorerState(model="translator-vi", number="2 024", layer=2)
    maps = FakeMaps(2024)
    for kind, rows, cols in (("enc_self", maps.src_tokens, maps.src_tokens),
                             ("dec_self", maps.tgt_tokens, maps.tgt_tokens),
                             ("cross", maps.tgt_tokens, maps.src_tokens)):
        r = compute(state.replace(attention=kind))
        assert (r.queries, r.keys) == (rows, cols)
        assert r.weights.shape == (2, len(rows), len(cols))
        assert torch.equal(r.weights, getattr(maps, kind)[1])
        assert r.fixed == {"mask": "causal" if kind == "dec_self" else "none", "num_heads": 2, "pad": 0,
                           "scaled": True, "layers": 3}
        root = parse_svg(render(state.replace(attention=kind)))
        assert len(cells(root)) == 2 * len(rows) * len(cols)           # T != S for cross-attention
    with pytest.raises(InputError) as info:
        compute(state.replace(number="12a", lang="vi"))
    assert info.value.message == t("explorer.error.number", "vi", detail="12a")
    with pytest.raises(InputError):
        compute(state.replace(number="12345678901"))


def test_translator_in_the_widget(fake_translator):
    assert ex.translator_available()
    w = attnlab.explore(lang="zh")
    assert [v for _, v in w.controls["model"].options] == list(ex.MODELS)
    assert w.controls["attention"].layout.display == "none"
    w.controls["model"].value = "translator-zh"
    assert "⚠" not in w.message.value, w.message.value
    assert w.controls["attention"].layout.display != "none" and w.state.attention == "cross"
    assert [v for _, v in w.controls["layer"].options] == [1, 2, 3]
    assert {n: w.controls[n].value for n in ("mask", "num_heads", "pad", "scaled")} == \
        {"mask": "none", "num_heads": 2, "pad": 0, "scaled": True}
    assert all(w.controls[n].disabled for n in ("mask", "num_heads", "pad", "pad_side", "scaled"))
    w.controls["attention"].value = "dec_self"
    assert w.controls["mask"].value == "causal"
    w.controls["sentence"].value = "7"
    assert "⚠" not in w.message.value and w.state.number == "7"
    w.controls["model"].value = "random"
    assert w.controls["num_heads"].value == 8 and w.controls["sentence"].value == ZH


# ----------------------------------------------------------------------------- the dashboard

def test_dashboard_notebook_and_voila_config():
    import json
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    config = json.loads((root / "notebooks" / "voila.json").read_text(encoding="utf-8"))
    assert config["TagRemovePreprocessor"]["remove_cell_tags"] == ["voila-skip"]      # markdown cells
    skip = re.compile("|".join(config["RegexRemovePreprocessor"]["patterns"]))           # code cells (no new tag)
    kernels = config["MappingKernelManager"]
    assert 0 < kernels["cull_idle_timeout"] <= 3600 and 0 < kernels["cull_interval"] <= kernels["cull_idle_timeout"]
    cells = json.loads((root / "notebooks" / "attention_explorer.ipynb").read_text(encoding="utf-8"))["cells"]
    tags = [c["metadata"].get("tags", []) for c in cells]
    sources = ["".join(c["source"]) for c in cells]
    widget = next(i for i, s in enumerate(sources) if "dashboard()" in s)
    grid = next(i for i, s in enumerate(sources) if "plot_grid(" in s)
    left_out = [("voila-skip" in tags[i]) or bool(skip.match(sources[i])) for i in range(len(cells))]
    assert grid < widget and left_out[grid] and not left_out[widget]
    assert "nbval-ignore-output" in tags[widget]
    # In Voilà, nothing with output comes before the explorer but the setup and language cells.
    shown = [i for i in range(widget) if not left_out[i]]
    assert all(cells[i]["cell_type"] == "code" and not cells[i].get("outputs") for i in shown)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_dashboard_prose_follows_the_language(lang):
    w = ex.dashboard(lang="en")
    w.controls["lang"].value = lang
    assert t("explorer.dashboard.prose", lang) in html_text(w.prose.value)


# ----------------------------------------------------------------------------- the real translator (lesson 08)

def _real_maps(lang: str, number: int):
    from attnlab import translator

    return translator.attention_maps(translator.load_pretrained(lang), number)


def _svg_labels(fragment: str) -> tuple[list[str], list[str]]:
    """(query labels of the first panel column, key labels under the first panel) of an explorer SVG."""
    root = parse_svg(fragment)
    queries = [e.text for g in rows(root) for e in g if "q" in (e.get("class") or "").split()]
    keys = [e.text for e in root.iter(SVG_NS + "text") if e.get("class") == "kl"]
    return queries, keys


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_real_translator_three_views_match_attention_maps(lang):
    assert ex.translator_available()
    maps = _real_maps(lang, 2024)
    S, T = len(maps.src_tokens), len(maps.tgt_tokens)
    assert maps.src_tokens == ["2", "0", "2", "4"] and T != S and maps.tgt_tokens[0] == "<s>"
    state = ExplorerState(model=f"translator-{lang}", number="2 024", lang=lang)
    for layer, head in ((1, 2), (2, 0), (2, 3)):
        for kind, (q, k) in {"enc_self": (maps.src_tokens, maps.src_tokens),
                             "dec_self": (maps.tgt_tokens, maps.tgt_tokens),
                             "cross": (maps.tgt_tokens, maps.src_tokens)}.items():
            s = state.replace(attention=kind, layer=layer, head=head)
            r = compute(s)
            expected = getattr(maps, kind)[layer - 1]                          # (H, rows, cols)
            assert (r.queries, r.keys) == (q, k), (kind, layer)
            torch.testing.assert_close(r.weights, expected, rtol=0, atol=0)
            assert r.mask.shape == (len(q), len(k))
            assert bool(r.mask.all()) == (kind != "dec_self")
            root = parse_svg(render(s))                                        # one head: T x S cells
            assert len(rows(root)) == len(q) and len(cells(root)) == len(q) * len(k), (kind, layer)
            assert _svg_labels(render(s)) == (q, k)
            masked = t("explorer.tip.masked", lang)
            shown = [None if tip.text.endswith(masked) else float(tip.text.rsplit("·", 1)[1])
                     for _, _, tip in cells(root)]                             # the tips, row by row
            want = [round(float(v), 3) if m else None for v, m in zip(expected[head].flatten(), r.mask.flatten())]
            assert shown == want, (kind, layer, head)
    cross = compute(state.replace(attention="cross"))
    assert cross.weights.shape == (4, T, S) and T != S                        # T target words x S source digits


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_real_translator_in_the_widget_locked_controls_and_bad_input(lang):
    from attnlab import translator

    config = translator.load_pretrained(lang).config
    w = attnlab.explore(lang=lang)
    w.controls["model"].value = f"translator-{lang}"
    w.controls["sentence"].value = "105"
    assert "⚠" not in w.message.value, w.message.value
    assert w.state.model == f"translator-{lang}" and w.state.number == "105"
    assert w.controls["attention"].layout.display != "none"
    assert [v for _, v in w.controls["layer"].options] == list(range(1, config.dec_layers + 1))
    assert [v for _, v in w.controls["head"].options] == [ALL_HEADS, *range(config.num_heads)]
    maps = _real_maps(lang, 105)
    for kind, mask in (("enc_self", "none"), ("dec_self", "causal"), ("cross", "none")):
        w.controls["attention"].value = kind
        assert "⚠" not in w.message.value, (kind, w.message.value)
        # The controls the model fixes show its real settings, disabled; layer, attention and head are free.
        assert {n: w.controls[n].value for n in ("mask", "num_heads", "pad", "scaled")} == \
            {"mask": mask, "num_heads": config.num_heads, "pad": 0, "scaled": True}, kind
        assert _disabled(w) == {"mask", "num_heads", "pad", "pad_side", "scaled"}, kind
        assert all(w.controls[n].description.endswith(t("explorer.fixed_suffix", lang))
                   for n in ("mask", "num_heads", "pad", "scaled"))
    w.controls["head"].value = 1
    assert _svg_labels(w.heatmap.value) == (maps.tgt_tokens, ["1", "0", "5"])  # T rows != S = 3 columns
    assert len(maps.tgt_tokens) != 3
    good_png, good_state = w.heatmap.value, w.state
    for text, detail in (("12a", "12a"), ("", "—"), ("   ", "—"), ("123456", "123456"), ("-5", "-5")):
        w.controls["sentence"].value = text
        message = html_text(w.message.value)
        assert message == "⚠ " + t("explorer.error.number", lang, detail=detail), text
        assert "\n" not in message and message != "⚠ " + t("explorer.error.number", "en", detail=detail)
        assert w.heatmap.value == good_png and w.state == good_state, text
    w.controls["sentence"].value = "2024"
    assert "⚠" not in w.message.value and w.heatmap.value != good_png
    assert _svg_labels(w.heatmap.value)[1] == ["2", "0", "2", "4"]


# ----------------------------------------------------------------------------- fits the screen (issue 20)

def test_query_settings_read_lang_and_large_from_the_page_address(monkeypatch):
    qs = dx.query_settings
    assert qs("lang=vi&large=1") == {"lang": "vi", "large": True}
    assert qs("token=abc&lang=ZH&large=off") == {"lang": "zh", "large": False}
    assert qs("lang=fr&large=maybe&x=1") == {} and qs("") == {}
    monkeypatch.setenv("QUERY_STRING", "lang=vi&large=yes")          # what Voilà gives each page's kernel
    w = ex.dashboard()
    assert (w.state.lang, w.state.large, w.controls["large"].value) == ("vi", True, True)
    assert w.state.sentence == t("example.long", "vi") and ex.widgets.LARGE_CLASS in w._dom_classes


def test_example_sentence_follows_the_language_a_typed_one_stays():
    w = attnlab.explore(lang="vi")
    assert w.state.sentence == t("example.long", "vi")
    w.controls["lang"].value = "zh"
    assert w.controls["sentence"].value == w.state.sentence == t("example.long", "zh")
    w.controls["sentence"].value = "tôi học máy"
    w.controls["lang"].value = "en"
    assert w.controls["sentence"].value == w.state.sentence == "tôi học máy"
    w2 = attnlab.explore(lang="en")
    w2.controls["model"].value = "trained"                       # a model mode: its digits stay in the box
    w2.controls["lang"].value = "vi"
    assert w2.controls["sentence"].value == w2.state.digits
    w2.controls["model"].value = "random"
    assert w2.controls["sentence"].value == t("example.long", "vi")


def test_layout_fits_the_box_under_the_controls_and_picks_the_arrangement():
    for heads, T in ((1, 12), (2, 12), (4, 12), (8, 12), (8, 32), (16, 6)):
        for large in (False, True):
            L = svg.Layout(heads, T, T, ["because"] * T, ["because"] * T, large)
            assert L.height <= (svg.LARGE_HEIGHT if large else svg.WIDTH / svg.ASPECT) + 1e-6, (heads, T, large)
            assert L.R * L.C >= heads and (L.R - 1) * L.C < heads
    assert svg.grid_shape(8) == (2, 4) and svg.grid_shape(2) == (1, 2) and svg.grid_shape(1) == (1, 1)


def test_top_row_tips_leave_the_head_titles_free():
    root = parse_svg(render(ExplorerState(num_heads=4)))
    titles = [e for e in root.iter(SVG_NS + "text") if e.get("class") == "ht"]
    tips = [e for e in root.find(f"{SVG_NS}g[@class='row r0']") if e.tag == SVG_NS + "text" and "t" in e.get("class", "").split()]
    fs = svg.FONT[False]
    assert titles and tips
    lowest_title = max(float(e.get("y")) for e in titles) + 0.25 * fs             # baseline + descent
    highest_tip = min(float(e.get("y")) for e in tips) - 0.95 * fs * 0.8          # baseline - ascent of a tip
    assert highest_tip > lowest_title, (highest_tip, lowest_title)


# ----------------------------------------------------------------------------- the verse GPT (lesson 10)

def _poet_weights(lang: str, text: str):
    from attnlab import poet
    from attnlab.poet import heads

    return heads.attention_for(poet.load_pretrained(lang), lang, text)


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_poet_model_shows_attention_for_on_a_validation_verse(lang):
    from attnlab import poet
    from attnlab.poet import heads

    verse = heads.default_verse(lang)
    corpus = poet.load_corpus(lang)
    val = corpus.vocab.decode(corpus.val_ids)
    lines = verse.split("\n")[:-1]
    assert verse.endswith("\n") and len(lines) >= 2 and "\n".join(lines) in val     # from the validation text
    assert "\n".join(lines) not in corpus.vocab.decode(corpus.train_ids)
    assert not attnlab.course.fonts.unsupported_chars(verse)          # lesson 10's static figure draws it
    if lang == "vi":                                       # a 6-8 couplet: the break and rhyme relations
        assert [len(verse_units) for verse_units in (line.split() for line in lines)] == [6, 8]
    chars, weights = _poet_weights(lang, verse)
    assert "".join(chars) == verse and len(weights) == 4
    state = ExplorerState(model=f"poet-{lang}", lang=lang)
    assert state.verse is None and state.heads == 4
    for layer, head in ((1, 0), (2, 0), (4, 3)):
        s = state.replace(layer=layer, head=head)
        r = compute(s)
        assert r.queries == r.keys == [{" ": "␣", "\n": "↵"}.get(c, c) for c in chars]
        torch.testing.assert_close(r.weights, weights[layer - 1], rtol=0, atol=0)      # (H, T, T)
        assert torch.equal(r.mask, torch.ones(len(chars), len(chars), dtype=torch.bool).tril())
        assert r.fixed == {"mask": "causal", "num_heads": 4, "pad": 0, "scaled": True}
        masked = t("explorer.tip.masked", lang)
        seen = set()
        for start in fx.plan(s, r).starts:                # one head in windows of queries: every cell once
            view = fx.plan(s.replace(start=start), r)
            root = parse_svg(render(s.replace(start=start)))
            assert len(rows(root)) == len(view.rows) and len(cells(root)) == len(view.rows) * len(view.cols)
            shown = [None if tip.text.endswith(masked) else float(tip.text.rsplit("·", 1)[1]) for _, _, tip in cells(root)]
            part = weights[layer - 1][head][list(view.rows)][:, list(view.cols)]
            part_mask = r.mask[list(view.rows)][:, list(view.cols)]
            want = [round(float(v), 3) if m else None for v, m in zip(part.flatten(), part_mask.flatten())]
            assert shown == want, (layer, head)
            seen |= {(i, j) for i in view.rows for j in view.cols if r.mask[i, j]}
        assert len(seen) == int(r.mask.sum())              # every weight the model computed is in some window
    poet_model._model.cache_clear()              # loading the model leaves the global RNG alone
    poet_model._attention.cache_clear()
    rng = torch.get_rng_state()
    compute(state)
    assert torch.equal(rng, torch.get_rng_state())
    # Typed on one line, " / " between the lines: the same weights.
    typed = compute(state.replace(verse=" / ".join(lines), layer=3))
    torch.testing.assert_close(typed.weights, weights[2], rtol=0, atol=0)


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_poet_model_bad_verses_are_refused_in_the_ui_language(lang):
    state = ExplorerState(model=f"poet-vi", lang=lang)
    corpus = t("explorer.poet_corpus.vi", lang)
    for verse, key, fields in (("", "explorer.error.verse_empty", {}),
                               (" / / ", "explorer.error.verse_empty", {}),
                               ("Năm 2026 / vui", "explorer.error.verse_chars", {"corpus": corpus, "chars": "2 0 6"}),
                               ("ta " * 30, "explorer.error.verse_long", {"n": 90, "max": 64})):
        with pytest.raises(InputError) as info:
            compute(state.replace(verse=verse))
        assert info.value.message == t(key, lang, **fields), verse
    with pytest.raises(InputError) as info:
        compute(ExplorerState(model="poet-zh", lang=lang, verse="白日依山尽 Hi"))
    assert info.value.message == t("explorer.error.verse_chars", lang, corpus=t("explorer.poet_corpus.zh", lang),
                                   chars="' ' H i")
    for bad in (dict(layer=5), dict(layer=0), dict(head=4)):
        with pytest.raises(ValueError):
            ExplorerState(model="poet-vi", **bad)


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_poet_model_in_the_widget(lang):
    from attnlab.poet import heads

    w = attnlab.explore(lang=lang)
    assert {"poet-vi", "poet-zh"} <= {v for _, v in w.controls["model"].options}
    w.controls["model"].value = f"poet-{lang}"
    assert "⚠" not in w.message.value, w.message.value
    default = heads.default_verse(lang)
    assert w.controls["sentence"].value == poet_model.verse_line(default)
    assert poet_model.verse_text(w.controls["sentence"].value) == default
    assert w.controls["sentence"].description == t("explorer.verse", lang)
    assert [v for _, v in w.controls["layer"].options] == [1, 2, 3, 4]
    assert [v for _, v in w.controls["head"].options] == [ALL_HEADS, 0, 1, 2, 3]
    assert {n: w.controls[n].value for n in ("mask", "num_heads", "pad", "scaled")} == \
        {"mask": "causal", "num_heads": 4, "pad": 0, "scaled": True}
    assert _disabled(w) == {"mask", "num_heads", "pad", "pad_side", "scaled"}
    w.controls["layer"].value = 2
    w.controls["head"].value = 1
    chars, weights = _poet_weights(lang, default)
    root = parse_svg(w.heatmap.value)
    view = fx.plan(w.state, compute(w.state))
    assert len(cells(root)) == len(view.rows) * len(view.cols) <= ex.view.MAX_CELLS
    assert html_text(w.heatmap.value).startswith(
        t("explorer.poet_title", lang, corpus=t(f"explorer.poet_corpus.{lang}", lang), layer=2, layers=4, h=4, d_k=16))
    good, good_state = w.heatmap.value, w.state
    w.controls["sentence"].value = "ABC 123 / ?"
    assert html_text(w.message.value).startswith("⚠ ") and w.heatmap.value == good and w.state == good_state
    w.controls["model"].value = "random"                         # each model keeps its own text
    assert w.controls["sentence"].value == t("example.long", lang)
    w.controls["model"].value = f"poet-{lang}"
    assert w.controls["sentence"].value == "ABC 123 / ?"
    opened = attnlab.explore(model=f"poet-{lang}", lang=lang, layer=2, head=1)     # as lesson 10 opens it
    same_uid = lambda fragment: re.sub(r"attnlab-svg-[0-9a-f]+", "attnlab-svg", fragment)  # noqa: E731
    assert same_uid(opened.heatmap.value) == same_uid(good) and "⚠" not in opened.message.value



# ----------------------------------------------------------------------------- one interface for every model

def test_a_fifth_model_is_one_module_behind_the_interface(monkeypatch):
    """compute, the state and the widget ask a model only what ``ExplorerModel`` says: a model
    defined elsewhere, added to the registry, is computed, drawn and offered in the widget."""
    from attnlab.explorer import models
    from attnlab.explorer.models.base import ExplorerModel
    from attnlab.explorer.result import causal, self_attention

    class Uniform(ExplorerModel):
        names = ("uniform",)
        text_field = "sentence"
        max_layers = 3

        def label(self, name, lang):
            return "uniform"

        def heads(self, state):
            return 2

        def fixed(self, state):
            return {"mask": "causal", "num_heads": 2, "pad": 0, "scaled": True}

        def fixed_note(self, state, fixed):
            return "fixed by the uniform model"

        def compute(self, state):
            tokens = state.sentence.split()
            T = len(tokens)
            mask = causal(T)
            weights = mask.float() / mask.sum(-1, keepdim=True)
            return self_attention(tokens, weights.expand(2, T, T).clone(), mask, fixed=self.fixed(state))

        def title(self, state, result):
            return f"uniform, layer {state.layer}"

    fifth = Uniform()
    monkeypatch.setattr(models, "REGISTRY", models.REGISTRY + (fifth,))
    monkeypatch.setattr(models, "BY_NAME", {**models.BY_NAME, "uniform": fifth})
    monkeypatch.setattr(models, "NAMES", models.NAMES + ("uniform",))
    state = ExplorerState(model="uniform", sentence="a b c", layer=3, head=1)
    r = compute(state)
    assert r.weights.shape == (2, 3, 3) and torch.allclose(r.weights[1, 2], torch.full((3,), 1 / 3))
    assert html_text(render(state)).startswith("uniform, layer 3")
    with pytest.raises(ValueError):
        ExplorerState(model="uniform", head=2)                        # its own head count bounds ``head``
    w = attnlab.explore(lang="en")
    assert "uniform" in [v for _, v in w.controls["model"].options]
    w.controls["model"].value = "uniform"
    assert "⚠" not in w.message.value and w.state.model == "uniform"
    assert [v for _, v in w.controls["layer"].options] == [1, 2, 3] and "fixed by the uniform model" in w.mode_note.value
    assert _disabled(w) == set(ex.AttentionExplorer.TRAINED_FIXED)


# ----------------------------------------------------------------------------- small things (issue 33)

def test_widget_model_with_bad_input_shows_its_own_fixed_settings():
    """The settings a model fixes show the model's values even while its input is bad (they showed
    the random weights' "Heads (fixed) 2" under "trained model"), and the note is that model's."""
    w = attnlab.explore(lang="en", num_heads=2, mask="padding", digits="abc")
    w.controls["model"].value = "trained"
    assert html_text(w.message.value).startswith("⚠ ")
    assert (w.controls["num_heads"].value, w.controls["mask"].value, w.controls["pad"].value) == (4, "causal", 0)
    assert t("explorer.trained_fixed", "en", h=4) in html_text(w.mode_note.value)
    w.controls["model"].value = "poet-vi"
    w.controls["sentence"].value = ""                              # a bad verse
    w.controls["model"].value = "translator-vi"                    # a good number: the translator's note
    assert t("explorer.fixed_mask.none", "en") in html_text(w.mode_note.value)
    w.controls["model"].value = "poet-vi"                          # back to the bad verse
    assert html_text(w.message.value).startswith("⚠ ")
    assert html_text(w.mode_note.value).endswith(t("explorer.trained_fixed", "en", h=4))
    w.controls["model"].value = "random"
    assert (w.controls["num_heads"].value, w.controls["mask"].value) == (2, "padding")


def test_widget_every_control_has_its_label_as_tooltip():
    """No ``title="null"``: ipywidgets renders a tooltip left None as the word null."""
    w = attnlab.explore(lang="vi", large=True)
    for control in (*w.controls.values(), w.more):
        tip = getattr(control, "tooltip", None) if control.has_trait("tooltip") else control.description_tooltip
        assert tip == control.description and tip, control
    w.controls["lang"].value = "zh"
    assert w.more.tooltip == t("explorer.more", "zh") if w.more.has_trait("tooltip") else True


def test_the_dashboard_address_in_the_docs_is_the_one_make_voila_serves():
    assert "/voila/render/" not in dx.query_settings.__doc__ and "localhost:8866/?lang=vi" in dx.query_settings.__doc__


def test_no_figure_draws_more_than_the_cell_budget():
    """The verse GPT's 64 x 64 x 4 heads were 16,384 cells (1.6 MB of HTML, ~1 s per change in the
    browser): every figure now has at most view.MAX_CELLS, in windows that cover every weight."""
    for state in (ExplorerState(model="poet-vi"), ExplorerState(model="poet-zh", head=1),
                  ExplorerState(sentence=" ".join(["w"] * 30), pad=2), ExplorerState(model="poet-vi", large=True)):
        html_ = render(state)
        assert len(cells(parse_svg(html_))) <= ex.view.MAX_CELLS and len(html_) < 250_000, (state, len(html_))


def test_dashboard_markdown_has_no_line_that_starts_a_list_by_accident():
    """JupyterLab drew "(left padding / + causal mask)" as a bullet: a prose line beginning with "+ "."""
    import json
    import pathlib

    notebook = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "attention_explorer.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    lines = [line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).split("\n")]
    assert not [line for line in lines if re.match(r"\s*[+]\s", line)]
