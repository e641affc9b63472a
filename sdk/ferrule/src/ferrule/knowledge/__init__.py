"""Knowledge (RAG): ``Knowledge(vector_db=..., embedder=...)``; see `ferrule.knowledge.knowledge`.

The vector databases are in `ferrule.knowledge.vectordb` and the embedders in
`ferrule.knowledge.embedder`.
"""

from __future__ import annotations

from .document import ContentResult, Document, MessageReferences
from .knowledge import Knowledge

__all__ = ["ContentResult", "Document", "Knowledge", "MessageReferences"]
