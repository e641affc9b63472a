"""Agno's ``agno.context.provider``: `ContextProvider`, a source of information an agent
asks questions of (and, where it allows, gives instructions to), with what it returns
(`Answer`: a text and `Document` hits) and its health (`Status`).

A provider answers through a sub-agent of its own (``query`` / ``aquery``; writes:
``update`` / ``aupdate``, read-only by default). ``get_tools`` is what an agent gets, by
``mode``: ``default`` (the provider's choice: its query tool, and its update tool where it
writes), ``agent`` (one ``query_<id>`` tool) or ``tools`` (the provider's own tools, to use
directly). The query and update tools answer the model with the answer as JSON (only the
fields set), or ``{"error": ...}``; the run's user, session, metadata and dependencies reach
the sub-agent. ``read`` / ``write`` choose the query and update tools of a provider that
has both.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .mode import ContextMode

__all__ = ["Answer", "ContextProvider", "Document", "Status", "answer_from_run", "serialize_answer"]


@attrs.define
class Status:
    """Whether a provider's source can be reached, and a word on it."""

    ok: bool
    detail: str = ""


@attrs.define
class Document:
    """One hit a provider found: its id, name, where it is (``uri``, ``source``) and a
    ``snippet``."""

    id: str
    name: str
    uri: str | None = None
    source: str | None = None
    snippet: str | None = None


@attrs.define
class Answer:
    """What a question (or an instruction) came to: ``results`` and a ``text``."""

    results: list[Document] = attrs.Factory(list)
    text: str | None = None


def serialize_answer(answer: Answer) -> dict[str, Any]:
    """The answer as the model reads it: ``results`` and ``text``, when set."""
    out: dict[str, Any] = {}
    if answer.results:
        out["results"] = [
            {k: v for k, v in attrs.asdict(d).items() if v is not None} for d in answer.results
        ]
    if answer.text is not None:
        out["text"] = answer.text
    return out


def answer_from_run(run: Any) -> Answer:
    """A sub-agent's run as an answer."""
    content = run.content
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, default=str)
    return Answer(text=content or None)


def _tool_id(ident: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", ident)


def _default_model() -> Any:
    from ..models.openai import OpenAIChat

    return OpenAIChat(id="gpt-5.4-mini")


class ContextProvider(ABC):
    """A source of information for agents (see the module docstring)."""

    id: str
    name: str
    mode: ContextMode
    model: Any
    read: bool
    write: bool
    query_tool_name: str
    update_tool_name: str
    stream_sub_agent_events: bool

    def __init__(
        self,
        id: str,
        *,
        name: str | None = None,
        mode: ContextMode = ContextMode.default,
        model: Any = None,
        read: bool = True,
        write: bool = True,
        query_tool_name: str | None = None,
        update_tool_name: str | None = None,
        stream_sub_agent_events: bool = True,
    ) -> None:
        if not read and not write:
            raise InvalidInputError(
                f"{type(self).__name__} needs read or write: with neither it offers nothing",
                field="read",
            )
        self.id = id
        self.name = name or id
        self.mode = ContextMode(mode)
        self.model = model
        self.read = read
        self.write = write
        self.query_tool_name = query_tool_name or f"query_{_tool_id(id)}"
        self.update_tool_name = update_tool_name or f"update_{_tool_id(id)}"
        self.stream_sub_agent_events = stream_sub_agent_events

    # -- what a provider does ------------------------------------------------------------

    @abstractmethod
    def query(self, question: str, *, run_context: Any = None) -> Answer:
        """The answer to ``question``."""

    @abstractmethod
    async def aquery(self, question: str, *, run_context: Any = None) -> Answer:
        """`query`, awaited."""

    def update(self, instruction: str, *, run_context: Any = None) -> Answer:
        """Carry out a written instruction (a provider that writes says how)."""
        raise NotImplementedError(f"{type(self).__name__} is read-only")

    async def aupdate(self, instruction: str, *, run_context: Any = None) -> Answer:
        """`update`, awaited."""
        raise NotImplementedError(f"{type(self).__name__} is read-only")

    @abstractmethod
    def status(self) -> Status:
        """Whether the source can be reached."""

    @abstractmethod
    async def astatus(self) -> Status:
        """`status`, awaited."""

    async def asetup(self) -> None:
        """Open what the provider needs (nothing by default; may be called again)."""
        return None

    async def aclose(self) -> None:
        """Release what `asetup` opened (nothing by default)."""
        return None

    def instructions(self) -> str:
        """How an agent should use this provider, by ``mode``."""
        if self.mode is ContextMode.tools:
            return f"`{self.name}`: explore this source with its tools."
        return f"`{self.name}`: call `{self.query_tool_name}(question)` to ask this source."

    # -- the tools ------------------------------------------------------------------------

    def get_tools(self) -> list[Any]:
        """The tools an agent gets, by ``mode`` (see the module docstring)."""
        if self.mode is ContextMode.default:
            return self._default_tools()
        if self.mode is ContextMode.tools:
            return self._all_tools()
        return [self._query_tool()]

    def _default_tools(self) -> list[Any]:
        return [self._query_tool()]

    def _all_tools(self) -> list[Any]:
        return [self._query_tool()]

    def _read_write_tools(self) -> list[Any]:
        tools = []
        if self.read:
            tools.append(self._query_tool())
        if self.write:
            tools.append(self._update_tool())
        return tools

    def _run_kwargs_for_sub_agent(self, run_context: Any) -> dict[str, Any]:
        if run_context is None:
            return {}
        return {
            name: getattr(run_context, name)
            for name in ("user_id", "session_id", "metadata", "dependencies")
            if getattr(run_context, name, None)
        }

    def _sub_agent(self, instructions: str, tools: list[Any], suffix: str = "") -> Any:
        from ..agent import Agent

        return Agent(
            name=f"{self.name}{suffix}",
            model=self.model if self.model is not None else _default_model(),
            instructions=instructions,
            tools=tools,
            markdown=True,
        )

    def _query_tool(self) -> Any:
        from ..tools.function import Function

        provider = self

        async def query(question: str, run_context: Any = None) -> str:
            """Ask this source a question; its answer, as JSON.

            Args:
                question: What to find out.
            """
            try:
                answer = await provider.aquery(question, run_context=run_context)
            except Exception as exc:  # the model reads what went wrong
                return json.dumps({"error": f"{type(exc).__name__}: {exc}"})
            return json.dumps(serialize_answer(answer))

        return Function.from_callable(query, name=self.query_tool_name)

    def _update_tool(self) -> Any:
        from ..tools.function import Function

        provider = self

        async def update(instruction: str, run_context: Any = None) -> str:
            """Give this source a written instruction (add, change or remove something);
            what was done, as JSON.

            Args:
                instruction: What to do.
            """
            try:
                answer = await provider.aupdate(instruction, run_context=run_context)
            except NotImplementedError:
                return json.dumps({"error": f"{provider.name} is read-only"})
            except Exception as exc:
                return json.dumps({"error": f"{type(exc).__name__}: {exc}"})
            return json.dumps(serialize_answer(answer))

        return Function.from_callable(update, name=self.update_tool_name)
