"""Which distribution provides a well-known operator, component type or part type.

The kernel knows no plugin: the top layer hands it `install_hint` (``Kernel(...,
install_hint=install_hint)``), so that an unknown name that a plugin of this repository
provides is answered with what to install. Plain strings: nothing here is imported.
"""

from __future__ import annotations

OPERATORS: dict[str, str] = {
    "echo": "ferrule-echo",
    "spell": "ferrule-spell",
    "split_text": "ferrule-split-text",
    "split_text_by_separator": "ferrule-split-text",
    "calculator": "ferrule-calculator",
    "http_request": "ferrule-http-request",
    "web_fetch": "ferrule-http-request",
    "terminal": "ferrule-terminal",
    "duckduckgo_search": "ferrule-duckduckgo",
    "duckduckgo_news": "ferrule-duckduckgo",
    "list_local_models": "ferrule-llamacpp",
    "download_model": "ferrule-llamacpp",
    "prepare_model": "ferrule-llamacpp",
    "remove_model": "ferrule-llamacpp",
}

# The local-model aliases name a choice of backends, not one distribution: that is why
# component-type hints say who provides the type but give no "pip install" line.
_LOCAL_BACKENDS = "ferrule-llamacpp (or ferrule-exllama with CUDA)"

COMPONENT_TYPES: dict[str, str] = {
    "openai_language_model": "ferrule-openai",
    "openai_responses_language_model": "ferrule-openai",
    "gemini_language_model": "ferrule-gemini",
    "gemini_interactions_language_model": "ferrule-gemini",
    "anthropic_language_model": "ferrule-anthropic",
    "claude_language_model": "ferrule-anthropic",
    "xai_language_model": "ferrule-xai",
    "grok_language_model": "ferrule-xai",
    "llamacpp_language_model": "ferrule-llamacpp",
    "exllama_language_model": "ferrule-exllama",
    "local_language_model": _LOCAL_BACKENDS,
    "tvm_language_model": _LOCAL_BACKENDS,
    "test_language_model": "ferrule-testmodel",
    "minilm_embedder": "ferrule-minilm",
    "local_embedder": "ferrule-minilm",
    "openai_embedder": "ferrule-openai",
    "openai_compatible_embedder": "ferrule-openai",
    "gemini_embedder": "ferrule-gemini",
    "sqlite_storage": "ferrule-sqlite",
    "postgres_storage": "ferrule-postgres",
    "sqlite_vec_store": "ferrule-sqlite-vec",
    "local_vector_store": "ferrule-sqlite-vec",
    "pgvector_store": "ferrule-pgvector",
    "faiss_store": "ferrule-faiss",
    "faiss": "ferrule-faiss",
    "chroma_vector_store": "ferrule-chroma",
}

#: Ailoy 0.1's raw component types, which ferrule-ailoy defines over a ferrule component of
#: another distribution: both are needed.
ADAPTED_COMPONENT_TYPES: dict[str, tuple[str, str]] = {
    name: ("ferrule-ailoy", over)
    for name, over in {
        "faiss_vector_store": "ferrule-faiss",
        "chromadb_vector_store": "ferrule-chroma",
        "tvm_embedding_model": "ferrule-minilm",
        "openai": "ferrule-openai",
        "gemini": "ferrule-gemini",
        "claude": "ferrule-anthropic",
        "grok": "ferrule-xai",
    }.items()
}
COMPONENT_TYPES.update({name: adapter for name, (adapter, _) in ADAPTED_COMPONENT_TYPES.items()})

#: API providers by the names `APIModel(provider=...)` and ``provider:model`` ids take: the
#: distribution serving each, the name its key is stored under (``ferrule keys``), and the
#: environment variables it reads its key from first.
PROVIDERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "openai": ("ferrule-openai", "openai", ("OPENAI_API_KEY",)),
    "gemini": ("ferrule-gemini", "gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    "google": ("ferrule-gemini", "gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    "anthropic": ("ferrule-anthropic", "anthropic", ("ANTHROPIC_API_KEY",)),
    "claude": ("ferrule-anthropic", "anthropic", ("ANTHROPIC_API_KEY",)),
    "xai": ("ferrule-xai", "xai", ("XAI_API_KEY",)),
    "grok": ("ferrule-xai", "xai", ("XAI_API_KEY",)),
}

#: Content parts by their ``type`` on the wire.
PART_TYPES: dict[str, str] = {
    "image_url": "ferrule-image",
    "input_audio": "ferrule-audio",
    "file": "ferrule-document",
}

#: Public names content plugins export (``from ferrule import ImageContent``).
EXPORTS: dict[str, str] = {
    "ImageContent": "ferrule-image",
    "ImagePart": "ferrule-image",
    "AudioContent": "ferrule-audio",
    "AudioPart": "ferrule-audio",
    "DocumentContent": "ferrule-document",
    "DocumentPart": "ferrule-document",
}

#: Python objects a content plugin turns into parts (in an agent's prompt and files=), by
#: the public qualified name of their class (`ferrule_kit.content.parts.class_name`).
OBJECTS: dict[str, str] = {
    "PIL.Image.Image": "ferrule-image",
    "pathlib.PurePath": "ferrule-document",
}

#: Placement kinds (a define's ``placement["kind"]``), by the distribution placing them.
PLACEMENTS: dict[str, str] = {"ray": "ferrule-ray"}

_INSTALLABLE = {
    "operator": OPERATORS,
    "placement": PLACEMENTS,
    "part_type": PART_TYPES,
    "export": EXPORTS,
    "object": OBJECTS,
}


def install_hint(kind: str, name: str) -> str | None:
    """A sentence saying which distribution provides ``name``, or None when none of this
    repository's does. ``kind`` is ``"operator"``, ``"component_type"``, ``"placement"``
    (a define's placement kind), ``"part_type"``
    (a part's wire ``type``), ``"export"`` (a name content plugins export) or ``"object"``
    (the qualified class name of an object a content plugin turns into a part). A
    `ferrule_kernel.InstallHint`."""
    if kind == "component_type" and name in ADAPTED_COMPONENT_TYPES:
        adapter, over = ADAPTED_COMPONENT_TYPES[name]
        return (
            f"It is Ailoy 0.1's, provided by {adapter} over {over}: pip install {adapter} {over}."
        )
    if kind == "component_type":
        distribution = COMPONENT_TYPES.get(name)
        return None if distribution is None else f"It is provided by {distribution}."
    distribution = _INSTALLABLE.get(kind, {}).get(name)
    if distribution is None:
        return None
    return f"It is provided by {distribution}: pip install {distribution}."
