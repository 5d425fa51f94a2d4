"""``agui-chat grants``: the remembered approvals (grants) an approval store keeps, and
revoking one.

Each live grant is one line: its id, then exactly what it covers as
:meth:`~agui_chat.stores.Grant.describe` says it, with the call as the consent engine's display
shows it (a store is outside input: control and bidirectional characters come out escaped),
then where it applies and who granted it. ``--revoke ID`` revokes one at once, for every
worker; a grant that is not live (unknown, expired, revoked already, or not among those
``--thread`` / ``--principal`` name) is an error, exit status 1.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._display import shown_call
from ..stores import Grant
from ._prompts import one_line
from ._store_access import StoreFailure, add_store_argument, opened_store, shown_store

__all__ = ["add_grants_command", "grant_line", "grants_command"]


def add_grants_command(sub: Any) -> None:
    """The ``grants`` subcommand's arguments (``sub``: the parser's subparsers)."""
    grants = sub.add_parser(
        "grants",
        help="list the remembered approvals (grants) of a server's approval store, or revoke one",
        description=(
            "List the live grants an approval store keeps: the approvals a person asked not to "
            "be asked again about, each with exactly what it covers (the call, the "
            "conversation or principal, until when). --revoke ends one at once, for every "
            "worker of the server."
        ),
    )
    add_store_argument(grants)
    grants.add_argument("--thread", metavar="ID", help="only the grants of this conversation")
    grants.add_argument(
        "--principal", metavar="ID", help="only the grants made for this principal (user id)"
    )
    grants.add_argument(
        "--revoke",
        metavar="GRANT_ID",
        help="revoke this grant (exit status 1 if it is not live, or not among those "
        "--thread / --principal select); an id that starts with '-' as --revoke=ID",
    )
    grants.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per grant and line, with every field",
    )


def grant_line(grant: Grant) -> str:
    """One grant as one escaped line: id, what it covers, where, by whom."""
    call = None if grant.arguments is None else shown_call(grant.tool, grant.arguments).text
    where = (
        f"thread: {grant.thread_id}"
        if grant.scope == "thread"
        else f"principal: {grant.principal_id}"
    )
    by = "-" if grant.granted_by is None else grant.granted_by.id
    return one_line(f"{grant.id}  {grant.describe(call)}  ({where}; granted by: {by})")


async def grants_command(args: argparse.Namespace) -> int:
    """List the grants, or revoke one; the exit status."""
    shown = shown_store(args.store)
    async with opened_store(args.store) as store:
        live = await store.grants(thread_id=args.thread, principal_id=args.principal)
        if args.revoke is not None:
            # Only a grant listed as live (and among those selected) is revoked.
            if not any(g.id == args.revoke for g in live) or not await store.revoke_grant(
                args.revoke
            ):
                selected = args.thread is not None or args.principal is not None
                among = " among those selected" if selected else ""
                raise StoreFailure(
                    f"no live grant {one_line(args.revoke)}{among} in {shown}: nothing was revoked"
                )
            if args.json:
                print(json.dumps({"revoked": args.revoke}, ensure_ascii=True))
            else:
                print(one_line(f"revoked grant {args.revoke}: its calls will be asked about again"))
            return 0
        for grant in live:
            print(
                json.dumps(grant.to_dict(), ensure_ascii=True) if args.json else grant_line(grant)
            )
        if not live and not args.json:
            where = "".join(
                f" {what} {value}"
                for what, value in (("of thread", args.thread), ("for", args.principal))
                if value is not None
            )
            print(one_line(f"no live grants{where} in {shown}"))
    return 0
