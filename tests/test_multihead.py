"""MultiHeadAttention against nn.MultiheadAttention with the weights copied over."""
import pytest
import torch
import torch.nn as nn

from attnlab import MultiHeadAttention, causal_mask, padding_mask

D, H = 16, 4


def pair(dtype):
    torch.manual_seed(0)
    ours = MultiHeadAttention(D, H).to(dtype).eval()
    ref = nn.MultiheadAttention(D, H, batch_first=True, dtype=dtype).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    return ours, ref


def masks(T, S):
    ids = torch.tensor([[1, 2, 3, 4, 5, 0, 0][:S], [1, 2, 3, 4, 5, 6, 7][:S]])
    pad = padding_mask(ids, 0)
    return {"none": None, "causal": causal_mask(T, S), "padding": pad, "causal+padding": causal_mask(T, S) & pad}


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("kind", ["none", "causal", "padding", "causal+padding"])
@pytest.mark.parametrize("T,S", [(7, 7), (4, 7)])       # self-attention shape, and cross-attention S != T
def test_matches_nn_multiheadattention(dtype, tol, kind, T, S):
    ours, ref = pair(dtype)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, T, D, generator=g, dtype=dtype)
    mem = x if S == T else torch.randn(2, S, D, generator=g, dtype=dtype)
    mask = masks(T, S)[kind]
    out, w = ours(x, mem, mem, mask=mask)
    fast, none = ours(x, mem, mem, mask=mask, need_weights=False)
    # nn.MultiheadAttention's bool masks mean the opposite: True = blocked.
    blocked = None if mask is None else ~mask.expand(2, H, T, S).reshape(2 * H, T, S)
    ref_out, ref_w = ref(x, mem, mem, attn_mask=blocked, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=tol, rtol=tol)
    torch.testing.assert_close(w, ref_w, atol=tol, rtol=tol)
    torch.testing.assert_close(fast, ref_out, atol=tol, rtol=tol)
    assert none is None and w.shape == (2, H, T, S)


def test_projections_created_in_order():
    names = [n for n, _ in MultiHeadAttention(8, 2).named_children()]
    assert names[:4] == ["q_proj", "k_proj", "v_proj", "out_proj"]


def test_fully_masked_rows_give_zeros_on_both_paths_with_finite_grads():
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H)
    ids = torch.tensor([[0, 0, 3, 4], [1, 2, 3, 4]])
    mask = causal_mask(4) & padding_mask(ids, 0)
    for need_weights in (True, False):
        x = torch.randn(2, 4, D, requires_grad=True)
        out, _ = mha(x, mask=mask, need_weights=need_weights)
        torch.testing.assert_close(out[0, :2], mha.out_proj.bias.expand(2, D))  # zero context -> bias only
        out.sum().backward()
        assert torch.isfinite(x.grad).all()
        assert all(torch.isfinite(p.grad).all() for p in mha.parameters())
        mha.zero_grad()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_both_paths(dtype):
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H).to(dtype)
    x = torch.randn(2, 5, D, dtype=dtype)
    for nw in (True, False):
        out, _ = mha(x, mask=causal_mask(5), need_weights=nw)
        assert out.dtype == dtype and torch.isfinite(out).all()


def test_autocast():
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H)
    x = torch.randn(2, 5, D)
    ref, _ = mha(x, mask=causal_mask(5))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, w = mha(x, mask=causal_mask(5))
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out.float(), ref, atol=0.1, rtol=0.1)


def test_weights_returned_before_dropout():
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H, dropout=0.5).train()
    x = torch.randn(1, 5, D)
    _, w = mha(x)
    torch.testing.assert_close(w.sum(-1), torch.ones(1, H, 5))
