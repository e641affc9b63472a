"""Model-management operators: ``list_local_models``, ``download_model``, ``remove_model``.

They work on the weights table (`ferrule_llamacpp.weights.WEIGHTS`), the GGUF
repositories of the hub (``owner/repo[:QUANT]``) and the huggingface_hub cache;
``ferrule models`` in the CLI calls them through a Runtime.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, local_only
from ferrule_kit.network.hostpolicy import host_policy

from . import hub, weights

# A cache directory is a place on the server's disk to list, write and delete files in:
# only code in the server's own process may name one (see ferrule_kernel.trust), and no
# model's tool call (ferrule_kit.network.hostpolicy).
_CACHE_DIR = local_only("a directory on the server")
_CACHE_DIR_POLICY = host_policy("the model cache directory")


@attrs.frozen
class ModelListInput:
    #: Also list the known models that are not on this machine yet.
    all: bool = False
    #: The huggingface_hub cache to look in; None is its standard one.
    cache_dir: str | None = attrs.field(
        default=None, validator=_CACHE_DIR, metadata=_CACHE_DIR_POLICY
    )


@attrs.frozen
class ModelInput:
    #: A model id of the weights table, or a Hugging Face GGUF repository (owner/repo[:QUANT]).
    model: str
    cache_dir: str | None = attrs.field(
        default=None, validator=_CACHE_DIR, metadata=_CACHE_DIR_POLICY
    )


def _entry(w: weights.GGUFWeights, path: Path | None) -> dict[str, Any]:
    return {
        "model": w.model_id,
        "filename": w.filename,
        "quantization": w.quantization,
        "repo_id": w.repo_id,
        "source": "package" if w.package else "huggingface",
        "downloaded": path is not None,
        "path": str(path) if path is not None else None,
        "size_bytes": path.stat().st_size if path is not None else None,
    }


def _entry_of(model: str) -> weights.GGUFWeights | hub.HubModel:
    """The table entry ``model`` names, else the hub repository it names."""
    entry = weights.lookup(model)
    if entry is not None:
        return entry
    repo = hub.parse(model)
    if repo is None:
        raise InvalidInputError(
            f"unknown model {model!r}; known: {', '.join(weights.WEIGHTS)}, or a Hugging Face "
            "GGUF repository (owner/repo[:QUANT])",
            field="$.model",
        )
    return repo


def _cached_hub_models(cache_dir: str | None) -> list[dict[str, Any]]:
    """The GGUF variants in the cache that the table does not name, as ``repo:QUANT`` ids."""
    table_repos = {w.repo_id for w in weights.WEIGHTS.values()}
    root = weights.hub_cache(cache_dir)
    found = []
    for repo_dir in sorted(root.glob("models--*--*")):
        repo_id = repo_dir.name.removeprefix("models--").replace("--", "/", 1)
        cached = hub.cached_files(repo_dir)
        if repo_id in table_repos or cached is None:
            continue
        snapshot, files = cached
        for variant in hub.variants(files):
            model = hub.HubModel(repo_id, variant.quant)
            found.append(_entry(weights.hub_entry(model, variant), snapshot / variant.path))
    return found


def list_local_models(inputs: ModelListInput) -> dict[str, Any]:
    models = []
    for w in weights.WEIGHTS.values():
        path = weights.cached_file(w, inputs.cache_dir)
        if path is not None or inputs.all:
            models.append(_entry(w, path))
    models += _cached_hub_models(inputs.cache_dir)
    return {"models": models, "cache_dir": str(weights.hub_cache(inputs.cache_dir))}


def download_model(inputs: ModelInput) -> dict[str, Any]:
    entry = _entry_of(inputs.model)
    if isinstance(entry, hub.HubModel):
        return _entry(*weights.hub_weights(entry, cache_dir=inputs.cache_dir))
    path = weights.locate(entry.model_id, download=True, cache_dir=inputs.cache_dir)
    return _entry(entry, path)


def _fetch(inputs: ModelInput, progress: weights.Progress) -> dict[str, Any]:
    entry = _entry_of(inputs.model)
    if isinstance(entry, hub.HubModel):
        found = weights.hub_weights(entry, cache_dir=inputs.cache_dir, progress=progress)
        return _entry(*found)
    path = weights.locate(entry.model_id, cache_dir=inputs.cache_dir, progress=progress)
    return _entry(entry, path)


async def prepare_model(inputs: ModelInput) -> AsyncIterator[dict[str, Any]]:
    """`download_model`, streamed: ``{"event": "download", "filename", "current",
    "total"}`` (bytes) as each file downloads, then ``{"event": "ready", ...}`` with the
    entry `download_model` returns. A file already here goes straight to ready."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def progress(filename: str, current: int, total: int | None) -> None:
        event = {"event": "download", "filename": filename, "current": current, "total": total}
        loop.call_soon_threadsafe(events.put_nowait, event)

    fetching = asyncio.ensure_future(asyncio.to_thread(_fetch, inputs, progress))
    try:
        while not fetching.done():
            waiting = asyncio.ensure_future(events.get())
            await asyncio.wait({fetching, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if waiting.done():
                yield waiting.result()
            else:
                waiting.cancel()
        # the thread's last reports were queued before its result arrived
        while not events.empty():
            yield events.get_nowait()
        yield {"event": "ready", **fetching.result()}
    finally:
        fetching.cancel()  # a download in its thread runs on; nobody waits for it


def remove_model(inputs: ModelInput) -> dict[str, Any]:
    """Remove the model's files from the hub cache. Other files cached from the same
    repository stay; a cached revision left holding nothing else is deleted whole."""
    entry = _entry_of(inputs.model)
    if isinstance(entry, hub.HubModel):
        cached = weights.cached_hub_weights(entry, inputs.cache_dir)
        if cached is None:
            return {"model": inputs.model, "removed": False, "freed_bytes": 0}
        entry = cached[0]
    if entry.repo_id is None:
        raise InvalidInputError(
            f"{entry.model_id} is installed as the {entry.distribution} package, not cached: "
            f"pip uninstall {entry.distribution}",
            field="$.model",
        )
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.utils import CacheNotFound

    result: dict[str, Any] = {"model": entry.model_id, "removed": False, "freed_bytes": 0}
    try:
        cache = scan_cache_dir(inputs.cache_dir)
    except CacheNotFound:
        return result
    repo = next(
        (r for r in cache.repos if r.repo_type == "model" and r.repo_id == entry.repo_id), None
    )
    if repo is None:
        return result
    # A cached file's path in its repository (a split model's shards may sit in a folder).
    files = [
        (f, f.file_path.relative_to(rev.snapshot_path).as_posix())
        for rev in repo.revisions
        for f in rev.files
    ]
    ours = [f for f, name in files if name in entry.files]
    if not ours:
        return result
    others = [f for f, name in files if name not in entry.files]
    if not others:
        # The repository's folder, whole (not `delete_revisions`: it finds revisions by commit
        # hash in any repository of the cache, and two may share one).
        result["freed_bytes"] = repo.size_on_disk
        shutil.rmtree(repo.repo_path)
    else:
        shared = {f.blob_path for f in others}
        for f in ours:
            f.file_path.unlink(missing_ok=True)
            if f.blob_path not in shared and f.blob_path.exists():
                result["freed_bytes"] += f.blob_path.stat().st_size
                f.blob_path.unlink()
    result["removed"] = True
    return result
