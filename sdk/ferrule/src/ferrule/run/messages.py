"""Agno's ``agno.run.messages``: `RunMessages`, the messages of one run as a model request is
built from them: all of them (``messages``), and the run's ``system_message``,
``user_message`` and ``extra_messages``, which `get_input_messages` gives in that order (what
a reasoning agent reads, `ferrule.reasoning.manager`)."""

from __future__ import annotations

from typing import Any

import attrs

from ..models.message import Message

__all__ = ["RunMessages"]


@attrs.define
class RunMessages:
    """One run's messages (see the module docstring)."""

    messages: list[Any] = attrs.Factory(list)
    system_message: Message | None = None
    user_message: Message | None = None
    extra_messages: list[Message] | None = None

    def get_input_messages(self) -> list[Message]:
        """The system message, the user message and the extra ones (those set)."""
        out = [m for m in (self.system_message, self.user_message) if m is not None]
        return out + list(self.extra_messages or ())
