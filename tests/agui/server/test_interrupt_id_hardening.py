"""Findings of the approval security review, each reproduced against the server and counted
in tool runs: a re-spelled interrupt id replaying an approval, an expired answer accepted
again once its record was swept, a malformed id escaping as AGENT_ERROR, duplicate interrupt
ids in one run, and a refused resume that opened a run before refusing it."""

from __future__ import annotations

import base64
import json
import logging
from datetime import timedelta
from typing import Any

import httpx
import pytest
from server_support import (
    BASE_URL,
    Tools,
    approve,
    cancel,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    reject,
    run_input,
    scripted,
    types,
    user,
)

from agui_chat import (
    ChatMessage,
    ErrorContent,
    FunctionCallContent,
    InterruptRequestContent,
    RunError,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.agui.server import _signing
from agui_chat.agui.server._resume_check import ANSWER_RETENTION
from agui_chat.agui.server._signing import InterruptSigner
from agui_chat.stores import InMemoryApprovalStore
from agui_server import ServedAgent, agui_server
from fake_clock import FakeClock, on_the_server

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def delete_app(tools: Tools, *replies: Any, **settings: Any) -> ServedAgent:
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], *replies)
    return agui_server(model, tools=[tools.delete_file(allow_edits=False)], **settings)


async def paused(agent: ServedAgent) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    events = await agent.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(events)
    return history_from(events), interrupt


def respellings(token: str) -> list[str]:
    """Other texts a lenient base64 decoder reads as the same MAC: the last character with
    its unused low bits changed, and characters outside the alphabet appended."""
    version, payload, mac = token.split(".")
    index = ALPHABET.index(mac[-1])
    low_bits = [ALPHABET[(index & ~3) | bits] for bits in range(4)]
    spellings = [f"{version}.{payload}.{mac[:-1]}{c}" for c in low_bits if c != mac[-1]]
    spellings += [f"{version}.{payload}.{mac}{junk}" for junk in ("$$", "~~~~", "=", "==")]
    spellings.append(f"{version}.{payload}=.{mac}")
    return spellings


def approved(interrupt_id: str) -> dict[str, Any]:
    return {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}


# -- 1. a re-spelled interrupt id ---------------------------------------------------------------


async def test_a_re_spelled_interrupt_id_cannot_replay_a_consumed_approval(tools: Tools) -> None:
    agent = delete_app(tools, *(["Deleted it."] * 12))
    history, interrupt = await paused(agent)
    body = run_input(user("x"), *history, run="r2", resume=[approve(interrupt)])
    first = await agent.post(body)
    assert outcome(first) == {"type": "success"}
    assert tools.count("delete_file") == 1

    for n, spelling in enumerate(respellings(interrupt["id"])):
        replay = run_input(user("x"), *history, run=f"r-replay-{n}", resume=[approved(spelling)])
        refused_before_the_run(await agent.post(replay), "RESUME_UNKNOWN_INTERRUPT")
    assert tools.count("delete_file") == 1


async def test_a_rejection_re_spelled_as_an_approval_runs_nothing(tools: Tools) -> None:
    agent = delete_app(tools, "Kept it.", "unused")
    history, interrupt = await paused(agent)
    body = run_input(user("x"), *history, run="r2", resume=[reject(interrupt, "no")])
    await agent.post(body)
    assert tools.count("delete_file") == 0

    (spelling, *_) = respellings(interrupt["id"])
    body = run_input(user("x"), *history, run="r3", resume=[approved(spelling)])
    refused_before_the_run(await agent.post(body), "RESUME_UNKNOWN_INTERRUPT")
    assert tools.count("delete_file") == 0


async def test_the_store_key_is_the_same_for_every_use_of_one_interrupt(tools: Tools) -> None:
    """The consumed-approvals store is keyed by the decoded signature, which only the
    signed claims determine, never by how the id happens to be spelled."""
    store = InMemoryApprovalStore()
    claimed: list[str] = []
    original_claim = store.claim

    async def spy(key: str, *, expires_at: float | None, **lease: Any) -> bool:
        claimed.append(key)
        return await original_claim(key, expires_at=expires_at, **lease)

    store.claim = spy  # type: ignore[method-assign]
    agent = delete_app(tools, "Deleted it.", approval_store=store)
    history, interrupt = await paused(agent)
    for run in ("r2", "r3"):
        await agent.post(run_input(user("x"), *history, run=run, resume=[approve(interrupt)]))
    mac = base64.urlsafe_b64decode(interrupt["id"].split(".")[2] + "=")
    assert len(mac) == 32
    assert claimed == [InterruptSigner.fingerprint(interrupt["id"])] * 2
    assert tools.count("delete_file") == 1


def _lenient_b64decode(text: str) -> bytes:
    """The decoder the server used to have: padding added, other characters ignored."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_the_store_alone_stops_a_re_spelled_replay(
    tools: Tools, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: were the decoder ever lenient again, the store, keyed by the
    decoded signature, would still take every spelling for the one approval it consumed."""
    monkeypatch.setattr(_signing, "_b64decode", _lenient_b64decode)
    agent = delete_app(tools, "Deleted it.", "Kept it.")
    history, interrupt = await paused(agent)
    await agent.post(run_input(user("x"), *history, run="r2", resume=[approve(interrupt)]))
    assert tools.count("delete_file") == 1
    for n, spelling in enumerate(respellings(interrupt["id"])[:3]):
        replay = run_input(user("x"), *history, run=f"r-replay-{n}", resume=[approved(spelling)])
        events = await agent.post(replay)
        assert types(events) == ["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_FINISHED"]
        assert events[1]["content"] == "deleted a.txt"
    assert tools.count("delete_file") == 1

    rejecting = Tools()
    rejected_app = delete_app(rejecting, "Kept it.")
    history, interrupt = await paused(rejected_app)
    body = run_input(user("x"), *history, run="r2", resume=[reject(interrupt, "no")])
    await rejected_app.post(body)
    (spelling, *_) = respellings(interrupt["id"])
    body = run_input(user("x"), *history, run="r3", resume=[approved(spelling)])
    events = await rejected_app.post(body)
    assert types(events) == ["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_FINISHED"]
    assert rejecting.count("delete_file") == 0


# -- 2. an expired answer after its record could have been swept --------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """One fake clock for issuing interrupts and checking resumes (pass it to the store)."""
    return on_the_server(monkeypatch)


async def test_an_expired_question_cancelled_once_is_never_accepted_again(
    clock: FakeClock,
) -> None:
    completed: list[tuple[str, str]] = []

    @approval_required
    @ai_function
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        sure = request_input(f"Really wipe {disk}?", key="sure")
        completed.append((disk, sure.status))
        return "kept" if sure.cancelled else f"wiped {disk}"

    store = InMemoryApprovalStore(clock=clock)
    model = scripted([FunctionCallContent("c1", "wipe", {"disk": "sda"})], *(["ok"] * 5))
    agent = agui_server(
        model, tools=[wipe], approval_ttl=timedelta(seconds=2), approval_store=store
    )
    first = await agent.post(run_input(user("wipe")))
    history = [user("wipe"), *history_from(first)]
    (approval,) = interrupts(first)
    asked = await agent.resume(history, approve(approval))
    (question,) = interrupts(asked)

    clock.advance(10)  # the question has expired: it can still be cancelled
    await agent.resume(history, cancel(question), run="r3")
    assert completed == [("sda", "cancelled")]

    # Well past the store's sweep interval, but within the retention: the record is kept,
    # so the same cancel only gets the kept result back.
    clock.advance(InMemoryApprovalStore._SWEEP_EVERY * 2)
    replay = await agent.resume(history, cancel(question), run="r4")
    assert types(replay) == ["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_FINISHED"]
    assert completed == [("sda", "cancelled")]

    # Past the retention every answer is refused, even a cancel, and the record may go.
    clock.advance(ANSWER_RETENTION.total_seconds())
    for run in ("r5", "r6"):
        late = await agent.post(run_input(*history, run=run, resume=[cancel(question)]))
        refused_before_the_run(late, "INTERRUPT_STALE")
    await store.claim("another", expires_at=None)  # a claim sweeps what has run out
    assert await store.get_result(InterruptSigner.fingerprint(question["id"])) is None
    late = await agent.resume(history, cancel(question), run="r7")
    refused_before_the_run(late, "INTERRUPT_STALE")
    assert completed == [("sda", "cancelled")]


async def test_an_expired_approval_may_be_rejected_only_within_the_retention(
    tools: Tools, clock: FakeClock
) -> None:
    store = InMemoryApprovalStore(clock=clock)
    agent = delete_app(tools, "Kept it.", approval_ttl=timedelta(seconds=2), approval_store=store)
    history, interrupt = await paused(agent)
    clock.advance(ANSWER_RETENTION.total_seconds() + 3)
    for entry in (reject(interrupt, "no"), cancel(interrupt), approve(interrupt)):
        events = await agent.post(run_input(user("x"), *history, run="r2", resume=[entry]))
        error = refused_before_the_run(events, "APPROVAL_STALE")
        assert "not even cancelled" in error["message"]
    assert tools.count("delete_file") == 0
    assert len(store) == 0


async def test_the_store_keeps_a_consumed_record_until_the_retention_ends(
    tools: Tools, clock: FakeClock
) -> None:
    store = InMemoryApprovalStore(clock=clock)
    agent = delete_app(tools, "Kept it.", approval_ttl=timedelta(seconds=2), approval_store=store)
    history, interrupt = await paused(agent)
    await agent.post(run_input(user("x"), *history, run="r2", resume=[reject(interrupt)]))
    key = InterruptSigner.fingerprint(interrupt["id"])
    clock.advance(ANSWER_RETENTION.total_seconds())  # expired, still within the retention
    await store.claim("sweep-1", expires_at=None)
    assert await store.get_result(key) is not None
    clock.advance(60 + InMemoryApprovalStore._SWEEP_EVERY)
    await store.claim("sweep-2", expires_at=None)
    assert await store.get_result(key) is None
    assert tools.count("delete_file") == 0


class ClockTickingStore(InMemoryApprovalStore):
    """A networked store as the server sees it: once ``tick`` is set, the clock moves on by
    that much while a claim is on its way (so the claim lands after the retention)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.fake_clock = clock
        self.tick = 0.0

    async def claim(self, key: str, *, expires_at: float | None, **lease: Any) -> bool:
        self.fake_clock.advance(self.tick)
        self.tick = 0.0
        return await super().claim(key, expires_at=expires_at, **lease)


async def test_an_answer_whose_claim_lands_after_the_retention_is_refused(
    clock: FakeClock,
) -> None:
    completed: list[str] = []

    @approval_required
    @ai_function
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        sure = request_input(f"Really wipe {disk}?", key="sure")
        completed.append(sure.status)
        return "kept"

    store = ClockTickingStore(clock)
    model = scripted([FunctionCallContent("c1", "wipe", {"disk": "sda"})], *(["ok"] * 5))
    agent = agui_server(
        model, tools=[wipe], approval_ttl=timedelta(seconds=2), approval_store=store
    )
    first = await agent.post(run_input(user("wipe")))
    history = [user("wipe"), *history_from(first)]
    asked = await agent.resume(history, approve(interrupts(first)[0]))
    (question,) = interrupts(asked)
    await agent.resume(history, cancel(question), run="r3")
    assert completed == ["cancelled"]

    # Checked just before the retention ends; the store answers just after it (and has
    # swept the record meanwhile): the answer must not pass for a fresh one.
    clock.advance(ANSWER_RETENTION.total_seconds())
    store.tick = 2 * InMemoryApprovalStore._SWEEP_EVERY
    late = await agent.resume(history, cancel(question), run="r4")
    refused_before_the_run(late, "INTERRUPT_STALE")
    assert completed == ["cancelled"]
    assert await store.get_result(InterruptSigner.fingerprint(question["id"])) is None


# -- 3. a malformed interrupt id ----------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_MAC = _b64(bytes(32))
MALFORMED_IDS = {
    "deep claims array": f"v1.{_b64(b'[' * 100_000 + b']' * 100_000)}.{_MAC}",
    "deep claims object": "v1."
    + _b64(b'{"k":"a","t":"t1","a":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    + f".{_MAC}",
    "claims not utf-8": f"v1.{_b64(bytes([0xFF, 0xFE]))}.{_MAC}",
    "claims a list": f"v1.{_b64(b'[1]')}.{_MAC}",
    "claims not json": f"v1.{_b64(b'{nope')}.{_MAC}",
    "empty claims": f"v1..{_MAC}",
    "non-ascii text": "v1.é.ü",
    "empty": "",
}


@pytest.mark.parametrize("interrupt_id", MALFORMED_IDS.values(), ids=MALFORMED_IDS.keys())
async def test_a_malformed_interrupt_id_is_refused_cleanly(
    tools: Tools, interrupt_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    agent = delete_app(tools)
    history, _ = await paused(agent)
    body = run_input(user("x"), *history, run="r2", resume=[approved(interrupt_id)])
    with caplog.at_level(logging.WARNING, logger="agui_chat.server"):
        events = await agent.post(body)
    refused_before_the_run(events, "RESUME_UNKNOWN_INTERRUPT")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert tools.count("delete_file") == 0


# -- 4. duplicate interrupt ids -----------------------------------------------------------------


def twin_questions_app(*replies: Any) -> ServedAgent:
    model = scripted(
        [
            InterruptRequestContent("q1", message="Continue?"),
            InterruptRequestContent("q2", message="Continue?"),
        ],
        *replies,
    )
    return agui_server(model)


async def test_two_equal_questions_get_distinct_ids_each_answered_once() -> None:
    agent = twin_questions_app()
    events = await agent.run(user("go"))
    one, two = interrupts(events)
    assert one["id"] != two["id"]
    history = [user("go"), *history_from(events)]
    twice = await agent.resume(history, cancel(one), cancel(one))
    refused_before_the_run(twice, "RESUME_DUPLICATE_ANSWER")


async def test_two_equal_questions_must_both_be_answered_and_can_be() -> None:
    agent = twin_questions_app("Stopped.")
    events = await agent.post(run_input(user("go")))
    one, two = interrupts(events)
    history = [user("go"), *history_from(events)]
    partial = await agent.resume(history, cancel(one))
    refused_before_the_run(partial, "RESUME_INCOMPLETE")
    full = await agent.resume(history, cancel(one), cancel(two), run="r3")
    assert outcome(full) == {"type": "success"}


async def test_every_interrupt_id_is_new_even_for_the_same_request_asked_again() -> None:
    request = InterruptRequestContent("q1", message="Continue?")
    agent = agui_server(scripted([request], [request]))
    (one,) = interrupts(await agent.post(run_input(user("go"))))
    (two,) = interrupts(await agent.post(run_input(user("go"), run="r2")))
    assert one["id"] != two["id"]


# -- 5. a refused resume opens with RUN_ERROR ---------------------------------------------------


async def test_a_refused_resume_is_a_stream_opening_with_run_error(tools: Tools) -> None:
    model = scripted(
        [
            FunctionCallContent("c1", "delete_file", {"path": "a.txt"}),
            FunctionCallContent("c2", "delete_file", {"path": "b.txt"}),
        ],
        "Done.",
    )
    agent = agui_server(model, tools=[tools.delete_file()])
    first = await agent.post(run_input(user("delete both")))
    one, two = interrupts(first)
    history = [user("delete both"), *history_from(first)]
    partial = await agent.resume(history, approve(one))
    refused_before_the_run(partial, "RESUME_INCOMPLETE")
    assert tools.count("delete_file") == 0
    # The refusal consumed nothing: the full answer then runs, in a run of its own.
    full = await agent.resume(history, approve(one), reject(two), run="r3")
    assert types(full)[0] == "RUN_STARTED"
    assert outcome(full) == {"type": "success"}
    assert tools.runs["delete_file"] == [{"path": "a.txt"}]


class Switch:
    """An ASGI app passing each request to whichever app it currently holds."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def old_shape(message: str, code: str) -> Any:
    """A server refusing every run the way this one used to: RUN_STARTED, then RUN_ERROR."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body, more = b"", True
        while more:
            part = await receive()
            body += part.get("body", b"")
            more = part.get("more_body", False)
        data = json.loads(body)
        events = [
            {"type": "RUN_STARTED", "threadId": data["threadId"], "runId": data["runId"]},
            {"type": "RUN_ERROR", "message": message, "code": code},
        ]
        sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": sse})

    return app


async def test_our_client_turns_a_refused_resume_into_the_same_run_error_as_before(
    tools: Tools,
) -> None:
    server = delete_app(tools, "Deleted it.")
    restarted = agui_server(  # another key: the approval is not one it issued
        scripted(), tools=[tools.delete_file()], signing_key="another-key-0123456789abcdef"
    )
    switch = Switch(server.app)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=switch), base_url=BASE_URL)

    async def outcomes(raise_on_run_error: bool) -> Any:
        async with AGUIChatClient(
            BASE_URL + "/",
            http_client=http,
            max_retries=0,
            raise_on_run_error=raise_on_run_error,
        ) as client:
            if raise_on_run_error:
                with pytest.raises(RunError) as caught:
                    await client.get_response(history)
                return type(caught.value), str(caught.value), caught.value.code
            response = await client.get_response(history)
            errors = [
                (c.message, c.error_code)
                for m in response.messages
                for c in m.contents
                if isinstance(c, ErrorContent)
            ]
            return errors, response.finish_reason

    async with http:
        async with AGUIChatClient(BASE_URL + "/", http_client=http, max_retries=0) as client:
            asked = [ChatMessage("user", "delete a.txt")]
            paused_response = await client.get_response(asked)
            (request,) = paused_response.input_requests
            assert isinstance(request, ToolApprovalRequestContent)
            answer = ChatMessage("user", [request.create_response(True)])
            history = [*asked, *paused_response.messages, answer]

        switch.app = restarted.app
        new_error = await outcomes(True)
        new_content = await outcomes(False)
        assert new_error[2] == "APPROVAL_KEY_CHANGED"
        message = new_error[1].removesuffix(" (code APPROVAL_KEY_CHANGED)")
        switch.app = old_shape(message, "APPROVAL_KEY_CHANGED")
        assert await outcomes(True) == new_error
        assert await outcomes(False) == new_content
        assert tools.count("delete_file") == 0

        switch.app = server.app  # the same answer, to the server that asked, runs once
        async with AGUIChatClient(BASE_URL + "/", http_client=http, max_retries=0) as client:
            final = await client.get_response(history)
    assert final.text == "Deleted it."
    assert tools.count("delete_file") == 1
