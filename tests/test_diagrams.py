"""The architecture diagrams: drawn from one source with labels in each lesson's language, stored
in the lesson files (a PNG output, so GitHub, nbviewer, Colab and the website show them)."""
from __future__ import annotations

import json
import pathlib

import matplotlib
import pytest

matplotlib.use("Agg")

from attnlab import diagrams, fonts                      # noqa: E402
from attnlab.course import LESSON_DIRS                   # noqa: E402
from attnlab.i18n import CATALOG                         # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
WHERE = {"02_multi_head_attention.ipynb": "multi_head", "06_encoder_decoder_gpt.ipynb": "encoder_decoder",
         "08_number_translator.ipynb": "kv_cache"}
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
    title = LABELS[{"multi_head": "diagram.mh.title", "encoder_decoder": "diagram.ed.title",
                    "kv_cache": "diagram.kv.title"}[name]][lang]
    assert title in texts
    assert dict(matplotlib.rcParams) == before
    matplotlib.pyplot.close(fig)


def test_unknown_diagram_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown diagram 'heads'.*multi_head"):
        diagrams.draw("heads")
