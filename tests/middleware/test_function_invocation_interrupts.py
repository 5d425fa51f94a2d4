"""FunctionInvokingChatClient: questions a tool asks with request_input, streaming and not."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from loop_support import Ask, call, describe, results_for, resume, scripted, seen

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ExpiredRequestError,
    FunctionInvokingChatClient,
    InterruptRequestContent,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    UnansweredRequestError,
    UnknownResponseError,
    ai_function,
    approval_required,
    request_input,
)

BUILD_SCHEMA = {
    "type": "object",
    "properties": {"build": {"type": "integer", "minimum": 1}},
    "required": ["build"],
}
PAST = datetime.now(timezone.utc) - timedelta(minutes=5)


class Deployer:
    """A ``deploy`` tool that asks which build to deploy, recording every invocation."""

    def __init__(self, *, expires_at: datetime | None = None) -> None:
        self.invocations: list[dict[str, Any]] = []
        self.deployed: list[tuple[str, int]] = []

        @ai_function
        def deploy(env: str) -> str:
            """Deploy to an environment."""
            self.invocations.append({"env": env})
            answer = request_input(
                f"Which build goes to {env}?",
                response_schema=BUILD_SCHEMA,
                reason="build_choice",
                expires_at=expires_at,
                key="build",
            )
            if answer.cancelled:
                return f"deployment to {env} cancelled"
            self.deployed.append((env, answer.payload["build"]))
            return f"deployed build {answer.payload['build']} to {env}"

        self.tool = deploy
        self.options = ChatOptions(tools=[deploy])


def _questions(response: ChatResponse) -> list[InterruptRequestContent]:
    out = []
    for r in response.input_requests:
        assert isinstance(r, InterruptRequestContent)
        out.append(r)
    return out


async def _pause(
    ask: Ask, options: ChatOptions, *replies: Any
) -> tuple[Any, FunctionInvokingChatClient, list[ChatMessage], ChatResponse]:
    model = scripted(*replies)
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "ship it")]
    response = await ask(client, history, options)
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    return model, client, history, response


async def test_a_question_pauses_the_run_with_an_interrupt_for_the_call(ask: Ask) -> None:
    deployer = Deployer()
    model, _, _, paused = await _pause(ask, deployer.options, [call("c1", "deploy", env="prod")])

    [question] = _questions(paused)
    assert question.tool_call_id == "c1"
    assert question.message == "Which build goes to prod?"
    assert question.reason == "build_choice"
    assert question.response_schema == BUILD_SCHEMA
    assert question.key == "build"
    assert len(model.calls) == 1
    assert deployer.invocations == [{"env": "prod"}]
    assert deployer.deployed == []
    assert results_for(paused.messages, "c1") == []


async def test_the_answer_reruns_the_tool_with_the_same_arguments(ask: Ask) -> None:
    deployer = Deployer()
    model, client, history, paused = await _pause(
        ask, deployer.options, [call("c1", "deploy", env="prod")], "Deployed."
    )
    [question] = _questions(paused)
    final = await ask(
        client, resume(history, paused, question.create_response({"build": 42})), deployer.options
    )

    assert deployer.invocations == [{"env": "prod"}, {"env": "prod"}]
    assert deployer.deployed == [("prod", 42)]
    assert seen(model) == [
        "user: ship it",
        'assistant: call c1 deploy {"env": "prod"}',
        "tool: result c1 deployed build 42 to prod",
    ]
    assert describe(final.messages) == [
        "tool: result c1 deployed build 42 to prod",
        "assistant: Deployed.",
    ]
    assert final.finish_reason == ChatFinishReason.STOP


async def test_a_cancelled_question_takes_the_other_branch_and_the_run_finishes(ask: Ask) -> None:
    deployer = Deployer()
    model, client, history, paused = await _pause(
        ask, deployer.options, [call("c1", "deploy", env="prod")], "Nothing deployed."
    )
    [question] = _questions(paused)
    final = await ask(client, resume(history, paused, question.cancel()), deployer.options)

    assert deployer.deployed == []
    assert len(deployer.invocations) == 2
    assert results_for(model.calls[-1][0], "c1") == ["deployment to prod cancelled"]
    assert final.text == "Nothing deployed."
    assert final.finish_reason == ChatFinishReason.STOP


async def test_a_tool_may_ask_two_questions_in_turn_and_keeps_the_first_answer(ask: Ask) -> None:
    asked: list[str] = []
    finished: list[tuple[Any, Any]] = []

    @ai_function
    def book(city: str) -> str:
        """Book a trip."""
        date = request_input("Which date?", key="date")
        asked.append("date")
        seat = request_input("Which seat?", key="seat")
        asked.append("seat")
        finished.append((date.payload, seat.payload))
        return f"{city} on {date.payload}, seat {seat.payload}"

    options = ChatOptions(tools=[book])
    model, client, history, first_pause = await _pause(
        ask, options, [call("c1", "book", city="Rome")], "Booked."
    )
    [date_question] = _questions(first_pause)
    assert date_question.key == "date"

    history = resume(history, first_pause, date_question.create_response("May 1"))
    second_pause = await ask(client, history, options)
    assert second_pause.finish_reason == ChatFinishReason.INPUT_REQUIRED
    [seat_question] = _questions(second_pause)
    assert seat_question.key == "seat"
    assert seat_question.request_id != date_question.request_id
    assert seat_question.tool_call_id == "c1"
    assert len(model.calls) == 1

    history = resume(history, second_pause, seat_question.create_response("12A"))
    final = await ask(client, history, options)

    assert finished == [("May 1", "12A")]
    assert results_for(model.calls[-1][0], "c1") == ["Rome on May 1, seat 12A"]
    assert final.text == "Booked."
    assert len(model.calls) == 2


async def test_questions_from_several_calls_of_a_batch_come_in_one_pause(ask: Ask) -> None:
    deployer = Deployer()
    model, client, history, paused = await _pause(
        ask,
        deployer.options,
        [call("c1", "deploy", env="staging"), call("c2", "deploy", env="prod")],
        "Both deployed.",
    )
    questions = _questions(paused)
    assert [q.tool_call_id for q in questions] == ["c1", "c2"]
    assert len({id(m) for m in paused.messages for c in m.contents if c in questions}) == 1

    answers = [
        questions[1].create_response({"build": 8}),
        questions[0].create_response({"build": 7}),
    ]
    await ask(client, resume(history, paused, *answers), deployer.options)

    assert sorted(deployer.deployed) == [("prod", 8), ("staging", 7)]
    assert seen(model)[-1] == (
        "tool: result c1 deployed build 7 to staging | result c2 deployed build 8 to prod"
    )


async def test_a_partial_answer_to_several_questions_is_refused(ask: Ask) -> None:
    deployer = Deployer()
    model, client, history, paused = await _pause(
        ask,
        deployer.options,
        [call("c1", "deploy", env="staging"), call("c2", "deploy", env="prod")],
    )
    first, second = _questions(paused)
    with pytest.raises(UnansweredRequestError) as info:
        await ask(
            client, resume(history, paused, first.create_response({"build": 7})), deployer.options
        )
    assert info.value.request_ids == (second.request_id,)
    assert deployer.deployed == []
    assert len(deployer.invocations) == 2
    assert len(model.calls) == 1


async def test_a_payload_failing_the_schema_is_refused_before_anything_runs(ask: Ask) -> None:
    deployer = Deployer()
    model, client, history, paused = await _pause(
        ask, deployer.options, [call("c1", "deploy", env="prod")]
    )
    [question] = _questions(paused)
    with pytest.raises(InvalidResponseError, match="build"):
        question.create_response({"build": 0})

    bad = InterruptResponseContent(question.request_id, {"build": "latest"})
    with pytest.raises(InvalidResponseError, match="'latest' is not of type 'integer'") as info:
        await ask(client, resume(history, paused, bad), deployer.options)
    assert info.value.request_ids == (question.request_id,)
    assert len(deployer.invocations) == 1
    assert deployer.deployed == []
    assert len(model.calls) == 1


async def test_an_expired_question_can_only_be_cancelled(ask: Ask) -> None:
    deployer = Deployer(expires_at=PAST)
    model, client, history, paused = await _pause(
        ask, deployer.options, [call("c1", "deploy", env="prod")], "Cancelled."
    )
    [question] = _questions(paused)
    with pytest.raises(ExpiredRequestError):
        question.create_response({"build": 3})
    late = InterruptResponseContent(question.request_id, {"build": 3})
    with pytest.raises(ExpiredRequestError, match=question.request_id):
        await ask(client, resume(history, paused, late), deployer.options)
    assert len(deployer.invocations) == 1

    final = await ask(client, resume(history, paused, question.cancel()), deployer.options)
    assert deployer.deployed == []
    assert results_for(model.calls[-1][0], "c1") == ["deployment to prod cancelled"]
    assert final.text == "Cancelled."


async def test_a_question_left_unanswered_is_an_error_naming_it(ask: Ask) -> None:
    deployer = Deployer()
    model, client, history, paused = await _pause(
        ask, deployer.options, [call("c1", "deploy", env="prod")]
    )
    [question] = _questions(paused)
    with pytest.raises(UnansweredRequestError, match=question.request_id):
        await ask(
            client, [*history, *paused.messages, ChatMessage("user", "hm?")], deployer.options
        )
    assert len(deployer.invocations) == 1
    assert len(model.calls) == 1


async def test_an_answer_to_no_question_runs_nothing(ask: Ask) -> None:
    deployer = Deployer()
    model = scripted("unreachable")
    history = [ChatMessage("user", "hi"), ChatMessage("user", [InterruptResponseContent("q9", 1)])]
    with pytest.raises(UnknownResponseError, match="q9"):
        await ask(FunctionInvokingChatClient(model), history, deployer.options)
    assert deployer.invocations == []
    assert model.calls == []


async def test_a_paused_question_stored_as_json_resumes_correctly(ask: Ask) -> None:
    deployer = Deployer()
    model, _, history, paused = await _pause(
        ask, deployer.options, [call("c1", "deploy", env="prod")], "Deployed."
    )
    stored = json.dumps([m.to_dict() for m in [*history, *paused.messages]])
    loaded = [ChatMessage.from_dict(d) for d in json.loads(stored)]
    [question] = [c for m in loaded for c in m.contents if isinstance(c, InterruptRequestContent)]
    with pytest.raises(InvalidResponseError):
        question.create_response({"build": -1})
    loaded.append(ChatMessage("user", [question.create_response({"build": 5})]))

    final = await ask(FunctionInvokingChatClient(model), loaded, deployer.options)
    assert deployer.deployed == [("prod", 5)]
    assert final.text == "Deployed."


async def test_an_approved_tool_that_asks_a_question_runs_to_completion_once(ask: Ask) -> None:
    deleted: list[str] = []

    @approval_required
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        answer = request_input(f"Type the name of {disk} to confirm", key="confirm")
        if answer.cancelled or answer.payload != disk:
            return "not wiped"
        deleted.append(disk)
        return f"wiped {disk}"

    options = ChatOptions(tools=[wipe])
    model, client, history, approval_pause = await _pause(
        ask, options, [call("c1", "wipe", disk="sdb")], "Wiped."
    )
    [approval] = approval_pause.input_requests
    history = resume(history, approval_pause, approval.create_response(True))  # type: ignore[attr-defined]
    question_pause = await ask(client, history, options)
    assert question_pause.finish_reason == ChatFinishReason.INPUT_REQUIRED
    [question] = _questions(question_pause)
    assert deleted == []

    history = resume(history, question_pause, question.create_response("sdb"))
    final = await ask(client, history, options)
    assert deleted == ["sdb"]
    assert results_for(model.calls[-1][0], "c1") == ["wiped sdb"]
    assert final.text == "Wiped."


async def test_replaying_an_answered_question_never_runs_the_tool_again(ask: Ask) -> None:
    deployer = Deployer()
    model, client, history, paused = await _pause(
        ask, deployer.options, [call("c1", "deploy", env="prod")], "Deployed.", "Anything else?"
    )
    [question] = _questions(paused)
    answered = resume(history, paused, question.create_response({"build": 42}))
    final = await ask(client, answered, deployer.options)
    assert deployer.deployed == [("prod", 42)]

    await ask(client, [*answered, *final.messages, ChatMessage("user", "thanks")], deployer.options)
    assert deployer.deployed == [("prod", 42)]
    assert len(deployer.invocations) == 2
    assert seen(model).count("tool: result c1 deployed build 42 to prod") == 1


async def test_an_approval_and_a_question_of_one_batch_pause_together(ask: Ask) -> None:
    deployer = Deployer()
    deleted: list[str] = []

    @approval_required
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    options = ChatOptions(tools=[deployer.tool, delete_file])
    model, client, history, paused = await _pause(
        ask,
        options,
        [call("c1", "deploy", env="prod"), call("c2", "delete_file", path="/tmp/old")],
        "All done.",
    )
    assert len(paused.input_requests) == 2
    approval, question = sorted(paused.input_requests, key=lambda r: type(r).__name__, reverse=True)
    assert isinstance(approval, ToolApprovalRequestContent)
    assert isinstance(question, InterruptRequestContent)

    with pytest.raises(UnansweredRequestError, match=question.request_id):
        await ask(client, resume(history, paused, approval.create_response(True)), options)
    assert deleted == []

    answers = [approval.create_response(True), question.create_response({"build": 3})]
    final = await ask(client, resume(history, paused, *answers), options)
    assert deleted == ["/tmp/old"]
    assert deployer.deployed == [("prod", 3)]
    assert final.text == "All done."
    assert len(model.calls) == 2
