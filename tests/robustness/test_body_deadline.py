"""A request body that stalls is not held open: past ``body_timeout`` the server answers 408
``REQUEST_TIMEOUT`` (over real HTTP, a client that sends the headers and part of the body,
then nothing), runs nothing, and serves the next request as usual."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

from robustness_http import SideEffects, run_input, scripted, user

from agui_server import agui_server
from conftest import HTTP_TESTS, StartServer

pytestmark = HTTP_TESTS


async def test_a_stalled_body_gets_408_and_runs_nothing(live_server: StartServer) -> None:
    effects = SideEffects()
    app = agui_server(scripted("hello"), tools=[effects.delete_file()], body_timeout=0.3).app
    url = urlsplit(await live_server(app))
    body = json.dumps(run_input(user("hi"))).encode()
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    head = (
        f"POST / HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    writer.write(head + body[:10])  # ... and the rest never comes
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), 10)
    rest = await asyncio.wait_for(reader.read(4096), 10)
    writer.close()
    assert b" 408 " in status_line, status_line
    assert b"REQUEST_TIMEOUT" in rest
    assert effects.runs == {}

    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    writer.write(head + body)
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    assert b" 200 " in status_line, status_line
