"""JupyterHub for the course on one machine (``make hub``; docs/hub.md).

The hub runs as root; each student's server runs as the student's own system user
(``jupyter-NAME``, created when the instructor adds them: hub/accounts.py), in a memory cgroup
of their own (hub/memory.py, hub/spawner.py), from a root-owned, read-only environment
(hub/student_env.py). The hub's database, cookie secret and passwords are in a folder only root
can read. Students sign up and the instructor approves them (NativeAuthenticator); a workshop can
use one class password instead (``ATTNLAB_HUB_AUTH=class-password``). Everything is set by
environment variables (docs/hub.md lists them), so that the tests and the benchmark run this very
file; where everything lives: hub/layout.py.
"""
import os
import pathlib
import secrets
import sys

HUB_DIR = pathlib.Path(__file__).resolve().parent
ROOT = HUB_DIR.parent
sys.path.insert(0, str(HUB_DIR))
import accounts  # noqa: E402
import memory  # noqa: E402
import student_env  # noqa: E402
from layout import Layout  # noqa: E402
from spawner import CourseSpawner  # noqa: E402

env = os.environ.get
L = Layout.from_env()


def refuse(message):
    """Stop the hub before it starts (SystemExit: traitlets would log an Exception and go on)."""
    raise SystemExit(f"[attnlab hub] not started: {message}")


if os.geteuid() != 0:
    refuse("the hub starts each student's server as that student's own system user, so it must "
           "run as root (sudo make hub, or the systemd unit hub/jupyterhub.service)")
if not (L.env / "bin" / "python").exists():
    refuse(f"no students' environment in {L.env}: run `python hub/student_env.py` (make hub does)")
for private in (ROOT / "solutions", L.private):
    if private.exists() and private.stat().st_mode & 0o077:
        refuse(f"{private} is open to other users: run `python hub/student_env.py`, which closes it")
L.private.mkdir(mode=0o700, parents=True, exist_ok=True)


def _secret(name, length):
    """An environment value, or a random one kept in the hub's private folder (root, mode 600)."""
    if env(name):
        return env(name)
    path = L.private / name.lower()
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(length), encoding="utf-8")
        print(f"[attnlab hub] {name}: a new one in {path}", file=sys.stderr)
    return path.read_text(encoding="utf-8").strip()


# ---- network: the public proxy on ATTNLAB_HUB_IP:ATTNLAB_HUB_PORT, everything else loopback
c.JupyterHub.bind_url = f"http://{L.ip}:{L.port}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{L.hub_api_port}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{L.proxy_api_port}"
c.ConfigurableHTTPProxy.command = [str(HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(L.private / "jupyterhub-proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{L.private / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(L.private / "jupyterhub_cookie_secret")
# A restart of the hub (a new setting, an update) leaves every student's server and kernel running;
# the hub finds them again. `hub/admin.py stop-all` stops them when that is what is wanted.
c.JupyterHub.cleanup_servers = False

# ---- who may log in: the instructor (admin) and the students
ADMINS = set(filter(None, env("ATTNLAB_HUB_ADMINS", "instructor").split(",")))
c.Authenticator.admin_users = ADMINS
AUTH = env("ATTNLAB_HUB_AUTH", "sign-up")
if AUTH == "sign-up":
    c.JupyterHub.authenticator_class = accounts.CourseSignUpAuthenticator
    c.CourseSignUpAuthenticator.admin_password = _secret("ATTNLAB_HUB_ADMIN_PASSWORD", 32)
    c.NativeAuthenticator.open_signup = False           # the instructor approves on /hub/authorize
    c.NativeAuthenticator.minimum_password_length = 8
    c.NativeAuthenticator.check_common_password = True
    c.NativeAuthenticator.allowed_failed_logins = 10     # then 60 s before the next try
    c.NativeAuthenticator.seconds_before_next_try = 60
    c.Authenticator.allow_all = True                     # every approved sign-up
elif AUTH == "class-password":
    c.JupyterHub.authenticator_class = accounts.CourseClassPasswordAuthenticator
    c.SharedPasswordAuthenticator.user_password = _secret("ATTNLAB_HUB_PASSWORD", 9)
    c.SharedPasswordAuthenticator.admin_password = _secret("ATTNLAB_HUB_ADMIN_PASSWORD", 32)
    c.Authenticator.allow_all = False
    c.Authenticator.allow_existing_users = True          # the users the instructor added
else:
    refuse(f"ATTNLAB_HUB_AUTH={AUTH!r}: use sign-up (the default) or class-password")
c.CourseAccounts.user_prefix = L.user_prefix
c.CourseAccounts.user_group = L.group
c.CourseAccounts.homes = str(L.homes)

# ---- each student's server: their system user, their memory limit, the read-only environment
c.JupyterHub.spawner_class = CourseSpawner
c.CourseSpawner.user_prefix = L.user_prefix
c.CourseSpawner.user_group = L.group
c.Spawner.cmd = [str(L.env / "bin" / "python"), "-m", "attnlab_hub_singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.args = ["--ServerApp.kernel_websocket_connection_class="
                  "attnlab_hub_notice.MemoryLimitKernelConnection"]
c.Spawner.start_timeout = int(env("ATTNLAB_HUB_START_TIMEOUT", "300"))  # a class logging in at once
c.Spawner.http_timeout = int(env("ATTNLAB_HUB_START_TIMEOUT", "300"))
MEM_LIMIT = env("ATTNLAB_HUB_MEM_LIMIT", "1.5G")     # measured per student: docs/hub.md
c.Spawner.mem_limit = None if MEM_LIMIT in ("0", "none") else MEM_LIMIT
if c.Spawner.mem_limit:
    c.CourseSpawner.cgroups = memory.find(f"attnlab-hub-{L.group}")
    if c.CourseSpawner.cgroups is None:
        refuse(f"ATTNLAB_HUB_MEM_LIMIT={MEM_LIMIT} cannot be enforced here: "
               f"{memory.unavailable_reason()}. Use SystemdSpawner where systemd runs (docs/hub.md), "
               "or ATTNLAB_HUB_MEM_LIMIT=0 to run without a limit.")
    print(f"[attnlab hub] memory limit per student {MEM_LIMIT}, enforced with cgroup "
          f"v{c.CourseSpawner.cgroups.version} ({c.CourseSpawner.cgroups.base})", file=sys.stderr)
else:
    print("[attnlab hub] ATTNLAB_HUB_MEM_LIMIT=0: no memory limit per student", file=sys.stderr)

# The culler stops servers idle for CULL_TIMEOUT; activity must reach the hub well within it, or
# students who are working get stopped (a 60 s timeout with the 300 s default interval did).
CULL_TIMEOUT = int(env("ATTNLAB_CULL_TIMEOUT", "3600"))
ACTIVITY = int(env("ATTNLAB_HUB_ACTIVITY_INTERVAL") or max(5, min(300, CULL_TIMEOUT // 4)))
if ACTIVITY * 2 > CULL_TIMEOUT:
    refuse(f"ATTNLAB_HUB_ACTIVITY_INTERVAL={ACTIVITY} is more than half of ATTNLAB_CULL_TIMEOUT="
           f"{CULL_TIMEOUT}: working students would be culled. Leave the interval unset "
           f"(it is then {max(5, min(300, CULL_TIMEOUT // 4))} s) or make it at most {CULL_TIMEOUT // 2}.")
c.JupyterHub.last_activity_interval = ACTIVITY
c.Spawner.env_keep = ["LANG", "LC_ALL"]         # nothing else of the hub's (root's) environment
c.Spawner.environment = {
    **student_env.server_environment(L),
    "OMP_NUM_THREADS": "1",     # torch in every kernel: one thread each, the students share cores
    "MKL_NUM_THREADS": "1",
    "MALLOC_ARENA_MAX": "2",    # glibc: fewer malloc arenas per process, less idle memory
    "JUPYTERHUB_ACTIVITY_INTERVAL": str(ACTIVITY),
    "ATTNLAB_COURSE_URL": env("ATTNLAB_COURSE_URL", f"file://{L.course}"),
    "ATTNLAB_COURSE_DIR": "attnlab-course",
    "ATTNLAB_EXCHANGE": str(L.exchange),        # nbgrader's exchange (hub/nbgrader_config.py)
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

# ---- idle servers are stopped (jupyterhub-idle-culler), so closed tabs free their memory.
# The culler runs as root, like the hub: its token is in no process a student can read.
c.JupyterHub.load_roles = [
    {"name": "idle-culler", "services": ["idle-culler"],
     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]},
]
c.JupyterHub.services = [
    {"name": "idle-culler",
     "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={CULL_TIMEOUT}",
                 f"--cull-every={env('ATTNLAB_CULL_EVERY', '300')}"]},
]
# A token with the instructor's rights for scripts (tests, benchmarks/bench_hub.py); instructors
# can use their own token from /hub/token with hub/admin.py instead.
if env("ATTNLAB_HUB_ADMIN_TOKEN"):
    c.JupyterHub.services.append({"name": "course-admin", "api_token": env("ATTNLAB_HUB_ADMIN_TOKEN")})
    c.JupyterHub.load_roles.append({"name": "admin", "services": ["course-admin"]})
