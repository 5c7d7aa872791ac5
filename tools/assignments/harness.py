"""Runs INSIDE the grading sandbox: execute one submission, unit by unit, in a fresh IPython kernel.

    python -E -s harness.py  < job.json  > answer.json

Reads one JSON document on stdin (the grader's job, tools/assignments/runner.py): the root folder
(a private tmpfs in the sandbox), the notebook, the units to execute in order (the student's cells,
the locked cells' lesson lines, and the probe of each graded exercise, which writes the student's
results on the grader's seed into ``root/out/<key>.pt``), the per-unit timeout and the kernel's
environment. Writes one JSON document on stdout: what each unit printed or raised, and the results
files (base64). Nothing here decides a grade: everything this process writes is read by the grader
as untrusted data, because the student's code runs beside it, as the same user.

A unit that outruns its timeout is interrupted; one that ignores the interrupt (a bare ``except``
around a loop), or kills its kernel, is dropped: a fresh kernel replays the units before it and
the run goes on, so one such cell costs only its own exercise.
"""
from __future__ import annotations

import base64
import json
import os
import queue
import sys
import time

CAP = 16_384            # characters kept of one unit's printed text / error (the rest is cut)
GRACE = 5.0             # seconds a unit gets to stop after the interrupt before its kernel is replaced
RESULT_CAP = 16 << 20   # bytes of one results file sent back (bigger: dropped, the grader says why)


def _cut(text: str) -> str:
    return text if len(text) <= CAP else text[:CAP] + "\n[...]"


class Kernel:
    """One ipykernel, started from the kernel spec the job wrote; unit execution with a deadline."""

    def __init__(self, job: dict):
        from jupyter_client import KernelManager

        self.km = KernelManager(kernel_name="attnlab-grade")
        self.km.start_kernel(cwd=job["cwd"], env=job["kernel_env"], stdout=_devnull(), stderr=_devnull())
        self.kc = self.km.blocking_client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=job["start_timeout"])

    def run(self, code: str, timeout: float) -> dict:
        """{"status": ok | error | timeout | stuck | died, "text": printed, "error": {...} or None}."""
        msg_id = self.kc.execute(code, store_history=True, allow_stdin=False, stop_on_error=False)
        text, error, status = [], None, "ok"
        deadline, interrupted = time.monotonic() + timeout, False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if interrupted:
                    return {"status": "stuck", "text": _cut("".join(text)), "error": error}
                self.km.interrupt_kernel()
                interrupted, status, deadline = True, "timeout", time.monotonic() + GRACE
                continue
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 1.0))
            except queue.Empty:
                if not self.km.is_alive():
                    return {"status": "died", "text": _cut("".join(text)), "error": error}
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content.get("name") == "stdout" and sum(map(len, text)) < CAP:   # no warnings
                text.append(str(content.get("text", "")))
            elif kind == "error" and error is None:
                error = {"ename": _cut(str(content.get("ename", "Error"))),
                         "evalue": _cut(str(content.get("evalue", ""))),
                         "traceback": _cut("\n".join(map(str, content.get("traceback", []))))}
            elif kind == "status" and content.get("execution_state") == "idle":
                break
        if status == "ok" and error is not None:
            status = "error"
        return {"status": status, "text": _cut("".join(text)), "error": error}

    def stop(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)


def _devnull():
    return open(os.devnull, "wb")


def prepare(job: dict) -> None:
    """The kernel's home, kernel spec, the notebook file and the results folder, inside ``root``."""
    root = job["root"]
    for sub in ("home/.local/share/jupyter/kernels/attnlab-grade", "home/.ipython", "out", "work"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "attnlab grading", "language": "python"}
    with open(os.path.join(root, "home/.local/share/jupyter/kernels/attnlab-grade/kernel.json"), "w") as f:
        json.dump(spec, f)
    with open(os.path.join(job["cwd"], job["notebook_name"]), "w", encoding="utf-8") as f:
        f.write(job["notebook"])
    fonts = job.get("matplotlib_cache")
    if fonts:                     # the grader's font list: no font scan in every sandbox
        dest = os.path.join(root, "home/.cache/matplotlib")
        os.makedirs(dest, exist_ok=True)
        for name, data in fonts.items():
            with open(os.path.join(dest, os.path.basename(name)), "w", encoding="utf-8") as f:
                f.write(data)


def execute(job: dict) -> dict:
    prepare(job)
    units, done, answers = job["units"], [], {}
    restarts, timeout = 0, float(job["timeout"])
    kernel = Kernel(job)
    try:
        for unit in units:
            answer = kernel.run(unit["code"], timeout)
            answers[unit["id"]] = answer
            if answer["status"] in ("stuck", "died"):
                try:
                    kernel.stop()
                except Exception:                    # a dead kernel's channels may already be closed
                    pass
                restarts += 1
                if restarts > job["max_restarts"]:
                    break
                kernel = Kernel(job)                 # a fresh kernel, brought back to where it was
                for earlier in done:
                    if earlier["kind"] != "probe":
                        kernel.run(earlier["code"], timeout)
                continue
            done.append(unit)
    finally:
        kernel.stop()
    return {"units": answers, "restarts": restarts, "results": results(job)}


def results(job: dict) -> dict:
    out, found = os.path.join(job["root"], "out"), {}
    for unit in job["units"]:
        if unit["kind"] != "probe":
            continue
        path = os.path.join(out, unit["key"] + ".pt")
        try:
            if os.path.getsize(path) > RESULT_CAP:
                found[unit["key"]] = {"too_big": os.path.getsize(path)}
                continue
            with open(path, "rb") as f:
                found[unit["key"]] = {"data": base64.b64encode(f.read()).decode("ascii")}
        except OSError:
            pass
    return found


def main() -> int:
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    answer_fd = os.dup(1)                          # the answer goes here; nothing else may write into it
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        answer = execute(job)
    except Exception as err:                      # the grader words it: "the submission could not be run"
        answer = {"failed": f"{type(err).__name__}: {str(err)[:500]}"}
    with os.fdopen(answer_fd, "w", encoding="utf-8") as f:
        json.dump(answer, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
