"""Every lesson model (07 reversal, 08 translator, 10 poet) says its causality explicitly and
runs, forward and generation, under no_grad, torch.inference_mode() and torch.compile, with the
results of plain eager mode. Under inference_mode every one of them raised before (issue 27)."""
import contextlib
import inspect

import pytest
import torch

import attnlab
from attnlab import DecoderBlock, TransformerBlock, poet, reversal
from attnlab import translator as tr
from attnlab.poet import sample
from attnlab.poet.model import AttentionOnly

MODES = pytest.mark.parametrize("mode", [torch.inference_mode, torch.no_grad], ids=["inference_mode", "no_grad"])


@pytest.fixture(scope="module")
def models():
    corpus = poet.load_corpus("vi")
    return {"reversal": reversal.load_pretrained(), "translator": tr.load_pretrained("vi"),
            "poet": poet.load_pretrained("vi"), "corpus": corpus}


def _reversal_inputs():
    return reversal.split(reversal.heldout()[:6])[0]                       # (6, 16)


def _translator_inputs():
    return tr.encode([7, 1021, 345], "vi")                                 # src (3, S), tgt (3, T + 1)


# ------------------------------------------------------------------ causality, said by the models
@contextlib.contextmanager
def spying_blocks(cls, mask_name="mask"):
    """Record (is_causal, mask) of every call of ``cls.forward``."""
    calls, real = [], cls.forward
    signature = inspect.signature(real)

    def spy(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        calls.append((bound.arguments["is_causal"], bound.arguments[mask_name]))
        return real(*args, **kwargs)

    cls.forward = spy
    try:
        yield calls
    finally:
        cls.forward = real


def test_the_lesson_models_pass_causality_explicitly(models):
    ids = _reversal_inputs()
    with torch.no_grad():
        with spying_blocks(TransformerBlock) as calls:
            models["reversal"](ids)
        assert calls and all(c == (True, None) for c in calls)              # no mask: the rule, said
        leaky = reversal.load_pretrained()
        leaky.causal = False                                                 # lesson 07's cheating model
        with spying_blocks(TransformerBlock) as calls:
            leaky(ids)
        assert calls and all(c == (False, None) for c in calls)
        with spying_blocks(TransformerBlock) as calls:
            models["poet"](models["corpus"].val_ids[:20][None])
        assert len(calls) == len(models["poet"].blocks) and all(c == (True, None) for c in calls)
        src, tgt = _translator_inputs()
        with spying_blocks(DecoderBlock, "self_mask") as dec, spying_blocks(TransformerBlock) as enc:
            models["translator"](src, tgt[:, :-1])
        assert enc and all(causal is False and mask.shape == (3, 1, 1, src.shape[1]) for causal, mask in enc)
        assert dec and all(causal is True and mask.shape == (3, 1, 1, tgt.shape[1] - 1) for causal, mask in dec)
        with spying_blocks(DecoderBlock, "self_mask") as dec:
            tr.generate(models["translator"], src, use_cache=True)
        assert dec and all(causal is True and mask is None for causal, mask in dec)
    for rung in ("one_head", "several_heads"):                             # the ladder's attention-only rungs
        m = poet.new_model(models["corpus"], rung=rung, d_model=16, context=16)
        with spying_blocks(AttentionOnly) as calls, torch.no_grad():
            m(models["corpus"].val_ids[:10][None])
        assert calls == [(True, None)]


# ------------------------------------------------------------------------ no_grad, inference_mode
@MODES
def test_reversal_model_forward_and_generation(models, mode):
    model, ids = models["reversal"], _reversal_inputs()
    with torch.no_grad():
        logits, weights = model(ids, need_weights=True)
        greedy = reversal.greedy_reverse(model, reversal.heldout()[:4])
    digits = reversal.reverse_digits(model, [3, 1, 4, 1, 5, 9])
    with mode():
        got, got_w = model(ids, need_weights=True)
        torch.testing.assert_close(got, logits)
        torch.testing.assert_close(got_w, weights)
        assert torch.equal(reversal.greedy_reverse(model, reversal.heldout()[:4]), greedy)
        assert reversal.reverse_digits(model, [3, 1, 4, 1, 5, 9]) == digits


@MODES
def test_translator_forward_and_generation_with_and_without_the_cache(models, mode):
    model = models["translator"]
    src, tgt = _translator_inputs()
    with torch.no_grad():
        logits, _ = model(src, tgt[:, :-1])
        slow, fast = tr.generate(model, src), tr.generate(model, src, use_cache=True)
    with mode():
        torch.testing.assert_close(model(src, tgt[:, :-1], need_weights=True)[0], logits)
        for use_cache, ref in ((False, slow), (True, fast)):
            gen = tr.generate(model, src, use_cache=use_cache)
            assert torch.equal(gen.tokens, ref.tokens) and gen.products == ref.products
            torch.testing.assert_close(gen.logits, ref.logits)
        assert tr.translate(model, 1021) == tr.translate(model, 1021, use_cache=False)
    assert torch.equal(slow.tokens, fast.tokens)


@MODES
def test_poet_forward_and_generation_with_and_without_the_cache(models, mode):
    model, corpus = models["poet"], models["corpus"]
    ids = corpus.val_ids[:40][None]
    with torch.no_grad():
        logits, weights = model(ids, need_weights=True)
    expected = sample.generate(model, corpus.vocab, "Trăm năm", 30, seed=3, use_cache=False)
    with mode():
        got, got_w = model(ids, need_weights=True)
        torch.testing.assert_close(got, logits)
        torch.testing.assert_close(got_w, weights)
        for use_cache in (True, False):
            assert sample.generate(model, corpus.vocab, "Trăm năm", 30, seed=3, use_cache=use_cache) == expected


# --------------------------------------------------------------------------------- torch.compile
@pytest.mark.slow
def test_every_lesson_model_compiles_with_aot_eager_and_matches_eager(models):
    torch._dynamo.reset()
    src, tgt = _translator_inputs()
    ids = models["corpus"].val_ids[:40][None]
    cases = [(models["reversal"], (_reversal_inputs(),)), (models["translator"], (src, tgt[:, :-1])),
             (models["poet"], (ids,))]
    with torch.no_grad():
        for model, args in cases:
            compiled = torch.compile(model, backend="aot_eager")
            torch.testing.assert_close(compiled(*args)[0], model(*args)[0], atol=1e-5, rtol=1e-5)
        with torch.inference_mode():
            for model, args in cases:
                torch.testing.assert_close(torch.compile(model, backend="aot_eager")(*args)[0], model(*args)[0],
                                           atol=1e-5, rtol=1e-5)
    leaky = reversal.load_pretrained()
    leaky.causal = False                                                     # the flag is read at every call
    with torch.no_grad():
        compiled = torch.compile(leaky, backend="aot_eager")
        torch.testing.assert_close(compiled(_reversal_inputs())[0], leaky(_reversal_inputs())[0], atol=1e-5, rtol=1e-5)
        leaky.causal = True
        torch.testing.assert_close(compiled(_reversal_inputs())[0], models["reversal"](_reversal_inputs())[0],
                                   atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------- one masking helper, no checks per token
def test_decoding_steps_share_the_masking_helper_and_skip_the_public_checks(models, monkeypatch):
    """Every attention call (weights path, fused path, decoding step) goes through
    attention.allowed_keys; the cached steps never re-run the public function's checks."""
    helper, checks = [], []
    real_helper, real_check = attnlab.attention.allowed_keys, attnlab.attention.check_tensor
    monkeypatch.setattr(attnlab.attention, "allowed_keys", lambda *a, **k: helper.append(k.get("fused", False))
                        or real_helper(*a, **k))
    monkeypatch.setattr(attnlab.attention, "check_tensor", lambda *a, **k: checks.append(a[0]) or real_check(*a, **k))
    model = models["translator"]
    src, tgt = _translator_inputs()
    gen = tr.generate(model, src, use_cache=True)
    layers = len(model.decoder)
    assert checks == []                                                      # no per-token public checks
    assert len(helper) >= gen.tokens.shape[1] * layers * 2                    # self + cross, every step
    helper.clear()
    with torch.no_grad():
        model(src, tgt[:, :-1], need_weights=False)
        model(src, tgt[:, :-1], need_weights=True)
    assert True in helper and False in helper                               # the fused and the weights path
