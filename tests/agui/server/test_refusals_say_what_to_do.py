"""Issue 26 item 2: a refusal says whether to send the same answer again (with the wait, as
``retryAfter`` in the ``RUN_ERROR`` and a ``Retry-After`` header) or to ask the person again;
``AGUIChatClient`` retries the first kind itself, within its budget and honouring the wait,
and raises only ``AskAgainError`` for the second (``ResumeRetryError`` once its retries are
spent). Nothing is run twice on the way."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_support import (
    BASE_URL,
    SideEffects,
    approve,
    history_from,
    interrupts,
    run_input,
    scripted,
    user,
)

from agui_chat import (
    AskAgainError,
    ChatMessage,
    FunctionCallContent,
    FunctionResultContent,
    ResumeRetryError,
    ToolApprovalRequestContent,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.agui.server._signing import InterruptSigner
from agui_chat.stores import InMemoryApprovalStore
from agui_server import ServedAgent, agui_server
from fake_clock import FakeClock, on_the_server


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    return on_the_server(monkeypatch)


def delete_app(fx: SideEffects, store: InMemoryApprovalStore) -> ServedAgent:
    call = FunctionCallContent("c1", "delete_file", {"path": "a.txt"})
    return agui_server(scripted([call], "Deleted.", [call], "Deleted."), tools=[fx.delete_file()],
                       approval_store=store)  # fmt: skip


def client_of(agent: ServedAgent, *, max_retries: int = 3) -> tuple[AGUIChatClient, list[float]]:
    """A client of ``agent`` in process, whose backoff records its waits instead of sleeping
    (and moves the server's fake clock by them, as a real wait would)."""
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=agent.app), base_url=BASE_URL)
    client = AGUIChatClient(BASE_URL, http_client=http, max_retries=max_retries)
    waits: list[float] = []
    return client, waits


async def approved_history(client: AGUIChatClient) -> tuple[list[ChatMessage], str]:
    history = [ChatMessage("user", "delete a.txt")]
    paused = await client.get_response(history)
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    token = request.request_id  # the interrupt id: the signed token
    answer = ChatMessage("user", [request.create_response(True)])
    return [*history, *paused.messages, answer], token


def waiting(client: AGUIChatClient, clock: FakeClock, waits: list[float]) -> None:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.advance(seconds)

    client._transport._sleep = sleep


async def held_by_a_dead_worker(store: InMemoryApprovalStore, token: str, clock: FakeClock) -> None:
    key = InterruptSigner.fingerprint(token)
    epoch = await store.epoch()
    assert await store.claim(
        key, expires_at=None, owner="dead", lease_until=clock.now + 12, epoch=epoch
    )


def results(messages: list[ChatMessage]) -> list[Any]:
    return [c.result for m in messages for c in m.contents if isinstance(c, FunctionResultContent)]


async def test_the_client_waits_out_a_dead_workers_claim_and_runs_the_tool_once(
    clock: FakeClock,
) -> None:
    fx, store = SideEffects(), InMemoryApprovalStore(clock=clock)
    agent = delete_app(fx, store)
    client, waits = client_of(agent)
    waiting(client, clock, waits)
    history, token = await approved_history(client)
    await held_by_a_dead_worker(store, token, clock)
    response = await client.get_response(history)
    assert waits == [13.0]  # the server's retryAfter, honoured (not the 0.5 s backoff)
    assert results(response.messages) == ["deleted a.txt"]
    assert fx.count("delete_file") == 1


async def test_the_client_gives_up_after_its_budget_with_a_retry_error(clock: FakeClock) -> None:
    fx, store = SideEffects(), InMemoryApprovalStore(clock=clock)
    agent = delete_app(fx, store)
    client, waits = client_of(agent, max_retries=2)

    async def sleep(seconds: float) -> None:  # a wait that does not let the lease run out
        waits.append(seconds)

    client._transport._sleep = sleep
    history, token = await approved_history(client)
    await held_by_a_dead_worker(store, token, clock)
    with pytest.raises(ResumeRetryError) as caught:
        await client.get_response(history)
    assert caught.value.code == "RESUME_CLAIM_HELD"
    assert caught.value.retry_after == 13
    assert waits == [13.0, 13.0]
    assert fx.count("delete_file") == 0


async def test_a_used_answer_is_the_only_refusal_the_caller_sees_and_it_says_ask_again(
    clock: FakeClock,
) -> None:
    """A token whose claim holds for good (its answer went to a run that left no result):
    the client does not retry it, it raises ``AskAgainError``."""
    fx, store = SideEffects(), InMemoryApprovalStore(clock=clock)
    agent = delete_app(fx, store)
    client, waits = client_of(agent)
    waiting(client, clock, waits)
    history, token = await approved_history(client)
    key = InterruptSigner.fingerprint(token)
    assert await store.claim(key, expires_at=None, owner="used", epoch=await store.epoch())
    with pytest.raises(AskAgainError) as caught:
        await client.get_response(history)
    assert caught.value.code == "RESUME_ALREADY_CONSUMED"
    assert waits == []
    assert fx.count("delete_file") == 0


async def test_a_store_that_lost_its_records_is_ask_again_never_a_second_run(
    clock: FakeClock,
) -> None:
    fx = SideEffects()
    agent = delete_app(fx, InMemoryApprovalStore(clock=clock))
    client, _ = client_of(agent)
    history, _ = await approved_history(client)
    await client.get_response(history)
    assert fx.count("delete_file") == 1
    agent.app.approval_store = InMemoryApprovalStore(clock=clock)  # the store came back empty
    with pytest.raises(AskAgainError) as caught:
        await client.get_response(history)
    assert caught.value.code == "APPROVAL_STORE_RESET"
    assert fx.count("delete_file") == 1


async def test_a_refusal_with_a_wait_carries_retry_after_in_the_event_and_the_header(
    clock: FakeClock,
) -> None:
    fx, store = SideEffects(), InMemoryApprovalStore(clock=clock)
    agent = delete_app(fx, store)
    first = await agent.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    await held_by_a_dead_worker(store, interrupt["id"], clock)
    body = run_input(
        user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=agent.app), base_url=BASE_URL
    ) as http:
        response = await http.post("/", json=body)
        ok = await http.post("/", json=run_input(user("hi"), thread="t2"))
    assert response.status_code == 200
    assert response.headers["retry-after"] == "13"
    assert '"retryAfter":13' in response.text
    assert "retry-after" not in ok.headers  # only a refusal with a wait carries it


class ReleasedMeanwhile(InMemoryApprovalStore):
    """A claim refused, and the record gone by the time it is read (released between)."""

    async def claim(self, key: str, **options: Any) -> bool:
        return False

    async def record(self, key: str) -> Any:
        return None


async def test_a_record_gone_between_the_claim_and_its_reading_is_held_for_a_second(
    clock: FakeClock,
) -> None:
    fx = SideEffects()
    agent = delete_app(fx, ReleasedMeanwhile(clock=clock))
    first = await agent.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    body = run_input(
        user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
    )
    refused = await agent.post(body)
    assert [e["type"] for e in refused] == ["RUN_ERROR"]
    assert refused[0]["code"] == "RESUME_CLAIM_HELD"
    assert refused[0]["retryAfter"] == 1
    assert fx.count("delete_file") == 0
