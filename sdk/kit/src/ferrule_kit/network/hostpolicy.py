"""Host policy wins: what the arguments of a model or a network client may not change.

The host sets policies on the tools it gives a model and on the operators it serves:
allow-lists (the programs a terminal may run), base directories (the folder a tool works
in), timeouts, the address policy (where outgoing requests may go, and through which
proxy), output limits and confirmation (which calls wait for a person). The arguments of a
tool call are chosen by the model, and a request's inputs by a network client: neither is
the host, so neither may widen what the host set. The rule, written once here:

- An operator's input field that holds a host policy is marked
  ``attrs.field(..., metadata=host_policy("the programs that may run"))``. A tool built on
  the operator (`Tool.from_operator`, the builtins) never shows such a field to the model,
  and a tool call whose arguments name one is refused (`HostPolicyError`, which the model
  reads as the tool's result). Code in the host's process may still pass it: it is the host.
- A setting the host gave a tool (``Tool.new_builtin("terminal", cwd="/srv")``) is fixed:
  the tool stops offering that parameter, and a call that names it anyway is refused, not
  silently overridden, so the model learns that it cannot.
- Where a call may narrow a policy (a shorter allow-list), `narrowed` checks that it only
  narrows.

`POLICY_NAMES` is the vocabulary of names that, as a parameter a model sees, would hand it
a host policy; ``tests`` walk every built-in tool's parameters against it and against
each operator's marked fields. Standard library and attrs only: plugins' input classes
import it at discovery.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, register_error_kind

__all__ = [
    "HOST_POLICY",
    "POLICY_NAMES",
    "HostPolicyError",
    "checked_arguments",
    "host_policy",
    "narrowed",
    "operator_policies",
    "policy_fields",
    "refusal",
]

#: The attrs metadata key marking a field as a host policy (its value says what it holds).
HOST_POLICY = "ferrule_host_policy"

#: Parameter names a tool never offers a model: each would let the caller set a host policy.
POLICY_NAMES = frozenset(
    {
        # allow-lists
        "allow",
        "allowlist",
        "allow_list",
        "allowed",
        "allowed_commands",
        "allowed_programs",
        "allowed_hosts",
        "allowed_paths",
        "denylist",
        "deny",
        # base directories
        "base_dir",
        "base_directory",
        "root_dir",
        "root",
        "sandbox",
        "cache_dir",
        # timeouts and limits
        "timeout",
        "max_output_bytes",
        "max_bytes",
        "max_chars",
        # the address policy: where requests go
        "base_url",
        "proxy",
        "proxy_url",
        "address_policy",
        # content filters
        "safesearch",
        # confirmation
        "requires_confirmation",
        "confirm",
        "confirmed",
        "skip_confirmation",
    }
)


@register_error_kind
class HostPolicyError(InvalidInputError):
    """A tool call (or a request) whose arguments would change a policy the host set: an
    allow-list, a base directory, a timeout, the address policy, a limit or a
    confirmation. Nothing ran. ``details["errors"]`` names the argument."""

    kind = "host_policy"


def host_policy(what: str) -> dict[str, str]:
    """attrs field metadata marking the field as a host policy; ``what`` says what it holds
    (``"the programs that may run"``), for the error that refuses it."""
    return {HOST_POLICY: what}


def policy_fields(inputs: Any) -> dict[str, str]:
    """The host-policy fields of an attrs input class, by their name: what each holds."""
    if not (isinstance(inputs, type) and attrs.has(inputs)):
        return {}
    return {
        f.name: f.metadata[HOST_POLICY] for f in attrs.fields(inputs) if HOST_POLICY in f.metadata
    }


def operator_policies(kernel: Any, operator: str) -> dict[str, str]:
    """The host-policy fields of ``operator``'s inputs on ``kernel`` (a `Kernel`; None, or
    an operator it does not know: none)."""
    if kernel is None:
        return {}
    entry = kernel.registry.operators.get(operator)
    return {} if entry is None else policy_fields(entry.named(entry.spec.inputs))


def checked_arguments(
    tool: str,
    arguments: Mapping[str, Any],
    *,
    policies: Mapping[str, str] | None = None,
    fixed: Mapping[str, Any] | None = None,
    offered: Collection[str] | None = None,
) -> dict[str, Any]:
    """The inputs for a call of ``tool`` made with a model's (or a network client's)
    ``arguments``: the host's ``fixed`` settings added. `HostPolicyError` for an argument
    that names a host policy (``policies``, name -> what it holds, and every name of
    `POLICY_NAMES`) or a setting the host fixed; `InvalidInputError` for one the tool does
    not offer (when ``offered`` lists the parameters the model sees)."""
    policies = policies or {}
    fixed = fixed or {}
    for name in arguments:
        if name in policies:
            raise refusal(tool, name, policies[name])
        if name in fixed:
            raise refusal(tool, name, f"its {name!r}, which the host fixed")
        if offered is not None and name not in offered:
            if name in POLICY_NAMES:
                raise refusal(tool, name, f"its {name!r}, a host policy")
            raise InvalidInputError(
                f"{name}: the tool {tool!r} has no such parameter; its parameters: "
                + (", ".join(sorted(offered)) or "none"),
                field=f"$.{name}",
            )
    return {**arguments, **fixed}


def refusal(tool: str, field: str, what: str) -> HostPolicyError:
    """The error refusing argument ``field`` of ``tool``, which would change ``what``."""
    message = (
        f"{field}: {what} is set by the host, and a call of {tool!r} cannot change it; "
        f"call it without {field!r}"
    )
    return HostPolicyError(message, field=f"$.{field}")


def narrowed(
    host: Sequence[str] | None,
    asked: Sequence[str] | None,
    *,
    field: str,
    what: str,
) -> list[str] | None:
    """The allow-list in force when the host allows ``host`` (None: no list) and a call asks
    for ``asked`` (None: the host's): the call's own only when every entry of it is the
    host's too, else `HostPolicyError` naming the first one that is not."""
    if asked is None:
        return None if host is None else list(host)
    if host is not None:
        allowed: Collection[str] = set(host)
        for index, entry in enumerate(asked):
            if entry not in allowed:
                raise HostPolicyError(
                    f"{field}[{index}]: {entry!r} is not among {what} the host allows "
                    f"({', '.join(host) or 'none'}); a call may narrow that list, never widen it",
                    field=f"$.{field}[{index}]",
                )
    return list(asked)
