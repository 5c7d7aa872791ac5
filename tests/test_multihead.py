"""MultiHeadAttention against nn.MultiheadAttention with the weights copied over."""
import re

import pytest
import torch
import torch.nn as nn

from attnlab import MultiHeadAttention, causal_mask, padding_mask

D, H = 16, 4


def pair(dtype):
    torch.manual_seed(0)
    ours = MultiHeadAttention(D, H).to(dtype).eval()
    ref = nn.MultiheadAttention(D, H, batch_first=True, dtype=dtype).eval()
    ours.copy_to(ref)
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
@pytest.mark.parametrize("need_weights", [True, False])
def test_half_precision_both_paths_as_accurate_as_torch(dtype, need_weights):
    # Large activations: the scores of the weights path once overflowed float16.
    ours, ref = pair(torch.float64)
    g = torch.Generator().manual_seed(0)
    x = 60 * torch.randn(2, 9, D, generator=g, dtype=torch.float64)
    blocked = ~causal_mask(9)[0, 0]
    x_half = x.to(dtype)
    with torch.no_grad():
        exact = ref(x_half.double(), x_half.double(), x_half.double(), attn_mask=blocked)[0]
        ours.to(dtype), ref.to(dtype)
        out, _ = ours(x_half, mask=causal_mask(9), need_weights=need_weights)
        theirs = ref(x_half, x_half, x_half, attn_mask=blocked)[0]
    assert out.dtype == dtype and torch.isfinite(out).all()
    err, err_torch = ((t.double() - exact).abs().max().item() for t in (out, theirs))
    assert err <= 2 * err_torch + torch.finfo(dtype).eps * exact.abs().max().item(), (err, err_torch)


@pytest.mark.parametrize("need_weights", [True, False])
def test_autocast_float32_input_into_bfloat16_module_like_torch(need_weights):
    ours, ref = pair(torch.float32)
    x = torch.randn(2, 5, D)
    exact, _ = ref(x, x, x, attn_mask=~causal_mask(5)[0, 0])
    ours.bfloat16(), ref.bfloat16()
    with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
        theirs, _ = ref(x, x, x, attn_mask=~causal_mask(5)[0, 0])           # torch accepts this
        out, _ = ours(x, mask=causal_mask(5), need_weights=need_weights)
    assert out.dtype == theirs.dtype == torch.bfloat16
    assert (out.float() - exact).abs().max() <= 2 * (theirs.float() - exact).abs().max() + 1e-2
    with pytest.raises(ValueError, match="input is torch.float32 on cpu but the module's weights are torch.bfloat16"):
        ours(x)                                                              # outside autocast: refused


def test_dropout_in_training_mode_only_weights_before_dropout():
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H, dropout=0.5)
    x = torch.randn(1, 5, D)
    out_eval, w_eval = mha.eval()(x)
    assert torch.equal(mha(x)[0], out_eval)                               # eval: no dropout
    mha.train()
    for need_weights in (True, False):
        out, w = mha(x, need_weights=need_weights)
        assert not torch.allclose(out, out_eval)                          # train: dropout acts
    _, w = mha(x)
    torch.testing.assert_close(w, w_eval)                                 # weights taken before dropout
    with pytest.raises(TypeError, match="dropout must be a float in \\[0, 1\\), got bool True"):
        MultiHeadAttention(D, H, dropout=True)


# Masks that plain broadcasting would put on the wrong axes: (B, S) with B == T, (B, T, S)
# with B == H, and a 1-D (S,) mask that only one of the two paths used to take; and any 2-D
# mask, whose reading would otherwise depend on the batch size.
MISREADABLE = {
    "(B, S) with B == T": (torch.ones(4, 4, dtype=torch.bool).tril(), 4, r"padding_mask\(token_ids\)"),
    "(T, S) with B != T": (torch.ones(6, 4, dtype=torch.bool).tril(), 6, r"mask\[None, None\]"),
    "(B, T, S) with B == H": (torch.ones(4, 6, 4, dtype=torch.bool), 6, r"mask\[:, None\]"),
    "(S,)": (torch.ones(4, dtype=torch.bool), 4, r"mask\[None, None, None\]"),
}


@pytest.mark.parametrize("case", MISREADABLE)
@pytest.mark.parametrize("need_weights", [True, False])
def test_misreadable_masks_refused_on_both_paths_with_the_fix(case, need_weights):
    mask, T, fix = MISREADABLE[case]
    mha = MultiHeadAttention(D, H)
    x = torch.randn(4, T, D)
    with pytest.raises(ValueError, match="mask has shape") as err:
        mha(x, x[:, :4], x[:, :4], mask=mask, need_weights=need_weights)
    msg = str(err.value)
    assert str(tuple(mask.shape)) in msg and str((4, H, T, 4)) in msg     # given, expected
    assert re.search(fix, msg), msg                                        # and the likely fix


def test_padding_mask_read_correctly_where_a_2d_mask_was_misread():
    # The example: a (B, S) mask with B == T was read as (T, S), output off by up to 0.82.
    ours, ref = pair(torch.float64)
    ids = torch.tensor([[1, 2, 0, 0], [1, 2, 3, 0], [1, 0, 0, 0], [1, 2, 3, 4]])
    x = torch.randn(4, 4, D, dtype=torch.float64)
    out, _ = ours(x, mask=padding_mask(ids, 0))
    expected, _ = ref(x, x, x, key_padding_mask=ids == 0)
    torch.testing.assert_close(out, expected)


def test_fast_path_needs_nothing_from_the_kernel_on_empty_rows(monkeypatch):
    """torch < 2.5 returned NaN (and NaN gradients) for a query that sees no key. Stand in such a
    kernel: the fast path must still give zeros and finite gradients, never handing it an empty row."""
    real = torch.nn.functional.scaled_dot_product_attention

    def old_kernel(q, k, v, attn_mask=None, dropout_p=0.0, **kw):
        if attn_mask is None:
            return real(q, k, v, dropout_p=dropout_p, **kw)
        scores = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
        return scores.masked_fill(~attn_mask, float("-inf")).softmax(-1) @ v   # NaN on empty rows

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", old_kernel)
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H)
    ids = torch.tensor([[0, 0, 3, 4], [1, 2, 3, 4]])
    mask = causal_mask(4) & padding_mask(ids, 0)                          # rows 0, 1 of sequence 0: empty
    x = torch.randn(2, 4, D, requires_grad=True)
    out, _ = mha(x, mask=mask, need_weights=False)
    torch.testing.assert_close(out[0, :2], mha.out_proj.bias.expand(2, D))
    expected, _ = mha(x, mask=mask, need_weights=True)
    torch.testing.assert_close(out, expected)
    out.sum().backward()
    assert torch.isfinite(x.grad).all() and all(torch.isfinite(p.grad).all() for p in mha.parameters())


@pytest.mark.parametrize("need_weights", [True, False])
def test_no_host_device_sync(need_weights):
    """A 'meta' tensor has no data: any `.any()`/`.item()` used for control flow raises. Both paths
    run on it, so neither reads the mask back to the host (no sync on a GPU)."""
    mha = MultiHeadAttention(D, H).to("meta")
    x = torch.randn(2, 4, D, device="meta")
    mask = causal_mask(4, device="meta") & padding_mask(torch.ones(2, 4, dtype=torch.long, device="meta"))
    out, _ = mha(x, mask=mask, need_weights=need_weights)
    assert out.shape == (2, 4, D) and out.device.type == "meta"


def test_is_causal_takes_the_fused_causal_kernel_and_a_mask_is_used_by_its_content(monkeypatch):
    """is_causal=True (square, no mask) goes to torch's kernel as its own is_causal=True; any mask,
    causal_mask(T) included, goes as the explicit mask it is; a one-query step needs nothing; S > T
    gets the bottom-right causal mask. Every call equals the weights path."""
    real = torch.nn.functional.scaled_dot_product_attention
    calls = []

    def spy(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, **kw):
        calls.append((None if attn_mask is None else attn_mask.clone(), is_causal))
        return real(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, **kw)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", spy)
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H).eval()
    x = torch.randn(2, 5, D)
    edited = causal_mask(5)
    edited[..., 4, 0] = False                                            # the last query may not see key 0
    cases = [(dict(is_causal=True), None, True),
             (dict(mask=causal_mask(5)), causal_mask(5), False),
             (dict(mask=edited), edited, False),
             (dict(mask=edited, is_causal=True), edited, False)]
    for kwargs, sent, kernel_causal in cases:
        calls.clear()
        out, _ = mha(x, need_weights=False, **kwargs)
        assert len(calls) == 1 and calls[0][1] is kernel_causal
        assert (calls[0][0] is None) if sent is None else torch.equal(calls[0][0].expand(2, H, 5, 5), sent.expand(2, H, 5, 5))
        expected, weights = mha(x, need_weights=True, **kwargs)
        torch.testing.assert_close(out, expected)
        assert torch.equal(weights > 0, (causal_mask(5) if sent is None else sent).expand_as(weights))
    calls.clear()
    mha(x[:, :2], x, x, is_causal=True, need_weights=False)               # S > T: bottom-right aligned
    assert calls[0][1] is False and torch.equal(calls[0][0], causal_mask(2, 5)[0, 0])
    calls.clear()
    mha(x[:, :1], x, x, is_causal=True, need_weights=False)               # one query, the last: every key
    assert calls == [(None, False)]