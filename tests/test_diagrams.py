"""The architecture diagrams: drawn from one source with labels in each lesson's language, stored
in the lesson files (a PNG output, so GitHub, nbviewer, Colab and the website show them)."""
from __future__ import annotations

import json
import pathlib

import matplotlib
import pytest

matplotlib.use("Agg")

from attnlab.course import fonts                         # noqa: E402
from attnlab.figures import diagrams                    # noqa: E402
from attnlab.course import LESSON_DIRS                   # noqa: E402
from attnlab.course.i18n import CATALOG                         # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
WHERE = {"02_multi_head_attention.ipynb": "multi_head", "05_transformer_block.ipynb": "transformer_block",
         "06_encoder_decoder_gpt.ipynb": "encoder_decoder", "08_number_translator.ipynb": "kv_cache"}
PREFIX = {"multi_head": "diagram.mh.", "transformer_block": "diagram.tb.", "encoder_decoder": "diagram.ed.",
          "kv_cache": "diagram.kv."}
LABELS = json.loads((ROOT / "shared/attnlab/messages/diagrams.json").read_text(encoding="utf-8"))


def _src(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.mark.parametrize("lesson_dir", LESSON_DIRS)
@pytest.mark.parametrize("name, diagram", sorted(WHERE.items()))
def test_every_lesson_that_should_have_a_diagram_stores_it(lesson_dir, name, diagram):
    nb = json.loads((ROOT / lesson_dir / name).read_text(encoding="utf-8"))
    call = f'attnlab.diagrams.draw("{diagram}")'
    cells = [c for c in nb["cells"] if c["cell_type"] == "code" and call in _src(c)]
    assert len(cells) == 1, f"{lesson_dir}/{name}: expected one cell calling {call}"
    pngs = [o for o in cells[0]["outputs"] if "image/png" in o.get("data", {})]
    assert len(pngs) == 1, f"{lesson_dir}/{name}: the diagram cell has no stored PNG (re-execute the notebook)"
    assert len(pngs[0]["data"]["image/png"]) > 10_000          # a drawn figure, not an empty canvas


def test_every_label_has_every_language_and_the_fonts_draw_it():
    for key, texts in LABELS.items():
        assert key.startswith("diagram.") and key in CATALOG
        assert set(texts) == {"vi", "zh", "en"}, key
        assert all(v.strip() for v in texts.values()), key
        for lang, text in texts.items():
            assert fonts.unsupported_chars(text) == [], (key, lang)
    zh = "".join(t["zh"] for t in LABELS.values())
    vi = "".join(t["vi"] for t in LABELS.values())
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh) and "ệ" not in zh
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in vi)


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
@pytest.mark.parametrize("name", diagrams.NAMES)
def test_draws_in_each_language_without_touching_rcparams(name, lang):
    before = dict(matplotlib.rcParams)
    fig = diagrams.draw(name, lang)
    texts = " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))
    title = LABELS[PREFIX[name] + "title"][lang]
    assert title in texts
    assert dict(matplotlib.rcParams) == before
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
@pytest.mark.parametrize("name", diagrams.NAMES)
def test_every_label_of_a_diagram_is_drawn(name, lang):
    """Each line of each of the diagram's labels (those without {fields}) is a text of the figure:
    no label in diagrams.json is left unused, none is drawn from a hard-coded string instead."""
    fig = diagrams.draw(name, lang)
    drawn = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    for key, texts in LABELS.items():
        if key.startswith(PREFIX[name]) and "{" not in texts[lang]:
            for line in filter(None, texts[lang].split("\n")):
                assert line in drawn or texts[lang] in drawn, (key, lang, line)
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_transformer_block_puts_layer_norm_where_each_variant_does(lang):
    """Lesson 05's figure: post-LN (left panel) normalizes the residual stream after each (+), so
    its two LN boxes sit on the stream, above the input; pre-LN (right) normalizes only the
    sublayer's input, so its two LN boxes sit on the branch, under the attention and the FFN."""
    fig = diagrams.draw("transformer_block", lang)
    ax = fig.axes[0]
    where: dict[str, list[tuple[float, float]]] = {}
    for text in ax.texts:
        where.setdefault(text.get_text(), []).append(text.get_position())
    mid = ax.get_xlim()[1] / 2
    ln = where[LABELS["diagram.tb.ln"][lang]]
    (x_in_post, _), (x_in_pre, _) = sorted(where[LABELS["diagram.tb.x"][lang].split("\n")[0]])
    (x_attn_post, y_attn_post), (x_attn_pre, y_attn_pre) = sorted(where[LABELS["diagram.tb.attn"][lang].split("\n")[0]])
    post = sorted(p for p in ln if p[0] < mid)
    pre = sorted(p for p in ln if p[0] > mid)
    assert len(post) == len(pre) == 2
    assert all(abs(x - x_in_post) < 1e-9 and y > y_attn_post for x, y in post)          # on the stream
    assert all(abs(x - x_attn_pre) < 1e-9 for x, _ in pre) and min(y for _, y in pre) < y_attn_pre   # on the branch
    assert {"post-LN (norm_first=False)", "pre-LN (norm_first=True)"} <= set(where)
    matplotlib.pyplot.close(fig)


def test_unknown_diagram_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown diagram 'heads'.*multi_head"):
        diagrams.draw("heads")


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
@pytest.mark.parametrize("name", diagrams.NAMES)
def test_no_text_overlaps_another_or_leaves_its_box(name, lang):
    """As drawn (Agg, the notebook's 80 dpi): no two texts overlap, each is inside the figure, and a
    text centred in a box fits in that box. Catches a longer label in one language spilling over."""
    from matplotlib.patches import FancyBboxPatch

    fig = diagrams.draw(name, lang)
    fig.set_dpi(80)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    texts = [(t.get_text(), t.get_window_extent(renderer)) for t in [ax.title, *ax.texts] if t.get_text().strip()]
    boxes = [p.get_window_extent(renderer) for p in ax.patches
             if isinstance(p, FancyBboxPatch) and p.get_facecolor()[3] > 0]
    for i, (a, box_a) in enumerate(texts):
        assert fig.bbox.x0 <= box_a.x0 and box_a.x1 <= fig.bbox.x1 and fig.bbox.y0 <= box_a.y0 and box_a.y1 <= fig.bbox.y1, a
        for b, box_b in texts[i + 1:]:
            inter = matplotlib.transforms.Bbox.intersection(box_a, box_b)
            assert inter is None or inter.width < 1 or inter.height < 1, (a, b)
        centre = ((box_a.x0 + box_a.x1) / 2, (box_a.y0 + box_a.y1) / 2)
        for box in boxes:
            if box.contains(*centre):
                assert box.x0 <= box_a.x0 and box_a.x1 <= box.x1 and box.y0 <= box_a.y0 and box_a.y1 <= box.y1, a
    matplotlib.pyplot.close(fig)
