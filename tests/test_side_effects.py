"""Library calls leave the caller's world alone: RNG, matplotlib's rcParams, torch's thread
count and a model's train/eval mode are the same after a call as before, even when it raises."""
import matplotlib as mpl
import matplotlib.pyplot as plt
import pytest
import torch

import attnlab
from attnlab import reversal, translator


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)              # tiny runs on 1 thread inside: a leak would show
    yield
    torch.set_num_threads(before)


def broken(model, after=0):
    """Make ``model`` raise from its output head after ``after`` calls."""
    calls = []

    def hook(*_):
        calls.append(1)
        if len(calls) > after:
            raise RuntimeError("broken on purpose")
    return model.head.register_forward_hook(hook)


def test_plots_leave_rcparams_alone():
    mpl.rcParams["font.family"] = ["serif"]
    before = dict(mpl.rcParams)
    try:
        w = torch.softmax(torch.randn(3, 4, 4), -1)
        fig = attnlab.plot_heads(w, ["我", "爱", "你", "Tôi"], lang="zh")
        ax = attnlab.plot_attention(w[0], lang="vi")
        with pytest.raises(ValueError, match="key labels"):
            attnlab.plot_attention(w[0], ["a"] * 4, ["b"] * 3)           # raises inside the context
        assert dict(mpl.rcParams) == before
        # ... and the figures still use the course fonts (the CJK fallback included).
        assert "Noto Sans SC AttnLab" in ax.title.get_fontfamily()
        assert "Noto Sans SC AttnLab" in fig.axes[0].get_yticklabels()[0].get_fontfamily()
    finally:
        plt.close("all")
        mpl.rcdefaults()


def test_tiny_restores_threads_and_mode_on_success(two_threads):
    model = reversal.make_model().train()
    ids = reversal.heldout()[:20]
    reversal.accuracy(model, ids)
    reversal.reverse_digits(model, [1, 2, 3])
    reversal.attention_weights(model, ids)
    assert torch.get_num_threads() == 2 and model.training
    model.eval()
    reversal.accuracy(model, ids)
    assert not model.training


@pytest.mark.parametrize("call", [
    lambda m: reversal.accuracy(m, reversal.heldout()[:20]),
    lambda m: reversal.accuracy(m, reversal.heldout()[:20], mode="teacher"),
    lambda m: reversal.reverse_digits(m, [1, 2, 3]),
    lambda m: reversal.attention_weights(m, reversal.heldout()[:4]),
])
@pytest.mark.parametrize("training", [True, False])
def test_tiny_restores_threads_and_mode_when_the_model_raises(two_threads, call, training):
    model = reversal.make_model().train(training)
    broken(model, after=0)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        call(model)
    assert torch.get_num_threads() == 2
    assert model.training == training


def test_train_restores_threads_and_leaves_eval_mode_when_interrupted(two_threads, capsys):
    model = reversal.make_model()
    broken(model, after=2)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        reversal.train(model, steps=5, device="cpu", progress=False)
    assert torch.get_num_threads() == 2 and not model.training
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""                                 # progress=False: no bar at all


def test_train_progress_bar_only_when_asked(capsys):
    reversal.train(reversal.make_model(), steps=3, device="cpu", progress=True)
    assert "train" in capsys.readouterr().err
    reversal.train(reversal.make_model(), steps=3, device="cpu", progress=False)
    assert capsys.readouterr().err == ""


def test_causality_check_leaves_the_global_rng_alone():
    state = torch.get_rng_state()
    attnlab.causality_check(verbose=False)
    assert torch.equal(torch.get_rng_state(), state)


def test_explorer_computes_on_one_thread_and_restores_the_count(two_threads, monkeypatch):
    import importlib

    from attnlab.explorer import ExplorerState, InputError, compute

    cx = importlib.import_module("attnlab.explorer.compute")
    inside = []
    real = cx.compute_random
    monkeypatch.setattr(cx, "compute_random", lambda state: inside.append(torch.get_num_threads()) or real(state))
    compute(ExplorerState(sentence="the cat sat"))
    with pytest.raises(InputError):
        compute(ExplorerState(sentence=""))                    # bad input raises inside
    assert inside == [1, 1] and torch.get_num_threads() == 2


# ------------------------------------------------------------------------------- the checkers
def _checker_runs():
    """(id, entry, source) for every exercise's checker: a right answer and a wrong one."""
    from solutions import catalogue
    for entry in catalogue.EXERCISES:
        yield f"{entry['key']}:right", entry, entry["reference"]
        yield f"{entry['key']}:wrong", entry, entry["wrong"][0]["source"]


CHECKER_RUNS = list(_checker_runs())


@pytest.fixture(scope="module")
def lesson_namespaces():
    from solutions import catalogue
    cache = {}

    def get(entry):
        if entry["key"] not in cache:
            cache[entry["key"]] = catalogue.namespace(entry)
        return cache[entry["key"]]
    return get


@pytest.mark.parametrize("entry, source", [r[1:] for r in CHECKER_RUNS], ids=[r[0] for r in CHECKER_RUNS])
def test_checkers_leave_the_callers_world_alone(entry, source, lesson_namespaces, two_threads):
    """No checker changes global state: the RNG (forked once per checker), rcParams, thread count,
    and the lesson model's train/eval mode and weights, for a right and for a wrong answer."""
    from solutions import catalogue
    ns = lesson_namespaces(entry)
    model = ns.get("model")
    if model is not None:
        model.train()
        weights = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(1234)
    rng = torch.random.get_rng_state()
    params = dict(mpl.rcParams)
    feedback = catalogue.run(entry, source, ns=ns)
    assert feedback.ok in (True, False)
    assert torch.equal(torch.random.get_rng_state(), rng)
    assert dict(mpl.rcParams) == params
    assert torch.get_num_threads() == 2
    if model is not None:
        assert model.training
        assert all(torch.equal(v, weights[k]) for k, v in model.state_dict().items())
        model.eval()


# The translator shares tiny's loop (training.fit) and eval_mode: the same guarantees.
@pytest.mark.parametrize("call", [
    lambda m: translator.generate(m, translator.encode_source([105, 7])),
    lambda m: translator.generate(m, translator.encode_source([105, 7]), use_cache=True),
    lambda m: translator.cross_attention(m, [105, 7]),
    lambda m: translator.attention_maps(m, 105, words=["một"]),
])
@pytest.mark.parametrize("training", [True, False])
def test_translator_restores_the_mode_when_the_model_raises(call, training):
    model = translator.make_model("vi").train(training)
    broken(model, after=0)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        call(model)
    assert model.training == training


def test_translator_train_leaves_eval_mode_when_interrupted(two_threads):
    model = translator.make_model("vi")
    broken(model, after=2)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        translator.train(model, steps=5, device="cpu")
    assert torch.get_num_threads() == 2 and not model.training


def test_evaluation_never_touches_the_process_wide_thread_count(monkeypatch):
    """Only training changes torch's thread count (fit's explicit `threads`): evaluating and
    decoding run on the caller's threads, since the setting is process-wide."""
    calls = []
    monkeypatch.setattr(torch, "set_num_threads", lambda n: calls.append(n))
    small, tr_model = reversal.make_model(), translator.make_model("zh")
    reversal.accuracy(small, reversal.heldout()[:8])
    reversal.reverse_digits(small, [1, 2, 3])
    reversal.attention_for(small, [1, 2, 3])
    translator.accuracy(tr_model, [105, 7])
    translator.translate(tr_model, 105)
    translator.attention_maps(tr_model, 105)
    translator.alignment_mass(tr_model, [105, 7])
    assert calls == []


def test_explorer_static_figure_leaves_rcparams_alone():
    """plot_grid draws with the course fonts without changing the caller's matplotlib settings."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    from attnlab.explorer.static import plot_grid

    with mpl.rc_context({"font.family": ["serif"], "axes.unicode_minus": False}):
        before = dict(mpl.rcParams)
        fig = plot_grid("the cat sat", num_heads=2, lang="zh")
        assert dict(mpl.rcParams) == before
        families = {tuple(t.get_fontfamily()) for t in fig.findobj(mpl.text.Text) if t.get_text()}
        assert any("Noto Sans SC" in " ".join(f) or "DejaVu Sans" in " ".join(f) for f in families), families
        plt.close(fig)
