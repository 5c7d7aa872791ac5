"""`attnlab-lessons` (attnlab.course.copy_lessons): copying the notebooks out of the installed package, and
copying them again after an upgrade with the hub's rules (docs/hub.md): new and deleted files
arrive, files the student never changed are updated, a file the student changed is never
overwritten (the newer version goes beside it), nothing is deleted, and the command says what it
did, in the student's language. The installed-wheel run of the same command is tests/test_wheel.py."""
from __future__ import annotations

import contextlib
import io
import json
import pathlib

import pytest

from attnlab.course import copy_lessons as lessons
from attnlab.course.i18n import t


def course(tmp: pathlib.Path, version: str, files: dict[str, str]) -> dict[str, pathlib.Path]:
    """A stand-in for the notebooks of one release: {relative name: file}."""
    root = tmp / f"release-{version}"
    out = {}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out[name] = path
    return out


V1 = {"lessons_vi/01_a.ipynb": "vi 01 v1", "lessons_vi/02_b.ipynb": "vi 02 v1", "lessons_zh/01_a.ipynb": "zh 01 v1",
      "lessons_zh/02_b.ipynb": "zh 02 v1", "notebooks/voila.json": "{}"}


def test_first_copy_writes_every_file_and_remembers_what_it_wrote(tmp_path):
    folder = tmp_path / "attention-course"
    report = lessons.update_lessons(folder, course(tmp_path, "0.1.0", V1), version="0.1.0")
    assert sorted(report.added) == sorted(V1) and not (report.updated or report.kept or report.unchanged)
    for name, text in V1.items():
        assert (folder / name).read_text(encoding="utf-8") == text
    manifest = json.loads((folder / lessons.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["version"] == "0.1.0" and sorted(manifest["files"]) == sorted(V1)


def test_again_after_an_upgrade(tmp_path):
    folder = tmp_path / "attention-course"
    lessons.update_lessons(folder, course(tmp_path, "0.1.0", V1), version="0.1.0")
    # The student: edits vi 01, runs and saves zh 01 (its bytes change too), deletes vi 02,
    # and adds a notebook of their own.
    (folder / "lessons_vi/01_a.ipynb").write_text("vi 01 v1 + my answer", encoding="utf-8")
    (folder / "lessons_zh/01_a.ipynb").write_text("zh 01 v1 + outputs", encoding="utf-8")
    (folder / "lessons_vi/02_b.ipynb").unlink()
    (folder / "lessons_vi/mine.ipynb").write_text("mine", encoding="utf-8")
    # The release 0.2.0 corrects lessons 01 and zh 02, adds lesson 03, drops voila.json.
    v2 = dict(V1, **{"lessons_vi/01_a.ipynb": "vi 01 v2", "lessons_zh/01_a.ipynb": "zh 01 v2",
                     "lessons_zh/02_b.ipynb": "zh 02 v2", "lessons_vi/03_c.ipynb": "vi 03 v2"})
    del v2["notebooks/voila.json"]
    report = lessons.update_lessons(folder, course(tmp_path, "0.2.0", v2), version="0.2.0")

    assert report.added == ["lessons_vi/03_c.ipynb"]
    assert report.restored == ["lessons_vi/02_b.ipynb"]                  # deleted: comes back fresh
    assert report.updated == ["lessons_zh/02_b.ipynb"]                   # untouched: corrected
    assert report.kept == ["lessons_vi/01_a.ipynb", "lessons_zh/01_a.ipynb"]
    read = lambda name: (folder / name).read_text(encoding="utf-8")      # noqa: E731
    assert read("lessons_vi/01_a.ipynb") == "vi 01 v1 + my answer"       # never overwritten
    assert read("lessons_zh/01_a.ipynb") == "zh 01 v1 + outputs"
    assert report.beside == {"lessons_vi/01_a.ipynb": "lessons_vi/01_a.v0.2.0.ipynb",
                             "lessons_zh/01_a.ipynb": "lessons_zh/01_a.v0.2.0.ipynb"}
    assert read("lessons_vi/01_a.v0.2.0.ipynb") == "vi 01 v2"            # the correction, beside
    assert read("lessons_zh/02_b.ipynb") == "zh 02 v2" and read("lessons_vi/02_b.ipynb") == "vi 02 v1"
    assert read("lessons_vi/mine.ipynb") == "mine" and read("notebooks/voila.json") == "{}"   # nothing deleted

    # Once more with the same release: nothing changes, the kept files stay kept, no second copy.
    (folder / "lessons_vi/01_a.v0.2.0.ipynb").write_text("my notes in the new version", encoding="utf-8")
    again = lessons.update_lessons(folder, course(tmp_path, "0.2.0", v2), version="0.2.0")
    assert not (again.added or again.restored or again.updated)
    assert again.kept == report.kept
    assert read("lessons_vi/01_a.v0.2.0.ipynb") == "my notes in the new version"


def test_a_folder_copied_without_a_record_counts_changed_files_as_the_students(tmp_path):
    """Version 0.1.0's command kept no record: a file identical to the course's is the course's,
    any other is treated as the student's (never overwritten)."""
    folder = tmp_path / "attention-course"
    for name, text in V1.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    v2 = dict(V1, **{"lessons_vi/01_a.ipynb": "vi 01 v2"})
    (folder / lessons.MANIFEST).write_text("not json", encoding="utf-8")           # a broken record is no record
    report = lessons.update_lessons(folder, course(tmp_path, "0.2.0", v2), version="0.2.0")
    assert report.kept == ["lessons_vi/01_a.ipynb"] and len(report.unchanged) == len(V1) - 1
    assert (folder / "lessons_vi/01_a.ipynb").read_text(encoding="utf-8") == "vi 01 v1"
    # Now recorded: a third release updates every file the student left alone.
    v3 = {name: text + " v3" for name, text in V1.items()}
    third = lessons.update_lessons(folder, course(tmp_path, "0.3.0", v3), version="0.3.0")
    assert sorted(third.updated) == sorted(set(V1) - {"lessons_vi/01_a.ipynb"})
    assert third.kept == ["lessons_vi/01_a.ipynb"]


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_it_says_what_it_did_in_the_students_language(tmp_path, lang):
    report = lessons.LessonUpdate(added=["a"], restored=["b"], updated=["c"], unchanged=["d", "e"],
                                  kept=["lessons_vi/01_a.ipynb"], beside={"lessons_vi/01_a.ipynb": "lessons_vi/01_a.v0.2.0.ipynb"})
    text = lessons.describe(report, pathlib.Path("attention-course"), lang)
    first, second = text.splitlines()
    assert first == t("lessons.summary", lang, folder="attention-course", added=2, updated=1, unchanged=2, kept=1)
    assert "lessons_vi/01_a.ipynb" in second and "lessons_vi/01_a.v0.2.0.ipynb" in second
    assert second.strip() == t("lessons.kept_one", lang, name="lessons_vi/01_a.ipynb", beside="lessons_vi/01_a.v0.2.0.ipynb")


def help_text(*argv: str, environ=None) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        lessons.main(list(argv)) if environ is None else _main_with(argv, environ)
    assert stop.value.code == 0
    return out.getvalue()


def _main_with(argv, environ):
    lang = lessons.requested_language(list(argv), environ)
    lessons.parser(lang).parse_args(list(argv))


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_help_speaks_the_language_asked_for(lang):
    text = help_text("--help", "--lang", lang)
    about = t("lessons.about", lang)
    assert about[:20] in text and t("lessons.help_help", lang) in text
    assert t("lessons.usage", lang) in text.splitlines()[0]
    assert lessons.MANIFEST in text                         # the update rules are in the help
    if lang != "en":
        assert "show this help" not in text and "usage:" not in text
    if lang == "zh":
        assert "命令行参数：" in text                         # a full-width colon after a Chinese heading


@pytest.mark.parametrize("environ, lang", [
    ({"LANG": "vi_VN.UTF-8"}, "vi"), ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LANG": "C.UTF-8"}, "en"), ({"LANGUAGE": "zh_CN:zh"}, "zh"),
])
def test_language_from_the_locale(environ, lang):
    assert lessons.language_from_environment(environ) == lang
    assert t("lessons.about", lang)[:20] in help_text("-h", environ=environ)


def test_windows_locale_names():
    assert lessons._code("Chinese (Simplified)_China") == "zh"
    assert lessons._code("Vietnamese_Vietnam") == "vi" and lessons._code("English_United States") == "en"


def test_wrap_counts_chinese_characters_as_two_columns():
    text = t("lessons.rules", "zh", manifest=lessons.MANIFEST, example="01_self_attention.v0.2.0.ipynb")
    lines = lessons.wrap(text, 40)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")       # nothing lost
    assert all(lessons._width(line) <= 40 or " " not in line.strip() for line in lines)
    assert not any(line[0] in "，。；：、）”" for line in lines)            # no line opens with closing punctuation
    assert not any(line[-1] in "（“" for line in lines)
    assert any("01_self_attention.v0.2.0.ipynb" in line for line in lines)   # a file name is never cut
