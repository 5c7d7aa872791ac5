"""attnlab_server: the kernel websocket connection the course's launchers use (TCP_NODELAY).

The latency it removes (Nagle's algorithm + delayed ACKs: ~40 ms on some widget updates) is
measured by benchmarks/bench_explorer_browser.py --connection course,stock, not asserted here.
"""
import importlib
import json
import pathlib
import re

import pytest

pytest.importorskip("jupyter_server")

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection  # noqa: E402
from jupyter_server.services.kernels.websocket import KernelWebsocketHandler  # noqa: E402

import attnlab_server  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_connection_turns_nagle_off_before_the_kernel_is_connected(monkeypatch):
    calls = []
    handler = KernelWebsocketHandler.__new__(KernelWebsocketHandler)      # no request needed for this
    handler.set_nodelay = lambda value: calls.append(("set_nodelay", value))
    monkeypatch.setattr(ZMQChannelsWebsocketConnection, "connect",
                        lambda self: calls.append(("connect", self.websocket_handler is handler)) or "future")
    connection = attnlab_server.NoDelayKernelConnection(websocket_handler=handler)
    assert connection.connect() == "future"                 # what Jupyter Server's connect returns, unchanged
    assert calls == [("set_nodelay", True), ("connect", True)]


def test_the_class_name_in_the_settings_imports_to_the_class():
    module, name = attnlab_server.CONNECTION_CLASS.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    assert cls is attnlab_server.NoDelayKernelConnection and issubclass(cls, ZMQChannelsWebsocketConnection)


@pytest.mark.slow                      # a fresh Python process (torch's import): left out of make test-fast
def test_the_server_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, attnlab_server; print('torch' in sys.modules, 'attnlab' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_the_course_launchers_use_it():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lab = re.search(r"^lab:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)          # the recipe's lines
    assert "--ServerApp.kernel_websocket_connection_class=$(SERVER_CONNECTION)" in lab
    assert f"SERVER_CONNECTION := {attnlab_server.CONNECTION_CLASS}" in makefile
    voila = json.loads((ROOT / "notebooks" / "voila.json").read_text(encoding="utf-8"))
    assert voila["Voila"]["kernel_websocket_connection_class"] == attnlab_server.CONNECTION_CLASS
    assert re.search(r"^voila:.*\n\t.*--Voila.config_file_paths=notebooks", makefile, re.M)


def test_voila_config_names_the_identity_provider_that_sets_the_xsrf_cookie():
    config = json.loads((ROOT / "notebooks" / "voila.json").read_text(encoding="utf-8"))
    name = config["Voila"]["identity_provider_class"]
    assert name == attnlab_server.IDENTITY_PROVIDER_CLASS
    module, cls = name.rsplit(".", 1)
    from jupyter_server.auth.identity import PasswordIdentityProvider

    assert issubclass(getattr(importlib.import_module(module), cls), PasswordIdentityProvider)
