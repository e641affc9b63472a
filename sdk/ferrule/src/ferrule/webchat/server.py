"""Serving the web chat: the Gradio page behind `AccessGate`, on uvicorn.

Nothing here configures logging (uvicorn gets ``log_config=None``) or reaches beyond the
machine: Gradio's analytics are off and the theme uses the system's fonts, not Google's.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .access import AccessGate

if TYPE_CHECKING:
    import uvicorn

    from .app import WebChat


def create_app(
    chat: WebChat,
    *,
    token: str | None,
    bound_host: str | None,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
) -> AccessGate:
    """The chat's ASGI app: ``chat``'s page, every request checked by `AccessGate`, uploads
    bounded by ``chat.max_file_size``."""
    import gradio as gr
    from fastapi import FastAPI

    system_fonts = ["ui-sans-serif", "system-ui", "sans-serif"]
    theme = gr.themes.Default(font=system_fonts, font_mono=["ui-monospace", "monospace"])
    inner = gr.mount_gradio_app(
        FastAPI(openapi_url=None, docs_url=None, redoc_url=None),
        chat.blocks(),
        path="",
        footer_links=[],
        ssr_mode=False,
        theme=theme,
        mcp_server=False,
        pwa=False,
        max_file_size=chat.max_file_size,
    )
    return AccessGate(
        inner,
        token,
        bound_host=bound_host,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def url_of(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class WebChatServer:
    """The app on uvicorn, bound now (``port`` 0: a free one, then in `port`); `run` serves
    in this thread until `stop`, `start` in a daemon thread."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        import uvicorn

        self.host = host
        self._socket = _listen(host, port)
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
        self._server: uvicorn.Server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return url_of(self.host, self.port)

    def run(self, ready: Callable[[], None] | None = None) -> None:
        if ready is not None:
            threading.Thread(target=self._when_started, args=(ready,), daemon=True).start()
        self._server.run(sockets=[self._socket])

    def _when_started(self, ready: Callable[[], None]) -> None:
        while not self._server.started and not self._server.should_exit:
            threading.Event().wait(0.05)
        if self._server.started:
            ready()

    def start(self) -> None:
        started = threading.Event()
        self._thread = threading.Thread(target=self.run, args=(started.set,), daemon=True)
        self._thread.start()
        if not started.wait(60):
            raise RuntimeError("the web chat did not start within 60 s")

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self._socket.close()
