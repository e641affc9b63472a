"""Agno's ``agno.utils.encryption``: `generate_encryption_key`, a new Fernet key (32 random
bytes, URL-safe base64: what ``cryptography.fernet.Fernet`` takes)."""

from __future__ import annotations

import base64
import os

__all__ = ["generate_encryption_key"]


def generate_encryption_key() -> str:
    """A new Fernet key: 44 URL-safe base64 characters."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode("ascii")
