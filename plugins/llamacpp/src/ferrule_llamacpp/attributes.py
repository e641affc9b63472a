"""The attributes a ``llamacpp_language_model`` component is defined with (light: no llama_cpp)."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import in_range, local_only, refuse_untrusted
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL, resolve_model_alias
from ferrule_kit.network.paths import check_server_path

from . import hub, weights


def model_file(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    """A model id that is a path (not a table id) names a file on the server: see
    `ferrule_kit.network.paths` for whose requests may do that. One that names any Hugging Face
    repository has the server download a file its native GGUF parser then reads: not
    for network clients either (the table's ids are vetted)."""
    if weights.lookup(value) is not None:
        return
    if weights.is_gguf_path(value):
        check_server_path(value, attribute.name)
    elif hub.parse(value) is not None:
        refuse_untrusted(attribute.name, "a model repository for the server to download and load")


@attrs.frozen
class LlamaCppAttributes:
    """``rt.define("llamacpp_language_model", "lm", {"model": "Qwen/Qwen3-0.6B"})``."""

    #: A model id of the weights table (``ferrule models list --all``) or a path to a .gguf file;
    #: an id ``$FERRULE_MODEL_ALIASES`` maps to another runs that one.
    model: str = attrs.field(
        default=DEFAULT_LOCAL_MODEL, converter=resolve_model_alias, validator=model_file
    )
    #: Context length in tokens of each sequence (each request decoded at once); None (or
    #: 0): 32768 / parallel, at most the model's trained context. The KV cache holds
    #: parallel x n_ctx tokens.
    n_ctx: int | None = attrs.field(default=None, validator=in_range(0))
    #: Requests decoded at once, in shared batches (each a sequence of the one llama.cpp
    #: context); more wait in line, in order, for one to end.
    parallel: int = attrs.field(default=4, validator=in_range(1, 64))
    #: True: each greedy reply is token for token the one the request gets alone, whatever
    #: else runs (prompts read each in a decode step of its own, one KV stream per
    #: sequence); False: prompts and generating sequences share each decode step, as in
    #: llama-server (faster under concurrency; see the README for how replies may differ).
    deterministic: bool = False
    #: Threads for generation and prompt processing; None uses every core this process may
    #: run on (llama-cpp-python's own default is half of them).
    n_threads: int | None = attrs.field(default=None, validator=in_range(1))
    #: Prompt tokens read per decode step (a longer prompt is read in chunks, between the
    #: other requests' steps).
    n_batch: int = attrs.field(default=512, validator=in_range(1))
    #: MiB of memory for the prompt cache, as llama-server's ``--cache-ram``: what a slot
    #: held before another request took it (a conversation, a long system prompt), so that
    #: a later request starting the same way loads it instead of reading it again. 0: none
    #: (the deterministic mode keeps none either).
    cache_ram: int = attrs.field(default=1024, validator=in_range(0, 1 << 16))
    #: The reply length limit for requests that set no max_tokens; None: the model's default
    #: (1024 tokens for chat models, 32768 for Qwen3; never more than the context's room).
    max_tokens: int | None = attrs.field(default=None, validator=in_range(1))
    #: Sampling seed; None draws a fresh one per request.
    seed: int | None = None
    #: Sampling defaults for this component; a request's temperature/top_p win over these,
    #: and these over the model's own (its GGUF's ``general.sampling.*``, its publisher's
    #: recommendation, then its family's: Qwen's values for Qwen3).
    temperature: float | None = attrs.field(default=None, validator=in_range(0.0, 2.0))
    top_p: float | None = attrs.field(default=None, validator=in_range(0.0, 1.0))
    top_k: int | None = attrs.field(default=None, validator=in_range(0))
    min_p: float | None = attrs.field(default=None, validator=in_range(0.0, 1.0))
    #: None: the model's own (1.1 for chat models that name none, 1.0 for Qwen3).
    repeat_penalty: float | None = attrs.field(default=None, validator=in_range(0.0))
    presence_penalty: float = attrs.field(default=0.0, validator=in_range(-2.0, 2.0))
    #: A Jinja chat template to use instead of the GGUF's own (models other than Qwen3).
    #: Rendered in Jinja's sandbox, but a template is code: not accepted over the network.
    chat_template: str | None = attrs.field(
        default=None, validator=local_only("a template for the server to run")
    )
    #: Download missing weights from the Hugging Face Hub (False: cache and local files only).
    download: bool = True
    #: The huggingface_hub cache to use; None is its standard one (HF_HUB_CACHE / HF_HOME).
    #: A directory on the server to write to: not accepted over the network.
    cache_dir: str | None = attrs.field(
        default=None, validator=local_only("a directory on the server")
    )
