"""What AGUIServer refuses before a run starts: HTTP errors with a JSON body, no stream."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from server_support import run_input, scripted, user

from agui_server import ServedAgent, agui_server


def make_server(**settings: Any) -> ServedAgent:
    model = scripted(*["hi there"] * 5)
    return agui_server(model, **settings)


async def post(
    agent: ServedAgent, content: bytes, content_type: str = "application/json"
) -> httpx.Response:
    async with agent.client() as client:
        return await client.post("/", content=content, headers={"content-type": content_type})


def assert_refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    return body


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
async def test_methods_other_than_post_get_405_with_allow(method: str) -> None:
    async with make_server().client() as client:
        response = await client.request(method, "/")
    assert_refused(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"] == "POST"


async def test_a_declared_content_length_over_the_limit_gets_413() -> None:
    body = json.dumps(run_input(user("x" * 2000))).encode()
    response = await post(make_server(max_body_bytes=1000), body)
    assert_refused(response, 413, "BODY_TOO_LARGE")


async def test_a_streamed_body_over_the_limit_gets_413_without_content_length() -> None:
    payload = json.dumps(run_input(user("x" * 2000))).encode()

    async def chunks() -> Any:
        for i in range(0, len(payload), 256):
            yield payload[i : i + 256]

    async with make_server(max_body_bytes=1000).client() as client:
        response = await client.post(
            "/", content=chunks(), headers={"content-type": "application/json"}
        )
    assert "content-length" not in response.request.headers
    assert_refused(response, 413, "BODY_TOO_LARGE")


async def test_a_body_at_the_limit_is_accepted() -> None:
    body = json.dumps(run_input(user("hi"))).encode()
    response = await post(make_server(max_body_bytes=len(body)), body)
    assert response.status_code == 200


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
async def test_a_body_that_is_not_json_typed_gets_415(content_type: str) -> None:
    body = json.dumps(run_input()).encode()
    response = await post(make_server(), body, content_type)
    assert_refused(response, 415, "UNSUPPORTED_MEDIA_TYPE")


async def test_json_with_a_charset_is_accepted() -> None:
    body = json.dumps(run_input()).encode()
    response = await post(make_server(), body, "application/json; charset=utf-8")
    assert response.status_code == 200


@pytest.mark.parametrize("content", [b"{not json", b"", b"\xff\xfe{}", b'{"a": 1}}'])
async def test_a_body_that_is_not_json_gets_400(content: bytes) -> None:
    assert_refused(await post(make_server(), content), 400, "INVALID_JSON")


@pytest.mark.parametrize("depth", [150, 100_000])
async def test_deeply_nested_json_gets_400_and_the_server_keeps_serving(depth: int) -> None:
    agent = make_server(max_body_bytes=10_000_000)
    nested = (
        b'{"threadId":"t","runId":"r","messages":[],"state":' + b"[" * depth + b"]" * depth + b"}"
    )
    assert_refused(await post(agent, nested), 400, "JSON_TOO_DEEP")
    events = await agent.post(run_input())
    assert events[-1]["type"] == "RUN_FINISHED"


async def test_nesting_within_the_limit_is_accepted() -> None:
    state = json.loads("[" * 90 + "]" * 90)
    response = await post(make_server(), json.dumps(run_input(state=state)).encode())
    assert response.status_code == 200


async def test_a_missing_required_field_gets_422_naming_it() -> None:
    body = run_input()
    del body["threadId"]
    response = await post(make_server(), json.dumps(body).encode())
    error = assert_refused(response, 422, "INVALID_INPUT")
    assert {"field": "threadId", "message": "is required but missing"} in error["errors"]


async def test_a_malformed_message_gets_422_naming_the_message_field() -> None:
    body = run_input({"id": "u1", "role": "user"})
    response = await post(make_server(), json.dumps(body).encode())
    error = assert_refused(response, 422, "INVALID_INPUT")
    assert [e["field"] for e in error["errors"]] == ["messages[0].content"]


async def test_a_bad_resume_status_gets_422_naming_it() -> None:
    body = run_input(resume=[{"interruptId": "x", "status": "maybe"}])
    error = assert_refused(
        await post(make_server(), json.dumps(body).encode()), 422, "INVALID_INPUT"
    )
    assert error["errors"][0]["field"] == "resume[0].status"


async def test_a_body_that_is_not_an_object_gets_422() -> None:
    error = assert_refused(await post(make_server(), b"[1, 2]"), 422, "INVALID_INPUT")
    assert error["errors"][0]["field"] == "(body)"


async def test_a_client_tool_with_an_invalid_name_gets_422_naming_it() -> None:
    body = run_input(tools=[{"name": "bad name!", "description": "x", "parameters": {}}])
    error = assert_refused(
        await post(make_server(), json.dumps(body).encode()), 422, "INVALID_INPUT"
    )
    assert error["errors"][0]["field"] == "tools[0]"


async def test_the_error_body_does_not_echo_the_input() -> None:
    body = run_input({"id": "u1", "role": "user", "content": {"secret": "hunter2"}})
    response = await post(make_server(), json.dumps(body).encode())
    assert response.status_code == 422
    assert "hunter2" not in response.text


async def test_a_minimal_1_0_body_runs() -> None:
    events = await make_server().post({"threadId": "t", "runId": "r", "messages": [user("hi")]})
    assert events[0] == {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "protocolVersion": "1.0",
    }


async def test_a_0_1_x_body_with_a_binary_part_runs_and_the_model_gets_the_image() -> None:
    model = scripted("seen")
    agent = agui_server(model)
    legacy = {
        "id": "u1",
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "binary", "mimeType": "image/png", "data": "aGk="},
        ],
    }
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [legacy],
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "state": None,
    }
    await agent.post(body)
    ((received, _),) = model.calls
    text, image = received[0].contents
    assert text.text == "what is this?"  # type: ignore[attr-defined]
    assert image.media_type == "image/png" and image.data == b"hi"  # type: ignore[attr-defined]


async def test_a_content_length_that_is_not_a_number_gets_400() -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"lots")],
    }
    await make_server().app(scope, receive, send)
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"])["code"] == "INVALID_CONTENT_LENGTH"
