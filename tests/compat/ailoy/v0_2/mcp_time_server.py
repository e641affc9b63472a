"""A time MCP server standing in for ``mcp-server-time`` (Ailoy's test starts it with
``uvx``, which needs the internet): ``get_current_time(timezone)`` first, then
``convert_time``, each answering JSON text (no structured content), as that server does.
Written on the official Python MCP SDK and the standard library's time zones."""

import json
from datetime import datetime
from zoneinfo import ZoneInfo

from mcp.server.mcpserver import MCPServer

server = MCPServer("time")


@server.tool(structured_output=False)
def get_current_time(timezone: str) -> str:
    """Get the current time in an IANA time zone (e.g. 'Asia/Seoul')."""
    now = datetime.now(ZoneInfo(timezone))
    return json.dumps({"timezone": timezone, "datetime": now.isoformat(timespec="seconds")})


@server.tool(structured_output=False)
def convert_time(source_timezone: str, time: str, target_timezone: str) -> str:
    """Convert a time (HH:MM, today) from one IANA time zone to another."""
    hour, minute = (int(part) for part in time.split(":"))
    source = datetime.now(ZoneInfo(source_timezone)).replace(
        hour=hour, minute=minute, second=0, microsecond=0
    )
    target = source.astimezone(ZoneInfo(target_timezone))
    return json.dumps({"source": source.isoformat(), "target": target.isoformat()})


server.run("stdio")
