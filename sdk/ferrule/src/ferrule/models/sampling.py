"""The sampling parameters Agno's model classes take, checked once when the model is made:
`Sampling` turns them into ferrule's inference inputs (`APIModel.infer_options`), which
every request of a run carries, whatever the provider."""

from __future__ import annotations

from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError, in_range

ReasoningEffort = Literal["minimal", "low", "medium", "high"]
EFFORTS = ("minimal", "low", "medium", "high")


def _stop_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _effort(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and value not in EFFORTS:
        raise InvalidInputError(
            f"must be one of {', '.join(EFFORTS)}; got {value!r}", field=attribute.name
        )


@attrs.frozen
class Sampling:
    """A model's inference inputs (each None: the provider's default)."""

    temperature: float | None = attrs.field(default=None, validator=in_range(0.0, 2.0))
    top_p: float | None = attrs.field(default=None, validator=in_range(0.0, 1.0))
    max_tokens: int | None = attrs.field(default=None, validator=in_range(1))
    stop: list[str] = attrs.field(factory=list, converter=_stop_list)
    reasoning_effort: ReasoningEffort | None = attrs.field(default=None, validator=_effort)
    #: Reasoning on at the provider's own depth (Claude's ``thinking``, Gemini's
    #: ``include_thoughts`` / ``thinking_budget``), when no effort is named.
    reasoning: bool = False

    def infer_options(self) -> dict[str, Any]:
        """The `ferrule_kit.models.lm.InferInput` fields these set."""
        options: dict[str, Any] = {
            name: value
            for name in ("temperature", "top_p", "max_tokens")
            if (value := getattr(self, name)) is not None
        }
        if self.stop:
            options["stop"] = self.stop
        if self.reasoning_effort is not None:
            options["reasoning"] = self.reasoning_effort
        elif self.reasoning:
            options["reasoning"] = True
        return options


def client_attributes(
    attributes: dict[str, Any], *, timeout: float | None, max_retries: int | None
) -> dict[str, Any]:
    """``attributes`` with Agno's client settings under the component's names: ``timeout``
    is ``read_timeout`` (seconds to wait for the next byte), ``max_retries`` as is."""
    if timeout is not None:
        attributes["read_timeout"] = timeout
    if max_retries is not None:
        attributes["max_retries"] = max_retries
    return attributes
