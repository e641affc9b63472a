"""Answers ``ferrule_place_component`` for ``placement={"kind": "ray", ...}``.

Imports nothing of Ray: this module is loaded at every kernel's discovery, and Ray is
imported when the first component is placed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ferrule_kernel import ComponentTypeSpec, hookimpl

from .placement import KIND, parse_placement


@hookimpl
def ferrule_place_component(
    component_type: str,
    name: str,
    attributes: dict[str, Any],
    placement: dict[str, Any],
    spec: ComponentTypeSpec,
) -> Callable[[Any], Any] | None:
    if placement.get("kind") != KIND:
        return None
    options = parse_placement(placement)

    async def place(_validated: Any) -> Any:
        # The component is built again in each actor from the attributes as given, where
        # its own plugin validates them once more (cheap) and resolves its factory.
        from .component import RayComponent

        return await RayComponent.start(component_type, name, attributes, spec, options)

    return place
