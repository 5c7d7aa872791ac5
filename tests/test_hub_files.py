"""What can be checked here of the hub's files for Kubernetes and Binder (neither runs here).

hub/z2jh/values.yaml parses and agrees with hub/jupyterhub_config.py (memory limit, culling,
thread and allocator settings, kernel connection); hub/z2jh/Dockerfile installs exactly the pinned
set of constraints.txt with the CPU torch; binder/ does the same; the npm proxy is pinned.
"""
from __future__ import annotations

import ast
import configparser
import json
import os
import pathlib
import re
import shlex
import sys

import pytest
import yaml
from traitlets.config import PyFileConfigLoader

ROOT = pathlib.Path(__file__).resolve().parent.parent
HUB = ROOT / "hub"
sys.path.insert(0, str(HUB))
import student_env  # noqa: E402
from layout import Layout  # noqa: E402

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path=ROOT / "constraints.txt") -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            out[norm(name)] = version.strip()
    return out


def load_hub_config(state: pathlib.Path, **environ: str):
    """hub/jupyterhub_config.py as JupyterHub loads it, with its state in ``state`` (a stand-in
    for the students' environment there: only its interpreter's path is looked at)."""
    if os.geteuid() != 0:
        pytest.fail("hub/jupyterhub_config.py refuses to load unless it runs as root (the hub "
                    "makes each student a system user): run the hub's tests as root")
    (state / "env" / "bin").mkdir(parents=True, exist_ok=True)
    (state / "env" / "bin" / "python").touch()
    student_env.close_to_others(ROOT / "solutions")      # what `make hub` does first
    mp = pytest.MonkeyPatch()
    for key in [k for k in os.environ if k.startswith(("ATTNLAB_HUB_", "ATTNLAB_CULL_"))]:
        mp.delenv(key)
    mp.setenv("ATTNLAB_HUB_STATE", str(state))
    for key, value in environ.items():
        mp.setenv(key, value)
    try:
        return PyFileConfigLoader("jupyterhub_config.py", path=str(HUB)).load_config()
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return load_hub_config(tmp_path_factory.mktemp("state"))


@pytest.fixture(scope="module")
def values():
    return yaml.safe_load((HUB / "z2jh" / "values.yaml").read_text())


def dockerfile_instructions():
    text = (HUB / "z2jh" / "Dockerfile").read_text()
    text = re.sub(r"\\\n", " ", text)
    return [line.split(None, 1) for line in text.splitlines() if line.strip() and not line.startswith("#")]


def pip_installs(shell: str) -> list[list[str]]:
    """The argument lists of every `pip install` in a shell command line."""
    out = []
    for part in re.split(r"&&|;", shell):
        words = shlex.split(part)
        if words[:2] == ["pip", "install"]:
            out.append(words[2:])
    return out


def test_values_agree_with_the_one_machine_hub(values, config):
    su = values["singleuser"]
    assert su["memory"]["limit"] == config.Spawner.mem_limit == "1.5G"
    assert su["memory"]["guarantee"] == "1G"
    env = config.Spawner.environment
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "MALLOC_ARENA_MAX", "ATTNLAB_COURSE_DIR"):
        assert su["extraEnv"][key] == env[key], key
    # the same kernel connection (on the hub its subclass that also names the memory limit)
    assert values["hub"]["config"]["KubeSpawner"]["args"] == [
        "--ServerApp.kernel_websocket_connection_class=attnlab_server.NoDelayKernelConnection"]
    assert config.Spawner.args == [
        "--ServerApp.kernel_websocket_connection_class=attnlab_hub_notice.MemoryLimitKernelConnection"]
    culler = next(s for s in config.JupyterHub.services if s["name"] == "idle-culler")
    assert f"--timeout={values['cull']['timeout']}" in culler["command"]
    assert 1800 <= values["cull"]["timeout"] <= 3600 and values["cull"]["enabled"]
    assert values["prePuller"]["hook"]["enabled"] and values["prePuller"]["continuous"]["enabled"]
    ast.parse(values["hub"]["extraConfig"]["course-language"])
    assert "GROUP_LOCALES = {\"course-vi\": \"vi_VN\", \"course-zh\": \"zh_CN\"}" in \
        values["hub"]["extraConfig"]["course-language"]
    assert config.JupyterHub.bind_url == "http://127.0.0.1:8000"


def test_the_image_installs_the_pinned_set_with_cpu_torch(values):
    steps = dockerfile_instructions()
    runs = [args for op, args in steps if op == "RUN"]
    installs = [words for r in runs for words in pip_installs(r)]
    pinned = pins()
    torch = [w for w in installs if any(x.startswith("torch") for x in w)]
    assert torch == [["--no-cache-dir", "--index-url", CPU_INDEX, f"torch=={pinned['torch']}"]]
    named = set()
    for words in installs:
        if words is torch[0] or "--no-deps" in words:
            continue
        assert words[words.index("-c") + 1] == "constraints.txt", words
        named |= {w for w in words if not w.startswith("-") and w != "constraints.txt"
                  and not w.endswith(".txt")}
        assert "requirements.txt" in words
    assert named, "no package named in the Dockerfile"
    assert {norm(n) for n in named} <= set(pinned), named - set(pinned)
    assert {"jupyterhub", "nbgitpuller", "jupyterlab-language-pack-vi-vn",
            "jupyterlab-language-pack-zh-cn"} <= {norm(n) for n in named}
    copied = [args.split() for op, args in steps if op == "COPY"]
    for *sources, _ in copied:
        for s in sources:
            assert (ROOT / s).exists(), f"the Dockerfile copies {s}, which is not in the repository"
    assert values["singleuser"]["cmd"] == ["python", "/opt/attnlab/hub/singleuser.py"]
    assert any("hub/singleuser.py" in c[:-1] and c[-1] == "hub/" for c in copied)
    assert next(a for op, a in steps if op == "WORKDIR") == "/opt/attnlab"


def test_binder_builds_the_pinned_set_with_cpu_torch():
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    assert f"--extra-index-url {CPU_INDEX}" in lines
    assert "-c ../constraints.txt" in lines and "-r ../requirements.txt" in lines
    assert f"torch=={pins()['torch']}" in lines
    named = [ln for ln in lines if not ln.startswith("-")]
    assert {norm(re.split("[=<>]", n)[0]) for n in named} <= set(pins())
    python = re.search(r"# python: (3\.\d+)", (ROOT / "constraints.txt").read_text()).group(1)
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == f"python-{python}"
    assert (ROOT / "binder" / "postBuild").stat().st_mode & 0o111


def test_the_proxy_is_pinned_and_runs_on_node_20():
    package = json.loads((HUB / "package.json").read_text())
    lock = json.loads((HUB / "package-lock.json").read_text())
    wanted = package["dependencies"]["configurable-http-proxy"]
    assert lock["packages"]["node_modules/configurable-http-proxy"]["version"] == wanted
    for name, p in lock["packages"].items():
        m = re.match(r">=\s*(\d+)", p.get("engines", {}).get("node", "") if isinstance(p.get("engines"), dict) else "")
        assert not m or int(m.group(1)) <= 20, f"{name} needs node {p['engines']['node']}"
    assert "/hub/node_modules/" in (ROOT / ".gitignore").read_text().splitlines()


# ---- the settings an operator gives (docs/hub.md lists every one)

def test_the_activity_interval_follows_the_cull_timeout_or_the_hub_refuses(tmp_path):
    short = load_hub_config(tmp_path / "a", ATTNLAB_CULL_TIMEOUT="60")
    assert short.JupyterHub.last_activity_interval == 15
    assert short.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] == "15"
    assert load_hub_config(tmp_path / "b").JupyterHub.last_activity_interval == 300   # 3600 s
    with pytest.raises(SystemExit, match="ATTNLAB_HUB_ACTIVITY_INTERVAL=300 is more than half"):
        load_hub_config(tmp_path / "c", ATTNLAB_CULL_TIMEOUT="60", ATTNLAB_HUB_ACTIVITY_INTERVAL="300")


@pytest.mark.slow       # publishes the whole course into a git repository
def test_the_state_folder_moves_the_course_with_it(tmp_path):
    """`make hub-publish` publishes where the hub reads (it used to publish into hub/.state)."""
    state = tmp_path / "state"
    config = load_hub_config(state)
    assert config.Spawner.environment["ATTNLAB_COURSE_URL"] == f"file://{state / 'course'}"
    assert config.JupyterHub.db_url == f"sqlite:///{state / 'private' / 'jupyterhub.sqlite'}"
    assert config.JupyterHub.cookie_secret_file == str(state / "private" / "jupyterhub_cookie_secret")
    import subprocess
    done = subprocess.run([sys.executable, str(HUB / "publish_course.py")], capture_output=True,
                          text=True, env=dict(os.environ, ATTNLAB_HUB_STATE=str(state)), timeout=300)
    assert done.returncode == 0, done.stderr
    assert (state / "course" / ".git").is_dir() and (state / "course" / "lessons_vi").is_dir()


def test_admin_py_goes_where_the_hub_listens():
    import subprocess
    done = subprocess.run([sys.executable, str(HUB / "admin.py"), "list"], capture_output=True, text=True,
                          env=dict(os.environ, JUPYTERHUB_API_TOKEN="t", ATTNLAB_HUB_PORT="9"), timeout=120)
    assert done.returncode == 1 and "port=9" in done.stderr, done.stderr
    assert Layout.from_env({"ATTNLAB_HUB_IP": "0.0.0.0", "ATTNLAB_HUB_PORT": "8443"}).url == \
        "http://127.0.0.1:8443"
    with pytest.raises(ValueError, match="ATTNLAB_HUB_PORT='80a' is not a port number"):
        Layout.from_env({"ATTNLAB_HUB_PORT": "80a"})


def test_every_setting_the_hub_reads_is_documented():
    read = set()
    for f in HUB.glob("*.py"):
        read |= set(re.findall(r"\b(ATTNLAB_[A-Z_]+)\b", f.read_text()))
    docs = (ROOT / "docs" / "hub.md").read_text()
    missing = sorted(v for v in read if f"`{v}`" not in docs)
    assert not missing, f"read by hub/ but not in docs/hub.md: {missing}"


# ---- the service unit and the /etc/jupyterhub layout for a systemd machine

def service_unit():
    unit = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    unit.optionxform = str
    unit.read_string((HUB / "jupyterhub.service").read_text())
    return unit


def env_file():
    lines = (HUB / "etc" / "jupyterhub" / "attnlab-hub.env").read_text().splitlines()
    return dict(ln.split("=", 1) for ln in lines if ln.strip() and not ln.startswith("#"))


def test_the_service_unit_runs_the_etc_config_of_this_checkout():
    unit = service_unit()
    assert {"Unit", "Service", "Install"} <= set(unit.sections())
    service = unit["Service"]
    assert service["User"] == "root" and service["KillMode"] == "process"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    start = shlex.split(service["ExecStart"])
    checkout = pathlib.PurePosixPath(start[0]).parents[2]          # <checkout>/.venv/bin/jupyterhub
    assert start == [f"{checkout}/.venv/bin/jupyterhub", "-f", "/etc/jupyterhub/jupyterhub_config.py"]
    assert shlex.split(service["ExecStartPre"]) == [f"{checkout}/.venv/bin/python",
                                                    f"{checkout}/hub/student_env.py"]
    assert service["EnvironmentFile"] == "/etc/jupyterhub/attnlab-hub.env"
    env = env_file()
    assert service["WorkingDirectory"] == env["ATTNLAB_HUB_STATE"]
    layout = Layout.from_env(env)
    assert (layout.ip, layout.port) == ("127.0.0.1", 8000)
    etc = (HUB / "etc" / "jupyterhub" / "jupyterhub_config.py").read_text()
    calls = [n for n in ast.walk(ast.parse(etc)) if isinstance(n, ast.Call)
             and getattr(n.func, "id", "") == "load_subconfig"]
    assert [c.args[0].value for c in calls] == [f"{checkout}/hub/jupyterhub_config.py"]
    documented = (ROOT / "docs" / "hub.md").read_text()
    for name in ("jupyterhub.service", "etc/jupyterhub", "attnlab-hub.env"):
        assert name in documented, name


def test_the_etc_config_sets_only_real_systemdspawner_settings():
    from systemdspawner import SystemdSpawner
    etc = (HUB / "etc" / "jupyterhub" / "jupyterhub_config.py").read_text()
    settings = {}
    for node in ast.walk(ast.parse(etc)):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute):
            target = node.targets[0]
            if isinstance(target.value, ast.Attribute) and target.value.attr == "SystemdSpawner":
                settings[target.attr] = ast.literal_eval(node.value)
    traits = SystemdSpawner.class_traits(config=True)
    assert settings and not set(settings) - set(traits), set(settings) - set(traits)
    layout = Layout.from_env(env_file())
    assert settings["username_template"] == layout.user_prefix + "{USERNAME}"
    assert settings["readwrite_paths"] == [str(layout.homes) + "/{USERNAME}", str(layout.exchange)]
    assert settings["user_workingdir"] == str(layout.homes) + "/{USERNAME}"
    assert settings["mem_limit"] == env_file()["ATTNLAB_HUB_MEM_LIMIT"]
    assert "systemdspawner.SystemdSpawner" in etc


# ---- the memory limit's pieces that do not need a hub (hub/memory.py, hub/memory_notice.py)

def test_the_memory_controller_is_found_in_v1_and_v2(tmp_path):
    import memory
    (tmp_path / "self").write_text("4:memory:/jobs/42\n0::/jobs/42\n")
    (tmp_path / "v1").write_text("cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n")
    found = memory.find("attnlab-hub-x", mounts=str(tmp_path / "v1"), self_file=str(tmp_path / "self"))
    assert found.version == 1 and found.base == pathlib.Path("/sys/fs/cgroup/memory/jobs/42/attnlab-hub-x")
    v2 = tmp_path / "cg2"
    v2.mkdir()
    (v2 / "cgroup.controllers").write_text("cpu io memory pids\n")
    (tmp_path / "v2").write_text(f"cgroup2 {v2} cgroup2 rw,nosuid 0 0\n")
    found = memory.find("attnlab-hub-x", mounts=str(tmp_path / "v2"), self_file=str(tmp_path / "self"))
    assert found.version == 2 and found.base == v2 / "jobs" / "42" / "attnlab-hub-x"
    (v2 / "cgroup.controllers").write_text("hugetlb\n")
    assert memory.find("x", mounts=str(tmp_path / "v2"), self_file=str(tmp_path / "self")) is None
    assert "offers no memory controller (only: hugetlb)" in memory.unavailable_reason(str(tmp_path / "v2"))
    (tmp_path / "ro").write_text("cgroup /sys/fs/cgroup/memory cgroup ro,nosuid,memory 0 0\n")
    assert memory.find("x", mounts=str(tmp_path / "ro"), self_file=str(tmp_path / "self")) is None
    assert "read-only" in memory.unavailable_reason(str(tmp_path / "ro"))


def test_the_hub_says_which_cgroup_enforces_the_limit(tmp_path, capsys):
    import memory
    found = memory.find("attnlab-hub-jupyterhub-users")
    if found is None:
        with pytest.raises(SystemExit, match="cannot be enforced here"):
            load_hub_config(tmp_path)
        return
    load_hub_config(tmp_path)
    said = capsys.readouterr().err
    assert f"memory limit per student 1.5G, enforced with cgroup v{found.version} ({found.base})" in said, said
    load_hub_config(tmp_path / "none", ATTNLAB_HUB_MEM_LIMIT="0")
    assert "ATTNLAB_HUB_MEM_LIMIT=0: no memory limit per student" in capsys.readouterr().err


def test_the_memory_notice_names_the_limit_in_the_students_language():
    import memory_notice
    one_and_half = str(int(1.5 * 2 ** 30))
    assert "(1.5 GiB)" in memory_notice.notice({"MEM_LIMIT": one_and_half})
    assert "(1,5 GiB)" in memory_notice.notice({"MEM_LIMIT": one_and_half, "ATTNLAB_LOCALE": "vi_VN"})
    assert "（1.5 GiB）" in memory_notice.notice({"MEM_LIMIT": one_and_half, "ATTNLAB_LOCALE": "zh_CN"})
    assert memory_notice.notice({"ATTNLAB_LOCALE": "fr_FR"}).startswith("The kernel was stopped")


def test_students_servers_get_the_courses_jupyterlab_settings(tmp_path, monkeypatch):
    """hub/singleuser.py gives each student's JupyterLab what `make lab` gives: the shortcut overrides
    (the explorer's keys stay in its controls) and the code font with every Vietnamese letter, seeded
    into the student's own settings without overwriting a setting they changed."""
    import importlib.util

    import attnlab_server
    spec = importlib.util.spec_from_file_location("hub_singleuser", HUB / "singleuser.py")
    singleuser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(singleuser)
    user = tmp_path / "user-settings"
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(user))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ATTNLAB_COURSE_URL", raising=False)
    monkeypatch.delenv("ATTNLAB_LOCALE", raising=False)
    course = sorted(p.relative_to(attnlab_server.USER_SETTINGS)
                    for p in attnlab_server.USER_SETTINGS.rglob("*.jupyterlab-settings"))
    assert course, "the course ships user settings (the code font)"
    mine = user / course[0]
    mine.parent.mkdir(parents=True)
    mine.write_text('{"mine": true}', encoding="utf-8")
    started = []
    monkeypatch.setattr(singleuser.os, "execv", lambda exe, argv: started.append(argv))
    singleuser.main(["--SingleUserNotebookApp.default_url=/lab"])
    argv = started[0]
    assert argv[1:4] == ["-m", "jupyterhub.singleuser", "--SingleUserNotebookApp.default_url=/lab"]
    assert f"--LabApp.app_settings_dir={attnlab_server.LAB_SETTINGS_DIR}" in argv
    assert (attnlab_server.LAB_SETTINGS_DIR / "overrides.json").is_file()
    assert mine.read_text(encoding="utf-8") == '{"mine": true}'                  # the student's own stays
    assert all((user / p).is_file() for p in course)                            # the rest is seeded


# ---- nbgrader's exchange: who handed in (hub/check_inbound.py)

def test_check_inbound_names_submissions_sent_under_another_students_name(tmp_path):
    """nbgrader takes the student id a submission claims; the owner of the submission cannot be forged."""
    import pwd
    import subprocess
    import check_inbound
    if os.geteuid() != 0:
        pytest.fail("the exchange's submissions belong to the students who sent them: this test chowns "
                    "files to another user, which needs root")
    nobody = pwd.getpwnam("nobody")
    inbound = tmp_path / "attnlab" / "inbound"
    inbound.mkdir(parents=True)

    def submission(name, owner, inside_owner=None):
        d = inbound / name
        d.mkdir()
        (d / "ps1.ipynb").write_text("{}")
        os.chown(d, owner, owner)
        os.chown(d / "ps1.ipynb", inside_owner if inside_owner is not None else owner, owner)
        return d

    stamp = "ps1+2026-12-01 10:00:00.000000 UTC+"
    submission(f"nobody+{stamp}aaaaaaaaaaaa", nobody.pw_uid)                   # sent by nobody as nobody
    forged = submission(f"root+{stamp}bbbbbbbbbbbb", nobody.pw_uid)           # nobody claims to be root
    planted = submission(f"root+{stamp}cccccccccccc", 0, nobody.pw_uid)       # a file of nobody's inside
    assert check_inbound.mismatched(inbound) == [(forged.name, "root", "nobody"), (planted.name, "root", "nobody")]
    run = lambda: subprocess.run([sys.executable, str(HUB / "check_inbound.py"), "--exchange", str(tmp_path)],
                                 capture_output=True, text=True, timeout=120)
    done = run()
    assert done.returncode == 1 and done.stdout.count("NOT sent by root") == 2 and "1 of 3 submissions" in done.stdout, done
    import shutil
    shutil.rmtree(forged)
    shutil.rmtree(planted)
    done = run()
    assert done.returncode == 0 and "1 of 1 submissions sent by the student they name" in done.stdout, done


# `make test` installs the students' environment's packages while it makes .venv (make -j3 test-envs):
# with make's Python (python3), then finishes it with the venv's (whose base is python3.11).
def test_the_same_python_by_another_name_is_one_students_environment(tmp_path):
    real = pathlib.Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    link = tmp_path / "python3"
    link.symlink_to(real)
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(sys, "_base_executable", str(link), raising=False)
        by_link = student_env.default_python()
        mp.setattr(sys, "_base_executable", str(real), raising=False)
        assert by_link == student_env.default_python() == real.resolve()
    finally:
        mp.undo()


def test_packages_only_leaves_the_course_package_to_the_second_half(tmp_path, monkeypatch):
    """The first half installs the venv and the pinned set and stamps it; the course package (built
    with `build`, from the instructor's venv) and the modules of the hub are left for --env-only."""
    calls = []

    def fake_run(cmd, **kw):
        calls.append([str(c) for c in cmd])
        import subprocess
        if calls[-1][1:3] == ["-m", "venv"]:
            pathlib.Path(calls[-1][3]).mkdir(parents=True)
        out = ""
        if "-c" in calls[-1]:                     # the version, or where the environment's packages go
            out = str(tmp_path / "site") if "purelib" in calls[-1][-1] else "3.11"
            (tmp_path / "site").mkdir(exist_ok=True)
        return subprocess.CompletedProcess(cmd, 0, out, "")

    monkeypatch.setattr(student_env, "run", fake_run)
    monkeypatch.setattr(student_env, "student_python", lambda layout, python: (python, {}))
    monkeypatch.setattr(student_env, "install_course_package",
                        lambda *a: pytest.fail("the course package belongs to the second half"))
    layout = Layout.from_env({"ATTNLAB_HUB_STATE": str(tmp_path / "state"), "ATTNLAB_HUB_ENV": str(tmp_path / "env")})
    python = pathlib.Path(sys.executable)
    student_env._build_env(layout, python, None, packages_only=True)
    pip_installs = [c for c in calls if c[1:4] == ["-m", "pip", "install"]]
    assert any("-r" in c for c in pip_installs), calls                       # the pinned set
    assert student_env.up_to_date(layout.env, "packages", student_env.digest(
        str(python), ROOT / "constraints.txt", HUB / "requirements-student.txt", ROOT / "requirements.txt"))
    assert not (layout.env / "etc" / "jupyter").exists()                     # the second half's
    calls.clear()                                                            # the second half: no pip install -r again
    monkeypatch.setattr(student_env, "install_course_package", lambda *a: calls.append(["course"]))
    monkeypatch.setattr(student_env, "open_to_reading", lambda path: None)
    (layout.env / "lib").mkdir(parents=True, exist_ok=True)
    student_env._build_env(layout, python, None)
    assert ["course"] in calls and not any("-r" in c for c in calls), calls
    assert (layout.env / "etc" / "jupyter" / "nbgrader_config.py").is_file()


# ---- the ports a test hub listens on (hub/classroom.py)

def test_a_hubs_ports_are_its_own_and_never_ones_the_kernel_hands_out(monkeypatch):
    """Three distinct ports below the ephemeral range (where bind(0), e.g. each kernel's five ports,
    never lands). A second hub reserving while the first holds its ports skips them, and skips a
    port something already listens on, even when those are the ones it draws first."""
    import random
    import socket
    import classroom
    low = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ours, locks = classroom.reserve_ports(3)
    busy = socket.socket()
    try:
        assert len(set(ours)) == 3 and all(1024 <= p < low for p in ours), ours
        spare, spare_locks = classroom.reserve_ports(4)
        for lock in spare_locks:
            lock.close()
        busy.bind(("127.0.0.1", spare[0]))
        busy.listen()
        draws = iter([*ours, spare[0], *spare[1:]])       # the held ports and the busy one come first

        class Draws:
            def choice(self, seq):
                return next(draws)
        monkeypatch.setattr(random, "SystemRandom", Draws)
        theirs, their_locks = classroom.reserve_ports(3)
        for lock in their_locks:
            lock.close()
        assert theirs == spare[1:], (ours, spare, theirs)
    finally:
        busy.close()
        for lock in locks:
            lock.close()
