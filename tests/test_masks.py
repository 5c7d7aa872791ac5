import numpy as np
import torch

from attnlab import causal_mask, decoder_mask, describe, padding_mask

SEED_003_IDS = torch.tensor([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]])


def test_padding_mask_shape_and_values():
    m = padding_mask(SEED_003_IDS, pad_id=0)
    assert m.shape == (2, 1, 1, 5) and m.dtype == torch.bool
    assert m[0, 0, 0].tolist() == [True, True, True, False, False]
    assert m[1].all()


def test_causal_mask_square_and_cache_aligned():
    m = causal_mask(4)
    assert m.shape == (1, 1, 4, 4) and m.dtype == torch.bool
    assert torch.equal(m[0, 0], torch.tril(torch.ones(4, 4, dtype=torch.bool)))
    c = causal_mask(2, 5)                       # 3 cached keys, 2 new queries
    assert c.shape == (1, 1, 2, 5)
    assert c[0, 0].tolist() == [[True, True, True, True, False], [True] * 5]   # last query sees all


def test_decoder_mask_reproduces_seed_003():
    m = decoder_mask(SEED_003_IDS, pad_id=0)
    assert m.shape == (2, 1, 5, 5)
    assert m[0, 0].int().tolist() == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],
        [1, 1, 1, 0, 0],
        [1, 1, 1, 0, 0],
    ]
    assert torch.equal(m[1, 0], causal_mask(5)[0, 0])
    assert describe(m[0]) == "1 0 0 0 0\n1 1 0 0 0\n1 1 1 0 0\n1 1 1 0 0\n1 1 1 0 0"


def test_numpy_and_tensor_integers_accepted():
    assert torch.equal(causal_mask(np.int64(4)), causal_mask(4))
    assert torch.equal(causal_mask(np.int32(2), np.int64(5)), causal_mask(2, 5))
    assert torch.equal(causal_mask(torch.tensor(3)), causal_mask(3))
    assert torch.equal(padding_mask(SEED_003_IDS, np.int64(0)), padding_mask(SEED_003_IDS, 0))
