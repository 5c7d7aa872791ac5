"""attnlab: self-attention and the Transformer, the shared code of the course.

Mask convention everywhere: bool, True = may attend. Shapes: B batch, H heads,
T queries, S keys, D model width.
"""
from .attention import scaled_dot_product_attention
from .block import DecoderBlock, FeedForward, TransformerBlock
from . import exercises  # noqa: F401
from .course import setup_notebook
from .explorer import AttentionExplorer, explore
from .causality import CausalityResult, causality_check
from .i18n import get_language, num, set_language, t
from .masks import causal_mask, decoder_mask, describe, padding_mask
from .multihead import MultiHeadAttention
from .plotting import plot_attention, plot_heads
from .positional import PositionalEncoding, sinusoidal_encoding
from .text import tokenize
from . import tiny  # noqa: F401  (lesson 07: attnlab.tiny.load_pretrained(), attention_for(...))
from .verify import check_close, check_true

__version__ = "0.1.0"

__all__ = [
    "scaled_dot_product_attention", "MultiHeadAttention", "FeedForward", "TransformerBlock",
    "DecoderBlock", "padding_mask", "causal_mask", "decoder_mask", "describe",
    "sinusoidal_encoding", "PositionalEncoding", "causality_check", "CausalityResult",
    "set_language", "get_language", "t", "num", "setup_notebook", "plot_attention", "plot_heads",
    "tokenize", "check_close", "check_true",
]
__all__ += ["explore", "AttentionExplorer"]
