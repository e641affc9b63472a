"""Runtime (sync, with async twins) and AsyncRuntime over real installed plugins."""

from __future__ import annotations

import asyncio
import threading
import time

import attrs
import pytest
from ferrule import AsyncRuntime, Runtime
from ferrule_kernel import (
    ComponentTypeSpec,
    FerruleError,
    InvalidInputError,
    Kernel,
    MethodSpec,
    OperatorSpec,
    RequestCancelledError,
    UnknownOperatorError,
    hookimpl,
)


@attrs.frozen
class Attributes:
    prefix: str = ""


@attrs.frozen
class Say:
    text: str


class Speaker:
    """An async component, as API models are: it lives on the runtime's loop."""

    def __init__(self, attributes: Attributes) -> None:
        self.prefix = attributes.prefix
        self.loop_thread: threading.Thread | None = None
        self.closed = threading.Event()

    async def say(self, inputs: Say) -> dict[str, str]:
        self.loop_thread = threading.current_thread()
        return {"text": self.prefix + inputs.text}

    async def words(self, inputs: Say):
        try:
            for word in inputs.text.split():
                await asyncio.sleep(0)
                yield {"word": word}
        finally:
            self.closed.set()

    def close(self) -> None:
        self.closed.set()


async def shout(inputs: Say) -> dict[str, str]:
    return {"text": inputs.text.upper()}


class SpeakerPlugin:
    @hookimpl
    def ferrule_register_component_types(self):
        methods = (MethodSpec("say", Say), MethodSpec("words", Say, streaming=True))
        return [ComponentTypeSpec("speaker", Speaker, Attributes, methods)]

    @hookimpl
    def ferrule_register_operators(self):
        return [OperatorSpec("shout", shout, Say)]


def make_runtime() -> Runtime:
    from ferrule_kit import kit_plugin

    return Runtime(kernel=Kernel(plugins=[kit_plugin, SpeakerPlugin()]))


def test_seed_echo_example():
    rt = Runtime()
    result = rt.call("echo", {"text": "Hello world"})
    assert result == {"text": "Hello world"}
    rt.stop()


def test_streaming_operator_and_errors_through_installed_plugins():
    with Runtime() as rt:
        assert [i["text"] for i in rt.call_iter("spell", {"text": "abc"})] == ["a", "b", "c"]
        with pytest.raises(UnknownOperatorError):
            rt.call("no_such_operator", {})
        with pytest.raises(InvalidInputError, match=r"\$\.text"):
            rt.call("echo", {"text": None})


def test_components_live_on_the_runtime_loop():
    with make_runtime() as rt:
        rt.define("speaker", "s", {"prefix": "> "})
        assert rt.call_method("s", "say", {"text": "hi"}) == {"text": "> hi"}
        assert rt.kernel.component("s").loop_thread.name == "ferrule-runtime"
        assert [i["word"] for i in rt.call_iter_method("s", "words", {"text": "a b c"})] == [
            "a",
            "b",
            "c",
        ]
        assert rt.call("shout", {"text": "x"}) == {"text": "X"}
        rt.delete("s")


def test_breaking_out_of_a_sync_stream_closes_the_producer():
    with make_runtime() as rt:
        rt.define("speaker", "s", {})
        speaker = rt.kernel.component("s")
        stream = rt.call_iter_method("s", "words", {"text": "one two three four"})
        assert next(stream) == {"word": "one"}
        stream.close()
        assert speaker.closed.wait(2)


def test_validation_errors_raise_when_the_stream_is_requested():
    with make_runtime() as rt:
        rt.define("speaker", "s", {})
        with pytest.raises(InvalidInputError, match=r"\$\.text"):
            rt.call_iter_method("s", "words", {})


def test_sync_runtime_works_inside_a_running_event_loop():
    # As in Jupyter: the caller's thread runs a loop, and still calls the sync API.
    async def notebook_cell():
        with make_runtime() as rt:
            rt.define("speaker", "s", {})
            return rt.call_method("s", "say", {"text": "from a loop"}), rt.call(
                "shout", {"text": "a"}
            )

    assert asyncio.run(notebook_cell()) == ({"text": "from a loop"}, {"text": "A"})


def test_async_twins_work_from_another_event_loop():
    rt = make_runtime()

    async def main():
        await rt.adefine("speaker", "s", {"prefix": "+"})
        said = await rt.acall_method("s", "say", {"text": "a"})
        words = [i async for i in rt.acall_iter_method("s", "words", {"text": "x y"})]
        shouted = await rt.acall("shout", {"text": "q"})
        await rt.adelete("s")
        await rt.astop()
        return said, words, shouted

    assert asyncio.run(main()) == ({"text": "+a"}, [{"word": "x"}, {"word": "y"}], {"text": "Q"})


def test_stop_deletes_components_and_is_idempotent():
    rt = make_runtime()
    rt.define("speaker", "s", {})
    speaker = rt.kernel.component("s")
    rt.stop()
    assert speaker.closed.is_set()
    rt.stop()
    with pytest.raises(FerruleError, match="stopped"):
        rt.call("echo", {"text": "x"})


def test_stop_leaves_no_thread_nor_task_behind():
    before = set(threading.enumerate())
    rt = make_runtime()
    rt.define("speaker", "s", {})  # starts the loop thread (and its watchdog)
    # more words than the read-ahead holds: the pump task waits on the loop for the reader
    stream = rt.call_iter_method("s", "words", {"text": " ".join(["w"] * 1000)})
    assert next(stream) == {"word": "w"}
    loop, speaker = rt._loop.loop, rt.kernel.component("s")
    rt.stop()
    assert loop.is_closed() and not rt._loop.started and speaker.closed.is_set()
    deadline = time.monotonic() + 10
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not set(threading.enumerate()) - before
    with pytest.raises(RequestCancelledError):  # the open stream ended with the runtime
        list(stream)


def test_only_inproc_address_is_accepted():
    with pytest.raises(InvalidInputError, match="address"):
        Runtime("tcp://somewhere")


# -- named in-process runtimes ("inproc://NAME", as Ailoy starts them) -------------------


def test_runtimes_of_one_name_share_their_kernel_and_components(tmp_path):
    first, second = Runtime("inproc://shared-a"), Runtime("inproc://shared-a")
    other = Runtime("inproc://shared-b")
    try:
        assert first.kernel is second.kernel and other.kernel is not first.kernel
        assert Runtime().kernel is not first.kernel  # the default address is private
        first.define("sqlite_storage", "db", {"path": str(tmp_path / "a.db")})
        # defined through one, reached through the other, on the one loop thread
        assert "db" in second.kernel.components()
        assert second.call_method("db", "schema_version") == first.call_method(
            "db", "schema_version"
        )
        assert first.sync_bridge is second.sync_bridge
        with pytest.raises(FerruleError, match="no component named 'db'"):
            other.call_method("db", "schema_version")
        assert repr(first) == "Runtime('inproc://shared-a')"
    finally:
        for rt in (first, second, other):
            rt.stop()


def test_a_named_kernel_stops_with_the_last_runtime_of_its_name(tmp_path):
    first = Runtime("inproc://lasting")
    first.define("sqlite_storage", "db", {"path": str(tmp_path / "a.db")})
    kernel, loop = first.kernel, first.sync_bridge
    second = Runtime("inproc://lasting")
    first.stop()
    with pytest.raises(FerruleError, match="stopped"):
        first.call("echo", {"text": "x"})
    # the other runtime of the name still has the kernel, its component and its loop
    assert second.call_method("db", "schema_version") is not None
    assert "db" in kernel.components() and loop.started
    second.stop()
    assert kernel.components() == {} and not loop.started
    third = Runtime("inproc://lasting")  # a name used again after its end: a new kernel
    try:
        assert third.kernel is not kernel and "db" not in third.kernel.components()
    finally:
        third.stop()


def test_named_runtimes_started_from_threads_at_once_share_one_kernel():
    made: list[Runtime] = []
    start = threading.Barrier(8)

    def make() -> None:
        start.wait()
        made.append(Runtime("inproc://raced"))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len({id(rt.kernel) for rt in made}) == 1
    finally:
        kernel = made[0].kernel
        for rt in made:
            rt.stop()
    assert Runtime("inproc://raced").kernel is not kernel


def test_an_async_runtime_of_a_name_shares_it_from_any_event_loop(tmp_path):
    sync = Runtime("inproc://mixed")
    sync.define("sqlite_storage", "db", {"path": str(tmp_path / "a.db")})
    expected = sync.call_method("db", "schema_version")

    async def use() -> dict[str, object]:
        art = AsyncRuntime("inproc://mixed")
        try:
            assert art.kernel is sync.kernel
            return await art.call_method("db", "schema_version")
        finally:
            await art.stop()

    try:
        # two event loops, one after the other: the component lives on the name's loop thread
        assert asyncio.run(use()) == expected and asyncio.run(use()) == expected
        # Ailoy's tests open an AsyncRuntime of a name with a plain `with`
        with AsyncRuntime("inproc://mixed") as art:
            assert asyncio.run(art.call("echo", {"text": "w"})) == {"text": "w"}
        assert sync.call_method("db", "schema_version") == expected
    finally:
        sync.stop()
    with pytest.raises(TypeError, match="async with"):
        with AsyncRuntime():
            pass


def test_a_named_runtime_takes_no_kernel_nor_url():
    with pytest.raises(InvalidInputError, match="shared by name") as info:
        Runtime("inproc://k", kernel=Kernel(plugins=[]))
    assert [e["path"] for e in info.value.errors] == ["kernel"]
    with pytest.raises(InvalidInputError, match="address or a url"):
        Runtime("inproc://k", url="http://127.0.0.1:9")


async def test_async_runtime_runs_on_the_callers_loop():
    from ferrule_kit import kit_plugin

    async with AsyncRuntime(kernel=Kernel(plugins=[kit_plugin, SpeakerPlugin()])) as rt:
        await rt.define("speaker", "s", {})
        assert await rt.call_method("s", "say", {"text": "a"}) == {"text": "a"}
        assert rt.kernel.component("s").loop_thread is threading.current_thread()
        assert [i async for i in rt.call_iter("spell", {"text": "ab"})] == [
            {"text": "a"},
            {"text": "b"},
        ]
