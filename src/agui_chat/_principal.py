"""``Principal``: who asked for a tool call or answered for it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Principal"]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who asked or answered: an ``id`` (what four-eyes and grants compare), a display
    ``name`` and the ``roles`` an ``approval_required(approvers=...)`` rule looks for.

    ``roles`` may be given as any set of strings; it is kept as a ``frozenset``. Over AG-UI
    the server reads it from the request's authentication, never from what a
    payload claims; in process the application passes it (``create_response(...,
    approver=Principal("alice", roles={"ops"}))``)."""

    id: str
    name: str | None = field(default=None, kw_only=True)
    roles: AbstractSet[str] = field(default=frozenset(), kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError("Principal.id must be a non-empty string")
        if isinstance(self.roles, str):  # roles="ops" would be the roles o, p and s
            raise TypeError("Principal.roles is a collection of role names, not one string")
        object.__setattr__(self, "roles", frozenset(self.roles))
        if not all(isinstance(r, str) for r in self.roles):
            raise TypeError("Principal.roles must hold strings")

    def __str__(self) -> str:
        return self.id if self.name is None else f"{self.name} ({self.id})"

    def to_dict(self, *, roles: bool = True) -> dict[str, Any]:
        """The principal as JSON (``roles`` sorted, or left out with ``roles=False``; ``name``
        left out when ``None``)."""
        out: dict[str, Any] = {"id": self.id}
        if self.name is not None:
            out["name"] = self.name
        if roles and self.roles:
            out["roles"] = sorted(self.roles)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Principal:
        """The principal :meth:`to_dict` wrote (``ValueError`` for anything else)."""
        roles: Iterable[str] = data.get("roles") or ()
        name = data.get("name")
        if not isinstance(data.get("id"), str) or not (name is None or isinstance(name, str)):
            raise ValueError("a principal is {id, name?, roles?} with string values")
        return cls(data["id"], name=name, roles=frozenset(roles))
