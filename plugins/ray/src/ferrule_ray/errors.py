"""The typed errors a placed component's requests can end with, registered by kind so
they cross ``ferrule serve`` as the same type."""

from __future__ import annotations

from ferrule_kernel import FerruleError, register_error_kind


@register_error_kind
class ReplicaDiedError(FerruleError):
    """The actor serving this request died (or became unreachable) before it finished.

    ``details``: ``component``, ``replica`` (its index) and ``items_sent`` for a stream.
    Ray restarts the actor (up to the placement's ``max_restarts``); later requests go to
    the replicas that are alive.
    """

    kind = "replica_died"


@register_error_kind
class PlacementError(FerruleError):
    """The cluster cannot run the component as placed: no node has the resources asked
    for, the actors did not start in time, or no Ray cluster could be reached."""

    kind = "placement_failed"
