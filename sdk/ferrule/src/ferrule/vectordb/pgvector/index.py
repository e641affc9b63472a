"""Agno's ``agno.vectordb.pgvector.index``: how `PgVector` indexes its embeddings. `HNSW`
(pgvector's graph index: ``m`` links per node, ``ef_construction`` build candidates,
``ef_search`` search candidates, and ``configuration``: PostgreSQL settings for the build,
``maintenance_work_mem`` the one taken) is ferrule-pgvector's index; its name is the
collection's (``name`` is refused). `Ivfflat` is refused: ferrule-pgvector builds HNSW
(or none: ``PgVector(vector_index=None)`` scans exactly)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

__all__ = ["DEFAULT_CONFIGURATION", "HNSW", "NO_IVFFLAT", "Ivfflat"]

NO_IVFFLAT = (
    "Ivfflat: ferrule-pgvector indexes with HNSW (pgvector's graph index, HNSW(m=..., "
    "ef_construction=..., ef_search=...)) or scans exactly (vector_index=None)"
)
_SETTINGS = ("maintenance_work_mem",)


def _configuration(_instance: Any, attribute: attrs.Attribute[Any], value: dict[str, Any]) -> None:
    unknown = sorted(set(value) - set(_SETTINGS))
    if unknown:
        raise InvalidInputError(
            f"the index build takes {', '.join(_SETTINGS)} only, not {', '.join(unknown)}",
            field=attribute.name,
        )


def _unnamed(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        raise InvalidInputError(
            "ferrule-pgvector names the index after the collection (<table>_hnsw)",
            field=attribute.name,
        )


#: Agno's build settings by default (read only: each index copies it).
DEFAULT_CONFIGURATION: Mapping[str, Any] = MappingProxyType({"maintenance_work_mem": "2GB"})


@attrs.define(kw_only=True, init=False)
class HNSW:
    """``HNSW(m=16, ef_construction=200, ef_search=40)`` (see the module docstring)."""

    name: str | None = attrs.field(validator=_unnamed)
    m: int
    ef_search: int
    ef_construction: int
    configuration: dict[str, Any] = attrs.field(validator=_configuration)

    def __init__(
        self,
        *,
        name: str | None = None,
        m: int = 16,
        ef_search: int = 5,
        ef_construction: int = 200,
        configuration: Mapping[str, Any] = DEFAULT_CONFIGURATION,
    ) -> None:
        self.__attrs_init__(
            name=name,
            m=m,
            ef_search=ef_search,
            ef_construction=ef_construction,
            configuration=dict(configuration),
        )

    def attributes(self) -> dict[str, Any]:
        """The store attributes building and searching this index."""
        out: dict[str, Any] = {
            "index": "hnsw",
            "ef_search": self.ef_search,
            "hnsw_m": self.m,
            "hnsw_ef_construction": self.ef_construction,
        }
        memory = self.configuration.get("maintenance_work_mem")
        if memory is not None:
            out["maintenance_work_mem"] = str(memory)
        return out


class Ivfflat:
    """Refused (see the module docstring)."""

    name: str | None
    lists: int
    probes: int
    dynamic_lists: bool
    configuration: dict[str, Any]

    def __init__(
        self,
        *,
        name: str | None = None,
        lists: int = 100,
        probes: int = 10,
        dynamic_lists: bool = True,
        configuration: Mapping[str, Any] = DEFAULT_CONFIGURATION,
    ) -> None:
        raise InvalidInputError(NO_IVFFLAT, field="vector_index")
