"""ferrule: an agent runtime with a tiny kernel and plugins for everything that does work.

    from ferrule import Runtime
    rt = Runtime()
    print(rt.call("echo", {"text": "Hello world"}))
    rt.stop()
"""

from __future__ import annotations

from typing import Any

from ferrule_kernel import FerruleError, InvalidInputError, configure_logging

from .messages import AudioPart, ImagePart, Message, Part, ReasoningPart, TextPart, ToolCall
from .models import APIModel, LocalModel
from .runtime import AsyncRuntime, Runtime

__all__ = [
    "APIModel",
    "AsyncRuntime",
    "AudioPart",
    "FerruleError",
    "ImagePart",
    "InvalidInputError",
    "LocalModel",
    "Message",
    "Part",
    "ReasoningPart",
    "Runtime",
    "TextPart",
    "ToolCall",
    "configure_logging",
]

# Names provided by optional plugin distributions: imported on first access, so
# `from ferrule import ImageContent` works when ferrule-image is installed and says
# what to install when it is not.
_OPTIONAL = {
    "ImageContent": ("ferrule_image", "ferrule-image"),
    "AudioContent": ("ferrule_audio", "ferrule-audio"),
}


def __getattr__(name: str) -> Any:
    if name in _OPTIONAL:
        module_name, distribution = _OPTIONAL[name]
        try:
            module = __import__(module_name)
        except ImportError as exc:
            raise ImportError(
                f"{name} is provided by the {distribution} plugin: pip install {distribution}",
                name=name,
            ) from exc
        return getattr(module, name)
    raise AttributeError(f"module 'ferrule' has no attribute {name!r}")
