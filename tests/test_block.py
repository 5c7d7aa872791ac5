"""TransformerBlock against nn.TransformerEncoderLayer; DecoderBlock against nn.TransformerDecoderLayer."""
import pytest
import torch
import torch.nn as nn

from attnlab import DecoderBlock, TransformerBlock, causal_mask, padding_mask
from torch_refs import copy_ffn_norms

D, H, FF = 16, 4, 32


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["none", "causal", "padding", "causal+padding"])
@pytest.mark.parametrize("train", [False, True])
def test_block_matches_transformer_encoder_layer_with_gradients(dtype, tol, norm_first, kind, train):
    torch.manual_seed(0)
    dropout = 0.0 if train else 0.1                     # training mode is compared without dropout
    ours = TransformerBlock(D, H, FF, dropout=dropout, norm_first=norm_first).to(dtype).train(train)
    ref = nn.TransformerEncoderLayer(D, H, FF, dropout=dropout, activation="relu", batch_first=True,
                                     norm_first=norm_first, dtype=dtype).train(train)
    with torch.no_grad():
        ours.attention.copy_to(ref.self_attn)
        copy_ffn_norms(ours, ref, ["norm1", "norm2"])
    x = torch.randn(3, 6, D, dtype=dtype)
    ids = torch.tensor([[1, 2, 3, 4, 0, 0], [0, 0, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]])   # right, left, none
    pad = padding_mask(ids, 0)
    mask = {"none": None, "causal": causal_mask(6), "padding": pad, "causal+padding": causal_mask(6) & pad}[kind]
    # Left padding + causal: queries 0, 1 of sequence 1 see no key. nn.TransformerEncoderLayer
    # gives NaN there, so it runs with those rows opened and only the rows it defines are compared
    # (the other rows do not depend on them); ours must be finite there.
    keep = torch.ones(3, 6, 1, dtype=torch.bool) if mask is None else mask.any(-1).expand(3, 1, 6)[:, 0, :, None]
    opened = None if mask is None else mask | ~mask.any(-1, keepdim=True)
    blocked = None if mask is None else ~opened.expand(3, H, 6, 6).reshape(3 * H, 6, 6)
    for need_weights in (False, True):
        xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
        out, w = ours(xa, mask=mask, need_weights=need_weights)
        expected = ref(xb, src_mask=blocked)
        assert torch.isfinite(out).all()
        torch.testing.assert_close(out * keep, expected * keep, atol=tol, rtol=tol)
        (out * keep).square().sum().backward()
        (expected * keep).square().sum().backward()
        torch.testing.assert_close(xa.grad, xb.grad, atol=10 * tol, rtol=10 * tol)
        torch.testing.assert_close(ours.feed_forward.linear1.weight.grad, ref.linear1.weight.grad,
                                   atol=10 * tol, rtol=10 * tol)
        torch.testing.assert_close(ours.attention.q_proj.weight.grad, ref.self_attn.in_proj_weight.grad[:D],
                                   atol=10 * tol, rtol=10 * tol)
        assert (w is not None) == need_weights
        ours.zero_grad(), ref.zero_grad()


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_block_matches_transformer_decoder_layer(norm_first):
    torch.manual_seed(0)
    ours = DecoderBlock(D, H, FF, norm_first=norm_first).double().eval()
    ref = nn.TransformerDecoderLayer(D, H, FF, activation="relu", batch_first=True, norm_first=norm_first,
                                     dtype=torch.float64).eval()
    with torch.no_grad():
        ours.self_attention.copy_to(ref.self_attn)
        ours.cross_attention.copy_to(ref.multihead_attn)
        copy_ffn_norms(ours, ref, ["norm1", "norm2", "norm3"])
    x, memory = torch.randn(3, 4, D, dtype=torch.float64), torch.randn(3, 7, D, dtype=torch.float64)
    out, w_self, w_cross = ours(x, memory, self_mask=causal_mask(4), need_weights=True)
    expected = ref(x, memory, tgt_mask=~causal_mask(4)[0, 0])
    torch.testing.assert_close(out, expected)
    assert w_self.shape == (3, H, 4, 4) and w_cross.shape == (3, H, 4, 7)


def test_dropout_is_active_in_training_only():
    torch.manual_seed(0)
    block = TransformerBlock(D, H, FF, dropout=0.5)
    x = torch.randn(2, 5, D)
    block.train()
    a, _ = block(x)
    b, _ = block(x)
    assert not torch.equal(a, b)
    block.eval()
    c, _ = block(x)
    d, _ = block(x)
    assert torch.equal(c, d)


def test_blocks_refuse_masks_that_broadcasting_would_misread():
    # (B, S) padding mask with B == T: right-aligned broadcasting would read it as (T, S).
    block, decoder = TransformerBlock(D, H, FF), DecoderBlock(D, H, FF)
    x = torch.randn(4, 4, D)
    ids = torch.tensor([[1, 2, 0, 0], [1, 2, 3, 0], [1, 0, 0, 0], [1, 2, 3, 4]])
    for need_weights in (False, True):
        with pytest.raises(ValueError, match=r"mask has shape \(4, 4\).*padding_mask\(token_ids\)"):
            block(x, mask=ids != 0, need_weights=need_weights)
        with pytest.raises(ValueError, match=r"mask has shape \(4, 4\).*padding_mask\(token_ids\)"):
            decoder(x, x, memory_mask=ids != 0, need_weights=need_weights)
        with pytest.raises(ValueError, match=r"mask has shape \(4, 4, 4\).*mask\[:, None\]"):
            decoder(x, x, self_mask=causal_mask(4)[0].expand(4, 4, 4), need_weights=need_weights)
        block(x, mask=padding_mask(ids), need_weights=need_weights)          # the right shape is taken


def test_attention_weight_dropout_rate_in_training_mode():
    """Dropout on the attention weights, as nn.TransformerEncoderLayer has it: with identity value
    and output projections and one-hot tokens, the output IS the dropped weight matrix, so the
    fraction of zeros is the rate (softmax weights are never 0 themselves)."""
    p, S = 0.3, 64
    block = TransformerBlock(S, 1, FF, dropout=0.0, attn_dropout=p)
    mha = block.attention
    assert isinstance(mha.dropout, nn.Dropout) and mha.dropout.p == p
    assert TransformerBlock(S, 1, FF, dropout=0.2).attention.dropout.p == 0.2        # default: dropout
    dec = DecoderBlock(S, 1, FF, dropout=0.2, attn_dropout=0.05)
    assert dec.self_attention.dropout.p == dec.cross_attention.dropout.p == 0.05
    with torch.no_grad():
        for lin in (mha.v_proj, mha.out_proj):
            lin.weight.copy_(torch.eye(S))
            lin.bias.zero_()
    x = torch.eye(S)[None].repeat(8, 1, 1)                                # (8, S, S) one-hot tokens
    torch.manual_seed(0)
    out, w = mha.train()(x)
    dropped = out == 0
    assert abs(dropped.float().mean().item() - p) < 0.01                  # 32 768 weights
    torch.testing.assert_close(out[~dropped], (w[:, 0][~dropped]) / (1 - p))  # kept ones scaled by 1/(1-p)
    out_eval, w_eval = mha.eval()(x)
    torch.testing.assert_close(out_eval, w_eval[:, 0])                    # eval: no dropout


@pytest.mark.parametrize("block", [TransformerBlock(D, H, FF, dropout=0.1), DecoderBlock(D, H, FF, dropout=0.1)])
def test_eval_mode_draws_no_random_numbers(block):
    x = torch.randn(2, 5, D)
    state = torch.get_rng_state()
    with torch.no_grad():
        for need_weights in (False, True):
            block.eval()(x, x, need_weights=need_weights) if isinstance(block, DecoderBlock) \
                else block.eval()(x, need_weights=need_weights)
    assert torch.equal(torch.get_rng_state(), state)
