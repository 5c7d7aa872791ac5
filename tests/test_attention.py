"""scaled_dot_product_attention against torch's F.scaled_dot_product_attention."""
import pytest
import torch
import torch.nn.functional as F

from attnlab import causal_mask, padding_mask, scaled_dot_product_attention

DTYPES = [(torch.float32, 1e-5), (torch.float64, 1e-12)]


def qkv(B=2, H=3, T=5, S=5, D=8, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, n, D, generator=g, dtype=dtype) for n in (T, S, S)]


def masks(T, S=5):
    ids = torch.tensor([[4, 5, 6, 0, 0], [1, 2, 3, 4, 5]])                # (B=2, S=5), pad id 0
    return {
        "none": None,
        "causal": causal_mask(T, S),
        "padding": padding_mask(ids, pad_id=0),
        "causal+padding": causal_mask(T, S) & padding_mask(ids, pad_id=0),
    }


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("kind", ["none", "causal", "padding", "causal+padding"])
@pytest.mark.parametrize("T,S", [(5, 5), (3, 5)])
def test_matches_torch_sdpa(dtype, tol, kind, T, S):
    q, k, v = qkv(T=T, S=S, dtype=dtype)
    mask = masks(T, S)[kind]
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, ref, atol=tol, rtol=tol)
    assert weights.shape == (2, 3, T, S)
    # Rows sum to 1 (every row here sees at least one key) and masked entries are exactly 0.
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, T, dtype=dtype), atol=tol, rtol=0)
    if mask is not None:
        assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()


def test_reference_formula():
    q, k, v = qkv(dtype=torch.float64)
    out, w = scaled_dot_product_attention(q, k, v)
    expected_w = torch.softmax(q @ k.transpose(-2, -1) / 8 ** 0.5, dim=-1)
    torch.testing.assert_close(w, expected_w)
    torch.testing.assert_close(out, expected_w @ v)


def test_left_padding_with_causal_mask_no_nan_and_equals_sdpa():
    # Left padding + causal: query 0 and 1 of the first sequence see only padding keys.
    ids = torch.tensor([[0, 0, 3, 4, 5], [1, 2, 3, 4, 5]])
    mask = causal_mask(5) & padding_mask(ids, pad_id=0)                  # (B, 1, T, T)
    assert not mask[0, 0, 0].any() and not mask[0, 0, 1].any()
    q, k, v = (t.requires_grad_() for t in qkv(T=5, S=5))
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    assert (w[0, :, :2] == 0).all() and (out[0, :, :2] == 0).all()      # zero weights, zero output
    ref = F.scaled_dot_product_attention(q.detach(), k.detach(), v.detach(), attn_mask=mask)
    torch.testing.assert_close(out.detach(), ref, atol=1e-5, rtol=1e-5)
    (out.square().sum() + w.sum()).backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    # The gradient of a fully masked query is exactly zero.
    assert (q.grad[0, :, :2] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(dtype):
    q, k, v = qkv(dtype=dtype)
    mask = causal_mask(5)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert out.dtype == dtype and w.dtype == dtype
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask)
    torch.testing.assert_close(out.float(), ref, atol=2e-2, rtol=2e-2)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_large_scores_as_accurate_as_torch(dtype):
    # The case: d_k = 128, entries around 25. Scores formed in half precision before
    # scaling overflowed float16 (NaN) and lost bfloat16's few digits (error 2.59 vs torch 0.010).
    g = torch.Generator().manual_seed(0)
    q, k, v = ((25 * torch.randn(2, 4, 16, 128, generator=g)).to(dtype) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    ours, _ = scaled_dot_product_attention(q, k, v)
    theirs = F.scaled_dot_product_attention(q, k, v)
    assert torch.isfinite(ours).all()
    err_ours, err_torch = ((t.double() - ref).abs().max().item() for t in (ours, theirs))
    assert err_ours <= 2 * err_torch + torch.finfo(dtype).eps * ref.abs().max().item(), (err_ours, err_torch)


def test_autocast_bfloat16():
    q, k, v = qkv()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, w = scaled_dot_product_attention(q, k, v, causal_mask(5))
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(5))
    assert out.dtype == w.dtype == theirs.dtype == torch.bfloat16      # as torch does under autocast
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(5))
    assert torch.isfinite(out).all()
    assert (out.float() - ref).abs().max() <= 2 * (theirs.float() - ref).abs().max()


def test_autocast_leaves_float64_alone():
    q, k, v = qkv(dtype=torch.float64)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, w = scaled_dot_product_attention(q, k, v, causal_mask(5))
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(5))
    assert out.dtype == theirs.dtype == torch.float64
    torch.testing.assert_close(out, theirs)


def test_dropout_p_in_training_only_and_weights_before_dropout():
    q, k, v = qkv()
    _, w_plain = scaled_dot_product_attention(q, k, v)
    torch.manual_seed(0)
    out, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5)          # training=True, as F.dropout
    torch.testing.assert_close(w, w_plain)                                # weights before dropout
    torch.manual_seed(0)
    dropped = torch.nn.functional.dropout(w_plain, 0.5)
    torch.testing.assert_close(out, dropped @ v)                           # output used the dropped weights
    out_eval, _ = scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=False)
    torch.testing.assert_close(out_eval, w_plain @ v)


@pytest.mark.parametrize("bad", [True, False])
def test_dropout_bool_refused(bad):
    # The old `dropout=True` meant p = 1.0 and zeroed the whole output.
    q, k, v = qkv()
    with pytest.raises(TypeError, match=f"dropout_p must be a float in \\[0, 1\\), got bool {bad}"):
        scaled_dot_product_attention(q, k, v, dropout_p=bad)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    with pytest.raises(TypeError, match="training must be a bool, got int 1"):
        scaled_dot_product_attention(q, k, v, dropout_p=0.1, training=1)


def test_scale_applied_to_q_not_to_scores():
    # One multiplication of (T, d_k) instead of (T, S); same result as scaling the scores.
    q, k, v = qkv(dtype=torch.float64, T=7, S=3)
    out, w = scaled_dot_product_attention(q, k, v, scale=0.3)
    expected_w = torch.softmax((q @ k.transpose(-2, -1)) * 0.3, dim=-1)
    torch.testing.assert_close(w, expected_w)
    torch.testing.assert_close(out, expected_w @ v)


def test_mask_must_have_the_scores_rank():
    # Right-aligned broadcasting would read a (B, S) mask as (T, S) when B == T, silently.
    q, k, v = qkv(B=5, T=5, S=4)
    with pytest.raises(ValueError, match=r"mask of shape \(5, 4\) does not fit the scores' shape \(5, 3, 5, 4\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(5, 4, dtype=torch.bool))
    out, _ = scaled_dot_product_attention(q[0, 0], k[0, 0], v[0, 0], torch.ones(5, 4, dtype=torch.bool))
    assert out.shape == (5, 8)                                            # 2-D q: a 2-D mask is right
