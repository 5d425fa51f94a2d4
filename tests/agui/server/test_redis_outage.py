"""A Redis outage during a resume (the real server stopped, then started again with its
data): the resume is refused with ``APPROVAL_STORE_UNAVAILABLE`` and a wait, nothing runs,
nothing is lost, and the same answer succeeds once Redis is back, running the tool once. A
Redis that comes back *without* its data (no persistence) has a new epoch: every answer
issued before is refused with ``APPROVAL_STORE_RESET`` (ask again), so no used approval
runs again."""

from __future__ import annotations

from server_support import (
    approve,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    run_input,
    scripted,
    user,
)

from agui_chat import FunctionCallContent
from agui_chat.stores import RedisApprovalStore
from agui_server import agui_server
from agui_streams import SideEffects
from redis_server import RedisServer


async def test_a_resume_during_a_redis_outage_runs_nothing_and_succeeds_once_redis_is_back(
    redis_server: RedisServer,
) -> None:
    effects = SideEffects()
    store = RedisApprovalStore(redis_server.url, timeout=1.0)
    agent = agui_server(
        scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted."),
        tools=[effects.delete_file()],
        approval_store=store,
    )
    first = await agent.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    history = [user("delete a.txt"), *history_from(first)]
    body = run_input(*history, run="r2", resume=[approve(interrupt)])

    redis_server.stop(keep_data=True)
    refused = refused_before_the_run(await agent.post(body), "APPROVAL_STORE_UNAVAILABLE")
    assert "send the same answer again" in refused["message"]
    assert refused["retryAfter"] == 2
    assert effects.count("delete_file") == 0

    redis_server.start()
    resumed = await agent.post({**body, "runId": "r3"})
    assert outcome(resumed) == {"type": "success"}
    assert effects.runs["delete_file"] == [{"path": "a.txt"}]
    replayed = await agent.post({**body, "runId": "r4"})
    assert effects.count("delete_file") == 1
    assert [e["content"] for e in replayed if e["type"] == "TOOL_CALL_RESULT"] == ["deleted a.txt"]
    await store.aclose()


async def test_an_unreachable_redis_url_is_named_without_its_password() -> None:
    from agui_chat import ApprovalStoreUnavailableError

    store = RedisApprovalStore("redis://:s3cret@127.0.0.1:1/0", timeout=0.5)
    try:
        await store.claim("k", expires_at=None)
    except ApprovalStoreUnavailableError as exc:
        assert "redis://:***@127.0.0.1:1/0" in str(exc)
        assert "s3cret" not in str(exc)
    else:  # pragma: no cover
        raise AssertionError("claiming on a closed port succeeded")
    await store.aclose()


async def test_used_approvals_never_run_again_after_redis_comes_back_empty(
    redis_server: RedisServer,
) -> None:
    """The chaos run's case: five approvals used, Redis restarted without persistence, the
    same five answers sent again: none runs again (before: 5 of 5 did); each is refused as
    a store reset (ask again), and a new question asked after the restart runs once."""
    effects = SideEffects()
    store = RedisApprovalStore(redis_server.url, timeout=1.0)
    calls = [FunctionCallContent(f"c{i}", "delete_file", {"path": f"{i}.txt"}) for i in range(6)]
    replies: list[object] = []
    for call in calls:
        replies += [[call], "Deleted."]
    agent = agui_server(scripted(*replies), tools=[effects.delete_file()], approval_store=store)
    used = []
    for i in range(5):
        first = await agent.post(run_input(user("delete"), thread=f"t{i}", run=f"a{i}"))
        (interrupt,) = interrupts(first)
        body = run_input(
            user("delete"),
            *history_from(first),
            thread=f"t{i}",
            run=f"b{i}",
            resume=[approve(interrupt)],
        )
        assert outcome(await agent.post(body)) == {"type": "success"}
        used.append(body)
    assert effects.count("delete_file") == 5

    redis_server.stop()  # no persistence: it comes back empty
    redis_server.start()
    for i, body in enumerate(used):
        again = await agent.post({**body, "runId": f"c{i}"})
        refused = refused_before_the_run(again, "APPROVAL_STORE_RESET")
        assert "ask the person again" in refused["message"]
        assert "retryAfter" not in refused
    assert effects.count("delete_file") == 5

    # An approval asked after the restart carries the new epoch and runs once.
    fresh = await agent.post(run_input(user("delete"), thread="t9", run="d1"))
    (interrupt,) = interrupts(fresh)
    body = run_input(
        user("delete"), *history_from(fresh), thread="t9", run="d2", resume=[approve(interrupt)]
    )
    assert outcome(await agent.post(body)) == {"type": "success"}
    assert effects.count("delete_file") == 6
    await store.aclose()
