"""The hooks a ferrule plugin implements. The kernel has two; the sdk adds its own.

A plugin is a module registered under the entry-point group ``ferrule``; it implements
any of these with ``@ferrule_kernel.hookimpl``. Hooks return descriptions only, so
discovery imports nothing heavy.
"""

from __future__ import annotations

import pluggy

from .specs import ComponentTypeSpec, OperatorSpec

hookspec = pluggy.HookspecMarker("ferrule")


@hookspec
def ferrule_register_operators() -> list[OperatorSpec]:
    """Return the operators this plugin provides. Called once, at discovery; all results are kept."""


@hookspec
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    """Return the component types this plugin provides. Called once, at discovery; all results are kept."""


@hookspec(historic=True)
def ferrule_add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Add hook specifications of your own (``pluginmanager.add_hookspecs(module)``).

    Historic: called for every plugin that implements it, whenever it is registered.
    This is how the sdk adds its hooks without the kernel knowing them.
    """
