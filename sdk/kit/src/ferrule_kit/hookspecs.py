"""The plugin kit's hook specification: the hooks it adds to the kernel's.

The kernel's hooks (``ferrule_kernel.hookspecs``) register what a plugin provides; these
ask questions whose answer belongs to one plugin (which component type serves a model
id, ...) and register the content part types of ``ferrule_kit.content.parts``. They are added to
a plugin manager by ``ferrule_kit.kit_plugin`` (an implementation of the kernel's
``ferrule_add_hookspecs``), which the ``ferrule`` top layer registers on every kernel it
makes and the part-type registry on its own. Plugins implement them with
``@ferrule_kernel.hookimpl``.

Each docstring says when the hook is called and by whom, what to return, and whether
first-result applies. ``docs/plugins.md`` lists every hook of every layer;
``tests/test_hooks.py`` checks that each one is documented there, tested and called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .content.parts import PartType
    from .instrumentation import Instrumentation
    from .models.lmspec import ModelRoute

hookspec = pluggy.HookspecMarker("ferrule")


@hookspec(firstresult=True)
def ferrule_resolve_api_model(model_id: str, provider: str | None) -> ModelRoute | None:
    """Return the `ModelRoute` (component type and attributes) that serves API model
    ``model_id``, or None when this plugin does not serve it.

    Called by ``ferrule.APIModel.route`` when an agent, ``ferrule chat`` or ``ferrule
    serve`` needs a language model for an API model id, before the component is defined.
    ``provider`` is what the user named (``"openai"``, ...); None means go by the id's
    prefix (``gpt-``, ``claude-``, ...). Answer only for your own provider or prefixes.

    First-result: stops at the first non-None result. None from every plugin ends the
    request with ``UnknownModelError``.
    """


@hookspec(firstresult=True)
def ferrule_resolve_local_model(model_id: str) -> ModelRoute | None:
    """Return the `ModelRoute` (component type and attributes) that runs local model
    ``model_id`` on this machine, or None.

    Called by ``ferrule.LocalModel.route`` when an agent, ``ferrule chat`` or ``ferrule
    serve`` needs a local language model, before the component is defined. A backend that
    cannot run ``model_id`` here (unknown weights, absent hardware such as CUDA) returns
    None; answering must stay cheap (no heavy import, no download).

    First-result: stops at the first non-None result; mark a preferred backend
    ``@hookimpl(tryfirst=True)``. None from every plugin ends the request with
    ``UnknownModelError``.
    """


@hookspec(firstresult=True)
def ferrule_resolve_embedder(model_id: str, provider: str | None) -> ModelRoute | None:
    """Return the `ModelRoute` (an embedder component type of `ferrule_kit.embeddings.embedding` and
    its attributes) that serves embedding model ``model_id``, or None when this plugin does
    not serve it.

    Called by ``ferrule.models.route_embedder`` when ``ferrule serve``'s
    ``/v1/embeddings`` (or other code routing an embedding model by its id) needs an
    embedder, before the component is defined. ``provider`` is what the user named
    (``"openai"``, ...); None means go by the id (``text-embedding-3-small``,
    ``all-MiniLM-L6-v2``, ...). Answer only for your own provider or ids; answering must
    stay cheap (no heavy import, no download).

    First-result: stops at the first non-None result. None from every plugin ends the
    request with ``UnknownModelError``.
    """


@hookspec
def ferrule_register_part_types() -> list[PartType]:
    """Return the content part types this plugin provides (`ferrule_kit.content.parts.PartType`:
    the part class, the wire ``type`` values it reads, its (un)structuring on ferrule's
    wire and its encoder for each provider dialect it supports).

    Called by ``ferrule_kit.content.parts.registry``, once per process (again after its
    ``reload()``), the first time a part other than text is structured, encoded or looked
    up, or a name the part types export is asked for (``from ferrule import
    ImageContent``); never at a kernel's discovery, so text-only work never calls it. Not
    first-result: every plugin's part types are kept; a name or wire type already taken
    stays with its first plugin, and the second is reported.
    """


@hookspec
def ferrule_instrumentation() -> Instrumentation | None:
    """Return an `Instrumentation` (``ferrule_kit.instrumentation``): observers of agent
    runs, model calls and tool calls, such as ferrule-otel's OpenTelemetry spans; or None
    when this plugin does not instrument this process (e.g. switched off).

    Called by ``ferrule_kit.instrumentation.instrumentation_of``, once per kernel, when an
    ``Agent`` is made on a runtime or ``ferrule serve`` first streams a model for
    ``/v1/chat/completions``, ``/v1/responses`` or an agent step; the answer is kept for
    the kernel's life. Answering must stay cheap (it happens on an agent's construction); the spans'
    work comes later. With no plugin answering, the run, model-call and tool-call sites do
    nothing. Not first-result: every plugin's instrumentation observes; one that raises
    is logged and left out, and never fails the run it observes.
    """
