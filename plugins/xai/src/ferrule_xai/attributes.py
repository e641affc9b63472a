"""What ``define("xai_language_model", name, attrs)`` takes (imported when one is defined,
not by the plugin's hook module: a cold start builds no class it does not use)."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kit.models.providerspec import ProviderAttributes


@attrs.frozen
class XAIAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes` and ``extra_body``). The key comes from
    here or ``XAI_API_KEY`` and is required; ``base_url`` (a regional endpoint, a proxy)
    defaults to ``https://api.x.ai/v1``. ``read_timeout`` is long: reasoning models think
    quietly."""

    #: Extra request fields, sent as given.
    extra_body: dict[str, Any] = attrs.field(factory=dict)
    #: False: a structured-output schema guides the reply but is never sent as strict
    #: (``strict: false``); True: strict whenever the schema is closed.
    strict_output: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
