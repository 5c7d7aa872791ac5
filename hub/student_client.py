"""A simulated student's browser, over HTTP (hub/classroom.py, tests/test_hub*.py, bench_hub.py).

``Student`` signs up or logs in through the hub's own forms (as a browser posts them), starts
their server, reads and saves notebooks through the server's REST API, and runs cells through a
real kernel over the kernel websocket (``Kernel``, Jupyter's JSON message protocol).
"""
from __future__ import annotations

import json
import re
import time
import uuid

import nbformat
import requests
import websocket

_CPU_SECONDS = ("import resource as _r; _u = _r.getrusage(_r.RUSAGE_SELF); "
                "print(_u.ru_utime + _u.ru_stime); del _r, _u")


def wait_for(what: str, check, timeout: float, every: float = 0.5):
    """Call check() until it returns something true; TimeoutError naming ``what`` after timeout."""
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        time.sleep(every)


class Student:
    """One student's browser, reduced to HTTP requests and one kernel websocket at a time."""

    def __init__(self, hub_url: str, name: str, timeout: float = 60):
        self.hub, self.name, self.timeout = hub_url, name, timeout
        self.http = requests.Session()
        self.token = None

    def _form(self, page: str, fields: dict):
        """GET a hub page (for its _xsrf cookie), then POST its form as a browser would."""
        self.http.get(f"{self.hub}/hub/{page}", timeout=self.timeout)
        return self.http.post(f"{self.hub}/hub/{page}", timeout=self.timeout, allow_redirects=False,
                              data={**fields, "_xsrf": self.http.cookies.get("_xsrf")})

    def sign_up(self, password: str) -> str:
        """NativeAuthenticator's sign-up form; returns the page's answer (its alert text)."""
        r = self._form("signup", {"username": self.name, "signup_password": password,
                                  "signup_password_confirmation": password, "email": ""})
        found = re.search(r'<div class="alert[^"]*"[^>]*>(.*?)</div>', r.text, re.S)
        return " ".join(found.group(1).split()) if found else f"HTTP {r.status_code}"

    def approve(self, name: str) -> None:
        """The instructor approves a sign-up (NativeAuthenticator's /hub/authorize page)."""
        listed = self.http.get(f"{self.hub}/hub/authorize", timeout=self.timeout)
        listed.raise_for_status()
        if f"/authorize/{name}" not in listed.text:
            raise RuntimeError(f"{name} has not signed up")
        self.http.get(f"{self.hub}/hub/authorize/{name}", timeout=self.timeout).raise_for_status()

    def login(self, password: str) -> bool:
        """The login form, as a browser posts it; True when the hub let us in."""
        r = self._form("login?next=/hub/home", {"username": self.name, "password": password})
        if r.status_code != 302:
            return False
        # A token for the API calls a browser's JavaScript would make with the cookie.
        r = self.http.post(f"{self.hub}/hub/api/users/{self.name}/tokens", timeout=self.timeout,
                           headers={"X-XSRFToken": self.http.cookies.get("_xsrf")},
                           json={"note": "simulated student", "expires_in": 86400})
        r.raise_for_status()
        self.token = r.json()["token"]
        self.http.headers["Authorization"] = f"token {self.token}"
        return True

    def hub_model(self) -> dict:
        r = self.http.get(f"{self.hub}/hub/api/users/{self.name}", timeout=self.timeout)
        r.raise_for_status()
        return r.json()

    def running(self) -> bool:
        return bool(self.hub_model().get("servers", {}).get("", {}).get("ready"))

    def start_server(self, timeout: float = 300) -> float:
        """Ask for the server and wait until it is ready; returns the seconds it took."""
        t0 = time.monotonic()
        r = self.http.post(f"{self.hub}/hub/api/users/{self.name}/server", timeout=self.timeout)
        if r.status_code not in (201, 202, 400):       # 400: already running
            raise RuntimeError(f"{self.name}: start: HTTP {r.status_code} {r.text[:300]}")
        wait_for(f"{self.name}'s server", self.running, timeout, every=0.5)
        return time.monotonic() - t0

    def stop_server(self, timeout: float = 120) -> None:
        self.http.delete(f"{self.hub}/hub/api/users/{self.name}/server", timeout=self.timeout)
        wait_for(f"{self.name}'s server stopping", lambda: not self.running(), timeout)

    # ---- the student's own server (Jupyter Server's REST API behind the proxy)
    def server(self, method: str, path: str, **kw):
        kw.setdefault("timeout", self.timeout)
        r = self.http.request(method, f"{self.hub}/user/{self.name}/api/{path}", **kw)
        if r.status_code >= 400:
            raise RuntimeError(f"{self.name}: {method} {path}: HTTP {r.status_code} {r.text[:300]}")
        return r.json() if r.content else None

    def read_notebook(self, path: str):
        model = self.server("GET", f"contents/{path}", params={"content": "1"})
        return nbformat.from_dict(model["content"])

    def save_notebook(self, path: str, nb) -> None:
        self.server("PUT", f"contents/{path}", json={"type": "notebook", "format": "json",
                                                      "content": nb})

    def open_kernel(self, path: str) -> "Kernel":
        """A session for the notebook at ``path`` (its kernel works in the notebook's folder)."""
        s = self.server("POST", "sessions", json={"path": path, "type": "notebook", "name": "",
                                                  "kernel": {"name": "python3"}})
        return Kernel(self, s["id"], s["kernel"]["id"])

    def run_notebook(self, path: str, cell_timeout: float = 600, save: bool = True) -> dict:
        """Open, run every code cell top to bottom, save.

        Returns {'seconds', 'cells' (code cells run), 'error' (None or a message), 'notebook',
        'cpu_s' (CPU seconds the kernel used, from its own getrusage; None if it could not say)}."""
        nb = self.read_notebook(path)
        t0 = time.monotonic()
        error, ran, cpu = None, 0, None
        kernel = self.open_kernel(path)
        try:
            for cell in nb.cells:
                if cell.cell_type != "code":
                    continue
                cell.outputs, reply = kernel.execute(cell.source, cell_timeout)
                ran += 1
                if reply.get("status") != "ok":
                    error = f"cell {ran}: {reply.get('ename')}: {reply.get('evalue')}"
                    break
            seconds = time.monotonic() - t0
            outputs, _ = kernel.execute(_CPU_SECONDS, cell_timeout)
            cpu = float(outputs[0]["text"]) if outputs and outputs[0].get("text") else None
        except Exception as err:   # a timeout or a closed websocket: a message, never a hang
            error = error or f"cell {ran + 1}: {type(err).__name__}: {err}"
            seconds = time.monotonic() - t0
        finally:
            kernel.close()
        if save:
            self.save_notebook(path, nb)
        return {"seconds": seconds, "cells": ran, "error": error, "notebook": nb, "cpu_s": cpu}


class Kernel:
    """A kernel websocket (Jupyter's JSON message protocol, one execution at a time)."""

    def __init__(self, student: Student, session_id: str, kernel_id: str):
        self.student, self.session_id, self.kernel_id = student, session_id, kernel_id
        url = student.hub.replace("http", "ws", 1)
        self.ws = websocket.create_connection(
            f"{url}/user/{student.name}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4().hex}",
            header=[f"Authorization: token {student.token}"], timeout=student.timeout)

    def reconnect(self) -> None:
        """A new websocket to the same kernel (an idle one is closed by the server in time)."""
        try:
            self.ws.close()
        finally:
            url = self.student.hub.replace("http", "ws", 1)
            self.ws = websocket.create_connection(
                f"{url}/user/{self.student.name}/api/kernels/{self.kernel_id}/channels"
                f"?session_id={uuid.uuid4().hex}",
                header=[f"Authorization: token {self.student.token}"], timeout=self.student.timeout)

    def execute(self, code: str, timeout: float = 600):
        """Run code; returns (nbformat outputs, execute_reply content)."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.student.name,
                       "session": self.session_id, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
        outputs, reply, idle = [], None, False
        end = time.monotonic() + timeout
        while reply is None or not idle:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from the kernel after {timeout:.0f} s")
            self.ws.settimeout(min(left, 30))
            try:
                msg = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if msg["channel"] == "shell" and kind == "execute_reply":
                reply = msg["content"]
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
            elif kind in ("stream", "display_data", "execute_result", "error"):
                outputs.append(nbformat.v4.output_from_msg(msg))
        return outputs, reply

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.student.server("DELETE", f"sessions/{self.session_id}")
