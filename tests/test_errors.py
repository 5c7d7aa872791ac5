"""Bad input gets a clear error naming what was wrong, never a deep torch traceback."""
import numpy as np
import pytest
import torch

from attnlab import (MultiHeadAttention, PositionalEncoding, TransformerBlock, causal_mask, decoder_mask,
                     padding_mask, scaled_dot_product_attention)


def qkv(T=4, S=4, D=8, dtype=torch.float32):
    return torch.randn(2, 2, T, D, dtype=dtype), torch.randn(2, 2, S, D, dtype=dtype), torch.randn(2, 2, S, D, dtype=dtype)


def test_d_model_not_divisible_by_heads():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=3"):
        MultiHeadAttention(10, 3)


def test_non_bool_mask():
    q, k, v = qkv()
    with pytest.raises(TypeError, match="mask must have dtype torch.bool.*got torch.float32"):
        scaled_dot_product_attention(q, k, v, torch.ones(4, 4))
    with pytest.raises(TypeError, match="got torch.int64"):
        MultiHeadAttention(8, 2)(torch.randn(2, 4, 8), mask=torch.ones(4, 4, dtype=torch.long))


def test_mask_not_broadcastable():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"mask of shape \(1, 1, 5, 5\) does not fit the scores' shape \(2, 2, 4, 4\)"):
        scaled_dot_product_attention(q, k, v, causal_mask(5))
    with pytest.raises(ValueError, match=r"mask has shape \(1, 1, 4, 4\); expected 4-D \(B, H, T, S\) = \(2, 2, 4, 6\)"):
        MultiHeadAttention(8, 2)(torch.randn(2, 4, 8), torch.randn(2, 6, 8), mask=causal_mask(4))
    with pytest.raises(ValueError, match=r"\(1, 1, 1, 4, 4\) does not fit.*needs 4 dimensions"):
        scaled_dot_product_attention(q, k, v, torch.ones(1, 1, 1, 4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\(4,\) does not fit the scores' shape \(2, 2, 4, 4\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(4, dtype=torch.bool))


@pytest.mark.parametrize("d_model,num_heads,error,message", [
    (0, 2, ValueError, "d_model must be a positive int, got 0"),
    (-8, 2, ValueError, "d_model must be a positive int, got -8"),
    (8, 0, ValueError, "num_heads must be a positive int, got 0"),
    (8, -2, ValueError, "num_heads must be a positive int, got -2"),
    (10, 3, ValueError, "d_model=10 is not divisible by num_heads=3"),
    (8.0, 2, TypeError, "d_model must be an int, got float 8.0"),
    (True, 1, TypeError, "d_model must be an int, got bool True"),
])
def test_bad_sizes(d_model, num_heads, error, message):
    with pytest.raises(error, match=message):
        MultiHeadAttention(d_model, num_heads)
    with pytest.raises(error, match=message):
        TransformerBlock(d_model, num_heads, 16)


def test_numpy_sizes_accepted_and_zero_d_k_refused():
    assert MultiHeadAttention(np.int64(8), np.int32(2)).d_k == 4
    with pytest.raises(ValueError, match=r"d_k \(the last dimension of q and k\) must be at least 1"):
        scaled_dot_product_attention(torch.randn(2, 3, 0), torch.randn(2, 3, 0), torch.randn(2, 3, 0))
    with pytest.raises(ValueError, match="d_ff must be a positive int, got 0"):
        TransformerBlock(8, 2, 0)


def test_wrong_rank_and_width():
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"query must have 3 dimensions, got shape \(4, 8\)"):
        mha(torch.randn(4, 8))
    with pytest.raises(ValueError, match=r"must end in d_model=8.*\(2, 4, 6\)"):
        mha(torch.randn(2, 4, 6))
    with pytest.raises(ValueError, match=r"q must have 2, 3 or 4 dimensions, got shape \(5,\)"):
        scaled_dot_product_attention(torch.randn(5), torch.randn(5), torch.randn(5))
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"q and k must share their last dimension"):
        scaled_dot_product_attention(q, k[..., :4], v)
    with pytest.raises(ValueError, match=r"k and v must have the same number of keys S"):
        scaled_dot_product_attention(q, k, v[..., :3, :])
    with pytest.raises(ValueError, match=r"same B and S"):
        mha(torch.randn(2, 4, 8), torch.randn(2, 5, 8), torch.randn(2, 6, 8))


def test_mismatched_dtypes_and_types():
    q, k, v = qkv()
    with pytest.raises(TypeError, match="q has dtype torch.float32 but k has dtype torch.float64"):
        scaled_dot_product_attention(q, k.double(), v)
    with pytest.raises(TypeError, match="must be a floating-point tensor, got dtype torch.int64"):
        scaled_dot_product_attention(q.long(), k.long(), v.long())
    with pytest.raises(TypeError, match="k must be a torch.Tensor, got list"):
        scaled_dot_product_attention(q, [1, 2], v)
    with pytest.raises(ValueError, match="input is torch.float64 on cpu but the module's weights are torch.float32"):
        MultiHeadAttention(8, 2)(torch.randn(2, 4, 8, dtype=torch.float64))


def test_mismatched_devices_named():
    # A 'meta' tensor stands in for a second device so this runs without a GPU.
    q, k, v = qkv()
    with pytest.raises(ValueError, match="q is on cpu but k is on meta"):
        scaled_dot_product_attention(q, k.to("meta"), v)
    with pytest.raises(ValueError, match="mask is on meta but the scores are on cpu"):
        scaled_dot_product_attention(q, k, v, causal_mask(4, device="meta"))


def test_mask_helpers_validate():
    with pytest.raises(ValueError, match=r"token_ids must have 2 dimensions, got shape \(5,\)"):
        padding_mask(torch.tensor([1, 2, 3, 0, 0]))
    with pytest.raises(TypeError, match="integer tensor, got dtype torch.float32"):
        decoder_mask(torch.ones(2, 3))
    with pytest.raises(ValueError, match="T must be a positive int, got 0"):
        causal_mask(0)
    with pytest.raises(TypeError, match="T must be an int, got float 4.0"):
        causal_mask(4.0)
    with pytest.raises(TypeError, match=r"pad_id must be an int \(the id of the padding token\), got NoneType None"):
        padding_mask(torch.tensor([[1, 2, 0]]), None)
    with pytest.raises(TypeError, match="pad_id must be an int"):
        decoder_mask(torch.tensor([[1, 2, 0]]), "<pad>")
    with pytest.raises(ValueError, match="S >= T"):
        causal_mask(5, 3)


def test_positional_encoding_width_mismatch():
    with pytest.raises(ValueError, match=r"x has shape \(1, 3, 6\) but the encoding has d_model=8"):
        PositionalEncoding(8)(torch.zeros(1, 3, 6))
