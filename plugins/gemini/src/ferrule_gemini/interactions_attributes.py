"""What ``define("gemini_interactions_language_model", name, attrs)`` takes (imported when
one is defined, not by the plugin's hook module)."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, in_range
from ferrule_kit.models.providerspec import ProviderAttributes

SERVICE_TIERS = ("flex", "standard", "priority")
MODALITIES = ("text", "image", "audio")


def _modalities(instance: Any, attribute: Any, value: list[str] | None) -> None:
    for index, modality in enumerate(value or ()):
        if modality not in MODALITIES:
            raise InvalidInputError(
                f"must be one of {MODALITIES}; got {modality!r}",
                field=f"{attribute.name}[{index}]",
            )


@attrs.frozen
class GeminiInteractionsAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes`, whose key and endpoint rules are the
    Gemini component's). ``model`` names the model; ``agent`` (an agent id such as
    ``deep-research-...``) takes the agent path instead, with ``agent_config`` and
    ``environment`` sent as given. ``store`` None keeps Google's default (the interaction is
    stored, and a conversation continues from its id); False sends the whole conversation
    each time. ``background`` creates the interaction server-side and polls it with ``GET``
    every ``poll_interval`` seconds until it ends, for at most ``max_wait`` seconds."""

    agent: str | None = None
    agent_config: dict[str, Any] | None = None
    store: bool | None = None
    background: bool = False
    #: An agent's sandbox: an environment's name (``"remote"``, ``"env_..."``) or its config.
    environment: Any = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of((str, dict)))
    )
    service_tier: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(SERVICE_TIERS))
    )
    #: What the reply may hold: ``["text", "image"]``, ``["audio"]``... (lower case).
    response_modalities: list[str] | None = attrs.field(default=None, validator=_modalities)
    poll_interval: float = attrs.field(default=10.0, validator=in_range(0.0, 600.0))
    max_wait: float = attrs.field(default=1800.0, validator=in_range(0.001, 86400.0))
    #: More ``generation_config`` fields (``seed``...), sent as given (the model path).
    generation_config: dict[str, Any] = attrs.field(factory=dict)
    #: More request fields, sent as given.
    extra_body: dict[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.agent is not None and self.store is False:
            raise InvalidInputError(
                "an agent's interactions are kept at Google: leave store unset with an agent",
                field="store",
            )
        if self.agent is None and (self.agent_config or self.environment is not None):
            name = "agent_config" if self.agent_config else "environment"
            raise InvalidInputError("configures an agent: give agent too", field=name)
