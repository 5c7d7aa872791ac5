"""Reference solutions for lesson 05 (the Transformer block). For instructors; no notebook imports this."""
import torch


def post_ln_block(x, attn, ffn, norm1, norm2):
    """Post-LN block (the 2017 paper, seed 000): add the residual first, then normalise the sum.

    x = LN1(x + Attn(x));  x = LN2(x + FFN(x))
    """
    x = norm1(x + attn(x))
    x = norm2(x + ffn(x))
    return x


def pre_ln_block(x, attn, ffn, norm1, norm2):
    """Pre-LN block (GPT-2): normalise only the sublayer's input; the residual stream stays untouched.

    x = x + Attn(LN1(x));  x = x + FFN(LN2(x))
    """
    x = x + attn(norm1(x))
    x = x + ffn(norm2(x))
    return x


def leaky_mask(T):
    """A mask that leaks: every position may attend to every key, the future included."""
    return torch.ones(T, T, dtype=torch.bool)


def safe_mask(T):
    """The causal mask, True = may attend: row i sees keys 0..i (lower triangle, diagonal included)."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool))
