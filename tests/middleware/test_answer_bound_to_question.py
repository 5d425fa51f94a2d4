"""An answer is bound to the question it answers (issue 24 item 4).

``request_input`` returns an answer only to the very question the person saw: the same key,
message and response schema (the schema compared canonically). A tool that, on the resumed
call, asks something else under the same key — another message, another schema — pauses
again with the new question; the old answer is never handed to it, and what the tool does
after the answer does not happen.
"""

from __future__ import annotations

from typing import Any

import pytest
from loop_support import Ask, call, results_for, resume, scripted

import agui_chat
from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionInvokingChatClient,
    InterruptRequestContent,
    InterruptResponseContent,
    ai_function,
    request_input,
)
from agui_chat.testing import ScriptedChatClient

YES_NO = {"type": "boolean"}
BUILD = {"type": "object", "properties": {"build": {"type": "integer"}}, "required": ["build"]}
#: BUILD with its keys in another order: the same schema.
BUILD_REORDERED = {
    "required": ["build"],
    "properties": {"build": {"type": "integer"}},
    "type": "object",
}
CHOICE = {"type": "string", "enum": ["yes", "no"]}


class Deployer:
    """A ``deploy`` tool whose question may change between its invocations: invocation
    ``n`` asks ``questions[n]`` (the last one once they run out), always under the key
    ``"go"``. ``deployed`` is its side effect: what it did after getting an answer."""

    def __init__(self, *questions: tuple[str, dict[str, Any] | None]) -> None:
        self.questions = list(questions)
        self.asked: list[str] = []
        self.deployed: list[tuple[str, Any]] = []

        @ai_function
        def deploy(env: str) -> str:
            """Deploy to an environment."""
            message, schema = self.questions[min(len(self.asked), len(self.questions) - 1)]
            self.asked.append(message)
            answer = request_input(message, response_schema=schema, key="go")
            self.deployed.append((message, answer.payload))
            return f"deployed to {env} after {message!r}: {answer.payload!r}"

        self.options = ChatOptions(tools=[deploy])


async def _paused(
    ask: Ask, tools: Deployer, *replies: Any
) -> tuple[ScriptedChatClient, FunctionInvokingChatClient, list[ChatMessage], ChatResponse]:
    model = scripted([call("c1", "deploy", env="prod")], *replies)
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "ship it")]
    paused = await ask(client, history, tools.options)
    assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
    return model, client, history, paused


def _question(response: ChatResponse) -> InterruptRequestContent:
    [question] = response.input_requests
    assert isinstance(question, InterruptRequestContent)
    return question


async def test_another_message_under_the_same_key_is_asked_again(ask: Ask) -> None:
    tools = Deployer(("Deploy build 7 to staging?", YES_NO), ("Deploy build 7 to prod?", YES_NO))
    model, client, history, paused = await _paused(ask, tools, "Deployed.")
    first = _question(paused)
    assert first.message == "Deploy build 7 to staging?"

    history = resume(history, paused, first.create_response(True))
    again = await ask(client, history, tools.options)

    # The resumed call asked about prod: a new pause with that question, nothing deployed,
    # and the model was not called (the answer about staging reached nobody).
    assert again.finish_reason == ChatFinishReason.INPUT_REQUIRED
    second = _question(again)
    assert (second.message, second.response_schema, second.key) == (
        "Deploy build 7 to prod?",
        YES_NO,
        "go",
    )
    assert second.request_id != first.request_id
    assert tools.deployed == []
    assert len(model.calls) == 1

    # Answering the question it asks now runs the side effect once, with that answer.
    done = await ask(client, resume(history, again, second.create_response(False)), tools.options)
    assert done.text == "Deployed."
    assert tools.deployed == [("Deploy build 7 to prod?", False)]
    assert results_for(model.calls[-1][0], "c1") == [
        "deployed to prod after 'Deploy build 7 to prod?': False"
    ]


async def test_the_same_message_with_another_schema_is_asked_again(ask: Ask) -> None:
    tools = Deployer(("Go ahead?", YES_NO), ("Go ahead?", CHOICE))
    model, client, history, paused = await _paused(ask, tools, "ok")
    first = _question(paused)

    again = await ask(client, resume(history, paused, first.create_response(True)), tools.options)

    second = _question(again)
    assert (second.message, second.response_schema) == ("Go ahead?", CHOICE)
    assert tools.deployed == []
    assert len(model.calls) == 1


async def test_a_question_that_loses_its_schema_is_asked_again(ask: Ask) -> None:
    """An answer checked against a schema is not handed to the same words without one."""
    tools = Deployer(("Which build?", BUILD), ("Which build?", None))
    model, client, history, paused = await _paused(ask, tools, "ok")
    first = _question(paused)

    answered = resume(history, paused, first.create_response({"build": 7}))
    again = await ask(client, answered, tools.options)

    assert _question(again).response_schema is None
    assert tools.deployed == []
    assert len(model.calls) == 1


async def test_a_cancelled_answer_is_bound_too(ask: Ask) -> None:
    """Declining one question is not declining another: the tool's other branch is not
    taken for a question the person never saw."""
    tools = Deployer(("Deploy to staging?", YES_NO), ("Deploy to prod?", YES_NO))
    model, client, history, paused = await _paused(ask, tools, "ok")

    again = await ask(client, resume(history, paused, _question(paused).cancel()), tools.options)

    assert _question(again).message == "Deploy to prod?"
    assert tools.deployed == []
    assert len(model.calls) == 1


async def test_the_same_question_gets_its_answer_once(ask: Ask) -> None:
    """The schema is compared canonically: its keys in another order are the same question."""
    tools = Deployer(("Which build?", BUILD), ("Which build?", BUILD_REORDERED))
    model, client, history, paused = await _paused(ask, tools, "Shipped.")

    done = await ask(
        client,
        resume(history, paused, _question(paused).create_response({"build": 7})),
        tools.options,
    )

    assert done.finish_reason != ChatFinishReason.INPUT_REQUIRED
    assert done.text == "Shipped."
    assert results_for(model.calls[-1][0], "c1") == [
        "deployed to prod after 'Which build?': {'build': 7}"
    ]
    assert tools.deployed == [("Which build?", {"build": 7})]
    assert tools.asked == ["Which build?", "Which build?"]


@pytest.mark.parametrize(
    "changed",
    [
        {"message": "Deploy build 8?"},
        {"response_schema": CHOICE},
        {"key": "other"},
    ],
    ids=["message", "schema", "key"],
)
async def test_an_answer_to_an_edited_copy_of_the_question_reaches_no_tool(
    ask: Ask, changed: dict[str, Any]
) -> None:
    """The answer goes to the question as the history holds it: a caller that rewrites the
    question it answers (another message, schema or key, same request id) answers a
    question the tool did not ask, so the tool asks its own again."""
    tools = Deployer(("Deploy build 7?", YES_NO))
    model, client, history, paused = await _paused(ask, tools, "ok")
    asked = _question(paused)
    fields = {
        "message": asked.message,
        "response_schema": asked.response_schema,
        "key": asked.key,
        **changed,
    }
    edited = InterruptRequestContent(
        asked.request_id, reason=asked.reason, tool_call_id=asked.tool_call_id, **fields
    )
    reply = "yes" if "response_schema" in changed else True
    transcript = [m.clone() for m in paused.messages]
    for m in transcript:
        m.contents = [edited if isinstance(c, InterruptRequestContent) else c for c in m.contents]
    history = [*history, *transcript, ChatMessage("user", [edited.create_response(reply)])]

    again = await ask(client, history, tools.options)

    assert _question(again).message == "Deploy build 7?"
    assert tools.deployed == []
    assert len(model.calls) == 1


async def test_the_answer_is_the_interrupt_response_and_input_answer_is_gone(ask: Ask) -> None:
    """DESIGN §2: ``request_input`` returns an object with ``.status``, ``.cancelled`` and
    ``.payload``: the ``InterruptResponseContent`` itself; no second public name for it."""
    got: list[Any] = []

    @ai_function
    def pick(env: str) -> str:
        """Pick a build."""
        got.append(request_input("Which build?", response_schema=BUILD, key="build"))
        return "picked"

    options = ChatOptions(tools=[pick])
    model = scripted([call("c1", "pick", env="prod")], "ok")
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "pick")]
    paused = await ask(client, history, options)
    question = _question(paused)
    await ask(client, resume(history, paused, question.create_response({"build": 3})), options)

    [answer] = got
    assert isinstance(answer, InterruptResponseContent)
    assert (answer.status, answer.cancelled, answer.payload) == ("resolved", False, {"build": 3})
    assert answer.request_id == question.request_id
    assert not hasattr(agui_chat, "InputAnswer")
    assert "InputAnswer" not in agui_chat.__all__
