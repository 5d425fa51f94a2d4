"""Remembered approvals: the grant an approval with ``remember`` makes, and which grant covers
a later call, so it runs without asking again.

A grant is made only for a tool with ``allow_remember=True``, only from an answer the
approver rules let through, only with what it is scoped to (a principal for
``"principal"``, a thread for ``"thread"``). It covers a call of the same audience, the same
tool and (unless ``match="tool"``) the same canonical arguments, in the same thread or for
the same principal, until it expires (capped by ``max_remember``, a day unless raised) or is
revoked. Grants never cross audiences.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from .._exceptions import InvalidResponseError
from .._principal import Principal
from .._schema import to_jsonable
from .._tools import AITool
from ._rules import Remember, RememberScope, approval_wrappers

#: How long a grant lasts at most unless the server raises it (``max_remember``).
MAX_REMEMBER = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Grant:
    """A remembered approval: calls of ``tool`` (with arguments whose digest is
    ``arguments_sha256``; ``None``: any arguments) under ``audience``, in thread
    ``thread_id`` (``scope="thread"``) or for principal ``principal_id``
    (``scope="principal"``), run without asking until ``expires``, unless revoked
    (``ApprovalStore.revoke_grant``). ``granted_by`` is who approved it; ``arguments`` the
    arguments approved (``None`` for a tool-wide grant)."""

    id: str
    audience: str
    tool: str
    arguments_sha256: str | None
    scope: RememberScope
    thread_id: str | None
    principal_id: str | None
    granted_by: Principal | None
    created: datetime
    expires: datetime
    #: The arguments approved (what a person is shown of an ``arguments`` grant).
    arguments: dict[str, Any] | None = None

    def covers(
        self,
        *,
        audience: str,
        tool: str,
        arguments_sha256: str,
        thread_id: str | None,
        principal_id: str | None,
        now: datetime,
    ) -> bool:
        """Whether this grant lets that call run without asking."""
        if self.audience != audience or self.tool != tool or now >= self.expires:
            return False
        if self.arguments_sha256 is not None and self.arguments_sha256 != arguments_sha256:
            return False
        if self.scope == "thread":
            return self.thread_id is not None and self.thread_id == thread_id
        return self.principal_id is not None and self.principal_id == principal_id

    def describe(self, call: str | None = None) -> str:
        """What the grant covers, as a person reads it (``call``: the call as shown, e.g.
        ``write_file(path="notes.txt")``): ``don't ask again for write_file(path="notes.txt")
        in this conversation until 2026-12-08 10:00:00 UTC``."""
        what = (
            f"{self.tool} with any arguments"
            if self.arguments_sha256 is None
            else (call or f"{self.tool} with the same arguments")
        )
        where = "in this conversation" if self.scope == "thread" else f"for {self.principal_id}"
        until = self.expires.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"don't ask again for {what} {where} until {until}"

    def to_dict(self) -> dict[str, Any]:
        """The grant as JSON (times as ISO 8601 text), what stores keep."""
        return {
            "id": self.id,
            "audience": self.audience,
            "tool": self.tool,
            "arguments_sha256": self.arguments_sha256,
            "scope": self.scope,
            "thread_id": self.thread_id,
            "principal_id": self.principal_id,
            "granted_by": None if self.granted_by is None else self.granted_by.to_dict(),
            "created": self.created.isoformat(),
            "expires": self.expires.isoformat(),
            "arguments": self.arguments,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Grant:
        """The grant :meth:`to_dict` wrote."""
        by = data.get("granted_by")
        return cls(
            id=data["id"],
            audience=data["audience"],
            tool=data["tool"],
            arguments_sha256=data.get("arguments_sha256"),
            scope=data["scope"],
            thread_id=data.get("thread_id"),
            principal_id=data.get("principal_id"),
            granted_by=None if by is None else Principal.from_dict(by),
            created=datetime.fromisoformat(data["created"]),
            expires=datetime.fromisoformat(data["expires"]),
            arguments=data.get("arguments"),
        )


def arguments_sha256(arguments: Mapping[str, Any] | None) -> str:
    """The digest a grant compares arguments by: SHA-256 (hex) of their canonical JSON
    (sorted keys, compact, ASCII), so key order and spacing do not matter and nothing else
    does either."""
    text = json.dumps(
        to_jsonable(dict(arguments or {})), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def may_remember(tool: AITool | None) -> bool:
    """Whether an approval of ``tool`` may be remembered: some approval wrapper allows it and
    none forbids it (the strictest gate wins, as for edits)."""
    wrappers = approval_wrappers(tool) if tool is not None else []
    return bool(wrappers) and all(w.allow_remember for w in wrappers)


def check_remember(
    request_id: str,
    remember: Remember | None,
    *,
    approved: bool,
    tool: AITool | None,
    thread_id: str | None,
    approver: Principal | None,
    keeps_grants: bool,
) -> None:
    """Refuse a ``remember`` that cannot be honoured, before anything is used
    (``InvalidResponseError``, ``RESUME_INVALID_PAYLOAD`` over AG-UI): on a rejection, on a
    tool that does not allow it, where nothing keeps grants (no approval store that does),
    ``"principal"`` from nobody, ``"thread"`` without a thread (in process: no
    ``conversation_id``). Nothing is remembered then."""
    if remember is None:
        return
    label = f"approval request {request_id!r}"
    problem = None
    if not approved:
        problem = "only an approval can be remembered"
    elif not may_remember(tool):
        problem = "this tool does not allow remembering an approval (allow_remember=False)"
    elif not keeps_grants:
        problem = (
            "nothing here keeps remembered approvals (give the tool loop an approval_store, "
            "or use a store that keeps grants)"
        )
    elif remember.scope == "principal" and approver is None:
        problem = "remember 'principal' needs to know who answered, and nobody did"
    elif remember.scope == "thread" and not thread_id:
        problem = "remember 'thread' needs a conversation (ChatOptions.conversation_id)"
    if problem is not None:
        raise InvalidResponseError(
            f"{label}: {problem}; nothing was run or remembered",
            request_ids=[request_id],
            code="RESUME_INVALID_PAYLOAD",
        )


def new_grant(
    remember: Remember,
    *,
    audience: str,
    tool: str,
    arguments: Mapping[str, Any] | None,
    thread_id: str | None,
    approver: Principal | None,
    now: datetime,
    max_remember: timedelta = MAX_REMEMBER,
) -> Grant:
    """The grant an approval makes (its ``remember`` checked by :func:`check_remember`),
    lasting ``remember.seconds`` capped at ``max_remember`` (capped, not refused)."""
    cap = max_remember.total_seconds()
    seconds = cap if remember.seconds is None else min(remember.seconds, cap)
    return Grant(
        id=secrets.token_urlsafe(12),
        audience=audience,
        tool=tool,
        arguments_sha256=None if remember.match == "tool" else arguments_sha256(arguments),
        scope=remember.scope,
        thread_id=thread_id if remember.scope == "thread" else None,
        principal_id=approver.id if remember.scope == "principal" and approver else None,
        granted_by=approver,
        created=now,
        expires=now + timedelta(seconds=seconds),
        arguments=None if remember.match == "tool" else dict(to_jsonable(dict(arguments or {}))),
    )


def covering(
    grants: Iterable[Grant],
    *,
    audience: str,
    tool: str,
    arguments: Mapping[str, Any] | None,
    thread_id: str | None,
    principal_id: str | None,
    now: datetime,
) -> Grant | None:
    """The first of ``grants`` that covers a call (``None``: it asks)."""
    digest = arguments_sha256(arguments)
    for grant in grants:
        if grant.covers(
            audience=audience,
            tool=tool,
            arguments_sha256=digest,
            thread_id=thread_id,
            principal_id=principal_id,
            now=now,
        ):
            return grant
    return None
