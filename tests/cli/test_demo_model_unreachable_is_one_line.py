"""``agui-chat demo --model M`` with a model nothing answers for: one line that says why (the
connection was refused at the model's address), no traceback, exit 1 (issue 25: it printed
104 lines of tracebacks before the one useful line). Through the real command, against a
port of 127.0.0.1 nothing listens on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def test_a_model_nothing_answers_for_is_one_line_naming_the_cause() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env |= {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "unused"}
    out = subprocess.run(
        [sys.executable, "-m", "agui_chat", "demo", "--model", "m", "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 1
    text = out.stdout + out.stderr
    assert "Traceback" not in text
    errors = [line for line in text.splitlines() if "error" in line.lower()]
    assert errors == [
        f"agui-chat: error: the model failed: could not reach Chat Completions at "
        f"http://127.0.0.1:{port}/v1/: connection refused: nothing listens on that port "
        f"(ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', {port}))"
    ]
