"""Seed 000's causality experiment: exact figures, and a leaking mask is caught."""
import torch

from attnlab import TransformerBlock, causal_mask, causality_check, set_language


def test_reproduces_seed_000_figures(capsys):
    r = causality_check(lang="en")
    out = capsys.readouterr().out
    assert r.earlier_drift == 0.0                       # exactly, not approximately
    assert f"{r.last_drift:.4f}" == "3.9485"
    assert f"{r.unmasked_drift:.4f}" == "0.2319"
    assert r.passed
    assert "largest change in positions 0–8: 0.00e+00" in out
    assert "largest change in the last position:  3.9485" in out
    assert "earlier positions moved by 0.2319" in out
    assert "PASS" in out and "FAIL" not in out


def test_report_in_each_language(capsys):
    for lang, word in (("vi", "ĐẠT"), ("zh", "通过"), ("en", "PASS")):
        causality_check(lang=lang)
        assert word in capsys.readouterr().out
    set_language("zh")
    try:
        causality_check()
        assert "因果掩码" in capsys.readouterr().out
    finally:
        set_language("en")


def test_leaking_mask_fails():
    leaky = torch.ones(1, 1, 10, 10, dtype=torch.bool)  # sees the future
    r = causality_check(mask=leaky, verbose=False)
    assert r.earlier_drift > 1e-3 and not r.passed
    upper = ~causal_mask(10) | torch.eye(10, dtype=torch.bool)   # triu: the classic mistake
    assert not causality_check(mask=upper, verbose=False).passed


def test_given_block_and_restores_training_mode(capsys):
    torch.manual_seed(0)
    block = TransformerBlock(32, 4, 64, norm_first=True).train()
    r = causality_check(block, d_model=32, seq_len=6, lang="en")
    assert r.passed and r.earlier_drift == 0.0
    assert block.training
    assert "positions 0–4" in capsys.readouterr().out


def test_global_rng_untouched_and_figures_unchanged_by_it(capsys):
    # The check seeds its own experiment inside fork_rng: the caller's random stream goes on as
    # if the call had not happened, and whatever state it had does not change the figures.
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    r = causality_check(verbose=False)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(torch.rand(3), expected_next)
    torch.manual_seed(999)
    torch.rand(10)
    r2 = causality_check(verbose=False)
    assert (r.earlier_drift, r.last_drift, r.unmasked_drift) == (r2.earlier_drift, r2.last_drift, r2.unmasked_drift)


def test_rng_untouched_even_when_the_block_raises():
    class Broken(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 64)

        def forward(self, x, mask=None):
            raise RuntimeError("broken block")

    block = Broken().train()
    state = torch.get_rng_state()
    try:
        causality_check(block, verbose=False)
    except RuntimeError:
        pass
    assert torch.equal(torch.get_rng_state(), state) and block.training


def test_two_d_mask_is_lifted():
    r = causality_check(mask=causal_mask(10)[0, 0], verbose=False)     # a (T, T) mask, as lesson 05's exercise
    assert r.passed and r.earlier_drift == 0.0
