"""ferrule-kit: what ferrule plugins build on, below the Runtime and the Agent.

The kit is grouped by concern, one subpackage each:

- `ferrule_kit.content`: messages, the open part-type registry content plugins register
  into, and what a provider accepts of them (`ferrule_kit.content.messages`,
  `ferrule_kit.content.parts`, `ferrule_kit.content.policy`);
- `ferrule_kit.models`: the language-model contract and stream items
  (`ferrule_kit.models.lm`), how a plugin describes a language-model component type
  (`ferrule_kit.models.lmspec`), and the wire dialects backends share
  (`ferrule_kit.models.chat_completions`, `ferrule_kit.models.qwen3`);
- `ferrule_kit.stores`: the storage contract and the SQL backend written once
  (`ferrule_kit.stores.storage`, `ferrule_kit.stores.sql`);
- `ferrule_kit.embeddings`: the embedder and vector-store contracts
  (`ferrule_kit.embeddings.embedding`, `ferrule_kit.embeddings.vectors`);
- `ferrule_kit.network`: the HTTP client, SSE reader and retry policy providers share
  (`ferrule_kit.network.http`), the stored API keys (``ferrule keys set``), and the limits
  the host sets on what a request may reach (`ferrule_kit.network.addresses`,
  `ferrule_kit.network.hostpolicy`);
- `ferrule_kit.testing`: the conformance suites and loopback-server kit for plugin tests.

Beside them, what every concern uses: `ferrule_kit.errors` (the typed errors of models,
providers and content), `ferrule_kit.hookspecs` (the hooks this layer adds to the kernel's,
which `ferrule_kit.kit_plugin` registers), `ferrule_kit.instrumentation` (observers of
runs, model calls and tool calls) and `ferrule_kit.guardrails` (what an agent's pre- and
post-hooks get and raise).

The modules' paths before this grouping (``ferrule_kit.messages``, ``ferrule_kit.lm``,
``ferrule_kit.storage``...) still import: `MOVED_MODULES` maps each to its module now, and
importing an old path gives that very module (the same object, loaded once). New code uses
the new paths; type checkers know only those.

Nothing here imports `ferrule` (the Runtime, Agent, serve and CLI live above).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from importlib.machinery import ModuleSpec
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

#: The kit's module paths before it was grouped by concern, each (under ``ferrule_kit.``)
#: to the module that holds its code now.
MOVED_MODULES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "messages": "content.messages",
        "parts": "content.parts",
        "policy": "content.policy",
        "lm": "models.lm",
        "lmspec": "models.lmspec",
        "providerspec": "models.providerspec",
        "tool_choice": "models.tool_choice",
        "control_text": "models.control_text",
        "qwen3": "models.qwen3",
        "chat_completions": "models.chat_completions",
        "sse_model": "models.sse_model",
        "storage": "stores.storage",
        "storagespec": "stores.storagespec",
        "storefiles": "stores.storefiles",
        "statemerge": "stores.statemerge",
        "dburls": "stores.dburls",
        "sqlknowledge": "stores.sql.knowledge",
        "sqlplan": "stores.sql.plan",
        "sqlrows": "stores.sql.rows",
        "sqlrun": "stores.sql.run",
        "sqlschema": "stores.sql.schema",
        "sqlstore": "stores.sql.store",
        "sqltables": "stores.sql.tables",
        "embedding": "embeddings.embedding",
        "embedspec": "embeddings.embedspec",
        "vectors": "embeddings.vectors",
        "vectorspec": "embeddings.vectorspec",
        "vectorfilters": "embeddings.vectorfilters",
        "http": "network.http",
        "sse": "network.sse",
        "addresses": "network.addresses",
        "checked_connector": "network.checked_connector",
        "keys": "network.keys",
        "hostpolicy": "network.hostpolicy",
        "paths": "network.paths",
    }
)


class MovedModules:
    """The import-system finder and loader of the kit's old module paths.

    It answers only ``ferrule_kit.<old name>`` for a name of `MOVED_MODULES`, and loads it
    as the module at the new path: imported (once) under its own name, and entered in
    ``sys.modules`` under the old one too, so both paths give the same module object.
    Nothing is imported before an old path is.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in MOVED_MODULES:
            return None
        return ModuleSpec(fullname, self)  # type: ignore[arg-type]  # a loader by protocol

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        moved = importlib.import_module(f"{__name__}.{MOVED_MODULES[spec.name.rpartition('.')[2]]}")
        spec.loader_state = moved.__spec__  # the import system sets the old path's spec next
        return moved

    def exec_module(self, module: ModuleType) -> None:
        # The module ran when imported under its own name: only give it its own spec back.
        alias = module.__spec__
        if alias is not None and isinstance(alias.loader_state, ModuleSpec):
            module.__spec__ = alias.loader_state


# The import system's finders are process-wide by nature; this one adds itself once.
if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(MovedModules())
