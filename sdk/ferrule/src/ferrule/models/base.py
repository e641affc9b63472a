"""Agno's ``agno.models.base``: `Model`, what every model class is (``isinstance(model,
Model)``), and `MessageData`.

A model class (`OpenAIChat`, `Claude`...) is an `APIModel` (or `LocalModel`) and a `Model`:
it takes Agno's keywords (`ferrule.models.params`: the table each class keeps gives their
defaults and what ferrule does with each), keeps every value (``model.temperature``,
``model.name``) and answers Agno's calls on ferrule's engine:

- `invoke` / `ainvoke` / `invoke_stream` / `ainvoke_stream`: one request to the model (no
  tool is run), through the component its route defines on the process's shared runtime;
- `response` / `aresponse` / `response_stream` / `aresponse_stream`: a turn with its tool
  calls run until the model answers, by ferrule's agent loop (`Agent(model=..., tools=...)`);
- `count_tokens`: the provider's own count where its component has one, else an estimate.

The steps Agno's own loop is made of (``run_function_calls``, ``process_response_stream``,
...) are ferrule's agent's: calling them is refused, naming `response`.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from typing_extensions import Unpack

from ..exceptions import ModelProviderError
from .message import Message
from .params import BASE_PARAMS, ModelParams, agno_signature, agno_values
from .response import ModelResponse

__all__ = ["MessageData", "Model"]


@attrs.define
class MessageData:
    """What the parts of a streamed reply add up to, field by field."""

    response_role: str | None = None
    response_content: Any = ""
    response_reasoning_content: Any = ""
    response_redacted_reasoning_content: Any = ""
    response_citations: Any = None
    response_tool_calls: list[dict[str, Any]] = attrs.Factory(list)
    response_audio: Any = None
    response_image: Any = None
    response_video: Any = None
    response_file: Any = None
    response_metrics: Any = None
    response_provider_data: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None


def _refused(step: str) -> InvalidInputError:
    return InvalidInputError(
        f"{step} is a step of Agno's own tool loop; ferrule's agent runs the loop: call "
        "model.response(messages, tools=...) or give the model to an Agent",
        field=step,
    )


def _kit_messages(messages: Sequence[Any], compressed: bool = False) -> list[Any]:
    from ferrule_kit.content.messages import Message as KitMessage

    out = []
    for message in messages:
        if isinstance(message, KitMessage):
            out.append(message)
            continue
        if isinstance(message, dict):
            message = Message.from_dict(message)
        if compressed and message.compressed_content is not None:
            message = attrs.evolve(message, content=message.compressed_content)
        out.append(message.to_kit())
    return out


def _tool_descriptions(tools: Sequence[Any] | None) -> list[dict[str, Any]]:
    out = []
    for tool in tools or ():
        if isinstance(tool, dict):
            function = tool.get("function", tool)
            out.append(
                {
                    "name": function["name"],
                    "description": function.get("description", ""),
                    "parameters": function.get("parameters", {"type": "object"}),
                }
            )
        else:
            out.append(
                {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
            )
    return out


class Model:
    """Agno's model base (see the module docstring). Its subclasses keep their keyword
    values in ``agno_settings``; any of them reads as an attribute."""

    agno_settings: dict[str, Any]

    def __init__(self, id: str, name: str | None = None, **params: Unpack[ModelParams]) -> None:
        """A model of one's own (a subclass answering `invoke` / `ainvoke`...), with the
        keywords every model takes."""
        self.id = id
        self.agno_settings = agno_values(type(self), BASE_PARAMS, {"name": name, **params})

    def __getattr__(self, name: str) -> Any:
        try:
            settings = object.__getattribute__(self, "agno_settings")
        except AttributeError:
            settings = {}
        if name in settings:
            return settings[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def get_provider(self) -> str:
        """The provider's name as Agno shows it (``"OpenAI"``)."""
        provider = self.agno_settings.get("provider") or self.agno_settings.get("name")
        return str(provider or type(self).__name__)

    def to_dict(self) -> dict[str, Any]:
        """``name``, ``id`` and ``provider``, as Agno describes a model."""
        fields = {
            "name": self.agno_settings.get("name"),
            "id": getattr(self, "id", None),
            "provider": self.agno_settings.get("provider"),
        }
        return {k: v for k, v in fields.items() if v is not None}

    @staticmethod
    def classify_error(error: ModelProviderError) -> ModelProviderError:
        """``error`` as its narrowest model error (`ModelProviderError.classify`)."""
        return ModelProviderError.classify(error)

    def parse_tool_calls(self, tool_calls_data: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Streamed tool-call pieces (OpenAI's shape, by ``index``) joined into whole calls."""
        calls: dict[int, dict[str, Any]] = {}
        for piece in tool_calls_data:
            index = int(piece.get("index", len(calls)))
            call = calls.setdefault(
                index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
            )
            call["id"] = piece.get("id") or call["id"]
            function = piece.get("function") or {}
            call["function"]["name"] += function.get("name") or ""
            call["function"]["arguments"] += function.get("arguments") or ""
        return [calls[i] for i in sorted(calls)]

    def get_instructions_for_model(self, tools: list[Any] | None = None) -> list[str] | None:
        """What the model adds to the agent's instructions (its ``instructions``; one
        string is one instruction)."""
        instructions = self.agno_settings.get("instructions")
        if not instructions:
            return None
        return [instructions] if isinstance(instructions, str) else list(instructions)

    def get_system_message_for_model(self, tools: list[Any] | None = None) -> str | None:
        """What the model adds to the agent's system message (its ``system_prompt``)."""
        prompt = self.agno_settings.get("system_prompt")
        return str(prompt) if prompt else None

    # -- one request ---------------------------------------------------------------------

    async def _infer(
        self,
        messages: Sequence[Any],
        response_format: Any,
        tools: Sequence[Any] | None,
        tool_choice: Any,
        compressed: bool,
    ) -> AsyncIterator[dict[str, Any]]:
        """The model's ``infer`` items for one request, on a component its route defines on
        the process's shared runtime for the request's length (on the runtime's loop)."""
        from ..shared_runtime import default_runtime

        runtime = default_runtime()
        items = self._infer_on(runtime, messages, response_format, tools, tool_choice, compressed)
        async for item in runtime.sync_bridge.astream(items):
            yield item

    async def _infer_on(
        self,
        runtime: Any,
        messages: Sequence[Any],
        response_format: Any,
        tools: Sequence[Any] | None,
        tool_choice: Any,
        compressed: bool,
    ) -> AsyncIterator[dict[str, Any]]:
        from ferrule_kit.content.messages import converter

        from ..agent.langmodel import component_name, routing_kernel
        from ..agent.output_schema import structured_output
        from . import model_request

        route = self.route(routing_kernel(runtime))  # type: ignore[attr-defined]
        name = component_name("model")
        inputs = model_request(
            self,
            {"messages": [converter.unstructure(m) for m in _kit_messages(messages, compressed)]},
        )
        if tools:
            inputs["tools"] = [
                {"type": "function", "function": d} for d in _tool_descriptions(tools)
            ]
        if tool_choice is not None:
            inputs["tool_choice"] = tool_choice
        if response_format is not None:
            output = structured_output(response_format)
            if output is not None:
                inputs["output_schema"] = output.schema
        await runtime.adefine(route.component_type, name, route.attributes)
        try:
            stream = runtime.acall_iter_method(name, "infer", inputs)
            try:
                async for item in stream:
                    yield item
            finally:
                await stream.aclose()
        finally:
            await runtime.adelete(name)

    async def ainvoke(
        self,
        messages: list[Message],
        assistant_message: Message | None = None,
        response_format: Any = None,
        *args: Any,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        run_response: Any = None,
        compress_tool_results: bool = False,
        retry_with_guidance: bool = False,
        **kwargs: Any,
    ) -> ModelResponse:
        """One request: the model's reply (its tool calls asked for, not run)."""
        from ferrule_kit.models.lm import MessageAccumulator

        _no_more(args, kwargs)

        from ferrule_kit.errors import InvalidToolCallError

        from ..agent.model_settings import GUIDANCE

        folded = MessageAccumulator()
        async for item in self._infer(
            messages, response_format, tools, tool_choice, compress_tool_results
        ):
            folded.add(item)
        try:
            reply = folded.message()
        except InvalidToolCallError as error:
            if not retry_with_guidance:
                raise
            guidance = Message(role="user", content=GUIDANCE.format(error=error.message))
            return await self.ainvoke(
                [*messages, guidance],
                assistant_message,
                response_format,
                tools=tools,
                tool_choice=tool_choice,
                run_response=run_response,
                compress_tool_results=compress_tool_results,
            )
        response = ModelResponse.from_kit(reply, folded.usage)
        if assistant_message is not None:
            assistant_message.content = response.content
            assistant_message.tool_calls = response.tool_calls or None
            assistant_message.reasoning_content = response.reasoning_content
            if response.response_usage is not None:
                assistant_message.metrics = response.response_usage
        return response

    def invoke(
        self,
        messages: list[Message],
        assistant_message: Message | None = None,
        response_format: Any = None,
        *args: Any,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        run_response: Any = None,
        compress_tool_results: bool = False,
        retry_with_guidance: bool = False,
        **kwargs: Any,
    ) -> ModelResponse:
        """`ainvoke`, waited for."""
        _no_more(args, kwargs)
        return _wait(
            self.ainvoke(
                messages,
                assistant_message,
                response_format,
                tools=tools,
                tool_choice=tool_choice,
                run_response=run_response,
                compress_tool_results=compress_tool_results,
                retry_with_guidance=retry_with_guidance,
            )
        )

    async def ainvoke_stream(
        self,
        messages: list[Message],
        assistant_message: Message | None = None,
        response_format: Any = None,
        *args: Any,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        run_response: Any = None,
        compress_tool_results: bool = False,
        retry_with_guidance: bool = False,
        **kwargs: Any,
    ) -> AsyncIterator[ModelResponse]:
        """One request, streamed: a `ModelResponse` per piece (text, reasoning, tool-call
        pieces in OpenAI's shape), the last with the usage."""
        _no_more(args, kwargs)
        async for item in self._infer(
            messages, response_format, tools, tool_choice, compress_tool_results
        ):
            yield _piece(item)

    def invoke_stream(
        self,
        messages: list[Message],
        assistant_message: Message | None = None,
        response_format: Any = None,
        *args: Any,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        run_response: Any = None,
        compress_tool_results: bool = False,
        retry_with_guidance: bool = False,
        **kwargs: Any,
    ) -> Iterator[ModelResponse]:
        """`ainvoke_stream`, as a plain iterator."""
        _no_more(args, kwargs)
        return _bridge().stream(
            self.ainvoke_stream(
                messages,
                assistant_message,
                response_format,
                tools=tools,
                tool_choice=tool_choice,
                run_response=run_response,
                compress_tool_results=compress_tool_results,
            )
        )

    # -- a turn, its tool calls run ------------------------------------------------------

    async def aresponse(
        self,
        messages: list[Message],
        response_format: Any = None,
        *,
        tools: list[Any] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        tool_call_limit: int | None = None,
        run_response: Any = None,
        send_media_to_model: bool = True,
        compression_manager: Any = None,
        after_tool_results: Any = None,
    ) -> ModelResponse:
        """The model's answer to ``messages``, its tool calls (``tools``: functions,
        `Function`s or toolkits) run by ferrule's agent loop until it answers."""
        from ..agent import Agent
        from ..agent.failed_runs import raise_failed

        agent: Agent[Any] = Agent(
            model=self, tools=list(tools or ()), compression_manager=compression_manager
        )
        run = await agent.arun(
            _kit_messages(messages),
            output_schema=response_format,
            tool_call_limit=tool_call_limit,
        )
        raise_failed(run)  # Agno's model raises what failed (a run reports it)
        response = ModelResponse(role="assistant", content=run.content)
        response.tool_executions = _executions([m.to_kit() for m in run.messages])
        return response

    def response(
        self,
        messages: list[Message],
        response_format: Any = None,
        *,
        tools: list[Any] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        tool_call_limit: int | None = None,
        run_response: Any = None,
        send_media_to_model: bool = True,
        compression_manager: Any = None,
        after_tool_results: Any = None,
    ) -> ModelResponse:
        """`aresponse`, waited for."""
        return _wait(
            self.aresponse(
                messages,
                response_format,
                tools=tools,
                tool_choice=tool_choice,
                tool_call_limit=tool_call_limit,
                compression_manager=compression_manager,
            )
        )

    async def aresponse_stream(
        self,
        messages: list[Message],
        response_format: Any = None,
        *,
        tools: list[Any] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        tool_call_limit: int | None = None,
        stream_model_response: bool = True,
        run_response: Any = None,
        send_media_to_model: bool = True,
        compression_manager: Any = None,
        after_tool_results: Any = None,
    ) -> AsyncIterator[ModelResponse]:
        """`aresponse`, as the stream of its text pieces then the whole answer."""
        from ..agent import Agent
        from ..agent.events import RunErrorEvent

        agent: Agent[Any] = Agent(
            model=self, tools=list(tools or ()), compression_manager=compression_manager
        )
        stream = agent.arun(
            _kit_messages(messages),
            stream=True,
            output_schema=response_format,
            tool_call_limit=tool_call_limit,
        )
        async for event in stream:
            content = getattr(event, "content", None)
            if isinstance(event, RunErrorEvent) and event.error is not None:
                raise event.error  # Agno's model raises what failed (a run reports it)
            if getattr(event, "event", None) == "RunContent" and content:
                yield ModelResponse(role="assistant", content=content)

    def response_stream(
        self,
        messages: list[Message],
        response_format: Any = None,
        *,
        tools: list[Any] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        tool_call_limit: int | None = None,
        stream_model_response: bool = True,
        run_response: Any = None,
        send_media_to_model: bool = True,
        compression_manager: Any = None,
        after_tool_results: Any = None,
    ) -> Iterator[ModelResponse]:
        """`aresponse_stream`, as a plain iterator."""
        return _bridge().stream(
            self.aresponse_stream(
                messages,
                response_format,
                tools=tools,
                tool_choice=tool_choice,
                tool_call_limit=tool_call_limit,
                compression_manager=compression_manager,
            )
        )

    # -- tokens --------------------------------------------------------------------------

    async def acount_tokens(
        self, messages: list[Message], tools: list[Any] | None = None, output_schema: Any = None
    ) -> int:
        """The tokens ``messages`` (and ``tools``) take: the provider's own count where its
        component has one, else an estimate (a token per four characters)."""
        text = json.dumps(
            [m.to_dict() if isinstance(m, Message) else m for m in messages], default=str
        ) + json.dumps(_tool_descriptions(tools), default=str)
        return math.ceil(len(text) / 4)

    def count_tokens(
        self, messages: list[Message], tools: list[Any] | None = None, output_schema: Any = None
    ) -> int:
        """`acount_tokens`, waited for."""
        return _wait(self.acount_tokens(messages, tools, output_schema))

    # -- Agno's own loop: ferrule's agent runs it ----------------------------------------

    def process_response_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        raise _refused("process_response_stream")

    async def aprocess_response_stream(
        self, *args: Any, **kwargs: Any
    ) -> AsyncIterator[ModelResponse]:
        raise _refused("aprocess_response_stream")
        yield  # an async generator, as Agno's

    def run_function_call(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        raise _refused("run_function_call")

    def run_function_calls(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        raise _refused("run_function_calls")

    async def arun_function_call(self, *args: Any, **kwargs: Any) -> Any:
        raise _refused("arun_function_call")

    async def arun_function_calls(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise _refused("arun_function_calls")
        yield

    def create_function_call_result(self, *args: Any, **kwargs: Any) -> Message:
        raise _refused("create_function_call_result")

    def create_tool_call_limit_error_result(self, *args: Any, **kwargs: Any) -> Message:
        raise _refused("create_tool_call_limit_error_result")

    def format_function_call_results(self, *args: Any, **kwargs: Any) -> None:
        raise _refused("format_function_call_results")

    def get_function_call_to_run_from_tool_execution(self, *args: Any, **kwargs: Any) -> Any:
        raise _refused("get_function_call_to_run_from_tool_execution")

    def get_function_calls_to_run(self, *args: Any, **kwargs: Any) -> list[Any]:
        raise _refused("get_function_calls_to_run")


def _no_more(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Agno's providers take these arguments, three of them by position (Agno passes them
    all by name): more is a mistake, not a setting."""
    if args:
        raise TypeError(f"invoke takes at most 3 positional arguments ({len(args)} more given)")
    if kwargs:
        raise TypeError(f"invoke got an unexpected keyword argument {sorted(kwargs)[0]!r}")


def _piece(item: dict[str, Any]) -> ModelResponse:
    message = item.get("message", {})
    text = "".join(p.get("text", "") for p in message.get("content", ()) if p.get("type") == "text")
    reasoning = "".join(p.get("text", "") for p in message.get("reasoning", ()))
    piece = ModelResponse(
        role="assistant",
        content=text or None,
        reasoning_content=reasoning or None,
        tool_calls=list(message.get("tool_calls", ())),
    )
    usage = item.get("usage")
    if usage:
        piece.response_usage = ModelResponse.from_kit(_empty_assistant(), usage).response_usage
    return piece


def _empty_assistant() -> Any:
    from ferrule_kit.content.messages import Message as KitMessage

    return KitMessage("assistant")


def _executions(messages: Sequence[Any]) -> list[Any]:
    """The tool calls a run's messages hold, each with its result."""
    from .response import ToolExecution

    results = {m.tool_call_id: m.text for m in messages if m.role == "tool"}
    return [
        ToolExecution(
            tool_call_id=call.id,
            tool_name=call.name,
            tool_args=call.arguments if isinstance(call.arguments, dict) else None,
            result=results.get(call.id),
        )
        for m in messages
        if m.role == "assistant"
        for call in m.tool_calls
    ]


def _bridge() -> Any:
    from ..shared_runtime import default_runtime

    return default_runtime().sync_bridge


def _wait(coroutine: Any) -> Any:
    """A coroutine run to its end from sync code, on the shared runtime's loop."""
    return _bridge().run(coroutine)


def _model_signature() -> inspect.Signature:
    signature = agno_signature(BASE_PARAMS, inspect.Parameter.empty)
    params = list(signature.parameters.values())
    params[2] = params[2].replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)  # name
    return signature.replace(parameters=params)


Model.__init__.__signature__ = _model_signature()  # type: ignore[attr-defined]
