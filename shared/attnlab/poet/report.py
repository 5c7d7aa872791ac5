"""The verse report of lesson 10 as printed lines: each measure of ``form(lang).MEASURES``, then one
row per text (its rate, how many lines or pairs it counts, its chance level), aligned by display
width so that the columns line up in Vietnamese and in Chinese alike."""
from __future__ import annotations

from ..course.i18n import num, t
from ..text import display_width, pad
from .forms import Measure, form

MIN_COUNT = 100                   # a rate over fewer lines or pairs than this is not reported


def report_table(reports: dict[str, dict[str, Measure]], lang_of_form: str, lang: str | None = None,
                 min_count: int = MIN_COUNT) -> str:
    """The verse reports of several texts (name -> ``form.report(...)``) as aligned lines, measure
    by measure: each rate with how many it counts and its chance level, in the reader's language.
    A rate over fewer than ``min_count`` lines or pairs is not printed (only how few there are)."""
    width = max(display_width(name) for name in reports)
    out = []
    for key in form(lang_of_form).MEASURES:
        label = f"poet.measure.{lang_of_form}.{key}"
        out.append(t(label, lang))
        for name, report in reports.items():
            m, unit = report[key], t(label + ".unit", lang)
            if m.total == 0:
                out.append("  " + t("poet.report.none", lang, name=pad(name, width), unit=unit))
                continue
            if m.total < min_count:
                out.append("  " + t("poet.report.few", lang, name=pad(name, width), n=num(m.total, ",", lang), unit=unit))
                continue
            row = t("poet.report.row", lang, name=pad(name, width), rate=f"{num(100 * m.rate, '.0f', lang) + '%':>4}",
                    n=f"{num(m.total, ',', lang):>5}", unit=unit)
            if m.chance is not None:
                row += t("poet.report.chance", lang, chance=f"{num(100 * m.chance, '.0f', lang)}%")
            out.append("  " + row)
    return "\n".join(out)
