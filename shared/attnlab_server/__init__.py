"""attnlab_server: the course's setting for Jupyter Server (JupyterLab, Notebook 7) and Voilà.

Kernel messages reach the browser over a websocket that Jupyter Server leaves with Nagle's
algorithm on (tornado's default). One widget change makes the kernel send several small
messages in a row (status "busy", the echo of the new value, the redrawn widget, status
"idle"); with Nagle's algorithm on, each one after the first waits for the browser's TCP
acknowledgement of the previous one, and Linux delays that acknowledgement by up to 40 ms.
The explorer then answers some changes ~40 ms late (benchmarks/bench_explorer_browser.py
measures both). ``NoDelayKernelConnection`` is Jupyter Server's own kernel connection with
Nagle's algorithm off (TCP_NODELAY) on each kernel websocket; nothing else changes.

``XsrfCookieIdentityProvider`` (Voilà only) gives each dashboard page the ``_xsrf`` cookie
that Voilà's front end needs to shut its kernel down when the page is closed or reloaded.

It is a configuration class, used by ``make lab`` and ``make voila``::

    jupyter lab --ServerApp.kernel_websocket_connection_class=attnlab_server.NoDelayKernelConnection
    voila --Voila.kernel_websocket_connection_class=attnlab_server.NoDelayKernelConnection ...

``lab_args(user_settings)`` are the options ``make lab`` (and the hub) give JupyterLab, with the
course's settings (written by tools/write_lab_settings.py):

* ``LAB_SETTINGS_DIR/overrides.json`` (``--LabApp.app_settings_dir``): the notebook's single-key
  shortcuts kept out of widgets in cell outputs, so that ↓ changes an explorer dropdown instead of
  moving the active cell;
* ``LAB_SETTINGS_DIR/user/`` copied by ``seed_user_settings`` into the user settings folder where a
  file is missing (``--LabApp.user_settings_dir``; ``make lab``: build/lab/user-settings): a code and
  output font that has every Vietnamese precomposed letter. JupyterLab 4 applies a theme's font
  only from the user's settings, never from overrides.json; a student's own change stays.

A separate package from ``attnlab`` so that the server does not import torch.
"""
from __future__ import annotations

import pathlib

from jupyter_server.auth.identity import PasswordIdentityProvider
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

CONNECTION_CLASS = f"{__name__}.NoDelayKernelConnection"
LAB_SETTINGS_DIR = pathlib.Path(__file__).resolve().parent / "lab_settings"
USER_SETTINGS = LAB_SETTINGS_DIR / "user"


def seed_user_settings(folder) -> list[pathlib.Path]:
    """Copy the course's user settings into JupyterLab's user settings ``folder`` where a file is
    missing (one already there, maybe changed by the student, stays); the files written."""
    written = []
    for source in sorted(p for p in USER_SETTINGS.rglob("*.jupyterlab-settings")):
        target = pathlib.Path(folder) / source.relative_to(USER_SETTINGS)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
            written.append(target)
    return written


def lab_args(user_settings) -> list[str]:
    """JupyterLab's options for the course (besides the kernel connection class); call
    ``seed_user_settings(user_settings)`` first."""
    return [f"--LabApp.app_settings_dir={LAB_SETTINGS_DIR}", f"--LabApp.user_settings_dir={user_settings}"]


class NoDelayKernelConnection(ZMQChannelsWebsocketConnection):
    """Jupyter Server's kernel websocket connection, with TCP_NODELAY on its socket."""

    def connect(self):
        # Called from the handler's open(): the websocket exists, no message has been sent yet.
        self.websocket_handler.set_nodelay(True)
        return super().connect()


# ----------------------------------------------------------------------------- Voilà: no kernel left behind

IDENTITY_PROVIDER_CLASS = f"{__name__}.XsrfCookieIdentityProvider"


class XsrfCookieIdentityProvider(PasswordIdentityProvider):
    """Voilà's identity provider (Jupyter Server's ``PasswordIdentityProvider``, token auth
    unchanged) that also gives each page the ``_xsrf`` cookie.

    On a page's close or reload Voilà's front end posts ``_xsrf`` read from that cookie to
    ``/voila/api/shutdown/<kernel>``, but Voilà 0.5 never sets the cookie (its page is not a
    tornado template): the request got ``403 '_xsrf' argument missing`` and every closed page
    left its kernel (~345 MB) until the idle culler. Touching ``handler.xsrf_token`` on a page
    request sets the cookie (tornado's own XSRF protection, unchanged). Used by
    ``notebooks/voila.json``: ``"Voila": {"identity_provider_class": "attnlab_server.XsrfCookieIdentityProvider"}``.
    """

    def get_user(self, handler):
        user = super().get_user(handler)
        request = handler.request
        if request.method == "GET" and "upgrade" not in request.headers.get("Connection", "").lower():
            handler.current_user = user             # what prepare() sets next; xsrf_token reads it
            handler.xsrf_token                      # sets the cookie if the browser has none
        return user
