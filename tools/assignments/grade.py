"""Grade a folder of submissions, each in its own sandbox, the verdicts decided outside it (``make grade``).

    python -m tools.assignments.grade SUBMISSIONS [--out build/grades] [-j N] [--timeout 60] [--unsafe]

SUBMISSIONS has nbgrader's layout, ``<student>/<assignment>/<notebook>.ipynb`` (what ``nbgrader
collect`` writes under ``submitted/``), assignments as built by ``make assignments``
(``01_self_attention_vi``, ...). For each submission: nbgrader puts the locked cells back
(sanitize, in this process); the notebook runs in a bubblewrap sandbox as a throw-away user
(tools/assignments/sandbox.py), where each exercise's probe records what the student's code returns on
inputs drawn from a seed the notebook cannot know; this process, which never runs student code, judges
those results (tools/assignments/runner.py). Writes ``grades.csv`` (student, lesson, language,
exercise, points, max_points, note), ``feedback/<student>/<assignment>.html`` and, for a submission
where something failed, ``logs/<student>/<assignment>.txt`` (the tracebacks). Grading into a folder
that has a grades.csv merges: the rows of the submissions graded now replace theirs, the others stay.
Without a usable sandbox it refuses, unless ``--unsafe`` (then every row says so).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import shutil
import sys
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

from . import report, runner, sandbox, settings, submissions, suspicious

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = "attnlab.exercises"


# ------------------------------------------------------------------ grading (in the worker processes)
# Each worker process sets up once (its own copy of the course folder, nbgrader's API, the registry),
# then grades one submission per task: the pool hands the next one to whichever worker is free, so a
# slow submission (one that runs into the cell timeout) delays only itself.
_WORKER: dict = {}


def start_worker(template: str, workdir: str, cfg: dict) -> None:
    """The pool's initializer: a private copy of the course folder and nbgrader's API for this process."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    settings.use_venv_tools()
    warnings.filterwarnings("ignore", module="nbgrader")     # its SQLAlchemy session warnings: not ours to fix
    course = Path(shutil.copytree(template, f"{workdir}/w{os.getpid()}"))
    c = settings.config(course, timeout=cfg["timeout"])
    c.Autograde.autograde_preprocessors = []       # nbgrader only sanitizes here: the sandbox executes
    c.Autograde.create_student = True
    api = NbGraderAPI(coursedir=CourseDirectory(config=c), config=c)
    _WORKER.update(template=Path(template), course=course, cfg=cfg, api=api, registry=runner.Registry(cfg["registry"]))


def grade_submission(job: tuple) -> dict:
    """Grade one submission (n, student, aid, path) in this worker's course folder."""
    n, student, aid, path = job
    template, course = _WORKER["template"], _WORKER["course"]
    dest = course / "submitted" / student / aid
    dest.mkdir(parents=True)
    nb = submissions._read(Path(path))
    findings, claimed = suspicious.findings(nb), suspicious.claims(nb, _WORKER["cfg"]["ids"][aid]["graded"])
    changed = submissions.restore_metadata(nb, nbformat.read(template / "release" / aid / Path(path).name, as_version=4))
    nbformat.write(nb, dest / Path(path).name)
    if (Path(path).parent / "timestamp.txt").is_file():
        shutil.copy(Path(path).parent / "timestamp.txt", dest)
    done = grade_one(_WORKER["api"], course, _WORKER["registry"], _WORKER["cfg"], *job)
    done["changed"], done["suspicious"] = sorted(changed), findings
    done["claims"] = sorted(g for g in claimed if not done["points"].get(g))
    return done


def _seed(cfg: dict, student: str, aid: str) -> int:
    if cfg.get("seed") is None:
        return secrets.randbits(62)
    return int.from_bytes(hashlib.sha256(f"{cfg['seed']}/{student}/{aid}".encode()).digest()[:8], "big") >> 2


def grade_one(api, course: Path, registry, cfg: dict, n: int, student: str, aid: str, path: str) -> dict:
    """nbgrader's sanitize, the sandbox, then the verdicts. Never raises: a failure is this submission's note."""
    result = {"student": student, "aid": aid, "error": [], "points": {}, "feedback": {}, "notes": {}, "log": None}
    info = cfg["ids"][aid]
    log = Path(cfg["out"]) / "logs" / student / f"{aid}.txt"
    log.unlink(missing_ok=True)                   # an earlier run's tracebacks are not this run's
    try:
        run = api.autograde(aid, student)
        graded = course / "autograded" / student / aid / Path(path).name
        if not run["success"] or not graded.is_file():
            text = (run.get("log") or "") + "\n" + (run.get("error") or "")
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(text, encoding="utf-8")
            last = (run.get("error") or "nbgrader autograde failed").strip().splitlines()[-1:]
            result["error"], result["log"] = last, log
            return result
        nb = nbformat.read(graded, as_version=4)
        seed = _seed(cfg, student, aid)
        sandboxed = not cfg["unsafe"]
        with tempfile.TemporaryDirectory(prefix="sub-") as tmp:
            root = sandbox.ROOT_IN_SANDBOX if sandboxed else tmp
            todo = runner.units(nb, info["graded"], registry.probes, registry.module, seed, root)
            env = kernel_env(cfg, root)
            job = runner.job(nbformat.writes(nb), Path(path).name, todo, cfg["timeout"], root, env,
                             cfg["mpl"], max_restarts=8)
            limits = sandbox.Limits(wall=cfg["timeout"] * (len(todo) + 4) + 120)
            answer, problem = sandbox.run(job, [sys.executable, "-E", "-s",
                                                str(sandbox.HARNESS_IN_SANDBOX if sandboxed else sandbox.HARNESS)],
                                          limits, uid=cfg["uid"] + n % sandbox.UID_BLOCK if sandboxed else None, env=env,
                                          read_only=cfg["read_only"])
        answers = runner.parse_answer(answer or {})
        lang = settings.split_assignment_id(aid)[1]
        sources = runner.answer_sources(nb)
        blobs = (answer or {}).get("results") if isinstance((answer or {}).get("results"), dict) else {}
        for gid, ex in info["graded"].items():
            notes = _unit_notes(gid, todo, answers, cfg["timeout"])
            probe = next((u for u in todo if u["grade_id"] == gid and u["kind"] in ("probe", "in_kernel")), None)
            if probe is None:
                points, text = 0.0, ""
            elif probe["kind"] == "in_kernel":
                a = answers.get(probe["id"]) or {"status": "", "text": ""}
                points, text = (ex["max"] if a["status"] == "ok" else 0.0), a["text"]
                notes.append(("in_kernel", {}))
            else:
                results = registry.load(blobs.get(ex["key"])) if blobs.get(ex["key"]) else None
                if results is None:
                    results = runner.error_data(answers.get(probe["id"]))
                if "source" in results and gid in sources:   # what was handed in, not what the kernel says it ran
                    results["source"] = sources[gid]
                    results.pop("references", None)
                if "model" in results:                 # the package's model, not one the kernel sends
                    results["model"] = registry.model(settings.split_assignment_id(aid)[0], lang)
                fb = registry.verdict(ex["key"], results, seed, lang)
                points, text = (ex["max"] if fb.ok is True else 0.0), fb.text
            result["points"][gid], result["feedback"][gid], result["notes"][gid] = points, text, notes
        extra = [f"sandbox: {problem}"] if problem else []
        if answer and answer.get("restarts"):
            extra.append(f"kernel restarted {answer['restarts']} time(s): a cell ignored the interrupt or ended its kernel")
        if runner.write_log(log, todo, answers, extra):
            result["log"] = log
        if problem:
            result["error"] = [problem]
    except Exception as e:                       # this submission only; the batch goes on
        import traceback
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(traceback.format_exc(), encoding="utf-8")
        result["error"], result["log"] = [f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"], log
    return result


def _unit_notes(gid: str, todo: list, answers: dict, timeout: int) -> list[tuple]:
    """(word key, fields) for what went wrong around exercise ``gid`` beyond a wrong answer."""
    notes = []
    for unit in todo:
        if unit["grade_id"] not in (gid, f"{gid}-answer"):
            continue
        a = answers.get(unit["id"])
        if a is None:
            notes.append(("not_run", {}))
        elif a["status"] in ("timeout", "stuck"):
            notes.append(("timeout", {"seconds": timeout}))
        elif a["status"] == "died":
            notes.append(("died", {}))
        elif a["status"] == "error" and not (unit["kind"] == "in_kernel" and (a["error"] or {}).get("ename") == "AssertionError"):
            err = a["error"] or {}
            value = err.get("evalue", "").strip().splitlines()
            text = runner.error_name(err) + (f": {value[0][:200]}" if value else "")
            notes.append(("answer_error" if unit["grade_id"].endswith("-answer") else "error", {"error": text}))
        if notes:
            break                                # the first thing that went wrong is the one to read
    return notes


def kernel_env(cfg: dict, root: str) -> dict:
    home = f"{root}/home"
    return {"HOME": home, "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8", "TMPDIR": "/tmp" if root.startswith("/sandbox") else root,
            "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
            "PYTHONPATH": os.pathsep.join(cfg["pythonpath"]), "PYTHONNOUSERSITE": "1",
            "IPYTHONDIR": f"{home}/.ipython", "JUPYTER_CONFIG_DIR": f"{home}/.jupyter", "JUPYTER_PLATFORM_DIRS": "1",
            "JUPYTER_DATA_DIR": f"{home}/.local/share/jupyter", "JUPYTER_RUNTIME_DIR": f"{home}/.local/share/jupyter/runtime",
            "MPLBACKEND": "agg", "MPLCONFIGDIR": f"{home}/.cache/matplotlib", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def make_template(aids: list, assignments: Path, where: Path) -> None:
    """A course folder with the assignments' source and a gradebook (nbgrader generate_assignment)."""
    for aid in aids:
        shutil.copytree(assignments / "source" / aid, where / "source" / aid)
    settings.generate_assignments(where, aids)
    shutil.rmtree(where / "release", ignore_errors=True)
    for aid in aids:                      # the released notebook: what restore_metadata compares with
        shutil.copytree(assignments / "release" / aid, where / "release" / aid)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("submissions", type=Path, help="<student>/<assignment>/<notebook>.ipynb")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "grades",
                    help="where grades.csv, feedback/ and logs/ go (an existing grades.csv is merged)")
    ap.add_argument("--assignments", type=Path, default=ROOT / "assignments",
                    help="the built assignments (source/ and release/, from `make assignments`)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded at once")
    ap.add_argument("--timeout", type=int, default=settings.CELL_TIMEOUT, help="seconds per cell")
    ap.add_argument("--unsafe", action="store_true",
                    help="grade WITHOUT the sandbox (each row of grades.csv says so): for a machine without it")
    ap.add_argument("--force", action="store_true", help="replace an existing grades.csv instead of merging")
    ap.add_argument("--seed", type=int, default=None,
                    help="derive every submission's seed from this number (default: a fresh random seed each)")
    args = ap.parse_args(argv)
    settings.use_venv_tools()
    if not args.submissions.is_dir():
        print(f"grade: {args.submissions} is not a folder of submissions (<student>/<assignment>/<notebook>.ipynb)",
              file=sys.stderr)
        return 2
    ids = submissions.known_assignments(args.assignments)
    if not ids:
        print(f"grade: no assignments in {args.assignments}/source: run `make assignments`", file=sys.stderr)
        return 2
    missing = sandbox.why_not() if not args.unsafe else None
    if missing:
        print(f"grade: refusing to run student code without the sandbox: {missing}", file=sys.stderr)
        return 3
    if args.unsafe:
        print("grade: WARNING: grading WITHOUT the sandbox (--unsafe): each submission runs as you, with your "
              "files; every row of grades.csv says so", file=sys.stderr)
    changes = __import__("tools.assignments.installed", fromlist=["local_changes"]).local_changes()
    if changes:
        print(f"grade: note: the package has local changes, graded as they are: {', '.join(changes[:5])}",
              file=sys.stderr)
    if args.force:                                 # a new grades.csv: no page or log of an earlier run stays
        for old in ("feedback", "logs"):
            shutil.rmtree(args.out / old, ignore_errors=True)
    jobs, problems, edits = submissions.scan(args.submissions, ids)
    first_uid, uid_lock = sandbox.lease_uids() if not args.unsafe else (None, None)   # the lock: held to the end
    if first_uid is not None:
        print(f"grade: sandboxes run as uids {first_uid}-{first_uid + sandbox.UID_BLOCK - 1}", file=sys.stderr)
    results = {}
    with tempfile.TemporaryDirectory(prefix="attnlab-grade-") as tmp:
        from . import installed
        site = installed.install(Path(tmp) / "package") if jobs else tmp
        cfg = {"timeout": args.timeout, "unsafe": args.unsafe, "registry": REGISTRY, "seed": args.seed,
               "ids": ids, "out": str(args.out.resolve()), "uid": first_uid, "mpl": installed.matplotlib_cache(Path(tmp)) if jobs else {},
               "pythonpath": [str(site)], "read_only": [sys.prefix, sys.base_prefix, str(site)]}
        template = Path(tmp) / "template"
        make_template(sorted({aid for _, aid, _ in jobs}), args.assignments, template)
        numbered = [(n, *job) for n, job in enumerate(jobs)]
        every = max(1, len(numbered) // 10)             # about ten progress lines
        with ProcessPoolExecutor(max_workers=max(1, min(args.jobs, len(numbered))), initializer=start_worker,
                                 initargs=(str(template), tmp, cfg)) as pool:
            futures = {pool.submit(grade_submission, job): job for job in numbered}
            for k, f in enumerate(as_completed(futures), 1):
                _, s, a, _ = futures[f]
                try:
                    r = f.result()
                except Exception as e:            # a worker died (out of memory, killed): the pool stops
                    r = {"student": s, "aid": a, "error": [f"grading worker failed: {type(e).__name__}: {e}"],
                         "points": {}, "feedback": {}, "notes": {}, "log": None}
                results[(s, a)] = r
                if k % every == 0 or k == len(numbered):
                    print(f"grade: {k} of {len(jobs)} submissions graded", file=sys.stderr, flush=True)
    rows = []
    for student, aid, _ in jobs:
        r = results[(student, aid)]
        r["edited"], r["note"] = sorted(edits[(student, aid)][0]), edits[(student, aid)][1]
        if r.get("log"):
            r["log"] = os.path.relpath(r["log"], args.out.resolve())
        rows += report.rows_for(student, aid, ids[aid], r, None, args.timeout, args.unsafe)
    for student, aid, key, fields in problems:
        rows += report.rows_for(student, aid, ids.get(aid), None, (key, fields), args.timeout, args.unsafe)
    kept = report.write(rows, args.out, merge=not args.force)
    failed = {(s, a) for s, a, *_ in problems} | {k for k, r in results.items() if r["error"]}
    graded = {(r["student"], r["lesson"], r["language"]) for r in rows}
    print(f"graded {len(graded)} submissions of {len({r['student'] for r in rows})} students "
          f"({len(failed)} could not be graded, see note)"
          + (f"; kept {kept} rows of earlier runs" if kept else "") + f": {args.out / 'grades.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
