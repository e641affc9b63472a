"""One Runtime contract, run against the in-process kernel and against `ferrule serve`.

Every test here gets a runtime factory parametrised over ``in-process`` (``Runtime(kernel=...)``)
and ``remote`` (``Runtime(url=...)`` against a real server on a loopback port, serving a
kernel with the same plugins): the same calls must give the same results, the same typed
errors with the same messages, and closing a stream must stop its producer promptly.
The server runs in a thread of this process, so the producers' records are visible here.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
from ferrule import AsyncRuntime, Runtime
from ferrule.remote import HttpTransport
from ferrule.runtime import AsyncRemoteRuntime, RemoteRuntime
from ferrule.server import ServerThread
from ferrule_kernel import (
    ComponentTypeSpec,
    DuplicateComponentError,
    FerruleError,
    InvalidInputError,
    Kernel,
    MethodSpec,
    OperatorSpec,
    PluginError,
    UnknownComponentError,
    UnknownComponentTypeError,
    UnknownMethodError,
    UnknownOperatorError,
    hookimpl,
)
from ferrule_kit import kit_plugin
from ferrule_kit.errors import ModelError

pytestmark = pytest.mark.timeout(60)

# -- the test plugin: plain objects registered with Kernel.register --------------------


@attrs.frozen
class Text:
    text: str


@attrs.frozen
class Count:
    n: int


@attrs.frozen
class Options:
    temperature: float = 1.0


@attrs.frozen
class Nested:
    text: str
    options: Options = attrs.Factory(Options)


@attrs.frozen
class Failing:
    n: int
    message: str


@attrs.frozen
class Tagged:
    tag: str


@attrs.frozen
class NotebookAttributes:
    tag: str
    title: str = ""


class Producer:
    """What a cancellable producer did: how many items, and whether it was closed."""

    def __init__(self) -> None:
        self.produced = 0
        self.closed = threading.Event()


PRODUCERS: dict[str, Producer] = {}
CLOSED_COMPONENTS: dict[str, threading.Event] = {}


def producer(tag: str) -> Producer:
    return PRODUCERS.setdefault(tag, Producer())


async def shout(inputs: Text) -> dict[str, str]:
    return {"text": inputs.text.upper()}


def nested(inputs: Nested) -> dict[str, Any]:
    return {"text": inputs.text, "temperature": inputs.options.temperature}


def fail(inputs: Text) -> dict[str, str]:
    raise RuntimeError(f"boom: {inputs.text}")


async def count(inputs: Count):
    for i in range(inputs.n):
        await asyncio.sleep(0)
        yield {"i": i}


def count_blocking(inputs: Count):
    for i in range(inputs.n):
        yield {"i": i}


async def fail_after(inputs: Failing):
    for i in range(inputs.n):
        yield {"i": i}
    raise ValueError(inputs.message)


async def model_failure(inputs: Text):
    yield {"text": inputs.text}
    raise ModelError(f"the backend gave up on {inputs.text!r}", provider="contract")


async def endless(inputs: Tagged):
    log = producer(inputs.tag)
    try:
        while True:
            log.produced += 1
            yield {"i": log.produced}
            await asyncio.sleep(0.001)
    finally:
        log.closed.set()


def endless_blocking(inputs: Tagged):
    # Each item takes a while, as a local model's token does: a consumer that goes away
    # does so while the next step runs in its worker thread.
    log = producer(inputs.tag)
    try:
        while True:
            log.produced += 1
            yield {"i": log.produced}
            time.sleep(0.02)
    finally:
        log.closed.set()


class Notebook:
    """A component with sync, async and streaming methods, and a close()."""

    def __init__(self, attributes: NotebookAttributes) -> None:
        self.tag = attributes.tag
        self.title = attributes.title
        self.pages: list[str] = []
        CLOSED_COMPONENTS[self.tag] = threading.Event()

    def write(self, inputs: Text) -> dict[str, int]:
        self.pages.append(inputs.text)
        return {"pages": len(self.pages)}

    async def read(self, inputs: Count) -> dict[str, Any]:
        return {"title": self.title, "pages": self.pages[: inputs.n]}

    async def leaf(self, inputs: Count):
        for page in self.pages[: inputs.n]:
            yield {"page": page}

    async def tail(self, inputs: Tagged):
        async for item in endless(inputs):
            yield item

    def close(self) -> None:
        CLOSED_COMPONENTS[self.tag].set()


class ContractPlugin:
    @hookimpl
    def ferrule_register_operators(self):
        return [
            OperatorSpec("shout", shout, Text),
            OperatorSpec("nested", nested, Nested, blocking=False),
            OperatorSpec("fail", fail, Text),
            OperatorSpec("count", count, Count, streaming=True),
            OperatorSpec("count_blocking", count_blocking, Count, streaming=True),
            OperatorSpec("fail_after", fail_after, Failing, streaming=True),
            OperatorSpec("model_failure", model_failure, Text, streaming=True),
            OperatorSpec("endless", endless, Tagged, streaming=True),
            OperatorSpec("endless_blocking", endless_blocking, Tagged, streaming=True),
        ]

    @hookimpl
    def ferrule_register_component_types(self):
        methods = (
            MethodSpec("write", Text),
            MethodSpec("read", Count),
            MethodSpec("leaf", Count, streaming=True),
            MethodSpec("tail", Tagged, streaming=True),
        )
        return [ComponentTypeSpec("notebook", Notebook, NotebookAttributes, methods)]


def contract_kernel() -> Kernel:
    kernel = Kernel(plugins=[kit_plugin])
    # a fixed name: error messages name the plugin, and must match across both kernels
    kernel.register(ContractPlugin(), name="contract")
    return kernel


# -- fixtures ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ServerThread(contract_kernel()) as url:
        yield url


@pytest.fixture(params=["in-process", "remote"])
def make_runtime(request) -> Iterator[Callable[[], Runtime]]:
    url = request.getfixturevalue("server_url") if request.param == "remote" else None
    made: list[Runtime] = []

    def make() -> Runtime:
        rt = Runtime(kernel=contract_kernel()) if url is None else Runtime(url=url)
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.stop()


@pytest.fixture
def rt(make_runtime) -> Runtime:
    return make_runtime()


@pytest.fixture(params=["in-process", "remote"])
async def art(request) -> Any:
    if request.param == "in-process":
        runtime = AsyncRuntime(kernel=contract_kernel())
    else:
        runtime = AsyncRuntime(url=request.getfixturevalue("server_url"))
    yield runtime
    await runtime.stop()


def unique(prefix: str = "c") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def stops_promptly(log: Producer) -> None:
    """The producer was closed, and produces nothing more."""
    assert log.closed.wait(5), "the producer was not closed"
    produced = log.produced
    time.sleep(0.1)
    assert log.produced == produced


# -- the construction ----------------------------------------------------------------


def test_a_url_gives_the_remote_twin_of_each_runtime(server_url):
    remote = Runtime(url=server_url)
    assert isinstance(remote, RemoteRuntime) and isinstance(remote, Runtime)
    remote.stop()
    assert isinstance(AsyncRuntime(url=server_url), AsyncRemoteRuntime)
    assert type(Runtime(kernel=contract_kernel())) is Runtime


@pytest.mark.parametrize(
    ("base", "remote"), [(Runtime, RemoteRuntime), (AsyncRuntime, AsyncRemoteRuntime)]
)
def test_the_remote_runtimes_are_the_one_implementation_over_http(base, remote, server_url):
    # One implementation over two transports: the remote names add no method of their own,
    # and nothing of the in-process kernel is reachable from a remote runtime.
    assert issubclass(remote, base)
    assert not {n for n, v in vars(remote).items() if not n.startswith("_") and callable(v)}
    runtime = base(url=server_url)
    assert isinstance(runtime._core.engine.transport, HttpTransport)
    assert not hasattr(runtime, "kernel") and runtime.url == server_url.rstrip("/")


def test_token_and_kernel_belong_to_one_kind_of_runtime(server_url):
    with pytest.raises(InvalidInputError, match="token"):
        Runtime(token="x")
    with pytest.raises(InvalidInputError, match="kernel"):
        Runtime(url=server_url, kernel=contract_kernel())
    with pytest.raises(InvalidInputError, match="url"):
        Runtime(url="ftp://nowhere")


# -- results -------------------------------------------------------------------------


def test_call_and_call_iter(rt):
    assert rt.call("echo", {"text": "Hello world"}) == {"text": "Hello world"}
    assert rt.call("shout", {"text": "hi"}) == {"text": "HI"}
    assert rt.call("nested", {"text": "t", "options": {"temperature": 0.5}}) == {
        "text": "t",
        "temperature": 0.5,
    }
    assert list(rt.call_iter("spell", {"text": "abc"})) == [{"text": c} for c in "abc"]
    assert list(rt.call_iter("count", {"n": 3})) == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert list(rt.call_iter("count_blocking", {"n": 2})) == [{"i": 0}, {"i": 1}]
    assert list(rt.call_iter("count", {"n": 0})) == []


def test_define_call_method_iter_method_delete(rt):
    name, tag = unique(), unique("tag")
    rt.define("notebook", name, {"tag": tag, "title": "Log"})
    assert rt.call_method(name, "write", {"text": "one"}) == {"pages": 1}
    assert rt.call_method(name, "write", {"text": "two"}) == {"pages": 2}
    assert rt.call_method(name, "read", {"n": 5}) == {"title": "Log", "pages": ["one", "two"]}
    assert list(rt.call_iter_method(name, "leaf", {"n": 2})) == [{"page": "one"}, {"page": "two"}]
    # "component.method" reaches a method through call_iter too
    assert list(rt.call_iter(f"{name}.leaf", {"n": 1})) == [{"page": "one"}]
    rt.delete(name)
    assert CLOSED_COMPONENTS[tag].is_set()


def test_many_calls_at_once_from_threads(rt):
    results: list[dict[str, str]] = []

    def worker(i: int) -> None:
        results.append(rt.call("shout", {"text": f"w{i}"}))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["text"] for r in results) == sorted(f"W{i}" for i in range(20))


def test_introspection(rt):
    assert {"shout", "count", "echo"} <= {op["name"] for op in rt.operators()}
    notebook = next(t for t in rt.component_types() if t["name"] == "notebook")
    assert [m["name"] for m in notebook["methods"]] == ["write", "read", "leaf", "tail"]
    assert notebook["attributes_schema"]["required"] == ["tag"]
    contract = next(p for p in rt.plugins() if p["name"] == "contract")
    assert "notebook" in contract["component_types"] and contract["error"] is None


def test_introspection_is_the_same_in_process_and_remote(server_url):
    local, remote = Runtime(kernel=contract_kernel()), Runtime(url=server_url)
    try:
        assert remote.operators() == local.operators()
        assert remote.component_types() == local.component_types()
        assert remote.plugins() == local.plugins()
    finally:
        local.stop()
        remote.stop()


# -- typed errors ----------------------------------------------------------------------


def test_unknown_operator(rt):
    with pytest.raises(UnknownOperatorError, match="unknown operator 'nope'") as info:
        rt.call("nope", {})
    assert "'shout'" in info.value.message and info.value.details["operator"] == "nope"
    with pytest.raises(UnknownOperatorError):  # at once, not at the first item
        rt.call_iter("nope", {})


def test_unknown_component_type(rt):
    with pytest.raises(UnknownComponentTypeError, match="unknown component type 'nope'"):
        rt.define("nope", unique(), {})


def test_unknown_component_and_method(rt):
    with pytest.raises(UnknownComponentError, match="no component named 'ghost'"):
        rt.call_method("ghost", "read", {"n": 1})
    with pytest.raises(UnknownComponentError):
        rt.call_iter_method("ghost", "leaf", {"n": 1})
    name = unique()
    rt.define("notebook", name, {"tag": unique("tag")})
    with pytest.raises(UnknownMethodError, match="has no method 'erase'") as info:
        rt.call_method(name, "erase", {})
    assert info.value.details["methods"] == ["write", "read", "leaf", "tail"]


def test_invalid_input_names_each_field(rt):
    with pytest.raises(InvalidInputError) as info:
        rt.call("nested", {"text": 5, "options": {"temperature": "hot"}})
    assert info.value.errors == [
        {"path": "$.text", "message": "expected string, got integer"},
        {"path": "$.options.temperature", "message": "expected number, got string"},
    ]
    with pytest.raises(InvalidInputError, match=r"\$\.n: required field missing"):
        rt.call_iter("count", {})  # at once, as in-process
    with pytest.raises(InvalidInputError, match=r"\$\.tag"):
        rt.define("notebook", unique(), {"title": "no tag"})
    with pytest.raises(InvalidInputError, match="streams its output: use iter"):
        rt.call("count", {"n": 1})
    with pytest.raises(InvalidInputError, match="does not stream"):
        rt.call_iter("shout", {"text": "x"})


def test_duplicate_and_deleted_components(rt):
    name = unique()
    rt.define("notebook", name, {"tag": unique("tag")})
    with pytest.raises(DuplicateComponentError, match=f"a component named '{name}'"):
        rt.define("notebook", name, {"tag": unique("tag")})
    rt.delete(name)
    with pytest.raises(UnknownComponentError, match="was deleted"):
        rt.call_method(name, "read", {"n": 1})
    with pytest.raises(UnknownComponentError, match="was deleted"):
        rt.delete(name)


def test_plugin_errors_in_a_call_and_mid_stream(rt):
    with pytest.raises(PluginError, match="RuntimeError: boom: x") as info:
        rt.call("fail", {"text": "x"})
    assert info.value.details["plugin"] == "contract"
    received = []
    with pytest.raises(PluginError, match="ValueError: broke at 2"):
        for item in rt.call_iter("fail_after", {"n": 2, "message": "broke at 2"}):
            received.append(item)
    assert received == [{"i": 0}, {"i": 1}]  # every item before the error arrived
    received = []
    with pytest.raises(ModelError, match="gave up on 'q'") as model_info:  # an sdk error kind
        for item in rt.call_iter("model_failure", {"text": "q"}):
            received.append(item)
    assert received == [{"text": "q"}] and model_info.value.details == {"provider": "contract"}
    assert rt.call("echo", {"text": "still serving"}) == {"text": "still serving"}


FAILING_REQUESTS: list[tuple[str, Callable[[Runtime], Any]]] = [
    ("unknown operator", lambda rt: rt.call("nope", {})),
    ("unknown type", lambda rt: rt.define("nope", "x", {})),
    ("unknown component", lambda rt: rt.call_method("ghost", "read", {"n": 1})),
    ("invalid input", lambda rt: rt.call("nested", {"text": 1, "extra": True})),
    ("not an object", lambda rt: rt.call("echo", ["not", "an", "object"])),
    ("wrong request", lambda rt: rt.call("count", {"n": 1})),
    ("plugin error", lambda rt: rt.call("fail", {"text": "x"})),
    ("mid-stream", lambda rt: list(rt.call_iter("fail_after", {"n": 1, "message": "m"}))),
    ("model error", lambda rt: list(rt.call_iter("model_failure", {"text": "m"}))),
]


@pytest.mark.parametrize(
    "request_", [r for _, r in FAILING_REQUESTS], ids=[n for n, _ in FAILING_REQUESTS]
)
def test_errors_cross_the_network_as_the_same_type_message_and_details(server_url, request_):
    def failure(rt: Runtime) -> FerruleError:
        with pytest.raises(FerruleError) as info:
            request_(rt)
        return info.value

    local, remote = Runtime(kernel=contract_kernel()), Runtime(url=server_url)
    try:
        expected, got = failure(local), failure(remote)
    finally:
        local.stop()
        remote.stop()
    assert (type(got), got.message, got.details) == (
        type(expected),
        expected.message,
        expected.details,
    )


# -- lifecycle -------------------------------------------------------------------------


def test_context_manager_stops_and_closes_components(make_runtime):
    tag = unique("tag")
    with make_runtime() as rt:
        rt.define("notebook", unique(), {"tag": tag})
    assert CLOSED_COMPONENTS[tag].is_set()
    with pytest.raises(FerruleError, match="stopped"):
        rt.call("echo", {"text": "x"})


def test_stop_is_idempotent_and_final(rt):
    tag = unique("tag")
    rt.define("notebook", unique(), {"tag": tag})
    rt.stop()
    assert CLOSED_COMPONENTS[tag].is_set()
    rt.stop()
    for request in (
        lambda: rt.call("echo", {"text": "x"}),
        lambda: rt.call_iter("spell", {"text": "x"}),
        lambda: rt.define("notebook", "n", {"tag": "t"}),
        lambda: rt.operators(),
    ):
        with pytest.raises(FerruleError, match="stopped"):
            request()


def test_a_deleted_component_is_not_closed_twice_by_stop(rt):
    tag = unique("tag")
    name = unique()
    rt.define("notebook", name, {"tag": tag})
    rt.delete(name)
    CLOSED_COMPONENTS[tag].clear()
    rt.stop()
    assert not CLOSED_COMPONENTS[tag].is_set()


# -- cancellation ----------------------------------------------------------------------


@pytest.mark.parametrize("operator", ["endless", "endless_blocking"])
def test_closing_a_stream_stops_its_producer(rt, operator):
    tag = unique("tag")
    stream = rt.call_iter(operator, {"tag": tag})
    assert [next(stream) for _ in range(3)] == [{"i": 1}, {"i": 2}, {"i": 3}]
    stream.close()
    stops_promptly(producer(tag))


def test_breaking_out_of_a_for_loop_stops_the_producer(rt):
    tag = unique("tag")
    for item in rt.call_iter("endless", {"tag": tag}):
        if item["i"] == 5:
            break  # the stream is unreferenced now: CPython closes it at once
    stops_promptly(producer(tag))


def test_closing_a_method_stream_stops_its_producer(rt):
    name, tag = unique(), unique("tag")
    rt.define("notebook", name, {"tag": unique("tag")})
    stream = rt.call_iter_method(name, "tail", {"tag": tag})
    next(stream)
    stream.close()
    stops_promptly(producer(tag))
    assert rt.call_method(name, "write", {"text": "after"}) == {"pages": 1}


def test_closing_an_async_twin_stream_stops_its_producer(rt):
    tag = unique("tag")

    async def consume() -> list[dict[str, int]]:
        stream = rt.acall_iter("endless", {"tag": tag})
        items = [await anext(stream) for _ in range(2)]
        await stream.aclose()
        return items

    assert asyncio.run(consume()) == [{"i": 1}, {"i": 2}]
    stops_promptly(producer(tag))


def test_async_twins_from_another_event_loop(rt):
    name = unique()

    async def main() -> tuple[Any, ...]:
        await rt.adefine("notebook", name, {"tag": unique("tag"), "title": "T"})
        written = await rt.acall_method(name, "write", {"text": "p"})
        pages = [i async for i in rt.acall_iter_method(name, "leaf", {"n": 1})]
        shouted = await rt.acall("shout", {"text": "q"})
        counted = [i async for i in rt.acall_iter("count", {"n": 2})]
        operators = {op["name"] for op in await rt.aoperators()}
        await rt.adelete(name)
        with pytest.raises(UnknownOperatorError):
            async for _ in rt.acall_iter("nope", {}):
                pass
        await rt.astop()
        return written, pages, shouted, counted, "shout" in operators

    assert asyncio.run(main()) == (
        {"pages": 1},
        [{"page": "p"}],
        {"text": "Q"},
        [{"i": 0}, {"i": 1}],
        True,
    )


# -- AsyncRuntime ----------------------------------------------------------------------


async def test_async_runtime_requests(art):
    name = unique()
    assert await art.call("shout", {"text": "a"}) == {"text": "A"}
    assert [i async for i in art.call_iter("spell", {"text": "ab"})] == [
        {"text": "a"},
        {"text": "b"},
    ]
    await art.define("notebook", name, {"tag": unique("tag")})
    assert await art.call_method(name, "write", {"text": "x"}) == {"pages": 1}
    assert [i async for i in art.call_iter_method(name, "leaf", {"n": 1})] == [{"page": "x"}]
    assert "notebook" in {t["name"] for t in await art.component_types()}
    await art.delete(name)
    results = await asyncio.gather(*(art.call("shout", {"text": f"g{i}"}) for i in range(30)))
    assert results == [{"text": f"G{i}"} for i in range(30)]


async def test_async_runtime_errors(art):
    with pytest.raises(UnknownOperatorError):
        await art.call("nope", {})
    with pytest.raises(InvalidInputError, match=r"\$\.n"):
        async for _ in art.call_iter("count", {"n": "three"}):
            pass
    with pytest.raises(UnknownComponentError):
        await art.call_method("ghost", "read", {"n": 1})
    received = []
    with pytest.raises(PluginError, match="ValueError: late"):
        async for item in art.call_iter("fail_after", {"n": 1, "message": "late"}):
            received.append(item)
    assert received == [{"i": 0}]


@pytest.mark.parametrize("operator", ["endless", "endless_blocking"])
async def test_async_runtime_closing_a_stream(art, operator):
    tag = unique("tag")
    stream = art.call_iter(operator, {"tag": tag})
    await anext(stream)
    await stream.aclose()
    await asyncio.to_thread(stops_promptly, producer(tag))


async def test_async_runtime_cancelling_the_consumer(art):
    tag = unique("tag")

    async def consume() -> None:
        async for _ in art.call_iter("endless", {"tag": tag}):
            pass

    task = asyncio.create_task(consume())
    while producer(tag).produced < 3:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(stops_promptly, producer(tag))


async def test_async_runtime_context_manager_and_stop(art):
    tag = unique("tag")
    async with art:
        await art.define("notebook", unique(), {"tag": tag})
    assert CLOSED_COMPONENTS[tag].is_set()
    with pytest.raises(FerruleError, match="stopped"):
        await art.call("echo", {"text": "x"})
    await art.stop()  # idempotent


def test_every_runtime_method_has_an_async_twin():
    names = {
        n for n in vars(Runtime) if not n.startswith("_") and inspect.isfunction(vars(Runtime)[n])
    }
    for name in names - {n for n in names if n.startswith("a")}:
        assert f"a{name}" in names, name
