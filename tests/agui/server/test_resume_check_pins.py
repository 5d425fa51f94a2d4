"""The resume check's refusals as the client reads them: for each thing a ``resume`` can get
wrong, the exact ``RUN_ERROR`` code and message (they name what is wrong and which entry),
and that nothing ran. Also the boundaries: the last second an expired interrupt may still be
cancelled, how many interrupts a partial resume leaves, and what a mixed pause accepts."""

from __future__ import annotations

import copy
import json
import logging
from datetime import timedelta
from typing import Any

import pytest
from server_support import (
    SIGNING_KEY,
    SideEffects,
    answer,
    approve,
    assistant_calls,
    cancel,
    interrupts,
    outcome,
    refused_before_the_run,
    reject,
    scripted,
    user,
)

from agui_chat import (
    FunctionCallContent,
    InterruptRequestContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat._exceptions import HumanInTheLoopError
from agui_chat.agui.server import _resume_check
from agui_chat.agui.server._signing import InterruptClaims, InterruptSigner, pause_digest
from agui_chat.stores import InMemoryApprovalStore
from agui_server import ServedAgent, agui_server
from fake_clock import FakeClock, on_the_server

START = 4_000_000_000.0  # far from the real time: a check reading the real clock shows
TTL = 2  # seconds an interrupt of these tests is answerable for
HOUR = 3600


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """One fake clock for issuing interrupts and checking resumes."""
    return on_the_server(monkeypatch, START)


def calls(*paths: str, prefix: str = "c") -> list[FunctionCallContent]:
    """Calls to delete each of ``paths``, with ids ``c1``, ``c2``... (or another prefix)."""
    return [
        FunctionCallContent(f"{prefix}{n}", "delete_file", {"path": p})
        for n, p in enumerate(paths, 1)
    ]


def delete_app(fx: SideEffects, *replies: Any, **settings: Any) -> ServedAgent:
    """A server whose model first asks to delete ``a.txt`` (an approval), then says
    ``replies``."""
    return agui_server(scripted(calls("a.txt"), *replies), tools=[fx.delete_file()], **settings)


def question_app(*replies: Any, **settings: Any) -> ServedAgent:
    """A server whose model asks the person a question itself (no tool call)."""
    model = scripted([InterruptRequestContent("q1", message="Continue?")], *replies)
    return agui_server(model, **settings)


async def paused(agent: ServedAgent, run: str = "r1") -> tuple[list[dict[str, Any]], list[Any]]:
    first = await agent.pause(user("go"), run=run)
    return first.history, first.interrupts


async def refusal(agent: ServedAgent, history: list[Any], *entries: Any, code: str) -> str:
    """Send ``entries`` as the resume; it must be refused before the run with ``code``.
    Returns the message the client reads."""
    events = await agent.resume(history, *entries, run="refused")
    message: str = refused_before_the_run(events, code)["message"]
    return message


# -- which entry, and what is wrong with its token ------------------------------------------


async def test_a_refusal_is_logged_with_its_code_and_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The operator's log line names the run, the code and the message of a refusal."""
    agent = delete_app(SideEffects())
    history, _ = await paused(agent)
    bogus = {"interruptId": "nope", "status": "resolved", "payload": {"approved": True}}
    with caplog.at_level(logging.WARNING, logger="agui_chat.server"):
        message = await refusal(agent, history, bogus, code="RESUME_UNKNOWN_INTERRUPT")
    assert message == "resume[0].interruptId names no interrupt this server issued"
    assert "refused the resume of run refused: RESUME_UNKNOWN_INTERRUPT: " + message in [
        r.getMessage() for r in caplog.records
    ]


async def test_a_token_of_another_audience_is_refused_naming_why() -> None:
    """Two servers sharing a key but not an audience: one cannot take the other's answer."""
    fx = SideEffects()
    asking = delete_app(fx, audience="agent-a")
    other = delete_app(fx, audience="agent-b")
    history, (interrupt,) = await paused(asking)
    message = await refusal(other, history, approve(interrupt), code="APPROVAL_AUDIENCE_MISMATCH")
    assert message == (
        "resume[0].interruptId was issued by another server (another audience) that shares "
        "this server's signing key; only the server that asked can take the answer"
    )
    assert fx.count("delete_file") == 0


async def test_a_token_of_an_earlier_key_is_refused_naming_the_entry_and_why() -> None:
    """The second entry's token was issued under a key the server no longer has: the
    refusal names ``resume[1]`` and tells the person to be asked again."""
    fx = SideEffects()
    store = InMemoryApprovalStore()
    model = scripted(calls("a.txt", "b.txt"), "Done.")
    agent = agui_server(model, tools=[fx.delete_file()], approval_store=store)
    history, (one, _) = await paused(agent)
    old = delete_app(fx, signing_key="an-older-signing-key-0123456789", approval_store=store)
    _, (stale_key,) = await paused(old, run="r0")
    message = await refusal(
        agent, history, approve(one), approve(stale_key), code="APPROVAL_KEY_CHANGED"
    )
    assert message == (
        "resume[1].interruptId was issued under another signing key (the server was restarted "
        "with a new key, or its key changed); ask the person again"
    )
    assert fx.count("delete_file") == 0


async def test_an_answer_for_a_tool_the_server_no_longer_runs_is_refused() -> None:
    """After a restart without the tool (same key and audience), its approval is refused."""
    fx = SideEffects()
    before = delete_app(fx, audience="ops")
    after = agui_server(scripted("unused"), tools=[fx.lookup()], audience="ops")
    history, (interrupt,) = await paused(before)
    message = await refusal(after, history, approve(interrupt), code="RESUME_UNKNOWN_TOOL")
    assert (
        message == "resume[0]: request 'approval_c1' is about a call to tool 'delete_file', "
        "which is not run here; nothing was run"
    )


# -- expiry and retention --------------------------------------------------------------------


async def test_an_expired_approval_is_refused_until_the_last_second_of_the_retention(
    clock: FakeClock,
) -> None:
    """A cancel one second before expiry + ANSWER_RETENTION is taken; at that exact second
    every answer, the same cancel too, is refused as stale."""
    fx = SideEffects()
    store = InMemoryApprovalStore(clock=clock)
    agent = delete_app(fx, "Kept it.", approval_ttl=timedelta(seconds=TTL), approval_store=store)
    history, (interrupt,) = await paused(agent)
    clock.now = START + TTL + HOUR - 1
    events = await agent.resume(history, cancel(interrupt))
    assert outcome(events) == {"type": "success"}
    clock.now = START + TTL + HOUR
    message = await refusal(agent, history, cancel(interrupt), code="APPROVAL_STALE")
    assert message == (
        "resume[0] answers an approval request that expired more than 1 hour(s) ago; it can "
        "no longer be answered, not even cancelled"
    )
    assert fx.count("delete_file") == 0


async def test_a_question_past_its_retention_is_refused_as_a_stale_question(
    clock: FakeClock,
) -> None:
    agent = question_app("unused", approval_ttl=timedelta(seconds=TTL))
    history, (question,) = await paused(agent)
    clock.now = START + TTL + HOUR
    message = await refusal(agent, history, cancel(question), code="INTERRUPT_STALE")
    assert message == (
        "resume[0] answers a question that expired more than 1 hour(s) ago; it can no "
        "longer be answered, not even cancelled"
    )


async def test_the_stale_message_names_a_retention_of_minutes_in_minutes(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were the retention changed to 90 minutes, the boundary and the message would follow."""
    monkeypatch.setattr(_resume_check, "ANSWER_RETENTION", timedelta(minutes=90))
    fx = SideEffects()
    agent = delete_app(fx, approval_ttl=timedelta(seconds=TTL))
    history, (interrupt,) = await paused(agent)
    clock.now = START + TTL + 90 * 60
    message = await refusal(agent, history, reject(interrupt), code="APPROVAL_STALE")
    assert message == (
        "resume[0] answers an approval request that expired more than 90 minute(s) ago; it "
        "can no longer be answered, not even cancelled"
    )


async def test_an_expired_approval_cannot_be_approved(clock: FakeClock) -> None:
    """Expiry is read on the server's clock: past it, an approval is refused (a rejection
    is still taken)."""
    fx = SideEffects()
    agent = delete_app(fx, "Kept it.", approval_ttl=timedelta(seconds=TTL))
    history, (interrupt,) = await paused(agent)
    clock.now = START + TTL
    message = await refusal(agent, history, approve(interrupt), code="APPROVAL_EXPIRED")
    assert message == "resume[0]: approval request 'approval_c1' expired; it can only be rejected"
    events = await agent.resume(history, reject(interrupt), run="r3")
    assert outcome(events) == {"type": "success"}
    assert fx.count("delete_file") == 0


async def test_an_expired_question_can_only_be_cancelled(clock: FakeClock) -> None:
    agent = question_app("unused", approval_ttl=timedelta(seconds=TTL))
    history, (question,) = await paused(agent)
    clock.now = START + TTL
    message = await refusal(agent, history, answer(question, "yes"), code="INTERRUPT_EXPIRED")
    assert message.startswith("resume[0]: question 'input_")
    assert message.endswith(" expired; it can only be cancelled")


# -- payloads --------------------------------------------------------------------------------


async def test_edited_arguments_with_a_rejection_are_refused() -> None:
    fx = SideEffects()
    agent = delete_app(fx)
    history, (interrupt,) = await paused(agent)
    entry = reject(interrupt)
    entry["payload"]["editedArgs"] = {"path": "b.txt"}
    message = await refusal(agent, history, entry, code="RESUME_INVALID_PAYLOAD")
    assert message == "resume[0].payload.editedArgs only go with approved: true"
    assert fx.count("delete_file") == 0


async def test_a_payload_failing_the_question_schema_lists_its_errors_within_300_chars() -> None:
    fields = [f"field_number_{i}" for i in range(8)]
    schema = {
        "type": "object",
        "properties": {f: {"type": "integer"} for f in fields},
        "required": fields,
    }
    model = scripted([InterruptRequestContent("q1", message="Fill in", response_schema=schema)])
    agent = agui_server(model)
    history, (question,) = await paused(agent)
    message = await refusal(agent, history, answer(question, {}), code="RESUME_INVALID_PAYLOAD")
    errors = [f"(root): '{f}' is a required property" for f in fields[:6]]
    detail = "; ".join(errors) + "; (root)"  # cut at 300 characters
    assert len(detail) == 300
    assert message.startswith("resume[0]: answer to 'input__")
    assert message.endswith(f" does not match its response schema: {detail}")


async def test_the_same_interrupt_answered_twice_is_refused_as_a_duplicate() -> None:
    fx = SideEffects()
    agent = delete_app(fx)
    history, (interrupt,) = await paused(agent)
    message = await refusal(
        agent, history, approve(interrupt), approve(interrupt), code="RESUME_DUPLICATE_ANSWER"
    )
    assert message == (
        "resume[0], resume[1]: request 'approval_c1' answered more than once; answer each "
        "request exactly once"
    )
    assert fx.count("delete_file") == 0


# -- coverage of the pause -------------------------------------------------------------------


async def test_a_partial_resume_counts_every_interrupt_it_leaves_across_pauses() -> None:
    """One of a pause of three and one of a pause of two: three are left unanswered."""
    fx = SideEffects()
    model = scripted(calls("a", "b", "c"), calls("d", "e", prefix="d"))
    agent = agui_server(model, tools=[fx.delete_file()])
    history, (first, *_) = await paused(agent)
    _, (second, _) = await paused(agent, run="r0")
    message = await refusal(
        agent, history, approve(first), approve(second), code="RESUME_INCOMPLETE"
    )
    assert message == (
        "the resume leaves 3 interrupt(s) of the paused run unanswered; answer every "
        "interrupt in one go"
    )
    only_one = await refusal(agent, history, approve(second), code="RESUME_INCOMPLETE")
    assert only_one.startswith("the resume leaves 1 interrupt(s) ")
    assert fx.count("delete_file") == 0


async def test_answers_as_many_as_a_pause_but_not_its_interrupts_are_refused() -> None:
    """Tokens (validly signed) naming a pause of c1 and c2 but answering c1 and c3."""
    fx = SideEffects()
    agent = delete_app(fx, audience="ops")
    signer = InterruptSigner(SIGNING_KEY, audience="ops")
    digest = pause_digest([("c1", None), ("c2", None)])

    def token(call_id: str) -> dict[str, Any]:
        claims = InterruptClaims(
            "approval", "t1", call_id, "delete_file", {"path": call_id}, pause=digest, pause_size=2
        )
        return {"id": signer.sign(claims)}

    message = await refusal(
        agent, [user("go")], approve(token("c1")), approve(token("c3")), code="RESUME_INCOMPLETE"
    )
    assert message.startswith("the resume leaves 1 interrupt(s) of the paused run unanswered")
    assert fx.count("delete_file") == 0


# -- ambiguity and the pairing the tool loop does -------------------------------------------


def mixed_app(fx: SideEffects, *replies: Any) -> ServedAgent:
    """A model asking, in one turn, to delete a file (an approval) and a question of its own."""
    model = scripted([*calls("a.txt"), InterruptRequestContent("q1", message="Sure?")], *replies)
    return agui_server(model, tools=[fx.delete_file()])


async def test_an_ambiguous_call_id_after_a_question_of_the_model_is_refused_naming_it() -> None:
    fx = SideEffects()
    agent = mixed_app(fx)
    history, (approval, question) = await paused(agent)
    ambiguous = [*copy.deepcopy(history), assistant_calls(("c1", "delete_file", {"path": "/"}))]
    message = await refusal(
        agent, ambiguous, answer(question, True), approve(approval), code="RESUME_INVALID_PAYLOAD"
    )
    assert message == (
        "resume[1]: tool call id 'c1' is used by more than one call or request, so the "
        "answers to request 'approval_c1' are ambiguous; nothing was run (each tool call "
        "needs its own id)"
    )
    assert fx.count("delete_file") == 0


async def test_an_approval_and_a_question_for_one_call_are_refused_naming_the_call() -> None:
    ran: list[str] = []

    @approval_required
    @ai_function
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        ran.append(request_input(f"Really wipe {disk}?", key="sure").status)
        return "wiped"

    model = scripted([FunctionCallContent("c1", "wipe", {"disk": "sda"})], "unused")
    agent = agui_server(model, tools=[wipe])
    history, (approval,) = await paused(agent)
    asked = await agent.resume(history, approve(approval))
    (question,) = interrupts(asked)
    message = await refusal(
        agent, history, approve(approval), answer(question, True), code="RESUME_INVALID_PAYLOAD"
    )
    assert message == (
        "the resume answers both an approval and a question for tool call 'c1'; answer the "
        "interrupts of the latest pause only"
    )
    assert ran == []


async def test_an_approval_and_a_question_of_two_calls_in_one_pause_both_run() -> None:
    fx = SideEffects()

    @ai_function
    def ask(topic: str) -> str:
        """Ask the person about a topic."""
        reply = request_input(f"About {topic}?", key="k")
        fx.record("ask", status=reply.status, payload=reply.payload)
        return "asked"

    model = scripted([*calls("a.txt"), FunctionCallContent("c2", "ask", {"topic": "x"})], "Done.")
    agent = agui_server(model, tools=[fx.delete_file(), ask])
    history, (approval, question) = await paused(agent)
    resume = [approve(approval), answer(question, "yes")]
    events = await agent.resume(history, *resume)
    assert outcome(events) == {"type": "success"}
    assert fx.runs == {
        "delete_file": [{"path": "a.txt"}],
        "ask": [{"status": "resolved", "payload": "yes"}],
    }


async def test_a_re_sent_call_that_differs_from_the_approved_one_is_refused() -> None:
    fx = SideEffects()
    agent = delete_app(fx)
    history, (interrupt,) = await paused(agent)
    altered = copy.deepcopy(history)
    call = next(m for m in altered if m.get("toolCalls"))["toolCalls"][0]
    call["function"]["arguments"] = json.dumps({"path": "/etc/passwd"})
    message = await refusal(agent, altered, approve(interrupt), code="APPROVAL_CALL_MISMATCH")
    assert message == (
        "resume[0]: the history's tool call 'c1' differs from the call that was approved"
    )
    assert fx.count("delete_file") == 0


async def test_an_edit_the_restarted_tool_no_longer_offers_is_refused_before_the_claim() -> None:
    """The token offered editing; the tool, after a restart, does not: the consent engine
    refuses it before the claim, the tool's own word winning over the token's."""
    fx = SideEffects()
    store = InMemoryApprovalStore()
    before = delete_app(fx, audience="ops", approval_store=store)
    after = agui_server(
        scripted("Deleted."),
        tools=[fx.delete_file(allow_edits=False)],
        approval_store=store,
        audience="ops",
    )
    history, (interrupt,) = await paused(before)
    edit = approve(interrupt, editedArgs={"path": "b.txt"})
    message = await refusal(after, history, edit, code="APPROVAL_EDIT_NOT_ALLOWED")
    assert message == (
        "resume[0]: approval request 'approval_c1' does not allow editing the arguments"
    )
    events = await after.resume(history, approve(interrupt), run="r3")
    assert outcome(events) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "a.txt"}]


async def test_a_refusal_of_the_tool_loop_without_a_code_of_its_own_is_an_invalid_payload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A human-in-the-loop refusal the server has no row for still refuses before the
    claim, as ``RESUME_INVALID_PAYLOAD``: the same answer is taken once planning accepts it."""

    class NewRefusal(HumanInTheLoopError):
        pass

    def refusing(*args: Any, **kwargs: Any) -> Any:
        raise NewRefusal("internal detail")

    fx = SideEffects()
    agent = delete_app(fx, "Deleted.")
    history, (interrupt,) = await paused(agent)
    with monkeypatch.context() as patched:
        patched.setattr(_resume_check, "check", refusing)
        message = await refusal(agent, history, approve(interrupt), code="RESUME_INVALID_PAYLOAD")
    assert message == "The resume carries an invalid answer."
    events = await agent.resume(history, approve(interrupt), run="r3")
    assert outcome(events) == {"type": "success"}
    assert fx.runs["delete_file"] == [{"path": "a.txt"}]
