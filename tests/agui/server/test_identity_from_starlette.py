"""The default principal is read from Starlette's authentication, whatever user class the app
uses: ``identity`` when it has one, else ``display_name`` (a user class from before Starlette
gave users an ``identity``), the scopes as roles; nobody when the user is not authenticated.
An ``identify`` that raises or returns something else refuses the request (401)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.authentication import BaseUser
from starlette.requests import Request

from agui_chat import Principal
from agui_chat.agui import AGUIServer
from agui_chat.agui.server._identity import from_starlette, identify
from agui_chat.stores import InMemoryApprovalStore
from agui_server import SIGNING_KEY, client_for
from agui_streams import run_input, scripted, user


class OldUser(BaseUser):
    """A user class that leaves ``identity`` unimplemented (it raises)."""

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return "carol"


class Anonymous(BaseUser):
    @property
    def is_authenticated(self) -> bool:
        return False


class Scopes:
    scopes = ("ops", 7)


def request(user: Any, auth: Any = None) -> Request:
    return Request({"type": "http", "method": "POST", "headers": [], "user": user, "auth": auth})


def test_a_user_without_identity_is_known_by_its_display_name() -> None:
    assert from_starlette(request(OldUser(), Scopes())) == Principal(
        "carol", name="carol", roles=frozenset({"ops"})
    )


def test_nobody_when_unauthenticated_or_without_middleware() -> None:
    assert from_starlette(request(Anonymous())) is None
    assert from_starlette(Request({"type": "http", "method": "POST", "headers": []})) is None


@pytest.mark.parametrize("bad", [lambda r: 1 / 0, lambda r: "alice", lambda r: {"id": "alice"}])
async def test_an_identify_that_fails_refuses_the_request_and_runs_nothing(bad: Any) -> None:
    model = scripted("never")
    app = AGUIServer(
        model, signing_key=SIGNING_KEY, approval_store=InMemoryApprovalStore(), identify=bad
    )
    async with client_for(app) as client:
        response = await client.post("/", json=run_input(user("hi")))
    assert response.status_code == 401
    assert response.json()["code"] == "IDENTIFY_FAILED"
    assert "alice" not in response.text


async def test_an_async_identify_is_awaited() -> None:
    async def who(r: Request) -> Principal:
        return Principal("dave")

    assert await identify(request(None), who) == Principal("dave")
