"""`RunCalls`: the calls that start an `Agent`'s runs as users type them (`query`, `run`,
`arun`, `run_delta`, `run_sync`, `continue_run`...): each overload gives its precise type,
each docstring what it does; every call builds one `RunRequest` (or `Continuation`) by
keyword and hands it to the agent's `runs.AgentRuns`.

An abstract base of `Agent` (as pydantic-ai's ``AbstractAgent`` is of its ``Agent``): it
declares the two things it needs, `RunCalls._agent_runs` and `RunCalls._run_style`
(which `run` the agent has: `runs.AgnoRun` or `runs.AiloyRun`, also its second type
parameter), and reads nothing else of the agent. It lives apart from `agent` because these calls' overloads are half of the agent's
public surface (no module is over 600 lines).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import Reasoning
from typing_extensions import Unpack

from ..media import media_files
from ..models.response import ToolExecution
from ..tools.tool_context import RunContext
from ._typing import HookKeywords  # read at run time too: the implementations name it
from .configs import AgentConfig
from .deltas import MessageDeltaOutput
from .failed_runs import run_output
from .request import INPUT, MESSAGES, QUERY, RunRequest, continuation_of_call
from .results import AgentResponse, MessageOutput, OutputT, RunOutput, ToolConfirmation
from .runs import AgentRuns, AgnoRun, AiloyRun, RunStyle, RunT
from .stream import AgentStream
from .usage import UsageLimits

if TYPE_CHECKING:
    from ._typing import ContinueOptions, QueryOptions, RunOptions
    from .events import RunOutputEvent

    #: What Ailoy 0.2's ``run(messages)`` takes: a string, or the whole conversation.
    _Messages = str | Sequence[Message | Mapping[str, Any]]


#: The content type of one run given its own ``output_schema`` class.
SchemaT = TypeVar("SchemaT")


class RunCalls(ABC, Generic[OutputT, RunT]):
    """The calls that start runs, on `Agent` (see the module docstring).

    Typed for checkers as pydantic-ai's agent is: a run's content is an ``OutputT`` (the
    agent's: `Agent` is ``Agent[str]`` without an ``output_schema``), or the class of the
    run's own ``output_schema``; a JSON schema gives ``dict[str, Any]``. ``RunT`` says
    which `run` the agent has: `AgnoRun` (the default: ``Agent[str]`` is
    ``Agent[str, AgnoRun]``), whose overloads follow what it returns, a stream with
    ``stream=True``, else the `RunOutput`; or `AiloyRun` (``Agent(lm)``), whose `run`
    streams `MessageOutput`s. An agent made with ``stream=True`` streams from
    ``run(prompt)`` too: pass ``stream=`` explicitly for checkers to know.
    """

    @abstractmethod
    def _agent_runs(self) -> AgentRuns:
        """What makes this agent's runs."""

    @abstractmethod
    def _run_style(self) -> RunStyle:
        """Which `run` this agent has (chosen when it was built)."""

    @overload
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: None = None,
        **options: Unpack[QueryOptions],
    ) -> AgentStream[AgentResponse, OutputT]: ...
    @overload
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: type[SchemaT],
        **options: Unpack[QueryOptions],
    ) -> AgentStream[AgentResponse, SchemaT]: ...
    @overload
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: Mapping[str, Any],
        **options: Unpack[QueryOptions],
    ) -> AgentStream[AgentResponse, dict[str, Any]]: ...
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: Any = None,
        tool_call_limit: int | None = None,
        files: Sequence[Any] = (),
        images: Sequence[Any] | None = None,
        audio: Sequence[Any] | None = None,
        videos: Sequence[Any] | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        usage_limits: UsageLimits | None = None,
        deps: Any = None,
        ignore_reasoning_messages: bool = False,
    ) -> AgentStream[AgentResponse, Any]:
        """Ask, with the conversation so far, and stream `AgentResponse` deltas; the
        exchange joins the history when the run completes (a failed or cancelled run
        leaves the history as it was). ``files`` (paths, or parts such as
        ``DocumentContent.from_path(...)``) go after the prompt, as Agno's ``files=``:
        a path becomes a document part when ferrule-document is installed.

        The conversation so far is the agent's own (`get_messages`), or, on an agent with
        a ``db`` and ``add_history_to_context``, the session's stored history; with a db
        the run is stored in the session (``session_id``, default the agent's).
        ``usage_limits`` (default: the agent's) bound the run's model use; ``deps`` go to
        the tools (`ToolContext.deps`). With ``ignore_reasoning_messages`` (Ailoy's flag)
        the model still reasons, but no ``reasoning`` response is streamed."""
        request = RunRequest(
            kind=QUERY,
            input=prompt,
            files=media_files(files, images, audio, videos),
            session_id=session_id,
            user_id=user_id,
            reasoning=reasoning,
            output_schema=output_schema,
            tool_call_limit=tool_call_limit,
            usage_limits=usage_limits,
            deps=deps,
            ignore_reasoning_messages=ignore_reasoning_messages,
        )
        return self._agent_runs().start(request)

    aquery = query

    @overload
    def run(
        self: RunCalls[OutputT, AiloyRun], messages: _Messages, /, config: AgentConfig | None = None
    ) -> AgentStream[MessageOutput, OutputT]: ...
    @overload
    def run(
        self: RunCalls[OutputT, AgnoRun],
        input: Any,
        *,
        stream: Literal[True],
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def run(
        self: RunCalls[OutputT, AgnoRun],
        input: Any,
        *,
        stream: Literal[True],
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, SchemaT]: ...
    @overload
    def run(
        self: RunCalls[OutputT, AgnoRun],
        input: Any,
        *,
        stream: Literal[True],
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, dict[str, Any]]: ...
    @overload
    def run(
        self: RunCalls[OutputT, AgnoRun],
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> RunOutput[OutputT]: ...
    @overload
    def run(
        self: RunCalls[OutputT, AgnoRun],
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> RunOutput[SchemaT]: ...
    @overload
    def run(
        self: RunCalls[OutputT, AgnoRun],
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> RunOutput[dict[str, Any]]: ...
    def run(
        self,
        input: Any,
        config: AgentConfig | None = None,
        *,
        stream: bool | None = None,
        stream_events: bool | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        session_state: Mapping[str, Any] | None = None,
        run_context: RunContext | None = None,
        run_id: str | None = None,
        audio: Sequence[Any] | None = None,
        images: Sequence[Any] | None = None,
        videos: Sequence[Any] | None = None,
        files: Sequence[Any] | None = None,
        knowledge_filters: Any = None,
        add_history_to_context: bool | None = None,
        add_dependencies_to_context: bool | None = None,
        add_session_state_to_context: bool | None = None,
        dependencies: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        output_schema: Any = None,
        yield_run_output: bool | None = None,
        debug_mode: bool | None = None,
        reasoning: Reasoning | None = None,
        tool_call_limit: int | None = None,
        usage_limits: UsageLimits | None = None,
        deps: Any = None,
        **kwargs: Unpack[HookKeywords],
    ) -> Any:
        """Run on ``input``. What it does depends on how the agent was built, never on
        the type of ``input`` (docs/agent.md, "Which run").

        Agno's form (``Agent(model=...)``, ``Agent(model)``, ``Agent(runtime, model)``):
        ``input`` is a string, a `Message` or message dict, a list of them, parts, a
        pydantic model or a dict (sent as JSON); ``files`` go after a prompt, then
        ``images`` / ``audio`` / ``videos`` (Agno's `ferrule.media` objects).

        - ``stream=False`` or unset: run to the end and return the `RunOutput`; a run that
          fails is returned too, as Agno's, with status ``error`` and its typed error in
          ``error`` (`failed_runs`; a refused argument raises).
        - ``stream=True``: stream the typed events of `ferrule.agent.events` (all of them
          with ``stream_events=True``, else the content and how the run stopped).

        The agent's ``stream`` and ``stream_events`` settings are the defaults.
        ``session_id`` / ``user_id`` default to the agent's; ``session_state`` is merged
        over the session's for this run; ``run_id`` names the run; ``metadata`` goes with
        the run (the agent's merged over it); ``dependencies`` go over the agent's
        (functions among them called as the run starts), ``knowledge_filters`` over the
        agent's; ``add_history_to_context``, ``add_dependencies_to_context``,
        ``add_session_state_to_context`` and ``debug_mode`` set this run's own; a
        ``run_context`` (Agno's `RunContext`) is the run's context (its state,
        dependencies, filters and metadata the defaults of the call's). ``usage_limits``
        (default: the agent's) bound its model use; ``deps`` go to the tools
        (`ToolContext.deps`), as pydantic-ai's ``deps``; ``yield_run_output=True`` makes
        a stream yield the `RunOutput` after its last event (Agno's). Other keywords reach
        the hooks by name (Agno's ``**kwargs``). Without a db nothing is kept between
        runs but ``session_state``.

        Ailoy 0.2's form (``Agent(lm)``, a `LangModel` given first): ``run(messages,
        config=None)``, ``messages`` the whole conversation (a string is one user
        message), streams one `MessageOutput` per new message (``async for resp in
        agent.run(messages)``), with ``config`` (`AgentConfig`)'s inference settings;
        it keeps nothing and takes no other argument."""
        style = self._run_style()
        request = RunRequest(
            kind=style.kind,
            input=input,
            files=media_files(files if files is not None else (), images, audio, videos),
            session_id=session_id,
            user_id=user_id,
            session_state=session_state,
            metadata=metadata,
            reasoning=reasoning,
            output_schema=output_schema,
            tool_call_limit=tool_call_limit,
            usage_limits=usage_limits,
            deps=deps,
            run_id=run_id,
            run_context=run_context,
            dependencies=dependencies,
            knowledge_filters=knowledge_filters,
            add_history_to_context=add_history_to_context,
            add_dependencies_to_context=add_dependencies_to_context,
            add_session_state_to_context=add_session_state_to_context,
            debug_mode=debug_mode,
            hook_arguments=kwargs,
            config=config,
            stream=stream,
            stream_events=stream_events,
            yield_run_output=yield_run_output,
        )
        return style.run(self._agent_runs(), request)

    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[True],
        background: Literal[True],
        output_schema: Any = None,
        **options: Unpack[RunOptions],
    ) -> AsyncIterator[RunOutputEvent]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        background: Literal[True],
        output_schema: Any = None,
        **options: Unpack[RunOptions],
    ) -> Awaitable[RunOutput[OutputT]]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[True],
        background: Literal[False] = False,
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[True],
        background: Literal[False] = False,
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, SchemaT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[True],
        background: Literal[False] = False,
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, dict[str, Any]]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        background: Literal[False] = False,
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, OutputT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        background: Literal[False] = False,
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, SchemaT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        background: Literal[False] = False,
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, dict[str, Any]]: ...
    def arun(
        self,
        input: Any,
        *,
        stream: bool | None = None,
        stream_events: bool | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        session_state: Mapping[str, Any] | None = None,
        run_context: RunContext | None = None,
        run_id: str | None = None,
        audio: Sequence[Any] | None = None,
        images: Sequence[Any] | None = None,
        videos: Sequence[Any] | None = None,
        files: Sequence[Any] | None = None,
        knowledge_filters: Any = None,
        add_history_to_context: bool | None = None,
        add_dependencies_to_context: bool | None = None,
        add_session_state_to_context: bool | None = None,
        dependencies: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        output_schema: Any = None,
        yield_run_output: bool | None = None,
        debug_mode: bool | None = None,
        reasoning: Reasoning | None = None,
        tool_call_limit: int | None = None,
        usage_limits: UsageLimits | None = None,
        deps: Any = None,
        background: bool = False,
        **kwargs: Unpack[HookKeywords],
    ) -> Any:
        """Agno's `run` for async callers, on every agent (whichever its `run`), taking
        `run`'s arguments: the same stream, never run ahead; ``await`` it for the
        `RunOutput` (``await agent.arun("Hi")``) or ``async for`` over it (one
        `MessageOutput` per new message, or events with ``stream=True``). With
        ``background=True`` (and a db) the run goes on in a task of the caller's loop:
        ``await`` gives its pending `RunOutput` at once (``aget_run_output(run_id)`` finds
        it later), ``stream=True`` its events, the run going on if they are not read."""
        request = RunRequest(
            kind=INPUT,
            input=input,
            files=media_files(files if files is not None else (), images, audio, videos),
            session_id=session_id,
            user_id=user_id,
            session_state=session_state,
            metadata=metadata,
            reasoning=reasoning,
            output_schema=output_schema,
            tool_call_limit=tool_call_limit,
            usage_limits=usage_limits,
            deps=deps,
            run_id=run_id,
            run_context=run_context,
            dependencies=dependencies,
            knowledge_filters=knowledge_filters,
            add_history_to_context=add_history_to_context,
            add_dependencies_to_context=add_dependencies_to_context,
            add_session_state_to_context=add_session_state_to_context,
            debug_mode=debug_mode,
            hook_arguments=kwargs,
            stream=stream,
            stream_events=stream_events,
            yield_run_output=yield_run_output,
        )
        if background:
            return self._agent_runs().start_background(request)
        return self._agent_runs().start(request)

    def run_delta(
        self, messages: Any, config: AgentConfig | None = None
    ) -> AgentStream[MessageDeltaOutput, OutputT]:
        """Ailoy 0.2's ``run_delta``: run on ``messages`` (a string is one user message)
        and stream `MessageDeltaOutput`s: the reply's text and thinking as they come, and
        each message's last delta (an assistant turn's tool calls, a tool's result) with
        its ``finish_reason``; accumulate them with ``MessageDelta`` ``+=``. ``config``
        (`AgentConfig`) sets this run's inference (temperature, think_effort, ...)."""
        request = RunRequest(kind=MESSAGES, input=messages, config=config, deltas=True)
        return self._agent_runs().start(request)

    def run_delta_sync(
        self, messages: Any, config: AgentConfig | None = None
    ) -> AgentStream[MessageDeltaOutput, OutputT]:
        """`run_delta` for ``for`` loops (Ailoy's name; the stream is iterable either way)."""
        return self.run_delta(messages, config)

    def run_sync(
        self, messages: Any, config: AgentConfig | None = None
    ) -> AgentStream[MessageOutput, OutputT]:
        """Ailoy 0.2's ``run_sync``: one `MessageOutput` per message of a run on
        ``messages`` (a string is one user message), for ``for`` loops."""
        return self._agent_runs().start(RunRequest(kind=MESSAGES, input=messages, config=config))

    @overload
    def continue_run(
        self,
        run_response: RunOutput[Any] | str | None = None,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        stream: Literal[True],
        **options: Unpack[ContinueOptions],
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def continue_run(
        self,
        run_response: RunOutput[Any] | str | None = None,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        stream: Literal[False] | None = None,
        **options: Unpack[ContinueOptions],
    ) -> RunOutput[OutputT] | AgentStream[AgentResponse | MessageOutput, OutputT]: ...
    def continue_run(
        self,
        run_response: RunOutput[Any] | str | None = None,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        run_id: str | None = None,
        updated_tools: Sequence[ToolExecution] | None = None,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        input: str | None = None,
        continue_from: int | Literal["end", "last_user"] = "end",
        fork: bool = False,
        regenerate: bool = False,
        replace_original: bool | None = None,
        additional_instructions: str | None = None,
        stream: bool | None = None,
        stream_events: bool | None = False,
        user_id: str | None = None,
        session_id: str | None = None,
        run_context: RunContext | None = None,
        knowledge_filters: Any = None,
        dependencies: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        debug_mode: bool | None = None,
        yield_run_output: bool = False,
        **kwargs: Unpack[HookKeywords],
    ) -> Any:
        """Resume a paused run and return what the call that paused it did: a stream of
        the rest of it, or (a run of one input, or one paused in another process and
        stored in this agent's db) its `RunOutput`; ``stream=True`` streams events.

        The run: ``run_response`` (the paused `RunOutput`, its requirements decided in
        place) or its id (``run_id=``, or first), of ``session_id`` / ``user_id`` if given.
        Decide each waiting call with the ``requirements`` after `confirm` / `reject`,
        Agno's ``updated_tools`` (`ToolExecution` s with ``confirmed`` etc. set), or
        ``confirm``: True or False for all, or ``{tool_call_id: bool}`` (``reason`` goes
        with refusals); a refused call is not run. ``dependencies``, ``knowledge_filters``,
        ``metadata``, ``run_context``, ``debug_mode``, ``yield_run_output`` and the hooks'
        keywords are the rest of the run's, as `run` takes them.

        Agno 2.9's continuation of an ended run (completed or failed; `rerun`) starts a new
        run from its messages: ``input`` adds a user message, ``continue_from`` (a message
        index, ``'end'``, ``'last_user'``) cuts them first, ``fork=True`` says so;
        ``regenerate=True`` drops the final reply (``additional_instructions`` steer the
        new one; ``replace_original=False``: both stay)."""
        agent_stream, eager = self._agent_runs().continued(continuation_of_call(locals()))
        return run_output(agent_stream) if eager else agent_stream

    @overload
    def acontinue_run(
        self,
        run_response: RunOutput[Any] | str | None = None,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        background: Literal[True],
        stream: bool | None = None,
        **options: Unpack[ContinueOptions],
    ) -> Awaitable[RunOutput[OutputT]] | AsyncIterator[RunOutputEvent]: ...
    @overload
    def acontinue_run(
        self,
        run_response: RunOutput[Any] | str | None = None,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        stream: Literal[True],
        background: Literal[False] = False,
        **options: Unpack[ContinueOptions],
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def acontinue_run(
        self,
        run_response: RunOutput[Any] | str | None = None,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        stream: Literal[False] | None = None,
        background: Literal[False] = False,
        **options: Unpack[ContinueOptions],
    ) -> AgentStream[AgentResponse | MessageOutput, OutputT]: ...
    def acontinue_run(
        self,
        run_response: RunOutput[Any] | str | None = None,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        run_id: str | None = None,
        updated_tools: Sequence[ToolExecution] | None = None,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        input: str | None = None,
        continue_from: int | Literal["end", "last_user"] = "end",
        fork: bool = False,
        regenerate: bool = False,
        replace_original: bool | None = None,
        additional_instructions: str | None = None,
        stream: bool | None = None,
        stream_events: bool | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        run_context: RunContext | None = None,
        knowledge_filters: Any = None,
        dependencies: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        debug_mode: bool | None = None,
        yield_run_output: bool = False,
        background: bool = False,
        **kwargs: Unpack[HookKeywords],
    ) -> AgentStream[Any, Any] | Awaitable[RunOutput[Any]]:
        """`continue_run` for async callers: the stream (await it for the `RunOutput`);
        ``background=True``: await it for the run's pending `RunOutput` (it goes on)."""
        runs = self._agent_runs()
        agent_stream, eager = runs.continued(continuation_of_call(locals()))
        return runs.in_background(agent_stream, not eager) if background else agent_stream
