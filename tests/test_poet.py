"""Lesson 10's corpora, GPT, sampling, verse measures and head measures."""
from __future__ import annotations

import math
import pathlib
import re
import unicodedata

import pytest
import torch

import attnlab
from attnlab import poet
from attnlab.poet import heads, sample, verse
from attnlab.poet.corpus import DATA

ROOT = pathlib.Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------ corpora
def test_corpora_ship_in_the_package_with_provenance_and_licence():
    for name in ("truyen_kieu.txt", "tang_jueju_lushi.txt", "truyen_kieu.edits.tsv", "PROVENANCE.md",
                 "LICENSE-chinese-poetry.txt"):
        assert (DATA / name).is_file(), name
    assert DATA.parent.parent == pathlib.Path(attnlab.__file__).resolve().parent
    assert "MIT License" in (DATA / "LICENSE-chinese-poetry.txt").read_text(encoding="utf-8")
    globs = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"data/**/*"' in globs      # tests/test_wheel.py checks every file is in the wheel


def test_no_code_reads_the_shared_folder():
    for path in (ROOT / "shared" / "attnlab" / "poet").glob("*.py"):
        assert "../shared" not in path.read_text(encoding="utf-8") and "/work/" not in path.read_text(encoding="utf-8")


def test_truyen_kieu_is_lucbat_in_nfc():
    text = poet.read_text("vi")
    assert text == unicodedata.normalize("NFC", text)
    assert text.endswith("\n") and "\n\n" not in text
    lines = text.splitlines()
    assert len(lines) == 3254
    counts = [len(line.split()) for line in lines]
    assert counts == [6, 8] * (len(lines) // 2)                 # 6 and 8 syllables, alternating
    assert all(re.fullmatch(r"[^\W\d_]+", w) for line in lines for w in re.sub(r"[,.:;!?]", "", line).split())
    assert len(set(text)) == 130


def test_tang_poems_have_4_or_8_lines_of_5_or_7_characters():
    text = poet.read_text("zh")
    assert text == unicodedata.normalize("NFC", text)
    poems = poet.poems("zh")
    assert len(poems) == 8703
    for lines in poems:
        assert len(lines) in (4, 8)
        sizes = {len(line) - 1 for line in lines}
        assert len(sizes) == 1 and sizes <= {5, 7}
        for i, line in enumerate(lines):
            assert line[-1] == ("，" if i % 2 == 0 else "。")
            assert all(unicodedata.name(c, "").startswith("CJK") for c in line[:-1])
    assert len(set(text)) == 5117


@pytest.mark.parametrize("lang", poet.LANGS)
def test_split_is_fixed_and_covers_the_text(lang):
    c = poet.Corpus(lang)
    assert len(c.train_ids) + len(c.val_ids) == len(poet.read_text(lang)) + (0 if lang == "vi" else 1)
    assert 0.08 < len(c.val_ids) / (len(c.train_ids) + len(c.val_ids)) < 0.12
    assert torch.equal(c.val_ids, poet.Corpus(lang).val_ids)
    x, y = c.val_windows(64)
    assert torch.equal(x[:, 1:], y[:, :-1])
    (a1, b1), (a2, b2) = next(c.batches(4, 64, seed=3)), next(c.batches(4, 64, seed=3))
    assert torch.equal(a1, a2) and torch.equal(a1[:, 1:], b1[:, :-1])


def test_vocab_refuses_unknown_characters_naming_them():
    vocab = poet.load_corpus("vi").vocab
    assert vocab.decode(vocab.encode("Trăm năm")) == "Trăm năm"
    assert vocab.encode(unicodedata.normalize("NFD", "Trăm")) == vocab.encode("Trăm")   # NFC first
    attnlab.set_language("en")
    with pytest.raises(ValueError, match=r"'Z', '7'"):
        vocab.encode("Z7 năm Z")
    with pytest.raises(ValueError, match="vocabulary"):
        poet.load_corpus("zh").vocab.encode("白日A")
    with pytest.raises(ValueError, match="choose one of"):
        poet.load_corpus("fr")


# ---------------------------------------------------------------------------------------- model
@pytest.fixture(scope="module")
def tiny_vi():
    c = poet.load_corpus("vi")
    return c, poet.new_model(c, num_layers=2, d_model=32, d_ff=64, context=32)


def test_model_is_causal_and_ties_embeddings(tiny_vi):
    c, m = tiny_vi
    ids = c.train_ids[:32][None]
    changed = ids.clone()
    changed[0, 20] = (changed[0, 20] + 1) % len(c.vocab)
    with torch.no_grad():
        a, _ = m(ids)
        b, _ = m(changed)
        x, _ = m.features(ids)
    torch.testing.assert_close(a[:, :20], b[:, :20])
    assert not torch.allclose(a[:, 20:], b[:, 20:])
    torch.testing.assert_close(a, x @ m.embed.weight.T)
    assert not any(p.shape == (len(c.vocab), 32) for name, p in m.named_parameters() if "embed" not in name)
    with pytest.raises(ValueError, match="context=32"):
        m(c.train_ids[:33][None])


@pytest.mark.parametrize("rung", poet.LADDER)
def test_every_rung_builds_and_trains(rung):
    c = poet.load_corpus("vi")
    m = poet.new_model(c, rung=rung, num_layers=1, d_model=16, d_ff=32, context=16)
    history = poet.train(m, c, steps=3, batch_size=4)
    assert len(history) == 3 and all(math.isfinite(h) for h in history) and not m.training
    assert (m.pos is not None) == (rung == "with_positions")


def test_training_is_reproducible_and_leaves_global_state(tiny_vi):
    c, _ = tiny_vi
    threads, rng = torch.get_num_threads(), torch.get_rng_state()
    runs = []
    for _ in range(2):
        m = poet.new_model(c, num_layers=1, d_model=16, d_ff=32, context=16)
        runs.append(poet.train(m, c, steps=4, batch_size=4))
    assert runs[0] == runs[1]
    assert torch.get_num_threads() == threads and torch.equal(torch.get_rng_state(), rng)


def test_dropout_trains_only_and_is_refused_out_of_range(tiny_vi):
    c, _ = tiny_vi
    m = poet.new_model(c, num_layers=1, d_model=16, d_ff=32, context=16, dropout=0.5)
    ids = c.train_ids[:16][None]
    m.train()
    with torch.no_grad():
        assert not torch.equal(m(ids)[0], m(ids)[0])          # dropout draws while training
    m.eval()
    with torch.no_grad():
        assert torch.equal(m(ids)[0], m(ids)[0])              # and is off in eval mode (the lesson's)
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="dropout"):
            poet.PoetConfig(vocab_size=3, dropout=bad)


def test_bigram_loss_matches_a_direct_count():
    train = torch.tensor([0, 1, 0, 1, 1, 2])
    val = torch.tensor([0, 1, 2])
    # counts: 0->1: 2, 1->0: 1, 1->1: 1, 1->2: 1; with alpha 0.1 and V = 3
    p01 = (2 + 0.1) / (2 + 0.3)
    p12 = (1 + 0.1) / (3 + 0.3)
    assert poet.bigram_loss(train, val, 3) == pytest.approx(-(math.log(p01) + math.log(p12)) / 2)


@pytest.mark.parametrize("lang", poet.LANGS)
def test_checkpoint_is_small_and_its_stored_figures_are_true(lang):
    path = poet.recipe.checkpoint_path(lang)
    assert path.stat().st_size < 2 * 1024 * 1024
    ckpt = poet.read_checkpoint(lang)
    model = poet.load_pretrained(lang)
    assert ckpt["lang"] == lang and ckpt["config"]["vocab_size"] == len(poet.load_corpus(lang).vocab)
    assert set(ckpt["ladder"]) == {"bigram_counted", *poet.LADDER}
    c = poet.load_corpus(lang)
    assert ckpt["ladder"]["bigram_counted"] == pytest.approx(poet.bigram_loss(c.train_ids, c.val_ids, len(c.vocab)))
    if lang == "vi":                         # the zh validation pass takes seconds: vi is enough here
        assert poet.validation_loss(model, c) == pytest.approx(ckpt["val_loss"], abs=1e-4)
    assert ckpt["val_loss"] < ckpt["ladder"]["bigram_counted"] < poet.uniform_loss(len(c.vocab))


# ------------------------------------------------------------------------------------- sampling
def test_next_token_probs_temperature_top_k_top_p():
    logits = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0])
    torch.testing.assert_close(sample.next_token_probs(logits), torch.softmax(logits, -1))
    torch.testing.assert_close(sample.next_token_probs(logits, temperature=0.5), torch.softmax(logits * 2, -1))
    p = sample.next_token_probs(logits, top_k=2)
    torch.testing.assert_close(p[:2], torch.softmax(logits[:2], -1))
    assert (p[2:] == 0).all()
    full = torch.softmax(logits, -1)                                         # 0.61, 0.22, 0.14, ...
    p = sample.next_token_probs(logits, top_p=0.7)                           # 0.61 < 0.7: two kept
    torch.testing.assert_close(p[:2], full[:2] / full[:2].sum())
    assert (p[2:] == 0).all()
    assert sample.next_token_probs(logits, top_p=0.1)[0] == 1                # the top one always stays
    torch.testing.assert_close(sample.next_token_probs(logits, top_k=99, top_p=1.0), full)
    batch = torch.stack([logits, logits.flip(0)])                            # (2, V): row by row
    torch.testing.assert_close(sample.next_token_probs(batch, top_k=2)[1], sample.next_token_probs(logits.flip(0), top_k=2))


@pytest.mark.parametrize("kwargs, key", [
    ({"temperature": 0}, "poet.err.temperature"), ({"temperature": -1.0}, "poet.err.temperature"),
    ({"temperature": float("nan")}, "poet.err.temperature"), ({"temperature": "1"}, "poet.err.temperature"),
    ({"top_k": 0}, "poet.err.top_k"), ({"top_k": 2.5}, "poet.err.top_k"), ({"top_k": True}, "poet.err.top_k"),
    ({"top_p": 0}, "poet.err.top_p"), ({"top_p": 1.5}, "poet.err.top_p"), ({"top_p": -0.1}, "poet.err.top_p"),
])
@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_bad_sampling_parameters_are_refused_in_the_ui_language(kwargs, key, lang, tiny_vi):
    c, m = tiny_vi
    attnlab.set_language(lang)
    try:
        (name, value), = kwargs.items()
        expected = attnlab.t(key, got=repr(value))
        with pytest.raises(ValueError) as err:
            sample.generate(m, c.vocab, "Trăm", 3, **kwargs)
        assert str(err.value) == expected
        with pytest.raises(ValueError, match=re.escape(expected)):
            sample.next_token_probs(torch.zeros(5), **kwargs)
    finally:
        attnlab.set_language("en")


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_a_prompt_outside_the_vocabulary_is_refused_naming_the_characters(lang, tiny_vi):
    c, m = tiny_vi
    attnlab.set_language(lang)
    try:
        with pytest.raises(ValueError) as err:
            sample.generate(m, c.vocab, "Trăm năm 1 @", 3)
        assert str(err.value) == attnlab.t("poet.err.unknown_chars", chars="'1', '@'")
        for bad in ("", None):
            with pytest.raises(ValueError, match=re.escape(attnlab.t("poet.err.prompt", got=repr(bad)))):
                sample.generate(m, c.vocab, bad, 3)
        with pytest.raises(ValueError, match="length"):
            sample.generate(m, c.vocab, "Trăm", -1)
    finally:
        attnlab.set_language("en")


def test_a_seed_makes_sampling_reproducible_without_touching_the_global_rng(tiny_vi):
    c, m = tiny_vi
    torch.manual_seed(123)
    state = torch.get_rng_state()
    a = sample.generate(m, c.vocab, "Trăm năm", 40, seed=7, num_samples=3, top_k=20)
    assert torch.equal(torch.get_rng_state(), state)
    b = sample.generate(m, c.vocab, "Trăm năm", 40, seed=7, num_samples=3, top_k=20)
    assert a == b and len(a) == 3 and all(len(s) == 40 for s in a)
    assert sample.generate(m, c.vocab, "Trăm năm", 40, seed=8, num_samples=3, top_k=20) != a
    assert len(set(a)) > 1                                                 # rows draw independently
    assert set("".join(a)) <= set(c.vocab.chars)
    long = sample.generate(m, c.vocab, "Trăm năm", 50, seed=1)[0]           # beyond the context of 32
    assert len(long) == 50
    torch.manual_seed(5)
    x = sample.generate(m, c.vocab, "Trăm", 10, seed=None)
    torch.manual_seed(5)
    assert sample.generate(m, c.vocab, "Trăm", 10, seed=None) == x           # None: the global RNG


def test_greedy_limit_of_small_temperature_and_top_k_1(tiny_vi):
    c, m = tiny_vi
    a = sample.generate(m, c.vocab, "Trăm năm", 20, top_k=1, seed=1)
    b = sample.generate(m, c.vocab, "Trăm năm", 20, top_k=1, seed=2)
    assert a == b                                                           # top-k 1 is greedy


# ---------------------------------------------------------------------------------------- verse
def test_units_and_shape():
    assert verse.units("Trăm năm trong cõi người ta,", "vi") == ["Trăm", "năm", "trong", "cõi", "người", "ta"]
    assert verse.units("Ngọn  đèn  ...  khi tỏ!", "vi") == ["Ngọn", "đèn", "khi", "tỏ"]
    assert verse.units("白日依山尽，", "zh") == list("白日依山尽")
    lines = ["Trăm năm trong cõi người ta,", "Chữ tài chữ mệnh khéo là ghét nhau.",
             "Trải qua một cuộc bể dâu,", "Trải qua một cuộc bể dâu,", "Một hai ba bốn năm sáu bảy"]
    assert verse.shape_flags(lines, "vi") == [True, True, True, False, False]
    assert verse.shape_flags(lines[1:2], "vi", previous=8) == [False]
    assert verse.shape_flags(["白日依山尽，", "黄河入海流流。", "欲穷千里目目目"], "zh") == [True, False, True]
    assert verse.shape_flags(["白日依山，"], "zh") == [False]
    assert verse.verse_lines("a b\n\nc d\ne") == ["a b", "c d"]


def test_poem_flags():
    good = "白日依山尽，\n黄河入海流。\n欲穷千里目，\n更上一层楼。\n\n"
    assert verse.poem_flags(good) == [True]
    assert verse.poem_flags(good + good.replace("楼。", "楼，") + "白日依山尽，\n") == [True, False]
    assert verse.poem_flags("白日依山尽，\n黄河入海流。\n\n") == [False]                   # two lines
    assert verse.poem_flags("白日依山尽，\n黄河入海流流。\n欲穷千里目，\n更上一层楼。\n\n") == [False]
    assert verse.poem_flags(poet.read_text("zh") + "\n").count(True) == 8703


# ---------------------------------------------------------------------------------------- heads
class _Uniform(torch.nn.Module):
    """A stand-in model whose every head spreads its weight evenly over the visible keys."""

    def __init__(self, context=64, layers=2, heads=3):
        super().__init__()
        self.config = poet.PoetConfig(vocab_size=1, context=context)
        self.layers, self.heads = layers, heads

    def features(self, ids, need_weights=False):
        B, T = ids.shape
        w = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
        return None, [w.expand(B, self.heads, T, T)] * self.layers


@pytest.mark.parametrize("lang, relation", [("vi", heads.BREAK), ("vi", heads.RHYME), ("zh", heads.BREAK)])
def test_uniform_attention_measures_exactly_the_uniform_baseline(lang, relation):
    m = heads.attention_mass(_Uniform(), lang, *relation)
    assert m.mass.shape == (2, 3) and m.queries > 50
    torch.testing.assert_close(m.mass, torch.full((2, 3), m.uniform, dtype=m.mass.dtype))
    assert 0.005 < m.uniform < 0.3


def test_head_positions_point_at_the_rhyme_and_the_punctuation():
    win = heads.windows("vi", 64)[0]
    pair = win.pairs[0]
    qs, ks = heads._positions(pair, "vi", 6, 6)
    six = verse.units(pair.lines[0], "vi")[5]
    eight6 = verse.units(pair.lines[1], "vi")[5]
    assert "".join(win.text[k] for k in ks) == six
    assert "".join(win.text[q + 1] for q in qs) == eight6                   # the queries predict it
    zwin = heads.windows("zh", 64)[0]
    zq, zk = heads._positions(zwin.pairs[0], "zh", 1, 0)
    assert zwin.text[zk[0]] in "，。" and zwin.text[zq[0] - 1] == "\n"
    qs, ks = heads._positions(pair, "vi", 1, 0)
    assert [win.text[k] for k in ks] == [pair.lines[0][-1]] and win.text[qs[0]] == "\n"
    with pytest.raises(ValueError):
        heads.attention_mass(_Uniform(), "vi", 9, 6)


@pytest.mark.parametrize("lang", poet.LANGS)
def test_best_head_of_the_checkpoint_and_its_controls(lang):
    model = poet.load_pretrained(lang)
    best = heads.best_head(model, lang)
    m = heads.attention_mass(model, lang)
    assert float(m.mass.max()) == best.mass and best.uniform == m.uniform
    c = heads.controls(model, lang, best.layer, best.head)
    q0, k0 = heads.BREAK
    assert c["by_query"][q0] == pytest.approx(best.mass) and c["by_key"][k0] == pytest.approx(best.mass)
    assert all(0 <= v <= 1 for d in c.values() for v in d.values())


def test_attention_for_a_verse():
    model = poet.load_pretrained("vi")
    tokens, weights = heads.attention_for(model, "vi", "Trăm năm trong cõi người ta,\nChữ tài")
    assert "".join(tokens) == "Trăm năm trong cõi người ta,\nChữ tài"
    assert len(weights) == 4 and weights[0].shape == (4, len(tokens), len(tokens))
    torch.testing.assert_close(weights[1].sum(-1), torch.ones(4, len(tokens)))
    assert (weights[2].triu(1) == 0).all()
