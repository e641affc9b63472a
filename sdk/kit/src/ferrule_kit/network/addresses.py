"""Where outgoing HTTP may connect: public addresses only, unless the host allows more.

One policy for every request whose URL someone else chooses (`http_request`, a model's
tool or a ``ferrule serve`` client; `ferrule.knowledge`'s URL ingest): such a request
leaves from the host's network, and without a rule it reaches what only the host should
(loopback services, the private network, a cloud's metadata service at 169.254.169.254).
So every address a connection would go to is checked first: the host's address when the
URL names one (in any spelling: ``127.1``, ``2130706433``, ``0x7f000001``,
``[::ffff:127.0.0.1]``), and every address a host name resolves to, on every redirect
(`ferrule_kit.network.checked_connector` does it for aiohttp). Loopback, private, link-local,
multicast, reserved, shared (carrier NAT), unspecified and IPv6 addresses that embed any
of those are refused.

``FERRULE_HTTP_REQUEST_ALLOW`` (comma- or space-separated) allows more: host names
(``localhost``, ``wiki.internal``: whatever they resolve to), addresses (``::1``) and
networks (``10.0.0.0/8``). Standard library and attrs only: plugin discovery imports it.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket

import attrs
from ferrule_kernel import FerruleError, register_error_kind

__all__ = [
    "ALLOW_VARIABLE",
    "AddressPolicyError",
    "AddressRefusedError",
    "Policy",
    "address_of",
    "why_not_public",
]

ALLOW_VARIABLE = "FERRULE_HTTP_REQUEST_ALLOW"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_HOST = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?")
# Well-known NAT64 prefix: its addresses carry an IPv4 address in their last 32 bits.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


@register_error_kind
class AddressPolicyError(FerruleError):
    """``FERRULE_HTTP_REQUEST_ALLOW`` holds something that is neither a host name, an
    address nor a network."""

    kind = "address_policy_error"


@register_error_kind
class AddressRefusedError(FerruleError):
    """A connection would go to an address the policy does not allow; raised before it is
    made."""

    kind = "address_refused"


def address_of(host: str) -> Address | None:
    """The address ``host`` spells, however it spells it, or None for a host name.

    Besides the canonical forms this takes what the C resolver takes for IPv4
    (``127.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``): a host that would reach an
    address must be checked as that address.
    """
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def _embedded(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def why_not_public(address: Address) -> str | None:
    """Why ``address`` is not a public one (``"a loopback address"``, ...), or None."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded(address)
        inner = why_not_public(embedded) if embedded is not None else None
        if inner is not None:
            return f"an IPv6 address for {embedded}, {inner}"
    checks = (
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address (where cloud metadata services are)"),
        (address.is_multicast, "a multicast address"),
        (address.is_unspecified, "the unspecified address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "not a public address"),
    )
    return next((reason for failed, reason in checks if failed), None)


@attrs.frozen
class Policy:
    """What ``FERRULE_HTTP_REQUEST_ALLOW`` allows besides public addresses."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def from_environment(cls) -> Policy:
        """The policy the host set; `AddressPolicyError` for an entry that is none of a
        host name, an address or a network."""
        hosts: set[str] = set()
        networks: list[Network] = []
        for entry in os.environ.get(ALLOW_VARIABLE, "").replace(",", " ").split():
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            address = address_of(entry)
            if address is not None:
                networks.append(ipaddress.ip_network(address))
            elif _HOST.fullmatch(entry):
                hosts.add(entry.lower().rstrip("."))
            else:
                raise AddressPolicyError(
                    f"{ALLOW_VARIABLE} holds {entry!r}, which is neither a host name nor an "
                    "address or network"
                )
        return cls(frozenset(hosts), tuple(networks))

    def check_host(self, host: str, *, unresolved_ok: bool = False) -> None:
        """Raise `AddressRefusedError` unless every address ``host`` reaches is allowed: the
        address it spells, else each one it resolves to now (for a URL checked before
        another library connects to it; `ferrule_kit.network.checked_connector` checks aiohttp's
        own connections as they are made). ``unresolved_ok``: a name that does not resolve
        here passes (another machine will resolve it, on its own network: a proxy's)."""
        address = address_of(host)
        if address is not None:
            self.check(host, address)
            return
        if host.lower().rstrip(".") in self.hosts:
            return
        try:
            found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError) as exc:
            if unresolved_ok:
                return
            raise AddressRefusedError(f"{host} does not resolve ({exc})") from None
        for *_, sockaddr in found:
            resolved = address_of(str(sockaddr[0]))
            if resolved is None:
                raise AddressRefusedError(f"{host} resolves to {sockaddr[0]!r}")
            self.check(host, resolved)

    def check(self, host: str, address: Address) -> None:
        """Raise `AddressRefusedError` unless a connection for ``host`` may go to ``address``."""
        if host.lower().rstrip(".") in self.hosts:
            return
        reason = why_not_public(address)
        if reason is None or any(address in network for network in self.networks):
            return
        what = f"{host} resolves to" if address_of(host) is None else f"{address} is"
        raise AddressRefusedError(f"{what} {reason}")
