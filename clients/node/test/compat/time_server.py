"""A time MCP server for the Node compat tests (Ailoy's test starts `uvx mcp-server-time`,
which needs the internet): a get_current_time tool of the same name, on the official
Python MCP SDK and the standard library's time zones."""

from datetime import datetime
from zoneinfo import ZoneInfo

from mcp.server.mcpserver import MCPServer

server = MCPServer("time")


@server.tool()
def get_current_time(timezone: str) -> dict[str, str]:
    """The current time in an IANA time zone (e.g. 'Asia/Seoul')."""
    now = datetime.now(ZoneInfo(timezone))
    return {"timezone": timezone, "datetime": now.isoformat(timespec="seconds")}


server.run("stdio")
