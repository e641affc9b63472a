"""The attributes an ``exllama_language_model`` component is defined with (light: no torch)."""

from __future__ import annotations

import os
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError, in_range, local_only
from ferrule_kit.network.paths import check_server_path

from . import weights

CacheMode = Literal["fp16", "q8", "q4"]


def _model(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    # What `weights.locate` would read as a local directory names a place on the server:
    # see ferrule_kit.network.paths for whose requests may do that.
    if weights.lookup(value) is None and (
        not weights.is_repo_id(value) or os.path.isdir(os.path.expanduser(value))
    ):
        check_server_path(value, attribute.name)


def _gpu_split(_instance: Any, attribute: attrs.Attribute, value: list[float] | None) -> None:
    if value is not None and (not value or any(gb <= 0 for gb in value)):
        raise InvalidInputError(
            "must list at least one GPU's share in GB, each above 0", field=f"$.{attribute.name}"
        )


@attrs.frozen
class ExLlamaAttributes:
    """``rt.define("exllama_language_model", "lm", {"model": "Qwen/Qwen3-8B", "cache": "q4"})``."""

    #: A model id of the weights table (`ferrule_exllama.weights.WEIGHTS`), a Hugging Face
    #: repository id holding EXL2 or FP16 safetensors, or a local model directory.
    model: str = attrs.field(validator=_model)
    #: Branch, tag or commit of a repository not in the table (EXL2 repositories keep each
    #: bits-per-weight variant on its own branch).
    revision: str | None = None
    #: KV-cache storage: FP16, or quantized to 8 or 4 bits (about 1/2 and 1/4 of the memory).
    cache: CacheMode = "fp16"
    #: Longest sequence (prompt + reply) in tokens; None takes the model's own.
    max_seq_len: int | None = attrs.field(default=None, validator=in_range(256))
    #: Total tokens the cache holds for all concurrent requests; None: one max_seq_len.
    #: Rounded up to a multiple of 256 (the generator's page size).
    cache_tokens: int | None = attrs.field(default=None, validator=in_range(256))
    #: Most requests decoded together in one batch (needs flash-attn's paged attention;
    #: without it requests run one at a time); more wait, in order. None: exllamav2's own
    #: cap (256). Each request also needs cache pages for its prompt and max_tokens.
    parallel: int | None = attrs.field(default=None, validator=in_range(1, 256))
    #: GB of VRAM to use per GPU, e.g. [20, 24]; None fills the GPUs in order (autosplit).
    gpu_split: list[float] | None = attrs.field(default=None, validator=_gpu_split)
    #: Sampling seed; None draws a fresh one per request.
    seed: int | None = None
    #: Sampling defaults for this component; a request's temperature/top_p win over these,
    #: and these over Qwen's recommended values for the mode (thinking or not).
    temperature: float | None = attrs.field(default=None, validator=in_range(0.0, 2.0))
    top_p: float | None = attrs.field(default=None, validator=in_range(0.0, 1.0))
    top_k: int | None = attrs.field(default=None, validator=in_range(0))
    min_p: float | None = attrs.field(default=None, validator=in_range(0.0, 1.0))
    #: exllamav2's own default is 1.025; Qwen recommends none (1.0).
    repetition_penalty: float = attrs.field(default=1.0, validator=in_range(0.0))
    presence_penalty: float = attrs.field(default=0.0, validator=in_range(-2.0, 2.0))
    #: Download missing weights from the Hugging Face Hub (False: cache and local files only).
    download: bool = True
    #: The huggingface_hub cache to use; None is its standard one (HF_HUB_CACHE / HF_HOME).
    #: A directory on the server to write to: not accepted over the network.
    cache_dir: str | None = attrs.field(
        default=None, validator=local_only("a directory on the server")
    )
