"""`Agent`: the user's object. It holds the settings, routes its models, resolves its
tools, owns its stores (the conversation, the running runs) and builds each run's
`RunDeps`; the turn loop that drives a run is `loop`. How calls become runs is
`runs._Runs`; its sessions (storage, state, history, memories) are `sessions._Sessions`.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

import attrs
from ferrule_kernel import FerruleError, InvalidInputError, get_logger
from ferrule_kit.instrumentation import instrumentation_of
from ferrule_kit.lm import FunctionDescription as ToolDescription
from ferrule_kit.lm import Reasoning
from ferrule_kit.lmspec import ModelRoute
from ferrule_kit.messages import Message

from .._loop import Bridge, blocking, on_bridge_loop
from ..tools import Tool, Toolset, as_tools
from ..tools.context import RunContext
from ..tools.presets import preset_tools
from .console import acli_app, aprint_response, cli_app, print_response
from .context import (
    as_message,
    call_by_name,
    system_text,
    tool_description,
    update_session_state_tool,
)
from .deps import RunDeps, SecondModels, SessionSteps
from .fallback import FallbackModel, model_slots
from .knowledge import _Knowledge
from .langmodel import LangModel, routing_kernel
from .loop import drive, model_turn
from .memory import MemoryManager
from .output_schema import structured_output
from .reasoning import parse_with_model, reason
from .results import AgentResponse, OutputT, StepResult
from .runs import _Runs
from .sessions import _Sessions, agent_id_for
from .settings import SETTINGS, AgentSettings
from .sinks import Channel, Sink
from .state import RunState, cancel_in_loop, request_cancel
from .stream import Launch, started_run
from .usage import UsageLimits

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

    from ._typing import AgentOptions

log = get_logger("ferrule.agent")

#: The default instructions of a single step (execute-agent-step-api), used when the
#: messages carry no system message and the agent has none.
DEFAULT_STEP_INSTRUCTIONS = (
    "You are an AI assistant that helps users with their questions. You can answer questions "
    "directly or acquire information from any of the attached tools to assist you. Always answer "
    "the user's most recent query to the best of your knowledge.\n\n"
    "When asked about what tools are available, you must list each attached tool's name and "
    "description. When asked about what you can do, mention that in addition to your normal "
    "capabilities, you can also use the attached tools by listing their names and descriptions. "
    "You cannot use any other tools other than the ones provided to you explicitly."
)


class Agent(_Runs[OutputT], _Sessions, _Knowledge):
    """A language model with tools, streaming its turns.

    ``Agent(rt, model, system_message=None, tools=None)`` with ``model`` a `LocalModel`,
    `APIModel` or `ferrule_testmodel.TestModel` (defined on ``rt`` as the agent's own
    component when first needed, deleted by `delete`), or ``Agent(lm)`` with a `LangModel`
    (its runtime is used), or ``Agent(model)`` / ``Agent(model=model, ...)`` (the default
    runtime). ``model`` may also be a `FallbackModel`: several models, tried in order when
    one fails.

    The Agent reference's settings: ``name`` and ``id`` (the agent's id in stored runs: by
    default made from the name); ``description`` and ``instructions`` (a string, a list, or
    a callable taking ``agent`` and/or ``session_state``) make the system message when
    ``system_message`` is not given; ``stream`` and ``stream_events`` (`run`'s defaults).
    Sessions (see `sessions._Sessions`): ``db`` (`ferrule.db.SqliteDb`,
    `ferrule.db.PostgresDb`, or a storage component's name), ``session_id`` (default: a new
    one per agent),
    ``user_id``, ``session_state`` (the state a new session starts with; without a db, the
    state itself) and ``add_session_state_to_context``; ``add_history_to_context`` with
    ``num_history_runs`` (default 3) or ``num_history_messages``;
    ``enable_session_summaries`` and ``add_session_summary_to_context``;
    ``enable_user_memories``, ``memory_manager`` and ``add_memories_to_context``.
    Knowledge (see `knowledge._Knowledge`): ``knowledge`` (`ferrule.knowledge.Knowledge`),
    ``search_knowledge`` (the model may call ``search_knowledge_base``; default True),
    ``add_knowledge_to_context``, ``knowledge_filters`` and
    ``enable_agentic_knowledge_filters``.

    Options: ``output_schema`` (attrs class, pydantic model or JSON schema: the final reply
    is validated into ``RunOutput.content``, with ``output_retries`` more tries when it does
    not match); ``tool_call_limit`` (tool calls per run; reaching past it stops the run with
    `ToolCallLimitError`); ``usage_limits`` (`UsageLimits`: model requests and tokens per
    run; crossing one stops the run with `UsageLimitExceeded`); ``tool_timeout`` (seconds per tool call unless the tool sets its
    own); ``reasoning`` (the default of `query`'s flag: True, or an effort level such as
    ``"high"``); ``options`` (passed to the model's ``infer``: ``temperature``,
    ``max_tokens``, ``top_p``, ``stop``).

    Hooks (`ferrule.agent.hooks`): ``pre_hooks`` and ``post_hooks`` (functions or
    guardrails, seeing each run's `RunInput` / `RunOutput`; `InputCheckError` /
    `OutputCheckError` stop the run) and ``tool_hooks`` (wrapping each tool call). Second
    models (`ferrule.agent.reasoning`): ``reasoning_model`` thinks before the main model
    answers; ``parser_model`` (with ``parser_model_prompt``) turns the reply into the
    ``output_schema``, which ``parse_response=False`` leaves as text. ``debug_mode`` logs
    each step at debug level.

    Agno's run control: ``markdown``, ``use_json_mode``, ``update_memory_on_run`` (as
    ``enable_user_memories``), ``enable_agentic_state``, ``knowledge_retriever``, and
    ``tools`` as a function making each run's tools; ``instructions``, ``system_message``
    and the tool factory may be functions taking ``agent`` / ``session_state`` /
    ``run_context`` (`ferrule.run.RunContext`) by name (docs/agent.md, "Agno's names").

    For type checkers an agent is an ``Agent[OutputT]``: ``Agent[str]`` without an
    ``output_schema``, ``Agent[MyClass]`` with ``output_schema=MyClass`` (an attrs class, a
    pydantic model, a TypedDict), ``Agent[dict[str, Any]]`` with a JSON schema; its runs'
    `RunOutput.content` has that type.
    """

    # the settings (`AgentSettings`) as attributes, besides those `_Runs`, `_Sessions` and
    # `_Knowledge` declare
    settings: AgentSettings
    system_message: str | None
    description: str | None
    instructions: Any
    add_session_state_to_context: bool
    options: dict[str, Any]
    output_retries: int
    tool_timeout: float | None
    reasoning_model: Any
    parser_model: Any
    parser_model_prompt: str | None
    parse_response: bool
    pre_hooks: list[Any]
    post_hooks: list[Any]
    tool_hooks: list[Any]
    debug_mode: bool

    @overload
    def __init__(
        self: Agent[str],
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
        self: Agent[OutputT],
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
        self: Agent[dict[str, Any]],
        runtime: Any = None,
        model: Any = None,
        system_message: str | None = None,
        tools: Sequence[Any] | Callable[..., Any] | None = None,
        *,
        output_schema: Mapping[str, Any],
        **options: Unpack[AgentOptions],
    ) -> None: ...
    def __init__(
        self,
        runtime: Any = None,
        model: Any = None,
        system_message: str | None = None,
        tools: Sequence[Any] | Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        description: str | None = None,
        instructions: str | Sequence[str] | Any = None,
        db: Any = None,
        session_id: str | None = None,
        user_id: str | None = None,
        session_state: dict[str, Any] | None = None,
        add_session_state_to_context: bool = False,
        add_history_to_context: bool = False,
        num_history_runs: int | None = None,
        num_history_messages: int | None = None,
        enable_session_summaries: bool = False,
        add_session_summary_to_context: bool | None = None,
        memory_manager: MemoryManager | None = None,
        enable_user_memories: bool = False,
        update_memory_on_run: bool = False,
        add_memories_to_context: bool | None = None,
        knowledge: Any = None,
        search_knowledge: bool = True,
        add_knowledge_to_context: bool = False,
        knowledge_filters: dict[str, Any] | None = None,
        enable_agentic_knowledge_filters: bool = False,
        knowledge_retriever: Any = None,
        enable_agentic_state: bool = False,
        markdown: bool = False,
        use_json_mode: bool = False,
        stream: bool | None = None,
        stream_events: bool | None = None,
        output_schema: Any = None,
        output_retries: int = 1,
        tool_call_limit: int | None = None,
        usage_limits: UsageLimits | None = None,
        tool_timeout: float | None = 60.0,
        reasoning: Reasoning = False,
        options: Mapping[str, Any] | None = None,
        reasoning_model: Any = None,
        parser_model: Any = None,
        parser_model_prompt: str | None = None,
        parse_response: bool = True,
        pre_hooks: Sequence[Any] | None = None,
        post_hooks: Sequence[Any] | None = None,
        tool_hooks: Sequence[Any] | None = None,
        debug_mode: bool = False,
    ) -> None:
        # the options, checked as one object (each refused naming itself)
        given = locals()
        settings = AgentSettings(**{name: given[name] for name in SETTINGS})
        self.settings = settings
        if model is None:  # Agent(lm) or Agent(model)
            runtime, model = None, runtime
        runtime, self._slots = model_slots(runtime, model)
        self._fallback = model if isinstance(model, FallbackModel) else None
        self.runtime = runtime
        self.model = model
        # the settings as the agent's attributes (Agno's: ``agent.name``, ``agent.db``...)
        for name in SETTINGS:
            setattr(self, name, getattr(settings, name))
        self.id = settings.id or agent_id_for(settings.name)
        self.session_id = settings.session_id or uuid.uuid4().hex
        self.session_state = settings.session_state if settings.session_state is not None else {}
        self._init_knowledge(
            knowledge,
            search_knowledge,
            add_knowledge_to_context,
            knowledge_filters,
            enable_agentic_knowledge_filters,
        )
        self._db_component: str | None = None
        self._db_owned = False
        self._db_lock: asyncio.Lock | None = None
        self._helper_models: dict[str, LangModel] = {}  # memory and summary models of our own
        self._output = structured_output(output_schema)
        # tracing plugins (ferrule-otel); None, and sites that do nothing, without one
        kernel = routing_kernel(runtime)
        kernel.load_plugins()
        self._instrumentation = instrumentation_of(kernel.plugin_manager)
        self._tools: list[Tool | Toolset] = []
        self._toolsets: list[Toolset] = []  # every toolset ever given: closed by delete
        self._mcp_servers: dict[str, Toolset] = {}  # by add_tools_from_mcp_server's name
        self._history: list[Message] = []
        self._runs: dict[str, RunState] = {}
        # Agno's tool factory: a function making each run's tools (see `_resolve_tools`)
        self._tool_factory: Callable[..., Any] | None = None
        if tools is None or isinstance(tools, Sequence):
            self.set_tools(tools or [])
        elif callable(tools) and not isinstance(tools, (Tool, Toolset)):
            # a Tool is callable too (``await tool(...)``): one tool is not a factory
            self._tool_factory = tools
        else:
            raise InvalidInputError(
                f"tools must be a list of tools or a function making them, got {type(tools).__name__}",
                field="tools",
            )

    def __repr__(self) -> str:
        return f"Agent({self.model!r}, tools={[getattr(t, 'name', t) for t in self._tools]!r})"

    @property
    def route(self) -> ModelRoute:
        """The route of the agent's (first) model."""
        return self._slots[0].route

    @property
    def _component(self) -> str:
        return self._slots[0].component

    @property
    def sync_bridge(self) -> Bridge:
        """Where the agent's async code runs (its runtime's `ferrule._loop.Bridge`): the
        synchronous twins (`step`, `load`, the session calls...) wait for it there."""
        bridge: Bridge = self.runtime.sync_bridge
        return bridge

    def _deps(self) -> RunDeps:
        """What the turn loop runs with, from the settings as they are now."""
        return RunDeps(
            runtime=self.runtime,
            slots=self._slots,
            fallback=self._fallback,
            agent_id=self.id,
            agent_name=self.name,
            options=self.options,
            output_retries=self.output_retries,
            parse_response=self.parse_response,
            use_json_mode=self.settings.use_json_mode,
            tool_timeout=self.tool_timeout,
            pre_hooks=self.pre_hooks,
            post_hooks=self.post_hooks,
            tool_hooks=self.tool_hooks,
            debug_mode=self.debug_mode,
            instrumentation=self._instrumentation,
            agent=self,
            history=self._history,
            runs=self._runs,
            resolve_tools=self._resolve_tools,
            sessions=SessionSteps(self._begin, self._end, self._end_quietly),
            track_references=self._track_references,
            reason=None if self.reasoning_model is None else self._reason,
            parse_reply=None if self.parser_model is None else self._parse_reply,
        )

    def _launch(self) -> Launch:
        """How this agent's streams start their runs."""
        deps = self._deps()

        async def drive_run(run: RunState, sink: Sink) -> None:
            await drive(deps, run, sink)

        return Launch(self.sync_bridge, self._runs, drive_run)

    def _second_models(self) -> SecondModels:
        return SecondModels(
            self.runtime,
            self.id,
            lambda: LangModel(self.runtime, self._component, self.route, self.model),
            self._helper_models,
            Agent,
            self._db,
        )

    async def _reason(self, run: RunState, sink: Sink) -> None:
        await reason(self._second_models(), self.reasoning_model, run, sink)

    async def _parse_reply(self, run: RunState, reply: str) -> Any:
        return await parse_with_model(
            self._second_models(),
            self.parser_model,
            self.parser_model_prompt,
            self.output_retries,
            run,
            reply,
        )

    # -- tools ---------------------------------------------------------------------------------

    def add_tool(self, tool: Any) -> None:
        """Add a tool: a `Tool`, a function, a preset's name, an MCP server, or (schema, function)."""
        resolved = as_tools(tool)
        self._tools.append(resolved)
        if isinstance(resolved, Toolset) and resolved not in self._toolsets:
            self._toolsets.append(resolved)

    def set_tools(self, tools: Sequence[Any]) -> None:
        """Replace every tool."""
        self._tools = []
        for tool in tools:
            self.add_tool(tool)

    @property
    def tools(self) -> list[Tool | Toolset]:
        return list(self._tools)

    def add_tools(self, tools: Sequence[Any]) -> None:
        """Add several tools (each as `add_tool` takes it)."""
        for tool in tools:
            self.add_tool(tool)

    def remove_tools(self, names: Sequence[str]) -> None:
        """Remove the tools of these names (an MCP server's are removed with
        `remove_mcp_server`)."""
        unknown = set(names) - {t.name for t in self._tools if isinstance(t, Tool)}
        if unknown:
            raise InvalidInputError(
                f"no tool named {', '.join(sorted(map(repr, unknown)))}", field="names"
            )
        self._tools = [t for t in self._tools if not (isinstance(t, Tool) and t.name in names)]

    def remove_tool(self, name: str) -> None:
        """Remove the tool of this name (`remove_tools` of one)."""
        self.remove_tools([name])

    def clear_tools(self) -> None:
        """Remove every tool (an MCP server stays connected until `delete`)."""
        self._tools = []

    def get_tools(self) -> list[Tool | Toolset]:
        """The tools (Ailoy's name for `tools`)."""
        return self.tools

    def add_py_function_tool(self, f: Any, desc: Mapping[str, Any] | None = None) -> None:
        """Add a Python function as a tool: described by its signature and docstring, or
        by ``desc`` (``{"name", "description", "parameters"}``, checked)."""
        if desc is None:
            self.add_tool(Tool.from_function(f))
            return
        described = ToolDescription.model_validate(dict(desc))
        spec = {
            "name": described.name,
            "description": described.description,
            "parameters": described.parameters,
        }
        self.add_tool(Tool.from_schema(spec, f))

    def add_tools_from_preset(self, preset_name: str, authenticator: Any = None) -> None:
        """Add a preset's tools by its name (`ferrule.tools.presets`)."""
        self.add_tools(preset_tools(preset_name, authenticator))

    @on_bridge_loop
    async def aadd_tools_from_mcp_server(
        self, name: str, params: Any, tools_to_add: Sequence[str] | None = None
    ) -> None:
        """Start an MCP server (``params``: mcp's ``StdioServerParameters``, or anything
        with ``command``, ``args``, ``env`` and ``cwd``) and add its tools, named
        ``{name}-{tool}`` (only ``tools_to_add`` when given)."""
        from ..mcp import MCPServer

        if name in self._mcp_servers:
            raise InvalidInputError(f"an MCP server named {name!r} is already added", field="name")
        server = MCPServer(
            params.command,
            list(getattr(params, "args", None) or ()),
            env=getattr(params, "env", None),
            cwd=None if getattr(params, "cwd", None) is None else str(params.cwd),
            include=tools_to_add,
        )
        self._toolsets.append(server)  # closed by delete, even if listing fails
        listed = await server.list_tools()
        self._mcp_servers[name] = server
        self.add_tools([attrs.evolve(t, name=f"{name}-{t.name}"[:64]) for t in listed])

    add_tools_from_mcp_server = blocking(aadd_tools_from_mcp_server)

    @on_bridge_loop
    async def aremove_mcp_server(self, name: str) -> None:
        """Remove an MCP server's tools and stop it."""
        server = self._mcp_servers.pop(name, None)
        if server is None:
            raise InvalidInputError(f"no MCP server named {name!r}", field="name")
        self._tools = [
            t for t in self._tools if not (isinstance(t, Tool) and t.name.startswith(f"{name}-"))
        ]
        self._toolsets.remove(server)
        await server.aclose()

    remove_mcp_server = blocking(aremove_mcp_server)

    async def _resolve_tools(self, run_context: RunContext | None = None) -> dict[str, Tool]:
        entries: list[Tool | Toolset] = [*self._tools, *self._knowledge_tools()]
        if self._tool_factory is not None:
            state = run_context.session_state if run_context is not None else self.session_state
            made = call_by_name(
                self._tool_factory, agent=self, session_state=state, run_context=run_context
            )
            entries += [as_tools(tool) for tool in made or ()]
        if self.settings.enable_agentic_state:
            entries.append(update_session_state_tool())
        found: dict[str, Tool] = {}
        for entry in entries:
            listed = await entry.list_tools() if isinstance(entry, Toolset) else [entry]
            for tool in listed:
                if tool.name in found:
                    raise InvalidInputError(
                        f"two tools are named {tool.name!r}; tool names must be unique (an MCP "
                        "server's prefix= can keep them apart)",
                        field="tools",
                    )
                found[tool.name] = tool
        return found

    # -- messages ------------------------------------------------------------------------------

    def _system(self) -> list[Message]:
        text = system_text(self, self.session_state, output=self._output)
        return [Message("system", text)] if text else []

    def get_messages(self) -> list[Message]:
        """The conversation so far (the system message first, if any)."""
        return self._system() + list(self._history)

    def clear_messages(self) -> None:
        """Forget the conversation (the system message stays)."""
        self._history.clear()

    def cancel(self, run_id: str) -> bool:
        """Cancel a running run by id, from any thread; False if there is none."""
        run = self._runs.get(run_id)
        if run is None or run.status != "running":
            return False
        request_cancel(run)
        return True

    # -- one step -----------------------------------------------------------------------------

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
            history.insert(0, Message("system", system))
        await self._ensure_defined()
        if tools is None:
            descriptions = [t.to_dict() for t in (await self._resolve_tools()).values()]
        else:
            descriptions = [tool_description(t, i) for i, t in enumerate(tools)]
        run = RunState("step", "run", history, len(history), self.reasoning, None, None)
        sink = Sink(Channel(asyncio.get_running_loop()), run)
        message, usage = await model_turn(self._deps(), run, sink, descriptions)
        return StepResult(message, list(message.tool_calls), usage)

    step = blocking(astep)

    async def _ensure_defined(self) -> None:
        await self._slots[0].ensure_defined(self.runtime)

    @on_bridge_loop
    async def aload(self) -> None:
        """Define the model now (loading a local model's weights) instead of at the first run."""
        await self._ensure_defined()

    load = blocking(aload)

    # -- printing --------------------------------------------------------------------------------

    def print(self, response: AgentResponse, file: Any = None) -> None:
        """Print a response as a terminal would show it: text as it streams, reasoning dimmed,
        tool calls and results as JSON, errors in red (colours only on a terminal)."""
        response.print(file)

    def print_response(
        self,
        input: Any,
        *,
        stream: bool | None = None,
        markdown: bool = False,
        show_message: bool = True,
        show_reasoning: bool = True,
        console: Any = None,
        **options: Any,
    ) -> None:
        """Run on ``input`` and print it in panels (Agno's ``print_response``): the
        message (``show_message``), the reasoning (``show_reasoning``), the tool calls, and
        the response, as Markdown with ``markdown=True``; with ``stream`` (default: the
        agent's) it is redrawn as it streams. A failed run is printed, not raised.
        ``options`` go to `run` (``session_id``, ``user_id``, ``files``, ...); ``console``
        is a ``rich.console.Console`` to print on (default: stdout)."""
        print_response(
            self, input, stream, markdown, show_message, show_reasoning, console, options
        )

    async def aprint_response(
        self,
        input: Any,
        *,
        stream: bool | None = None,
        markdown: bool = False,
        show_message: bool = True,
        show_reasoning: bool = True,
        console: Any = None,
        **options: Any,
    ) -> None:
        await aprint_response(
            self, input, stream, markdown, show_message, show_reasoning, console, options
        )

    def cli_app(
        self,
        input: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        markdown: bool = False,
        *,
        exit_on: Sequence[str] | None = None,
        prompt: str = "You: ",
        console: Any = None,
        **options: Any,
    ) -> None:
        """A chat on stdin (Agno's ``cli_app``): answers ``input`` first if given, then
        each line read, with `print_response`, until the end of input or a line of
        ``exit_on`` (default ``exit``, ``quit``, ``bye``). Give the agent a ``db`` and
        ``add_history_to_context=True`` for it to remember the conversation."""
        options.update(session_id=session_id, user_id=user_id, stream=stream, markdown=markdown)
        cli_app(self, input, exit_on, prompt, console, options)

    async def acli_app(
        self,
        input: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        markdown: bool = False,
        *,
        exit_on: Sequence[str] | None = None,
        prompt: str = "You: ",
        console: Any = None,
        **options: Any,
    ) -> None:
        options.update(session_id=session_id, user_id=user_id, stream=stream, markdown=markdown)
        await acli_app(self, input, exit_on, prompt, console, options)

    # -- copies and cancellation ---------------------------------------------------------------

    def deep_copy(self, *, update: Mapping[str, Any] | None = None) -> Agent[Any]:
        """A new agent with this one's settings, ``update`` applied over them (Agno's
        ``deep_copy``): mutable settings (``session_state``, ``options``, a list of
        ``instructions``, the hook lists) are copied, so changing the copy's leaves this
        one's alone; the runtime, model, db, tools and other models are shared. The copy
        starts with no conversation of its own and defines its own model component. An id
        made from the name follows a new ``name``."""
        parameters = [p for p in inspect.signature(Agent.__init__).parameters if p != "self"]
        unknown = sorted(set(update or {}) - set(parameters))
        if unknown:
            raise InvalidInputError(
                f"not a setting of Agent: {', '.join(unknown)}", field=f"update.{unknown[0]}"
            )
        settings: dict[str, Any] = {}
        for name in parameters:
            if name == "tools":
                settings[name] = list(self._tools)
            elif name == "id" and self.id == agent_id_for(self.name):
                continue  # made from the name: made again from the copy's
            else:
                value = getattr(self, name)
                if isinstance(value, dict):
                    value = copy.deepcopy(value)
                elif isinstance(value, list):
                    value = list(value)
                settings[name] = value
        settings.update(update or {})
        return Agent(**settings)

    @staticmethod
    def cancel_run(run_id: str) -> bool:
        """Cancel a running run by id, whichever agent of this process runs it and from
        any thread (Agno's static ``Agent.cancel_run``): it ends with status
        ``cancelled`` (a stream ends with a cancellation error; `run` returns the
        `RunOutput`). False if no such run is running."""
        run = started_run(run_id)
        if run is None or run.status != "running":
            return False
        request_cancel(run)
        return True

    # -- lifetime ------------------------------------------------------------------------------------

    def delete(self) -> None:
        """Delete the agent's model component (not a shared `LangModel`) and close its MCP
        connections. Idempotent."""
        bridge = self.sync_bridge
        if not bridge.can_block:
            if any(s.owned and s.defined for s in self._slots) or self._toolsets or self._db_owned:
                raise TypeError(
                    "this agent's runtime is an AsyncRuntime: use `await agent.adelete()`"
                )
            return
        if getattr(bridge, "started", True):  # a loop thread never started holds nothing
            bridge.run(self.adelete())

    @on_bridge_loop
    async def adelete(self) -> None:
        for run in list(self._runs.values()):
            cancel_in_loop(run)
        for helper in list(self._helper_models.values()):
            await helper.adelete()
        self._helper_models.clear()
        try:
            await self._close_storage()
        except FerruleError as exc:  # e.g. the runtime was stopped first
            log.debug("agent_delete_failed", component=self.db, error=exc.message)
        for toolset in self._toolsets:
            try:
                await toolset.aclose()
            except Exception as exc:
                log.warning("toolset_close_failed", toolset=repr(toolset), error=repr(exc))
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
