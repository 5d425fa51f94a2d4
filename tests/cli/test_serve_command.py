"""``agui-chat serve`` as a real process on a free port of 127.0.0.1: the demo agent, a
user's ChatClient (``--app module:attr``, or a factory returning one) and a user's ASGI app,
each answering a ``RunAgentInput`` POST with an AG-UI event stream. Every server started is
stopped, and every wait is bounded."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

USER_MODULE = """
from starlette.applications import Starlette
from starlette.routing import Mount

from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient


def _echo(messages, options):
    return "you said: " + messages[-1].text


client = ScriptedChatClient(_echo)


def make_client():
    return ScriptedChatClient(lambda messages, options: "made by a factory")


asgi_app = Starlette(routes=[Mount("/agent", app=AGUIServer(client, signing_key=b"k" * 32, approval_store="memory://"))])
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _announced_port(proc: subprocess.Popen[str], deadline: float) -> int:
    """The port in the line ``agui-chat serve`` writes first to stderr."""
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
    assert ready, "agui-chat serve did not say where it serves"
    line = proc.stderr.readline()
    found = re.search(r" on http://127\.0\.0\.1:(\d+)/$", line.rstrip("\n"))
    assert found, line
    return int(found.group(1))


@contextmanager
def serving(cwd: Path, *args: str, port: int | None = None) -> Iterator[tuple[str, dict[str, str]]]:
    """Run ``agui-chat serve ARGS --port N`` in ``cwd`` until it accepts connections; yield
    its base URL and a dict that holds its ``stderr`` once stopped. ``N`` is a free port,
    or ``port`` (``0``: the server picks one and says which). The process is always stopped
    (terminated, then killed)."""
    output: dict[str, str] = {}
    port = _free_port() if port is None else port
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["AGUI_CHAT_SIGNING_KEY"] = "a-test-key-that-is-long-enough-0123456789"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agui_chat", "serve", *args, "--port", str(port)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        if port == 0:
            port = _announced_port(proc, deadline)
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "agui-chat serve did not start listening"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", output
    finally:
        proc.terminate()
        try:
            _, output["stderr"] = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, output["stderr"] = proc.communicate()


def run_input(text: str) -> dict[str, Any]:
    return {
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "m1", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }


def post_run(url: str, text: str) -> list[dict[str, Any]]:
    """POST one run and read its whole SSE stream into events."""
    events: list[dict[str, Any]] = []
    with httpx.stream(
        "POST",
        url,
        json=run_input(text),
        headers={"accept": "text/event-stream"},
        timeout=30,
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
    return events


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    (tmp_path / "my_agent.py").write_text(USER_MODULE)
    return tmp_path


def test_serve_app_hosts_a_users_chat_client_as_an_agui_endpoint(user_project: Path) -> None:
    with serving(user_project, "--app", "my_agent:client") as (url, _):
        events = post_run(url + "/", "hello there")
    assert events[0]["type"] == "RUN_STARTED"
    assert events[0]["threadId"] == "thread-1"
    assert text_of(events) == "you said: hello there"
    assert events[-1]["type"] == "RUN_FINISHED"


def test_serve_app_calls_a_factory_for_the_chat_client(user_project: Path) -> None:
    with serving(user_project, "--app", "my_agent:make_client") as (url, _):
        events = post_run(url + "/", "hi")
    assert text_of(events) == "made by a factory"


def test_serve_app_serves_a_users_asgi_app_as_it_is(user_project: Path) -> None:
    with serving(user_project, "--app", "my_agent:asgi_app") as (url, _):
        events = post_run(url + "/agent/", "through starlette")
        missing = httpx.post(url + "/", json=run_input("x"), timeout=10)
    assert text_of(events) == "you said: through starlette"
    assert events[-1]["type"] == "RUN_FINISHED"
    assert missing.status_code == 404  # the user's routes, not ours


def test_serve_without_app_hosts_the_demo_agent_which_pauses_for_approval(
    tmp_path: Path,
) -> None:
    with serving(tmp_path) as (url, _):
        events = post_run(url + "/", "Please clean up the draft report.")
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"]["type"] == "interrupt"
    [interrupt] = finished["outcome"]["interrupts"]
    calls = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [c["toolCallName"] for c in calls] == ["delete_file"]
    assert interrupt["toolCallId"] == calls[0]["toolCallId"]


def test_serve_says_what_it_serves_and_where(user_project: Path) -> None:
    with serving(user_project, "--app", "my_agent:client") as (url, output):
        pass
    assert f"agui-chat: serving my_agent:client on {url}/" in output["stderr"]


def test_serve_on_port_zero_takes_a_free_port_and_says_which(user_project: Path) -> None:
    with serving(user_project, "--app", "my_agent:client", port=0) as (url, _):
        events = post_run(url + "/", "on any port")
    assert not url.endswith(":0")
    assert text_of(events) == "you said: on any port"
