"""What a reader is shown of the glossary's avoided terms (the website's glossary page): words,
never the regular expressions the language tests lint with. One source: each avoid entry of
attnlab/data/glossary.json is [pattern, concept] for plain words, [pattern, concept, [words]]
for any other pattern, and each word shown must be one its pattern catches."""
import json
import pathlib
import re

from attnlab.course import glossary

DATA = json.loads((pathlib.Path(glossary.__file__).parents[1] / "data" / "glossary.json").read_text(encoding="utf-8"))
REGEX_SYNTAX = re.compile(r"\(\?|\\[dswbDSWB]|[|\[\]{}^$]|\)[?*+]")


def test_every_pattern_that_is_not_plain_words_carries_the_words_to_show():
    missing = [(lang, e[0]) for lang, entries in DATA["avoid"].items() for e in entries
               if not glossary.is_plain(e[0]) and len(e) < 3]
    assert not missing, f"give these the words a reader sees (a third element): {missing}"
    needless = [(lang, e[0]) for lang, entries in DATA["avoid"].items() for e in entries
                if glossary.is_plain(e[0]) and len(e) > 2 and e[2] != [e[0]]]
    assert not needless, needless


def test_each_word_shown_is_caught_by_its_pattern_and_is_no_pattern():
    for lang, shown in glossary.AVOID_SHOWN.items():
        for pattern, words in shown.items():
            assert words, (lang, pattern)
            compiled = glossary._pattern(pattern, lang)
            for word in words:
                assert compiled.search(word), f"{lang}: {word!r} is not caught by {pattern!r}"
                assert not REGEX_SYNTAX.search(word), f"{lang}: {word!r} looks like a regular expression"
                assert any(found for found, _ in glossary.avoided_terms(word, lang)), (lang, word)


def test_shown_avoid_gives_words_for_a_concept():
    assert "LayerNorm" in glossary.shown_avoid("vi", "layer_norm")
    assert glossary.shown_avoid("zh", "to_mask") and not any(REGEX_SYNTAX.search(w) for w in glossary.shown_avoid("zh", "to_mask"))
    assert set(glossary.shown_avoid("vi", "layer")) >= {"lớp con", "hai lớp"}
