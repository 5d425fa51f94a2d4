"""Helpers for the OpenAI adapter tests: serve recorded Chat Completions wire bytes through
respx and read back the JSON the SDK sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import respx

BASE_URL = "https://api.openai.com/v1"
FIXTURES = Path(__file__).parent / "fixtures"


class Wire:
    """Serves fixture files as Chat Completions answers and reads back what was sent."""

    def __init__(self, router: respx.MockRouter) -> None:
        self.router = router

    def json(
        self, name: str, status: int = 200, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return httpx.Response(
            status,
            content=(FIXTURES / name).read_bytes(),
            headers={"content-type": "application/json", **(headers or {})},
        )

    def sse(self, name: str) -> httpx.Response:
        return httpx.Response(
            200,
            content=(FIXTURES / name).read_bytes(),
            headers={"content-type": "text/event-stream"},
        )

    def serve(self, *responses: httpx.Response) -> respx.Route:
        """Answer successive POSTs to /chat/completions with ``responses``, in order."""
        return self.router.post("/chat/completions").mock(side_effect=list(responses))

    @staticmethod
    def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
        """The JSON body of the request ``route`` received (the last one by default)."""
        body: dict[str, Any] = json.loads(route.calls[index].request.content)
        return body


def legacy_http_client() -> Any:
    """A plain ``httpx`` client for the SDK to send through (respx intercepts ``httpx``; the
    SDK accepts one as ``http_client`` whatever HTTP library it uses by default)."""
    return httpx.AsyncClient()
