"""Registers Ailoy 0.1's raw component types, each over the ferrule component it stands for.

=========================  ==============================================================
Ailoy 0.1's type           defines (through the kernel's requests), and answers as Ailoy's
=========================  ==============================================================
``faiss_vector_store``     ``faiss_store`` (ferrule-faiss), cosine (`ferrule_ailoy.vectors`)
``chromadb_vector_store``  ``chroma_vector_store`` (ferrule-chroma), cosine
``tvm_embedding_model``    ``local_embedder`` (ferrule-minilm) (`ferrule_ailoy.embedding`)
``openai``                 ``openai_language_model`` (ferrule-openai) (`ferrule_ailoy.models`)
``gemini``                 ``gemini_language_model`` (ferrule-gemini)
``claude``                 ``anthropic_language_model`` (ferrule-anthropic)
``grok``                   ``xai_language_model`` (ferrule-xai)
=========================  ==============================================================

Each one is a component built on another (``ComponentTypeSpec.uses_components``): its
factory defines the ferrule component, named ``"<name>/<role>"``, deleted with it. Imports
nothing heavy: the classes are named as strings, loaded at the first define.
"""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, MethodSpec, hookimpl
from ferrule_kit.models.lmspec import INFER_INPUT, WIRE_CONVERTER

#: Ailoy 0.1's API-model types -> the ferrule language-model type each one defines.
API_MODEL_TYPES = {
    "openai": "openai_language_model",
    "gemini": "gemini_language_model",
    "claude": "anthropic_language_model",
    "grok": "xai_language_model",
}
#: Ailoy 0.1's vector-store types -> the ferrule store each one defines.
VECTOR_STORE_TYPES = {
    "faiss_vector_store": "faiss_store",
    "chromadb_vector_store": "chroma_vector_store",
}
EMBEDDING_MODEL_TYPE = "tvm_embedding_model"
#: The ferrule embedder an Ailoy embedding model defines: the local one, offline.
LOCAL_EMBEDDER = "local_embedder"

_VECTORS = "ferrule_ailoy.vectors"

#: Ailoy 0.1's store methods: (name, input type, output type or None for an object, text).
_STORE_METHODS = (
    ("insert", "InsertInput", None, "store one document and its vector -> {id}"),
    ("insert_many", "InsertManyInput", None, "store a JSON array of documents -> {ids}"),
    (
        "get_by_id",
        "IdInput",
        "GetByIdOutput",
        "a document by id -> {id, document, metadata, embedding}, or null",
    ),
    (
        "retrieve",
        "RetrieveInput",
        None,
        "the top_k documents nearest query_embedding, nearest first -> "
        "{results: [{id, document, metadata, similarity}]}",
    ),
    ("remove", "IdInput", "Done", "remove a document by id -> true"),
    ("clear", "ClearInput", "Done", "remove every document (input null or {}) -> true"),
)


def _store_type(name: str, over: str) -> ComponentTypeSpec:
    return ComponentTypeSpec(
        name=name,
        factory=f"{_VECTORS}:create_{name}",
        attributes=f"{_VECTORS}:{'Faiss' if name.startswith('faiss') else 'Chroma'}Attributes",
        methods=tuple(
            MethodSpec(
                method,
                f"{_VECTORS}:{inputs}",
                blocking=False,
                description=f"Ailoy 0.1: {text}.",
                outputs=None if outputs is None else f"{_VECTORS}:{outputs}",
            )
            for method, inputs, outputs, text in _STORE_METHODS
        ),
        description=f"Ailoy 0.1's {name}, over ferrule's {over} (cosine similarity).",
        uses_components=True,
    )


def _api_model_type(name: str, over: str) -> ComponentTypeSpec:
    return ComponentTypeSpec(
        name=name,
        factory=f"ferrule_ailoy.models:create_{name}",
        attributes="ferrule_ailoy.models:APIModelAttributes",
        methods=(
            MethodSpec(
                "infer",
                INFER_INPUT,
                streaming=True,
                blocking=False,
                description="Ailoy 0.1: the whole reply as ONE item, {message, finish_reason}, "
                "the message in OpenAI's wire shape (content a string).",
                converter=WIRE_CONVERTER,
            ),
        ),
        description=f"Ailoy 0.1's {name!r} API model (define {{api_key, model}}), over "
        f"ferrule's {over}.",
        uses_components=True,
    )


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    embedding_model = ComponentTypeSpec(
        name=EMBEDDING_MODEL_TYPE,
        factory="ferrule_ailoy.embedding:create",
        attributes="ferrule_ailoy.embedding:EmbeddingModelAttributes",
        methods=(
            MethodSpec(
                "infer",
                "ferrule_ailoy.embedding:PromptInput",
                blocking=False,
                description="Ailoy 0.1: the vector of one text, {prompt} -> {embedding}.",
            ),
        ),
        description=f"Ailoy 0.1's embedding model, over ferrule's {LOCAL_EMBEDDER} (its model "
        "id must stand for the local embedder's model through FERRULE_MODEL_ALIASES).",
        uses_components=True,
    )
    return [
        *(_store_type(name, over) for name, over in VECTOR_STORE_TYPES.items()),
        embedding_model,
        *(_api_model_type(name, over) for name, over in API_MODEL_TYPES.items()),
    ]
