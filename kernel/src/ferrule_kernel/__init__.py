"""ferrule's kernel: routes five requests to plugins and knows nothing else.

Plugin authors need `hookimpl`, the descriptions (`OperatorSpec`, `ComponentTypeSpec`,
`MethodSpec`) and the errors; hosts embedding ferrule use `Kernel`.
"""

from .discovery import ENTRY_POINT_GROUP, PluginInfo, hookimpl
from .errors import (
    DuplicateComponentError,
    FerruleError,
    InvalidInputError,
    PluginError,
    PluginLoadError,
    RequestCancelledError,
    UnknownComponentError,
    UnknownComponentTypeError,
    UnknownMethodError,
    UnknownOperatorError,
    error_from_dict,
    register_error_kind,
)
from .kernel import Kernel, Prepared
from .log import configure_logging, get_logger
from .specs import ComponentTypeSpec, MethodSpec, OperatorSpec, Target
from .validation import json_schema, make_converter, register_wire_key, structure_input

__all__ = [
    "ENTRY_POINT_GROUP",
    "ComponentTypeSpec",
    "DuplicateComponentError",
    "FerruleError",
    "InvalidInputError",
    "Kernel",
    "MethodSpec",
    "OperatorSpec",
    "PluginError",
    "PluginInfo",
    "PluginLoadError",
    "Prepared",
    "RequestCancelledError",
    "Target",
    "UnknownComponentError",
    "UnknownComponentTypeError",
    "UnknownMethodError",
    "UnknownOperatorError",
    "configure_logging",
    "error_from_dict",
    "get_logger",
    "hookimpl",
    "json_schema",
    "make_converter",
    "register_error_kind",
    "register_wire_key",
    "structure_input",
]
