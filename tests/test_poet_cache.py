"""Lesson 10's generation with a KV cache: the same logits (to float rounding) and the same
tokens as recomputing the window at every step, for every rung of the ladder and both shipped
checkpoints; the window past the context; the explicit generator."""
import pytest
import torch

from attnlab import poet
from attnlab.poet import sample


@pytest.fixture(scope="module")
def corpus():
    return poet.load_corpus("vi")


def _step_by_step(model, ids, prompt_len):
    """Logits (1, L - prompt_len + 1, V) of the positions prompt_len - 1 .. L - 1, through the cache:
    the prompt as one chunk, then one character per step."""
    cache = sample.KVCache.start(model)
    out = [sample.cached_step(model, ids[:, :prompt_len], cache)]
    for t in range(prompt_len, ids.shape[1]):
        out.append(sample.cached_step(model, ids[:, t:t + 1], cache))
    assert cache.length == ids.shape[1]
    return torch.stack(out, dim=1)


@pytest.mark.parametrize("rung", poet.LADDER)
def test_cached_steps_equal_the_full_forward_for_every_rung(corpus, rung):
    model = poet.new_model(corpus, rung=rung, num_layers=2, d_model=32, d_ff=64, context=24).eval()
    ids = corpus.val_ids[100:124][None]                                        # (1, 24): the whole context
    with torch.no_grad():
        full, _ = model(ids)                                                   # (1, 24, V)
        for prompt_len in (1, 5):
            cached = _step_by_step(model, ids, prompt_len)
            assert (cached - full[:, prompt_len - 1:]).abs().max() <= 1e-5


@pytest.mark.parametrize("lang", poet.LANGS)
def test_the_shipped_checkpoints_give_the_same_logits_and_text_with_the_cache(lang):
    model, c = poet.load_pretrained(lang), poet.load_corpus(lang)
    context = model.config.context
    ids = c.val_ids[:context][None]
    with torch.no_grad():
        full, _ = model(ids)
        # float32 rounding over 64 positions and a 5,117-wide output layer: about 1e-5 (zh), never more than 2e-5
        assert (_step_by_step(model, ids, 8) - full[:, 7:]).abs().max() <= 2e-5
    prompt = c.vocab.decode(c.val_ids[:8])
    for kwargs in ({"seed": 0}, {"seed": 1, "temperature": 0.8}, {"seed": 2, "top_k": 5}, {"seed": 3, "top_p": 0.8}):
        for length in (context - 8, context + 20):                            # within the context, and past it
            texts = [sample.generate(model, c.vocab, prompt, length, num_samples=3, use_cache=use_cache, **kwargs)
                     for use_cache in (True, False)]
            assert texts[0] == texts[1]


def test_the_window_past_the_context_and_long_prompts(corpus):
    model = poet.new_model(corpus, num_layers=1, d_model=16, d_ff=32, context=12).eval()
    long_prompt = corpus.vocab.decode(corpus.val_ids[:20])                      # longer than the context
    short = corpus.vocab.decode(corpus.val_ids[:3])
    for prompt in (short, long_prompt):
        a = sample.generate(model, corpus.vocab, prompt, 25, seed=4, use_cache=True)
        assert a == sample.generate(model, corpus.vocab, prompt, 25, seed=4, use_cache=False)
    cache = sample.KVCache.start(model)
    with torch.no_grad():
        sample.cached_step(model, corpus.val_ids[:12][None], cache)
        with pytest.raises(ValueError, match="context=12"):
            sample.cached_step(model, corpus.val_ids[12:13][None], cache)     # position 12 has no embedding
    with pytest.raises(TypeError, match="use_cache must be a bool"):
        sample.generate(model, corpus.vocab, short, 5, use_cache="yes")


def test_cached_sampling_draws_from_its_own_generator(corpus):
    model = poet.new_model(corpus, num_layers=1, d_model=16, d_ff=32, context=16)
    torch.manual_seed(11)
    state = torch.get_rng_state()
    a = sample.generate(model, corpus.vocab, "Trăm năm", 30, seed=5, num_samples=2, use_cache=True)
    assert torch.equal(torch.get_rng_state(), state)                             # the global RNG untouched
    assert a == sample.generate(model, corpus.vocab, "Trăm năm", 30, seed=5, num_samples=2, use_cache=True)
    assert a != sample.generate(model, corpus.vocab, "Trăm năm", 30, seed=6, num_samples=2, use_cache=True)
