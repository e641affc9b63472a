"""The pieces a provider's own tests share (ferrule_kit.testing.providers' `Definer` and
`collect`, ferrule_kit.testing.loopback's `server_fixture`), on a recording runtime and a
real loopback server."""

from __future__ import annotations

from typing import Any

import aiohttp
from ferrule_kit.testing.loopback import LoopbackServer, Reply, server_fixture
from ferrule_kit.testing.providers import Definer, collect


class RecordingRuntime:
    """What `Definer` and `collect` use of a runtime, recorded."""

    def __init__(self) -> None:
        self.defined: list[tuple[str, str, dict[str, Any]]] = []

    async def define(self, component_type: str, name: str, attributes: dict[str, Any]) -> None:
        self.defined.append((component_type, name, attributes))

    async def call_iter_method(self, name: str, method: str, inputs: Any) -> Any:
        for n in range(inputs["count"]):
            yield {"name": name, "method": method, "n": n}


async def test_definer_numbers_its_components_and_layers_model_and_attributes():
    runtime = RecordingRuntime()
    define = Definer(runtime, "my_language_model", "lm", {"model": "m-1", "max_retries": 1})
    assert await define() == "lm1"
    assert await define("m-2", max_retries=0, base_url="http://x") == "lm2"
    assert await define(model="m-3") == "lm3"
    assert runtime.defined == [
        ("my_language_model", "lm1", {"model": "m-1", "max_retries": 1}),
        ("my_language_model", "lm2", {"model": "m-2", "max_retries": 0, "base_url": "http://x"}),
        ("my_language_model", "lm3", {"model": "m-3", "max_retries": 1}),
    ]


async def test_collect_reads_every_item_infer_streams():
    items = await collect(RecordingRuntime(), "lm1", {"count": 3})
    assert items == [{"name": "lm1", "method": "infer", "n": n} for n in range(3)]


def _no_query(request: Any) -> list[str]:
    return ["query: not allowed"] if request.query else []


server = server_fixture(_no_query)


async def test_server_fixture_yields_a_started_server_with_its_validator(server):
    assert isinstance(server, LoopbackServer)
    server.script(Reply.json({"ok": True}))
    async with aiohttp.ClientSession() as session, session.post(server.url + "/x") as reply:
        assert await reply.json() == {"ok": True}
    assert server.requests[0].path == "/x"
