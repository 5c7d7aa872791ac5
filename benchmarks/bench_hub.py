"""A class on the course's hub: N students log in at once and run lessons through real kernels.

    python benchmarks/bench_hub.py --users 10 [--lessons 01,07] [--lang vi] [--json out.json]

Run as root. Starts hub/jupyterhub_config.py on loopback (hub/classroom.py) in the workshop mode
(one class password), adds N students (each a system user, in a memory cgroup), and at one
moment each of them logs in, starts their server, opens lesson 01 and runs it top to bottom
through their kernel (REST API + kernel websocket), saves it, then does the same with lesson 07
(training). Each kernel also reports the CPU seconds it used (getrusage), the figure that does
not depend on how loaded the machine is. Meanwhile /proc is read every second: each student's server + kernels (RSS, and PSS,
which splits the pages that processes share, such as torch's libraries, among them), the hub's
own processes, the machine's available memory. Prints spawn times, lesson times, peak memory
per student and in all, failures; then checks that every saved notebook reads back intact.
The run stops itself (and says so) if the machine's available memory falls under --keep-free.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "hub"))
import admin  # noqa: E402
import classroom  # noqa: E402

LESSONS = {p.name[:2]: p.name for p in sorted((ROOT / "lessons_vi").glob("[0-9][0-9]_*.ipynb"))}
MiB = 2 ** 20


def available() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] if xs else float("nan")


class Monitor(threading.Thread):
    """Samples memory every second; peak (RSS, PSS) per student and phase, totals, MemAvailable."""

    def __init__(self, hub, phase: dict, keep_free: int, abort: threading.Event):
        super().__init__(daemon=True)
        self.hub, self.phase, self.keep_free, self.abort = hub, phase, keep_free, abort
        self.peak: dict[tuple[str, str], list[int]] = {}
        self.total_pss = self.hub_pss = 0
        self.min_available = available()
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            per = classroom.student_memory(self.hub)
            hub_rss, hub_pss = classroom.hub_memory(self.hub)
            for name, (rss, pss) in per.items():
                key = (name, self.phase.get(name, "?"))
                old = self.peak.setdefault(key, [0, 0])
                old[0], old[1] = max(old[0], rss), max(old[1], pss)
            self.hub_pss = max(self.hub_pss, hub_pss)
            self.total_pss = max(self.total_pss, hub_pss + sum(p for _, p in per.values()))
            free = available()
            self.min_available = min(self.min_available, free)
            if free < self.keep_free:
                self.abort.set()
            self.done.wait(1.0)


def student_run(hub, name, lessons, lang, phase, barrier, abort, cell_timeout, results):
    r = results[name] = {"lessons": {}, "error": None}
    s = classroom.Student(hub.url, name, timeout=300)
    try:
        barrier.wait(timeout=600)
        phase[name] = "login"
        if not s.login(hub.password):
            raise RuntimeError("login refused")
        phase[name] = "spawn"
        r["spawn"] = s.start_server(timeout=900)
        for lesson in lessons:
            if abort.is_set():
                raise RuntimeError("stopped: the machine ran low on memory")
            phase[name] = lesson
            path = f"attnlab-course/lessons_{lang}/{LESSONS[lesson]}"
            got = r["lessons"][lesson] = s.run_notebook(path, cell_timeout=cell_timeout)
            # What was saved must read back as it was saved, after the whole class has run.
            got["saved"] = got.pop("notebook")
            got["path"] = path
        phase[name] = "done"
    except Exception as err:
        r["error"] = f"{type(err).__name__}: {err}"
        phase[name] = "failed"
    r["client"] = s


def intact(student, lesson_result) -> bool:
    back = student.read_notebook(lesson_result["path"])
    saved = lesson_result["saved"]
    return ([(c.source, c.get("outputs")) for c in back.cells]
            == [(c.source, c.get("outputs")) for c in saved.cells])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, required=True)
    ap.add_argument("--lessons", default="01,07", help="comma-separated lesson numbers, or 'all'")
    ap.add_argument("--lang", choices=["vi", "zh"], default="vi")
    ap.add_argument("--cell-timeout", type=float, default=1800)
    ap.add_argument("--keep-free", type=float, default=2.0, help="GiB of available memory to keep")
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--env", type=pathlib.Path, default=ROOT / ".venv-hub",
                    help="the students' environment (hub/student_env.py builds it if needed)")
    a = ap.parse_args(argv)
    lessons = sorted(LESSONS) if a.lessons == "all" else [x.zfill(2) for x in a.lessons.split(",")]
    unknown = [x for x in lessons if x not in LESSONS]
    if unknown or a.users < 1:
        ap.error(f"--users must be >= 1 and lessons among {', '.join(LESSONS)}; got {unknown}")
    names = [f"student{i:03d}" for i in range(1, a.users + 1)]
    load0 = os.getloadavg()
    state = pathlib.Path(tempfile.mkdtemp(prefix="bench_hub_"))
    os.chmod(state, 0o755)                     # the students pass through it to their homes
    try:
        hub = classroom.LocalHub(state, a.env, auth="class-password", ATTNLAB_HUB_START_TIMEOUT="900")
        phase, results, cgroup_peaks = {}, {}, {}
        abort = threading.Event()
        try:
            hub.install()
            hub.start(timeout=300)
            admin.HubAdmin(hub.url, hub.token).add_users(names, group=f"course-{a.lang}")
            base_free = available()
            monitor = Monitor(hub, phase, int(a.keep_free * 2 ** 30), abort)
            monitor.start()
            barrier = threading.Barrier(len(names))
            t0 = time.monotonic()
            threads = [threading.Thread(target=student_run, args=(hub, n, lessons, a.lang, phase,
                                        barrier, abort, a.cell_timeout, results)) for n in names]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.monotonic() - t0
            monitor.done.set()
            monitor.join(10)
            broken = [n for n, r in results.items() for ls in r["lessons"].values()
                      if "saved" in ls and not intact(r["client"], ls)]
            cgroup_peaks = cgroup_peak(hub, names)
            load1 = os.getloadavg()
        finally:
            left = hub.stop()
    finally:
        shutil.rmtree(state, ignore_errors=True)
    report(a, names, lessons, results, monitor, broken, wall, load0, load1, base_free, left, cgroup_peaks)
    failures = sum(1 for r in results.values() if r["error"]) + sum(
        1 for r in results.values() for ls in r["lessons"].values() if ls["error"])
    return 1 if failures or broken or left else 0


def cgroup_peak(hub, names) -> dict[str, float]:
    """Each student's peak memory as their cgroup counted it (what the limit acts on), MiB."""
    import memory
    cgroups = memory.find(f"attnlab-hub-{hub.layout.group}")
    out = {}
    for name in names:
        for f in ("memory.max_usage_in_bytes", "memory.peak"):    # cgroup v1, v2
            path = cgroups.path(hub.layout.system_name(name)) / f if cgroups else None
            if path is not None and path.exists():
                out[name] = int(path.read_text()) / MiB
    return out


def report(a, names, lessons, results, monitor, broken, wall, load0, load1, base_free, left,
           cgroup_peaks):
    spawns = [r["spawn"] for r in results.values() if "spawn" in r]
    out = {"users": a.users, "lessons": lessons, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "cpus": os.cpu_count(), "load_before": load0, "load_after": load1, "wall_s": wall,
           "spawn_median_s": statistics.median(spawns) if spawns else None,
           "spawn_p95_s": pct(spawns, 0.95), "lessons_s": {}, "peak_mib": {},
           "total_peak_pss_mib": monitor.total_pss / MiB, "hub_pss_mib": monitor.hub_pss / MiB,
           "available_drop_mib": (base_free - monitor.min_available) / MiB,
           "failures": {n: r["error"] for n, r in results.items() if r["error"]},
           "lesson_failures": {f"{n}/{k}": ls["error"] for n, r in results.items()
                               for k, ls in r["lessons"].items() if ls["error"]},
           "notebooks_not_intact": broken, "processes_left": left}
    print(f"{a.users} students, lessons {', '.join(lessons)} ({a.lang}); {os.cpu_count()} CPUs; "
          f"load average {load0[0]:.1f} before, {load1[0]:.1f} after; wall {wall:.0f} s")
    print(f"spawn: median {out['spawn_median_s'] or float('nan'):.1f} s, p95 {out['spawn_p95_s']:.1f} s "
          f"({len(spawns)} of {a.users} started)")
    for lesson in ["spawn", *lessons]:
        rows = [v for (n, ph), v in monitor.peak.items() if ph == lesson]
        if lesson != "spawn":
            secs = [r["lessons"][lesson]["seconds"] for r in results.values() if lesson in r["lessons"]]
            cpus = [r["lessons"][lesson]["cpu_s"] for r in results.values()
                    if r["lessons"].get(lesson, {}).get("cpu_s") is not None]
            out["lessons_s"][lesson] = {"median": statistics.median(secs) if secs else None,
                                        "p95": pct(secs, 0.95), "max": max(secs, default=None),
                                        "cpu_median": statistics.median(cpus) if cpus else None}
            print(f"lesson {lesson}: median {out['lessons_s'][lesson]['median'] or float('nan'):.0f} s, "
                  f"p95 {pct(secs, 0.95):.0f} s, max {max(secs, default=float('nan')):.0f} s, "
                  f"kernel CPU median {out['lessons_s'][lesson]['cpu_median'] or float('nan'):.1f} s",
                  end="; ")
        else:
            print("while spawning", end=": ")
        if rows:
            rss, pss = max(r[0] for r in rows) / MiB, max(r[1] for r in rows) / MiB
            out["peak_mib"][lesson] = {"rss_max": rss, "pss_max": pss,
                                       "pss_median": statistics.median(r[1] for r in rows) / MiB}
            print(f"peak per student (server + kernel): RSS {rss:.0f} MiB, PSS {pss:.0f} MiB "
                  f"(median PSS {out['peak_mib'][lesson]['pss_median']:.0f} MiB)")
        else:
            print("no sample")
    print(f"all students + hub, peak PSS: {out['total_peak_pss_mib']:.0f} MiB (hub, proxy, culler: "
          f"{out['hub_pss_mib']:.0f} MiB); machine's available memory fell by "
          f"{out['available_drop_mib']:.0f} MiB (other work on the machine included)")
    print(f"failures: {len(out['failures']) + len(out['lesson_failures'])} "
          f"{json.dumps({**out['failures'], **out['lesson_failures']}, ensure_ascii=False)}")
    if cgroup_peaks:
        peaks = sorted(cgroup_peaks.values())
        out["cgroup_peak_mib"] = {"median": statistics.median(peaks), "max": peaks[-1]}
        print(f"peak per student as the memory cgroup counts it (the limit's measure, page cache "
              f"included): median {statistics.median(peaks):.0f} MiB, max {peaks[-1]:.0f} MiB")
    print(f"saved notebooks not intact: {len(broken)}; processes left after the hub stopped: {len(left)}")
    if a.json:
        a.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
