"""serve(): uvicorn on 127.0.0.1 by default, for an app or a chat client."""

from __future__ import annotations

from typing import Any

import pytest
import uvicorn
from server_support import scripted

from agui_chat.agui import AGUIServer, serve
from agui_server import agui_server


@pytest.fixture
def uvicorn_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append((app, kwargs)))
    return calls


def test_serve_binds_to_loopback_by_default(
    uvicorn_calls: list[tuple[Any, dict[str, Any]]],
) -> None:
    app = agui_server(scripted()).app
    serve(app)
    assert uvicorn_calls == [(app, {"host": "127.0.0.1", "port": 8000, "log_level": "info"})]


def test_serve_wraps_a_chat_client_in_an_agui_server(
    uvicorn_calls: list[tuple[Any, dict[str, Any]]],
) -> None:
    model = scripted()
    serve(model, port=9000)
    ((app, kwargs),) = uvicorn_calls
    assert isinstance(app, AGUIServer) and app.pipeline.inner_client is model  # type: ignore[attr-defined]
    assert kwargs["port"] == 9000


def test_serve_refuses_something_that_is_neither(
    uvicorn_calls: list[tuple[Any, dict[str, Any]]],
) -> None:
    with pytest.raises(TypeError, match="ASGI app or a chat client"):
        serve(42)
    assert uvicorn_calls == []
