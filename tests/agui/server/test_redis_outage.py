"""A Redis outage during a resume (the real server stopped, then started again): the resume
is refused with ``APPROVAL_STORE_UNAVAILABLE``, nothing runs, nothing is lost, and the same
answer succeeds once Redis is back, running the tool once."""

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

    redis_server.stop()
    refused = refused_before_the_run(await agent.post(body), "APPROVAL_STORE_UNAVAILABLE")
    assert "send the same answer again" in refused["message"]
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
