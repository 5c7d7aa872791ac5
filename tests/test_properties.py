"""Property-based tests: attnlab against PyTorch on random shapes, masks, dtypes, with gradients.

Random B, H, T, S, d_k; bool masks of every allowed broadcast shape, with fully masked rows;
left/right padding with and without the causal mask; S != T (cross-attention). PyTorch is the
oracle: F.scaled_dot_product_attention, nn.MultiheadAttention, nn.TransformerEncoderLayer and
nn.TransformerDecoderLayer with the weights copied over (their bool masks mean the opposite).

Fully masked rows: torch leaves some of them NaN (nn.MultiheadAttention), so the reference runs
with those rows opened (`mask | empty`) and only the rows it defines are compared — through a
loss weighted by `keep`, so the gradients compare too; attnlab's own rows must be exactly zero.

Bounded and deterministic: derandomize=True, few examples, small sizes (about 10 s on one idle core, well under a minute on a busy 2-core machine).
"""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab import DecoderBlock, MultiHeadAttention, TransformerBlock, causal_mask, padding_mask
from attnlab import scaled_dot_product_attention as attention
from torch_refs import copy_ffn_norms

SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
TOL = {torch.float64: 1e-10, torch.float32: 2e-5}


# ----------------------------------------------------------------------------- strategies
@st.composite
def problems(draw, min_h=1, max_h=3, d_ks=(1, 2, 4, 8)):
    """(B, H, T, S, d_k, mask kind, broadcast dims, seed)."""
    B, H = draw(st.integers(1, 3)), draw(st.integers(min_h, max_h))
    T, S = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k = draw(st.sampled_from(d_ks))
    kind = draw(st.sampled_from(["none", "random", "padding", "padding+causal"]))
    full = draw(st.tuples(*[st.booleans()] * 4))          # which of (B, H, T, S) the mask spans
    side = draw(st.sampled_from(["left", "right"]))
    seed = draw(st.integers(0, 2 ** 16))
    return B, H, T, S, d_k, kind, full, side, seed


def make_mask(kind, B, H, T, S, full, side, g, per_head=True):
    """A bool mask (True = may attend) of the given kind; None for 'none'."""
    if kind == "none":
        return None
    if kind == "random":
        dims = [n if f else 1 for n, f in zip((B, H if per_head else 1, T, S), full)]
        m = torch.rand(*dims, generator=g) < 0.6
        if dims[2] > 1 and torch.rand(1, generator=g) < 0.5:
            m[..., 0, :] = False                           # a fully masked row, for sure
        return m
    n_real = torch.randint(1, S + 1, (B,), generator=g)     # real tokens per sequence, >= 1
    j = torch.arange(S)
    real = j[None] < n_real[:, None] if side == "right" else j[None] >= S - n_real[:, None]
    ids = torch.where(real, 1 + torch.randint(0, 9, (B, S), generator=g), 0)
    m = padding_mask(ids, 0)                               # (B, 1, 1, S)
    if kind == "padding+causal" and S >= T:
        m = m & causal_mask(T, S)                          # (B, 1, T, S); left padding: empty rows
    return m


def opened(mask):
    """(mask with empty rows opened, keep (.., T, 1) = rows that see at least one key)."""
    keep = mask.any(-1, keepdim=True)
    return mask | ~keep, keep


def blocked_for_nn(mask, B, H, T, S):
    """Our mask (True = may attend) -> nn.MultiheadAttention's (B * H, T, S), True = blocked."""
    return None if mask is None else ~mask.expand(B, H, T, S).reshape(B * H, T, S)


def grads(module):
    return {n: p.grad for n, p in module.named_parameters()}


def close(a, b, dtype, what):
    torch.testing.assert_close(a, b, atol=TOL[dtype], rtol=TOL[dtype], msg=lambda m: f"{what}: {m}")


# ----------------------------------------------------------------------------- the attention function
@settings(max_examples=300, **SETTINGS)
@given(problems(), st.sampled_from([torch.float64, torch.float32]))
def test_attention_matches_torch_outputs_and_gradients(p, dtype):
    B, H, T, S, d_k, kind, full, side, seed = p
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(B, H, n, d_k, generator=g, dtype=dtype) for n in (T, S, S))
    G = torch.randn(B, H, T, d_k, generator=g, dtype=dtype)
    mask = make_mask(kind, B, H, T, S, full, side, g)
    ours_in = [t.clone().requires_grad_() for t in (q, k, v)]
    ref_in = [t.clone().requires_grad_() for t in (q, k, v)]

    out, w = attention(*ours_in, mask)
    if mask is None:
        ref, keep = F.scaled_dot_product_attention(*ref_in), torch.ones(1, 1, 1, 1, dtype=torch.bool)
    else:
        open_mask, keep = opened(mask)
        ref = F.scaled_dot_product_attention(*ref_in, attn_mask=open_mask) * keep
        assert (out.masked_select(~keep) == 0).all() and (w.masked_select(~keep) == 0).all()
        assert (w.masked_select(~mask) == 0).all()
    close(out, ref, dtype, "output")
    weights_sum = torch.ones(B, H, T, 1, dtype=dtype) * keep
    close(w.sum(-1, keepdim=True), weights_sum, dtype, "rows of weights sum to 1 (0 if empty)")
    (out * G).sum().backward()
    (ref * G).sum().backward()
    for name, a, b in zip("qkv", ours_in, ref_in):
        close(a.grad, b.grad, dtype, f"gradient of {name}")
    if mask is not None:
        assert (ours_in[0].grad.masked_select(~keep) == 0).all()   # an empty row's query gets nothing


def error_against_float64(fn, q, k, v, mask):
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)
    out = fn(q, k, v, mask)
    assert torch.isfinite(out).all(), "NaN or inf"
    return (out.double() - ref).abs().max().item(), ref.abs().max().item()


@settings(max_examples=150, **SETTINGS)
@given(st.sampled_from([torch.float16, torch.bfloat16]), st.sampled_from([8, 64, 128]),
       st.floats(0.1, 80.0), st.booleans(), st.integers(0, 2 ** 16))
def test_half_precision_at_any_magnitude(dtype, d_k, magnitude, masked, seed):
    """Error against a float64 computation on the same (rounded) inputs: at most 2x torch's own
    in the same dtype (or one unit in the last place of the output), never NaN/inf."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = ((magnitude * torch.randn(2, 2, 9, d_k, generator=g)).to(dtype) for _ in range(3))
    mask = causal_mask(9) if masked else None
    ours, top = error_against_float64(lambda *a: attention(*a)[0], q, k, v, mask)
    theirs, _ = error_against_float64(F.scaled_dot_product_attention, q, k, v, mask)
    assert ours <= 2 * theirs + torch.finfo(dtype).eps * top, (ours, theirs)


@settings(max_examples=80, **SETTINGS)
@given(problems(min_h=1, max_h=2, d_ks=(4, 8, 16)), st.floats(0.5, 30.0))
def test_autocast_bfloat16_attention_and_both_mha_paths(p, magnitude):
    """Under torch.autocast(bfloat16) with float32 inputs, as nn.MultiheadAttention / F.sdpa do."""
    B, H, T, S, d_k, kind, full, side, seed = p
    g = torch.Generator().manual_seed(seed)
    mask = make_mask(kind, B, H, T, S, full, side, g, per_head=False)
    open_mask, keep = opened(mask) if mask is not None else (None, torch.tensor(True))
    q, k, v = (magnitude * torch.randn(B, H, n, d_k, generator=g) for n in (T, S, S))
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=open_mask) * keep
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ours, _ = attention(q, k, v, mask)
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=open_mask) * keep
    assert ours.dtype == theirs.dtype == torch.bfloat16 and torch.isfinite(ours).all()
    floor = torch.finfo(torch.bfloat16).eps * ref.abs().max().item()
    assert (ours.double() - ref).abs().max() <= 2 * (theirs.double() - ref).abs().max() + floor

    D = H * d_k
    torch.manual_seed(seed)
    mha = MultiHeadAttention(D, H).eval()
    nn_mha = nn.MultiheadAttention(D, H, batch_first=True).eval()
    mha.copy_to(nn_mha)
    x, mem = magnitude * torch.randn(B, T, D, generator=g) / D ** 0.5, torch.randn(B, S, D, generator=g)
    blocked = blocked_for_nn(open_mask, B, H, T, S)
    keep_bt = keep.expand(B, 1, T, 1)[:, 0] if mask is not None else torch.tensor(True)   # (B, T, 1)
    with torch.no_grad():
        ref = nn_mha.double()(x.double(), mem.double(), mem.double(), attn_mask=blocked)[0]
        nn_mha.float()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            theirs = nn_mha(x, mem, mem, attn_mask=blocked)[0]
            for need_weights in (True, False):
                ours = mha(x, mem, mem, mask=mask, need_weights=need_weights)[0]
                assert ours.dtype == torch.bfloat16 and torch.isfinite(ours).all()
                err = ((ours.double() - ref) * keep_bt).abs().max()
                floor = torch.finfo(torch.bfloat16).eps * ref.abs().max().item()
                assert err <= 2 * ((theirs.double() - ref) * keep_bt).abs().max() + floor


# ----------------------------------------------------------------------------- MultiHeadAttention
@settings(max_examples=200, **SETTINGS)
@given(problems(d_ks=(1, 2, 4)), st.sampled_from([torch.float64, torch.float32]), st.booleans(),
       st.booleans())
def test_mha_both_paths_match_nn_multiheadattention(p, dtype, need_weights, two_d):
    """Outputs, per-head weights and the gradients of every parameter and input."""
    B, H, T, S, d_k, kind, full, side, seed = p
    g = torch.Generator().manual_seed(seed)
    mask = make_mask(kind, B, H, T, S, full, side, g, per_head=False)   # empty rows the same for all heads
    D = H * d_k
    if two_d and mask is not None and mask.shape[:2] == (1, 1):         # the 2-D form: refused, whatever B
        with pytest.raises(ValueError, match=r"mask has shape .* Likely fix: one \(T, S\) mask"):
            MultiHeadAttention(D, H).to(dtype)(torch.zeros(B, T, D, dtype=dtype), torch.zeros(B, S, D, dtype=dtype),
                                               mask=mask[0, 0], need_weights=need_weights)
    torch.manual_seed(seed)
    ours = MultiHeadAttention(D, H).to(dtype)
    ref = nn.MultiheadAttention(D, H, batch_first=True, dtype=dtype)
    ours.copy_to(ref)
    x = torch.randn(B, T, D, generator=g, dtype=dtype)
    mem = torch.randn(B, S, D, generator=g, dtype=dtype)
    G = torch.randn(B, T, D, generator=g, dtype=dtype)
    xs, ms = [x.clone().requires_grad_() for _ in range(2)], [mem.clone().requires_grad_() for _ in range(2)]

    out, w = ours(xs[0], ms[0], ms[0], mask=mask, need_weights=need_weights)
    if mask is None:
        blocked, keep = None, torch.ones(1, 1, 1, dtype=torch.bool)
    else:
        m4 = mask if mask.dim() == 4 else mask[None, None]
        open_mask, keep4 = opened(m4)
        blocked = blocked_for_nn(open_mask, B, H, T, S)
        keep = keep4.expand(B, 1, T, 1)[:, 0]                            # (B, T, 1): rows torch defines
    ref_out, ref_w = ref(xs[1], ms[1], ms[1], attn_mask=blocked, need_weights=True, average_attn_weights=False)
    close(out * keep, ref_out * keep, dtype, "output")
    # A query that sees no key gets a zero context: the output there is out_proj's bias alone.
    close(out.masked_select(~keep), ours.out_proj.bias.expand(B, T, D).masked_select(~keep), dtype, "empty rows")
    if need_weights:
        close(w * keep[:, None], ref_w * keep[:, None], dtype, "weights")
    else:
        assert w is None
    (out * G * keep).sum().backward()
    (ref_out * G * keep).sum().backward()
    close(xs[0].grad, xs[1].grad, dtype, "gradient of the query input")
    close(ms[0].grad, ms[1].grad, dtype, "gradient of the key/value input")
    ga, gb = grads(ours), grads(ref)
    for name, proj in (("q_proj", 0), ("k_proj", 1), ("v_proj", 2)):
        close(ga[f"{name}.weight"], gb["in_proj_weight"][proj * D:(proj + 1) * D], dtype, name)
        close(ga[f"{name}.bias"], gb["in_proj_bias"][proj * D:(proj + 1) * D], dtype, name)
    close(ga["out_proj.weight"], gb["out_proj.weight"], dtype, "out_proj")


# ----------------------------------------------------------------------------- the blocks
@st.composite
def block_problems(draw):
    B, H = draw(st.integers(1, 3)), draw(st.sampled_from([1, 2, 4]))
    T = draw(st.integers(1, 6))
    kind = draw(st.sampled_from(["none", "padding", "padding+causal", "causal"]))
    side = draw(st.sampled_from(["left", "right"]))
    return B, H, T, kind, side, draw(st.booleans()), draw(st.integers(0, 2 ** 16))


@settings(max_examples=120, **SETTINGS)
@given(block_problems(), st.sampled_from([torch.float64, torch.float32]))
def test_transformer_block_matches_encoder_layer_in_training_mode(p, dtype):
    B, H, T, kind, side, norm_first, seed = p
    g = torch.Generator().manual_seed(seed)
    D, FF = 4 * H, 12
    torch.manual_seed(seed)
    ours = TransformerBlock(D, H, FF, dropout=0.0, norm_first=norm_first).to(dtype).train()
    ref = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation="relu", batch_first=True,
                                     norm_first=norm_first, dtype=dtype).train()
    ours.attention.copy_to(ref.self_attn)
    copy_ffn_norms(ours, ref, ["norm1", "norm2"])
    mask = causal_mask(T) if kind == "causal" else make_mask(kind, B, H, T, T, None, side, g)
    open_mask, keep = opened(mask) if mask is not None else (None, torch.ones(1, 1, 1, 1, dtype=torch.bool))
    keep = keep.expand(B, 1, T, 1)[:, 0]                                  # (B, T, 1)
    x = torch.randn(B, T, D, generator=g, dtype=dtype)
    G = torch.randn(B, T, D, generator=g, dtype=dtype)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    for need_weights in (False, True):
        out, _ = ours(xa, mask=mask, need_weights=need_weights)
        expected = ref(xb, src_mask=blocked_for_nn(open_mask, B, H, T, T))
        close(out * keep, expected * keep, dtype, "block output")
        assert torch.isfinite(out).all()
        (out * G * keep).sum().backward()
        (expected * G * keep).sum().backward()
        close(xa.grad, xb.grad, dtype, "gradient of the input")
        gb = grads(ref)
        for name, p_ in ours.named_parameters():
            if name.startswith(("feed_forward.", "norm")):
                ref_name = name.replace("feed_forward.", "")
                close(p_.grad, gb[ref_name], dtype, f"gradient of {name}")
        close(ours.attention.out_proj.weight.grad, gb["self_attn.out_proj.weight"], dtype, "out_proj")
        for t in (xa, xb, *ours.parameters(), *ref.parameters()):
            t.grad = None


@settings(max_examples=100, **SETTINGS)
@given(block_problems(), st.integers(1, 6))
def test_decoder_block_matches_decoder_layer(p, S):
    B, H, T, kind, side, norm_first, seed = p
    dtype = torch.float64
    g = torch.Generator().manual_seed(seed)
    D, FF = 4 * H, 12
    torch.manual_seed(seed)
    ours = DecoderBlock(D, H, FF, dropout=0.0, norm_first=norm_first).to(dtype).train()
    ref = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, activation="relu", batch_first=True,
                                     norm_first=norm_first, dtype=dtype).train()
    ours.self_attention.copy_to(ref.self_attn)
    ours.cross_attention.copy_to(ref.multihead_attn)
    copy_ffn_norms(ours, ref, ["norm1", "norm2", "norm3"])
    self_mask = causal_mask(T) if kind == "causal" else make_mask(kind, B, H, T, T, None, side, g)
    memory_mask = make_mask("padding", B, H, T, S, None, side, g)          # (B, 1, 1, S), >= 1 real key
    open_self, keep = opened(self_mask) if self_mask is not None else (None, torch.ones(1, 1, 1, 1, dtype=torch.bool))
    keep = keep.expand(B, 1, T, 1)[:, 0]
    x = torch.randn(B, T, D, generator=g, dtype=dtype)
    memory = torch.randn(B, S, D, generator=g, dtype=dtype)
    G = torch.randn(B, T, D, generator=g, dtype=dtype)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ma, mb = memory.clone().requires_grad_(), memory.clone().requires_grad_()
    out, w_self, w_cross = ours(xa, ma, self_mask=self_mask, memory_mask=memory_mask, need_weights=True)
    expected = ref(xb, mb, tgt_mask=blocked_for_nn(open_self, B, H, T, T),
                   memory_mask=blocked_for_nn(memory_mask, B, H, T, S))
    close(out * keep, expected * keep, dtype, "decoder output")
    assert w_self.shape == (B, H, T, T) and w_cross.shape == (B, H, T, S)
    (out * G * keep).sum().backward()
    (expected * G * keep).sum().backward()
    close(xa.grad, xb.grad, dtype, "gradient of the target input")
    close(ma.grad, mb.grad, dtype, "gradient of the memory")
    close(ours.cross_attention.q_proj.weight.grad, ref.multihead_attn.in_proj_weight.grad[:D], dtype, "cross q_proj")


# ----------------------------------------------------------------------------- bad masks
@settings(max_examples=100, **SETTINGS)
@given(st.integers(2, 4), st.integers(1, 4), st.integers(1, 5), st.integers(1, 5),
       st.sampled_from(["BS_B_eq_T", "BTS_B_eq_H", "S", "TS_wrong", "5d", "4d_wrong", "BT"]),
       st.booleans())
def test_every_misreadable_mask_is_refused_on_both_paths(B, H, T, S, case, need_weights):
    """Masks that plain broadcasting would accept on the wrong axes, or not at all: ValueError
    naming the shape given and the shape expected."""
    if case == "BS_B_eq_T":
        T = B                                          # (B, S) would be read as (T, S)
        shape = (B, S)
    elif case == "BTS_B_eq_H":
        H = B                                          # (B, T, S) would be read as (H, T, S)
        shape = (B, T, S)
    elif case == "S":
        shape = (S,)
    elif case == "TS_wrong":
        shape = (T + 1, S)
    elif case == "5d":
        shape = (1, B, 1, T, S)
    elif case == "4d_wrong":
        shape = (B + 1, 1, T, S)
    else:
        shape = (B, T)
    mask = torch.ones(shape, dtype=torch.bool)
    mha = MultiHeadAttention(2 * H, H)
    x, mem = torch.randn(B, T, 2 * H), torch.randn(B, S, 2 * H)
    with pytest.raises(ValueError) as err:
        mha(x, mem, mem, mask=mask, need_weights=need_weights)
    msg = str(err.value)
    assert str(tuple(shape)) in msg and str((B, H, T, S)) in msg and "Likely fix" in msg
