"""samples/openai_server.py with only ``OPENAI_BASE_URL`` set (a local OpenAI-compatible
server, here a fake one on 127.0.0.1) serves without demanding ``OPENAI_API_KEY``: a run
posted to it streams the local model's answer."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
from fake_openai import FakeOpenAI

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "openai_server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_local_base_url_needs_no_key() -> None:
    fake = FakeOpenAI()
    port = free_port()
    with fake.serving() as base_url:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGUI_"))}
        env["OPENAI_BASE_URL"] = base_url
        child = subprocess.Popen(
            [sys.executable, str(SAMPLE), "--model", "fake-model", "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            for _ in range(600):
                if child.poll() is not None:
                    break
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    threading.Event().wait(0.05)
            assert child.poll() is None, child.communicate()
            body = {
                "threadId": "t1",
                "runId": "r1",
                "messages": [{"id": "u1", "role": "user", "content": "hello"}],
            }
            reply = httpx.post(f"http://127.0.0.1:{port}/", json=body, timeout=30)
        finally:
            child.terminate()
            child.communicate(timeout=30)
    assert reply.status_code == 200
    assert '"type":"RUN_FINISHED"' in reply.text
    assert "RUN_ERROR" not in reply.text
    assert [r["model"] for r in fake.requests] == ["fake-model"]
