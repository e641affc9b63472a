"""Database URLs as users write them (SQLAlchemy's, as Agno's programs do) and as the
drivers take them."""

from __future__ import annotations

import re

__all__ = ["libpq_url"]

#: SQLAlchemy's driver suffix in Agno's URLs (``postgresql+psycopg://``): libpq takes none.
_DRIVER = re.compile(r"^(postgres(?:ql)?)\+[a-z0-9_]+://")


def libpq_url(db_url: str) -> str:
    """``db_url`` as libpq takes it: a SQLAlchemy driver suffix dropped
    (``postgresql+psycopg://`` is ``postgresql://``)."""
    return _DRIVER.sub(r"\1://", db_url)
