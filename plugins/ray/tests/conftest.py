"""A real two-node Ray cluster on loopback for this plugin's tests (session-scoped: it
costs about 20 s to start on 2 cores)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def cluster() -> Iterator[object]:
    """A head with a ``fake_gpu`` (a CPU resource standing in for a GPU) and a second
    node with a ``cpu_node`` resource, labelled ``tier=gpu`` and ``tier=cpu``; this process is connected to it as a driver."""
    import os

    import ferrule_ray
    from ferrule_ray.testing import LoopbackCluster

    # this process is a driver of the cluster, and the servers it starts inherit this
    os.environ.update(LoopbackCluster.environment())

    nodes = LoopbackCluster(
        head_cpus=2,
        node_cpus=2,
        head_resources={"fake_gpu": 1},
        node_resources={"cpu_node": 1},
        head_labels={"tier": "gpu"},
        node_labels={"tier": "cpu"},
    ).start()
    try:
        ferrule_ray.connect(nodes.address)
        yield nodes
    finally:
        ferrule_ray.disconnect()
        nodes.stop()
