"""The KV cache lives in the package's attention: MultiHeadAttention, TransformerBlock and
DecoderBlock take and return past keys/values, and decoding one position at a time with them
gives what the whole prefix gives, for pre-LN and post-LN blocks alike."""
import pytest
import torch
import torch.nn as nn

from attnlab import DecoderBlock, MultiHeadAttention, TransformerBlock, causal_mask, padding_mask
from attnlab import translator as tr
from attnlab.translator.decoding import counting_products

D, H, FF = 16, 4, 32


@pytest.mark.parametrize("cross", [False, True])
def test_attention_with_a_past_equals_the_whole_prefix(cross):
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H).double().eval()
    x = torch.randn(2, 5, D, dtype=torch.float64)
    mem = torch.randn(2, 3, D, dtype=torch.float64)
    kv = (mem, mem) if cross else (None, None)
    mask = None if cross else causal_mask(5)
    full, w_full = mha(x, *kv, mask=mask)
    past, outs = None, []
    for t in range(5):
        out, w, past = mha(x[:, t:t + 1], *kv, past_key_value=past, use_cache=True)
        outs.append(out)
        assert w.shape == (2, H, 1, 3 if cross else t + 1)
        torch.testing.assert_close(w[..., 0, :], w_full[:, :, t, :w.shape[-1]])
    torch.testing.assert_close(torch.cat(outs, 1), full)
    assert past[0].shape == (2, H, 3 if cross else 5, D // H)


def test_several_new_positions_with_a_past_take_a_mask_over_all_keys():
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H).double().eval()
    x = torch.randn(2, 6, D, dtype=torch.float64)
    full, _ = mha(x, mask=causal_mask(6))
    _, _, past = mha(x[:, :4], mask=causal_mask(4), use_cache=True)
    rest, _ = mha(x[:, 4:], mask=causal_mask(2, 6), past_key_value=past)
    torch.testing.assert_close(rest, full[:, 4:])
    with pytest.raises(ValueError, match=r"\(2, 4, 2, 6\)"):                # the mask covers P + S keys
        mha(x[:, 4:], mask=causal_mask(2), past_key_value=past)
    with pytest.raises(TypeError, match="past_key_value must be a"):
        mha(x, past_key_value=past[0])
    with pytest.raises(ValueError, match="past_key_value keys must be"):
        mha(x, past_key_value=(past[0][:, :2], past[1]))


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_equals_recomputation_for_pre_and_post_ln_blocks(norm_first):
    torch.manual_seed(0)
    enc = [TransformerBlock(D, H, FF, dropout=0.1, norm_first=norm_first).double().eval() for _ in range(2)]
    dec = [DecoderBlock(D, H, FF, dropout=0.1, norm_first=norm_first).double().eval() for _ in range(2)]
    ids = torch.tensor([[1, 2, 3, 0], [4, 5, 6, 7]])
    memory = torch.randn(2, 4, D, dtype=torch.float64)
    mem_mask = padding_mask(ids, 0)
    y = torch.randn(2, 6, D, dtype=torch.float64)
    # decoder-only stack: the whole sequence under the causal mask vs one position at a time
    full = y
    for b in enc:
        full, _ = b(full, mask=causal_mask(6))
    pasts, steps = [None] * 2, []
    for t in range(6):
        h = y[:, t:t + 1]
        for i, b in enumerate(enc):
            h, _, pasts[i] = b(h, past_key_value=pasts[i], use_cache=True)
        steps.append(h)
    torch.testing.assert_close(torch.cat(steps, 1), full)
    # encoder-decoder stack
    full = y
    for b in dec:
        full, _, _ = b(full, memory, self_mask=causal_mask(6), memory_mask=mem_mask)
    pasts, steps = [None] * 2, []
    for t in range(6):
        h = y[:, t:t + 1]
        for i, b in enumerate(dec):
            h, _, _, pasts[i] = b(h, memory, memory_mask=mem_mask, past_key_value=pasts[i], use_cache=True)
        steps.append(h)
    torch.testing.assert_close(torch.cat(steps, 1), full)
    assert [p.shape[2] for p in pasts[0]] == [6, 6, 4, 4]                  # self grows, cross stays S


@pytest.mark.parametrize("norm_first", [False, True])
def test_translator_cached_and_uncached_decoding_agree_pre_and_post_ln(norm_first):
    m = tr.make_model("vi", seed=3)
    if not norm_first:                              # the same model with post-LN decoder blocks
        c = m.config
        torch.manual_seed(4)
        m.decoder = nn.ModuleList(DecoderBlock(c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=False)
                                  for _ in range(c.dec_layers))
    src = tr.encode_source([1, 22, 333, 4444, 55555])
    slow, fast = tr.generate(m, src, max_len=10), tr.generate(m, src, max_len=10, use_cache=True)
    assert torch.equal(slow.tokens, fast.tokens)
    assert (slow.logits - fast.logits).abs().max() <= 1e-5


def test_products_are_measured_on_the_tensors_multiplied():
    """The count comes from a spy on the attention's q and k, so it is checked here against the
    formula, and against an independent count of the score matrices torch.matmul/SDPA produced."""
    m = tr.make_model("vi")
    src = tr.encode_source([12345])
    c = m.config
    slow = tr.generate(m, src, max_len=8)
    fast = tr.generate(m, src, max_len=8, use_cache=True)
    n = slow.tokens.shape[1]
    k = c.num_heads * c.dec_layers
    assert slow.products == {"self": k * n * (n + 1) * (2 * n + 1) // 6, "cross": k * 5 * n * (n + 1) // 2}
    assert fast.products == {"self": k * n * (n + 1) // 2, "cross": k * 5 * n}
    # the spy really sees the calls: a wider query batch is counted wider
    mha = MultiHeadAttention(D, H)
    with counting_products({"x": [mha]}) as counts:
        mha(torch.randn(3, 7, D), torch.randn(3, 2, D), need_weights=False)
        mha(torch.randn(3, 1, D), past_key_value=(torch.zeros(3, H, 4, D // H),) * 2)
    assert counts == {"x": 3 * H * 7 * 2 + 3 * H * 1 * 5}
    assert "_attention" not in vars(mha) and "attend_step" not in vars(mha)   # the spy is gone


def test_the_lesson_step_is_the_block_step():
    """cached_step goes through the decoder blocks: a spy on attend_step sees every layer, and a
    replacement step (the exercise's) is used, then removed."""
    seen = []

    def spy(q, kc, vc, kn, vn):
        out = tr.attend_step(q, kc, vc, kn, vn)
        seen.append(out[2].shape[2])
        return out

    m = tr.make_model("zh")
    src = tr.encode_source([105])
    memory, _ = m.encode(src)
    cache = tr.KVCache.start(m, memory, src)
    with torch.no_grad():
        tr.cached_step(m, torch.tensor([tr.BOS]), cache, attend=spy)
        tr.cached_step(m, torch.tensor([4]), cache)
    assert seen == [1, 1] and cache.position == 2
    assert all("attend_step" not in vars(b.self_attention) for b in m.decoder)
