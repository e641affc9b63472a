"""`Agent`: the user's object. It holds the settings, routes its models, owns its stores
(the conversation, the running runs) and builds each run's `RunDeps`; its public methods
are its collaborators' work: `run_calls.RunCalls` (the typed run calls) over
`runs.AgentRuns` (how calls become runs), `sessions.AgentSessions` (storage, state,
history, memories), `retrieval.AgentKnowledge`, `toolbox.AgentTools` and
`console.AgentConsole`; the turn loop that drives a run is `loop`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, cast, overload

from ferrule_kernel import FerruleError, InvalidInputError, get_logger
from ferrule_kit.content.messages import Message
from ferrule_kit.instrumentation import instrumentation_of
from ferrule_kit.models.lmspec import ModelRoute

from .._bridge import Bridge, blocking, on_bridge_loop
from ..models.fallback import model_of  # names "provider:model_id" (Agno's fallbacks)
from ..models.message import Message as AgnoMessage
from ..reasoning.manager import steps_reasoner
from ..tools import Tool, Toolset
from ..tools.tool_context import RunContext
from . import registry
from .agno_methods import AgentUpkeep
from .attributes import AgentAttributes
from .background_executor import BackgroundExecutor, close_background_executor
from .console import AgentConsole
from .delegation import Delegated
from .deps import RunDeps, SecondModels, SessionSteps
from .fallback import FallbackModel, model_slots, with_fallbacks
from .history_tools import history_tools
from .inputs import DEFAULT_STEP_INSTRUCTIONS, as_message, extra_messages, tool_description
from .langmodel import LangModel, routing_kernel
from .loop import drive, model_turn
from .memory import agentic_memory_tool
from .model_requests import request_steps
from .output_schema import structured_output
from .reasoning import second_model_steps
from .request import MESSAGES
from .results import AgentResponse, MessageOutput, OutputT, StepResult
from .retrieval import AgentKnowledge, checked_knowledge
from .run_calls import RunCalls
from .run_sessions import RunSessions
from .runs import AgentRuns, AgnoRun, AiloyRun, RunStyle, RunT
from .sessions import AgentSessions, StoredSession
from .settings import (
    AgentSettings,
    agent_arguments,
    agent_id_for,
    copied_settings,
    with_options_signature,
)
from .sinks import Channel, Sink
from .state import RunState, cancel_in_loop, request_cancel
from .stream import Launch, acancel_by_id, cancel_by_id
from .system_message import Known, system_messages, system_text
from .toolbox import AgentTools

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

    from ..knowledge import Knowledge
    from ..session.agent import AgentSession
    from ._typing import AgentOptions, LangModelAgentOptions

log = get_logger("ferrule.agent")

# Where `Agent`'s delegated methods find their collaborators (`delegation.Delegated`).
_tools_of, _sessions_of = attrgetter("_toolbox"), attrgetter("_sessions")
_knowledge_of, _console_of = attrgetter("_knowledge"), attrgetter("_console")
_run_sessions_of, _upkeep_of = attrgetter("_run_sessions"), attrgetter("_upkeep")


class Agent(RunCalls[OutputT, RunT], AgentAttributes):
    """A language model with tools, streaming its turns.

    Built one of three ways, which also decides what its `run` is (docs/agent.md, "Which
    run"; never the type of what `run` is given):

    - ``Agent(lm, tools=None, knowledge=None)`` with a `LangModel` first, by position
      (Ailoy 0.2): ``run(messages, config=None)`` streams one `MessageOutput` per new
      message (`runs.AiloyRun`); ``knowledge`` is searched for each run's last user message.
    - ``Agent(model=model, ...)`` or ``Agent(model)`` (Agno's; the default runtime) and
      ``Agent(rt, model, system_message=None, tools=None)`` (Ailoy 0.1; ``model`` defined
      on ``rt`` as the agent's own component when first needed, deleted by `delete`):
      Agno's ``run(input)``, returning the `RunOutput` (`runs.AgnoRun`).

    ``model`` is a `LocalModel`, `APIModel`, an Agno model class, `ferrule_testmodel.TestModel`,
    a `LangModel` or a `FallbackModel` (several models, tried in order when one fails).

    The options are keywords (Agno's names), checked as the agent is made (a bad one is an
    `InvalidInputError` naming it) and kept in `settings`, one frozen group per concern,
    each documenting its options: `settings.IdentitySettings` (``name``, ``id``),
    `settings.ContextSettings` (the system message: ``description``, ``instructions``,
    ``markdown``...), `settings.ModelSettings` (``options``, ``usage_limits``),
    `settings.ToolSettings` (``tool_call_limit``, ``tool_timeout``),
    `settings.SessionSettings` (``db``, ``session_id``, ``session_state``...),
    `settings.HistorySettings`, `settings.MemorySettings`, `settings.KnowledgeSettings`,
    `settings.ReasoningSettings`, `settings.OutputSettings` (``output_schema``...),
    `settings.StreamSettings`, `settings.HookSettings` and `settings.DebugSettings`. Each is
    also the agent's attribute, as it is now (``agent.session_id = ...`` counts).
    ``tools`` may also be a function making each run's tools; ``instructions``,
    ``system_message`` and that function may take ``agent`` / ``session_state`` /
    ``run_context`` (`ferrule.run.RunContext`) by name (docs/agent.md, "Agno's names").

    For type checkers an agent is an ``Agent[OutputT, RunT]``: ``Agent[str]`` without an
    ``output_schema``, ``Agent[MyClass]`` with ``output_schema=MyClass`` (an attrs class, a
    pydantic model, a TypedDict), ``Agent[dict[str, Any]]`` with a JSON schema, its runs'
    `RunOutput.content` of that type; ``RunT`` is `runs.AgnoRun` (the default) or
    `runs.AiloyRun` (``Agent(lm)``).
    """

    @overload
    def __init__(
        self: Agent[str, AiloyRun],
        lm: LangModel,
        tools: Sequence[Any] | None = None,
        knowledge: Knowledge | None = None,
        /,
        *,
        output_schema: None = None,
        **options: Unpack[LangModelAgentOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[OutputT, AiloyRun],
        lm: LangModel,
        tools: Sequence[Any] | None = None,
        knowledge: Knowledge | None = None,
        /,
        *,
        output_schema: type[OutputT],
        **options: Unpack[LangModelAgentOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[dict[str, Any], AiloyRun],
        lm: LangModel,
        tools: Sequence[Any] | None = None,
        knowledge: Knowledge | None = None,
        /,
        *,
        output_schema: Mapping[str, Any],
        **options: Unpack[LangModelAgentOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[str, AgnoRun],
        runtime: Any = None,
        model: Any = None,
        system_message: str | None = None,
        tools: Sequence[Any] | Callable[..., Any] | None = None,
        *,
        output_schema: None = None,
        **options: Unpack[AgentOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[OutputT, AgnoRun],
        runtime: Any = None,
        model: Any = None,
        system_message: str | None = None,
        tools: Sequence[Any] | Callable[..., Any] | None = None,
        *,
        output_schema: type[OutputT],
        **options: Unpack[AgentOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[dict[str, Any], AgnoRun],
        runtime: Any = None,
        model: Any = None,
        system_message: str | None = None,
        tools: Sequence[Any] | Callable[..., Any] | None = None,
        *,
        output_schema: Mapping[str, Any],
        **options: Unpack[AgentOptions],
    ) -> None: ...
    @with_options_signature
    def __init__(self, *args: Any, **options: Any) -> None:
        given = agent_arguments(args, options)  # which form, and what by position
        self._style: RunStyle = AiloyRun() if given.ailoy else AgnoRun()
        # the options, checked group by group (each refused naming itself)
        settings = AgentSettings.from_options(given.options)
        self.settings = settings
        runtime, model, tools = given.runtime, given.model, given.tools
        if model is None:  # Agno's default: OpenAI's Responses API
            from ..models.openai.responses import OpenAIResponses

            model = OpenAIResponses(id="gpt-5.4")
        model = with_fallbacks(model, settings.model, model_of)
        runtime, self._slots = model_slots(runtime, model)
        self._fallback = model if isinstance(model, FallbackModel) else None
        self.runtime = runtime
        self.model = model
        for name, value in settings.options().items():
            setattr(self, name, value)
        session = settings.session
        self.id = settings.identity.id or agent_id_for(settings.identity.name)
        self.session_id = session.session_id or uuid.uuid4().hex
        self.session_state = session.session_state if session.session_state is not None else {}
        self.knowledge = checked_knowledge(
            settings.knowledge.knowledge, settings.knowledge.knowledge_filters, runtime
        )
        self._helper_models: dict[str, LangModel] = {}  # memory and summary models of our own
        self._output = structured_output(settings.output.output_schema)
        # tracing plugins (ferrule-otel); None, and sites that do nothing, without one
        kernel = routing_kernel(runtime)
        kernel.load_plugins()
        self._instrumentation = instrumentation_of(kernel.plugin_manager)
        self._history: list[Message] = []
        self._running: dict[str, RunState] = {}
        # the collaborators, each given what it works with
        self._knowledge = AgentKnowledge(self, lambda: self._toolbox.factory_cache)
        self._sessions = AgentSessions(self, self._history, self._second_models)
        self._run_sessions = RunSessions(
            self,
            self._sessions,
            self._second_models,
            self._system_messages,
            self._knowledge,
            lambda: extra_messages(self.additional_input),
        )
        pending = self._run_sessions.store_pending
        self._runs = AgentRuns(self, self._output, self._running, self._launch, pending)
        self._toolbox = AgentTools(lambda: self.sync_bridge, tools, self._resolve_tools)
        self._console = AgentConsole(self)
        self._upkeep = AgentUpkeep(self)

    def __repr__(self) -> str:
        return f"Agent({self.model!r}, tools={[getattr(t, 'name', t) for t in self.tools]!r})"

    @property
    def route(self) -> ModelRoute:
        """The route of the (first) model."""
        return self._slots[0].route

    @property
    def _component(self) -> str:
        return self._slots[0].component

    @property
    def sync_bridge(self) -> Bridge:
        """Where the agent's async code runs (its runtime's `ferrule._bridge.Bridge`): the
        synchronous twins (`step`, `load`, the session calls...) wait for it there."""
        return cast("Bridge", self.runtime.sync_bridge)

    def _agent_runs(self) -> AgentRuns:
        return self._runs

    def _run_style(self) -> RunStyle:
        return self._style

    def _deps(self) -> RunDeps:
        """What the turn loop runs with, from the settings as they are now."""
        sessions = self._run_sessions
        return RunDeps(
            runtime=self.runtime,
            slots=self._slots,
            fallback=self._fallback,
            agent_id=self.id,
            agent_name=self.name,
            options=self.options,
            output_retries=self.output_retries,
            parse_response=self.parse_response,
            use_json_mode=self.use_json_mode and not self.structured_outputs,
            tool_timeout=self.tool_timeout,
            pre_hooks=self.pre_hooks,
            post_hooks=self.post_hooks,
            tool_hooks=self.tool_hooks,
            debug_mode=self.debug_mode,
            debug_level=self.debug_level,
            instrumentation=self._instrumentation,
            agent=self,
            history=self._history,
            runs=self._running,
            resolve_tools=self._resolve_tools,
            sessions=SessionSteps.of(sessions),
            track_references=self._knowledge.track_references,
            **second_model_steps(self, self._second_models()),
            **request_steps(self),
        )

    def _launch(self) -> Launch:
        """How this agent's streams start their runs."""
        deps = self._deps()

        async def drive_run(run: RunState, sink: Sink) -> None:
            if run.pending and run.dependencies:  # resumed: continue_run's new ones too
                await self._run_sessions.resolve_dependencies(run)
            await drive(deps, run, sink)

        return Launch(self.sync_bridge, self._running, drive_run)

    def _second_models(self) -> SecondModels:
        return SecondModels(
            self.runtime,
            self.id,
            lambda: LangModel(self.runtime, self._component, self.route, self.model),
            self._helper_models,
            Agent,
            self._sessions.db_call,
            model_of,
            steps_reasoner,
        )

    async def _resolve_tools(self, run_context: RunContext | None = None) -> dict[str, Tool]:
        own = await self._knowledge.run_tools(run_context)  # the run's knowledge's
        own += history_tools(self, self._sessions)
        if self.enable_agentic_memory and self.memory_manager is not None:
            own.append(agentic_memory_tool(self._second_models, self.memory_manager))
        return await self._toolbox.resolve(self, run_context, own, self.enable_agentic_state)

    # -- tools (`toolbox.AgentTools`) ------------------------------------------------------

    @property
    def tools(self) -> list[Tool | Toolset]:
        return list(self._toolbox.entries)

    @property
    def _tools(self) -> list[Tool | Toolset]:  # the list itself: Ailoy 0.1's tests read it
        return self._toolbox.entries

    add_tool = Delegated(_tools_of, AgentTools.add_tool)
    add_tools = Delegated(_tools_of, AgentTools.add_tools)
    set_tools = Delegated(_tools_of, AgentTools.set_tools)
    remove_tools = Delegated(_tools_of, AgentTools.remove_tools)
    remove_tool = Delegated(_tools_of, AgentTools.remove_tool)
    clear_tools = Delegated(_tools_of, AgentTools.clear_tools)
    get_tools = Delegated(_tools_of, AgentTools.get_tools)
    aget_tools = Delegated(_tools_of, AgentTools.aget_tools)
    clear_callable_cache = Delegated(_tools_of, AgentTools.clear_callable_cache)
    aclear_callable_cache = Delegated(_tools_of, AgentTools.aclear_callable_cache)
    set_id = Delegated(_upkeep_of, AgentUpkeep.set_id)
    initialize_agent = Delegated(_upkeep_of, AgentUpkeep.initialize_agent)
    scrub_run_output_for_storage = Delegated(_upkeep_of, AgentUpkeep.scrub_run_output_for_storage)
    to_dict = Delegated(_upkeep_of, AgentUpkeep.to_dict)
    from_dict: classmethod[Any, ..., Any] = classmethod(AgentUpkeep.from_dict)
    save_run_response_to_file = Delegated(_run_sessions_of, RunSessions.save_run_response_to_file)
    add_py_function_tool = Delegated(_tools_of, AgentTools.add_py_function_tool)
    add_restapi_tool = Delegated(_tools_of, AgentTools.add_restapi_tool)
    add_tools_from_preset = Delegated(_tools_of, AgentTools.add_tools_from_preset)
    aadd_tools_from_mcp_server = Delegated(_tools_of, AgentTools.aadd_tools_from_mcp_server)
    add_tools_from_mcp_server = Delegated(_tools_of, AgentTools.add_tools_from_mcp_server)
    aremove_mcp_server = Delegated(_tools_of, AgentTools.aremove_mcp_server)
    remove_mcp_server = Delegated(_tools_of, AgentTools.remove_mcp_server)

    # -- sessions (`sessions.AgentSessions`) -----------------------------------------------

    aget_session = Delegated(_sessions_of, AgentSessions.aget_session)
    get_session = Delegated(_sessions_of, AgentSessions.get_session)
    asave_session = Delegated(_sessions_of, AgentSessions.asave_session)
    save_session = Delegated(_sessions_of, AgentSessions.save_session)
    adelete_session = Delegated(_sessions_of, AgentSessions.adelete_session)
    delete_session = Delegated(_sessions_of, AgentSessions.delete_session)
    aget_session_state = Delegated(_sessions_of, AgentSessions.aget_session_state)
    get_session_state = Delegated(_sessions_of, AgentSessions.get_session_state)
    aupdate_session_state = Delegated(_sessions_of, AgentSessions.aupdate_session_state)
    update_session_state = Delegated(_sessions_of, AgentSessions.update_session_state)
    aget_session_messages = Delegated(_sessions_of, AgentSessions.aget_session_messages)
    get_session_messages = Delegated(_sessions_of, AgentSessions.get_session_messages)
    aget_chat_history = Delegated(_sessions_of, AgentSessions.aget_chat_history)
    get_chat_history = Delegated(_sessions_of, AgentSessions.get_chat_history)
    aget_run_output = Delegated(_sessions_of, AgentSessions.aget_run_output)
    get_run_output = Delegated(_sessions_of, AgentSessions.get_run_output)
    aget_last_run_output = Delegated(_sessions_of, AgentSessions.aget_last_run_output)
    get_last_run_output = Delegated(_sessions_of, AgentSessions.get_last_run_output)
    aget_user_memories = Delegated(_sessions_of, AgentSessions.aget_user_memories)
    get_user_memories = Delegated(_sessions_of, AgentSessions.get_user_memories)
    aget_session_name = Delegated(_sessions_of, AgentSessions.aget_session_name)
    get_session_name = Delegated(_sessions_of, AgentSessions.get_session_name)
    aset_session_name = Delegated(_sessions_of, AgentSessions.aset_session_name)
    set_session_name = Delegated(_sessions_of, AgentSessions.set_session_name)
    generate_session_name = Delegated(_sessions_of, AgentSessions.generate_session_name)
    aget_session_summary = Delegated(_sessions_of, AgentSessions.aget_session_summary)
    get_session_summary = Delegated(_sessions_of, AgentSessions.get_session_summary)
    aget_session_metrics = Delegated(_sessions_of, AgentSessions.aget_session_metrics)
    get_session_metrics = Delegated(_sessions_of, AgentSessions.get_session_metrics)
    afork_session = Delegated(_sessions_of, AgentSessions.afork_session)
    fork_session = Delegated(_sessions_of, AgentSessions.fork_session)

    @property
    def cached_session(self) -> AgentSession | None:
        """With ``cache_session``: the session as this agent last read or wrote it."""
        return self._sessions.cached_session

    @on_bridge_loop
    async def arename(self, name: str, session_id: str | None = None) -> None:
        """Rename the agent, and name the stored session after it (created if new)."""
        await self._sessions.name_session(name, session_id)
        self.name = name

    rename = blocking(arename)

    # -- knowledge (`retrieval.AgentKnowledge`) --------------------------------------------

    aget_relevant_docs_from_knowledge = Delegated(
        _knowledge_of, AgentKnowledge.aget_relevant_docs_from_knowledge
    )
    get_relevant_docs_from_knowledge = Delegated(
        _knowledge_of, AgentKnowledge.get_relevant_docs_from_knowledge
    )
    aadd_to_knowledge = Delegated(_knowledge_of, AgentKnowledge.aadd_to_knowledge)
    add_to_knowledge = Delegated(_knowledge_of, AgentKnowledge.add_to_knowledge)

    def set_knowledge(self, knowledge: Knowledge) -> None:
        """Ailoy 0.2's knowledge: what a search for each run's last user message finds goes
        with the message (in its `AgentConfig`'s ``document_polyfill``, else as references)."""
        self.knowledge = checked_knowledge(knowledge, self.knowledge_filters, self.runtime)
        self.search_knowledge, self.add_knowledge_to_context = False, True

    def remove_knowledge(self) -> None:
        """Forget the knowledge `set_knowledge` gave."""
        self.knowledge = None

    # -- messages ------------------------------------------------------------------------------

    def _system_messages(
        self, state: dict[str, Any], known: Known, context: RunContext | None, output: Any
    ) -> list[Message]:
        return system_messages(self, system_text(self, state, known, context, output))

    def _system(self) -> list[Message]:
        return system_messages(self, system_text(self, self.session_state, output=self._output))

    @on_bridge_loop
    async def aget_system_message(
        self,
        session: StoredSession,
        run_context: RunContext | None = None,
        tools: Sequence[Any] | None = None,
        add_session_state_to_context: bool | None = None,
        input: Any = None,
    ) -> AgnoMessage | None:
        """The system message a run of ``session`` would start with (None: none), as Agno's
        `Message`: its state, summary, memories and ``tools``' instructions. Agno reads
        ``input`` only for its learnings, which ferrule has not (out of scope)."""
        del input
        stored = (session.session_data or {}).get("session_state")
        state = run_context.session_state if run_context is not None else None
        state = state if state is not None else stored or dict(self.session_state or {})
        memories = None
        if self.add_memories_to_context and self.db is not None:
            memories = await self._sessions.aget_user_memories(session.user_id)
        summary = session.summary if self.add_session_summary_to_context else None
        # Agno's memories: the block reads their `memory` text, as of the kit's
        known = Known(cast("Any", memories), summary, add_session_state_to_context, tools=tools)
        text = system_text(self, state, known, run_context, self._output)
        if not text:
            return None
        return AgnoMessage(role=self.system_message_role, content=text)

    get_system_message = blocking(aget_system_message)

    def get_messages(self) -> list[Message]:
        """The conversation so far (the system message first, if any)."""
        return self._system() + list(self._history)

    def clear_messages(self) -> None:
        """Forget the conversation (the system message stays)."""
        self._history.clear()

    def cancel(self, run_id: str) -> bool:
        """Cancel a running run by id, from any thread; False if there is none."""
        run = self._running.get(run_id)
        if run is None or run.status != "running":
            return False
        request_cancel(run)
        return True

    @on_bridge_loop
    async def astep(
        self, messages: Sequence[Message | Mapping[str, Any]], tools: Sequence[Any] | None = None
    ) -> StepResult:
        """One inference step (execute-agent-step-api): the model's answer, or the tool calls
        it requests (``tool_requests``) for the caller to run and send back as tool
        messages. ``tools`` (default: the agent's) may be `Tool`s, functions, or bare
        descriptions ``{"name", "description", "parameters"}``."""
        history = [as_message(m, i) for i, m in enumerate(messages)]
        if not history:
            raise InvalidInputError("must not be empty", field="messages")
        if history[0].role != "system":
            system = system_text(self, self.session_state) or DEFAULT_STEP_INSTRUCTIONS
            history[0:0] = system_messages(self, system)
        await self._slots[0].ensure_defined(self.runtime)
        if tools is None:
            descriptions = [t.to_dict() for t in (await self._resolve_tools()).values()]
        else:
            descriptions = [tool_description(t, i) for i, t in enumerate(tools)]
        run = RunState("step", MESSAGES, history, len(history), self.reasoning, None, None)
        sink = Sink(Channel(asyncio.get_running_loop()), run)
        message, usage = await model_turn(self._deps(), run, sink, descriptions)
        return StepResult(message, list(message.tool_calls), usage)

    step = blocking(astep)

    @on_bridge_loop
    async def aload(self) -> None:
        """Define the model now (loading a local model's weights) instead of at the first run."""
        await self._slots[0].ensure_defined(self.runtime)

    load = registry.LoadMethod(blocking(aload))
    background_executor = BackgroundExecutor()  # Agno's pool for the caller's work
    save = registry.save  # Agno's component registry is not ferrule's: refused

    def print(self, response: AgentResponse | MessageOutput, file: Any = None) -> None:
        """Print a response as a terminal would show it: text as it streams, reasoning dimmed,
        tool calls and results as JSON, errors in red (colours only on a terminal); a
        `MessageOutput` of Ailoy 0.2's run, its message."""
        response.print(file)

    print_response = Delegated(_console_of, AgentConsole.print_response)
    aprint_response = Delegated(_console_of, AgentConsole.aprint_response)
    cli_app = Delegated(_console_of, AgentConsole.cli_app)
    acli_app = Delegated(_console_of, AgentConsole.acli_app)

    # -- copies, cancellation, lifetime ---------------------------------------------------------

    def deep_copy(self, *, update: Mapping[str, Any] | None = None) -> Agent[Any, RunT]:
        """A new agent with this one's settings, ``update`` applied over them (Agno's
        ``deep_copy``): mutable settings (``session_state``, ``options``, a list of
        ``instructions``, the hook lists) are copied, so changing the copy's leaves this
        one's alone; the runtime, model, db, tools and other models are shared. The copy
        starts with no conversation of its own and defines its own model component. An id
        made from the name follows a new ``name``. It is built in this agent's form (its
        `run` is this one's)."""
        settings = copied_settings(self, update, self._toolbox.factory or self.tools)
        if isinstance(self._style, AiloyRun):  # Agent(lm, ...)
            del settings["runtime"]
            return cast("Agent[Any, RunT]", Agent(settings.pop("model"), **settings))
        return cast("Agent[Any, RunT]", Agent(**settings))

    @staticmethod
    def cancel_run(run_id: str) -> bool:
        """Cancel a run by id through the installed cancellation manager (Agno's): a run of
        any agent of this process stops at once, from any thread, and ends ``cancelled``;
        one the manager shares with another process ends at its next checkpoint. False if
        neither knew the id (the manager keeps the intent, for a run not started yet)."""
        return cancel_by_id(run_id)

    @staticmethod
    async def acancel_run(run_id: str) -> bool:
        """`cancel_run` for async callers (a background run's among them)."""
        return await acancel_by_id(run_id)

    def delete(self, *, db: Any = None, hard_delete: bool = False) -> None:
        """Delete the agent's model component (not a shared `LangModel`) and close its MCP
        connections. Idempotent. Agno's ``db`` / ``hard_delete`` are refused (`registry`)."""
        registry.refuse_registry_delete(db, hard_delete)
        bridge = self.sync_bridge
        if not bridge.can_block:
            owned = self._toolbox.toolsets or self._sessions.owns_component
            if any(s.owned and s.defined for s in self._slots) or owned:
                raise TypeError(
                    "this agent's runtime is an AsyncRuntime: use `await agent.adelete()`"
                )
            return
        close_background_executor(self)  # first: its work may need the agent's loop
        if getattr(bridge, "started", True):  # a loop thread never started holds nothing
            bridge.run(self.adelete())

    @on_bridge_loop
    async def adelete(self) -> None:
        for run in list(self._running.values()):
            cancel_in_loop(run)
        for helper in list(self._helper_models.values()):
            await helper.adelete()
        self._helper_models.clear()
        await asyncio.to_thread(close_background_executor, self)
        try:
            await self._sessions.close_storage()
        except FerruleError as exc:  # e.g. the runtime was stopped first
            log.debug("agent_delete_failed", component=self.db, error=exc.message)
        await self._toolbox.close()
        for slot in self._slots:
            if slot.owned and slot.defined:
                slot.defined = False
                try:
                    await self.runtime.adelete(slot.component)
                except FerruleError as exc:  # e.g. the runtime was stopped first
                    log.debug("agent_delete_failed", component=slot.component, error=exc.message)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.adelete()
