"""Which MCP tools need a person's approval: the ``approval=`` policy of ``MCPToolset``.

``"auto"`` (the default) reads the server's tool annotations and fails closed:

==========================================  =====================
annotations                                 the call
==========================================  =====================
none at all                                 needs approval
``readOnlyHint: true``                      runs at once
``destructiveHint: true`` (not read-only)   needs approval
``destructiveHint: false`` (not read-only)  runs at once
annotations without either hint             needs approval (MCP's default for
                                            ``destructiveHint`` is true)
==========================================  =====================

``"always"`` gates every tool, ``"never"`` none; a set of names gates exactly those tools; a
predicate ``(tool, arguments) -> bool`` decides per call (it sees the validated arguments);
a mapping gives each tool its own policy by name, ``"*"`` for the others (default ``"auto"``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Literal

import mcp.types as types

__all__ = ["ApprovalPolicy", "ToolPolicy", "check_policy", "resolve_policy"]

#: A predicate deciding per call: the MCP tool as the server listed it, and the arguments
#: after validation against its input schema. True means "ask a person first".
ApprovalPredicate = Callable[[types.Tool, Mapping[str, Any]], bool]
ToolPolicy = Literal["auto", "always", "never"] | ApprovalPredicate
ApprovalPolicy = ToolPolicy | AbstractSet[str] | Mapping[str, ToolPolicy]

_WORDS = ("auto", "always", "never")


def _check_tool_policy(policy: Any, where: str) -> None:
    if isinstance(policy, str):
        if policy not in _WORDS:
            raise ValueError(f"{where} must be 'auto', 'always' or 'never', got {policy!r}")
    elif not callable(policy):
        raise TypeError(
            f"{where} must be 'auto', 'always', 'never' or a predicate (tool, arguments), "
            f"got {type(policy).__name__}"
        )


def check_policy(policy: Any) -> None:
    """Raise ``TypeError`` / ``ValueError`` naming what is wrong with ``policy``."""
    if isinstance(policy, Mapping):
        for name, each in policy.items():
            if not isinstance(name, str):
                raise TypeError(f"approval mapping keys must be tool names, got {name!r}")
            _check_tool_policy(each, f"approval[{name!r}]")
    elif isinstance(policy, AbstractSet) and not isinstance(policy, str):
        for name in policy:
            if not isinstance(name, str):
                raise TypeError(f"approval set must hold tool names, got {name!r}")
    else:
        _check_tool_policy(policy, "approval")


def auto_requires_approval(annotations: types.ToolAnnotations | None) -> bool:
    """The ``"auto"`` rule: whether the server's hints leave the tool's effects in doubt."""
    if annotations is None:
        return True
    if annotations.read_only_hint is True:
        return False
    return annotations.destructive_hint is not False


def resolve_policy(policy: ApprovalPolicy, tool: types.Tool) -> bool | ApprovalPredicate:
    """What ``policy`` says for ``tool``: ``True`` (always ask), ``False`` (never ask) or a
    predicate to ask per call."""
    each: Any
    if isinstance(policy, Mapping):
        each = policy.get(tool.name, policy.get("*", "auto"))
    elif isinstance(policy, AbstractSet) and not isinstance(policy, str):
        return tool.name in policy
    else:
        each = policy
    if each == "auto":
        return auto_requires_approval(tool.annotations)
    if each == "always":
        return True
    if each == "never":
        return False
    predicate: ApprovalPredicate = each
    return predicate
