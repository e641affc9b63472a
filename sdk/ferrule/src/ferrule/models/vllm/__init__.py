"""VLLM under Agno's module path: `vllm.VLLM`."""

from __future__ import annotations

from .vllm import VLLM

__all__ = ["VLLM"]
