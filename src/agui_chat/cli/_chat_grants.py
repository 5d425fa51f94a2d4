"""``/grants`` and ``/revoke <id>`` in ``agui-chat chat``: the remembered approvals of this
conversation, as the server keeps them.

Both go to the server's grants endpoint, ``POST <agent url>?agui_chat=grants`` with
``{"threadId"}`` (the list: ``{"grants": [{id, tool, call, scope, match, created, expires,
grantedBy, description}]}``) or ``{"threadId", "revoke": id}`` (``{"revoked": true}``, or 404),
through the chat's own ``httpx`` client with the same headers (``--header``, credentials in
the URL), so the server sees the same person. What the server says is outside input: every
piece printed goes through the display (:func:`~agui_chat.cli._prompts.one_line`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from .._display import shown_text
from .._network_failure import network_failure
from .._url_secrets import redact_url, userinfo_to_header, without_url_secrets
from ._prompts import Terminal, one_line

__all__ = ["GRANTS_QUERY", "ServerGrants", "grants_url", "is_grants_command"]

#: The query string the server's grants endpoint answers on.
GRANTS_QUERY = "agui_chat=grants"
#: How long a grants request may take.
_TIMEOUT = 30.0
#: At most this much of a refusal's body is quoted.
_QUOTED = 200


def grants_url(endpoint: str) -> str:
    """The grants endpoint of the agent at ``endpoint`` (its own query kept in front)."""
    parts = urlsplit(endpoint)
    query = f"{parts.query}&{GRANTS_QUERY}" if parts.query else GRANTS_QUERY
    return urlunsplit(parts._replace(query=query, fragment=""))


def is_grants_command(line: str) -> bool:
    """Whether a line typed at ``you>`` is ``/grants`` or ``/revoke ...`` (not a message)."""
    word = line.split(maxsplit=1)[0] if line.strip() else ""
    return word in ("/grants", "/revoke")


class ServerGrants:
    """The grants of the conversation ``thread()`` names, at the agent ``endpoint``, asked
    through ``http`` with ``headers``."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        endpoint: str,
        headers: Mapping[str, str],
        thread: Callable[[], str | None],
    ) -> None:
        url, with_auth = userinfo_to_header(endpoint, headers)
        self._http = http
        self._url = grants_url(url)
        self._endpoint = endpoint
        self._shown = redact_url(endpoint)
        self._headers = {
            **{k: v for k, v in (with_auth or {}).items() if k.lower() not in ("accept",)},
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        self._thread = thread

    async def run(self, line: str, term: Terminal) -> None:
        """Do what ``line`` (``/grants`` or ``/revoke <id>``) asks, saying what came of it."""
        command, _, rest = line.strip().partition(" ")
        thread = self._thread()
        if command == "/revoke" and not rest.strip():
            term.say("  usage: /revoke <grant id> (the ids are listed by /grants)")
            return
        if thread is None:
            term.say("  nothing is remembered yet: this conversation has not started")
            return
        try:
            if command == "/grants":
                await self._list(thread, term)
            else:
                await self._revoke(thread, rest.strip(), term)
        except httpx.HTTPError as exc:
            failure = network_failure(exc, advice=True) or without_url_secrets(
                f"{type(exc).__name__}: {exc}", self._endpoint
            )
            term.say(f"  error: cannot reach {one_line(self._shown)}: {one_line(failure)}")

    async def _post(self, body: dict[str, Any]) -> tuple[httpx.Response, Any]:
        response = await self._http.post(
            self._url, json=body, headers=self._headers, timeout=_TIMEOUT
        )
        try:
            data = response.json()
        except ValueError:
            data = None
        return response, data

    def _refused(self, response: httpx.Response, data: Any, term: Terminal) -> None:
        if isinstance(data, Mapping) and isinstance(data.get("message"), str):
            said = str(data["message"])
        else:
            said = response.text.strip()
        said = said[:_QUOTED] + ("…" if len(said) > _QUOTED else "")
        if response.status_code == 404 and not isinstance(data, Mapping):
            said = "it has no grants endpoint (is it an agui-chat server?)"
        term.say(
            f"  error: the server answered HTTP {response.status_code}"
            + (f": {one_line(said)}" if said else "")
        )

    async def _list(self, thread: str, term: Terminal) -> None:
        response, data = await self._post({"threadId": thread})
        grants = data.get("grants") if isinstance(data, Mapping) else None
        if response.status_code != 200 or not isinstance(grants, list):
            self._refused(response, data, term)
            return
        shown = [g for g in grants if isinstance(g, Mapping)]
        if not shown:
            term.say("  no remembered approvals in this conversation")
            return
        term.say("  remembered approvals (revoke one with /revoke <id>):")
        for grant in shown:
            # A display, cut (saying so) past the display's limit: a server could send a lot.
            said = shown_text(str(grant.get("description")), multiline=False).text
            term.say(f"  {one_line(grant.get('id'))}: {said}")

    async def _revoke(self, thread: str, grant_id: str, term: Terminal) -> None:
        response, data = await self._post({"threadId": thread, "revoke": grant_id})
        shown = one_line(grant_id)
        if response.status_code == 200 and isinstance(data, Mapping):
            if data.get("revoked") is True:
                term.say(f"  revoked {shown}: those calls will be asked about again")
            else:
                term.say(f"  {shown} was no longer live: nothing to revoke")
            return
        if (
            response.status_code == 404
            and isinstance(data, Mapping)
            and data.get("code") == "GRANT_NOT_FOUND"
        ):
            term.say(f"  no live grant {shown} in this conversation: nothing was revoked")
            return
        self._refused(response, data, term)
