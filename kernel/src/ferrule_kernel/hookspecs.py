"""The kernel's hook specification: the hooks every ferrule plugin may implement.

A plugin is a module (or any object) registered under the entry-point group ``ferrule``
or handed to ``Kernel(plugins=[...])``; it implements any of these hooks with
``@ferrule_kernel.hookimpl``. The registration hooks return *descriptions* only, so
discovery imports nothing heavy. Layers above the kernel add hooks of their own through
`ferrule_add_hookspecs` (the plugin kit's are in ``ferrule_kit.hookspecs``); the kernel
knows none of them.

Each docstring says when the hook is called and by whom, what to return, and how the
results of several plugins combine. ``docs/plugins.md`` lists every hook of every layer;
``tests/test_hooks.py`` checks that each one is documented there, tested and called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from .specs import ComponentTypeSpec, OperatorSpec

hookspec = pluggy.HookspecMarker("ferrule")


# -- registration: called by the kernel's discovery ---------------------------------------


@hookspec
def ferrule_register_operators() -> list[OperatorSpec]:
    """Return the operators this plugin provides, as `OperatorSpec` descriptions.

    Called by the kernel's discovery (``ferrule_kernel.Kernel``) on the first request or
    `Kernel.load_plugins`, and again after `Kernel.register` adds a plugin. Each plugin's
    implementation is called on its own: if it raises, or returns anything but a list of
    `OperatorSpec`, that plugin is reported broken (``ferrule plugins``) and the others
    are unaffected. Return an empty list (or None) for none.

    All results are kept (not first-result). When two plugins register one name, the
    first registered keeps it and the second is reported.
    """


@hookspec
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    """Return the component types this plugin provides, as `ComponentTypeSpec` descriptions
    (a name, its aliases, an attributes class, a factory and its methods).

    Called by the kernel's discovery, exactly like `ferrule_register_operators` and with
    the same failure rules. All results are kept (not first-result); a name or alias
    already taken keeps its first provider.
    """


# -- placement: called when a define names where the component runs --------------------


@hookspec(firstresult=True)
def ferrule_place_component(
    component_type: str,
    name: str,
    attributes: dict[str, Any],
    placement: dict[str, Any],
    spec: ComponentTypeSpec,
) -> Callable[[Any], Any] | None:
    """Return the factory that creates component ``name`` where ``placement`` says it
    runs, or None when ``placement["kind"]`` is not yours (``"ray"``, ...).

    Called by `Kernel.define` when the define request carries a ``placement`` (a JSON
    object whose ``kind`` is a string; the rest is the placing plugin's to validate:
    raise ``InvalidInputError(field="placement.<field>")``). ``attributes`` are the
    define's attributes as given (already validated against ``spec.attributes``), so the
    component can be built again wherever it runs. The factory is called like a type's own
    factory, with the validated attributes instance (sync in a worker thread, or async);
    it returns a stand-in whose methods named in ``spec.methods`` take the same validated
    inputs and return (or, for streaming methods, yield) the same outputs as the component
    would in this process, and whose ``close()``, if any, ``delete`` calls. The kernel
    validates inputs and checks outputs on this side, as for any component.

    First-result: stops at the first non-None result. None from every plugin ends the
    define with ``InvalidInputError`` at ``placement.kind``.
    """


# -- extension: called when a plugin is registered --------------------------------------


@hookspec(historic=True)
def ferrule_add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Add hook specifications of your own: call ``pluginmanager.add_hookspecs(module)``.

    Called by the kernel's plugin manager for each plugin that implements it, when that
    plugin is registered (historic: a plugin registered later is called too). The
    ``ferrule`` top layer registers the plugin kit's own plugin this way on every
    `Kernel` it makes, which adds ``ferrule_kit.hookspecs``. Return nothing; every
    implementation is called (not first-result).
    """
