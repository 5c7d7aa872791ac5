"""Submissions for tests/test_assignments.py: notebooks a class could hand in, made from the
released assignments and the wrong-solution catalogue (solutions/catalogue.py)."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import shutil
from pathlib import Path

import nbformat

HIDDEN = re.compile(r"attnlab\.exercises\.(\w+)\.(evaluate_\w+)\(")


def load_catalogue() -> list[dict] | None:
    """EXERCISES of solutions/catalogue.py (+ catalogue_l10.py if present); None if there is none.
    ATTNLAB_CATALOGUE=path/to/file.py replaces it (development only)."""
    override = os.environ.get("ATTNLAB_CATALOGUE")
    if override:
        spec = importlib.util.spec_from_file_location("dev_catalogue", override)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return list(module.EXERCISES)
    entries = None
    for name in ("solutions.catalogue", "solutions.catalogue_l10"):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name not in (name, "solutions"):
                raise
            continue
        entries = (entries or []) + [e for e in module.EXERCISES if e.get("graded", True)]   # not the ungraded guess
    return entries


def reference(entry: dict, lang: str) -> str:
    """The entry's reference answer in a lesson of language ``lang`` (catalogue_l10 gives one per
    corpus language where the answer depends on it)."""
    ref = entry["reference"]
    return ref[lang] if isinstance(ref, dict) else ref


def evaluate_paths(source_nb) -> dict:
    """'attnlab.exercises.l01:evaluate_softmax' -> grade_id, from the hidden tests of a source notebook."""
    found = {}
    for cell in source_nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            module, fn = HIDDEN.search(cell.source).groups()
            found[f"attnlab.exercises.{module}:{fn}"] = meta["grade_id"]
    return found


def with_answers(release: Path, answers: dict):
    """The released notebook with the answer cells of ``answers`` (grade_id -> source) filled in."""
    nb = nbformat.read(release, as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid.endswith("-answer") and gid[: -len("-answer")] in answers:
            cell.source = answers[gid[: -len("-answer")]]
    return nb


def put(folder: Path, student: str, aid: str, nb_or_text, name: str | None = None) -> Path:
    dest = folder / student / aid
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / (name or f"{aid.rpartition('_')[0]}.ipynb")
    if isinstance(nb_or_text, str):
        path.write_text(nb_or_text, encoding="utf-8")
    else:
        nbformat.write(nb_or_text, path)
    return path


def lesson01_references() -> dict:
    """grade_id -> reference source for lesson 01, from solutions/l01.py (no catalogue needed)."""
    from solutions import l01
    return {f"l01-{n}": inspect.getsource(getattr(l01, f)) for n, f in
            (("softmax", "my_softmax"), ("attention", "my_attention"), ("dot_std", "dot_std"))}


def _in_lesson(entry: dict, source: str) -> str:
    """A catalogue source as an answer cell: ``lang`` (catalogue_l10's name for the corpus language,
    which its runner provides) is the lesson's ``LANG``."""
    # The catalogue's sources assume its BASE imports (math, torch, nn, F); a student's cell that uses
    # them imports them itself, so the answer cell does too.
    imports = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    return imports + (("lang = LANG\n" + source) if "lang" in entry.get("call", ()) else source)


def depends_on(entry: dict, entries: list[dict]) -> list[dict]:
    """The exercises of the same lesson whose reference the entry's context runs: in the notebook
    that code is the student's own earlier answer (lesson 09's block uses the class of exercise 1)."""
    return [d for d in entries if d is not entry and d["lesson"] == entry["lesson"]
            and any(reference(d, lang).strip() in entry.get("context", "") for lang in ("vi", "zh"))]


def wrong_in(entry: dict, lang: str) -> list[dict]:
    """The entry's wrong solutions that are mistakes in a lesson of language ``lang``: a wrong entry
    of catalogue_l10 may name the corpus languages where it is one (``langs``; split(" ") is no
    mistake on a Chinese line, which has no spaces)."""
    return [w for w in entry["wrong"] if lang in w.get("langs", (lang,))]


def wrong_offsets(entries: list[dict], wrongs: dict) -> dict:
    """key -> the first wrong submission carrying the entry's wrong solutions (``wrongs[key]``): after every wrong
    submission of the exercises it depends on, so that each mistake is graded alone, with the
    reference answers of the exercises it builds on (one mistake at a time)."""
    offsets: dict = {}

    def offset(e):
        if e["key"] not in offsets:
            offsets[e["key"]] = max((offset(d) + len(wrongs[d["key"]]) for d in depends_on(e, entries)), default=0)
        return offsets[e["key"]]

    for e in entries:
        offset(e)
    return offsets


def class_from_catalogue(folder: Path, built: Path, catalogue: list[dict], wrong_submissions: int | None = None) -> dict:
    """For every lesson in the catalogue and both languages: a reference submission, an untouched
    one, and wrong submissions, each wrong solution of the catalogue (that is a mistake in the
    lesson's language, ``wrong_in``) in one of them: wrong{i} carries wrong entry i - offset of
    every exercise (``wrong_offsets``), the reference for the others, except that an exercise
    whose earlier exercise carries a wrong solution is left as released (expected 0; the block checker's verdict on a wrong class of exercise 1 is tested in
    tests/test_catalogue.py). An exercise without an entry is left as released (expected 0) and
    listed in ``missing``. ``wrong_submissions``: at most that many wrong submissions per assignment
    (the first ones; None: all). Returns ({(student, aid): {grade_id: expected (points, hint key or None)}}, missing)."""
    expected, missing = {}, []
    lessons = sorted({e["lesson"] for e in catalogue})
    for stem in lessons:
        for aid_dir in sorted((built / "release").glob(f"{stem}_*")):
            aid = aid_dir.name
            lang = aid.rsplit("_", 1)[1]
            release = aid_dir / f"{stem}.ipynb"
            paths = evaluate_paths(nbformat.read(built / "source" / aid / f"{stem}.ipynb", as_version=4))
            entries = [e for e in catalogue if e["lesson"] == stem and e["evaluate"] in paths]
            gid = {e["key"]: paths[e["evaluate"]] for e in entries}
            refs = {gid[e["key"]]: _in_lesson(e, reference(e, lang)) for e in entries}
            missing += [f"{aid}: {g}" for g in paths.values() if g not in refs]
            base = {g: (1.0 if g in refs else 0.0, None) for g in paths.values()}
            put(folder, "reference", aid, with_answers(release, refs))
            expected[("reference", aid)] = dict(base)
            put(folder, "untouched", aid, with_answers(release, {}))
            expected[("untouched", aid)] = {g: (0.0, None) for g in paths.values()}
            wrongs = {e["key"]: wrong_in(e, lang) for e in entries}
            offsets = wrong_offsets(entries, wrongs)
            last = max((offsets[e["key"]] + len(wrongs[e["key"]]) for e in entries), default=0)
            for i in range(last if wrong_submissions is None else min(last, wrong_submissions)):
                answers, want = dict(refs), dict(base)
                carrying = {e["key"] for e in entries if 0 <= i - offsets[e["key"]] < len(wrongs[e["key"]])}
                for e in entries:
                    if e["key"] in carrying:
                        wrong = wrongs[e["key"]][i - offsets[e["key"]]]
                        answers[gid[e["key"]]] = _in_lesson(e, wrong["source"])
                        want[gid[e["key"]]] = (0.0, wrong.get("hint_by_lang", {}).get(lang, wrong["hint"]))
                    elif any(d["key"] in carrying for d in depends_on(e, entries)):
                        del answers[gid[e["key"]]]
                        want[gid[e["key"]]] = (0.0, None)
                put(folder, f"wrong{i}", aid, with_answers(release, answers))
                expected[(f"wrong{i}", aid)] = want
    return expected, missing


def bad_submissions(folder: Path, built: Path) -> dict:
    """Lesson 01 in Vietnamese, handed in badly in every way the issue lists. Returns
    {student: {grade_id or '*': (points, a word that must be in the note)}}."""
    aid, other = "01_self_attention_vi", "02_multi_head_attention_vi"
    release = built / "release" / aid / "01_self_attention.ipynb"
    refs = lesson01_references()
    full = {g: (1.0, "") for g in refs}

    nb = with_answers(release, refs)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "l01-softmax-answer"]
    put(folder, "deleted_answer", aid, nb)

    nb = with_answers(release, refs)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "l01-softmax"]
    put(folder, "deleted_test", aid, nb)

    nb = with_answers(release, refs)
    at = {c.metadata.get("nbgrader", {}).get("grade_id"): i for i, c in enumerate(nb.cells)}
    a, b = at["l01-attention-answer"], at["l01-attention"]
    nb.cells[a], nb.cells[b] = nb.cells[b], nb.cells[a]
    put(folder, "reordered", aid, nb)

    put(folder, "syntax_error", aid, with_answers(release, {**refs, "l01-softmax": "def my_softmax(x):\n    return (x\n"}))
    put(folder, "infinite_loop", aid, with_answers(release, {
        **refs, "l01-attention": "def my_attention(q, k, v):\n    while True:\n        pass\n"}))
    put(folder, "not_json", aid, release.read_text(encoding="utf-8")[:500])
    put(folder, "other_lesson", aid, nbformat.read(built / "release" / other / "02_multi_head_attention.ipynb", as_version=4))
    put(folder, "wrong_file", aid, nbformat.read(built / "release" / other / "02_multi_head_attention.ipynb",
                                                 as_version=4), name="02_multi_head_attention.ipynb")

    (folder / "stray_student").mkdir()                  # no assignment folder: the layout is named
    shutil.copy(release, folder / "stray_student" / release.name)

    nb = with_answers(release, {})                      # nothing done; the tests "made" to pass
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "l01-softmax":
            cell.source, meta["points"] = "pass", 100
        elif meta.get("grade_id") == "l01-attention":
            cell.source, meta["grade"], meta["points"] = "print('ok')", False, 0
        elif meta.get("grade_id") == "l01-dot_std":
            cell.source = "assert True"
            cell.metadata.pop("nbgrader")
    put(folder, "tampered", aid, nb)

    return {
        "deleted_answer": {**full, "l01-softmax": (0.0, "NameError")},
        "deleted_test": {**full, "l01-softmax": (1.0, "put back")},
        "reordered": {**full, "l01-attention": (0.0, "NameError")},
        "syntax_error": {**full, "l01-softmax": (0.0, "SyntaxError")},
        "infinite_loop": {**full, "l01-attention": (0.0, "infinite loop")},
        "not_json": {g: (0.0, "not a valid notebook") for g in refs},
        "other_lesson": {g: (0.0, other) for g in refs},
        "wrong_file": {g: (0.0, "has no 01_self_attention.ipynb") for g in refs},
        "tampered": {g: (0.0, "put back") for g in refs},
    }
