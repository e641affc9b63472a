"""An MCP server standing in for ``@modelcontextprotocol/server-github`` in Ailoy's MCP
guides (which ``npx`` downloads and which reads GitHub): the two tools the guides use,
``search_repositories(query)`` and ``get_file_contents(owner, repo, path)``, answered from
a folder of repositories (``<root>/<owner>/<repo>/<files>``) given as the first argument.
Written on the official Python MCP SDK; run as ``python repository_mcp_server.py ROOT``."""

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

root = Path(sys.argv[1]).resolve()
server = MCPServer("github")


@server.tool(structured_output=False)
def search_repositories(query: str) -> str:
    """Search for repositories whose owner/name contains the query."""
    found = [
        f"{owner.name}/{repo.name}"
        for owner in sorted(root.iterdir())
        for repo in sorted(owner.iterdir())
        if query.lower() in f"{owner.name}/{repo.name}".lower()
    ]
    return json.dumps({"total_count": len(found), "items": [{"full_name": f} for f in found]})


@server.tool(structured_output=False)
def get_file_contents(owner: str, repo: str, path: str) -> str:
    """The contents of a file of a repository."""
    base = (root / owner / repo).resolve()
    target = (base / path).resolve()
    if base not in target.parents:
        raise ValueError(f"{path} is outside {owner}/{repo}")
    return target.read_text()


server.run("stdio")
