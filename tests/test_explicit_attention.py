"""Causality and self/cross attention are said by arguments, never inferred (issue 27 §1).

A mask is used by what it contains, however it was edited (through `.data`, numpy, DLPack, the
storage, a shallow copy) and under every torch mode (no_grad, inference_mode, torch.compile);
``is_causal=True`` is the causal rule, bottom-right aligned, checked against PyTorch's own
`causal_lower_right`; a self-attention cache refuses a key rather than guess from identity.
PyTorch is the oracle (copied weights; nn.MultiheadAttention's bool masks mean the opposite).
"""
import copy
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

import attnlab
from attnlab import (DecoderBlock, MultiHeadAttention, TransformerBlock, causal_mask, decoder_mask, padding_mask,
                     scaled_dot_product_attention)

D, H, T = 16, 4, 5


def pair(dtype=torch.float32):
    torch.manual_seed(0)
    ours = MultiHeadAttention(D, H).to(dtype).eval()
    ref = nn.MultiheadAttention(D, H, batch_first=True, dtype=dtype).eval()
    return ours, ours.copy_to(ref)


def torch_out(ref, x, mask, kv=None):
    """nn.MultiheadAttention with attnlab's mask (True = may attend) turned into its own (True = blocked)."""
    kv = x if kv is None else kv
    B, S = x.shape[0], kv.shape[1]
    blocked = ~mask.expand(B, H, x.shape[1], S).reshape(B * H, x.shape[1], S)
    return ref(x, kv, kv, attn_mask=blocked, need_weights=False)[0]


# ----------------------------------------------------------------- a mask is used by its content
def _edit_data(m):
    m.data[0, 0, 0, 4] = True


def _edit_numpy(m):
    m.numpy()[0, 0, 0, 4] = True


def _edit_asarray(m):
    np.asarray(m)[0, 0, 2, 3] = True


def _edit_from_numpy(m):
    torch.from_numpy(m.numpy())[0, 0, 1, 3] = True


def _edit_dlpack(m):
    torch.utils.dlpack.from_dlpack(m)[0, 0, 0, 4] = True


def _edit_storage(m):
    m.untyped_storage()[4] = 1                                            # element (0, 4)


def _edit_frombuffer(m):
    torch.frombuffer(m.numpy(), dtype=torch.bool)[4] = True


def _edit_shallow_copy(m):
    c = copy.copy(m)                                                      # shares m's storage
    c[0, 0, 0, 4] = True


ROUTES = [_edit_data, _edit_numpy, _edit_asarray, _edit_from_numpy, _edit_dlpack, _edit_storage, _edit_frombuffer,
          _edit_shallow_copy]


@pytest.mark.parametrize("edit", ROUTES, ids=lambda f: f.__name__[6:])
def test_an_edited_causal_mask_is_used_by_its_content_on_both_paths(edit):
    """Each route changes the contents without a version bump; the old fast path kept calling
    torch's kernel with is_causal=True and was off by up to 0.54."""
    ours, ref = pair()
    x = torch.randn(2, T, D, generator=torch.Generator().manual_seed(1))
    m = causal_mask(T)
    edit(m)
    assert not torch.equal(m, causal_mask(T))                             # the route really edited it
    content = m.clone()
    with torch.no_grad():
        expected = torch_out(ref, x, content)
        for need_weights in (False, True):
            out, _ = ours(x, mask=m, need_weights=need_weights)
            torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)


def test_an_edited_module_buffer_is_used_by_its_content():
    ours, ref = pair()

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", causal_mask(T))

    holder = Holder()
    holder.mask.data[0, 0, 0, 4] = True
    x = torch.randn(2, T, D)
    with torch.no_grad():
        out, _ = ours(x, mask=holder.mask, need_weights=False)
        torch.testing.assert_close(out, torch_out(ref, x, holder.mask.clone()), atol=1e-6, rtol=1e-5)


def test_no_hidden_state_on_masks_and_no_inference_left():
    for m in (causal_mask(4), causal_mask(2, 6), decoder_mask(torch.ones(2, 3, dtype=torch.long))):
        assert vars(m) == {}                                              # a plain tensor, nothing attached
    assert not hasattr(attnlab.masks, "is_plain_causal")


# ------------------------------------------------------------------------------ torch.compile
@pytest.mark.parametrize("backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.slow)])
def test_compiled_attention_sees_an_in_place_mask_edit_between_calls(backend, request):
    """Dynamo guarded on the old tag, not on the contents: after `m[...] = False` the compiled
    function kept is_causal=True (0.185 off, inductor and aot_eager alike).

    The inductor case runs in a process of its own: on torch 2.5 (the floor) inductor builds its
    kernels with -ffast-math, and loading one turns on flush-to-zero for the whole process, so a
    later test's float64 subnormals became 0 (numpy 1.23 then warned in every np.finfo)."""
    if backend == "inductor" and not os.environ.get("ATTNLAB_OWN_PROCESS"):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", request.node.nodeid],
                           cwd=request.config.rootpath, env={**os.environ, "ATTNLAB_OWN_PROCESS": "1"},
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0 and "1 passed" in r.stdout.splitlines()[-1], r.stdout[-3000:] + r.stderr[-2000:]
        return
    torch._dynamo.reset()
    ours, ref = pair()
    x = torch.randn(2, T, D, generator=torch.Generator().manual_seed(2))
    fused = torch.compile(lambda x, m: ours(x, mask=m, need_weights=False)[0], backend=backend)
    causal = torch.compile(lambda x: ours(x, is_causal=True, need_weights=False)[0], backend=backend)
    m = causal_mask(T)
    with torch.no_grad():
        torch.testing.assert_close(fused(x, m), torch_out(ref, x, m.clone()), atol=1e-6, rtol=1e-5)
        m[0, 0, 4, 0] = False                                             # an ordinary in-place edit
        torch.testing.assert_close(fused(x, m), torch_out(ref, x, m.clone()), atol=1e-6, rtol=1e-5)
        fresh = causal_mask(T)
        fresh[0, 0, 3, 1] = False                                         # another mask, edited before the call
        torch.testing.assert_close(fused(x, fresh), torch_out(ref, x, fresh.clone()), atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(causal(x), torch_out(ref, x, causal_mask(T)), atol=1e-6, rtol=1e-5)


# ----------------------------------------------------------------- inference_mode and no_grad
@pytest.mark.parametrize("mode", [torch.inference_mode, torch.no_grad], ids=["inference_mode", "no_grad"])
def test_masks_modules_and_blocks_under_inference_mode_and_no_grad(mode):
    """`causal_mask(T)` itself raised under inference_mode (it read the version counter)."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H).eval()
    enc = TransformerBlock(D, H, 32, dropout=0.0).eval()
    dec = DecoderBlock(D, H, 32, dropout=0.0).eval()
    x, memory = torch.randn(2, T, D), torch.randn(2, 3, D)
    ids = torch.tensor([[1, 2, 3, 0, 0], [1, 2, 3, 4, 5]])
    expected = {}
    with torch.no_grad():
        for name, mask in (("causal", causal_mask(T)), ("decoder", decoder_mask(ids)), ("padding", padding_mask(ids))):
            expected[name] = mha(x, mask=mask)[0]
        expected["block"] = enc(x, is_causal=True)[0]
        expected["decoder_block"] = dec(x, memory, self_mask=padding_mask(ids), is_causal=True)[0]
    with mode():
        made = {"causal": causal_mask(T), "decoder": decoder_mask(ids), "padding": padding_mask(ids)}
        for name, mask in made.items():
            for need_weights in (True, False):
                torch.testing.assert_close(mha(x, mask=mask, need_weights=need_weights)[0], expected[name])
            torch.testing.assert_close(mha(x, mask=mask, is_causal=True, need_weights=False)[0],
                                       mha(x, mask=mask & causal_mask(T))[0])
        torch.testing.assert_close(mha(x, is_causal=True, need_weights=False)[0], expected["causal"])
        torch.testing.assert_close(enc(x, is_causal=True)[0], expected["block"])
        torch.testing.assert_close(dec(x, memory, self_mask=padding_mask(ids), is_causal=True)[0],
                                   expected["decoder_block"])
        past, steps = None, []
        for t in range(T):                                                 # a KV cache, one position at a time
            out, _, past = mha(x[:, t:t + 1], is_causal=True, past_key_value=past, use_cache=True)
            steps.append(out)
        torch.testing.assert_close(torch.cat(steps, 1), expected["causal"])


# -------------------------------------------------------------- self and cross, said at construction
def test_self_attention_with_a_cache_refuses_a_key_even_an_equal_one():
    """`key is not query` once decided self vs cross: an equal but distinct key made a cached
    self-attention reuse its past instead of growing it (0.77 off the full recomputation)."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H).eval()
    x = torch.randn(2, T, D)
    full, _ = mha(x, mask=causal_mask(T))
    past, steps = None, []
    for t in range(T):
        x_t = x[:, t:t + 1]
        with pytest.raises(ValueError, match=r"self-attention \(cross=False\).*key and value must not be given"):
            mha(x_t, x_t.clone(), x_t.clone(), past_key_value=past, use_cache=True)
        out, _, past = mha(x_t, past_key_value=past, use_cache=True)
        steps.append(out)
    assert past[0].shape[2] == T                                           # the cache grew every step
    torch.testing.assert_close(torch.cat(steps, 1), full)


def test_cross_attention_is_built_as_such_and_reuses_its_cache():
    torch.manual_seed(0)
    cross = MultiHeadAttention(D, H, cross=True).eval()
    x, memory = torch.randn(2, T, D), torch.randn(2, 3, D)
    with pytest.raises(ValueError, match=r"cross-attention \(cross=True\): give key"):
        cross(x)
    full, _ = cross(x, memory)
    past, steps = None, []
    for t in range(T):
        out, _, past = cross(x[:, t:t + 1], memory, past_key_value=past, use_cache=True)
        steps.append(out)
        assert past[0].shape[2] == 3                                       # projected once, reused
    torch.testing.assert_close(torch.cat(steps, 1), full)
    with pytest.raises(ValueError, match="holds the keys of 3 positions but key has 4"):
        cross(x[:, :1], torch.randn(2, 4, D), past_key_value=past)
    with pytest.raises(TypeError, match="cross must be a bool, got int 1"):
        MultiHeadAttention(D, H, cross=1)
    block = DecoderBlock(D, H, 32)
    assert block.self_attention.cross is False and block.cross_attention.cross is True


# ------------------------------------------------------------- what is_causal means, torch as oracle
@pytest.mark.parametrize("T_, S", [(5, 5), (2, 6), (1, 4), (3, 4)])
def test_is_causal_is_the_bottom_right_causal_rule(T_, S):
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, H, n, 8, generator=g, dtype=torch.float64) for n in (T_, S, S))
    oracle = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(T_, S))
    out, w = scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, oracle)
    torch.testing.assert_close(out, scaled_dot_product_attention(q, k, v, mask=causal_mask(T_, S))[0])
    assert torch.equal(w > 0, causal_mask(T_, S).expand_as(w))
    if T_ == S:
        torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    else:                                    # torch's F.sdpa(is_causal=True) aligns to the top left instead
        assert not torch.allclose(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    ours, ref = pair(torch.float64)
    x = torch.randn(2, S, D, generator=g, dtype=torch.float64)
    with torch.no_grad():
        expected = torch_out(ref, x[:, S - T_:], causal_mask(T_, S), kv=x)
        for need_weights in (True, False):                    # the last T_ of S positions, as with a KV cache
            torch.testing.assert_close(ours(x[:, S - T_:], x, x, is_causal=True, need_weights=need_weights)[0], expected)


@pytest.mark.parametrize("need_weights", [True, False])
def test_a_mask_with_is_causal_means_both_and_empty_rows_give_zeros(need_weights):
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H)
    ids = torch.tensor([[0, 0, 3, 4], [1, 2, 3, 4]])                       # left padding: rows 0, 1 see nothing
    x = torch.randn(2, 4, D, requires_grad=True)
    out, _ = mha(x, mask=padding_mask(ids), is_causal=True, need_weights=need_weights)
    expected, _ = mha(x, mask=decoder_mask(ids), need_weights=True)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(out[0, :2], mha.out_proj.bias.expand(2, D))  # zero context -> bias only
    out.sum().backward()
    assert torch.isfinite(x.grad).all() and all(torch.isfinite(p.grad).all() for p in mha.parameters())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("need_weights", [True, False])
def test_is_causal_in_half_precision_at_large_magnitude_as_accurate_as_torch(dtype, need_weights):
    ours, ref = pair(torch.float64)
    x = (80 * torch.randn(2, 9, D, generator=torch.Generator().manual_seed(0), dtype=torch.float64)).to(dtype)
    blocked = ~causal_mask(9)[0, 0]
    with torch.no_grad():
        exact = ref(x.double(), x.double(), x.double(), attn_mask=blocked)[0]
        ours.to(dtype), ref.to(dtype)
        out, _ = ours(x, is_causal=True, need_weights=need_weights)
        theirs = ref(x, x, x, attn_mask=blocked, is_causal=True)[0]
    assert out.dtype == dtype and torch.isfinite(out).all()
    err, err_torch = ((t.double() - exact).abs().max().item() for t in (out, theirs))
    assert err <= 2 * err_torch + torch.finfo(dtype).eps * exact.abs().max().item(), (err, err_torch)


def test_is_causal_refuses_what_it_cannot_mean():
    q = torch.randn(1, 1, 4, 8)
    with pytest.raises(ValueError, match=r"is_causal=True needs S >= T .* got T=4, S=2"):
        scaled_dot_product_attention(q, q[..., :2, :], q[..., :2, :], is_causal=True)
    with pytest.raises(TypeError, match="is_causal must be a bool, got int 1"):
        scaled_dot_product_attention(q, q, q, is_causal=1)
    mha = MultiHeadAttention(D, H)
    with pytest.raises(ValueError, match=r"is_causal=True needs S >= T .* got T=4, S=2"):
        mha(torch.randn(1, 4, D), torch.randn(1, 2, D), is_causal=True)
    with pytest.raises(TypeError, match="is_causal must be a bool, got str 'yes'"):
        mha(torch.randn(1, 4, D), is_causal="yes")


def test_the_float_mask_hint_gives_the_conversion_that_works():
    """An additive mask (0 / -inf) is True exactly on the blocked cells under `.bool()`: the hint
    must say `mask == 0`, and following it must give PyTorch's result for that mask."""
    additive = nn.Transformer.generate_square_subsequent_mask(T)          # 0 on and below the diagonal
    q, k, v = (torch.randn(2, H, T, 8, generator=torch.Generator().manual_seed(n)) for n in range(3))
    with pytest.raises(TypeError) as err:
        scaled_dot_product_attention(q, k, v, mask=additive[None, None])
    message = str(err.value)
    assert "`mask == 0`" in message and "Not with `mask.bool()`" in message
    out, _ = scaled_dot_product_attention(q, k, v, mask=(additive == 0)[None, None])
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=additive), atol=1e-6, rtol=1e-5)
