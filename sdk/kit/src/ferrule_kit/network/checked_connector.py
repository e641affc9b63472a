"""An aiohttp connector that connects only where an `ferrule_kit.network.addresses.Policy` allows.

Every connection of a session made with it, redirects included, is checked: an address
the URL spells before connecting, and every address a host name resolves to (its
resolver refuses the whole answer if one is not allowed), and it connects to those
checked addresses: a name is not resolved a second time, so it cannot change its answer
in between. A refused connection raises `ferrule_kit.network.addresses.AddressRefusedError` out
of the request. Imports aiohttp: import this module when the first request is made.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from .addresses import AddressRefusedError, Policy, address_of

if TYPE_CHECKING:
    from aiohttp.tracing import Trace

__all__ = ["CheckedConnector"]


class _CheckedResolver(AbstractResolver):
    """Resolves as aiohttp does, then refuses the lot if any address is not allowed."""

    def __init__(self, policy: Policy) -> None:
        self._policy = policy
        self._resolver = aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._resolver.resolve(host, port, family)
        for result in found:
            address = address_of(result["host"])
            if address is None:  # a resolver answers addresses; anything else is refused
                raise AddressRefusedError(f"{host} resolves to {result['host']!r}")
            self._policy.check(host, address)
        return found

    async def close(self) -> None:
        await self._resolver.close()


class CheckedConnector(aiohttp.TCPConnector):
    """A `aiohttp.TCPConnector` under ``policy``: pass it as a session's ``connector``."""

    def __init__(self, policy: Policy) -> None:
        super().__init__(resolver=_CheckedResolver(policy), use_dns_cache=False)
        self._policy = policy

    async def connect(
        self, req: aiohttp.ClientRequest, traces: list[Trace], timeout: aiohttp.ClientTimeout
    ) -> aiohttp.connector.Connection:
        host = req.url.raw_host or ""
        address = address_of(host)
        if address is not None:
            self._policy.check(host, address)
        return await super().connect(req, traces, timeout)
