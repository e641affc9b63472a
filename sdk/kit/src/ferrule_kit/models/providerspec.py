"""Provider attributes: what every hosted-API component's ``define`` takes, written once.

A provider plugin's language model or embedder subclasses `ProviderAttributes` and adds
its own fields (``organization``, ``max_tokens``, ``extra_body``, ...), the way vector
stores subclass `ferrule_kit.embeddings.vectorspec.VectorStoreAttributes`. Cheap to import: a plugin's
hook module names its attributes class directly.
"""

from __future__ import annotations

import attrs
from ferrule_kernel import in_range, local_only

__all__ = ["ProviderAttributes"]


@attrs.frozen
class ProviderAttributes:
    """The model, the key and the connection of a component on a provider's HTTP API.

    ``api_key`` is never shown (not in reprs, logs or errors); without it a plugin reads its
    provider's environment variable. ``base_url`` moves the endpoint (a proxy, a gateway, a
    compatible server): the key goes there too, so a network client may not choose it.
    """

    model: str
    api_key: str | None = attrs.field(default=None, repr=False)
    #: Where to send requests (and the key); the provider's endpoint if None. A network
    #: client may not choose it: the server would connect wherever it is told, with its
    #: own keys.
    base_url: str | None = attrs.field(
        default=None, validator=local_only("a URL for the server to connect to")
    )
    #: Seconds to wait for the next byte of a reply before giving up on it.
    read_timeout: float = attrs.field(default=120.0, validator=in_range(0.001))
    #: Retries of a failed request (429, 5xx, connection failures; each plugin says which)
    #: before its reply starts.
    max_retries: int = attrs.field(default=3, validator=in_range(0, 20))
    #: Seconds before the first retry, and what each later wait is multiplied by (1.0: the
    #: same wait each time).
    retry_delay: float = attrs.field(default=0.5, validator=in_range(0.0, 60.0))
    retry_multiplier: float = attrs.field(default=2.0, validator=in_range(1.0, 10.0))
    #: Headers sent with every request (a proxy's or gateway's own); the key's header is
    #: the plugin's and wins. A network client may not set them.
    extra_headers: dict[str, str] | None = attrs.field(
        default=None, validator=local_only("headers for the server to send"), repr=False
    )
