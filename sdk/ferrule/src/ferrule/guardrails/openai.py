"""Agno's ``agno.guardrails.openai``: `OpenAIModerationGuardrail`, a run's input checked by
OpenAI's moderation endpoint (``POST /moderations``) before the model sees it.

A flagged input stops the run with `InputCheckError` (``check_trigger``
``input_not_allowed``; ``additional_data``: the reply's ``categories`` and
``category_scores``) when any flagged category is among ``raise_for_categories`` (all, when
None). The text is the input's (`RunInput.input_content_string`), with its images when the
run has any. The request goes through the kit's HTTP client (retries, typed errors, the
key kept out of every message) to ``$OPENAI_BASE_URL`` or OpenAI; the key is ``api_key``,
``$OPENAI_API_KEY`` or the one stored with ``ferrule keys set openai``.
"""

from __future__ import annotations

from typing import Any

from ferrule_kit.guardrails import BaseGuardrail, CheckTrigger, InputCheckError

__all__ = ["CATEGORIES", "OpenAIModerationGuardrail"]

#: The categories OpenAI's moderation reports.
CATEGORIES = (
    "sexual",
    "sexual/minors",
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "violence",
    "violence/graphic",
)


def _images(run_input: Any) -> list[dict[str, Any]]:
    out = []
    for image in getattr(run_input, "images", None) or ():
        url = getattr(image, "url", None)
        if url is None and hasattr(image, "to_base64"):
            url = f"data:{getattr(image, 'mime_type', None) or 'image/png'};base64,{image.to_base64()}"
        if url:
            out.append({"type": "image_url", "image_url": {"url": url}})
    return out


class OpenAIModerationGuardrail(BaseGuardrail):
    """``OpenAIModerationGuardrail(raise_for_categories=["violence"])`` (see the module
    docstring)."""

    moderation_model: str
    raise_for_categories: list[str] | None
    api_key: str | None

    def __init__(
        self,
        moderation_model: str = "omni-moderation-latest",
        raise_for_categories: list[str] | None = None,
        api_key: str | None = None,
    ) -> None:
        from ferrule_kernel import InvalidInputError

        unknown = sorted(set(raise_for_categories or ()) - set(CATEGORIES))
        if unknown:
            raise InvalidInputError(
                f"OpenAI's moderation has no category {', '.join(unknown)}; its categories: "
                + ", ".join(CATEGORIES),
                field="raise_for_categories",
            )
        self.moderation_model = moderation_model
        self.raise_for_categories = raise_for_categories
        self.api_key = api_key

    async def async_check(self, run_input: Any) -> None:
        """Stop the run when its input is flagged (see the module docstring)."""
        from ferrule_kit.network.http import HTTPClient, environment_base_url, resolve_api_key

        key = resolve_api_key("openai", self.api_key, ["OPENAI_API_KEY"])
        text = run_input.input_content_string()
        images = _images(run_input)
        payload: Any = [{"type": "text", "text": text}, *images] if images else text
        client = HTTPClient(
            provider="openai",
            base_url=environment_base_url(["OPENAI_BASE_URL"], "https://api.openai.com/v1"),
            headers={"Authorization": f"Bearer {key}"},
            secrets=[key or ""],
        )
        try:
            reply = await client.request_json(
                "/moderations", {"model": self.moderation_model, "input": payload}
            )
        finally:
            await client.close()
        result = reply["results"][0]
        if not result.get("flagged"):
            return
        categories = result.get("categories", {})
        wanted = self.raise_for_categories
        if wanted is None or any(categories.get(c) for c in wanted):
            raise InputCheckError(
                "OpenAI moderation violation detected.",
                check_trigger=CheckTrigger.INPUT_NOT_ALLOWED,
                additional_data={
                    "categories": categories,
                    "category_scores": result.get("category_scores", {}),
                },
            )

    def check(self, run_input: Any) -> None:
        """`async_check`, waited for."""
        from ..shared_runtime import default_runtime

        default_runtime().sync_bridge.run(self.async_check(run_input))
