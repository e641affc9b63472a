"""ferrule's kernel: routes five requests to plugins and knows nothing else.

Plugin authors need `hookimpl`, the descriptions (`OperatorSpec`, `ComponentTypeSpec`,
`MethodSpec`) and the errors; a component built on other components is handed the
kernel's requests as a `ComponentRequests` (``ComponentTypeSpec.uses_components``).
Hosts embedding ferrule use `Kernel` (and may hand it an `InstallHint`). Code that validates wire data of its own with the kernel's rules builds
on `make_converter`, `structure_input`, `field_errors`, `type_checked` and `type_name`;
text bound for a client or a log that holds words nobody here wrote passes through
`scrub_secrets`, the one secret scrubber.
The hooks a plugin implements are specified in `ferrule_kernel.hookspecs`.
"""

from .composition import ComponentRequests
from .discovery import ENTRY_POINT_GROUP, PluginInfo, discover_plugins, hookimpl, import_target
from .errors import (
    DuplicateComponentError,
    FerruleError,
    InvalidInputError,
    InvalidOutputError,
    PluginError,
    PluginLoadError,
    RequestCancelledError,
    UnknownComponentError,
    UnknownComponentTypeError,
    UnknownMethodError,
    UnknownOperatorError,
    error_from_dict,
    interrupts_request,
    register_error_kind,
)
from .kernel import InstallHint, Kernel, Prepared
from .log import configure_logging, get_logger
from .scrubbing import scrub_secrets
from .specs import ComponentTypeSpec, MethodSpec, OperatorSpec, Target
from .trust import (
    caller_is_trusted,
    local_only,
    refuse_untrusted,
    refused_for_trust,
    untrusted_refusal,
)
from .validation import (
    field_errors,
    in_range,
    json_schema,
    make_converter,
    structure_input,
    text_limit,
    type_checked,
    type_name,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "ComponentRequests",
    "ComponentTypeSpec",
    "DuplicateComponentError",
    "FerruleError",
    "InstallHint",
    "InvalidInputError",
    "InvalidOutputError",
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
    "caller_is_trusted",
    "configure_logging",
    "discover_plugins",
    "error_from_dict",
    "field_errors",
    "get_logger",
    "hookimpl",
    "import_target",
    "in_range",
    "interrupts_request",
    "json_schema",
    "local_only",
    "make_converter",
    "refuse_untrusted",
    "refused_for_trust",
    "register_error_kind",
    "scrub_secrets",
    "structure_input",
    "text_limit",
    "type_checked",
    "type_name",
    "untrusted_refusal",
]
