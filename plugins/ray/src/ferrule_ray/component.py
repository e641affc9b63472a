"""The stand-in the kernel holds for a component placed on Ray: same methods, each call
sent to the replica with the fewest outstanding requests."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import ray
from ferrule_kernel import ComponentTypeSpec, get_logger
from ray.exceptions import NodeDiedError, ObjectLostError, RayActorError, WorkerCrashedError

from .actor import ComponentHost, Failure
from .cluster import connect
from .errors import PlacementError, ReplicaDiedError
from .placement import RayPlacement

log = get_logger("ferrule.ray")

#: What Ray raises when the process serving a request is gone.
_DEATH = (RayActorError, WorkerCrashedError, NodeDiedError, ObjectLostError)
_REMOTE_HOST: Any = ray.remote(ComponentHost)
#: Lists of items a replica's stream may have sent that its reader has not taken yet;
#: with the ``stream_window`` items waiting in the replica, what bounds how far ahead a
#: component runs of a slow reader.
_SENDS_IN_FLIGHT = 2
#: How often a replica that died is asked whether Ray has restarted it.
_REVIVE_EVERY_S = 0.2


@attrs.define(eq=False)
class Replica:
    index: int
    handle: Any
    outstanding: int = 0
    #: True from a failure until the restarted actor answers a ping.
    down: bool = False


def _missing_resources(options: RayPlacement) -> list[dict[str, str]]:
    """Fields of ``options`` asking for more than any live node has (Ray would wait for
    such an actor forever): one error per field, checked against the largest node."""
    wanted = {"CPU": options.num_cpus, "GPU": options.num_gpus, **options.resources}
    if options.memory is not None:
        wanted["memory"] = float(options.memory)
    fields = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}
    nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]  # type: ignore[no-untyped-call]
    errors = []
    for resource, amount in wanted.items():
        if amount <= 0:
            continue
        largest = max((node.get(resource, 0.0) for node in nodes), default=0.0)
        if amount > largest:
            field = fields.get(resource, f"resources.{resource}")
            errors.append(
                {
                    "path": f"placement.{field}",
                    "message": f"no node of the cluster has {amount} {resource} "
                    f"(the most is {largest})",
                }
            )
    return errors


class RayComponent:
    """A component running as ``len(replicas)`` Ray actors. The kernel calls the methods
    its type declares; each goes to the live replica with the fewest outstanding requests
    (ties in turn). A replica that dies ends the requests it was serving with one
    `ReplicaDiedError` and gets no more until Ray has restarted it."""

    def __init__(
        self, name: str, spec: ComponentTypeSpec, options: RayPlacement, replicas: list[Replica]
    ) -> None:
        self.name = name
        self.options = options
        self.replicas = replicas
        self._turn = itertools.count()
        self._reviving: set[asyncio.Task[None]] = set()
        for method in spec.methods:
            # instance attributes named after the type's methods: what the kernel calls
            setattr(
                self,
                method.name,
                self._stream_method(method.name) if method.streaming else self._method(method.name),
            )

    @classmethod
    async def start(
        cls,
        component_type: str,
        name: str,
        attributes: dict[str, Any],
        spec: ComponentTypeSpec,
        options: RayPlacement,
    ) -> RayComponent:
        await asyncio.to_thread(connect)
        missing = await asyncio.to_thread(_missing_resources, options)
        if missing:
            summary = "; ".join(f"{e['path']}: {e['message']}" for e in missing)
            raise PlacementError(f"cannot place {name!r}: {summary}", errors=missing)
        actor = _REMOTE_HOST.options(**options.actor_options())
        handles = [actor.remote(component_type, name, attributes) for _ in range(options.replicas)]
        try:
            started = await asyncio.wait_for(
                asyncio.gather(*(handle.start.remote() for handle in handles)),
                options.start_timeout_s,
            )
        except BaseException as exc:
            _kill(handles)
            if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
                raise PlacementError(
                    f"the {options.replicas} actor(s) of {name!r} did not start within "
                    f"{options.start_timeout_s} s (placement.start_timeout_s); is a node with "
                    "the resources and labels asked for part of the cluster?",
                    name=name,
                ) from None
            raise
        for answer in started:
            if isinstance(answer, Failure):
                _kill(handles)
                raise answer.exception()
        log.debug("component_placed", name=name, replicas=started)
        return cls(name, spec, options, [Replica(i, h) for i, h in enumerate(handles)])

    # -- routing -----------------------------------------------------------------------

    def _pick(self) -> Replica:
        live = [r for r in self.replicas if not r.down] or self.replicas
        turn = next(self._turn)
        return min(live, key=lambda r: (r.outstanding, (r.index - turn) % len(self.replicas)))

    def _died(self, replica: Replica, exc: BaseException, **details: Any) -> ReplicaDiedError:
        if not replica.down:
            replica.down = True
            task = asyncio.get_running_loop().create_task(self._revive(replica))
            self._reviving.add(task)
            task.add_done_callback(self._reviving.discard)
        log.warning("replica_died", component=self.name, replica=replica.index, error=str(exc))
        return ReplicaDiedError(
            f"replica {replica.index} of component {self.name!r} died while serving this "
            f"request ({type(exc).__name__}); later requests go to the replicas alive",
            component=self.name,
            replica=replica.index,
            **details,
        )

    async def _revive(self, replica: Replica) -> None:
        """Wait until Ray has restarted ``replica``'s actor and its component is built
        again; a replica that does not answer within ``start_timeout_s`` (Ray gave up on
        it after ``max_restarts``, or its component no longer builds) stays down."""
        deadline = asyncio.get_running_loop().time() + self.options.start_timeout_s
        while asyncio.get_running_loop().time() < deadline:
            try:
                await replica.handle.ping.remote()
            except _DEATH:  # still restarting
                await asyncio.sleep(_REVIVE_EVERY_S)
                continue
            except Exception as exc:  # its component failed to build again
                log.warning("replica_not_revived", component=self.name, error=str(exc))
                return
            replica.down = False
            log.debug("replica_revived", component=self.name, replica=replica.index)
            return

    def _method(self, method: str) -> Callable[[Any], Awaitable[Any]]:
        async def call(arg: Any) -> Any:
            replica = self._pick()
            replica.outstanding += 1
            try:
                result = await replica.handle.call.remote(method, arg)
            except _DEATH as exc:
                raise self._died(replica, exc) from None
            finally:
                replica.outstanding -= 1
            if isinstance(result, Failure):
                raise result.exception()
            return result

        call.__name__ = method
        return call

    def _stream_method(self, method: str) -> Callable[[Any], AsyncIterator[Any]]:
        window = self.options.stream_window
        # Ray Client (a ray:// address) has no streaming generators: there, lists are pulled.
        pulled = ray.util.client.ray.is_connected()  # type: ignore[no-untyped-call]

        async def stream(arg: Any) -> AsyncIterator[Any]:
            replica = self._pick()
            replica.outstanding += 1
            source = _ReplicaStream(replica.handle, method, arg, window, pulled)
            batches = source.batches()
            sent = 0
            finished = False
            try:
                async for batch in batches:
                    for item in batch:
                        if isinstance(item, Failure):
                            finished = True
                            raise item.exception()
                        sent += 1
                        yield item
                finished = True
            except _DEATH as exc:
                finished = True
                raise self._died(replica, exc, items_sent=sent) from None
            finally:
                replica.outstanding -= 1
                if not finished:
                    source.stop()
                await batches.aclose()

        stream.__name__ = method
        return stream

    # -- what operators and tests may ask ----------------------------------------------

    async def replica_info(self) -> list[dict[str, Any]]:
        """Each replica's index, process id, node id, outstanding requests and state."""
        out = []
        for replica in self.replicas:
            info: dict[str, Any] = {
                "index": replica.index,
                "outstanding": replica.outstanding,
                "down": replica.down,
            }
            if not replica.down:
                try:
                    info.update(await replica.handle.ping.remote())
                except _DEATH:
                    info["down"] = True
            out.append(info)
        return out

    async def close(self) -> None:
        for task in list(self._reviving):
            task.cancel()
        try:
            await asyncio.gather(
                *(r.handle.close.remote() for r in self.replicas if not r.down),
                return_exceptions=True,
            )
        finally:
            _kill([r.handle for r in self.replicas])


def _kill(handles: list[Any]) -> None:
    for handle in handles:
        try:
            ray.kill(handle, no_restart=True)
        except (ValueError, RayActorError):  # already gone
            continue


@attrs.define
class _ReplicaStream:
    """One stream's lists of items from a replica: sent by Ray's streaming generator (at
    most ``_SENDS_IN_FLIGHT`` lists ahead of the reader), or, in a process connected with
    Ray Client, which has no streaming generators, pulled one call per list, so the
    replica never runs more than its window ahead of the reader."""

    handle: Any
    method: str
    arg: Any
    window: int
    pulled: bool
    #: Once opened: the streaming generator's refs, or the pulled stream's key.
    opened: Any = None

    async def batches(self) -> AsyncGenerator[list[Any], None]:
        if self.pulled:
            self.opened = await self.handle.open_stream.remote(self.method, self.arg, self.window)
            while (batch := await self.handle.pull.remote(self.opened)) is not None:
                yield batch
        else:
            self.opened = self.handle.stream.options(
                _generator_backpressure_num_objects=_SENDS_IN_FLIGHT
            ).remote(self.method, self.arg, self.window)
            async for ref in self.opened:
                yield await ref

    def stop(self) -> None:
        """The reader left: stop the actor's generator, or close the pulled stream."""
        if self.opened is None:
            return
        if self.pulled:
            self.handle.close_stream.remote(self.opened)
        else:
            ray.cancel(self.opened)
