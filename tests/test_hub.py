"""The course's JupyterHub with two simulated students (hub/jupyterhub_config.py, docs/hub.md).

One hub for the module, as root on free loopback ports, in a temporary state folder, in the
workshop mode (one class password: ATTNLAB_HUB_AUTH=class-password), with short culling times.
The tests run in order, as a lab session would: the instructor adds the class (each student
becomes a system user), students log in, each runs a lesson cell in their own kernel as their
own user, the instructor stops a server, the course is updated under an edited notebook, the
culler stops the last idle server. The fixture stops the hub and checks that no process, user
or cgroup it made is left. tests/test_hub_security.py attacks the same hub in its default mode.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import pwd
import shutil
import subprocess
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
HUB = ROOT / "hub"
sys.path.insert(0, str(HUB))
import classroom  # noqa: E402
import publish_course  # noqa: E402
import singleuser  # noqa: E402
sys.path.insert(0, str(ROOT / "tests"))
from hub_support import local_hub  # noqa: E402

pytestmark = pytest.mark.slow      # starts JupyterHub, two servers and their kernels (about 2 minutes)

CULL_TIMEOUT = 40    # seconds idle before the culler stops a server (3600 on a real hub)
STUDENTS = {"an": "course-vi", "binh": "course-zh"}
LESSON = {"an": "attnlab-course/lessons_vi/01_self_attention.ipynb",
          "binh": "attnlab-course/lessons_zh/01_self_attention.ipynb"}


@pytest.fixture(scope="module")
def hub():
    with local_hub("the hub's tests", "attnlab-hub-", auth="class-password",
                   ATTNLAB_CULL_TIMEOUT=str(CULL_TIMEOUT), ATTNLAB_CULL_EVERY="5",
                   ATTNLAB_HUB_ACTIVITY_INTERVAL="5", ATTNLAB_HUB_START_TIMEOUT="240") as h:
        yield h


@pytest.fixture(scope="module")
def students(hub):
    return {name: classroom.Student(hub.url, name) for name in STUDENTS}


def admin_cli(hub, *args):
    env = dict(os.environ, JUPYTERHUB_API_TOKEN=hub.token)
    return subprocess.run([sys.executable, str(HUB / "admin.py"), "--hub", hub.url, *args],
                          env=env, capture_output=True, text=True, timeout=120)


def test_instructor_adds_the_class_in_bulk(hub, tmp_path):
    for group in ("course-vi", "course-zh"):
        names = [n for n, g in STUDENTS.items() if g == group] + [f"extra-{group[-2:]}"]
        listing = tmp_path / f"{group}.txt"
        listing.write_text("# class list\n" + "\n".join(n.upper() for n in names) + "\n\n")
        done = admin_cli(hub, "add", str(listing), "--group", group)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("2 new of 2 listed")
    users = {u["name"]: u for u in hub.api("GET", "/users")}
    assert {"an", "binh", "extra-vi", "extra-zh"} <= set(users)
    for name in ("an", "binh", "extra-vi"):          # each one a system user, home 0700
        account = pwd.getpwnam(hub.layout.system_name(name))
        assert account.pw_dir == str(hub.layout.home(name)) and account.pw_uid != 0
        assert os.stat(account.pw_dir).st_mode & 0o777 == 0o700
    assert users["an"]["groups"] == ["course-vi"] and users["binh"]["groups"] == ["course-zh"]
    again = admin_cli(hub, "add", str(tmp_path / "course-vi.txt"), "--group", "course-vi")
    assert again.stdout.startswith("0 new of 2 listed"), again.stdout
    env = dict(os.environ, JUPYTERHUB_API_TOKEN="not-a-token")
    refused = subprocess.run([sys.executable, str(HUB / "admin.py"), "--hub", hub.url, "list"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and refused.stderr.startswith("admin.py: GET /users: HTTP 403")


def test_only_listed_students_with_the_password_get_in(hub, students):
    assert not classroom.Student(hub.url, "mallory").login(hub.password)     # not on the list
    assert not classroom.Student(hub.url, "an").login(hub.password + "x")    # wrong password
    for s in students.values():
        assert s.login(hub.password)


def test_each_student_runs_a_lesson_cell_in_their_own_kernel(hub, students):
    with concurrent.futures.ThreadPoolExecutor(len(students)) as pool:
        list(pool.map(lambda s: s.start_server(timeout=240), students.values()))
    for name, s in students.items():
        # The whole course is in their home: both languages and the explorer.
        course = {f["name"] for f in s.server("GET", "contents/attnlab-course")["content"]}
        assert {"lessons_vi", "lessons_zh", "notebooks"} <= course
        assert s.server("GET", "contents/attnlab-course/notebooks/attention_explorer.ipynb",
                        params={"content": "0"})["type"] == "notebook"
        nb = s.read_notebook(LESSON[name])
        setup = next(c for c in nb.cells if c.cell_type == "code")
        kernel = s.open_kernel(LESSON[name])
        try:
            outputs, reply = kernel.execute(setup.source, timeout=300)
            assert reply["status"] == "ok", outputs
            outputs, reply = kernel.execute(
                "import os, attnlab, torch\n"
                "w = attnlab.scaled_dot_product_attention(*[torch.ones(1, 2, 4)] * 3)[1]\n"
                "print(os.getcwd(), torch.get_num_threads(), tuple(w.shape))", timeout=120)
        finally:
            kernel.close()
        assert reply["status"] == "ok", outputs
        lesson_dir = hub.layout.home(name) / pathlib.Path(LESSON[name]).parent
        assert [o.get("text") for o in outputs] == [f"{lesson_dir} 1 (1, 2, 2)\n"]


def test_each_student_has_jupyterlab_in_their_language(hub, students):
    for name, locale in (("an", "vi_VN"), ("binh", "zh_CN")):
        s = students[name]
        r = s.http.get(f"{hub.url}/user/{name}/lab/api/translations", timeout=60)
        r.raise_for_status()
        assert {"vi_VN", "zh_CN"} <= set(r.json()["data"])   # the language packs, to pick from
        r = s.http.get(f"{hub.url}/user/{name}/lab/api/settings/"
                       "@jupyterlab/translation-extension:plugin", timeout=60)
        r.raise_for_status()
        assert r.json()["settings"]["locale"] == locale


def test_instructor_lists_and_stops_servers(hub, students):
    listed = admin_cli(hub, "list")
    assert listed.returncode == 0, listed.stderr
    assert sorted(line.split("\t")[0] for line in listed.stdout.splitlines()) == ["an", "binh"]
    stopped = admin_cli(hub, "stop", "binh")
    assert stopped.returncode == 0, stopped.stderr
    classroom.wait_for("binh's server stopping", lambda: not students["binh"].running(), 120)
    assert students["an"].running()


def test_an_edited_lesson_survives_a_course_update(hub, students, tmp_path):
    an = students["an"]
    path = LESSON["an"]
    mine = an.read_notebook(path)
    first = next(i for i, c in enumerate(mine.cells) if c.cell_type == "markdown")
    mine.cells[first].source = "# Bài của An: ghi chú riêng"
    an.save_notebook(path, mine)
    # The instructor changes the same cell and lesson 02, and adds a lesson.
    source = tmp_path / "checkout"
    for p in publish_course.COURSE_PATHS:
        shutil.copytree(ROOT / p, source / p)
    local = pathlib.Path(*pathlib.Path(path).parts[1:])
    theirs = nbformat.read(source / local, as_version=4)
    theirs.cells[first].source = "# Bài 1 (bản mới của giảng viên)"
    nbformat.write(theirs, source / local)
    l2 = source / "lessons_vi" / "02_multi_head_attention.ipynb"
    nb2 = nbformat.read(l2, as_version=4)
    nb2.cells[0].source += "\n\nCập nhật: thêm một ví dụ."
    nbformat.write(nb2, l2)
    new = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Bài 10")])
    nbformat.write(new, source / "lessons_vi" / "10_new_lesson.ipynb")
    assert publish_course.publish(hub.layout.course, source=source)

    an.stop_server()
    an.start_server(timeout=240)                     # the course is pulled as the server starts
    after = an.read_notebook(path)
    assert after.cells[first].source == "# Bài của An: ghi chú riêng"
    assert [c.source for c in after.cells] == [c.source for c in mine.cells]
    assert an.read_notebook("attnlab-course/lessons_vi/10_new_lesson.ipynb").cells[0].source == "# Bài 10"
    assert an.read_notebook("attnlab-course/lessons_vi/02_multi_head_attention.ipynb"
                            ).cells[0].source.endswith("Cập nhật: thêm một ví dụ.")


def test_the_culler_stops_an_idle_server(hub, students):
    an = students["an"]
    assert an.running()
    classroom.wait_for("the culler stopping an's idle server", lambda: not an.running(),
                       timeout=CULL_TIMEOUT + 90, every=2)
    assert "Culling server an" in hub.log.read_text(errors="replace")


# ---- the pieces on their own (no hub)

def test_a_course_that_cannot_be_reached_does_not_stop_the_server(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTNLAB_COURSE_URL", f"file://{tmp_path / 'nowhere'}")
    assert singleuser.update_course(tmp_path) is False
    assert "the course could not be updated" in capsys.readouterr().err


def test_the_hub_sets_a_language_only_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
    settings = tmp_path.joinpath(*singleuser._TRANSLATION_SETTINGS)
    singleuser.set_locale("vi_VN")
    assert json.loads(settings.read_text()) == {"locale": "vi_VN"}
    settings.write_text('{"locale": "zh_CN"}')       # the student picked another one
    singleuser.set_locale("vi_VN")
    assert json.loads(settings.read_text()) == {"locale": "zh_CN"}
    singleuser.set_locale("fr_FR")
    assert "not one of vi_VN, zh_CN, en" in capsys.readouterr().err


def test_publishing_commits_only_changes(tmp_path):
    src = tmp_path / "src"
    for p in publish_course.COURSE_PATHS:
        (src / p).mkdir(parents=True)
        (src / p / "a.ipynb").write_text("{}")
    assert publish_course.publish(tmp_path / "course", source=src) is True
    assert publish_course.publish(tmp_path / "course", source=src) is False
    (src / "lessons_vi" / "a.ipynb").unlink()
    assert publish_course.publish(tmp_path / "course", source=src) is True
    assert not (tmp_path / "course" / "lessons_vi" / "a.ipynb").exists()
    with pytest.raises(FileNotFoundError, match="has no lessons_vi"):
        publish_course.publish(tmp_path / "course", source=src, paths=("lessons_vi/a.ipynb",))


def test_class_lists_are_read_and_checked(tmp_path):
    import admin
    f = tmp_path / "class.txt"
    f.write_text("# 2026 class\nAn.Nguyen\n\n  binh  \n")
    assert admin.read_names(f) == ["an.nguyen", "binh"]
    with pytest.raises(ValueError, match="not a user name JupyterHub accepts: bad name"):
        admin.HubAdmin("http://127.0.0.1:9", "t").add_users(["ok", "bad name"])
