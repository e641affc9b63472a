"""``ferrule chat --web``: the chat in a browser (the optional extra ``ferrule[web]``,
Gradio). docs/webchat.md shows it.

- `WebChat` (``app``): the page and what it does: streamed replies with one box per
  response type, attachments, the model picker, the stop button, sessions.
- `AccessGate` (``access``): the token, ``Host`` and ``Origin`` checks of `ferrule serve`,
  for a browser.
- `create_app`, `WebChatServer` (``server``): the ASGI app, and uvicorn serving it.

Importing this package imports Gradio, which is heavy: only ``ferrule chat --web`` and
code that asks for it do; ``import ferrule`` and a plain ``ferrule chat`` never do.
"""

from __future__ import annotations

from .access import AccessGate
from .app import WebChat, attachment_part
from .server import WebChatServer, create_app

__all__ = ["AccessGate", "WebChat", "WebChatServer", "attachment_part", "create_app"]
