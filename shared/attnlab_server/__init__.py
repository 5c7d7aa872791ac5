"""attnlab_server: the course's setting for Jupyter Server (JupyterLab, Notebook 7) and Voilà.

Kernel messages reach the browser over a websocket that Jupyter Server leaves with Nagle's
algorithm on (tornado's default). One widget change makes the kernel send several small
messages in a row (status "busy", the echo of the new value, the redrawn widget, status
"idle"); with Nagle's algorithm on, each one after the first waits for the browser's TCP
acknowledgement of the previous one, and Linux delays that acknowledgement by up to 40 ms.
The explorer then answers some changes ~40 ms late (benchmarks/bench_explorer_browser.py
measures both). ``NoDelayKernelConnection`` is Jupyter Server's own kernel connection with
Nagle's algorithm off (TCP_NODELAY) on each kernel websocket; nothing else changes.

It is a configuration class, used by ``make lab`` and ``make voila``::

    jupyter lab --ServerApp.kernel_websocket_connection_class=attnlab_server.NoDelayKernelConnection
    voila --Voila.kernel_websocket_connection_class=attnlab_server.NoDelayKernelConnection ...

A separate package from ``attnlab`` so that the server does not import torch.
"""
from __future__ import annotations

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

CONNECTION_CLASS = f"{__name__}.NoDelayKernelConnection"


class NoDelayKernelConnection(ZMQChannelsWebsocketConnection):
    """Jupyter Server's kernel websocket connection, with TCP_NODELAY on its socket."""

    def connect(self):
        # Called from the handler's open(): the websocket exists, no message has been sent yet.
        self.websocket_handler.set_nodelay(True)
        return super().connect()
