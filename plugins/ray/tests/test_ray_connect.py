"""`connect`'s retry of Ray Client's per-client server dying as it starts
(ray-project/ray#63202). That race cannot be started on demand, so these tests stand in
for Ray's `init` at its boundary: the error Ray Client raises, then success or other
errors."""

from __future__ import annotations

from typing import Any

import ferrule_ray
import pytest
import ray
from ferrule_ray.cluster import CLIENT_SERVER_START_TRIES
from ferrule_ray.errors import PlacementError

SERVER_DIED = ConnectionAbortedError(
    "Initialization failure from server:\npsutil.ZombieProcess: PID still exists but it's a zombie"
)


def _init_failing(monkeypatch: pytest.MonkeyPatch, errors: list[BaseException]) -> list[Any]:
    """Ray's init raises ``errors`` one per call, then succeeds; returns the calls."""
    calls: list[Any] = []

    def init(address: str | None = None, **options: Any) -> None:
        calls.append(address)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    return calls


def test_a_client_server_that_died_starting_is_tried_again(monkeypatch: pytest.MonkeyPatch):
    calls = _init_failing(monkeypatch, [SERVER_DIED] * (CLIENT_SERVER_START_TRIES - 1))
    ferrule_ray.connect("ray://127.0.0.1:1")
    assert calls == ["ray://127.0.0.1:1"] * CLIENT_SERVER_START_TRIES


def test_the_tries_are_bounded_and_the_last_failure_is_reported(
    monkeypatch: pytest.MonkeyPatch,
):
    calls = _init_failing(monkeypatch, [SERVER_DIED] * CLIENT_SERVER_START_TRIES)
    with pytest.raises(PlacementError, match="Initialization failure from server") as raised:
        ferrule_ray.connect("ray://127.0.0.1:1")
    assert len(calls) == CLIENT_SERVER_START_TRIES
    assert raised.value.__cause__ is None


@pytest.mark.parametrize(
    "error",
    [
        ConnectionAbortedError("refused by the proxy"),
        ConnectionError("no route"),
        ValueError("bad"),
    ],
    ids=["other-abort", "connection", "value"],
)
def test_other_failures_are_not_tried_again(monkeypatch: pytest.MonkeyPatch, error: Exception):
    calls = _init_failing(monkeypatch, [error])
    with pytest.raises(PlacementError, match=str(error)):
        ferrule_ray.connect("ray://127.0.0.1:1")
    assert len(calls) == 1
