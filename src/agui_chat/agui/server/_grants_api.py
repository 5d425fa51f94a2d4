"""The remembered approvals of a conversation, for the page and the terminal client:
``POST <endpoint>?agui_chat=grants`` with ``{"threadId"}`` lists the live grants that apply to
that thread and to whoever sends the request (their principal-scoped ones), each with what it
covers as the consent engine's display shows it; with ``{"threadId", "revoke": id}`` it
revokes one of them at once, for every worker. Only grants of this server's audience that
apply to that thread or that principal are listed or revoked: another conversation's grants
cannot be read or touched by naming their id.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from ..._display import shown_call, shown_text
from ..._principal import Principal
from ...consent._grants import Grant
from ...stores import ApprovalStore
from ._body import parse_json, read_body
from ._from_wire import InputError
from ._page_display import shown_json

#: The query parameter of a grants request (an agent URL may carry others beside it).
GRANTS_QUERY = b"agui_chat=grants"


def asks_for_grants(query: bytes) -> bool:
    """Whether a request's query string asks for the grants endpoint."""
    return GRANTS_QUERY in query.split(b"&")


async def grants_response(
    request: Request,
    *,
    store: ApprovalStore,
    audience: str,
    principal: Principal | None,
    max_bytes: int,
    timeout: float,
) -> JSONResponse:
    """List the grants of a thread (and of the sender), or revoke one of them."""
    if request.method != "POST":
        raise InputError(405, "METHOD_NOT_ALLOWED", "send a POST with {threadId, revoke?}")
    if not store.keeps_governance:
        raise InputError(404, "GRANTS_NOT_KEPT", "this server's approval store keeps no grants")
    data = parse_json(await read_body(request, max_bytes=max_bytes, timeout=timeout))
    thread = data.get("threadId") if isinstance(data, dict) else None
    revoke = data.get("revoke") if isinstance(data, dict) else None
    if not isinstance(thread, str) or not thread or not (revoke is None or isinstance(revoke, str)):
        raise InputError(400, "INVALID_GRANTS_REQUEST", "send {threadId: string, revoke?: string}")
    principal_id = None if principal is None else principal.id
    mine = [
        g
        for g in await store.grants(thread_id=thread, principal_id=principal_id)
        if g.audience == audience
    ]
    if revoke is not None:
        if not any(g.id == revoke for g in mine):
            raise InputError(
                404, "GRANT_NOT_FOUND", "no live grant of this conversation has that id"
            )
        revoked = await store.revoke_grant(revoke)
        return JSONResponse({"revoked": revoked})
    return JSONResponse({"grants": [described(g) for g in mine]})


def described(grant: Grant) -> dict[str, Any]:
    """A grant as the page and the terminal show it: exactly what it covers."""
    call = None if grant.arguments is None else shown_call(grant.tool, grant.arguments)
    by = grant.granted_by
    return {
        "id": grant.id,
        "tool": shown_json(shown_text(grant.tool, multiline=False)),
        "call": None if call is None else shown_json(call),
        "scope": grant.scope,
        "match": "tool" if grant.arguments_sha256 is None else "arguments",
        "created": grant.created.isoformat(),
        "expires": grant.expires.isoformat(),
        "grantedBy": None if by is None else {"id": by.id, "name": by.name},
        "description": grant.describe(None if call is None else call.full),
    }
