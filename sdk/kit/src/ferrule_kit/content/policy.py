"""What a provider accepts besides text: its `ContentPolicy`, and the `Encoding` a content
plugin's encoder is handed.

A provider describes, per part type, the limits it puts on what it takes (`Accepts`) and
asks the part registry to encode (`ferrule_kit.content.parts.PartRegistry.encode`), which checks
the policy before the content plugin's encoder for the provider's dialect runs. The
policy names part types (``"image"``), never the plugins that provide them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    from ferrule_kit.errors import UnsupportedContentError

__all__ = ["Accepts", "ContentPolicy", "Encoding", "MiB"]

MiB = 1024 * 1024


@attrs.frozen
class Accepts:
    """The limits a provider puts on one part type; each left unset is no limit."""

    #: The ``media_format`` values taken (MIME types or format names).
    formats: frozenset[str] | None = None
    #: The largest inline data taken, in decoded bytes.
    max_bytes: int | None = None
    #: Whether parts that point at a URL are taken (the provider fetches them).
    urls: bool = True
    #: Whether parts that carry their data are taken.
    inline: bool = True


@attrs.frozen
class ContentPolicy:
    """What a provider accepts, checked by `PartRegistry.encode` before any request.

    A part type is taken when its plugin has an encoder for ``dialect`` and ``refuses``
    does not name it; ``limits`` narrows what is taken of a part type. ``elsewhere`` maps a
    refused ``content_type`` (a part type's name, or ``"<name>_url"`` for its by-URL form) to
    a sentence saying where it would work.
    """

    provider: str
    dialect: str
    limits: Mapping[str, Accepts] = attrs.field(factory=dict)
    refuses: frozenset[str] = frozenset()
    elsewhere: Mapping[str, str] = attrs.field(factory=dict)
    #: The provider's name in messages (``"Anthropic (Claude)"``); ``provider`` if empty.
    label: str = ""
    #: How the provider's documentation spells 2**20 bytes, so size errors match it.
    size_unit: Literal["MiB", "MB"] = "MiB"

    @property
    def name(self) -> str:
        return self.label or self.provider

    def refuse(self, message: str, field: str, content_type: str) -> UnsupportedContentError:
        """The error refusing a part of ``content_type`` at ``field``, with where it would work."""
        from ferrule_kit.errors import UnsupportedContentError

        elsewhere = self.elsewhere.get(content_type)
        if elsewhere:
            message = f"{message}. {elsewhere}"
        return UnsupportedContentError(
            message, field=field, provider=self.provider, content_type=content_type
        )

    def size(self, size: int, digits: int = 1) -> str:
        """``size`` bytes in this provider's unit, as its documentation writes them."""
        return f"{size / MiB:.{digits}f} {self.size_unit}"


@attrs.frozen
class Encoding:
    """What an encoder is told besides the part: the provider's policy and the part's
    field path (``$.messages[0].content[1]``), for the errors it raises."""

    policy: ContentPolicy
    field: str

    def refuse(self, message: str, content_type: str) -> UnsupportedContentError:
        return self.policy.refuse(message, self.field, content_type)
