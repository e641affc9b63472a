"""`ferrule_kit.network.addresses`: the address policy of `http_request` and knowledge URL ingest.
Properties over every address of the refused ranges, in every spelling the C resolver
takes; the wire-level checks (redirects, DNS answers) are in the http-request plugin's
and the knowledge tests, against real loopback servers."""

from __future__ import annotations

import ipaddress

import pytest
from ferrule_kernel import error_from_dict
from ferrule_kit.network.addresses import (
    ALLOW_VARIABLE,
    AddressPolicyError,
    AddressRefusedError,
    Policy,
    address_of,
)
from hypothesis import given
from hypothesis import strategies as st

REFUSED = [
    ipaddress.ip_network(n)
    for n in ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16")
]


def addresses_in(network: ipaddress.IPv4Network) -> st.SearchStrategy[ipaddress.IPv4Address]:
    first = int(network.network_address)
    return st.integers(first, first + network.num_addresses - 1).map(ipaddress.IPv4Address)


refused_v4 = st.sampled_from(REFUSED).flatmap(addresses_in)


@given(refused_v4)
def test_every_spelling_of_a_refused_address_is_refused(address: ipaddress.IPv4Address) -> None:
    number = int(address)
    spellings = [str(address), str(number), hex(number), f"[::ffff:{address}]"]
    for spelling in spellings:
        found = address_of(spelling)
        assert found is not None, spelling
        with pytest.raises(AddressRefusedError):
            Policy().check(spelling, found)


@given(refused_v4)
def test_an_allowed_network_allows_its_addresses_only(address: ipaddress.IPv4Address) -> None:
    network = ipaddress.ip_network(f"{address}/24", strict=False)
    policy = Policy(networks=(network,))
    policy.check(str(address), address)  # allowed
    outside = network.broadcast_address + 1
    if any(outside in refused for refused in REFUSED):
        with pytest.raises(AddressRefusedError):
            policy.check(str(outside), outside)


def test_a_public_address_passes_and_a_name_is_checked_by_what_it_resolves_to() -> None:
    public = ipaddress.ip_address("93.184.215.14")
    Policy().check("example.com", public)
    with pytest.raises(AddressRefusedError, match=r"wiki\.internal resolves to a private"):
        Policy().check("wiki.internal", ipaddress.ip_address("10.1.2.3"))
    Policy(hosts=frozenset({"wiki.internal"})).check(
        "WIKI.internal.", ipaddress.ip_address("10.1.2.3")
    )


def test_the_setting_is_read_and_a_bad_entry_is_a_typed_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "localhost, 10.0.0.0/8 ::1")
    policy = Policy.from_environment()
    assert policy.hosts == {"localhost"}
    assert set(map(str, policy.networks)) == {"10.0.0.0/8", "::1/128"}
    monkeypatch.setenv(ALLOW_VARIABLE, "ok, not/a host!")
    with pytest.raises(AddressPolicyError, match=f"{ALLOW_VARIABLE} holds 'not/a'") as caught:
        Policy.from_environment()
    assert type(error_from_dict(caught.value.to_dict())) is AddressPolicyError
