import math

import pytest
import torch

from attnlab import PositionalEncoding, sinusoidal_encoding


def test_formula_float64_then_cast():
    pe64 = sinusoidal_encoding(50, 8, dtype=torch.float64)
    for pos in (0, 1, 7, 49):
        for i in range(4):
            angle = pos / 10000 ** (2 * i / 8)
            assert pe64[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-12)
            assert pe64[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-12)
    pe32 = sinusoidal_encoding(50, 8)
    assert pe32.dtype == torch.float32
    assert torch.equal(pe32, pe64.float())


def test_module_adds_table_and_checks_length():
    pe = PositionalEncoding(8, max_len=10)
    x = torch.zeros(2, 6, 8)
    torch.testing.assert_close(pe(x), sinusoidal_encoding(10, 8)[:6].expand(2, 6, 8))
    with pytest.raises(ValueError, match=r"sequence length 11 is longer than the table \(max_len=10\)"):
        pe(torch.zeros(1, 11, 8))


@pytest.mark.parametrize("d_model", [7, 1, 0])
def test_odd_or_tiny_d_model(d_model):
    with pytest.raises(ValueError, match=f"even int.*got {d_model}"):
        sinusoidal_encoding(10, d_model)
