"""What a ``placement={"kind": "ray", ...}`` may say, validated with the kernel's rules."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, in_range, structure_input

KIND = "ray"


def _resource_amounts(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    for key, amount in value.items():
        if not amount >= 0:  # NaN too
            raise InvalidInputError(
                f"must be at least 0, got {amount}", field=f"{attribute.name}.{key}"
            )


@attrs.frozen(kw_only=True)
class RayPlacement:
    """Where and how a component runs on a Ray cluster.

    Each replica is one Ray actor asking for ``num_cpus``, ``num_gpus``, ``memory`` (bytes)
    and ``resources`` (custom resources, e.g. ``{"fake_gpu": 1}``), on a node whose labels
    match ``label_selector``. Calls spread over ``replicas`` by outstanding requests. Ray
    restarts a dead actor up to ``max_restarts`` times (-1: always). A stream lets the
    actor run at most ``stream_window`` items ahead of its reader (backpressure).
    ``start_timeout_s`` bounds how long a define waits for its actors to come up.
    """

    kind: str = KIND
    replicas: int = attrs.field(default=1, validator=in_range(1, 256))
    num_cpus: float = attrs.field(default=1.0, validator=in_range(0))
    num_gpus: float = attrs.field(default=0.0, validator=in_range(0))
    memory: int | None = attrs.field(default=None, validator=in_range(1))
    resources: dict[str, float] = attrs.field(factory=dict, validator=_resource_amounts)
    label_selector: dict[str, str] = attrs.field(factory=dict)
    max_restarts: int = attrs.field(default=3, validator=in_range(-1))
    max_concurrency: int = attrs.field(default=1000, validator=in_range(1))
    stream_window: int = attrs.field(default=16, validator=in_range(1))
    start_timeout_s: float = attrs.field(default=120.0, validator=in_range(0))

    def actor_options(self) -> dict[str, Any]:
        """The options of `ray.actor.ActorClass.options` for one replica."""
        options: dict[str, Any] = {
            "num_cpus": self.num_cpus,
            "num_gpus": self.num_gpus,
            "max_restarts": self.max_restarts,
            # a call that had not started when its actor died is not run twice behind
            # the caller's back: it fails, and the balancer sends later calls elsewhere
            "max_task_retries": 0,
            "max_concurrency": self.max_concurrency,
        }
        if self.memory is not None:
            options["memory"] = self.memory
        if self.resources:
            options["resources"] = dict(self.resources)
        if self.label_selector:
            options["label_selector"] = dict(self.label_selector)
        return options


def parse_placement(placement: dict[str, Any]) -> RayPlacement:
    """``placement`` as a `RayPlacement`, or `InvalidInputError` naming each bad field
    under ``placement.`` (``placement.replicas: must be between 1 and 256, got 0``)."""
    try:
        parsed: RayPlacement = structure_input(placement, RayPlacement, target="placement")
    except InvalidInputError as exc:
        errors = [
            {"path": "placement" + e["path"].removeprefix("$"), "message": e["message"]}
            for e in exc.errors
        ]
        summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
        raise InvalidInputError(f"invalid placement: {summary}", errors=errors) from None
    return parsed
