"""Ailoy's `EmbeddingModel`: an embedder component defined on a runtime (the process's
shared one when none is named), embedding one text at a time.

    emb = await EmbeddingModel.new_local("BAAI/bge-m3")  # or new_local_sync(...)
    vector = await emb.infer("What is Ailoy?")            # or infer_sync(...)

The model id reaches the installed embedder plugins through `ferrule.models.route_embedder`,
after ``$FERRULE_MODEL_ALIASES``: ``BAAI/bge-m3=all-MiniLM-L6-v2`` runs Ailoy's code on
the offline MiniLM. An aliased id keeps the dimension its own model has
(`ferrule_kit.embeddings.embedspec.aliased_dimension`: bge-m3's vectors are 1024 wide, and
Ailoy's code sizes its stores so, ``VectorStore.new_faiss(1024)``): the stand-in is asked
for vectors that wide (MiniLM pads zeros after its 384 values, which changes no distance),
as Ailoy 0.1's ``tvm_embedding_model`` is. `ferrule.vector_store.VectorStore`
(Ailoy 0.1's) embeds through this class too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.embeddings.embedspec import MODEL_DIMENSIONS, aliased_dimension

from ._bridge import Bridge, blocking, on_bridge_loop
from .agent.langmodel import (
    CacheProgress,
    checksum_attributes,
    component_name,
    routing_kernel,
)
from .models import check_device_id, route_embedder
from .shared_runtime import default_runtime

__all__ = ["MODEL_DIMENSIONS", "EmbeddingModel", "embedder_definition"]


def embedder_definition(kernel: Any, model_name: str) -> tuple[str, dict[str, Any]]:
    """The component type and attributes that serve ``model_name`` on ``kernel``: its
    route's, with an aliased id's own dimension (`aliased_dimension`). Also `ferrule
    serve`'s ``define_embedder`` (the Node client's EmbeddingModel)."""
    if not isinstance(model_name, str) or not model_name:
        raise InvalidInputError("must be a non-empty model id", field="model_name")
    route = route_embedder(kernel, model_name)
    chosen = {**route.attributes}
    dimension = aliased_dimension(model_name)
    if dimension is not None:
        chosen["dimension"] = dimension
    return route.component_type, chosen


class EmbeddingModel:
    """An embedder component on ``runtime``, named ``name``, of ``dimension`` dimensions."""

    def __init__(self, runtime: Any, name: str, model: str, dimension: int) -> None:
        self.runtime = runtime
        self.name = name
        self.model = model
        self.dimension = dimension

    def __repr__(self) -> str:
        return f"EmbeddingModel(model={self.model!r}, name={self.name!r})"

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.runtime.sync_bridge
        return bridge

    @classmethod
    async def define(
        cls, runtime: Any, model_name: str, attributes: dict[str, Any] | None = None
    ) -> EmbeddingModel:
        """Define the embedder that serves ``model_name`` on ``runtime`` (``attributes``:
        its plugin's, over the route's)."""
        component_type, chosen = embedder_definition(routing_kernel(runtime), model_name)
        chosen.update(attributes or {})
        name = component_name("embedding-model")
        await runtime.adefine(component_type, name, chosen)
        try:
            info = await runtime.acall_method(name, "info", {})
        except BaseException:
            await runtime.adelete(name)
            raise
        return cls(runtime, name, model_name, int(info["dimension"]))

    @classmethod
    async def new_local(
        cls,
        model_name: str,
        device_id: int | None = None,
        validate_checksum: bool | None = None,
        progress_callback: Callable[[CacheProgress], Any] | None = None,
        *,
        runtime: Any = None,
    ) -> EmbeddingModel:
        """A local embedding model (Ailoy's ``new_local``). ``device_id``: ferrule's local
        embedders run on the CPU, so only None (or 0) is accepted. ``validate_checksum``
        (Ailoy's; None means True, as there): the weights files are checked against their
        published SHA-256s before they load, and a damaged one is refused
        (`EmbedderUnavailableError` naming it); False loads them unchecked. True for an
        embedder without published checksums is refused. ``progress_callback`` is told
        when the model is ready (its weights come with its package: there is nothing to
        download)."""
        check_device_id(device_id)
        if progress_callback is not None and not callable(progress_callback):
            raise InvalidInputError("must be callable", field="progress_callback")
        runtime = runtime if runtime is not None else default_runtime()
        kernel = routing_kernel(runtime)
        component_type, _ = embedder_definition(kernel, model_name)
        checks = checksum_attributes(kernel, component_type, validate_checksum)
        bridge: Bridge = runtime.sync_bridge
        model = await bridge.arun(cls.define(runtime, model_name, checks))
        if progress_callback is not None:
            progress_callback(CacheProgress("Initialized", 1, 1))
        return model

    @classmethod
    def new_local_sync(
        cls,
        model_name: str,
        device_id: int | None = None,
        validate_checksum: bool | None = None,
        progress_callback: Callable[[CacheProgress], Any] | None = None,
        *,
        runtime: Any = None,
    ) -> EmbeddingModel:
        """`new_local` for synchronous callers (Ailoy's ``new_local_sync``)."""
        runtime = runtime if runtime is not None else default_runtime()
        bridge: Bridge = runtime.sync_bridge
        return bridge.run(
            cls.new_local(
                model_name, device_id, validate_checksum, progress_callback, runtime=runtime
            )
        )

    @classmethod
    def download(
        cls,
        model_name: str,
        progress_callback: Callable[[CacheProgress], Any] | None = None,
        *,
        runtime: Any = None,
    ) -> None:
        """Make sure the model is ready to use (Ailoy's ``download``). ferrule's local
        embedders carry their weights in their package, so nothing is fetched: the model
        is loaded once, which checks them (`EmbedderUnavailableError` if they are
        missing or damaged), then released; ``progress_callback`` is told when done."""
        if progress_callback is not None and not callable(progress_callback):
            raise InvalidInputError("must be callable", field="progress_callback")
        runtime = runtime if runtime is not None else default_runtime()
        bridge: Bridge = runtime.sync_bridge
        model = bridge.run(cls.define(runtime, model_name))
        model.delete()
        if progress_callback is not None:
            progress_callback(CacheProgress(f"{model_name} ready", 1, 1))

    @classmethod
    def remove(cls, model_name: str, *, runtime: Any = None) -> None:
        """Ailoy's ``remove``, which deletes a model's downloaded files. ferrule's local
        embedders download nothing (their weights come with their package), so this is
        refused, naming ``model_name``: uninstall the package to drop the weights. An
        id no installed plugin serves is refused as `new_local` refuses it."""
        runtime = runtime if runtime is not None else default_runtime()
        component_type, _ = embedder_definition(routing_kernel(runtime), model_name)
        raise InvalidInputError(
            f"{model_name!r} runs on {component_type}, whose weights come with its package: "
            "nothing was downloaded to remove (uninstall the package to drop them)",
            field="model_name",
        )

    @on_bridge_loop
    async def infer(self, text: str) -> list[float]:
        """The vector of ``text`` (embedded as a document: the models Ailoy names have one
        role for documents and queries)."""
        return (await self.aembed([text]))[0]

    infer_sync = blocking(infer)

    @on_bridge_loop
    async def aembed(self, texts: list[str], input_type: str = "document") -> list[list[float]]:
        """The vectors of ``texts`` in one call (``input_type``: ``"document"`` or
        ``"query"``, for models that embed the two differently)."""
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise InvalidInputError("must be a list of strings", field="texts")
        out = await self.runtime.acall_method(
            self.name, "embed", {"texts": texts, "input_type": input_type}
        )
        vectors: list[list[float]] = out["vectors"]
        return vectors

    embed = blocking(aembed)

    @on_bridge_loop
    async def adelete(self) -> None:
        """Delete the embedder component from its runtime."""
        await self.runtime.adelete(self.name)

    delete = blocking(adelete)
