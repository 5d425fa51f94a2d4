"""``agui-chat audit``: the audit trail an approval store keeps, one record a line.

A line says which record (its seq), when (UTC), the decision, the call as the consent
engine's display shows it (:func:`agui_chat._display.shown_call`: what a store holds is
outside input, so control and bidirectional characters come out as visible escapes), who
approved and who asked (their ids), the grant that let it run if one did, and its outcome.
``--json`` prints every field of each :class:`~agui_chat.stores.AuditRecord` instead, one
JSON object a line (ASCII only, so nothing in it reaches the terminal raw). ``--verify``
checks the whole hash chain before anything is printed: a trail that does not verify is one
line naming the first record that breaks it, and exit status 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from .._display import shown_call, shown_text
from .._exceptions import AuditChainError
from ..stores import AuditRecord
from ._prompts import one_line
from ._store_access import StoreFailure, add_store_argument, opened_store, shown_store

__all__ = ["add_audit_command", "audit_command", "record_json", "record_line"]


def add_audit_command(sub: Any) -> None:
    """The ``audit`` subcommand's arguments (``sub``: the parser's subparsers)."""
    audit = sub.add_parser(
        "audit",
        help="print the audit trail of a server's approval store, and verify its hash chain",
        description=(
            "Print the audit trail an approval store keeps: one line per decision about a "
            "gated tool call (seq, time in UTC, decision, the call as it was shown, approver, "
            "requester, the grant that let it run if any, and its outcome). Everything read "
            "from the store is shown with control and invisible characters escaped."
        ),
    )
    add_store_argument(audit)
    audit.add_argument("--thread", metavar="ID", help="only the records of this conversation")
    audit.add_argument(
        "--verify",
        action="store_true",
        help="check the whole trail's hash chain first: prints 'verified N records', or one "
        "line naming the first record altered, removed or inserted and exits with status 1",
    )
    audit.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per record and line, with every field (times in ISO 8601, "
        "principals as objects)",
    )


def _utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _shown(record: AuditRecord) -> str:
    """The call as the display shows it; arguments kept only as a digest say so."""
    if record.arguments is None:
        name = shown_text(record.tool, multiline=False).text
        return f"{name}(arguments not kept, sha256 {one_line(record.arguments_sha256)})"
    return shown_call(record.tool, record.arguments).text


def record_line(record: AuditRecord) -> str:
    """One record as one escaped line."""

    def who(principal: Any) -> str:
        return "-" if principal is None else principal.id

    parts = [
        str(record.seq),
        _utc(record.time),
        record.decision,
        _shown(record),
        f"approver: {who(record.approver)}",
        f"requester: {who(record.requester)}",
    ]
    if record.grant_id is not None:
        parts.append(f"grant: {record.grant_id}")
    parts.append(f"outcome: {record.outcome or '-'}")
    if record.reason:
        parts.append(f"reason: {json.dumps(record.reason, ensure_ascii=False)}")
    return one_line("  ".join(parts))


def record_json(record: AuditRecord) -> str:
    """Every field of ``record`` as one line of JSON (ASCII only: escapes for the rest)."""

    def plain(value: Any) -> Any:
        if isinstance(value, datetime):
            return value.astimezone(timezone.utc).isoformat()
        if hasattr(value, "to_dict"):
            return value.to_dict()
        return value

    fields: Mapping[str, Any] = {
        field.name: plain(getattr(record, field.name)) for field in dataclasses.fields(record)
    }
    return json.dumps(fields, ensure_ascii=True, sort_keys=False, default=str)


async def audit_command(args: argparse.Namespace) -> int:
    """Print (and with ``--verify`` first check) the trail; the exit status."""
    shown = shown_store(args.store)
    async with opened_store(args.store) as store:
        if args.verify:
            try:
                count = await store.verify_audit()
            except AuditChainError as exc:
                raise StoreFailure(f"the audit trail of {shown} does not verify: {exc}") from None
            # With --json, stdout holds nothing but the records' JSON.
            print(f"verified {count} records", file=sys.stderr if args.json else sys.stdout)
        printed = 0
        try:
            async for record in store.audit(thread_id=args.thread):
                print(record_json(record) if args.json else record_line(record), flush=True)
                printed += 1
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreFailure(
                f"the audit trail of {shown} holds a record that cannot be read "
                f"({type(exc).__name__}: {exc}); check it with --verify"
            ) from None
    if not printed and not args.json:
        where = "" if args.thread is None else f" of thread {args.thread}"
        print(one_line(f"no audit records{where} in {shown}"))
    return 0
