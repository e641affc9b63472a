"""Knowledge (RAG): ``Knowledge(vector_db=..., embedder=...)``; see `ferrule.knowledge.knowledge`.

The vector databases are in `ferrule.knowledge.vectordb` and the embedders in
`ferrule.knowledge.embedder`. The names load on first access: an `Agent` imports only
`ferrule.knowledge.document` (its runs' references), not the machinery of inserting.

Where things are: `knowledge` (`Knowledge`: lifecycle and the public methods), `readers`
(files, folders, URLs; `ReadLimits`), `ingest` (embedding and storing), `chunking`,
`search` (vector, keyword, hybrid), `document` (what the methods return).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .document import ContentResult, Document, MessageReferences, ReadFailure
    from .filesystem import FileSystemKnowledge
    from .ingest import IngestProgress
    from .knowledge import Knowledge
    from .protocol import KnowledgeProtocol
    from .readers import ReadLimits

__all__ = [
    "ContentResult",
    "Document",
    "FileSystemKnowledge",
    "IngestProgress",
    "Knowledge",
    "KnowledgeProtocol",
    "MessageReferences",
    "ReadFailure",
    "ReadLimits",
]

__getattr__ = lazy_attributes(
    __name__,
    {
        "ContentResult": ".document",
        "Document": ".document",
        "MessageReferences": ".document",
        "ReadFailure": ".document",
        "FileSystemKnowledge": ".filesystem",
        "IngestProgress": ".ingest",
        "Knowledge": ".knowledge",
        "KnowledgeProtocol": ".protocol",
        "ReadLimits": ".readers",
    },
)
