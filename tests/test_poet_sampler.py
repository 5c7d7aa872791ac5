"""Lesson 10's sampling widget (attnlab.poet.widget.sampler): labels whole, another poem per click."""
import pytest

from attnlab import poet
from attnlab.course.i18n import t
from attnlab.poet import widget


@pytest.fixture(scope="module")
def vi_model():
    return poet.load_pretrained("vi"), poet.load_corpus("vi").vocab


def _controls(box):
    text, (temperature, top_k), (top_p, seed), button, out = (box.children[0], box.children[1].children,
                                                              box.children[2].children, box.children[3], box.children[4])
    return dict(text=text, temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_sampler_labels_take_the_width_they_need(lang):
    poet_model = poet.load_pretrained(lang)
    import attnlab

    attnlab.set_language(lang)
    box = widget.sampler(poet_model, poet.load_corpus(lang).vocab, "")
    for name, control in _controls(box).items():
        assert control.style.description_width == "initial", name        # "top-k (0: tắt)" was cut to "top-k (0…"
    assert _controls(box)["top_k"].description == t("poet.ui.top_k", lang)


def test_sampler_clicking_again_gives_another_poem_and_a_seed_gives_its_own_back(vi_model, capsys):
    model, vocab = vi_model
    box = widget.sampler(model, vocab, "Trăm năm", length=40)
    seed = _controls(box)["seed"]
    poems = []
    for _ in range(3):
        box.sample()
        poems.append(capsys.readouterr().out)
    assert seed.value == 3 and len(set(poems)) == 3, poems        # it repeated the poem of seed 0
    seed.value = 1
    box.sample()
    assert capsys.readouterr().out == poems[1]                     # the seed in the box is the poem's
