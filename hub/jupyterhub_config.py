"""JupyterHub for the course on one machine (``make hub``; docs/hub.md).

As shipped it is the trial setup that ``make hub`` and tests/test_hub.py run: loopback only,
one shared class password (SharedPasswordAuthenticator), every student a process of the user
that started the hub (SimpleLocalProcessSpawner, homes under hub/.state/home). docs/hub.md
says what a real server changes: the authenticator, system users with SystemdSpawner (memory
and CPU limits), HTTPS in front. Settings come from environment variables (ATTNLAB_HUB_*), so
that the test and the benchmark run this very file.
"""
import os
import pathlib
import secrets
import sys

HUB_DIR = pathlib.Path(__file__).resolve().parent
ROOT = HUB_DIR.parent
STATE = pathlib.Path(os.environ.get("ATTNLAB_HUB_STATE", HUB_DIR / ".state")).resolve()
STATE.mkdir(parents=True, exist_ok=True)
env = os.environ.get


def _secret(name, length):
    """An environment value, or a random one kept in the state folder (mode 600)."""
    if env(name):
        return env(name)
    path = STATE / name.lower()
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(length), encoding="utf-8")
        print(f"[attnlab hub] {name}: a new one in {path}", file=sys.stderr)
    return path.read_text(encoding="utf-8").strip()


# ---- network: the public proxy on ATTNLAB_HUB_IP:ATTNLAB_HUB_PORT, everything else loopback
c.JupyterHub.bind_url = f"http://{env('ATTNLAB_HUB_IP', '127.0.0.1')}:{env('ATTNLAB_HUB_PORT', '8000')}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{env('ATTNLAB_HUB_API_PORT', '8081')}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env('ATTNLAB_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [str(HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True          # stopping the hub stops every student's server

# ---- who may log in: the instructor (admin) and the students the instructor added
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = _secret("ATTNLAB_HUB_PASSWORD", 9)
c.SharedPasswordAuthenticator.admin_password = _secret("ATTNLAB_HUB_ADMIN_PASSWORD", 32)
c.Authenticator.admin_users = set(filter(None, env("ATTNLAB_HUB_ADMINS", "instructor").split(",")))
c.Authenticator.allow_all = False
c.Authenticator.allow_existing_users = True  # students added in /hub/admin or by hub/admin.py

# ---- each student's server: the course's environment, its kernel connection, its course copy
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
c.Spawner.cmd = [sys.executable, str(HUB_DIR / "singleuser.py")]
c.Spawner.default_url = "/lab"
c.Spawner.args = ["--ServerApp.kernel_websocket_connection_class="
                  "attnlab_server.NoDelayKernelConnection"]
if os.geteuid() == 0:  # the trial spawner runs every student as the hub's user: root on CI
    c.Spawner.args.append("--ServerApp.allow_root=True")
c.Spawner.start_timeout = int(env("ATTNLAB_HUB_START_TIMEOUT", "300"))  # a class logging in at once
c.Spawner.http_timeout = int(env("ATTNLAB_HUB_START_TIMEOUT", "300"))
# Measured per student (docs/hub.md); enforced by SystemdSpawner or Kubernetes, not by this spawner.
c.Spawner.mem_limit = env("ATTNLAB_HUB_MEM_LIMIT", "1.5G")
ACTIVITY = env("ATTNLAB_HUB_ACTIVITY_INTERVAL", "300")
c.JupyterHub.last_activity_interval = int(ACTIVITY)
c.Spawner.environment = {
    "OMP_NUM_THREADS": "1",     # torch in every kernel: one thread each, the students share cores
    "MKL_NUM_THREADS": "1",
    "MALLOC_ARENA_MAX": "2",    # glibc: fewer malloc arenas per process, less idle memory
    "JUPYTERHUB_ACTIVITY_INTERVAL": ACTIVITY,
    "ATTNLAB_COURSE_URL": env("ATTNLAB_COURSE_URL", f"file://{STATE / 'course'}"),
    "ATTNLAB_COURSE_DIR": "attnlab-course",
}
# The student's language: the hub group "course-vi" or "course-zh" (hub/admin.py --group).
GROUP_LOCALES = {"course-vi": "vi_VN", "course-zh": "zh_CN"}
LESSONS = {"vi_VN": "lessons_vi", "zh_CN": "lessons_zh"}


def course_language(spawner):
    """pre_spawn_hook: the student's JupyterLab language and first page, from their group."""
    groups = sorted(g.name for g in spawner.user.groups if g.name in GROUP_LOCALES)
    if groups:
        locale = GROUP_LOCALES[groups[0]]
        spawner.environment = dict(spawner.environment, ATTNLAB_LOCALE=locale)
        spawner.default_url = f"/lab/tree/attnlab-course/{LESSONS[locale]}/README.md"


c.Spawner.pre_spawn_hook = course_language

# ---- idle servers are stopped (jupyterhub-idle-culler), so closed tabs free their memory
c.JupyterHub.load_roles = [
    {"name": "idle-culler", "services": ["idle-culler"],
     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]},
]
c.JupyterHub.services = [
    {"name": "idle-culler",
     "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                 f"--timeout={env('ATTNLAB_CULL_TIMEOUT', '3600')}",
                 f"--cull-every={env('ATTNLAB_CULL_EVERY', '300')}"]},
]
# A token with the instructor's rights for scripts (tests, benchmarks/bench_hub.py); instructors
# can use their own token from /hub/token with hub/admin.py instead.
if env("ATTNLAB_HUB_ADMIN_TOKEN"):
    c.JupyterHub.services.append({"name": "course-admin", "api_token": env("ATTNLAB_HUB_ADMIN_TOKEN")})
    c.JupyterHub.load_roles.append({"name": "admin", "services": ["course-admin"]})

# ---- nbgrader (tools/assignments) adds its settings here when it is set up
if (HUB_DIR / "nbgrader_config.py").exists():
    load_subconfig(str(HUB_DIR / "nbgrader_config.py"))  # noqa: F821 (JupyterHub's config loader)
