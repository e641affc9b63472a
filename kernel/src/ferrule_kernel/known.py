"""Which distribution provides a well-known operator or component type.

Used only to make "unknown operator" errors say what to install. Plain strings: the
kernel imports nothing of these.
"""

from __future__ import annotations

KNOWN_OPERATORS: dict[str, str] = {
    "echo": "ferrule-echo",
    "spell": "ferrule-spell",
    "split_text": "ferrule-split-text",
    "split_text_by_separator": "ferrule-split-text",
    "calculator": "ferrule-calculator",
    "http_request": "ferrule-http-request",
    "list_local_models": "ferrule-llamacpp",
    "download_model": "ferrule-llamacpp",
    "remove_model": "ferrule-llamacpp",
}

KNOWN_COMPONENT_TYPES: dict[str, str] = {
    "openai_language_model": "ferrule-openai",
    "gemini_language_model": "ferrule-gemini",
    "anthropic_language_model": "ferrule-anthropic",
    "claude_language_model": "ferrule-anthropic",
    "xai_language_model": "ferrule-xai",
    "grok_language_model": "ferrule-xai",
    "llamacpp_language_model": "ferrule-llamacpp",
    "exllama_language_model": "ferrule-exllama",
    "local_language_model": "ferrule-llamacpp (or ferrule-exllama with CUDA)",
    "tvm_language_model": "ferrule-llamacpp (or ferrule-exllama with CUDA)",
    "test_language_model": "ferrule-testmodel",
}
