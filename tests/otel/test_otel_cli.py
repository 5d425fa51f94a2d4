"""``agui-chat serve --otel`` and ``chat --otel`` as real processes on 127.0.0.1, exporting to
the console (the standard ``OTEL_*`` variables choose): the chat's CLIENT run span and the
server's SERVER run span, model call and tool spans share one trace across the processes."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    env.update(
        AGUI_CHAT_SIGNING_KEY="a-test-key-that-is-long-enough-0123456789",
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="none",
        OTEL_SERVICE_NAME="otel-cli-test",
    )
    return env


def _trace_ids(text: str, span_name: str) -> set[str]:
    """The trace ids of the console-exported spans called ``span_name``."""
    ids = set()
    for block in text.split('"name": ')[1:]:
        if block.startswith(f'"{span_name}"'):
            found = re.search(r'"trace_id": "0x([0-9a-f]{32})"', block)
            assert found, block[:300]
            ids.add(found.group(1))
    return ids


def test_serve_and_chat_with_otel_export_one_trace_across_processes(tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "agui_chat", "serve", "--otel", "--port", str(port)],
        cwd=tmp_path,  # serve keeps its approvals store in the working directory
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.communicate()[1]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "agui-chat serve did not start listening"
                time.sleep(0.05)
        chat = subprocess.run(
            [
                sys.executable,
                "-m",
                "agui_chat",
                "chat",
                f"http://127.0.0.1:{port}/",
                "--otel",
                "--yes",
            ],
            input="Please clean up the draft report.\n\n",
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert chat.returncode == 0, chat.stderr
    finally:
        server.terminate()
        try:
            _, served = server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            _, served = server.communicate()
    client_traces = _trace_ids(chat.stderr, "agui.run")
    assert client_traces, chat.stderr[-2000:]
    assert '"kind": "SpanKind.CLIENT"' in chat.stderr
    server_traces = _trace_ids(served, "agui.run")
    assert server_traces and server_traces <= client_traces, served[-2000:]
    assert '"kind": "SpanKind.SERVER"' in served
    assert _trace_ids(served, "chat agui-chat-demo") <= client_traces
    assert _trace_ids(served, "chat agui-chat-demo")
    assert "agui_chat.approval.requested" in served  # the demo asks before deleting
