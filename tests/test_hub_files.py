"""What can be checked here of the hub's files for Kubernetes and Binder (neither runs here).

hub/z2jh/values.yaml parses and agrees with hub/jupyterhub_config.py (memory limit, culling,
thread and allocator settings, kernel connection); hub/z2jh/Dockerfile installs exactly the pinned
set of constraints.txt with the CPU torch; binder/ does the same; the npm proxy is pinned.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re
import shlex

import pytest
import yaml
from traitlets.config import PyFileConfigLoader

ROOT = pathlib.Path(__file__).resolve().parent.parent
HUB = ROOT / "hub"
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


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    """hub/jupyterhub_config.py as JupyterHub loads it (its state folder in a temporary place)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTNLAB_HUB_STATE", str(tmp_path_factory.mktemp("state")))
    try:
        return PyFileConfigLoader("jupyterhub_config.py", path=str(HUB)).load_config()
    finally:
        mp.undo()


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
    assert values["hub"]["config"]["KubeSpawner"]["args"] == config.Spawner.args[:1]
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
