"""One submission, one sandbox: bubblewrap namespaces around a throw-away unprivileged user.

What a sandboxed submission gets (docs/grading.md, "The sandbox"):
- its own mount namespace whose root is an empty tmpfs holding, read-only, only the system's /usr,
  the Python the course runs on, the grading venv, the INSTALLED copy of the course package and the
  harness; a private, size-capped tmpfs for /tmp and for its folder (home, notebook, results):
  no other submission, no solutions/, no instructor file, no grader argument is in it;
- its own PID namespace (its /proc shows only its own processes; when it ends, the kernel of the
  operating system kills every process left in it), network namespace (no network: only its own
  loopback), IPC and UTS namespaces, and a new session (no terminal);
- a uid of its own (from a block of UID_BLOCK uids leased by this grading run, ``lease_uids``; in
  no passwd file, owning no file outside), without capabilities
  or setuid (setpriv --no-new-privs);
- limits: wall time (the grader kills it), CPU time and address space per process, number of tasks
  of its uid, size of any file it writes, size of its tmpfs folders.

It needs Linux, bubblewrap and setpriv (util-linux), and root (to switch to the throw-away uid).
``why_not()`` says what is missing and how to get it.
"""
from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

UID_BASE = 2_000_000        # the throw-away uids: UID_BASE and up (no such user on a normal system)
UID_BLOCK = 4096            # uids leased by one grading run (submission n: its first uid + n % UID_BLOCK)
UID_BLOCKS = 1024
ROOT_IN_SANDBOX = "/sandbox"
HARNESS = Path(__file__).with_name("harness.py")
HARNESS_IN_SANDBOX = "/grader/harness.py"
ANSWER_CAP = 96 << 20       # bytes of the harness's answer read back (more: the submission is dropped)


@dataclass(frozen=True)
class Limits:
    wall: float                     # seconds for the whole submission
    cpu: int = 900                  # seconds of CPU per process
    memory: int = 6 << 30           # bytes of address space per process
    tasks: int = 512                # processes and threads of the sandbox's uid
    file_size: int = 64 << 20       # bytes of any one file written
    tmpfs: int = 512 << 20          # bytes of /tmp, and of the submission's folder


HOW_TO = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install "
          "bubblewrap`) and run the grader as root (`sudo make grade ...`, or in a container or VM where you "
          "are root), or grade WITHOUT the sandbox with UNSAFE=1 (make) / --unsafe (written into grades.csv)")


def why_not() -> str | None:
    """None if submissions can be sandboxed here; otherwise what is missing, and how to get it."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux (this is {sys.platform}); " + HOW_TO
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed; " + HOW_TO
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed; " + HOW_TO
    if os.geteuid() != 0:
        return "the sandbox runs each submission as a throw-away user, which needs root; " + HOW_TO
    try:
        r = subprocess.run(bwrap_command(UID_BASE, [], ["/usr/bin/true"]), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap does not start here ({type(e).__name__}: {e}); " + HOW_TO
    if r.returncode != 0:
        return (f"bubblewrap cannot make a sandbox here ({r.stderr.strip()[:300]}): a container may forbid "
                f"new namespaces (Docker: --security-opt seccomp=unconfined or --privileged); " + HOW_TO)
    return None


def _parents(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _system() -> list[str]:
    """/usr read-only, and the merged-/usr links (/bin, /lib, /lib64, /sbin) as on this machine."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def lease_uids():
    """(the first uid of a block no other grading run on this machine holds, the lock that holds it:
    keep it open for the run). Two runs at once never share a uid, so neither can kill the other's
    processes nor count against its task limit."""
    import fcntl
    import tempfile
    start = os.getpid() % UID_BLOCKS
    for k in range(UID_BLOCKS):
        block = (start + k) % UID_BLOCKS
        lock = open(os.path.join(tempfile.gettempdir(), f"attnlab-grade-uids-{block}.lock"), "a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        return UID_BASE + block * UID_BLOCK, lock
    raise RuntimeError(f"all {UID_BLOCKS} blocks of sandbox uids are in use")


def bwrap_command(uid: int, read_only: list[str], command: list[str], env: dict | None = None,
                  tmpfs: int = Limits.tmpfs) -> list[str]:
    """The bwrap + setpriv command line that runs ``command`` as the throw-away ``uid``."""
    real = sorted({os.path.realpath(p) for p in read_only if os.path.exists(p)} - {"/usr"})
    args = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "grading", *_system(),
            "--proc", "/proc", "--dev", "/dev",            # the tmpfs first: a read-only path may be under /tmp
            "--perms", "1777", "--size", str(tmpfs), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(tmpfs), "--tmpfs", ROOT_IN_SANDBOX]
    made = {"/tmp", ROOT_IN_SANDBOX}
    for d in sorted({p for path in real + [HARNESS_IN_SANDBOX] for p in _parents(path)} - made):
        if not d.startswith("/usr"):
            args += ["--perms", "0755", "--dir", d]
    for path in real:
        if not path.startswith("/usr/"):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind", str(HARNESS), HARNESS_IN_SANDBOX, "--chdir", ROOT_IN_SANDBOX, "--clearenv"]
    for k, v in (env or {}).items():
        args += ["--setenv", k, v]
    n = str(uid)
    return args + ["--", "setpriv", f"--reuid={n}", f"--regid={n}", "--clear-groups", "--inh-caps=-all",
                   "--bounding-set=-all", "--no-new-privs", "--", *command]


def _limit(limits: Limits, sandboxed: bool):
    def apply():
        os.umask(0o022)
        for which, value in ((resource.RLIMIT_CPU, limits.cpu), (resource.RLIMIT_AS, limits.memory),
                             (resource.RLIMIT_FSIZE, limits.file_size), (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(which, (value, value))
        if sandboxed:                      # counted per uid: the throw-away uid's tasks only
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.tasks, limits.tasks))
    return apply


def become_subreaper() -> None:
    """Orphans of this process's children come back to it (prctl PR_SET_CHILD_SUBREAPER): bwrap's outer
    process exits before the sandbox's init, which this process then reaps (so its processes' CPU time
    is counted here, and the sandbox is known to be gone before the processes are checked)."""
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):          # pragma: no cover - not Linux
        pass


def reap_orphans(timeout: float = 5.0) -> None:
    """Wait for the children this process inherited (see become_subreaper), at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def processes_of(uid: int) -> list[int]:
    """pids of the processes whose real uid is ``uid`` (a sandbox's uid: none once it has ended)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="utf-8") as f:
                line = next(ln for ln in f if ln.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if int(line.split()[1]) == uid:
            found.append(int(entry))
    return found


def run(job: dict, command: list[str], limits: Limits, *, uid: int | None, env: dict,
        read_only: list[str]) -> tuple[dict | None, str]:
    """Run the harness on ``job`` in a sandbox as ``uid`` (see lease_uids) or, if uid is None, as a plain
    child process of this one (UNSAFE). Returns (the harness's answer or None, what went wrong)."""
    sandboxed = uid is not None
    become_subreaper()
    argv = bwrap_command(uid, read_only, command, env, limits.tmpfs) if sandboxed else command
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=None if sandboxed else env, cwd=None if sandboxed else job["root"],
                            preexec_fn=_limit(limits, sandboxed), start_new_session=True)
    feeder = threading.Thread(target=_feed, args=(proc.stdin, json.dumps(job).encode("utf-8")), daemon=True)
    feeder.start()
    data, problem = bytearray(), ""
    deadline = time.monotonic() + limits.wall
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                problem = f"wall time limit ({limits.wall:.0f} s)"
                break
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            data += chunk
            if len(data) > ANSWER_CAP:
                problem = f"answer larger than {ANSWER_CAP >> 20} MiB"
                break
    finally:
        _kill(proc, grace=0 if problem else 10)
        reap_orphans()
        if sandboxed:
            for pid in processes_of(uid):                # none: the PID namespace is gone (tested)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    if problem:
        return None, problem
    try:
        answer = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "the sandbox's answer is not JSON"
    if not isinstance(answer, dict):
        return None, "the sandbox's answer is not a JSON object"
    return answer, str(answer.get("failed", "")) if "failed" in answer else ""


def _feed(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except (BrokenPipeError, OSError):
        pass


def _kill(proc: subprocess.Popen, grace: float) -> None:
    """The whole process group (UNSAFE: the harness and what it started; sandboxed: bwrap, whose
    death ends the sandbox's PID namespace and every process in it). A harness that answered gets
    ``grace`` seconds to exit by itself first (then its CPU time is counted: bwrap reaps its children)."""
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    for pipe in (proc.stdout, proc.stdin):
        try:
            pipe.close()
        except OSError:
            pass
