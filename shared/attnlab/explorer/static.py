"""The explorer's static figure (mask type x head) for readers without a kernel: GitHub, nbviewer, PDF."""
from __future__ import annotations

import torch

from ..course.fonts import use_course_fonts
from ..figures.heatmap_grid import heatmap_grid
from ..course.i18n import get_language, t
from .compute import compute, empty_rows, pad_flags
from .state import D_MODEL, MASK_TYPES, ExplorerState


def plot_grid(sentence: str | None = None, num_heads: int = 4, pad: int = 2, pad_side: str = "left",
              scaled: bool = True, lang: str | None = None):
    """One row per mask type, one column per head. A pyplot Figure (end the cell with ``plt.show()``).
    The course fonts apply to this figure only: the caller's rcParams are left as they were."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    with mpl.rc_context():
        use_course_fonts()                  # the figure's texts take their fonts when they are created
        return _plot_grid(plt, sentence, num_heads, pad, pad_side, scaled, lang)


def _plot_grid(plt, sentence, num_heads, pad, pad_side, scaled, lang):
    lang = get_language() if lang is None else lang
    sentence = t("example.long", lang) if sentence is None else sentence
    states = [ExplorerState(sentence=sentence, mask=m, num_heads=num_heads, pad=pad, pad_side=pad_side,
                            scaled=scaled, lang=lang) for m in MASK_TYPES]
    results = [compute(s) for s in states]
    weights = torch.stack([r.weights for r in results]).numpy()          # (4, H, T, T)
    masks = torch.stack([r.mask for r in results])[:, None].numpy()       # (4, 1, T, T)
    tokens = results[0].tokens
    empty = max(empty_rows(r.mask) for r in results)
    d_k = D_MODEL // num_heads
    scale = t("explorer.scaled_title" if scaled else "explorer.unscaled_title", lang, d_k=d_k)
    fig = plt.figure(figsize=(1.6 + 2.0 * num_heads, 1.6 + 2.0 * len(MASK_TYPES)), dpi=80)
    heatmap_grid(fig, weights, masks, tokens,
                 titles=[t("plot.head", lang, i=h + 1) for _ in MASK_TYPES for h in range(num_heads)],
                 xlabel=t("plot.keys", lang), ylabel=[t(f"explorer.mask.{m}", lang) for m in MASK_TYPES],
                 suptitle=f"{t('explorer.mask', lang)} × {t('explorer.heads', lang)} · d_k = {d_k} · {scale}",
                 footnote=f"{t('explorer.legend', lang)} {t('explorer.legend_masked_static', lang)}",
                 muted=pad_flags(states[0], len(tokens)),
                 warning=t("explorer.note.empty_rows", lang, n=empty) if empty else "")
    return fig
