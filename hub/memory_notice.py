"""On the hub: tell the student, in their notebook, that their kernel hit the memory limit.

Installed into the students' environment as the module ``attnlab_hub_notice`` by
hub/student_env.py; the hub's spawner passes
``--ServerApp.kernel_websocket_connection_class=attnlab_hub_notice.MemoryLimitKernelConnection``.

When a student's cgroup (hub/memory.py) runs out of memory the kernel's OOM killer ends their
largest process, the kernel; Jupyter Server restarts it and JupyterLab says only "the kernel
appears to have died". This connection (the course's ``NoDelayKernelConnection`` plus a little)
remembers the last cell run through it; when the kernel restarts and the cgroup's OOM-kill count
went up, it first writes the reason into that cell's output, in the student's language
(``ATTNLAB_LOCALE``), with the limit (``MEM_LIMIT``, set by JupyterHub).
"""
from __future__ import annotations

import json
import os
import pathlib

from attnlab_server import NoDelayKernelConnection
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_msg_to_ws_v1,
)

CLASS = f"{__name__}.MemoryLimitKernelConnection"
V1 = "v1.kernel.websocket.jupyter.org"
MESSAGES = {
    "en": "The kernel was stopped: your server used more memory than its limit ({limit}). "
          "Nobody else's work was affected. The kernel is restarting: run the notebook again "
          "from the top, with less data at once (a smaller batch or a smaller model).",
    "vi": "Kernel đã bị dừng: máy chủ của bạn dùng quá giới hạn bộ nhớ ({limit}). Bài của các "
          "bạn khác không bị ảnh hưởng. Kernel đang khởi động lại: hãy chạy lại notebook từ đầu, "
          "mỗi lần với ít dữ liệu hơn (batch nhỏ hơn hoặc mô hình nhỏ hơn).",
    "zh": "内核已被终止：你的服务器占用的内存超过了上限（{limit}）。其他同学的工作不受影响。"
          "内核正在重新启动：请从头重新运行这个 notebook，并减少一次处理的数据量（更小的批次或更小的模型）。",
}


def oom_kills(self_cgroup: str = "/proc/self/cgroup") -> int:
    """How many times the OOM killer acted in this process's memory cgroup (v1 or v2)."""
    try:
        lines = pathlib.Path(self_cgroup).read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            files = [pathlib.Path("/sys/fs/cgroup/memory") / path.lstrip("/") / "memory.oom_control"]
        elif controllers == "":
            files = [pathlib.Path("/sys/fs/cgroup") / path.lstrip("/") / "memory.events",
                     pathlib.Path("/sys/fs/cgroup/unified") / path.lstrip("/") / "memory.events"]
        else:
            continue
        for f in files:
            try:
                for row in f.read_text().splitlines():
                    if row.startswith("oom_kill "):
                        return int(row.split()[1])
            except OSError:
                continue
    return 0


def limit_text(language: str, limit_bytes: str | None) -> str:
    try:
        gib = int(limit_bytes) / 2 ** 30
    except (TypeError, ValueError):
        return "?"
    text = f"{gib:.1f}".rstrip("0").rstrip(".") + " GiB"
    return text.replace(".", ",") if language == "vi" else text


def notice(environ=os.environ) -> str:
    language = (environ.get("ATTNLAB_LOCALE") or "en")[:2]
    language = language if language in MESSAGES else "en"
    return MESSAGES[language].format(limit=limit_text(language, environ.get("MEM_LIMIT")))


class MemoryLimitKernelConnection(NoDelayKernelConnection):
    """The course's kernel websocket connection; names the memory limit when it killed the kernel."""

    def connect(self):
        self._last_request = None
        self._oom_seen = oom_kills()
        return super().connect()

    def handle_incoming_message(self, incoming_msg):
        try:
            if self.subprotocol == V1:
                _, parts = deserialize_msg_from_ws_v1(incoming_msg)
                header = self.session.unpack(parts[0])
            else:
                header = json.loads(incoming_msg).get("header")
            if header and header.get("msg_type") == "execute_request":
                self._last_request = header
        except Exception:  # never in the way of a message
            pass
        return super().handle_incoming_message(incoming_msg)

    def on_kernel_restarted(self):
        killed = oom_kills()
        if killed > self._oom_seen:
            self._oom_seen = killed
            self.log.warning("kernel %s: killed at the memory limit", self.kernel_id)
            msg = self.session.msg("stream", {"name": "stderr", "text": notice() + "\n"},
                                   parent=self._last_request or {})
            if self.subprotocol == V1:
                self.write_message(serialize_msg_to_ws_v1(msg, "iopub", self.session.pack),
                                   binary=True)
            else:
                msg["channel"] = "iopub"
                self.write_message(json.dumps(msg, default=str))
        return super().on_kernel_restarted()
