"""Model-management operators: ``list_local_models``, ``download_model``, ``remove_model``.

They work on the weights table (`ferrule_llamacpp.weights.WEIGHTS`) and the
huggingface_hub cache; ``ferrule models`` in the CLI calls them through a Runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from . import weights


@attrs.frozen
class ModelListInput:
    #: Also list the known models that are not on this machine yet.
    all: bool = False
    #: The huggingface_hub cache to look in; None is its standard one.
    cache_dir: str | None = None


@attrs.frozen
class ModelInput:
    #: A model id of the weights table.
    model: str
    cache_dir: str | None = None


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


def _table_entry(model: str) -> weights.GGUFWeights:
    entry = weights.lookup(model)
    if entry is None:
        raise InvalidInputError(
            f"unknown model {model!r}; known: {', '.join(weights.WEIGHTS)}", field="$.model"
        )
    return entry


def list_local_models(inputs: ModelListInput) -> dict[str, Any]:
    models = []
    for w in weights.WEIGHTS.values():
        path = weights.cached_file(w, inputs.cache_dir)
        if path is not None or inputs.all:
            models.append(_entry(w, path))
    return {"models": models, "cache_dir": str(weights.hub_cache(inputs.cache_dir))}


def download_model(inputs: ModelInput) -> dict[str, Any]:
    w = _table_entry(inputs.model)
    path = weights.locate(w.model_id, download=True, cache_dir=inputs.cache_dir)
    return _entry(w, path)


def remove_model(inputs: ModelInput) -> dict[str, Any]:
    """Remove the model's file from the hub cache. Other files cached from the same
    repository stay; a cached revision left holding nothing else is deleted whole."""
    w = _table_entry(inputs.model)
    if w.repo_id is None:
        raise InvalidInputError(
            f"{w.model_id} is installed as the {w.distribution} package, not cached: "
            f"pip uninstall {w.distribution}",
            field="$.model",
        )
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.utils import CacheNotFound

    result: dict[str, Any] = {"model": w.model_id, "removed": False, "freed_bytes": 0}
    try:
        cache = scan_cache_dir(inputs.cache_dir)
    except CacheNotFound:
        return result
    repo = next((r for r in cache.repos if r.repo_type == "model" and r.repo_id == w.repo_id), None)
    if repo is None:
        return result
    ours = [f for rev in repo.revisions for f in rev.files if f.file_name == w.filename]
    if not ours:
        return result
    others = [f for rev in repo.revisions for f in rev.files if f.file_name != w.filename]
    if not others:
        strategy = cache.delete_revisions(*(rev.commit_hash for rev in repo.revisions))
        result["freed_bytes"] = strategy.expected_freed_size
        strategy.execute()
    else:
        shared = {f.blob_path for f in others}
        for f in ours:
            f.file_path.unlink(missing_ok=True)
            if f.blob_path not in shared and f.blob_path.exists():
                result["freed_bytes"] += f.blob_path.stat().st_size
                f.blob_path.unlink()
    result["removed"] = True
    return result
