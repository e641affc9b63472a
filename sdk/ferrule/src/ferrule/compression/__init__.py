"""Agno's ``agno.compression``: `CompressionManager` (`ferrule.compression.manager`), a
model shortening a run's tool results before the model reads them again."""

from .manager import CompressionManager

__all__ = ["CompressionManager"]
