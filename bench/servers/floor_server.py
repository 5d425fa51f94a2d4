"""The floor for bench/peers.py: a bare ASGI app under uvicorn that reads the body and
answers with one SSE event (``python floor_server.py PORT EFFECTS``; EFFECTS unused)."""

from __future__ import annotations

import sys
from typing import Any

import uvicorn

PORT = int(sys.argv[1])


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream")],
        }
    )
    await send({"type": "http.response.body", "body": b'data: {"type":"RUN_STARTED"}\n\n'})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
