"""Registers `chroma_vector_store`, with the contract's methods.
Imports nothing heavy: the chromadb client loads when a store is defined
(`ferrule_chroma.store`)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import attrs
from ferrule_kernel import ComponentTypeSpec, InvalidInputError, hookimpl
from ferrule_kernel.trust import caller_is_trusted
from ferrule_kit.embeddings.vectorspec import VectorStoreAttributes, vector_store_type
from ferrule_kit.network.addresses import (
    ALLOW_VARIABLE,
    AddressPolicyError,
    AddressRefusedError,
    Policy,
)

COMPONENT_TYPE = "chroma_vector_store"
#: Where the host puts its Chroma server's URL for stores defined without ``url``.
URL_ENV = "FERRULE_CHROMA_URL"
DEFAULT_URL = "http://localhost:8000"


#: Chroma's rule for a collection's name: 3 to 63 letters, digits, '.', '_' or '-',
#: starting and ending with a letter or digit, no '..' (it is not an SQL table name, so not
#: the SQL stores' rule `VectorStoreAttributes` checks).
CHROMA_NAME = re.compile(r"(?!.*\.\.)[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]")


def _chroma_name(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or not CHROMA_NAME.fullmatch(value):
        raise InvalidInputError(
            "a Chroma collection's name has 3 to 63 letters, digits, '.', '_' or '-', starts "
            "and ends with a letter or digit, and has no '..'",
            field=attribute.name,
        )


def _allowed_server(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """A ``url`` from the network goes where `http_request` may go, no further: public
    addresses, and what ``FERRULE_HTTP_REQUEST_ALLOW`` allows (`ferrule_kit.network.addresses`)."""
    if value is None or caller_is_trusted():
        return
    host = urlsplit(value).hostname
    if not host:
        return  # the store's own check refuses it, naming the field
    try:
        Policy.from_environment().check_host(host)
    except (AddressRefusedError, AddressPolicyError) as exc:
        raise InvalidInputError(
            f"{exc.message}: a Chroma server named over the network must be at a public "
            f"address unless the host allows it in {ALLOW_VARIABLE} (e.g. "
            f"{ALLOW_VARIABLE}=localhost)",
            field=attribute.name,
        ) from None


@attrs.frozen
class ChromaAttributes(VectorStoreAttributes):
    """What ``define`` takes: the server, and the collection (see `VectorStoreAttributes`;
    the collection is the Chroma collection's name)."""

    collection: str = attrs.field(default="chunks", validator=_chroma_name)
    #: The Chroma server, ``http(s)://host:port``. Without it, ``$FERRULE_CHROMA_URL``,
    #: else ``http://localhost:8000`` (where ``chroma run`` listens). From a network client
    #: (``ferrule serve``) it must pass the address policy `http_request` has: public
    #: addresses, and those ``FERRULE_HTTP_REQUEST_ALLOW`` allows (``localhost``, ...).
    url: str | None = attrs.field(default=None, validator=_allowed_server)
    tenant: str = "default_tenant"
    database: str = "default_database"


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        vector_store_type(
            COMPONENT_TYPE,
            "ferrule_chroma.store:create",
            ChromaAttributes,
            description="Chunks in a collection of a Chroma server (HNSW search: cosine, "
            "inner product or L2) with ferrule's metadata filters.",
        )
    ]
