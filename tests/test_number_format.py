"""Numbers in the reader's format everywhere a student reads one: Vietnamese writes 3,9485 and
124.439.808, in scientific notation too (-3,4028e+38), and in the figures' tick labels (0,2);
Chinese and English keep 3.9485 and 0.2. No global state (rcParams) changes."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib as mpl  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from attnlab.course.i18n import fmt, num, register, t, CATALOG  # noqa: E402
from attnlab.figures.plotting import localize_ticks, plot_attention, plot_heads  # noqa: E402


def test_scientific_notation_follows_the_language():
    assert num(-3.4028e38, ".4e", "vi") == "-3,4028e+38"
    assert num(-3.4028e38, ".4e", "zh") == "-3.4028e+38"
    assert num(1.5e-6, ".2E", "vi") == "1,50E-06" and num(12.8, ".2e", "vi") == "1,28e+01"
    assert num(-65504.0, ",.0f", "vi") == "-65.504" and num(float("inf"), ".1f", "vi") == "inf"
    register({"x.sci": {"vi": "{x:.2e}", "zh": "{x:.2e}", "en": "{x:.2e}"}})
    try:
        assert t("x.sci", "vi", x=0.0) == "0,00e+00" and t("x.sci", "zh", x=0.0) == "0.00e+00"
    finally:
        CATALOG.pop("x.sci")


def test_fmt_formats_a_whole_line_in_the_readers_format():
    line = "Loss {:.3f} after {:,} steps ({share:.0%}), {x:.1e}; step {}"
    args = (1.61849, 2000, 7)
    assert fmt(line, *args, share=0.25, x=1.5e-6, lang="vi") == "Loss 1,618 after 2.000 steps (25%), 1,5e-06; step 7"
    assert fmt(line, *args, share=0.25, x=1.5e-6, lang="zh") == "Loss 1.618 after 2,000 steps (25%), 1.5e-06; step 7"
    assert fmt("{:.2f} {:.1f}", torch.tensor(3.14159), torch.tensor([2.0]).sum(), lang="vi") == "3,14 2,0"
    assert fmt("{} · {!r} · {}", "a.b,c", "x.y", True, lang="vi") == "a.b,c · 'x.y' · True"   # words stay words
    import attnlab
    before = attnlab.get_language()
    try:
        attnlab.set_language("vi")
        assert attnlab.fmt("{:,}", 124439808) == "124.439.808"         # the current language by default
    finally:
        attnlab.set_language(before)


def _labels(axis):
    fig = axis.figure
    fig.canvas.draw()
    return [lab.get_text() for lab in axis.get_ticklabels() if lab.get_text()]


def test_tick_labels_follow_the_language():
    rc = dict(mpl.rcParams)
    w = torch.softmax(torch.randn(3, 3, generator=torch.Generator().manual_seed(0)), -1)
    ax = plot_attention(w, ["a", "b", "c"], lang="vi")
    colorbar_ax = ax.figure.axes[-1]
    assert "0,2" in _labels(colorbar_ax.yaxis) and "0.2" not in _labels(colorbar_ax.yaxis)
    assert _labels(ax.xaxis) == ["a", "b", "c"]                     # words stay words
    ax_zh = plot_attention(w, ["a", "b", "c"], lang="zh")
    assert "0.2" in _labels(ax_zh.figure.axes[-1].yaxis)
    fig, line = plt.subplots()
    line.plot([0, 0.5, 1.0], [1000, 2500, 4000])
    localize_ticks(fig, "vi")
    assert "0,4" in _labels(line.xaxis) and "2000" in _labels(line.yaxis)        # matplotlib does not group
    fig = plot_heads(torch.stack([w, w]), lang="vi", vmax=0.5)
    assert all("." not in s for a in fig.axes for s in _labels(a.yaxis) if s[0].isdigit())
    plt.close("all")
    assert dict(mpl.rcParams) == rc                                  # no global side effect


def test_heatmap_grid_numbers_follow_the_language():
    from attnlab.figures.heatmap_grid import heatmap_grid, new_figure
    w = torch.full((1, 1, 2, 2), 0.5).numpy()
    fig = new_figure(4, 3, 80)
    heatmap_grid(fig, w, torch.ones(2, 2, dtype=torch.bool).numpy(), ["a", "b"], titles=["h"], xlabel="x",
                 ylabel="y", annotate=True, lang="vi")
    texts = [tx.get_text() for tx in fig.axes[0].texts if tx.get_visible()]
    assert "0,50" in texts and "0,5" in texts and not any(s in texts for s in ("0.50", "0.5"))
