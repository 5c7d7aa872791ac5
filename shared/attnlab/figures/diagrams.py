"""The course's architecture diagrams, drawn with matplotlib from one source.

``attnlab.diagrams.draw("multi_head")`` (then ``plt.show()``) draws the diagram with labels in the current language
(the words are in ``messages/diagrams.json``) and returns the Figure. A lesson calls it in a code
cell, so the diagram is stored in the notebook as an ordinary PNG output: it is visible wherever a
notebook's outputs are — JupyterLab, VS Code, Colab, GitHub, nbviewer and the website — without a
file beside the notebook and without a network. Names:

- ``multi_head``: project, split into heads, attend per head, merge, output projection (lesson 02);
- ``transformer_block``: one block, post-LN beside pre-LN, its residual stream drawn straight (lesson 05);
- ``encoder_decoder``: the encoder–decoder with its masks and cross-attention (lesson 06);
- ``kv_cache``: one decoding step with a KV cache (lesson 08).
"""
from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from ..course.fonts import use_course_fonts
from ..course.i18n import t

NAMES = ("multi_head", "transformer_block", "encoder_decoder", "kv_cache")

# One palette for the diagrams (light fills, dark text: readable projected and printed).
FILL = {"data": "#e8eef7", "proj": "#fde9c9", "attn": "#d7f0dd", "ffn": "#efe0f5", "norm": "#eeeeee",
        "cache": "#fbe0e0", "out": "#dfeff2", "cross": "#fff3b0"}
EDGE = "#444444"


def _box(ax, x, y, w, h, text, kind="data", size=10, weight="normal"):
    """A rounded box with ``text`` centred in it, one text object per line: a line of mathtext
    (``$W_Q$``) and a line of Chinese never share one, since mathtext has no CJK fallback."""
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                fc=FILL[kind], ec=EDGE, lw=1.0))
    lines = text.split("\n")
    step = size * 1.45 / 72                     # line height: points -> inches (= data units, see _canvas)
    top = y + h / 2 + step * (len(lines) - 1) / 2
    for i, line in enumerate(lines):
        ax.text(x + w / 2, top - i * step, line, ha="center", va="center", fontsize=size, weight=weight)


def _arrow(ax, a, b, text=None, style="-|>", dashed=False, offset=(0.0, 0.12), size=8.5, rad=0.0, lw=1.1,
           corner=False):
    """An arrow from ``a`` to ``b``; ``corner``: ``a`` is the corner of a line drawn to it (no gap there)."""
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=12, lw=lw, color=EDGE,
                                 shrinkA=0.0 if corner else 2.0,
                                 linestyle="--" if dashed else "-", connectionstyle=f"arc3,rad={rad}"))
    if text:
        ax.text((a[0] + b[0]) / 2 + offset[0], (a[1] + b[1]) / 2 + offset[1], text, ha="center",
                va="bottom", fontsize=size, color="#333333")


def _canvas(width, height, title, bottom=0.0):
    """A figure whose data units are about an inch: x in [0, width], y in [bottom, height]."""
    fig, ax = plt.subplots(figsize=(width, height - bottom), layout="constrained")
    ax.set_xlim(0, width)
    ax.set_ylim(bottom, height)
    ax.axis("off")
    ax.set_title(title, fontsize=12)
    return fig, ax


def _multi_head(lang):
    fig, ax = _canvas(12.5, 5.6, t("diagram.mh.title", lang))
    _box(ax, 0.2, 2.3, 1.4, 1.0, t("diagram.mh.x", lang))
    for i, (name, y) in enumerate((("Q", 4.0), ("K", 2.5), ("V", 1.0))):
        _box(ax, 2.3, y, 1.3, 0.8, f"$W_{name}$\n" + t("diagram.mh.proj", lang), "proj", size=9)
        _arrow(ax, (1.6, 2.8), (2.3, y + 0.4))
        _box(ax, 4.2, y, 1.3, 0.8, f"${name}$\n(B, T, D)", size=9)
        _arrow(ax, (3.6, y + 0.4), (4.2, y + 0.4))
    _box(ax, 6.1, 0.9, 1.5, 3.95, t("diagram.mh.split", lang), "norm", size=8.5)
    for y in (1.0, 2.5, 4.0):
        _arrow(ax, (5.5, y + 0.4), (6.1, y + 0.4))
    heads = [(4.1, t("diagram.mh.head", lang, i=1)), (2.75, t("diagram.mh.head", lang, i=2)),
             (1.0, t("diagram.mh.head_last", lang))]
    for y, label in heads:
        _box(ax, 8.2, y, 1.7, 0.85, label + "\n$\\mathrm{softmax}(QK^\\top/\\sqrt{d_k})\\,V$", "attn", size=8)
        _arrow(ax, (7.6, y + 0.42), (8.2, y + 0.42))
        _arrow(ax, (9.9, y + 0.42), (10.3, 2.9))
    ax.text(9.05, 2.2, "⋮", ha="center", va="center", fontsize=14)
    _box(ax, 10.3, 2.2, 1.0, 1.4, t("diagram.mh.merge", lang), "norm", size=8.5)
    _box(ax, 11.5, 2.3, 0.9, 1.2, "$W_O$\n(B, T, D)", "out", size=9)
    _arrow(ax, (11.3, 2.9), (11.5, 2.9))
    ax.text(6.25, 0.3, t("diagram.mh.note", lang), ha="center", va="center", fontsize=8.5, color="#333333")
    return fig


BLOCK_TEXT = 10.5          # lesson 05's labels: the figure is narrower than the others, its text larger


def _block_panel(ax, x0, title, sub, pre_ln, lang):
    """One Transformer block drawn bottom to top: the residual stream is the thick vertical line at
    ``sx`` (it meets only the (+) nodes in pre-LN, and an LN after each (+) as well in post-LN); each
    sublayer is a branch to the right that leaves the stream and is added back at (+)."""
    sx, bx = x0 + 1.05, x0 + 3.3                          # the stream's x; the branch boxes' centre
    ln_w, sub_w, r, stream = 1.95, 2.4, 0.17, 1.8
    ln_text = t("diagram.tb.ln", lang)
    ax.text(x0 + 2.3, 8.95, title, ha="center", va="bottom", fontsize=12)
    ax.text(x0 + 2.3, 8.9, sub, ha="center", va="top", fontsize=BLOCK_TEXT)
    _box(ax, sx - 0.7, 0.45, 1.4, 0.6, t("diagram.tb.x", lang), size=BLOCK_TEXT)
    bottom = 1.05                                         # where the stream's next segment starts
    for split, text, kind in ((1.35, t("diagram.tb.attn", lang), "attn"), (4.65, t("diagram.tb.ffn", lang), "ffn")):
        ax.plot([sx, bx], [split, split], color=EDGE, lw=1.1)            # the branch leaves the stream
        ax.add_patch(Circle((sx, split), 0.05, color=EDGE, zorder=3))
        if pre_ln:                                        # pre-LN: the branch is normalized, not the stream
            _box(ax, bx - ln_w / 2, split + 0.3, ln_w, 0.5, ln_text, "norm", size=BLOCK_TEXT)
            _arrow(ax, (bx, split), (bx, split + 0.3), corner=True)
        _box(ax, bx - sub_w / 2, split + 1.1, sub_w, 0.7, text, kind, size=BLOCK_TEXT)
        _arrow(ax, (bx, split + (0.8 if pre_ln else 0.0)), (bx, split + 1.1), corner=not pre_ln)
        plus = split + 2.15
        ax.plot([bx, bx], [split + 1.8, plus], color=EDGE, lw=1.1)       # ... and is added back at (+)
        _arrow(ax, (bx, plus), (sx + r, plus), corner=True)
        _arrow(ax, (sx, bottom), (sx, plus - r), lw=stream)
        ax.add_patch(Circle((sx, plus), r, fc="white", ec=EDGE, lw=1.3))
        ax.text(sx, plus, "+", ha="center", va="center", fontsize=12)
        bottom = plus + r
        if not pre_ln:                                    # post-LN: the stream itself is normalized
            _box(ax, sx - ln_w / 2, plus + 0.4, ln_w, 0.5, ln_text, "norm", size=BLOCK_TEXT)
            _arrow(ax, (sx, bottom), (sx, plus + 0.4), lw=stream)
            bottom = plus + 0.9
    ax.text(sx - 0.16, 2.4, t("diagram.tb.residual", lang), ha="right", va="center", fontsize=9.5, color="#333333")
    _box(ax, sx - 0.7, 7.95, 1.4, 0.6, t("diagram.tb.y", lang), "out", size=BLOCK_TEXT)
    _arrow(ax, (sx, bottom), (sx, 7.95), lw=stream)


def _transformer_block(lang):
    fig, ax = _canvas(9.7, 9.4, t("diagram.tb.title", lang))
    _block_panel(ax, 0.15, "post-LN (norm_first=False)", t("diagram.tb.post", lang), False, lang)
    _block_panel(ax, 4.95, "pre-LN (norm_first=True)", t("diagram.tb.pre", lang), True, lang)
    ax.plot([4.85, 4.85], [0.6, 8.55], color="#bbbbbb", lw=0.8)
    ax.text(4.85, 0.16, t("diagram.tb.note", lang), ha="center", va="center", fontsize=9.5, color="#333333")
    return fig


def _stack(ax, x, y, w, rows, label, right=False):
    """A dashed frame ``N ×`` around the sublayers ``rows`` = [(text, kind)], drawn bottom to top."""
    h = 0.75
    for i, (text, kind) in enumerate(rows):
        _box(ax, x + 0.15, y + 0.2 + i * (h + 0.3), w - 0.3, h, text, kind, size=8.5)
        if i:
            _arrow(ax, (x + w / 2, y + 0.2 + i * (h + 0.3) - 0.3), (x + w / 2, y + 0.2 + i * (h + 0.3)))
    top = y + 0.2 + len(rows) * (h + 0.3) - 0.1
    ax.add_patch(FancyBboxPatch((x, y), w, top - y, boxstyle="round,pad=0.02,rounding_size=0.12",
                                fc="none", ec="#888888", lw=1.0, linestyle="--"))
    ax.text(x + w + 0.12 if right else x - 0.12, y + (top - y) / 2, label, ha="left" if right else "right",
            va="center", fontsize=10)
    return top


def _encoder_decoder(lang):
    fig, ax = _canvas(11.0, 6.6, t("diagram.ed.title", lang), bottom=-0.35)   # the note below the boxes
    ex, dx, w = 1.3, 6.4, 3.6
    _box(ax, ex + 0.15, 0.2, w - 0.3, 0.75, t("diagram.ed.src", lang), size=8.5)
    _box(ax, dx + 0.15, 0.2, w - 0.3, 0.75, t("diagram.ed.tgt", lang), size=8.5)
    enc_top = _stack(ax, ex, 1.4, w, [(t("diagram.ed.enc_self", lang), "attn"),
                                      (t("diagram.ed.ffn", lang), "ffn")], "N ×")
    dec_top = _stack(ax, dx, 1.4, w, [(t("diagram.ed.dec_self", lang), "attn"),
                                      (t("diagram.ed.cross", lang), "cross"),
                                      (t("diagram.ed.ffn", lang), "ffn")], "N ×", right=True)
    _arrow(ax, (ex + w / 2, 0.95), (ex + w / 2, 1.6))
    _arrow(ax, (dx + w / 2, 0.95), (dx + w / 2, 1.6))
    ax.text(ex + 0.1, enc_top + 0.12, t("diagram.ed.enc", lang), ha="left", va="bottom", fontsize=11)
    ax.text(dx + 0.1, dec_top + 0.12, t("diagram.ed.dec", lang), ha="left", va="bottom", fontsize=11)
    _box(ax, ex + 0.15, enc_top + 0.8, w - 0.3, 0.8, t("diagram.ed.memory", lang), "out", size=8.5)
    _arrow(ax, (ex + w / 2, enc_top - 0.1), (ex + w / 2, enc_top + 0.8))
    cross_y = 1.4 + 0.2 + 1 * 1.05 + 0.375                   # middle of the cross-attention box
    _arrow(ax, (ex + w - 0.15, enc_top + 1.2), (dx + 0.15, cross_y), t("diagram.ed.kv", lang),
           offset=(0.0, 0.2), rad=-0.15)
    _box(ax, dx + 0.15, dec_top + 0.8, w - 0.3, 0.8, t("diagram.ed.out", lang), "out", size=8.5)
    _arrow(ax, (dx + w / 2, dec_top - 0.1), (dx + w / 2, dec_top + 0.8))
    ax.text(5.5, -0.15, t("diagram.ed.note", lang), ha="center", va="center", fontsize=8.5, color="#333333")
    return fig


def _kv_cache(lang):
    fig, ax = _canvas(11.5, 4.8, t("diagram.kv.title", lang))
    cw = 0.62
    for j in range(5):                      # keys/values of positions 0..3 (cached) and 4 (new)
        kind = "cache" if j < 4 else "proj"
        _box(ax, 0.6 + j * cw, 3.0, cw - 0.06, 0.7, f"$k_{j}$", kind, size=9)
        _box(ax, 0.6 + j * cw, 2.0, cw - 0.06, 0.7, f"$v_{j}$", kind, size=9)
    ax.text(0.6 + 2.5 * cw, 3.9, t("diagram.kv.cache", lang), ha="center", va="bottom", fontsize=9)
    ax.text(0.6 + 4.5 * cw, 1.85, t("diagram.kv.appended", lang), ha="center", va="top", fontsize=8.5)
    _box(ax, 4.6, 0.2, 1.9, 0.8, t("diagram.kv.new", lang), "data", size=8.5)
    _box(ax, 4.6, 1.5, 1.9, 0.8, "$q_4$\n" + t("diagram.kv.one_query", lang), "proj", size=8.5)
    _arrow(ax, (5.55, 1.0), (5.55, 1.5))
    ax.text(5.7, 1.25, t("diagram.kv.project", lang), ha="left", va="center", fontsize=8.5)
    _arrow(ax, (4.6, 0.6), (0.6 + 4.5 * cw, 1.3), rad=-0.25)
    _box(ax, 7.3, 2.3, 2.3, 1.4, t("diagram.kv.attend", lang), "attn", size=8.5)
    _arrow(ax, (6.5, 1.9), (7.3, 2.6))
    _arrow(ax, (0.6 + 5 * cw, 2.85), (7.3, 3.2), "K, V", offset=(0.0, 0.05))
    _box(ax, 10.0, 2.6, 1.4, 0.8, t("diagram.kv.output", lang), "out", size=8.5)
    _arrow(ax, (9.6, 3.0), (10.0, 3.0))
    ax.text(7.3, 1.95, t("diagram.kv.note", lang), ha="left", va="top", fontsize=8.5, color="#333333")
    return fig


_DRAW = {"multi_head": _multi_head, "transformer_block": _transformer_block, "encoder_decoder": _encoder_decoder, "kv_cache": _kv_cache}


def draw(name: str, lang: str | None = None):
    """The diagram ``name`` (one of ``NAMES``) with labels in ``lang``; returns the Figure."""
    if name not in _DRAW:
        raise ValueError(f"unknown diagram {name!r}; choose one of {', '.join(NAMES)}")
    with mpl.rc_context():
        use_course_fonts()
        return _DRAW[name](lang)


def show(name: str, lang: str | None = None):
    """Draw the diagram and show it (in a notebook: one stored PNG output)."""
    draw(name, lang)
    plt.show()
