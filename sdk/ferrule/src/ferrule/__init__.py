"""ferrule: an agent runtime with a tiny kernel and plugins for everything that does work.

from ferrule import Runtime
rt = Runtime()
print(rt.call("echo", {"text": "Hello world"}))
rt.stop()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ferrule_kernel import FerruleError, InvalidInputError, configure_logging

from .runtime import AsyncRuntime, Runtime

if TYPE_CHECKING:
    # What `_LAZY` imports on first access, for type checkers (`__getattr__` returns Any):
    # lazy at run time, typed statically. tests/typing/test_typing.py keeps the two equal.
    from ferrule_kit.content.messages import Message, Part, ReasoningPart, TextPart, ToolCall

    from .agent import (
        Agent,
        AgentConfig,
        AgentResponse,
        AgentStream,
        CacheProgress,
        DocumentPolyfill,
        FallbackModel,
        FinishReason,
        KnowledgeConfig,
        LangModel,
        LangModelInferConfig,
        MessageDelta,
        MessageDeltaOutput,
        MessageOutput,
        PartDelta,
        PartDeltaFunction,
        RunOutput,
        ToolConfirmation,
        UsageLimitExceeded,
        UsageLimits,
    )
    from .agent.configs import Grammar, KVCacheConfig
    from .embedding_model import EmbeddingModel
    from .knowledge import Knowledge
    from .mcp import MCPClient, MCPServer
    from .models import APIModel, LocalModel
    from .tools import (
        BearerAuthenticator,
        ModelRetry,
        Tool,
        ToolAuthenticator,
        ToolContext,
        ToolDesc,
        tool,
    )
    from .vector_store import (
        VectorStore,
        VectorStoreAddInput,
        VectorStoreGetResult,
        VectorStoreRetrieveResult,
    )

__all__ = [
    "APIModel",
    "Agent",
    "AgentConfig",
    "AgentResponse",
    "AgentStream",
    "AsyncRuntime",
    "BearerAuthenticator",
    "CacheProgress",
    "DocumentPolyfill",
    "EmbeddingModel",
    "FallbackModel",
    "FerruleError",
    "FinishReason",
    "Grammar",
    "InvalidInputError",
    "KVCacheConfig",
    "Knowledge",
    "KnowledgeConfig",
    "LangModel",
    "LangModelInferConfig",
    "LocalModel",
    "MCPClient",
    "MCPServer",
    "Message",
    "MessageDelta",
    "MessageDeltaOutput",
    "MessageOutput",
    "ModelRetry",
    "Part",
    "PartDelta",
    "PartDeltaFunction",
    "ReasoningPart",
    "RunOutput",
    "Runtime",
    "TextPart",
    "Tool",
    "ToolAuthenticator",
    "ToolCall",
    "ToolConfirmation",
    "ToolContext",
    "ToolDesc",
    "UsageLimitExceeded",
    "UsageLimits",
    "VectorStore",
    "VectorStoreAddInput",
    "VectorStoreGetResult",
    "VectorStoreRetrieveResult",
    "configure_logging",
    "tool",
]

# The rest of the public surface is imported on first access: `import ferrule` stays as
# cheap as a Runtime needs (it is on every cold start).
_LAZY = {
    "Agent": "ferrule.agent",
    "AgentConfig": "ferrule.agent",
    "CacheProgress": "ferrule.agent",
    "DocumentPolyfill": "ferrule.agent",
    "FinishReason": "ferrule.agent",
    "KnowledgeConfig": "ferrule.agent",
    "Grammar": "ferrule.agent.configs",
    "KVCacheConfig": "ferrule.agent.configs",
    "LangModelInferConfig": "ferrule.agent",
    "MessageDelta": "ferrule.agent",
    "MessageDeltaOutput": "ferrule.agent",
    "PartDelta": "ferrule.agent",
    "PartDeltaFunction": "ferrule.agent",
    "AgentResponse": "ferrule.agent",
    "AgentStream": "ferrule.agent",
    "LangModel": "ferrule.agent",
    "MessageOutput": "ferrule.agent",
    "RunOutput": "ferrule.agent",
    "ToolConfirmation": "ferrule.agent",
    "FallbackModel": "ferrule.agent",
    "UsageLimits": "ferrule.agent",
    "UsageLimitExceeded": "ferrule.agent",
    "MCPClient": "ferrule.mcp",
    "MCPServer": "ferrule.mcp",
    "Tool": "ferrule.tools",
    "tool": "ferrule.tools",
    "ModelRetry": "ferrule.tools",
    "ToolContext": "ferrule.tools",
    "ToolDesc": "ferrule.tools",
    "ToolAuthenticator": "ferrule.tools",
    "BearerAuthenticator": "ferrule.tools",
    "APIModel": "ferrule.models",
    "LocalModel": "ferrule.models",
    "Message": "ferrule_kit.content.messages",
    "Part": "ferrule_kit.content.messages",
    "ReasoningPart": "ferrule_kit.content.messages",
    "TextPart": "ferrule_kit.content.messages",
    "ToolCall": "ferrule_kit.content.messages",
    "VectorStore": "ferrule.vector_store",
    "VectorStoreAddInput": "ferrule.vector_store",
    "VectorStoreGetResult": "ferrule.vector_store",
    "VectorStoreRetrieveResult": "ferrule.vector_store",
    "EmbeddingModel": "ferrule.embedding_model",
    "Knowledge": "ferrule.knowledge",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):
        # Names content plugins export through the part-type registry (ImageContent,
        # AudioContent, ...): `from ferrule import ImageContent` works when ferrule-image
        # is installed and says what to install when it is not. Not cached here: the
        # registry follows what is installed.
        from ferrule_kit.content.parts import registry

        try:
            return registry.export(name)
        except KeyError:
            pass
        from .catalog import install_hint

        hint = install_hint("export", name)
        if hint is not None:
            raise ImportError(f"{name} comes with a content plugin. {hint}", name=name)
    raise AttributeError(f"module 'ferrule' has no attribute {name!r}")


def __dir__() -> list[str]:
    from ferrule_kit.content.parts import registry

    return sorted(set(globals()) | set(_LAZY) | set(registry.exported()))
