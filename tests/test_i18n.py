import json
import pathlib
import re

import pytest

import attnlab  # noqa: F401  (registers every module's messages)
from attnlab.course.i18n import CATALOG, COURSE_LANGUAGES, FALLBACK, LANGUAGES, _fields, missing, register, set_language, t


def test_every_message_has_every_course_language_and_same_fields():
    """The course languages (and English) have every message; this test lists what is missing.
    A language without lessons yet may have gaps: they are shown in English."""
    assert len(CATALOG) > 20
    gaps = missing((*COURSE_LANGUAGES, FALLBACK))
    assert not gaps, "messages missing (they would be shown in English): " + "; ".join(
        f"{lang}: {', '.join(keys)}" for lang, keys in gaps.items())
    for key, texts in CATALOG.items():
        assert len({frozenset(_fields(text)) for text in texts.values()}) == 1, key
        for lang, text in texts.items():
            assert text.strip(), (key, lang)


def test_a_missing_message_falls_back_to_english_and_is_listed():
    register({"x.partial": {"vi": "xin chào {name}", "en": "hello {name}"}})
    try:
        assert t("x.partial", "zh", name="A") == "hello A"                  # English, not an error
        assert t("x.partial", "vi", name="A") == "xin chào A"
        assert "x.partial" in missing()["zh"] and "x.partial" not in missing().get("vi", [])
    finally:
        del CATALOG["x.partial"]
    with pytest.raises(ValueError, match="lacks en"):
        register({"x.no_en": {"vi": "a", "zh": "b"}})
    with pytest.raises(ValueError, match="unknown languages fr"):
        register({"x.fr": {"fr": "a", "en": "b"}})
    assert set(LANGUAGES) >= set(COURSE_LANGUAGES) | {FALLBACK}


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
    with pytest.raises(ValueError, match="different fields"):
        register({"x.fields": {"vi": "{a}", "zh": "{b}", "en": "{a}"}})


def test_numbers_follow_the_language():
    """A number field prints in the reader's convention: vi 124.439.808 and 3,9485."""
    register({"x.num": {"vi": "{n:,} / {x:.4f}", "zh": "{n:,} / {x:.4f}", "en": "{n:,} / {x:.4f}"}})
    assert t("x.num", "vi", n=124439808, x=3.94851) == "124.439.808 / 3,9485"
    assert t("x.num", "zh", n=124439808, x=3.94851) == "124,439,808 / 3.9485"
    assert t("x.num", "en", n=124439808, x=3.94851) == "124,439,808 / 3.9485"
    assert t("check.true", "vi", status="A.B", what="1,5") == "A.B: 1,5"     # strings stay as given
    CATALOG.pop("x.num")


# --------------------------------------------------------------------------- every key used, every used key exists
ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "shared" / "attnlab"
KEY = re.compile(r"""["']((?:[a-z][a-z0-9_]*)(?:\.[a-z0-9_]+)+)["']""")       # a dotted key in quotes
WORD = re.compile(r"""["']([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)["']""")          # any key, "pass" too
# Keys that code builds at run time (f-strings), so no literal names them: prefix -> where.
DYNAMIC = {
    "explorer.mask.": "explorer: t(f'explorer.mask.{m}') for every mask type",
    "explorer.model.": "explorer: t(f'explorer.model.{m}') for every model",
    "explorer.side.": "explorer: t(f'explorer.side.{s}') for every padding side",
    "explorer.": "explorer: t(f'explorer.{key}') for every control's label",
}


def _sources() -> str:
    parts = [p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")]
    for d in ("lessons_vi", "lessons_zh", "notebooks"):
        parts += [p.read_text(encoding="utf-8").replace('\\"', '"') for p in (ROOT / d).glob("*.ipynb")]
    return "\n".join(parts)


def test_every_key_is_used():
    text = _sources()
    used = set(WORD.findall(text))
    unused = sorted(k for k in CATALOG if k not in used and not k.startswith(tuple(DYNAMIC)))
    assert not unused, f"keys in the catalog that nothing uses (delete them): {unused}"


def test_every_used_key_exists():
    from attnlab.exercises import EXERCISES          # the registry's keys ("l01.softmax") name exercises, not messages
    domains = {k.split(".", 1)[0] for k in CATALOG} - {"attnlab", "torch"}
    text = _sources()
    missing = sorted({k for k in KEY.findall(text) if k.split(".", 1)[0] in domains and k not in CATALOG
                      and k not in EXERCISES
                      and not k.startswith(tuple(DYNAMIC)) and not k.endswith((".json", ".py", ".ipynb", ".pt"))})
    assert not missing, f"keys used but not in any message file: {missing}"


def test_message_files_are_the_catalog():
    """Every message of the package lives in a data file (no register() left in the code but the
    explorer's, which issue 11 moves), one key in one file."""
    seen = {}
    for path in sorted((PACKAGE / "messages").glob("*.json")):
        for key in json.loads(path.read_text(encoding="utf-8")):
            assert key not in seen, f"{key} in both {seen[key]} and {path.name}"
            seen[key] = path.name
    registering = sorted(p.name for p in PACKAGE.rglob("*.py")
                         if re.search(r"^register\(", p.read_text(encoding="utf-8"), re.M))
    assert set(registering) <= {"explorer.py"}, registering
    assert set(CATALOG) - set(seen) <= {k for k in CATALOG if k.startswith("explorer.")}
