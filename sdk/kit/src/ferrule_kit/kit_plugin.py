"""The kit's own plugin: adds the kit's hook specifications to a plugin manager.

Registered on every kernel the top layer makes (the hooks let plugins answer questions
that belong to one of them: which component type serves a model id) and by the part-type
registry (``ferrule_register_part_types``).
"""

from __future__ import annotations

import pluggy
from ferrule_kernel import hookimpl

from . import hookspecs


@hookimpl
def ferrule_add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)
