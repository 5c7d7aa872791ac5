import pytest

import attnlab  # noqa: F401  (registers every module's messages)
from attnlab.i18n import CATALOG, LANGUAGES, _fields, register, set_language, t


def test_every_message_has_every_language_and_same_fields():
    assert len(CATALOG) > 20
    for key, texts in CATALOG.items():
        assert set(texts) >= set(LANGUAGES), key
        assert len({frozenset(_fields(texts[lang])) for lang in LANGUAGES}) == 1, key
        for lang in LANGUAGES:
            assert texts[lang].strip(), (key, lang)


def test_language_switch_and_errors():
    assert t("pass", "vi") == "ĐẠT" and t("pass", "zh") == "通过"
    set_language("zh-CN")
    try:
        assert t("pass") == "通过"
    finally:
        set_language("en")
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        set_language("fr")
    with pytest.raises(KeyError, match="no message 'nope'"):
        t("nope")
    with pytest.raises(ValueError, match="lacks zh"):
        register({"x.missing": {"vi": "a", "en": "b"}})
    with pytest.raises(ValueError, match="different fields"):
        register({"x.fields": {"vi": "{a}", "zh": "{b}", "en": "{a}"}})
