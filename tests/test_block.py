"""TransformerBlock against nn.TransformerEncoderLayer; DecoderBlock against nn.TransformerDecoderLayer."""
import pytest
import torch
import torch.nn as nn

from attnlab import DecoderBlock, TransformerBlock, causal_mask, padding_mask

D, H, FF = 16, 4, 32


def copy_attention(ours, ref):
    ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
    ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
    ref.out_proj.weight.copy_(ours.out_proj.weight)
    ref.out_proj.bias.copy_(ours.out_proj.bias)


def copy_common(ours, ref, norms):
    ref.linear1.load_state_dict(ours.feed_forward.linear1.state_dict())
    ref.linear2.load_state_dict(ours.feed_forward.linear2.state_dict())
    for name in norms:
        getattr(ref, name).load_state_dict(getattr(ours, name).state_dict())


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["none", "causal", "padding", "causal+padding"])
def test_block_matches_transformer_encoder_layer(dtype, tol, norm_first, kind):
    torch.manual_seed(0)
    ours = TransformerBlock(D, H, FF, dropout=0.1, norm_first=norm_first).to(dtype).eval()
    ref = nn.TransformerEncoderLayer(D, H, FF, dropout=0.1, activation="relu", batch_first=True,
                                     norm_first=norm_first, dtype=dtype).eval()
    with torch.no_grad():
        copy_attention(ours.attention, ref.self_attn)
        copy_common(ours, ref, ["norm1", "norm2"])
    x = torch.randn(2, 6, D, dtype=dtype)
    ids = torch.tensor([[1, 2, 3, 4, 0, 0], [1, 2, 3, 4, 5, 6]])
    pad = padding_mask(ids, 0)
    mask = {"none": None, "causal": causal_mask(6), "padding": pad, "causal+padding": causal_mask(6) & pad}[kind]
    blocked = None if mask is None else ~mask.expand(2, H, 6, 6).reshape(2 * H, 6, 6)
    out, _ = ours(x, mask=mask)
    expected = ref(x, src_mask=blocked)
    torch.testing.assert_close(out, expected, atol=tol, rtol=tol)
    out_w, w = ours(x, mask=mask, need_weights=True)
    torch.testing.assert_close(out_w, expected, atol=tol, rtol=tol)
    assert w.shape == (2, H, 6, 6)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_block_matches_transformer_decoder_layer(norm_first):
    torch.manual_seed(0)
    ours = DecoderBlock(D, H, FF, norm_first=norm_first).double().eval()
    ref = nn.TransformerDecoderLayer(D, H, FF, activation="relu", batch_first=True, norm_first=norm_first,
                                     dtype=torch.float64).eval()
    with torch.no_grad():
        copy_attention(ours.self_attention, ref.self_attn)
        copy_attention(ours.cross_attention, ref.multihead_attn)
        copy_common(ours, ref, ["norm1", "norm2", "norm3"])
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
