"""Components placed on a real two-node Ray cluster (started by `conftest.cluster`):
the same requests, outputs and errors as in-process, replicas, a replica killed mid-stream."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Any

import pytest
from ferrule import Agent, Runtime
from ferrule.agent.langmodel import LangModel
from ferrule_kernel import InvalidInputError, PluginError
from ferrule_kit.errors import ModelError
from ferrule_kit.models.lmspec import ModelRoute
from ferrule_kit.testing.strategies import plugin_profile
from ferrule_ray import ADDRESS_VARIABLE, PlacementError, ReplicaDiedError
from hypothesis import given
from hypothesis import strategies as st

PROFILE = plugin_profile("ray", ci=40, dev=20)
LM = "test_language_model"
#: The placement the tests use unless they say otherwise: no CPU reserved, so the small
#: loopback cluster runs every replica the tests ask for.
ON_RAY: dict[str, Any] = {"kind": "ray", "num_cpus": 0}


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}


class Scripted:
    """A model spec (as `LocalModel` is one) routing to the test model with a script."""

    def __init__(self, turns: list[Any]) -> None:
        self.turns = turns

    def route(self, kernel: object) -> ModelRoute:
        return ModelRoute(LM, {"turns": self.turns})


def replicas(rt: Runtime, name: str) -> list[dict[str, Any]]:
    stand_in = rt.kernel.component(name)
    return rt._loop.run(stand_in.replica_info())


@pytest.fixture
def rt(cluster: object):
    with Runtime() as runtime:
        yield runtime


def test_placement_fields_are_checked_before_the_cluster_is_asked():
    with Runtime() as rt:
        for placement, path in (
            ({"replicas": 0}, "placement.replicas"),
            ({"num_gpus": "one"}, "placement.num_gpus"),
            ({"replica": 2}, "placement.replica"),
        ):
            with pytest.raises(InvalidInputError) as caught:
                rt.define(LM, "lm", {}, placement={"kind": "ray", **placement})
            assert [e["path"] for e in caught.value.errors] == [path]
        with pytest.raises(InvalidInputError) as caught:
            rt.define(LM, "lm", {}, placement={"kind": "ray", "resources": {"fake_gpu": -1}})
        assert caught.value.errors[0]["path"] == "placement.resources.fake_gpu"
        assert rt.kernel.components() == {}


def test_components_run_on_the_node_their_resources_name(rt: Runtime):
    rt.define(LM, "on_gpu", {}, placement={**ON_RAY, "resources": {"fake_gpu": 0.5}})
    rt.define(LM, "on_cpu", {}, placement={**ON_RAY, "resources": {"cpu_node": 0.5}})
    for tier in ("cpu", "gpu"):  # four replicas each: none lands there by chance
        selector = {"label_selector": {"tier": tier}, "replicas": 4}
        rt.define(LM, f"{tier}_tier", {}, placement={**ON_RAY, **selector})
    (gpu,), (cpu,) = replicas(rt, "on_gpu"), replicas(rt, "on_cpu")
    assert gpu["node_id"] != cpu["node_id"]
    assert {r["node_id"] for r in replicas(rt, "cpu_tier")} == {cpu["node_id"]}
    assert {r["node_id"] for r in replicas(rt, "gpu_tier")} == {gpu["node_id"]}
    assert os.getpid() not in (gpu["pid"], cpu["pid"])
    rt.define(LM, "here", {})
    expected = list(rt.call_iter_method("here", "infer", user("hello from far away")))
    for name in ("on_gpu", "on_cpu", "cpu_tier"):
        assert list(rt.call_iter_method(name, "infer", user("hello from far away"))) == expected


def test_a_placement_no_node_can_hold_fails_at_define_naming_the_field(rt: Runtime):
    with pytest.raises(PlacementError) as caught:
        rt.define(LM, "huge", {}, placement={**ON_RAY, "resources": {"fake_gpu": 4}})
    assert caught.value.details["errors"][0]["path"] == "placement.resources.fake_gpu"
    assert "huge" not in rt.kernel.components()


def test_replicas_that_cannot_start_in_time_end_the_define(rt: Runtime):
    nowhere = {**ON_RAY, "replicas": 2, "label_selector": {"tier": "tpu"}, "start_timeout_s": 2}
    with pytest.raises(PlacementError) as caught:
        rt.define(LM, "lm", {}, placement=nowhere)
    assert "did not start within 2" in caught.value.message
    assert "lm" not in rt.kernel.components()
    rt.define(LM, "lm", {}, placement=ON_RAY)  # the name is free again, the cluster too
    assert [i["finish_reason"] for i in rt.call_iter_method("lm", "infer", user("after"))] == [
        None,
        "stop",
    ]


@given(
    text=st.text(
        alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60
    ),
    chunk_size=st.none() | st.integers(1, 7),
    max_tokens=st.none() | st.integers(1, 12),
    reasoning=st.booleans(),
)
@PROFILE
def test_streamed_chunks_are_exactly_the_in_process_ones(
    placed_and_local: Runtime,
    text: str,
    chunk_size: int | None,
    max_tokens: int | None,
    reasoning: bool,
):
    inputs: dict[str, Any] = {**user(text), "max_tokens": max_tokens, "reasoning": reasoning}
    suffix = "" if chunk_size is None else f"_{chunk_size}"
    here = list(placed_and_local.call_iter_method(f"here{suffix}", "infer", inputs))
    far = list(placed_and_local.call_iter_method(f"far{suffix}", "infer", inputs))
    assert far == here


@pytest.fixture(scope="module")
def placed_and_local(cluster: object):
    """One in-process and one placed test model per chunk size the property test draws."""
    with Runtime() as rt:
        for chunk_size in (None, *range(1, 8)):
            attributes = {} if chunk_size is None else {"chunk_size": chunk_size}
            suffix = "" if chunk_size is None else f"_{chunk_size}"
            rt.define(LM, f"here{suffix}", attributes)
            rt.define(LM, f"far{suffix}", attributes, placement=ON_RAY)
        yield rt


def test_a_failing_component_fails_as_it_does_in_process(rt: Runtime):
    turns = {"turns": [{"text": "partial answer", "error": "the backend broke"}]}
    outcomes = []
    for name, placement in (("here", None), ("far", ON_RAY)):
        rt.define(LM, name, turns, placement=placement)
        items = []
        with pytest.raises(ModelError) as caught:
            for item in rt.call_iter_method(name, "infer", user("hi")):
                items.append(item)
        outcomes.append((items, caught.value.message))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][0]  # the items before the error arrived first


def test_a_factory_that_fails_on_the_cluster_ends_the_define(rt: Runtime):
    attributes = {"function": "no_such_module_here:reply"}
    with pytest.raises(PluginError) as here:
        rt.define(LM, "here", attributes)
    with pytest.raises(PluginError) as far:
        rt.define(LM, "far", attributes, placement=ON_RAY)
    assert far.value.message == here.value.message.replace("'here'", "'far'")
    assert rt.kernel.components() == {}


def test_an_agent_runs_unchanged_on_a_placed_model(rt: Runtime):
    script = [
        {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "It is 5."},
    ]

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    async def run(placement: dict[str, Any] | None) -> list[tuple[str, Any]]:
        lm = await LangModel.new(Scripted(script), runtime=rt, placement=placement)
        agent = Agent(lm, tools=[add])
        out = [(r.type, r.content) async for r in agent.aquery("What is 2 + 3?")]
        await lm.adelete()
        return out

    here = asyncio.run(run(None))
    assert [t for t, _ in here][:2] == ["tool_call", "tool_call_result"]
    assert "".join(c for t, c in here if t == "output_text") == "It is 5."
    assert asyncio.run(run(ON_RAY)) == here


def test_calls_spread_over_replicas_by_outstanding_requests(rt: Runtime):
    rt.define(LM, "lm", {"delay": 0.05}, placement={**ON_RAY, "replicas": 2})

    async def one(i: int) -> list[dict[str, Any]]:
        return [item async for item in rt.acall_iter_method("lm", "infer", user(f"x{i} a b c"))]

    async def many() -> list[list[dict[str, Any]]]:
        runs = [asyncio.ensure_future(one(i)) for i in range(6)]
        await asyncio.sleep(0.1)  # all started, none done (each takes about 0.25 s)
        assert sorted(r["outstanding"] for r in replicas(rt, "lm")) == [3, 3]
        return await asyncio.gather(*runs)

    results = asyncio.run(many())
    assert [r[0]["message"]["content"][0]["text"] for r in results] == [f"x{i} " for i in range(6)]
    assert [r["outstanding"] for r in replicas(rt, "lm")] == [0, 0]


def test_a_replica_killed_mid_stream_ends_that_stream_only(rt: Runtime):
    rt.define(LM, "lm", {"delay": 0.1}, placement={**ON_RAY, "replicas": 2, "max_restarts": 2})
    before = replicas(rt, "lm")
    stream = rt.call_iter_method("lm", "infer", user("one two three four five six seven eight"))
    first = [next(stream), next(stream)]
    serving = next(r for r in replicas(rt, "lm") if r["outstanding"] == 1)
    os.kill(serving["pid"], signal.SIGKILL)
    with pytest.raises(ReplicaDiedError) as caught:
        list(stream)
    assert caught.value.details["items_sent"] >= len(first)
    assert caught.value.details["replica"] == serving["index"]
    # later calls go to the live replica while Ray restarts the dead one
    for _ in range(3):
        assert list(rt.call_iter_method("lm", "infer", user("still here")))[-1]["finish_reason"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = replicas(rt, "lm")
        if not any(r["down"] for r in now):
            break
        time.sleep(0.5)
    restarted = now[serving["index"]]
    assert not restarted["down"]
    assert restarted["pid"] != serving["pid"]
    assert [r["pid"] for r in now if r["index"] != serving["index"]] == [
        r["pid"] for r in before if r["index"] != serving["index"]
    ]


def test_delete_stops_the_actors(rt: Runtime):
    rt.define(LM, "lm", {}, placement={**ON_RAY, "replicas": 2})
    pids = [r["pid"] for r in replicas(rt, "lm")]
    rt.delete("lm")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a worker process Ray keeps for reuse is no longer an actor: ask its command line
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"ComponentHost" in cmdline.read()
    except OSError:
        return False


@pytest.mark.parametrize("client", [False, True], ids=["gcs-address", "ray-client"])
def test_ferrule_serve_places_components_on_the_cluster_its_variable_names(
    cluster: Any, client: bool
):
    # the GCS address (host:port), or Ray Client's ray://host:port (which has no streaming
    # generators: streams are pulled a list of items at a time)
    address = cluster.client_address if client else cluster.address
    environment = {k: v for k, v in os.environ.items() if k != "FERRULE_TOKEN"}
    environment[ADDRESS_VARIABLE] = address
    serve = subprocess.Popen(
        [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = serve.stdout.readline()  # type: ignore[union-attr]
        assert "listening on" in line, line + serve.stderr.read()  # type: ignore[union-attr]
        url = line.split("listening on ")[1].split()[0]
        placement = json.dumps({**ON_RAY, "replicas": 2, "resources": {"cpu_node": 0.1}})
        defined = subprocess.run(
            [
                sys.executable,
                "-m",
                "ferrule.cli",
                "define",
                LM,
                "lm",
                "{}",
                "--url",
                url,
                "--placement",
                placement,
            ],
            capture_output=True,
            text=True,
            env=environment,
            check=False,
        )
        assert defined.returncode == 0, defined.stderr
        with Runtime(url=url) as remote:
            items = list(remote.call_iter_method("lm", "infer", user("over the wire")))
            with Runtime() as here:
                here.define(LM, "lm", {})
                assert items == list(here.call_iter_method("lm", "infer", user("over the wire")))
            with pytest.raises(InvalidInputError) as caught:
                remote.define(LM, "bad", {}, placement={**ON_RAY, "replicas": -1})
            assert caught.value.errors[0]["path"] == "placement.replicas"
            remote.delete("lm")
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)


def test_a_batch_runs_on_a_model_placed_on_the_cluster(cluster: Any, tmp_path: Any):
    prompts = {f"p{i}": f"prompt number {i}" for i in range(12)}
    (tmp_path / "in.jsonl").write_text(
        "".join(json.dumps({"id": k, "prompt": v}) + "\n" for k, v in prompts.items())
    )
    environment = {**os.environ, ADDRESS_VARIABLE: cluster.address}
    placement = json.dumps({**ON_RAY, "replicas": 2})
    command = [sys.executable, "-m", "ferrule.cli", "batch", "in.jsonl", "-o", "out.jsonl"]
    done = subprocess.run(
        [*command, "-m", "test", "--placement", placement, "--concurrency", "6"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "batch: 12/12 done" in done.stderr
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {line["id"]: line["output"] for line in lines} == prompts


def test_ferrule_serve_on_ray_serve(cluster: Any):
    from ferrule_ray.serve import deployment
    from ferrule_ray.testing import free_port
    from ray import serve

    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    try:
        url = f"http://127.0.0.1:{port}"
        one = deployment.options(num_replicas=1, ray_actor_options={"num_cpus": 0})
        serve.run(one.bind(), name="ferrule", route_prefix="/")
        with Runtime(url=url) as remote:
            # define, then stream: one replica's kernel, the component placed on the cluster
            remote.define(LM, "lm", {}, placement=ON_RAY)
            items = list(remote.call_iter_method("lm", "infer", user("through ray serve")))
            with Runtime() as here:
                here.define(LM, "lm", {})
                assert items == list(
                    here.call_iter_method("lm", "infer", user("through ray serve"))
                )
            remote.delete("lm")
        # the OpenAI-compatible route, streamed, over two replicas
        two = deployment.options(num_replicas=2, ray_actor_options={"num_cpus": 0})
        serve.run(two.bind(), name="ferrule", route_prefix="/")
        for _ in range(4):
            body = json.dumps(
                {
                    "model": "test",
                    "stream": True,
                    "messages": [{"role": "user", "content": "streamed by replicas"}],
                }
            ).encode()
            request = urllib.request.Request(
                f"{url}/v1/chat/completions",
                data=body,
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=60) as reply:
                events = [
                    json.loads(line[6:])
                    for line in reply.read().decode().splitlines()
                    if line.startswith("data: {")
                ]
            text = "".join(
                e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"]
            )
            assert text == "streamed by replicas"
    finally:
        serve.shutdown()
