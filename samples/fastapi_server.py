"""An AG-UI agent inside a FastAPI app, behind a bearer-token check.

``AGUIServer`` is a plain ASGI application and does no authentication: that is the host
application's job. Two ways to put it in front:

1. A FastAPI dependency (what this sample does). The route checks the token with
   ``Depends(...)`` and then hands the untouched request to the server::

       @app.post("/agui", dependencies=[Depends(require_token)])
       async def agui(request: Request) -> Response:
           return HandOff(agent)

   The endpoint must not read the body (take only ``request: Request``): the server reads it.

2. A Starlette (ASGI) middleware around the server, for a plain Starlette app or any ASGI
   host::

       class BearerAuth:
           def __init__(self, app, token): self.app, self.token = app, token
           async def __call__(self, scope, receive, send):
               if Headers(scope=scope).get("authorization") != f"Bearer {self.token}":
                   await JSONResponse({"code": "UNAUTHORIZED"}, 401)(scope, receive, send)
                   return
               await self.app(scope, receive, send)

       app = Starlette(routes=[Route("/agui", BearerAuth(agent, TOKEN), methods=["POST"])])

The model here is a ``ScriptedChatClient``, so the sample runs offline: ``delete_file`` needs
approval, and the agent's run pauses with an approval interrupt.

Run ``python samples/fastapi_server.py`` to serve on http://127.0.0.1:8000/agui (token from
``AGENT_TOKEN``, default ``let-me-in``), or ``python samples/fastapi_server.py --demo`` to send
two requests in-process (one without the token, one with it) and print what comes back.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
from typing import Annotated

import httpx
from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Scope, Send

from agui_chat import AIContent, ChatMessage, ChatOptions, FunctionCallContent, approval_required
from agui_chat.agui.server import AGUIServer
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient

TOKEN = os.environ.get("AGENT_TOKEN", "let-me-in")


@approval_required
def delete_file(path: str) -> str:
    """Delete a file (pretend).

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


def model(messages: list[ChatMessage], options: ChatOptions | None) -> str | list[AIContent]:
    """Asks to delete the file the user names; reports the tool's answer once it has one."""
    last = messages[-1]
    if last.role == "tool":
        return f"Done: {last.contents[0].result}."  # type: ignore[attr-defined]
    return [FunctionCallContent("call_1", "delete_file", {"path": last.text.split()[-1]})]


agent = AGUIServer(
    ScriptedChatClient(model),
    tools=[delete_file],
    # Use a fixed key from configuration in production, so approvals survive restarts.
    signing_key=os.environ.get("AGUI_CHAT_SIGNING_KEY") or secrets.token_hex(32),
    approval_store=InMemoryApprovalStore(),
)

bearer = HTTPBearer(auto_error=False)


def require_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    """401 unless the request carries ``Authorization: Bearer <TOKEN>``."""
    given = credentials.credentials if credentials is not None else ""
    if not secrets.compare_digest(given.encode(), TOKEN.encode()):
        raise HTTPException(401, "a valid bearer token is required", {"WWW-Authenticate": "Bearer"})


class HandOff(Response):
    """A response that lets an ASGI app (the agent) answer the request itself."""

    def __init__(self, asgi_app: ASGIApp) -> None:
        super().__init__()
        self.asgi_app = asgi_app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.asgi_app(scope, receive, send)


app = FastAPI(title="AG-UI agent")


@app.post("/agui", dependencies=[Depends(require_token)])
async def agui(request: Request) -> Response:
    """The AG-UI endpoint: authenticated by the dependency, answered by the agent."""
    return HandOff(agent)


async def demo() -> None:
    """Two requests in-process: refused without the token, an approval interrupt with it."""
    body = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "delete notes.txt"}],
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
        refused = await client.post("/agui", json=body)
        print(f"without a token: HTTP {refused.status_code}")
        headers = {"Authorization": f"Bearer {TOKEN}"}
        accepted = await client.post("/agui", json=body, headers=headers)
        print(f"with the token: HTTP {accepted.status_code} {accepted.headers['content-type']}")
        for line in accepted.text.splitlines():
            if line.startswith("data: "):
                print("  " + line[6:120])


if __name__ == "__main__":
    if "--demo" in sys.argv:
        asyncio.run(demo())
    else:
        from agui_chat.agui.server._serve import serve

        serve(app, "127.0.0.1", 8000)
