"""``AGUIServer(allowed_hosts=...)`` over HTTP (issue 25, DESIGN §4): a request whose
``Host`` or ``Origin`` names a host the server does not answer is a 403 on every route and
runs nothing, so a DNS-rebinding page (``evil.example`` re-pointed at 127.0.0.1) can neither
start a run nor approve its own ``delete_record``. The default answers the loopback names."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agui_chat import FunctionCallContent, ai_function, approval_required
from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient
from agui_server import SIGNING_KEY, agui_server
from agui_streams import SideEffects, run_input, sse_events, user


def _record_tools(effects: SideEffects) -> list[Any]:
    @approval_required
    @ai_function
    def delete_record(record_id: int) -> str:
        """Delete a record."""
        effects.record("delete_record", record_id=record_id)
        return f"deleted {record_id}"

    return [delete_record]


def _agent(effects: SideEffects, **options: Any) -> Any:
    def reply(messages: Any, options: Any) -> Any:
        if "delete" in messages[-1].text:
            return [FunctionCallContent("c1", "delete_record", {"record_id": 7})]
        return "ok"

    return agui_server(ScriptedChatClient(reply), tools=_record_tools(effects), ui=True, **options)


async def _post(app: Any, body: Any, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http:
        return await http.post("http://localhost/", json=body, headers=headers)


async def test_a_dns_rebinding_page_can_neither_start_a_run_nor_approve_its_own_call() -> None:
    effects = SideEffects()
    agent = _agent(effects)
    evil = {"host": "evil.example:8000", "origin": "http://evil.example:8000"}
    # Starting a run under the rebound name: refused, nothing reached the model.
    refused = await _post(agent.app, run_input(user("delete record 7")), **evil)
    assert refused.status_code == 403
    assert "evil.example" in refused.text and "Nothing was run" in refused.text
    # Even holding a real pause (issued to the loopback name), its approval is refused.
    paused = await agent.pause(user("delete record 7"))
    (interrupt,) = paused.interrupts
    answer = run_input(
        *paused.history,
        run="r2",
        resume=[
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        ],
    )
    assert (await _post(agent.app, answer, **evil)).status_code == 403
    assert (await _post(agent.app, answer, host="evil.example")).status_code == 403
    # The right Host with a foreign Origin (a page elsewhere posting here): refused too.
    assert (await _post(agent.app, answer, origin="http://evil.example")).status_code == 403
    assert (await _post(agent.app, answer, origin="null")).status_code == 403
    assert effects.count("delete_record") == 0
    # The approval was not consumed by the refusals: the person's own page still runs it once.
    events = sse_events((await _post(agent.app, answer, origin="http://127.0.0.1:8000")).content)
    assert events[-1]["type"] == "RUN_FINISHED"
    assert effects.runs["delete_record"] == [{"record_id": 7}]


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/"), ("HEAD", "/"), ("POST", "/"), ("POST", "/?agui_chat=display")],
)
async def test_every_route_refuses_an_unknown_host(method: str, path: str) -> None:
    agent = _agent(SideEffects())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=agent.app)) as http:
        response = await http.request(
            method, f"http://evil.example{path}", json={"calls": []} if method == "POST" else None
        )
        assert response.status_code == 403
        fine = await http.request(method, f"http://127.0.0.1{path}")
        assert fine.status_code != 403


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "127.0.0.1:55000", "[::1]:8000", "LOCALHOST"]
)
async def test_the_default_answers_the_loopback_names_on_any_port(host: str) -> None:
    agent = _agent(SideEffects())
    response = await _post(agent.app, run_input(user("hi")), host=host, origin=f"http://{host}")
    assert response.status_code == 200


@pytest.mark.parametrize(
    "host", ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "10.0.0.5", ""]
)
async def test_the_default_refuses_every_other_name(host: str) -> None:
    agent = _agent(SideEffects())
    assert (await _post(agent.app, run_input(user("hi")), host=host)).status_code == 403


async def test_a_list_answers_its_names_and_only_them() -> None:
    agent = _agent(SideEffects(), allowed_hosts=["agent.example.com", "lan.example:8443"])
    body = run_input(user("hi"))
    assert (await _post(agent.app, body, host="agent.example.com")).status_code == 200
    assert (await _post(agent.app, body, host="agent.example.com:9")).status_code == 200
    assert (await _post(agent.app, body, host="lan.example:8443")).status_code == 200
    assert (await _post(agent.app, body, host="lan.example:8444")).status_code == 403
    # A list replaces the default: the loopback names are no longer answered.
    assert (await _post(agent.app, body, host="localhost")).status_code == 403
    assert (
        await _post(agent.app, body, host="agent.example.com", origin="https://evil.example")
    ).status_code == 403


async def test_a_star_answers_any_host() -> None:
    agent = _agent(SideEffects(), allowed_hosts=["*"])
    body = run_input(user("hi"))
    assert (await _post(agent.app, body, host="anything.example")).status_code == 200


@pytest.mark.parametrize("bad", ["agent.example.com", ["http://x/"], [""], [3]])
def test_a_bad_allowed_hosts_is_refused_when_the_server_is_built(bad: Any) -> None:
    with pytest.raises(ValueError, match="allowed_hosts"):
        AGUIServer(
            ScriptedChatClient(lambda m, o: "x"),
            signing_key=SIGNING_KEY,
            approval_store="memory://",
            allowed_hosts=bad,
        )
