"""Agno's ``agno.vectordb.score``: a distance as a similarity from 0 to 1 (higher is nearer)
for each metric, and back, so that one ``similarity_threshold`` means the same whatever the
metric: cosine ``1 - d`` (clamped), L2 ``1 / (1 + d)``, inner product ``(p + 1) / 2``
(clamped)."""

from __future__ import annotations

import math
from typing import Any

from ferrule_kernel import InvalidInputError

from .distance import Distance

__all__ = [
    "normalize_cosine",
    "normalize_l2",
    "normalize_max_inner_product",
    "normalize_score",
    "score_to_cosine_distance",
    "score_to_distance_threshold",
    "score_to_l2_distance",
    "score_to_max_inner_product",
]


def normalize_cosine(distance: float) -> float:
    """A cosine distance (0 the same, 2 opposite) as a similarity in [0, 1]."""
    if not math.isfinite(distance):
        return 0.0
    return min(1.0, max(0.0, 1.0 - distance))


def normalize_l2(distance: float) -> float:
    """A Euclidean distance (0 the same) as a similarity in (0, 1]."""
    if not math.isfinite(distance):
        return 0.0
    return 1.0 / (1.0 + distance)


def normalize_max_inner_product(inner_product: float) -> float:
    """An inner product of unit vectors (1 the same, -1 opposite) as a similarity in [0, 1]."""
    if math.isnan(inner_product):
        return 0.0
    if math.isinf(inner_product):
        return 1.0 if inner_product > 0 else 0.0
    return min(1.0, max(0.0, (inner_product + 1.0) / 2.0))


def _metric(metric: Any) -> Distance:
    try:
        return Distance(metric)
    except ValueError:
        raise InvalidInputError(
            f"expected one of cosine, l2, max_inner_product; got {metric!r}", field="metric"
        ) from None


def normalize_score(distance: float, metric: Distance) -> float:
    """``distance`` under ``metric`` as a similarity in [0, 1]."""
    kind = _metric(metric)
    if kind is Distance.cosine:
        return normalize_cosine(distance)
    if kind is Distance.l2:
        return normalize_l2(distance)
    return normalize_max_inner_product(distance)


def score_to_cosine_distance(similarity: float) -> float:
    """The cosine distance of a similarity."""
    return 1.0 - similarity


def score_to_l2_distance(similarity: float) -> float:
    """The Euclidean distance of a similarity (above 0)."""
    if similarity <= 0:
        raise InvalidInputError("must be above 0 for an L2 distance", field="similarity")
    return 1.0 / similarity - 1.0


def score_to_max_inner_product(similarity: float) -> float:
    """The inner product of a similarity."""
    return 2.0 * similarity - 1.0


def score_to_distance_threshold(similarity: float, metric: Distance) -> float:
    """The distance under ``metric`` a result may have at most to be ``similarity`` near."""
    kind = _metric(metric)
    if kind is Distance.cosine:
        return score_to_cosine_distance(similarity)
    if kind is Distance.l2:
        return score_to_l2_distance(similarity)
    return score_to_max_inner_product(similarity)
