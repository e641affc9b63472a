"""A filesystem MCP server for the Node compat tests (Ailoy's test starts
@modelcontextprotocol/server-filesystem with npx, which needs the internet): the same tool
names, on the official Python MCP SDK, kept to the one root directory it is given."""

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

root = Path(sys.argv[1]).resolve()
server = MCPServer("filesystem")


def inside(path: str) -> Path:
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise ValueError(f"{path} is outside {root}")
    return target


@server.tool()
def list_directory(path: str) -> str:
    """List the entries of a directory."""
    return "\n".join(sorted(p.name for p in inside(path).iterdir()))


@server.tool()
def read_file(path: str) -> str:
    """Read a text file."""
    return inside(path).read_text()


@server.tool()
def write_file(path: str, content: str) -> str:
    """Create or overwrite a text file."""
    inside(path).write_text(content)
    return f"wrote {path}"


server.run("stdio")
