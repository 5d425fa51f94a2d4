"""An AG-UI agent inside a FastAPI app, behind a bearer-token check.

``AGUIServer`` is a plain ASGI application and does no authentication: that is the host
application's job. ``agui_chat.agui`` has the two public ways to put it in front:

1. FastAPI (what this sample does): ``fastapi_router`` gives an ``APIRouter`` whose endpoint
   runs your dependencies first, then hands the untouched request to the server::

       app.include_router(fastapi_router(agent, "/agui", dependencies=[Depends(require_token)]))

2. Starlette, or any ASGI host: ``protect`` wraps the server in a check of the request's
   headers (``bearer_token(...)``, or your own function), answering 401 when it fails::

       app = Starlette(routes=[Route("/agui", protect(agent, bearer_token(TOKEN)),
                                     methods=["POST"])])

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
from fastapi import Depends, FastAPI, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agui_chat import AIContent, ChatMessage, ChatOptions, FunctionCallContent, approval_required
from agui_chat.agui import AGUIServer, fastapi_router, serve
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
    # A call id of its own for every call (a real model's are unique too): an id reused across
    # turns would make the next answer name two different calls, and be refused.
    call_id = f"call_{len(messages)}"
    return [FunctionCallContent(call_id, "delete_file", {"path": last.text.split()[-1]})]


agent = AGUIServer(
    ScriptedChatClient(model),
    tools=[delete_file],
    # Use a fixed key from configuration in production, so approvals survive restarts, and a
    # store every worker shares (sqlite:///approvals.db on one host, redis://... for several).
    signing_key=os.environ.get("AGUI_CHAT_SIGNING_KEY") or secrets.token_hex(32),
    approval_store=os.environ.get("AGUI_CHAT_APPROVAL_STORE") or InMemoryApprovalStore(),
)

bearer = HTTPBearer(auto_error=False)


def require_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    """401 unless the request carries ``Authorization: Bearer <TOKEN>``."""
    given = credentials.credentials if credentials is not None else ""
    if not secrets.compare_digest(given.encode(), TOKEN.encode()):
        raise HTTPException(401, "a valid bearer token is required", {"WWW-Authenticate": "Bearer"})


app = FastAPI(title="AG-UI agent")
# The AG-UI endpoint: authenticated by the dependency, answered by the agent.
app.include_router(fastapi_router(agent, "/agui", dependencies=[Depends(require_token)]))


async def demo() -> None:
    """Two requests in-process: refused without the token, an approval interrupt with it."""
    body = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "delete notes.txt"}],
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
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
        serve(app, "127.0.0.1", 8000)
