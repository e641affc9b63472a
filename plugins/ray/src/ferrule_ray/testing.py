"""A real Ray cluster of two nodes on loopback, for tests and benchmarks.

`LoopbackCluster` starts a head and a second node with ``ray start --block``, each in a
process group of its own, and stops them by those groups' ids: nothing it started is
left running, and no other Ray process on the machine is touched.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _ray_command() -> list[str]:
    # the `ray` script of the running interpreter's environment
    script = Path(sys.executable).with_name("ray")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ray.scripts.scripts"]


@attrs.define(eq=False)
class LoopbackCluster:
    """``head_resources`` and ``node_resources`` are each node's custom resources (e.g.
    ``{"fake_gpu": 1}``, a CPU resource standing in for a GPU); ``*_cpus`` their CPUs."""

    head_cpus: float = 2
    node_cpus: float = 2
    head_resources: dict[str, float] = attrs.Factory(dict)
    node_resources: dict[str, float] = attrs.Factory(dict)
    head_labels: dict[str, str] = attrs.Factory(dict)
    node_labels: dict[str, str] = attrs.Factory(dict)
    port: int = attrs.field(factory=free_port)
    client_port: int = attrs.field(factory=free_port)
    processes: list[subprocess.Popen[bytes]] = attrs.Factory(list)
    temp_dir: str = ""

    @property
    def address(self) -> str:
        """The GCS address, for ``ray.init`` / `ferrule_ray.connect`."""
        return f"127.0.0.1:{self.port}"

    @property
    def client_address(self) -> str:
        """The Ray Client address (``ray://``)."""
        return f"ray://127.0.0.1:{self.client_port}"

    def _start(
        self, args: list[str], cpus: float, resources: dict[str, float], labels: dict[str, str]
    ) -> None:
        import json

        command = [
            *_ray_command(),
            "start",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={cpus:g}",
            "--num-gpus=0",
            "--disable-usage-stats",
            *args,
        ]
        if resources:
            command.append(f"--resources={json.dumps(resources)}")
        if labels:
            command.append(f"--labels={','.join(f'{k}={v}' for k, v in labels.items())}")
        log = open(Path(self.temp_dir) / f"node-{len(self.processes)}.log", "wb")
        self.processes.append(
            subprocess.Popen(
                command,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # a process group of its own, stopped by its id
            )
        )
        log.close()

    @staticmethod
    def environment() -> dict[str, str]:
        """The environment the nodes run in, and drivers of this cluster need: Ray's token
        authentication off, whatever a token file in ``~/.ray`` (written when some
        earlier ``ray.init()`` started a local Ray) would make Ray choose."""
        return {**os.environ, "RAY_AUTH_MODE": "disabled"}

    def start(self, timeout: float = 120) -> LoopbackCluster:
        """Start the head, then the second node; return once both are up (or stop what
        was started and raise)."""
        try:
            return self._start_nodes(timeout)
        except BaseException:
            self.stop()
            raise

    def _start_nodes(self, timeout: float) -> LoopbackCluster:
        self.temp_dir = tempfile.mkdtemp(prefix="fray-")
        self._start(
            [
                "--head",
                f"--port={self.port}",
                f"--ray-client-server-port={self.client_port}",
                "--include-dashboard=false",
                f"--temp-dir={self.temp_dir}",
            ],
            self.head_cpus,
            self.head_resources,
            self.head_labels,
        )
        self._wait_for_port(timeout)
        self._start(
            [f"--address={self.address}"], self.node_cpus, self.node_resources, self.node_labels
        )
        self._wait_for_nodes(2, timeout)
        return self

    def _wait_for_port(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_running()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"the Ray head did not open port {self.port} in {timeout} s")

    def _wait_for_nodes(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_running()
            status = subprocess.run(
                [*_ray_command(), "status", f"--address={self.address}"],
                env=self.environment(),
                capture_output=True,
                text=True,
                check=False,
            )
            active = status.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0]
            if active.count("node_") >= count:
                return
            time.sleep(0.5)
        raise TimeoutError(f"the Ray cluster did not reach {count} nodes in {timeout} s")

    def _check_running(self) -> None:
        for process in self.processes:
            if process.poll() is not None:
                logs = "\n".join(
                    p.read_text(errors="replace")[-2000:]
                    for p in Path(self.temp_dir).glob("node-*.log")
                )
                raise RuntimeError(f"`ray start` exited with {process.returncode}:\n{logs}")

    def stop(self) -> None:
        """Stop both nodes and every process they started (their process groups)."""
        groups = [p.pid for p in self.processes]
        for signum, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            for group in groups:
                try:
                    os.killpg(group, signum)
                except ProcessLookupError:
                    continue
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and any(_group_alive(g) for g in groups):
                time.sleep(0.1)
        for process in self.processes:
            process.wait(timeout=5)
        self.processes.clear()
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LoopbackCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True
