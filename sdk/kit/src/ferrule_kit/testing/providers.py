"""`ProviderConformance`: what every API provider plugin does alike, whatever its wire, as a
test suite its tests subclass. The kit's HTTP client (`ferrule_kit.network.http`) retries, times
out, types errors and hides keys the same way for every provider; each provider's tests
checked that with a copy of the same dozen tests, which are written here once.

A provider plugin's tests give the suite a ``provider`` fixture yielding a
`ProviderUnderTest`: the component defined against a validating
`ferrule_kit.testing.loopback.LoopbackServer` with the key ``secret``, and how that
provider's loopback speaks (a `ProviderWire`). Its class lists the provider's own fault
matrix: ``RETRYABLE`` (failures the client retries), ``TERMINAL`` (failures it reports at
once: the error class and words of the provider's message it must carry), ``REFUSED``
(content it does not take) and ``KEY_VARIABLES`` (where a missing key is looked for).
`ProviderUnderTest.define` defines the component as the suite expects it::

    class TestMyProvider(ProviderConformance):
        KEY_VARIABLES = ("MY_API_KEY",)
        RETRYABLE = {"429": Reply.json(..., status=429, headers={"retry-after": "0"})}
        TERMINAL = {"401": (Reply.json(..., status=401), AuthenticationError, "invalid key")}

        @pytest.fixture
        async def provider(self, server):  # a LoopbackServer validating My's requests
            async with AsyncRuntime() as rt:
                yield await ProviderUnderTest.define(
                    rt, server, MY_WIRE, "my_language_model", "my-model", "my-secret-key"
                )

Checked: a text reply streams; each ``RETRYABLE`` failure is retried and the same request
sent again; retrying stops after ``max_retries`` with the typed error of the last failure;
each ``TERMINAL`` failure is its error class, with the provider's words and the HTTP
status, after one request and without the key; each ``REFUSED`` part is refused, naming
where it stands, before any request; a reset after the first byte and an end before the reply's
end are `StreamInterruptedError`, a stall before the first byte or mid-stream is
`ProviderTimeoutError` naming the read timeout, a record that is not JSON is
`ProviderProtocolError` (what streamed before the failure is kept; nothing is sent again);
abandoning a stream closes its connection; the key reaches no error, repr or debug log;
and a missing key fails ``define``, naming where it was looked for.

The suite's messages (`USER`, and `WEATHER`, a tool) are the LM contract's input shapes;
`ProviderUnderTest.collect` and `ProviderUnderTest.collect_until_error` run ``infer``, for
the provider's own tests too. For a provider's tests of its own: `Definer`, a ``define``
fixture's numbered components of one type, and `collect`, what a component's ``infer``
streams.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs
import pytest
from ferrule_kernel import InvalidInputError, configure_logging

from ferrule_kit.errors import (
    AuthenticationError,
    MissingAPIKeyError,
    ModelError,
    ProviderProtocolError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    StreamInterruptedError,
)

from .conformance import fold
from .loopback import Action, LoopbackServer, Pause, Reply, Reset

__all__ = [
    "USER",
    "WEATHER",
    "Definer",
    "Failure",
    "ProviderConformance",
    "ProviderUnderTest",
    "ProviderWire",
    "Refusal",
    "collect",
]

#: A user's one-word message, in the LM contract's input shape.
USER: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
#: A tool with one required argument, in the LM contract's input shape.
WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather now",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@attrs.frozen
class ProviderWire:
    """How a provider's loopback speaks, for the suite to script replies in it."""

    #: The records of a reply streaming these texts: ``opening`` records, then one record
    #: a text, then those that end the reply.
    pieces: Callable[[Sequence[str]], list[Any]]
    #: ``(pieces, delay=seconds between them)``: a streamed `Reply` of records, raw bytes,
    #: `Pause` and `Reset` actions in the provider's framing.
    stream: Callable[..., Reply]
    #: ``(status, message, headers)``: the provider's error reply saying ``message``.
    error: Callable[[int, str, Mapping[str, str]], Reply]
    #: One record whose data is not JSON, framed as the provider frames records.
    not_json: bytes
    opening: int = 0


@attrs.frozen
class ProviderUnderTest:
    """A provider's component defined against a loopback server, and how it speaks."""

    #: A `ferrule.AsyncRuntime` (or anything with its ``define``, ``call_iter_method`` and
    #: ``kernel``).
    runtime: Any
    #: The component's name: defined with ``api_key=secret``, ``read_timeout`` and
    #: ``max_retries`` as below, on ``server``.
    name: str
    server: LoopbackServer
    wire: ProviderWire
    secret: str = attrs.field(repr=False)
    #: What a component is defined as without a key (the type and its ``model``).
    component_type: str
    model: str
    read_timeout: float = 0.5
    max_retries: int = 2

    @classmethod
    async def define(
        cls,
        runtime: Any,
        server: LoopbackServer,
        wire: ProviderWire,
        component_type: str,
        model: str,
        secret: str,
        *,
        path: str | None = "",
        **attributes: Any,
    ) -> ProviderUnderTest:
        """Define ``component_type`` on ``runtime`` against ``server`` (its URL and ``path``
        as ``base_url``; ``path=None`` leaves ``base_url`` to the environment) with the key
        ``secret``, a 0.5 s read timeout and two retries, unless ``attributes`` say else."""
        settings: dict[str, Any] = {
            "model": model,
            "api_key": secret,
            "read_timeout": 0.5,
            "max_retries": 2,
            **attributes,
        }
        if path is not None:
            settings["base_url"] = server.url + path
        name = component_type.removesuffix("_language_model")
        await runtime.define(component_type, name, settings)
        return cls(
            runtime,
            name,
            server,
            wire,
            secret,
            component_type,
            model,
            read_timeout=settings["read_timeout"],
            max_retries=settings["max_retries"],
        )

    async def collect(self, inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every item ``infer`` streams for ``inputs``."""
        return await collect(self.runtime, self.name, inputs)

    async def collect_until_error(
        self, inputs: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], ModelError]:
        """The items ``infer`` streams before it fails, and its error (a failure if it
        does not fail with a `ModelError`)."""
        items: list[dict[str, Any]] = []
        with pytest.raises(ModelError) as info:
            async for item in self.runtime.call_iter_method(self.name, "infer", inputs):
                items.append(item)
        return items, info.value

    def texts(self, *texts: str) -> list[Any]:
        """The records of a reply streaming ``texts``."""
        return self.wire.pieces(texts)

    def through(self, texts: Sequence[str], count: int) -> list[Any]:
        """The records of a reply of ``texts`` up to its ``count``-th text, nothing after."""
        return self.wire.pieces(texts)[: self.wire.opening + count]


async def collect(runtime: Any, name: str, inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every item the component ``name``'s ``infer`` streams for ``inputs`` on ``runtime``."""
    return [i async for i in runtime.call_iter_method(name, "infer", inputs)]


@attrs.define
class Definer:
    """A provider test module's ``define`` fixture: ``await define(model, **attributes)``
    defines one more component of ``component_type`` on ``runtime`` (named ``prefix`` and
    its number, so tests never collide), with ``attributes`` over ``defaults`` and
    ``model`` over both when given, and answers its name."""

    runtime: Any
    component_type: str
    prefix: str
    defaults: Mapping[str, Any] = attrs.field(factory=dict)
    defined: int = 0

    async def __call__(self, model: str | None = None, **attributes: Any) -> str:
        self.defined += 1
        name = f"{self.prefix}{self.defined}"
        settings = {**self.defaults, **attributes}
        if model is not None:
            settings["model"] = model
        await self.runtime.define(self.component_type, name, settings)
        return name


#: A failure reported at once: the reply, the error class, words of its message.
Failure = tuple[Reply, type[ModelError], str]
#: Content refused: a user message's part, the error class, words of its message.
Refusal = tuple[dict[str, Any], type[InvalidInputError], Sequence[str]]


def _texts(items: list[dict[str, Any]]) -> list[str]:
    return [i["message"]["content"][0]["text"] for i in items if not i.get("finish_reason")]


class ProviderConformance:
    """The suite; see the module docstring. Needs a ``provider`` fixture and the fault
    matrix as class attributes."""

    #: Failures the client retries, by test id: each scripted once, before a good reply.
    RETRYABLE: ClassVar[Mapping[str, Reply]] = {}
    #: Failures reported at once, by test id: (the reply, the error class, words of its message).
    TERMINAL: ClassVar[Mapping[str, Failure]] = {}
    #: Content refused before any request, by test id: (a user message's part, the error
    #: class, words of its message).
    REFUSED: ClassVar[Mapping[str, Refusal]] = {}
    #: The environment variables a key is read from; a missing key's error names each.
    KEY_VARIABLES: ClassVar[tuple[str, ...]] = ()
    #: Environment variables cleared with the key (an endpoint that would need no key).
    ENDPOINT_VARIABLES: ClassVar[tuple[str, ...]] = ()

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        tables = {"retryable": self.RETRYABLE, "terminal": self.TERMINAL, "refused": self.REFUSED}
        for argument, table in tables.items():
            if argument in metafunc.fixturenames:
                assert table, f"{type(self).__name__} must list its {argument.upper()} failures"
                metafunc.parametrize(argument, list(table.values()), ids=list(table))

    async def test_provider_streams_a_text_reply(self, provider: ProviderUnderTest) -> None:
        provider.server.script(provider.wire.stream(provider.texts("Hel", "lo")))
        items = await provider.collect({"messages": [USER]})
        assert _texts(items) == ["Hel", "lo"] and fold(items).message().text == "Hello"
        assert items[-1]["finish_reason"] == "stop"

    async def test_provider_retries_a_retryable_failure(
        self, provider: ProviderUnderTest, retryable: Reply
    ) -> None:
        provider.server.script(retryable, provider.wire.stream(provider.texts("Recovered.")))
        items = await provider.collect({"messages": [USER]})
        assert fold(items).message().text == "Recovered."
        first, again = provider.server.requests
        assert first.body == again.body

    async def test_provider_stops_retrying_after_max_retries(
        self, provider: ProviderUnderTest
    ) -> None:
        attempts = provider.max_retries + 1
        overloaded = provider.wire.error(503, "Overloaded", {"retry-after": "0"})
        provider.server.script(*[overloaded] * attempts)
        _, error = await provider.collect_until_error({"messages": [USER]})
        assert isinstance(error, ProviderUnavailableError), error
        assert error.details["status"] == 503 and error.details["attempts"] == attempts
        assert len(provider.server.requests) == attempts

    async def test_provider_reports_a_terminal_failure_at_once(
        self, provider: ProviderUnderTest, terminal: Failure
    ) -> None:
        reply, error_class, words = terminal
        provider.server.script(reply)  # a retry would find no reply: the server fails the test
        _, error = await provider.collect_until_error({"messages": [USER]})
        assert isinstance(error, error_class), error
        assert words in error.message and len(provider.server.requests) == 1
        assert error.details["status"] == reply.status
        assert provider.secret not in error.message + json.dumps(error.to_dict())

    async def test_provider_refuses_content_it_does_not_take_before_any_request(
        self,
        provider: ProviderUnderTest,
        refused: Refusal,
    ) -> None:
        part, error_class, words = refused
        with pytest.raises(error_class) as info:
            await provider.collect({"messages": [{"role": "user", "content": [part]}]})
        assert [word for word in words if word not in info.value.message] == []
        assert info.value.errors[0]["path"] == "$.messages[0].content[0]"
        assert provider.server.requests == []

    async def test_provider_reset_after_the_first_byte_is_an_interrupted_stream(
        self, provider: ProviderUnderTest
    ) -> None:
        texts = ("one", "two", "three")
        # the pause lets the records before it arrive before the reset discards the socket
        cut = [*provider.through(texts, 2), Pause(0.05), Reset()]
        provider.server.script(provider.wire.stream(cut))
        items, error = await provider.collect_until_error({"messages": [USER]})
        assert isinstance(error, StreamInterruptedError), error
        assert _texts(items) == ["one", "two"] and len(provider.server.requests) == 1

    async def test_provider_end_before_the_reply_ends_is_an_interrupted_stream(
        self, provider: ProviderUnderTest
    ) -> None:
        provider.server.script(provider.wire.stream(provider.through(("one", "two"), 2)))
        items, error = await provider.collect_until_error({"messages": [USER]})
        assert isinstance(error, StreamInterruptedError), error
        assert _texts(items) == ["one", "two"] and len(provider.server.requests) == 1

    @pytest.mark.parametrize("before_the_first_byte", [True, False])
    async def test_provider_stall_hits_the_read_timeout(
        self, provider: ProviderUnderTest, before_the_first_byte: bool
    ) -> None:
        texts = ("slow", "er")
        records = provider.texts(*texts)
        cut = 0 if before_the_first_byte else provider.wire.opening + 1
        provider.server.script(provider.wire.stream([*records[:cut], Pause(2.0), *records[cut:]]))
        items, error = await provider.collect_until_error({"messages": [USER]})
        assert isinstance(error, ProviderTimeoutError), error
        assert f"{provider.read_timeout:g}s" in error.message
        assert _texts(items) == ([] if before_the_first_byte else ["slow"])
        assert len(provider.server.requests) == 1

    async def test_provider_a_record_that_is_not_json_is_a_protocol_error(
        self, provider: ProviderUnderTest
    ) -> None:
        cut: list[Action] = [*provider.through(("ok", "more"), 1), provider.wire.not_json]
        provider.server.script(provider.wire.stream(cut))
        items, error = await provider.collect_until_error({"messages": [USER]})
        assert isinstance(error, ProviderProtocolError) and "not JSON" in error.message, error
        assert _texts(items) == ["ok"]

    async def test_provider_abandoning_a_stream_closes_its_connection(
        self, provider: ProviderUnderTest
    ) -> None:
        words = [f"w{i} " for i in range(200)]
        provider.server.script(provider.wire.stream(provider.texts(*words), delay=0.01))
        stream = provider.runtime.call_iter_method(provider.name, "infer", {"messages": [USER]})
        await stream.__anext__()
        await stream.aclose()
        await provider.server.wait_disconnected(0, timeout=2)

    async def test_provider_never_shows_its_key(
        self, provider: ProviderUnderTest, capsys: pytest.CaptureFixture[str]
    ) -> None:
        secret = provider.secret
        configure_logging(debug=True)
        try:
            provider.server.script(
                provider.wire.error(503, f"Overloaded (key {secret})", {"retry-after": "0"}),
                provider.wire.error(401, f"invalid key: {secret}", {}),
            )
            _, error = await provider.collect_until_error({"messages": [USER]})
        finally:
            configure_logging(debug=False)
        logs = capsys.readouterr().err
        assert isinstance(error, AuthenticationError), error
        assert "retrying" in logs  # the debug log ran
        component = provider.runtime.kernel.component(provider.name)
        seen = {
            "message": error.message,
            "to_dict": json.dumps(error.to_dict()),
            "repr": repr(error),
            "component": repr(component),
            "client": repr(getattr(component, "client", None)),
            "components": str(provider.runtime.kernel.components()),
            "logs": logs,
        }
        assert [where for where, text in seen.items() if secret in text] == []

    async def test_provider_without_a_key_fails_at_define_naming_where_it_looked(
        self, provider: ProviderUnderTest, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        assert self.KEY_VARIABLES, f"{type(self).__name__} must name its KEY_VARIABLES"
        for variable in (*self.KEY_VARIABLES, *self.ENDPOINT_VARIABLES):
            monkeypatch.delenv(variable, raising=False)
        with pytest.raises(MissingAPIKeyError) as info:
            await provider.runtime.define(
                provider.component_type, "without_a_key", {"model": provider.model}
            )
        assert all(variable in info.value.message for variable in self.KEY_VARIABLES)
