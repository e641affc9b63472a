"""Tools an `Agent` lets its model call.

Every kind of tool becomes one `Tool`: a name, a description, a JSON schema of its
arguments and an async handler. Build them from

- a Python function, sync or async (`Tool.from_function`, or just pass the function;
  the `tool` decorator sets options): the schema comes from its type hints (``Literal``,
  ``Optional``, lists, nested attrs classes, via `ferrule_kernel.json_schema`) and the
  parameter descriptions from its docstring (Google, NumPy or reST style);
- a JSON schema and a callable (`Tool.from_schema`);
- a REST endpoint (`Tool.rest_api`: URL template, method, headers, bearer token);
- an operator of the runtime (`Tool.from_operator`), as the presets `calculator` and
  `http_request` are (pass the preset's name as a tool);
- an MCP server (`ferrule.mcp.MCPServer`), which gives a whole set of tools, or an open
  connection to one (`ferrule.mcp.MCPClient`, Ailoy 0.2's);
- a builtin (`Tool.new_builtin`: ``terminal``, ``web_search_duckduckgo``, ``web_fetch``,
  ``calculator``, over the tool plugins' operators; `builtins`);
- a toolkit: your own functions grouped as a `Toolkit` (Agno's), `ReasoningTools`
  (`ferrule.tools.reasoning`: think / analyze), `ferrule.tools.duckduckgo.DuckDuckGoTools`
  (web search, ferrule-duckduckgo).

Any tool can also be called directly: ``await tool(**arguments)`` / ``tool.call(...)`` /
``tool.call_sync(...)`` (Ailoy 0.2's; a `FunctionTool` is called as its function instead).

A handler's result is sent to the model as JSON text. A handler that raises, runs past
its ``timeout`` or returns something that is not JSON-serialisable gives the model an
error result instead (`ToolError`); the agent's run goes on. (A sync function past its
timeout cannot be stopped: it finishes in its worker thread and its result is dropped.)
A handler that raises `ModelRetry` sends its message to the model as the result, to try
again, at most ``Tool.retries`` times a run.

Where things are: `tool` (`Tool`, its builders, the `tool` decorator), `function_schema`
(a function's schema and handler), `docstrings`, `rest` (a REST tool's call), `presets`,
`builtins` (Ailoy 0.2's builtin tools), `restapi` (Ailoy 0.1's REST API definitions and
their authenticators),
`toolsets` (`as_tools`, `Toolset`), `provider_tools` (`ProviderTool`, a provider's own tool
given as its declaration), `toolkit` (`Toolkit`), `function` (Agno's
``Function``, a `FunctionTool` with Agno's options, and ``FunctionCall``; `function_run` runs
their hooks and cache), `decorator` (`tool`, Agno's decorator: a `Function`), `results`
(`result_text`), `errors`, `context` (`ToolContext`). Every public name is re-exported here.
"""

from __future__ import annotations

from .decorator import tool
from .docstrings import parse_docstring
from .errors import ModelRetry, ToolError, ToolRetriesExceededError
from .function import Function, FunctionCall
from .function_schema import get_json_schema
from .presets import calculator, http_request
from .provider_tools import ProviderTool
from .restapi import BearerAuthenticator, ToolAuthenticator, restapi_tool
from .result_text import result_text
from .tool import FunctionTool, Tool, ToolDesc
from .tool_context import ToolContext
from .toolkit import Toolkit
from .toolsets import Toolset, as_tools

__all__ = [
    "BearerAuthenticator",
    "Function",
    "FunctionCall",
    "FunctionTool",
    "ModelRetry",
    "ProviderTool",
    "Tool",
    "ToolAuthenticator",
    "ToolContext",
    "ToolDesc",
    "ToolError",
    "ToolRetriesExceededError",
    "Toolkit",
    "Toolset",
    "as_tools",
    "calculator",
    "get_json_schema",
    "http_request",
    "parse_docstring",
    "restapi_tool",
    "result_text",
    "tool",
]
