"""The hub is a security boundary: student A attacks student B and the hub, and every attack fails.

One hub, as root on loopback (hub/jupyterhub_config.py, as `make hub` runs it: sign-up with the
instructor's approval, each student their own system user, a memory limit of 1 GiB per
student). The instructor adds A and B, both sign up, the instructor approves them; then from
A's kernel and A's browser session every attack of tests/hub_attacks.py and the HTTP ones
below. Then A allocates far past the memory limit: A's kernel is killed with a message in A's
notebook, B's kernel keeps its state. Then the hub restarts: both servers and B's kernel
survive it (cleanup_servers = False). The fixture removes every user, process and cgroup it made.

It needs root (students become system users); as any other user it fails, it does not skip.
"""
from __future__ import annotations

import json
import os
import pathlib
import secrets
import sys
import time

import pytest
import requests
import websocket

ROOT = pathlib.Path(__file__).resolve().parent.parent
HUB = ROOT / "hub"
sys.path.insert(0, str(HUB))
sys.path.insert(0, str(ROOT / "tests"))
import classroom  # noqa: E402
import hub_attacks  # noqa: E402
from hub_support import local_hub  # noqa: E402

pytestmark = pytest.mark.slow      # a hub, two servers, their kernels (2-4 minutes on 2 busy cores)

A, B = "an", "binh"
PASSWORD = {A: "an-" + secrets.token_hex(6), B: "binh-" + secrets.token_hex(6)}
LESSON = "attnlab-course/lessons_vi/01_self_attention.ipynb"


@pytest.fixture(scope="module")
def hub():
    with local_hub("the hub's security tests", "attnlab-hubsec-", auth="sign-up",
                   ATTNLAB_HUB_MEM_LIMIT="1G", ATTNLAB_HUB_START_TIMEOUT="240") as h:
        yield h


@pytest.fixture(scope="module")
def instructor(hub):
    teacher = classroom.Student(hub.url, classroom.ADMIN)
    assert teacher.login(hub.admin_password)
    return teacher


@pytest.fixture(scope="module")
def students(hub, instructor):
    """The instructor adds A and B (their system users appear), they sign up, the instructor
    approves, they log in and start their servers; B keeps a value in their kernel."""
    import admin
    admin.HubAdmin(hub.url, hub.token).add_users([A, B], group="course-vi")
    people = {n: classroom.Student(hub.url, n) for n in (A, B)}
    for name, s in people.items():
        assert "sent to the admin" in s.sign_up(PASSWORD[name])
        assert not s.login(PASSWORD[name]), "logged in before the instructor approved"
        instructor.approve(name)
        assert s.login(PASSWORD[name])
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda s: s.start_server(timeout=240), people.values()))
    return people


@pytest.fixture(scope="module")
def b_kernel(students):
    kernel = students[B].open_kernel(LESSON)
    _, reply = kernel.execute("MY_STATE = 42")
    assert reply["status"] == "ok"
    yield kernel
    try:
        kernel.close()
    except Exception:
        pass


def server_pid(hub, name):
    """The pid of the student's server process (jupyterhub.singleuser, run as their user)."""
    import pwd
    uid = pwd.getpwnam(hub.layout.system_name(name)).pw_uid
    return next(p.pid for p in hub.our_processes()
                if p.uids().real == uid and "singleuser" in " ".join(p.cmdline()))


def test_each_student_is_their_own_unprivileged_user(hub, students):
    import pwd
    an = students[A]
    kernel = an.open_kernel(LESSON)
    try:
        outputs, reply = kernel.execute(
            "import os, pwd, attnlab, sys\n"
            "print(os.getuid(), os.geteuid(), pwd.getpwuid(os.getuid()).pw_name, os.getcwd(), "
            "attnlab.__file__.startswith(sys.prefix), os.access(os.path.dirname(attnlab.__file__), os.W_OK), "
            "oct(os.stat(os.path.expanduser('~')).st_mode & 0o777))\n"
            "import json, ipykernel.connect\n"
            "info = json.loads(ipykernel.connect.get_connection_info())\n"
            "print(info['transport'], info['ip'])")
    finally:
        kernel.close()
    assert reply["status"] == "ok", outputs
    text = "".join(o["text"] for o in outputs)
    uid, euid, name, cwd, installed, writable, mode, transport, sockets = text.split()
    account = pwd.getpwnam(hub.layout.system_name(A))
    assert int(uid) == int(euid) == account.pw_uid != 0 and name == account.pw_name
    assert cwd == str(hub.layout.home(A) / "attnlab-course" / "lessons_vi")
    assert installed == "True" and writable == "False" and mode == "0o700"
    # the kernel's sockets: Unix sockets inside the student's home, no loopback TCP ports
    assert transport == "ipc" and sockets.startswith(str(hub.layout.home(A)) + "/"), (transport, sockets)


def test_every_attack_from_a_kernel_fails(hub, students, b_kernel):
    targets = {"b_name": B, "b_home": str(hub.layout.home(B)),
               "b_file": str(hub.layout.home(B) / LESSON),
               "secrets": [str(p) for p in sorted(hub.layout.private.iterdir()) if p.is_file()],
               "hub_api": f"http://127.0.0.1:{hub.layout.hub_api_port}/hub/api",
               "proxy_api": f"http://127.0.0.1:{hub.layout.proxy_api_port}/api",
               "solutions": str(ROOT / "solutions"), "course_git": str(hub.layout.course / ".git"),
               "hub_config": str(HUB / "jupyterhub_config.py"), "b_server_pid": server_pid(hub, B)}
    assert pathlib.Path(targets["b_file"]).exists() and len(targets["secrets"]) >= 3
    assert {"jupyterhub.sqlite", "attnlab_hub_admin_password", "jupyterhub_cookie_secret"} <= \
        {pathlib.Path(p).name for p in targets["secrets"]}
    kernel = students[A].open_kernel(LESSON)
    try:
        outputs, reply = kernel.execute(hub_attacks.kernel_attacks(targets), timeout=300)
    finally:
        kernel.close()
    assert reply["status"] == "ok", outputs
    got = hub_attacks.results(outputs)
    print("attacks from A's kernel:", json.dumps(got, indent=1, ensure_ascii=False))   # pytest -s
    succeeded = {k: v for k, v in got.items() if v.startswith("SUCCEEDED")}
    assert not succeeded, json.dumps(got, indent=1)
    assert len(got) >= 20, got
    assert students[B].running()


def test_every_attack_from_a_browser_session_fails(hub, students):
    an, url = students[A], hub.url
    cookie_only = requests.Session()
    cookie_only.cookies.update(an.http.cookies)
    tried = {
        "B's contents API with A's cookies": cookie_only.get(f"{url}/user/{B}/api/contents/", timeout=60),
        "B's JupyterLab with A's cookies": cookie_only.get(f"{url}/user/{B}/lab", timeout=60),
        "B's contents API with A's token": an.http.get(f"{url}/user/{B}/api/contents/", timeout=60),
        "stop B's server with A's token": an.http.delete(f"{url}/hub/api/users/{B}/server", timeout=60),
        "list every user with A's token": an.http.get(f"{url}/hub/api/users", timeout=60),
        "make A an admin": an.http.patch(f"{url}/hub/api/users/{A}", json={"admin": True}, timeout=60),
        "the admin page": an.http.get(f"{url}/hub/admin", timeout=60, allow_redirects=False),
        "approve sign-ups": an.http.get(f"{url}/hub/authorize", timeout=60, allow_redirects=False),
    }
    for path in (f"../{B}/attnlab-course", f"%2e%2e/{B}", f"..%2f{B}%2fattnlab-course",
                 f"attnlab-course/../../{B}", str(hub.layout.home(B))):
        tried[f"path traversal {path}"] = an.http.get(f"{url}/user/{A}/api/contents/{path}", timeout=60)
    let_in = {k: r.status_code for k, r in tried.items() if r.status_code < 300}
    assert not let_in, let_in
    assert students[B].running()


def test_nobody_logs_in_as_someone_else_or_claims_the_instructor(hub, students):
    # B's name with A's password, the instructor's name with a student's, a stranger
    assert not classroom.Student(hub.url, B).login(PASSWORD[A])
    assert not classroom.Student(hub.url, classroom.ADMIN).login(PASSWORD[A])
    # a sign-up with the instructor's name is refused, and the instructor's password still works
    grab = classroom.Student(hub.url, classroom.ADMIN)
    assert "sent to the admin" not in grab.sign_up("mallory-" + secrets.token_hex(6))
    assert not grab.login("mallory-" + secrets.token_hex(6))
    assert classroom.Student(hub.url, classroom.ADMIN).login(hub.admin_password)
    # a listed student who has not signed up yet cannot be claimed by whoever signs up first
    import admin
    admin.HubAdmin(hub.url, hub.token).add_users(["chi"])
    thief = classroom.Student(hub.url, "chi")
    assert "sent to the admin" in thief.sign_up("thief-" + secrets.token_hex(6))
    assert not classroom.Student(hub.url, "chi").login("thief-" + secrets.token_hex(6))
    # a name that is already a system account the hub did not make is refused
    import accounts
    outsider = hub.layout.system_name("staff")
    accounts._run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", outsider])
    try:
        with pytest.raises(RuntimeError, match="HTTP 400.*not one of the course's"):
            admin.HubAdmin(hub.url, hub.token).add_users(["staff"])
    finally:
        accounts.delete_account(outsider, remove_home=False)


NBGRADER = (  # run in a student's kernel: nbgrader as the student's server would run it
    "import subprocess, sys\n"
    "def nbgrader(*args):\n"
    "    done = subprocess.run([sys.executable, '-m', 'nbgrader', *args], capture_output=True, text=True, cwd=os.path.expanduser('~'))\n"
    "    return done.returncode, (done.stdout + done.stderr)[-600:]\n"
    "import os\n")


EXCHANGE_ATTACKS = """
import glob, json, os
out = {}
def tried(name, fn):
    try:
        out[name] = "SUCCEEDED: " + str(fn())[:100]
    except (OSError, IndexError) as err:      # IndexError: glob found nothing
        out[name] = "blocked: " + type(err).__name__
tried("list the submissions", lambda: os.listdir(W["inbound"]))
tried("find B's submission", lambda: glob.glob(W["b_glob"])[0])
tried("change the released notebook", lambda: open(W["outbound"] + "/ps1/ps1.ipynb", "a").close())
tried("add to the released assignment", lambda: open(W["outbound"] + "/ps1/extra.ipynb", "w").close())
tried("take over the course folder", lambda: os.rename(W["course"], W["course"] + "-mine"))
print(json.dumps(out))
"""


def test_students_hand_in_through_the_exchange_and_see_only_their_own(hub, students, tmp_path):
    """nbgrader's exchange as the students' servers use it (its settings from the students'
    environment): the instructor (root) releases, both students fetch and submit; A can
    neither list nor read B's submission, nor change what was released."""
    import nbformat
    import subprocess
    course = tmp_path / "nbgrader-course"
    (course / "release" / "ps1").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("answer = 42")]),
                   course / "release" / "ps1" / "ps1.ipynb")
    import student_env
    env = dict(os.environ, **student_env.server_environment(hub.layout), ATTNLAB_NBGRADER_COURSE=str(course),
               ATTNLAB_EXCHANGE=str(hub.layout.exchange))
    released = subprocess.run([str(hub.layout.env / "bin" / "python"), "-m", "nbgrader",
                               "release_assignment", "ps1"], env=env, capture_output=True, text=True,
                              cwd=course, timeout=300)
    assert released.returncode == 0, released.stdout + released.stderr
    inbound = hub.layout.exchange / "attnlab" / "inbound"
    for name in (A, B):
        kernel = students[name].open_kernel("nbgrader.ipynb")   # not B's lesson: its kernel stays
        try:
            outputs, reply = kernel.execute(NBGRADER + "print(nbgrader('fetch_assignment', 'ps1'), "
                                            "nbgrader('submit', 'ps1'))", timeout=300)
        finally:
            kernel.close()
        assert reply["status"] == "ok" and outputs[0]["text"].startswith("(0, "), outputs
        assert outputs[0]["text"].count("(0, ") == 2, outputs
    # nbgrader names each submission by the student's system user (jupyter-NAME on a real hub)
    handed_in = sorted(p.name.split("+")[0] for p in inbound.iterdir())
    assert handed_in == [hub.layout.system_name(A), hub.layout.system_name(B)]
    b_submission = next(p for p in inbound.iterdir() if p.name.startswith(hub.layout.system_name(B) + "+"))
    # nbgrader's own protection of a submission (mode 777, so that the instructor can remove it):
    # nobody can list inbound, and the name ends in 9 random bytes (72 bits) nobody can guess
    assert len(b_submission.name.split("+")[-1]) == 12
    where = {"inbound": str(inbound), "course": str(hub.layout.exchange / "attnlab"),
             "outbound": str(hub.layout.exchange / "attnlab" / "outbound"),
             "b_glob": str(inbound / f"{hub.layout.system_name(B)}+*")}
    kernel = students[A].open_kernel("nbgrader.ipynb")
    try:
        outputs, reply = kernel.execute(f"W = {where!r}\n" + EXCHANGE_ATTACKS, timeout=120)
    finally:
        kernel.close()
    got = hub_attacks.results(outputs)
    assert len(got) == 5 and all(v.startswith("blocked") for v in got.values()), got


def test_past_the_memory_limit_only_the_students_own_kernel_dies(hub, students, b_kernel):
    an = students[A]
    kernel = an.open_kernel(LESSON)
    try:
        messages = _run_until_restart(kernel, "import numpy as np\nx = np.ones(3 * 2**30, dtype=np.uint8)",
                                      timeout=240)
    finally:
        try:
            kernel.close()
        except Exception:
            pass
    said = " ".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")
    assert "Kernel đã bị dừng: máy chủ của bạn dùng quá giới hạn bộ nhớ (1 GiB)" in said, messages
    states = [m["content"]["execution_state"] for m in messages if m["msg_type"] == "status"]
    assert "restarting" in states
    assert an.running()                                   # A's server itself was not killed
    b_kernel.reconnect()
    outputs, reply = b_kernel.execute("print(MY_STATE)")  # B's kernel, untouched
    assert reply["status"] == "ok" and outputs[0]["text"] == "42\n"


def _run_until_restart(kernel, code, timeout):
    """Send code; collect the messages of its cell until the kernel reports 'restarting'."""
    import uuid
    msg_id = uuid.uuid4().hex
    kernel.ws.send(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "an",
                   "session": kernel.session_id, "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    got, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        kernel.ws.settimeout(max(1, end - time.monotonic()))
        try:
            msg = json.loads(kernel.ws.recv())
        except websocket.WebSocketTimeoutException:
            break
        kind = msg["msg_type"]
        if msg.get("parent_header", {}).get("msg_id") == msg_id or kind == "status":
            got.append(msg)
        if kind == "execute_reply" and msg["parent_header"].get("msg_id") == msg_id:
            raise AssertionError(f"the allocation finished: {msg['content']}")
        if kind == "status" and msg["content"]["execution_state"] == "restarting":
            return got
    raise AssertionError(f"no kernel restart within {timeout} s: {got}")


def test_a_hub_restart_keeps_every_server_and_kernel(hub, students, b_kernel):
    import psutil
    before = {n: s.hub_model()["servers"][""]["started"] for n, s in students.items()}
    pids = {n: server_pid(hub, n) for n in students}
    hub.stop_hub()
    assert hub.proc.returncode is not None
    assert all(psutil.pid_exists(pid) for pid in pids.values()), "a server stopped with the hub"
    hub.start(timeout=180)
    for name, s in students.items():
        classroom.wait_for(f"{name}'s server again", s.running, 120)
        assert s.hub_model()["servers"][""]["started"] == before[name]   # not started again
    sessions = students[B].server("GET", "sessions")      # B's notebook: still the same kernel
    assert [x["kernel"]["id"] for x in sessions if x["id"] == b_kernel.session_id] == [b_kernel.kernel_id]
    b_kernel.reconnect()                                  # the proxy restarted: a new websocket
    outputs, reply = b_kernel.execute("print(MY_STATE)")
    assert reply["status"] == "ok" and outputs[0]["text"] == "42\n"
