"""attnlab: self-attention and the Transformer, the shared code of the course.

Mask convention everywhere: bool, True = may attend. Shapes: B batch, H heads,
T queries, S keys, D model width.

The layout (docs/architecture.md): the core is flat here (attention, masks, multihead, block,
positional, training, causality); ``course/`` is the course's plumbing (languages and messages,
glossary, fonts and colours, the setup cell, the PASS/FAIL lines, copying the lessons);
``figures/`` the static figures; ``reversal/``, ``translator/`` and ``poet/`` the models of
lessons 07, 08 and 10; ``explorer/`` the interactive explorer; ``exercises/`` the checkers.

`import attnlab` loads only the torch-based core. The parts that need ipywidgets, IPython or
matplotlib (the explorer, the plots) and the lesson packages load on first use (PEP 562):
`attnlab.explore(...)`, `attnlab.plot_attention(...)`, `attnlab.reversal`, `attnlab.exercises.l05`.
To add a lazily loaded name, add one line to _LAZY. The package's words are data files
(attnlab/messages/*.json), loaded with attnlab.course.i18n.
"""
from __future__ import annotations

import importlib

from .attention import scaled_dot_product_attention
from .block import DecoderBlock, FeedForward, TransformerBlock
from .causality import CausalityResult, causality_check
from .course import VERSION as __version__
from .course import setup_notebook
from .course.i18n import fmt, get_language, num, set_language, t
from .masks import causal_mask, decoder_mask, describe, padding_mask
from .multihead import MultiHeadAttention
from .positional import PositionalEncoding, sinusoidal_encoding
from .text import tokenize
from .course.verify import check_close, check_true


# name -> (submodule relative to attnlab, attribute); attribute None means the submodule itself.
_LAZY: dict[str, tuple[str, str | None]] = {
    "explore": (".explorer", "explore"),                    # ipywidgets, matplotlib
    "AttentionExplorer": (".explorer", "AttentionExplorer"),
    "explorer": (".explorer", None),
    "plot_attention": (".figures.plotting", "plot_attention"),   # matplotlib.pyplot
    "plot_heads": (".figures.plotting", "plot_heads"),
    "plotting": (".figures.plotting", None),
    "heatmap_grid": (".figures.heatmap_grid", None),
    "diagrams": (".figures.diagrams", None),                # lessons 02, 05, 06, 08: attnlab.diagrams.draw(name)
    "figures": (".figures", None),
    "fonts": (".course.fonts", None),                       # lesson 10: fonts.unsupported_chars(...)
    "exercises": (".exercises", None),                      # attnlab.exercises.l05.check_...
    "reversal": (".reversal", None),                        # lesson 07: attnlab.reversal.load_pretrained()
    "translator": (".translator", None),                    # lesson 08: the encoder-decoder
    "numwords": (".translator.numwords", None),             # lesson 08: numbers in words
    "poet": (".poet", None),                                # lesson 10: the verse GPT
}



def __getattr__(name: str):
    """Import a lazily loaded name on first access (PEP 562) and keep it."""
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module = importlib.import_module(module_name, __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "scaled_dot_product_attention", "MultiHeadAttention", "FeedForward", "TransformerBlock",
    "DecoderBlock", "padding_mask", "causal_mask", "decoder_mask", "describe",
    "sinusoidal_encoding", "PositionalEncoding", "causality_check", "CausalityResult",
    "set_language", "get_language", "t", "num", "fmt", "setup_notebook", "plot_attention", "plot_heads",
    "tokenize", "check_close", "check_true", "explore", "AttentionExplorer",
]
