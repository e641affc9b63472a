"""Where `http_request` may connect: the kit's address policy (`ferrule_kit.network.addresses`),
shared with knowledge URL ingest: public addresses only unless ``FERRULE_HTTP_REQUEST_ALLOW``
allows more. Re-exported here under the names this plugin has always documented."""

from __future__ import annotations

from ferrule_kit.network.addresses import (
    ALLOW_VARIABLE,
    AddressPolicyError,
    AddressRefusedError,
    Policy,
    address_of,
    why_not_public,
)

__all__ = [
    "ALLOW_VARIABLE",
    "AddressPolicyError",
    "AddressRefusedError",
    "Policy",
    "address_of",
    "why_not_public",
]
