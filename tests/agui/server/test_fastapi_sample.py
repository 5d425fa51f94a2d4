"""samples/fastapi_server.py: the agent mounted in FastAPI behind a bearer token."""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from server_support import approve, assert_valid_agui, interrupts, run_input, sse_events, user

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "fastapi_server.py"


@pytest.fixture(scope="module")
def sample() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fastapi_server_sample", SAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def client(sample: ModuleType) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=sample.app), base_url="http://localhost"
    )


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}]
)
async def test_a_request_without_the_token_is_refused_before_any_run(
    sample: ModuleType, headers: dict[str, str]
) -> None:
    async with client(sample) as http:
        response = await http.post("/agui", json=run_input(user("delete a.txt")), headers=headers)
    assert response.status_code == 401
    assert "data:" not in response.text


async def test_with_the_token_the_agent_pauses_and_resumes(sample: ModuleType) -> None:
    headers = {"Authorization": f"Bearer {sample.TOKEN}"}
    async with client(sample) as http:
        first = await http.post("/agui", json=run_input(user("delete notes.txt")), headers=headers)
        events = sse_events(first.content)
        assert_valid_agui(events)
        (interrupt,) = interrupts(events)
        body = run_input(user("delete notes.txt"), run="r2", resume=[approve(interrupt)])
        second = await http.post("/agui", json=body, headers=headers)
    resumed = sse_events(second.content)
    assert_valid_agui(resumed, resumed=True)
    assert resumed[1]["content"] == "deleted notes.txt"


async def test_the_sample_streams_over_real_http(
    sample: ModuleType, live_server: Callable[[Any], Awaitable[str]]
) -> None:
    url = await live_server(sample.app)
    async with httpx.AsyncClient() as http:
        response = await http.post(
            f"{url}/agui",
            json=run_input(user("delete notes.txt")),
            headers={"Authorization": f"Bearer {sample.TOKEN}"},
        )
    assert response.headers["content-type"].startswith("text/event-stream")
    assert interrupts(sse_events(response.content))[0]["toolCallId"] == "call_1"
