"""Agno's ``agno.run.cancellation_management.base``: `BaseRunCancellationManager`, the
abstract cancellation manager (``ferrule.run.cancel`` says how runs use it). It lives in
`ferrule.agent.cancellation`, beside the runs that call it."""

from __future__ import annotations

from ...agent.cancellation import BaseRunCancellationManager

__all__ = ["BaseRunCancellationManager"]
