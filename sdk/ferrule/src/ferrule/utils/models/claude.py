"""Agno's ``agno.utils.models.claude``: `MCPServerConfiguration`, an MCP server described as
Anthropic's MCP connector takes it: its ``type`` (``"url"``), ``url``, ``name``, the tools
it offers (``tool_configuration``) and its ``authorization_token``. ferrule's ``Claude``
refuses ``mcp_servers`` (the agent connects to MCP servers itself, ``ferrule.mcp``); the
description's `to_dict` is Anthropic's shape, for a program sending it on its own."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["MCPServerConfiguration"]


@attrs.define
class MCPServerConfiguration:
    """One MCP server for Claude (see the module docstring)."""

    type: str
    url: str
    name: str
    tool_configuration: dict[str, Any] | None = None
    authorization_token: str | None = attrs.field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Anthropic's shape of the server (unset fields left out)."""
        out: dict[str, Any] = {"type": self.type, "url": self.url, "name": self.name}
        if self.tool_configuration is not None:
            out["tool_configuration"] = self.tool_configuration
        if self.authorization_token is not None:
            out["authorization_token"] = self.authorization_token
        return out
