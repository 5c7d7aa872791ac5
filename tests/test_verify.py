import torch

from attnlab import check_close, check_true
from attnlab.course.verify import Verdict


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


def test_check_close_is_relative_and_absolute_like_assert_close(capsys):
    big = torch.tensor([1000.0], dtype=torch.float64)
    assert check_close("x", big + 1e-4, big, lang="en")                   # 1e-4 ≤ 1e-6 + 1e-7 · 1000
    assert capsys.readouterr().out == "PASS: x (difference ≤ 1e-06 + 1e-07·|expected|)\n"
    torch.testing.assert_close(big + 1e-4, big, atol=1e-6, rtol=1e-7)    # the oracle agrees
    assert not check_close("x", torch.zeros(2), torch.tensor([0.0, 1e-3]), lang="en")
    assert capsys.readouterr().out == "FAIL: x (difference 1.0e-03 > 1e-06)\n"
    assert not check_close("x", big + 1e-3, big, lang="en")              # beyond the relative part too
    capsys.readouterr()


def test_check_close_infinities_nan_and_dtypes(capsys):
    inf = torch.tensor([float("inf"), -float("inf"), 1.0])
    assert check_close("x", inf, inf.clone(), lang="en")
    assert not check_close("x", torch.tensor([float("nan")]), torch.tensor([float("nan")]), lang="en")
    assert not check_close("x", torch.tensor([float("inf")]), torch.tensor([-float("inf")]), lang="en")
    half = torch.tensor([100.0], dtype=torch.float16)
    assert check_close("x", half, torch.tensor([100.05]), tol=0.0, lang="en")    # float16's rtol 1e-3
    assert not check_close("x", torch.tensor([100.0]), torch.tensor([100.05]), tol=0.0, lang="en")
    assert not check_close("x", torch.tensor([3]), torch.tensor([4]), tol=0.5, lang="en")   # ints: exact + tol
    assert check_close("x", torch.tensor([3]), torch.tensor([3]), tol=0.0, lang="en")
    capsys.readouterr()
