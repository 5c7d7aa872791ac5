"""A small sampling widget for lesson 10: temperature, top-k, top-p, seed, and a button.

``sampler(model, vocab, prompt)`` returns an ipywidgets box; each click writes one sample below
it. The labels follow the current language. ``top-k = 0`` in the slider means "off" (None).
"""
from __future__ import annotations

from ..course.i18n import t
from .sample import generate


def sampler(model, vocab, prompt: str, length: int = 160):
    import ipywidgets as w

    temperature = w.FloatSlider(value=0.8, min=0.1, max=2.0, step=0.1, description=t("poet.ui.temperature"))
    top_k = w.IntSlider(value=0, min=0, max=50, description=t("poet.ui.top_k"))
    top_p = w.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.05, description=t("poet.ui.top_p"))
    seed = w.IntText(value=0, description=t("poet.ui.seed"))
    text = w.Textarea(value=prompt, description=t("poet.ui.prompt"), rows=2)
    button = w.Button(description=t("poet.ui.sample"))
    out = w.Output()

    def on_click(_):
        out.clear_output()
        with out:
            try:
                body = generate(model, vocab, text.value, length, temperature=temperature.value,
                                top_k=top_k.value or None, top_p=top_p.value, seed=seed.value)[0]
                print(text.value + body)
            except ValueError as err:
                print(err)

    button.on_click(on_click)
    return w.VBox([text, w.HBox([temperature, top_k]), w.HBox([top_p, seed]), button, out])
