"""What student A tries against student B and the hub, from A's own kernel (tests/test_hub_security.py).

``kernel_attacks(targets)`` is Python source for A's kernel: it runs every attack and prints one
JSON object ``{attack: "blocked: ..." | "SUCCEEDED: ..."}``. Each attack does the real thing
(reads the file, sends the request); nothing is inferred from modes or settings. The same source
ran against the configuration before issue 30: 16 of its 20 attacks succeeded there, the four
HTTP ones held before too (docs/hub.md, docs/hub-figures/2026-12-01-attacks-before.json).

``targets`` (JSON-able): b_name, b_home, b_file (a file in B's home), secrets (paths of the hub's
database, cookie secret, passwords), hub_api (http://127.0.0.1:PORT/hub/api), proxy_api
(http://127.0.0.1:PORT/api), solutions (the checkout's solutions/), course_git (the published
course's .git), hub_config (hub/jupyterhub_config.py), b_server_pid (B's server process).
"""
from __future__ import annotations

import json

_ATTACKS = r'''
import concurrent.futures, http.client as http_client, json, os, re, socket, sqlite3, urllib.request, urllib.error

T = json.loads(TARGETS)
out = {}
mine = os.environ.get("JUPYTERHUB_API_TOKEN")      # A's own server's token (acts for A only)

def outcome(name, fn):
    try:
        got = fn()
        out[name] = "SUCCEEDED: " + str(got)[:200]
    except (OSError, sqlite3.Error, urllib.error.URLError, ValueError, RuntimeError) as err:
        out[name] = "blocked: " + f"{type(err).__name__}: {err}"[:200]

def http(method, url, token=None, body=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "token " + token
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read(2000).decode(errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, ""

def must(status, text, ok=(200, 201, 202, 204)):
    if status not in ok:
        raise RuntimeError(f"HTTP {status}")
    return f"HTTP {status} {text[:80]}"

# ---- B's home
outcome("read B's notebook", lambda: len(open(T["b_file"], "rb").read()))
outcome("list B's home", lambda: os.listdir(T["b_home"]))
def write_b():
    p = os.path.join(T["b_home"], "written_by_A.txt")
    with open(p, "w") as f:
        f.write("A was here\n")
    os.remove(p)
    return p
outcome("write into B's home", write_b)

# ---- the hub's secrets and database
for path in T["secrets"]:
    outcome("read " + os.path.basename(path), lambda path=path: len(open(path, "rb").read()))
def read_db():
    db = [p for p in T["secrets"] if p.endswith(".sqlite")][0]
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    return con.execute("select name, admin from users").fetchall()
outcome("query the hub database", read_db)

# ---- B's server through the hub's API, the proxy's API, the back door
outcome("stop B's server (hub API, A's token)",
        lambda: must(*http("DELETE", T["hub_api"] + f"/users/{T['b_name']}/server", mine)))
outcome("reroute /user/B (proxy API, no token)",
        lambda: must(*http("POST", T["proxy_api"] + f"/routes/user/{T['b_name']}", None,
                           {"target": "http://127.0.0.1:9"})))
def listening_ports():
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            if state == "0A":
                ports.add(int(local.rsplit(":", 1)[1], 16))
    return sorted(ports)
def serves_b(port):
    try:
        status, text = http("GET", f"http://127.0.0.1:{port}/user/{T['b_name']}/api/contents", mine)
    except (OSError, http_client.HTTPException):   # not an HTTP server (a ZMQ port, ...)
        return False
    return status == 200 and '"content"' in text
def back_door():
    ports = listening_ports()
    # Every port at once: a port that accepts but never answers HTTP (some do, each until the
    # 20-s timeout) would otherwise hold up the scan; each port still gets the whole timeout.
    with concurrent.futures.ThreadPoolExecutor(max(1, len(ports))) as pool:
        got = [port for port, yes in zip(ports, pool.map(serves_b, ports)) if yes]
    if not got:
        raise RuntimeError(f"none of {len(ports)} listening ports served B's files to A's token")
    return got
outcome("B's files straight from B's server port (A's token)", back_door)
def signal_b():
    os.kill(T["b_server_pid"], 0)      # signal 0: only asks whether A may signal B's server
    return f"may signal pid {T['b_server_pid']}"
outcome("signal B's server process", signal_b)

# ---- what every student shares: the course package, the course repository, solutions, config
def write_into(folder):
    p = os.path.join(folder, "written_by_A.py")
    with open(p, "w") as f:
        f.write("# A was here\n")
    os.remove(p)
    return p
import attnlab
outcome("write into the attnlab package", lambda: write_into(os.path.dirname(attnlab.__file__)))
outcome("write into the course repository", lambda: write_into(os.path.join(T["course_git"], "objects")))
def read_solutions():
    names = sorted(os.listdir(T["solutions"]))
    files = [os.path.join(T["solutions"], n) for n in names
             if os.path.isfile(os.path.join(T["solutions"], n))]
    return f"{len(names)} names, first file {len(open(files[0], 'rb').read())} bytes"
outcome("read solutions/", read_solutions)
outcome("write into solutions/", lambda: write_into(T["solutions"]))
def append_config():
    with open(T["hub_config"], "a"):
        pass                         # opened for writing; nothing written
    return T["hub_config"]
outcome("open the hub's config for writing", append_config)
# ---- last: a token that works stops B's server (what the culler's did before)
# tokens in any process A can read (/proc/PID/environ and cmdline)
tokens = set()
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"):
        try:
            raw = open(f"/proc/{pid}/{part}", "rb").read().decode(errors="replace")
        except OSError:
            continue
        for item in raw.split("\0"):
            key, _, value = item.partition("=")
            if part == "environ" and re.search("TOKEN|SECRET|PASSWORD|KEY", key) and len(value) >= 8:
                tokens.add(value)
            tokens.update(re.findall(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])", item))
others = sorted(t for t in tokens if t != mine)
out["tokens found besides A's own"] = str(len(others))

def use_tokens(candidates):
    done = []
    for tok in candidates:
        status, text = http("GET", T["hub_api"] + "/users", tok)
        if status == 200 and T["b_name"] in text:
            done.append("listed every user")
        status, _ = http("DELETE", T["hub_api"] + f"/users/{T['b_name']}/server", tok)
        if status in (202, 204):
            done.append("stopped B's server")
        status, _ = http("GET", T["proxy_api"] + "/routes", tok)
        if status == 200:
            done.append("read the proxy's routes")
        status, _ = http("POST", T["proxy_api"] + "/routes/attnlab-attack", tok, {"target": "http://127.0.0.1:9"})
        if status == 201:
            done.append("added a proxy route")
            http("DELETE", T["proxy_api"] + "/routes/attnlab-attack", tok)
    if not done:
        raise RuntimeError(f"none of {len(candidates)} tokens was accepted for anyone else")
    return sorted(set(done))
outcome("use a token found in /proc", lambda: use_tokens(others))
outcome("use A's own token for B or the proxy", lambda: use_tokens([mine] if mine else []))

print(json.dumps(out))
'''


def kernel_attacks(targets: dict) -> str:
    """The attacks as source for A's kernel (prints one JSON line)."""
    return f"TARGETS = {json.dumps(json.dumps(targets))}\n" + _ATTACKS


def results(outputs) -> dict:
    """The JSON the attack cell printed, from its nbformat outputs."""
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    line = [ln for ln in text.splitlines() if ln.startswith("{")]
    if not line:
        raise AssertionError(f"the attack cell printed no result: {outputs}")
    return json.loads(line[-1])
