"""Agno's ``agno.vectordb.distance``: `Distance`, a vector database's metric by Agno's names,
and `store_distance`, the name ferrule's vector stores give it (``max_inner_product`` is
their ``dot``)."""

from __future__ import annotations

import enum
from typing import Any

from ferrule_kernel import InvalidInputError

__all__ = ["Distance", "store_distance"]


class Distance(str, enum.Enum):
    cosine = "cosine"
    l2 = "l2"
    max_inner_product = "max_inner_product"


_STORE = {"cosine": "cosine", "l2": "l2", "max_inner_product": "dot", "dot": "dot"}


def store_distance(distance: Any) -> str:
    """The store's name of ``distance`` (a `Distance` or its name)."""
    name = distance.value if isinstance(distance, Distance) else str(distance)
    if name not in _STORE:
        raise InvalidInputError(
            f"expected one of cosine, l2, max_inner_product; got {name!r}", field="distance"
        )
    return _STORE[name]
