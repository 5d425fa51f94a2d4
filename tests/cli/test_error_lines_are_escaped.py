"""The command's own error lines go through the display function too (issue 25 item 1): an
exception's text often quotes a server or a model, and ``agui-chat: error: ...`` printed it
raw. Through the real command, against a hostile OpenAI-compatible model server whose error
message carries a conceal sequence, an OSC title, a C1 CSI and a right-to-left override:
one line, each escaped, nothing raw on stdout or stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from live_agent import serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agui_chat import HTTPStatusError
from agui_chat.cli._errors import explain

HOSTILE = "bad\x1b[8m hidden\x1b]0;owned\x07\x9b2J report\u202efdp.exe"
ESCAPED = ("\\x1b[8m", "\\x1b]0;owned\\x07", "\\x9b2J", "report\\u202efdp.exe")
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


@contextmanager
def _hostile_model() -> Iterator[str]:
    """A model service that refuses every request with HOSTILE as its error message."""

    async def refuse(request: Request) -> JSONResponse:
        error = {"message": HOSTILE, "type": "invalid_request_error", "code": HOSTILE}
        return JSONResponse({"error": error}, status_code=400)

    app = Starlette(routes=[Route("/v1/chat/completions", refuse, methods=["POST"])])
    with serving(app) as url:
        yield f"{url}v1"


def test_an_error_line_quoting_a_hostile_model_is_one_escaped_line() -> None:
    with _hostile_model() as base:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env |= {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "unused", "PYTHONIOENCODING": "utf-8"}
        out = subprocess.run(
            [sys.executable, "-m", "agui_chat", "demo", "--model", "m", "--yes"],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    assert out.returncode == 1
    text = out.stdout + out.stderr
    for char in RAW:
        assert char not in text, f"{char!r} reached the terminal raw: {text!r}"
    errors = [line for line in text.splitlines() if line.startswith("agui-chat: error: ")]
    assert len(errors) == 1, text
    for piece in ESCAPED:
        assert piece in errors[0], (piece, errors[0])


def test_a_long_http_error_body_says_it_is_cut() -> None:
    body = "x" * 250 + "THE-END"
    line = explain(HTTPStatusError("HTTP 502", status_code=502, body=body), "http://127.0.0.1:9/")
    assert "THE-END" not in line
    assert "… [57 more characters]" in line
