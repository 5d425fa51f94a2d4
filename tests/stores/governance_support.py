"""What the governance tests of the stores write and check: the principals, an audit record
about to be written (:func:`draft`), a remembered approval (:func:`grant`), and the error a
trail that does not verify raises (:func:`chain_error`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from agui_chat import AuditChainError, Principal
from agui_chat.consent._audit import AuditDraft
from agui_chat.stores import ApprovalStore, Grant
from fake_clock import FakeClock

__all__ = ["ALICE", "BOB", "chain_error", "draft", "grant"]

ALICE = Principal("alice", name="Alice", roles=frozenset({"ops"}))
BOB = Principal("bob")


def draft(
    call_id: str = "c1",
    *,
    decision: str = "approved",
    thread: str = "t1",
    arguments: dict[str, object] | None = None,
    approver: Principal | None = ALICE,
) -> AuditDraft:
    """A decision about ``write_file(arguments)`` (``{"path": "notes.txt"}`` unless given),
    answered by ``approver`` and asked by Bob; a rejection's reason is "not today"."""
    return AuditDraft(
        decision,  # type: ignore[arg-type]
        "aud",
        thread,
        "r1",
        call_id,
        "write_file",
        {"path": "notes.txt"} if arguments is None else arguments,
        reason=None if decision != "rejected" else "not today",
        approver=approver,
        requester=BOB,
    )


def grant(
    clock: FakeClock, gid: str, *, thread: str | None = "t1", principal: str | None = None
) -> Grant:
    """Alice's grant ``gid`` of ``write_file`` for 10 minutes from ``clock``'s now: for
    ``principal`` when one is named, else for ``thread``."""
    now = datetime.fromtimestamp(clock.now, tz=timezone.utc)
    return Grant(
        id=gid,
        audience="aud",
        tool="write_file",
        arguments_sha256=None,
        scope="thread" if principal is None else "principal",
        thread_id=thread if principal is None else None,
        principal_id=principal,
        granted_by=ALICE,
        created=now,
        expires=now + timedelta(minutes=10),
    )


async def chain_error(store: ApprovalStore) -> AuditChainError:
    """What ``store.verify_audit()`` raises (it must)."""
    with pytest.raises(AuditChainError) as broken:
        await store.verify_audit()
    return broken.value
