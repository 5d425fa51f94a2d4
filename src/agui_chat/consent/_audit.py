"""The record: every decision about a gated call and its outcome, in an append-only,
hash-chained trail that every approval store keeps.

A store keeps :class:`AuditEntry` s: ``seq`` (1, 2, 3, ... with no gap), the canonical JSON
``body``, the previous entry's hash and its own, ``SHA-256(seq, prev_hash, body)``. A
decision is one entry; its outcome (``ran``, ``failed``, ``lost``) a later entry naming it
(``of``), so nothing is ever rewritten: :func:`records` joins them into the
:class:`AuditRecord` s ``ApprovalStore.audit()`` yields, and :func:`verify` walks the chain
and names the first entry that was altered, deleted or inserted (``AuditChainError``). The
store also keeps the chain's head (its last seq and hash), so a trail cut short is found too.

Sealing and checking live here, in one place; a store only appends an entry if its head is
still the one the entry follows (compare and set), so two workers never fork the chain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from .._contents import FunctionCallContent
from .._exceptions import AuditChainError
from .._hitl_contents import ToolApprovalRequestContent, ToolApprovalResponseContent
from .._principal import Principal
from .._schema import to_jsonable
from ._grants import arguments_sha256
from ._rules import Remember

Decision = Literal["approved", "rejected", "edited", "answered", "cancelled", "remembered"]
Outcome = Literal["ran", "failed", "lost"]

#: The ``prev_hash`` of the first entry.
GENESIS_HASH = "0" * 64


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One decision about a call and its outcome. ``arguments`` are as run (``None`` when the
    store keeps only their digest, ``arguments_sha256``: ``audit_arguments=False``);
    ``decision`` is ``approved``, ``rejected``, ``edited``, ``answered``, ``cancelled`` or
    ``remembered`` (a grant let it run: ``grant_id``); ``outcome`` is ``ran``, ``failed``,
    ``lost`` or ``None`` (running, or nothing ran: a rejection); ``result_sha256`` the
    lowercase hex SHA-256 of the result text in UTF-8. ``seq``, ``prev_hash`` and ``hash``
    are the decision's place in the chain (:meth:`ApprovalStore.verify_audit`)."""

    seq: int
    time: datetime
    audience: str
    thread_id: str | None
    run_id: str | None
    call_id: str
    tool: str
    arguments: dict[str, Any] | None
    decision: Decision
    reason: str | None
    edited_arguments: dict[str, Any] | None
    approver: Principal | None
    requester: Principal | None
    grant_id: str | None
    outcome: Outcome | None
    result_sha256: str | None
    prev_hash: str
    hash: str
    arguments_sha256: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the consent engine decided about one call: the ``decision``, the call as it runs
    (an approved edit applied) and who and why; a ``remember`` the approval asked for."""

    decision: Decision
    call: FunctionCallContent
    reason: str | None = None
    edited_arguments: Mapping[str, Any] | None = None
    approver: Principal | None = None
    requester: Principal | None = None
    grant_id: str | None = None
    remember: Remember | None = None

    @classmethod
    def of_approval(
        cls,
        request: ToolApprovalRequestContent,
        answer: ToolApprovalResponseContent,
        call: FunctionCallContent,
        remember: Remember | None,
    ) -> Verdict:
        """The verdict of an answered approval (``call``: as it runs; ``remember``: what it
        asks to remember, as checked)."""
        edited = answer.approved and answer.edited_arguments is not None
        decision: Decision = "edited" if edited else "approved" if answer.approved else "rejected"
        return cls(
            decision,
            call,
            reason=answer.reason,
            edited_arguments=answer.edited_arguments if edited else None,
            approver=answer.approver,
            requester=request.requester,
            remember=remember,
        )

    def draft(
        self,
        audience: str,
        thread_id: str | None,
        run_id: str | None,
        claim: str | None = None,
    ) -> AuditDraft:
        """The audit record of this verdict, made where it was: ``audience``, thread and run
        (and the claim whose use it is)."""
        return AuditDraft(
            self.decision,
            audience,
            thread_id,
            run_id,
            self.call.call_id,
            self.call.name,
            self.call.arguments,
            reason=self.reason,
            edited_arguments=self.edited_arguments,
            approver=self.approver,
            requester=self.requester,
            grant_id=self.grant_id,
            claim=claim,
        )


@dataclass(frozen=True, slots=True)
class AuditDraft:
    """A decision before a store seals it: who decided what about which call, where."""

    decision: Decision
    audience: str
    thread_id: str | None
    run_id: str | None
    call_id: str
    tool: str
    arguments: Mapping[str, Any] | None
    reason: str | None = None
    edited_arguments: Mapping[str, Any] | None = None
    approver: Principal | None = None
    requester: Principal | None = None
    grant_id: str | None = None
    #: The store key of the claim whose use this is (over AG-UI), so an outcome found by
    #: another worker can name it.
    claim: str | None = None

    def body(self, *, now: float, keep_arguments: bool) -> dict[str, Any]:
        """The entry's body (``keep_arguments=False``: the arguments' digest only)."""
        arguments = to_jsonable(dict(self.arguments or {}))
        edited = None if self.edited_arguments is None else to_jsonable(dict(self.edited_arguments))
        return {
            "kind": "decision",
            "time": now,
            "audience": self.audience,
            "thread_id": self.thread_id,
            "run_id": self.run_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": arguments if keep_arguments else None,
            "arguments_sha256": arguments_sha256(arguments),
            "decision": self.decision,
            "reason": self.reason,
            "edited_arguments": edited if keep_arguments else None,
            "approver": None if self.approver is None else self.approver.to_dict(),
            # Who asked, without roles (the token carries none); who answered, with the roles
            # that let them.
            "requester": None if self.requester is None else self.requester.to_dict(roles=False),
            "grant_id": self.grant_id,
            "claim": self.claim,
        }


def outcome_body(
    of: int | str, outcome: Outcome, result: str | None, *, now: float
) -> dict[str, Any]:
    """The body of the entry that says what became of decision ``of``: its seq, or the claim
    it was recorded with (what a worker that finds another's run lost knows of it)."""
    return {
        "kind": "outcome",
        "time": now,
        "of": of if isinstance(of, int) else None,
        "claim": of if isinstance(of, str) else None,
        "outcome": outcome,
        "result_sha256": None if result is None else result_sha256(result),
    }


def withdrawn_body(of: int, *, now: float) -> dict[str, Any]:
    """The body of the entry that withdraws decision ``of``: its tool never started after
    all (a request cancelled while the claim's "started" mark was being written), so it is no
    record of a run; the answer may run once later, under a record of its own."""
    return {"kind": "withdrawn", "time": now, "of": of}


def result_sha256(result: str) -> str:
    """The lowercase hex SHA-256 of a result's text in UTF-8 (a lone surrogate kept as is)."""
    return hashlib.sha256(result.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One link of the chain, as a store keeps it."""

    seq: int
    body: str
    prev_hash: str
    hash: str


def canonical(body: Mapping[str, Any]) -> str:
    """The one spelling of a body that is hashed and kept (sorted keys, compact, ASCII: every
    store holds it as is)."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def seal(seq: int, prev_hash: str, body: str) -> str:
    """The hash of an entry: SHA-256 over its seq, the previous hash and its body."""
    return hashlib.sha256(f"{seq}\n{prev_hash}\n{body}".encode("ascii")).hexdigest()


def entry_after(head: tuple[int, str], body: Mapping[str, Any]) -> AuditEntry:
    """The entry that follows ``head`` (the chain's last seq and hash; ``(0, GENESIS_HASH)``
    for an empty one)."""
    seq, prev = head[0] + 1, head[1]
    text = canonical(body)
    return AuditEntry(seq, text, prev, seal(seq, prev, text))


EMPTY_HEAD: tuple[int, str] = (0, GENESIS_HASH)


def verify(entries: Iterable[AuditEntry], head: tuple[int, str] | None) -> int:
    """Check every link of the chain (in seq order) and that it ends at ``head`` (``None``:
    nothing was ever appended); the number of decision records checked.
    ``AuditChainError`` names the first entry that breaks it."""
    expected_seq, prev = EMPTY_HEAD
    decisions = 0
    for entry in entries:
        expected_seq += 1
        if entry.seq != expected_seq:
            raise AuditChainError(
                f"audit record {expected_seq} is missing (the next one kept is {entry.seq})",
                seq=expected_seq,
            )
        if entry.prev_hash != prev or seal(entry.seq, prev, entry.body) != entry.hash:
            raise AuditChainError(
                f"audit record {entry.seq} was altered (its hash does not match its content "
                "and the record before it)",
                seq=entry.seq,
            )
        try:
            kind = json.loads(entry.body).get("kind")
        except (ValueError, AttributeError):
            kind = None
        decisions += kind == "decision"
        prev = entry.hash
    end = head if head is not None else EMPTY_HEAD
    if (expected_seq, prev) != end:
        raise AuditChainError(
            f"the audit trail ends at record {expected_seq} but its head says {end[0]}: "
            "records were removed from its end",
            seq=expected_seq + 1,
        )
    return decisions


def records(entries: Iterable[AuditEntry]) -> Iterator[AuditRecord]:
    """The decision records of ``entries`` (in seq order), each with its outcome joined in;
    a withdrawn one (its tool never started) is left out: the chain keeps it, the trail of
    what ran does not show it."""
    decided: dict[int, tuple[AuditEntry, dict[str, Any]]] = {}
    outcomes: dict[int, dict[str, Any]] = {}
    withdrawn: set[int] = set()
    by_claim: dict[str, int] = {}  # the decision each claim's use was recorded as, last
    for entry in entries:
        body = json.loads(entry.body)
        kind = body.get("kind")
        if kind == "decision":
            decided[entry.seq] = (entry, body)
            if body.get("claim"):
                by_claim[body["claim"]] = entry.seq
        elif kind == "outcome":
            of = body.get("of")
            seq = of if isinstance(of, int) else by_claim.get(body.get("claim") or "")
            if seq is not None:
                outcomes.setdefault(seq, body)  # the first outcome counts
        elif kind == "withdrawn":
            withdrawn.add(int(body["of"]))
    for seq in sorted(decided.keys() - withdrawn):
        entry, body = decided[seq]
        yield _record(entry, body, outcomes.get(seq))


def _record(entry: AuditEntry, body: dict[str, Any], outcome: dict[str, Any] | None) -> AuditRecord:
    def principal(value: Any) -> Principal | None:
        return None if value is None else Principal.from_dict(value)

    return AuditRecord(
        seq=entry.seq,
        time=datetime.fromtimestamp(body["time"], tz=timezone.utc),
        audience=body["audience"],
        thread_id=body.get("thread_id"),
        run_id=body.get("run_id"),
        call_id=body["call_id"],
        tool=body["tool"],
        arguments=body.get("arguments"),
        decision=body["decision"],
        reason=body.get("reason"),
        edited_arguments=body.get("edited_arguments"),
        approver=principal(body.get("approver")),
        requester=principal(body.get("requester")),
        grant_id=body.get("grant_id"),
        outcome=None if outcome is None else outcome["outcome"],
        result_sha256=None if outcome is None else outcome.get("result_sha256"),
        prev_hash=entry.prev_hash,
        hash=entry.hash,
        arguments_sha256=body.get("arguments_sha256", ""),
    )
