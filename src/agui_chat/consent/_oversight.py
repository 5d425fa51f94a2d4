"""Oversight of one request: where its gated calls are decided (audience, thread, run), who
made it, and the store that keeps their audit trail and the grants that let covered calls run
without asking. ``AGUIServer`` hands it to the tool loop explicitly, as it hands the plan
(:func:`with_oversight`); a ``FunctionInvokingChatClient(approval_store=...)`` makes its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Protocol

from .._contents import FunctionCallContent
from .._options import ChatOptions
from .._principal import Principal
from . import _rules
from ._audit import AuditDraft, Outcome, Verdict
from ._grants import MAX_REMEMBER, Grant, covering, new_grant

#: The audience of the in-process loop's records and grants (a server's are its own).
LOCAL_AUDIENCE = "local"


class GovernanceStore(Protocol):
    """What the consent engine needs of a store (every ``ApprovalStore`` is one)."""

    @property
    def keeps_governance(self) -> bool: ...

    async def append_audit(self, audit: AuditDraft) -> int: ...

    async def record_outcome(self, seq: int, outcome: Outcome, result: str | None) -> None: ...

    async def add_grant(self, grant: Grant) -> None: ...

    async def grants(
        self, *, thread_id: str | None = None, principal_id: str | None = None
    ) -> list[Grant]: ...


@dataclass
class Oversight:
    """One request's oversight: ``store`` keeps the trail and the grants; ``principal`` made
    the request (the requester of its calls, whose principal-scoped grants apply);
    ``max_remember`` caps a grant's life."""

    store: GovernanceStore
    audience: str
    thread_id: str | None
    run_id: str | None = None
    principal: Principal | None = None
    max_remember: timedelta = MAX_REMEMBER
    #: The live grants that apply here, read once per model turn that needs them.
    _grants: list[Grant] | None = field(default=None, repr=False)

    def draft(self, verdict: Verdict, claim: str | None = None) -> AuditDraft:
        """The record of ``verdict`` made here (``claim``: the store key of its claim)."""
        return verdict.draft(self.audience, self.thread_id, self.run_id, claim)

    def grant_for(self, verdict: Verdict) -> Grant | None:
        """The grant ``verdict``'s approval asks for (``None``: it asks for none)."""
        if verdict.remember is None:
            return None
        return new_grant(
            verdict.remember,
            audience=self.audience,
            tool=verdict.call.name,
            arguments=verdict.call.arguments,
            thread_id=self.thread_id,
            approver=verdict.approver,
            now=_now(),
            max_remember=self.max_remember,
        )

    def forget_grants(self) -> None:
        """Read the grants again when next needed (a new model turn: a grant revoked meanwhile
        on any worker no longer counts)."""
        self._grants = None

    async def covering(self, call: FunctionCallContent) -> Grant | None:
        """The live grant that lets ``call`` run without asking, if any."""
        if self._grants is None:
            principal_id = None if self.principal is None else self.principal.id
            if self.thread_id is None and principal_id is None:
                self._grants = []
            else:
                self._grants = await self.store.grants(
                    thread_id=self.thread_id, principal_id=principal_id
                )
        return covering(
            self._grants,
            audience=self.audience,
            tool=call.name,
            arguments=call.arguments,
            thread_id=self.thread_id,
            principal_id=None if self.principal is None else self.principal.id,
            now=_now(),
        )


def _now() -> datetime:
    return datetime.fromtimestamp(_rules.clock(), tz=timezone.utc)


#: The key of ``ChatOptions.additional_properties`` the oversight travels under.
OVERSIGHT_KEY = "agui_chat.oversight"


def with_oversight(options: ChatOptions, oversight: Oversight) -> None:
    """Make ``options`` carry ``oversight`` to the first tool loop below."""
    options.additional_properties[OVERSIGHT_KEY] = oversight


def take_oversight(options: ChatOptions | None) -> Oversight | None:
    """Take the oversight ``options`` carry off them (``None``: none)."""
    if options is None:
        return None
    oversight = options.additional_properties.pop(OVERSIGHT_KEY, None)
    assert oversight is None or isinstance(oversight, Oversight)
    return oversight


def remembered_verdict(
    call: FunctionCallContent, grant: Grant, requester: Principal | None
) -> Verdict:
    """The verdict of a call a grant lets run: ``remembered``, approved by whoever granted it."""
    return Verdict(
        "remembered", call, approver=grant.granted_by, requester=requester, grant_id=grant.id
    )


def principal_of(verdicts: Mapping[str, Verdict]) -> Principal | None:
    """Who answered a resume in process (the first approver named), whose principal-scoped
    grants then apply."""
    return next((v.approver for v in verdicts.values() if v.approver is not None), None)
