"""Over the wire (AGUIServer, issue 24 items 4 and 5): the person's rejection reason reaches
the model verbatim, and an answer is handed only to the question it answers."""

from __future__ import annotations

from typing import Any

import pytest
from server_support import (
    SIGNING_KEY,
    Tools,
    answer,
    cancel,
    history_from,
    interrupts,
    of_type,
    outcome,
    refused_before_the_run,
    reject,
    run_agui,
    run_input,
    scripted,
    user,
)

from agui_chat import (
    ChatMessage,
    FunctionCallContent,
    FunctionResultContent,
    ai_function,
    request_input,
)
from agui_chat.agui import AGUIServer
from agui_chat.stores import InMemoryApprovalStore

REJECTED = "Tool call invocation rejected."
YES_NO = {"type": "boolean"}
CHOICE = {"type": "string", "enum": ["yes", "no"]}


def results_seen(messages: list[ChatMessage]) -> dict[str, Any]:
    """The tool results a model received, by call id."""
    return {
        c.call_id: c.result
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }


def _server(model: Any, *tools: Any) -> AGUIServer:
    return AGUIServer(
        model, tools=list(tools), signing_key=SIGNING_KEY, approval_store=InMemoryApprovalStore()
    )


# -- item 5: the person's words verbatim ------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("keep it", f"{REJECTED} keep it"),
        ("rm -rf is not allowed", f"{REJECTED} rm -rf is not allowed"),
        ("Done.", f"{REJECTED} Done."),
        ("multi\nline", f"{REJECTED} multi\nline"),
        ("/etc/passwd", f"{REJECTED} /etc/passwd"),
        ("  ", REJECTED),
        ("", REJECTED),
        (None, REJECTED),
    ],
)
async def test_the_model_receives_the_reason_verbatim_over_the_wire(
    tools: Tools, reason: str | None, expected: str
) -> None:
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "/etc/passwd"})], "ok")
    app = _server(model, tools.delete_file())
    first = await run_agui(app, run_input(user("delete it")))
    (interrupt,) = interrupts(first)

    body = run_input(
        user("delete it"), *history_from(first), run="r2", resume=[reject(interrupt, reason)]
    )
    events = await run_agui(app, body)

    assert tools.count("delete_file") == 0
    assert results_seen(model.calls[-1][0]) == {"c1": expected}
    assert of_type(events, "TOOL_CALL_RESULT")[0]["content"] == expected
    assert outcome(events) == {"type": "success"}


# -- item 4: an answer is bound to its question -------------------------------------------------


class Deployer:
    """``deploy`` asks, under the key ``"go"``, the question its invocation ``n`` is given
    (the last one once they run out); ``tools.runs["deploy"]`` is its side effect."""

    def __init__(self, tools: Tools, *questions: tuple[str, dict[str, Any] | None]) -> None:
        self.asked: list[str] = []

        @ai_function
        def deploy(env: str) -> str:
            """Deploy to an environment."""
            message, schema = questions[min(len(self.asked), len(questions) - 1)]
            self.asked.append(message)
            reply = request_input(message, response_schema=schema, key="go")
            tools.record("deploy", env=env, question=message, answer=reply.payload)
            return f"deployed {env}: {reply.payload!r}"

        self.tool = deploy


async def _asked_again(
    tools: Tools, *questions: tuple[str, dict[str, Any] | None], reply: Any
) -> tuple[Any, AGUIServer, list[dict[str, Any]], list[dict[str, Any]]]:
    """Pause on the first question, answer it with ``reply``; return the resumed run's
    events, which must pause again with the question the tool asks now."""
    model = scripted([FunctionCallContent("c1", "deploy", {"env": "prod"})], "Deployed.")
    app = _server(model, Deployer(tools, *questions).tool)
    first = await run_agui(app, run_input(user("ship it")))
    (asked,) = interrupts(first)
    assert asked["message"] == questions[0][0]
    history = [user("ship it"), *history_from(first)]
    resumed = [answer(asked, reply) if reply is not None else cancel(asked)]
    second = await run_agui(app, run_input(*history, run="r2", resume=resumed))
    assert outcome(second)["type"] == "interrupt"
    assert tools.count("deploy") == 0  # the old answer reached no tool
    assert len(model.calls) == 1  # and the model was not called
    return model, app, history, second


async def test_another_message_under_the_same_key_is_asked_again_over_the_wire(
    tools: Tools,
) -> None:
    model, app, history, second = await _asked_again(
        tools, ("Deploy to staging?", YES_NO), ("Deploy to prod?", YES_NO), reply=True
    )
    (again,) = interrupts(second)
    assert again["message"] == "Deploy to prod?"
    assert again["metadata"]["agui_chat"] == {"toolCallId": "c1", "key": "go"}

    # Answering the question it asks now deploys once, with that answer.
    third = await run_agui(app, run_input(*history, run="r3", resume=[answer(again, False)]))
    assert tools.runs["deploy"] == [{"env": "prod", "question": "Deploy to prod?", "answer": False}]
    assert results_seen(model.calls[-1][0]) == {"c1": "deployed prod: False"}
    assert outcome(third) == {"type": "success"}


async def test_the_same_message_with_another_schema_is_asked_again_over_the_wire(
    tools: Tools,
) -> None:
    _, _, _, second = await _asked_again(
        tools, ("Go ahead?", YES_NO), ("Go ahead?", CHOICE), reply=True
    )
    (again,) = interrupts(second)
    assert (again["message"], again["responseSchema"]) == ("Go ahead?", CHOICE)


async def test_a_cancel_is_not_carried_to_another_question_over_the_wire(tools: Tools) -> None:
    _, _, _, second = await _asked_again(
        tools, ("Deploy to staging?", YES_NO), ("Deploy to prod?", YES_NO), reply=None
    )
    (again,) = interrupts(second)
    assert again["message"] == "Deploy to prod?"


async def test_the_same_question_with_a_schema_gets_its_answer_once_over_the_wire(
    tools: Tools,
) -> None:
    schema = {"type": "object", "properties": {"build": {"type": "integer"}}, "required": ["build"]}
    model = scripted([FunctionCallContent("c1", "deploy", {"env": "prod"})], "Deployed.")
    app = _server(model, Deployer(tools, ("Which build?", schema)).tool)
    first = await run_agui(app, run_input(user("ship it")))
    (asked,) = interrupts(first)
    body = run_input(
        user("ship it"), *history_from(first), run="r2", resume=[answer(asked, {"build": 7})]
    )
    events = await run_agui(app, body)
    assert outcome(events) == {"type": "success"}
    assert tools.runs["deploy"] == [
        {"env": "prod", "question": "Which build?", "answer": {"build": 7}}
    ]


async def test_earlier_answers_stay_bound_to_their_questions_over_the_wire(tools: Tools) -> None:
    """A tool asking two questions: on the third run the first answer (carried in the
    token) still answers the first question, and only it. If the tool then asks the first
    question differently, it is asked again."""
    wording = {"first": "Which account?"}

    @ai_function
    def transfer(amount: int) -> str:
        """Move money."""
        account = request_input(wording["first"], key="account")
        confirm = request_input(f"Send {amount} to {account.payload}?", key="confirm")
        tools.record("transfer", account=account.payload, confirm=confirm.payload)
        return f"sent {amount} to {account.payload}"

    model = scripted([FunctionCallContent("c1", "transfer", {"amount": 5})], "Sent.")
    app = _server(model, transfer)
    first = await run_agui(app, run_input(user("send 5")))
    history = [user("send 5"), *history_from(first)]
    (ask_account,) = interrupts(first)
    second = await run_agui(
        app, run_input(*history, run="r2", resume=[answer(ask_account, "savings")])
    )
    (ask_confirm,) = interrupts(second)

    wording["first"] = "Which account should the money leave?"
    third = await run_agui(app, run_input(*history, run="r3", resume=[answer(ask_confirm, "yes")]))

    (asked_again,) = interrupts(third)
    assert asked_again["message"] == "Which account should the money leave?"
    assert tools.count("transfer") == 0


async def test_the_first_answer_sent_again_after_the_new_question_runs_nothing(
    tools: Tools,
) -> None:
    """The client answers the old question again instead of the new one: the tool never
    gets that answer for the question it asks now: the used answer is refused, and nothing
    is deployed."""
    model = scripted([FunctionCallContent("c1", "deploy", {"env": "prod"})], "Deployed.")
    app = _server(
        model, Deployer(tools, ("Deploy to staging?", YES_NO), ("Deploy to prod?", YES_NO)).tool
    )
    first = await run_agui(app, run_input(user("ship it")))
    (old,) = interrupts(first)
    history = [user("ship it"), *history_from(first)]
    second = await run_agui(app, run_input(*history, run="r2", resume=[answer(old, True)]))
    (new,) = interrupts(second)
    assert new["message"] == "Deploy to prod?"

    replayed = await run_agui(app, run_input(*history, run="r3", resume=[answer(old, True)]))

    assert tools.count("deploy") == 0
    refused_before_the_run(replayed, "RESUME_ALREADY_CONSUMED")
    assert len(model.calls) == 1


async def _three_runs(tool: Any, replies: list[Any], between: Any = None) -> Any:
    """Run ``tool`` (called once by the model as c1) through a pause per entry of
    ``replies`` (an answer's payload, or ``None`` for a cancel); ``between(i)`` runs before
    resume ``i``. The last run's events."""
    model = scripted([FunctionCallContent("c1", tool.name, {})], "Done.")
    app = _server(model, tool)
    first = await run_agui(app, run_input(user("go")))
    history = [user("go"), *history_from(first)]
    events = first
    for i, reply in enumerate(replies):
        if between is not None:
            between(i)
        (asked,) = interrupts(events)
        entry = answer(asked, reply) if reply is not None else cancel(asked)
        events = await run_agui(app, run_input(*history, run=f"r{i + 2}", resume=[entry]))
    return events


async def test_an_earlier_answer_stays_bound_to_its_question_with_a_schema(tools: Tools) -> None:
    """The first question had a response schema: on the run after the second answer the
    first answer still answers it (the tool runs once, with both answers)."""
    schema = {"type": "string", "enum": ["savings", "checking"]}

    @ai_function
    def transfer() -> str:
        """Move money."""
        account = request_input("Which account?", response_schema=schema, key="account")
        confirm = request_input("Send it?", key="confirm")
        tools.record("transfer", account=account.payload, confirm=confirm.payload)
        return "sent"

    events = await _three_runs(transfer, ["savings", True])
    assert outcome(events) == {"type": "success"}
    assert tools.runs["transfer"] == [{"account": "savings", "confirm": True}]


async def test_an_earlier_cancel_stays_a_cancel_for_the_tool(tools: Tools) -> None:
    """The person cancelled the first question and answered the second: on the last run
    the tool still sees the first one cancelled."""

    @ai_function
    def export() -> str:
        """Export a report."""
        logs = request_input("Include the logs?", key="logs")
        confirm = request_input("Export now?", key="confirm")
        tools.record("export", logs_cancelled=logs.cancelled, confirm=confirm.payload)
        return "exported"

    events = await _three_runs(export, [None, True])
    assert outcome(events) == {"type": "success"}
    assert tools.runs["export"] == [{"logs_cancelled": True, "confirm": True}]


async def test_a_newer_answer_under_a_key_replaces_the_earlier_one(tools: Tools) -> None:
    """The tool asked under key "go" twice (its wording changed between runs); the person
    said yes, then no. When the tool asks the first wording again, the superseded yes is
    not handed to it: the question is asked anew and nothing is deployed."""
    wording = ["Deploy build 7?"]

    @ai_function
    def deploy() -> str:
        """Deploy."""
        reply = request_input(wording[0], key="go")
        tools.record("deploy", question=wording[0], answer=reply.payload)
        return "deployed"

    def reword(i: int) -> None:
        wording[0] = ["Deploy build 8?", "Deploy build 7?"][i]

    events = await _three_runs(deploy, [True, False], reword)
    (asked,) = interrupts(events)
    assert asked["message"] == "Deploy build 7?"
    assert tools.count("deploy") == 0


async def test_answers_under_other_keys_survive_a_question_asked_again(tools: Tools) -> None:
    """The tool asks "go", then "account"; "go" is then reworded and answered again: the
    account answer given in between is kept, and the tool runs once with both."""
    wording = ["Deploy?"]

    @ai_function
    def deploy() -> str:
        """Deploy."""
        go = request_input(wording[0], key="go")
        account = request_input("Which account?", key="account")
        tools.record("deploy", go=go.payload, account=account.payload)
        return "deployed"

    def reword(i: int) -> None:
        if i == 1:
            wording[0] = "Deploy now, really?"

    events = await _three_runs(deploy, [True, "ops", True], reword)
    assert outcome(events) == {"type": "success"}
    assert tools.runs["deploy"] == [{"go": True, "account": "ops"}]
