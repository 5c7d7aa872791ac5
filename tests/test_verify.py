import torch

from attnlab import check_close, check_true
from attnlab.verify import Verdict


def test_check_close_prints_stable_pass_line_and_fail_with_difference(capsys):
    assert check_close("weights", torch.ones(3), torch.ones(3) + 1e-9, lang="en")
    assert capsys.readouterr().out == "PASS: weights (difference ≤ 1e-06)\n"
    v = check_close("weights", torch.ones(3), torch.ones(3) + 0.5, lang="vi")
    assert not v and v == False  # noqa: E712
    assert capsys.readouterr().out == "CHƯA ĐẠT: weights (sai lệch 5,0e-01 > 1e-06)\n"   # vi: decimal comma in scientific notation too


def test_check_true_uses_catalog_keys(capsys):
    assert check_true("pass", True, lang="zh")
    assert capsys.readouterr().out == "通过：通过\n"
    assert not check_true("anything", False, lang="en")
    assert capsys.readouterr().out == "FAIL: anything\n"


def test_verdict_shows_nothing_in_a_notebook():
    # IPython's display machinery, as a notebook uses it: a check ending a cell adds no output
    # of its own (its PASS/FAIL line is already printed); a plain object would show its repr.
    from IPython.core.interactiveshell import InteractiveShell
    fmt = InteractiveShell.instance().display_formatter
    for passed in (True, False):
        assert fmt.format(Verdict(passed)) == ({}, {})
    assert fmt.format(object())[0]["text/plain"].startswith("<object")     # the machinery works
    assert repr(Verdict(True)) == "Verdict(passed=True)"
