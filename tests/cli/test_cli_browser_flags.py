"""``agui-chat demo --browser`` and ``agui-chat serve --ui`` as real processes: each says
where the page is, and GET there answers the page while POST stays the AG-UI endpoint.
Without a display nothing tries to open a browser. Every process is stopped, every wait
bounded."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import httpx


@contextmanager
def _started(*args: str) -> Iterator[subprocess.Popen[str]]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agui_chat", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _url_in(stream: IO[str] | None, pattern: str) -> str:
    assert stream is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = stream.readline()
        found = re.search(pattern, line)
        if found:
            return found.group(1)
        assert line, "the process ended before it said where it serves"
    raise AssertionError("the process did not say where it serves")


def _get_when_listening(url: str) -> httpx.Response:
    """``serve`` announces its port just before uvicorn listens: retry a refused connect."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return httpx.get(url, timeout=10)
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _page_and_endpoint(url: str) -> None:
    page = _get_when_listening(url)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "agui-chat" in page.text and "content-security-policy" in page.headers
    hello = {"id": "u", "role": "user", "content": "hi"}
    body = {"threadId": "t", "runId": "r", "messages": [hello]}
    run = httpx.post(url, json=body, headers={"accept": "text/event-stream"}, timeout=10)
    assert run.headers["content-type"].startswith("text/event-stream")
    assert '"RUN_FINISHED"' in run.text
    # The loopback default (issue 25): a DNS-rebinding name gets 403, page and endpoint alike.
    evil = {"host": "evil.example", "accept": "text/event-stream"}
    assert httpx.get(url, headers=evil, timeout=10).status_code == 403
    assert httpx.post(url, json=body, headers=evil, timeout=10).status_code == 403


def test_demo_browser_prints_the_url_of_the_page() -> None:
    with _started("demo", "--browser") as proc:
        url = _url_in(proc.stdout, r"open (http://127\.0\.0\.1:\d+/) in a browser")
        _page_and_endpoint(url)


def test_serve_ui_serves_the_page_on_get() -> None:
    with _started("serve", "--ui", "--port", "0") as proc:
        url = _url_in(proc.stderr, r"on (http://127\.0\.0\.1:\d+/) \(and its web page")
        _page_and_endpoint(url)


def test_serve_without_ui_refuses_get() -> None:
    with _started("serve", "--port", "0") as proc:
        url = _url_in(proc.stderr, r" on (http://127\.0\.0\.1:\d+/)$")
        assert _get_when_listening(url).status_code == 405
