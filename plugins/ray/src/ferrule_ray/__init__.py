"""ferrule-ray: components on a Ray cluster.

``rt.define(type, name, attrs, placement={"kind": "ray", "replicas": 2, "num_gpus": 1})``
runs the component as Ray actors; its calls and streams work as in-process. Importing
this package does not import Ray.
"""

from .cluster import ADDRESS_VARIABLE, connect, disconnect
from .errors import PlacementError, ReplicaDiedError
from .placement import RayPlacement

__all__ = [
    "ADDRESS_VARIABLE",
    "PlacementError",
    "RayPlacement",
    "ReplicaDiedError",
    "connect",
    "disconnect",
]
