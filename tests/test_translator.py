"""Lesson 08's translator: data, masks, teacher forcing, KV cache, alignment, checkpoints, explorer API.

The full recipe is retrained by lesson 08 itself under nbval (see "retraining" below).
"""
from __future__ import annotations

import pytest
import torch

from attnlab.translator import numwords
from attnlab import translator as tr
from attnlab.block import DecoderBlock, TransformerBlock

LANGS = ["vi", "zh"]


@pytest.fixture(scope="module", params=LANGS)
def pretrained(request):
    return tr.load_pretrained(request.param)


# ----------------------------------------------------------------------------- data
def test_encode_pads_variable_lengths():
    src, tgt = tr.encode([105, 7], "vi")
    assert src.tolist() == [[2, 1, 6], [8, 0, 0]]                       # digit d -> d + 1, PAD = 0
    vocab = tr.target_tokens("vi")
    assert [vocab[i] for i in tgt[0].tolist()] == ["<s>", "một", "trăm", "linh", "năm", "</s>"]
    assert [vocab[i] for i in tgt[1].tolist()] == ["<s>", "bảy", "</s>", "_", "_", "_"]
    assert tr.encode_source([105, 7]).tolist() == src.tolist()


def test_shift_right_is_teacher_forcing():
    _, tgt = tr.encode([21], "zh")
    tgt_in, tgt_out = tr.shift_right(tgt)
    assert tgt_in[0, 0] == tr.BOS and torch.equal(tgt_in[:, 1:], tgt_out[:, :-1])
    assert tgt_out[0, -1] == tr.EOS


def test_heldout_numbers_are_never_trained_on():
    held = tr.heldout()
    assert len(held) == len(set(held)) == tr.HELDOUT_SIZE and min(held) >= 100
    stream = tr.training_numbers()
    seen = torch.cat([next(stream) for _ in range(tr.STEPS)])
    assert not tr.is_heldout(seen).any()
    assert set(range(100)) <= set(seen.tolist())                        # every word of the language is trained
    assert len(set(seen.tolist()) & set(held)) == 0


def test_bad_input():
    with pytest.raises(ValueError, match="lang"):
        tr.make_model("en")
    with pytest.raises(ValueError, match="0..99999"):
        tr.encode([123456], "vi")
    with pytest.raises(TypeError, match="int"):
        tr.encode_source([1.5])


# ----------------------------------------------------------------------------- model and masks
def test_model_is_built_from_the_course_blocks():
    m = tr.make_model("vi")
    assert all(isinstance(b, TransformerBlock) for b in m.encoder)
    assert all(isinstance(b, DecoderBlock) for b in m.decoder)
    assert torch.equal(tr.make_model("vi").head.weight, m.head.weight)   # seeded


def test_forward_shapes_and_weights():
    m = tr.make_model("zh")
    src, tgt = tr.encode([105, 99999, 3], "zh")
    tgt_in, _ = tr.shift_right(tgt)
    logits, w = m(src, tgt_in, need_weights=True)
    B, S, T, H = 3, src.shape[1], tgt_in.shape[1], m.config.num_heads
    assert logits.shape == (B, T, m.config.tgt_vocab)
    assert [tuple(x.shape) for x in w["enc_self"]] == [(B, H, S, S)] * m.config.enc_layers
    assert [tuple(x.shape) for x in w["dec_self"]] == [(B, H, T, T)] * m.config.dec_layers
    assert [tuple(x.shape) for x in w["cross"]] == [(B, H, T, S)] * m.config.dec_layers
    # padded source digits get exactly zero weight, in the encoder and in the cross-attention
    assert (w["cross"][-1][2, :, :, 1:] == 0).all() and (w["enc_self"][0][2, :, :, 1:] == 0).all()
    # causal: no weight above the diagonal
    assert (w["dec_self"][0].triu(1) == 0).all()


def _logits_alone_and_padded(m):
    """Logits of the number 7 translated alone, and in a batch next to a longer number (padded)."""
    src1, tgt1 = tr.encode([7], m.lang)
    src2, tgt2 = tr.encode([7, 12345], m.lang)
    alone, _ = m(src1, tr.shift_right(tgt1)[0])
    padded, _ = m(src2, tr.shift_right(tgt2)[0])
    return alone[0], padded[0, : alone.shape[1]]


def test_cross_padding_mask_is_needed(pretrained):
    m = pretrained
    a, b = _logits_alone_and_padded(m)
    assert torch.allclose(a, b, atol=1e-5)               # with the mask, padding changes nothing
    m.cross_padding = False
    try:
        a, b = _logits_alone_and_padded(m)
        assert not torch.allclose(a, b, atol=1e-3)       # without it, the padded digits leak in
    finally:
        m.cross_padding = True


def _prefix_logits(m, number, change_last):
    src, tgt = tr.encode([number], m.lang)
    tgt_in, _ = tr.shift_right(tgt)
    if change_last:
        tgt_in = tgt_in.clone()
        tgt_in[0, -1] = 3 if tgt_in[0, -1] != 3 else 4
    logits, _ = m(src, tgt_in)
    return logits[0, :-1]


def test_causal_mask_is_needed(pretrained):
    m = pretrained
    assert torch.allclose(_prefix_logits(m, 12345, False), _prefix_logits(m, 12345, True), atol=1e-6)
    m.causal = False
    try:
        assert not torch.allclose(_prefix_logits(m, 12345, False), _prefix_logits(m, 12345, True), atol=1e-3)
    finally:
        m.causal = True


# ----------------------------------------------------------------------------- KV cache
@pytest.mark.parametrize("numbers", [[105], [7, 12345, 10010, 99999, 1005, 21]])
def test_cache_equals_recomputation(pretrained, numbers):
    src = tr.encode_source(numbers)
    slow = tr.generate(pretrained, src, use_cache=False)
    fast = tr.generate(pretrained, src, use_cache=True)
    assert torch.equal(slow.tokens, fast.tokens)
    assert (slow.logits - fast.logits).abs().max() <= 1e-5


def test_cache_equals_recomputation_untrained():
    m = tr.make_model("vi", seed=3)
    src = tr.encode_source([1, 22, 333, 4444, 55555])
    slow, fast = tr.generate(m, src, max_len=10), tr.generate(m, src, max_len=10, use_cache=True)
    assert torch.equal(slow.tokens, fast.tokens)
    assert (slow.logits - fast.logits).abs().max() <= 1e-5


def test_cached_step_uses_no_mask():
    """A cache step whose attention got a causal mask of its single row would change nothing."""
    seen = []

    def spy(q, kc, vc, kn, vn):
        out = tr.attend_step(q, kc, vc, kn, vn)
        seen.append((q.shape[2], out[2].shape[2]))
        return out

    m = tr.make_model("zh")
    src = tr.encode_source([105])
    memory, _ = m.encode(src)
    cache = tr.KVCache.start(m, memory, src)
    tok = torch.tensor([tr.BOS])
    with torch.no_grad():
        for _ in range(3):
            tok = tr.cached_step(m, tok, cache, attend=spy).argmax(-1)
    assert seen == [(1, 1), (1, 1), (1, 2), (1, 2), (1, 3), (1, 3)]     # one query; t keys, per layer


# ----------------------------------------------------------------------------- trained models
def test_checkpoints_are_small():
    sizes = [tr.checkpoint_path(lang).stat().st_size for lang in LANGS]
    assert sum(sizes) < 2_000_000


def test_checkpoint_translates(pretrained):
    m = pretrained
    assert not m.training
    assert tr.accuracy(m) >= tr.ACCURACY_THRESHOLD
    for n in (0, 15, 21, 105, 1005, 10010, 99999):
        assert tr.join_words(tr.translate(m, n), m.lang) == numwords.to_words(n, m.lang)


def test_checkpoint_records_its_recipe():
    ckpt = torch.load(tr.checkpoint_path("vi"), weights_only=True)
    assert ckpt["recipe"]["seed"] == tr.TRAIN_SEED and ckpt["recipe"]["steps"] == tr.STEPS


def test_alignment(pretrained):
    m = pretrained
    mass = tr.alignment_mass(m)
    assert mass.shape == (m.config.dec_layers, m.config.num_heads)
    best = tr.aligned_head(m)
    assert best.layer == m.config.dec_layers and best.mass == pytest.approx(float(mass[-1].max()))
    assert best.mass >= tr.ALIGNMENT_THRESHOLD
    untrained = tr.alignment_mass(tr.make_model(m.lang))
    assert untrained.max() < 0.45 and abs(untrained.mean() - tr.uniform_mass(m.lang)) < 0.05


def test_alignment_map_marks_one_digit_per_word():
    R = tr.alignment_map([105, 21], "vi")
    assert R.sum(-1)[0, :4].tolist() == [1, 1, 1, 1] and R[0, 2].tolist() == [0, 1, 0]   # linh -> the 0
    assert R[1, 2].tolist() == [0, 1, 0]                                                # mốt -> units digit


def test_attention_maps_for_the_explorer(pretrained):
    m = pretrained
    maps = tr.attention_maps(m, 1005)
    H = m.config.num_heads
    assert maps.src_tokens == ["1", "0", "0", "5"]
    assert maps.tgt_tokens[0] == "<s>" and maps.out_tokens[-1] == "</s>"
    assert maps.tgt_tokens[1:] == maps.out_tokens[:-1] == numwords.words(1005, m.lang).tokens
    T, S = len(maps.tgt_tokens), 4
    assert [tuple(x.shape) for x in maps.enc_self] == [(H, S, S)] * m.config.enc_layers
    assert [tuple(x.shape) for x in maps.dec_self] == [(H, T, T)] * m.config.dec_layers
    assert [tuple(x.shape) for x in maps.cross] == [(H, T, S)] * m.config.dec_layers
    assert torch.allclose(maps.cross[-1].sum(-1), torch.ones(H, T), atol=1e-5)
    with pytest.raises(ValueError, match="0..99999"):
        tr.attention_maps(m, 10 ** 6)


# ----------------------------------------------------------------------------- retraining
# The full recipe from the fixed seed is run by lesson 08 itself, in both languages, every time
# `make test` executes the notebooks (nbval on CI's CPU; lesson 08's run is the one against the
# installed wheel, tests/test_wheel.py, WHEEL_NOTEBOOKS): the same `tr.make_model(LANG)` and
# `tr.train(model)` with the recipe's defaults, then PASS lines for the loss, the accuracy and the
# alignment. A recipe that no longer reaches them turns a stored PASS into FAIL, which nbval fails.
# This test pins those cells, so the check cannot be dropped from the lesson unnoticed (it replaced
# a unit test that trained the same two models again: about 2 minutes of CI's time).
RECIPE_CHECKS = {
    "model = tr.make_model(LANG)": None,
    "history = tr.train(model)": "sum(history[-50:]) / 50 < 0.01",      # the old unit test asked < 0.05
    "acc = tr.accuracy(model)": "acc >= tr.ACCURACY_THRESHOLD",
    "best = tr.aligned_head(model)": None,
    "best.mass >= tr.ALIGNMENT_THRESHOLD": "best.mass >= tr.ALIGNMENT_THRESHOLD",
}


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_08_retrains_the_recipe_and_checks_what_it_reaches(lang):
    import json
    import pathlib

    from attnlab import num, t

    path = pathlib.Path(__file__).resolve().parents[1] / f"lessons_{lang}" / "08_number_translator.ipynb"
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    passed, failed = t("pass", lang), t("fail", lang)
    for line, check in RECIPE_CHECKS.items():
        found = [c for c in cells if any(x.split("#")[0].strip() == line or line in x and "check_true" in x
                                         for x in "".join(c["source"]).splitlines())]
        assert len(found) == 1, (lang, line, len(found))
        cell = found[0]
        tags = cell.get("metadata", {}).get("tags", [])
        assert not {"nbval-skip", "nbval-ignore-output", "raises-exception"} & set(tags), (line, tags)
        text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        assert failed not in text, (lang, line, text)
        if check:
            source = "".join(cell["source"])
            assert "attnlab.check_true(" in source and check in source, (lang, line)
            assert text.count(passed) >= 1, (lang, line, text)
        if line.startswith("history"):                         # every step of the recipe was run
            assert num(tr.STEPS, lang=lang) in text, (lang, text)


def test_context_mass_counts_the_irregular_words(pretrained):
    m = pretrained
    numbers = [21, 105, 1005, 24005, 1021]
    mass, count = tr.context_mass(m, numbers)
    expected = sum(w in tr.CONTEXT_WORDS[m.lang] for n in numbers for w in numwords.words(n, m.lang).tokens)
    assert count == expected > 0
    assert mass.shape == (m.config.dec_layers, m.config.num_heads)
    assert ((mass >= 0) & (mass <= 1 + 1e-6)).all()
