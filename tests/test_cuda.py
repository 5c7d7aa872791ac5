"""CUDA checks: run where a GPU is present, skipped with the reason elsewhere."""
import pytest
import torch
import torch.nn.functional as F

from attnlab import MultiHeadAttention, causal_mask, causality_check, padding_mask, scaled_dot_product_attention

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float16, 2e-2), (torch.bfloat16, 5e-2)])
def test_sdpa_matches_torch_on_cuda(dtype, tol):
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(2, 4, 16, 32, device="cuda", dtype=dtype, generator=g) for _ in range(3))
    ids = torch.tensor([[0, 0] + [1] * 14, [1] * 16], device="cuda")
    mask = causal_mask(16, device="cuda") & padding_mask(ids, 0)        # left padding: empty rows
    out, w = scaled_dot_product_attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask)
    assert torch.isfinite(out).all() and (out[0, :, :2] == 0).all()
    torch.testing.assert_close(out.float(), ref, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_fast_path_fully_masked_rows_on_cuda(dtype):
    torch.manual_seed(0)
    mha = MultiHeadAttention(64, 4).to("cuda", dtype)
    ids = torch.tensor([[0, 0, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]], device="cuda")
    mask = causal_mask(6, device="cuda") & padding_mask(ids, 0)
    x = torch.randn(2, 6, 64, device="cuda", dtype=dtype, requires_grad=True)
    fast, _ = mha(x, mask=mask, need_weights=False)
    slow, _ = mha(x, mask=mask, need_weights=True)
    torch.testing.assert_close(fast, slow, atol=3e-2, rtol=3e-2)
    fast.float().sum().backward()
    assert torch.isfinite(x.grad).all()


def test_causality_on_cuda():
    from attnlab import TransformerBlock
    torch.manual_seed(42)
    block = TransformerBlock(64, 8, 256).cuda()
    r = causality_check(block, verbose=False)
    assert r.passed and r.earlier_drift == 0.0


def test_device_mismatch_is_named():
    q = torch.randn(1, 1, 3, 4)
    with pytest.raises(ValueError, match="q is on cpu but k is on cuda"):
        scaled_dot_product_attention(q, q.cuda(), q)
