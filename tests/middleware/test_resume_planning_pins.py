"""How a resume pairs answers with requests and places the resumed block, pinned where a
mutation run (issue 13 item 10) showed no test did: which requests are ours, which answers
count, what the model sees and in which order, the refusals' exact words and request ids,
and the id of a tool's question (a history saved by one release must pair on the next).
Each test runs streaming and not, and counts the tool's runs."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from loop_support import Ask, call, describe, resume, scripted, seen

from agui_chat import (
    AIContent,
    AIFunctionDeclaration,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    DuplicateResponseError,
    ExpiredRequestError,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    InterruptRequestContent,
    InterruptResponseContent,
    InvalidResponseError,
    TextContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    ai_function,
    approval_required,
    request_input,
)

PAST = datetime.now(timezone.utc) - timedelta(minutes=5)


class Tools:
    """A gated ``delete_file``, a plain ``list_files``, a ``deploy`` asking "Which build?"
    (gated or not) and a declaration-only ``pick_color`` the caller runs; runs are counted."""

    def __init__(self, *, gate_deploy: bool = False, build_key: str | None = "build") -> None:
        self.runs: list[str] = []

        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.runs.append(f"delete {path}")
            return f"deleted {path}"

        @ai_function
        def list_files(folder: str) -> str:
            """List a folder."""
            self.runs.append(f"list {folder}")
            return f"{folder}: a.txt"

        @ai_function
        def deploy(env: str) -> str:
            """Deploy."""
            build = request_input("Which build?", key=build_key)
            self.runs.append(f"deploy {env} {build.payload}")
            return f"deployed {env}"

        self.options = ChatOptions(
            tools=[
                approval_required(delete_file),
                list_files,
                approval_required(deploy) if gate_deploy else deploy,
                AIFunctionDeclaration("pick_color", "The caller's colour picker."),
            ]
        )


def msg(role: str, *contents: AIContent) -> ChatMessage:
    return ChatMessage(role, list(contents))


def delete_request() -> ToolApprovalRequestContent:
    return ToolApprovalRequestContent("approval_c1", call("c1", "delete_file", path="a"))


def question(request_id: str = "q1", call_id: str = "c1", **kwargs: Any) -> InterruptRequestContent:
    kwargs.setdefault("key", "build")
    return InterruptRequestContent(
        request_id, message="Which build?", tool_call_id=call_id, **kwargs
    )


def _answered(*questions: AIContent, made: AIContent | None = None) -> list[ChatMessage]:
    """``deploy`` was called (``made``) and asked ``questions``; the person answered q1."""
    made = made or call("c1", "deploy", env="prod")
    asked = [msg("user", TextContent("ship")), msg("assistant", made), msg("assistant", *questions)]
    return [*asked, msg("user", InterruptResponseContent("q1", 7))]


async def _refused(
    ask: Ask, tools: Tools, history: list[ChatMessage], error: type[Exception], text: str
) -> Any:
    model = scripted("unreachable")
    with pytest.raises(error, match=f"^{re.escape(text)}$") as caught:
        await ask(FunctionInvokingChatClient(model), history, tools.options)
    assert tools.runs == []
    assert model.calls == []
    return caught.value


# -- which requests and answers are ours ---------------------------------------------------


async def test_a_questions_id_is_the_same_in_every_release(ask: Ask) -> None:
    """The id of a tool's question is ``input_<call id>_<12 hex of sha256(digest)>``, where
    the digest is the sha256 hex of the canonical JSON ``[key, message, schema]``: the same
    question always gets the same id (a paused run saved by one release pairs with its
    answer on the next), and a different question under the same key gets another id."""
    tools = Tools()
    client = FunctionInvokingChatClient(scripted([call("c1", "deploy", env="prod")]))
    paused = await ask(client, "ship", tools.options)

    assert [r.request_id for r in paused.input_requests] == ["input_c1_8a744a88c9bc"]


async def test_a_request_after_text_in_the_models_message_is_paired_with_its_answer(
    ask: Ask,
) -> None:
    """The model says something, then makes a gated call: approving it runs it once."""
    tools = Tools()
    model = scripted(
        [TextContent("I will delete it."), call("c1", "delete_file", path="a")], "done"
    )
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "clean up")]
    paused = await ask(client, history, tools.options)
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    final = await ask(client, resume(history, paused, request.create_response(True)), tools.options)

    assert tools.runs == ["delete a"]
    assert final.text == "done"


async def test_an_approval_for_a_tool_the_caller_runs_is_left_for_the_inner_client(
    ask: Ask,
) -> None:
    """``pick_color`` is only declared here: an approval for it came from elsewhere, so the
    request and its answer reach the inner client as they were."""
    tools = Tools()
    request = ToolApprovalRequestContent("r9", call("c9", "pick_color"))
    history = [
        msg("user", TextContent("paint it")),
        msg("assistant", request),
        msg("user", request.create_response(True)),
    ]
    model = scripted("done")
    response = await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert response.text == "done"
    assert seen(model) == ["user: paint it", "assistant: approval? r9", "user: approval! r9 True"]


@pytest.mark.parametrize("marked", ["request", "answer"])
async def test_an_approval_marked_handled_is_not_run_again(ask: Ask, marked: str) -> None:
    """The request's call or the answer's call says ``informational_only`` (a stacked loop
    ran it): the call is not run again."""
    tools = Tools()
    request = ToolApprovalRequestContent(
        "approval_c1",
        FunctionCallContent(
            "c1", "delete_file", {"path": "a"}, informational_only=marked == "request"
        ),
    )
    answer = ToolApprovalResponseContent(
        "approval_c1",
        True,
        FunctionCallContent(
            "c1", "delete_file", {"path": "a"}, informational_only=marked == "answer"
        ),
    )
    history = [msg("user", TextContent("clean up")), msg("assistant", request), msg("user", answer)]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == []
    assert len(model.calls) == 1


async def test_a_question_naming_a_call_the_history_does_not_hold_passes_through(
    ask: Ask,
) -> None:
    """A remote agent's question (its call is not in the history) and its answer reach the
    inner client untouched; nothing runs here."""
    tools = Tools()
    history = [
        msg("user", TextContent("ship")),
        msg("assistant", question("q9", "remote1")),
        msg("user", InterruptResponseContent("q9", 7)),
    ]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == []
    assert seen(model) == ["user: ship", "assistant: question q9", "user: answer q9 resolved"]


async def test_a_question_bound_to_an_informational_call_stays_in_the_models_history(
    ask: Ask,
) -> None:
    """Its tool did not ask it (the call was handled elsewhere): the question and its answer
    are the inner client's, and nothing runs."""
    tools = Tools()
    handled = FunctionCallContent("c1", "deploy", {"env": "prod"}, informational_only=True)
    history = _answered(question(), made=handled)
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == []
    assert seen(model) == [
        "user: ship",
        'assistant: call c1 deploy {"env": "prod"}',
        "assistant: question q1",
        "user: answer q1 resolved",
    ]


async def test_a_question_sent_in_the_approvals_message_does_not_answer_its_tool(
    ask: Ask,
) -> None:
    """A question only counts for a gated call if it came after the approval: one inside the
    approval's own message (and its answer) is not handed to the tool, which asks again."""
    tools = Tools(gate_deploy=True)
    request = ToolApprovalRequestContent("approval_c1", call("c1", "deploy", env="prod"))
    history = [
        msg("user", TextContent("ship")),
        msg("assistant", request),
        msg("user", request.create_response(True), question()),
        msg("user", InterruptResponseContent("q1", 7)),
    ]
    model = scripted("unreachable")
    response = await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == []
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    assert [r.request_id for r in response.input_requests] == ["input_c1_8a744a88c9bc"]
    assert model.calls == []


async def test_a_question_without_a_key_resumes_with_its_message_as_the_key(ask: Ask) -> None:
    """A question sent back without its ``key`` still answers the tool, whose
    ``request_input`` used the message as the key."""
    tools = Tools(build_key=None)
    history = _answered(question(key=None))
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == ["deploy prod 7"]


async def test_an_answered_question_is_gone_from_the_models_history_on_the_next_turn(
    ask: Ask,
) -> None:
    """After a question's call has its result, the question and the answer are not shown to
    the model again."""
    tools = Tools()
    model = scripted([call("c1", "deploy", env="prod")], "deployed", "you are welcome")
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "ship")]
    paused = await ask(client, history, tools.options)
    [asked] = paused.input_requests
    assert isinstance(asked, InterruptRequestContent)
    history = resume(history, paused, asked.create_response(7))
    done = await ask(client, history, tools.options)
    await ask(client, [*history, *done.messages, ChatMessage("user", "thanks")], tools.options)

    assert tools.runs == ["deploy prod 7"]
    assert seen(model) == [
        "user: ship",
        'assistant: call c1 deploy {"env": "prod"}',
        "tool: result c1 deployed prod",
        "assistant: deployed",
        "user: thanks",
    ]


# -- an approved edit, when the approval itself is no longer pending -------------------------


@pytest.mark.parametrize(
    ("edit", "runs"), [({"env": "staging"}, ["deploy staging 7"]), (None, ["deploy prod 7"])]
)
async def test_a_question_resumes_its_call_with_the_arguments_its_approval_gave(
    ask: Ask, edit: dict[str, str] | None, runs: list[str]
) -> None:
    """The approval's answer says it was handled, so only the question is pending: the call
    still runs with the edit the person approved (or its own arguments), and a second
    request for the call that got no answer changes nothing."""
    tools = Tools(gate_deploy=True)
    prod = call("c1", "deploy", env="prod")
    handled = FunctionCallContent("c1", "deploy", {"env": "prod"}, informational_only=True)
    history = [
        msg("user", TextContent("ship")),
        msg("assistant", ToolApprovalRequestContent("again_c1", prod)),
        msg("assistant", ToolApprovalRequestContent("approval_c1", prod)),
        msg(
            "user", ToolApprovalResponseContent("approval_c1", True, handled, edited_arguments=edit)
        ),
        msg("assistant", question()),
        msg("user", InterruptResponseContent("q1", 7)),
    ]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == runs


# -- refusals: their words and request ids ---------------------------------------------------


async def test_two_different_questions_under_one_id_are_refused_as_ambiguous(ask: Ask) -> None:
    """One request id holding two different questions of a pending call: an answer could
    be read as either, so nothing runs."""
    tools = Tools()
    history = _answered(question(), question(key="region"))
    error = await _refused(
        ask,
        tools,
        history,
        InvalidResponseError,
        "tool call id 'c1' is used by more than one call or request, so the answers to request "
        "'q1' are ambiguous; nothing was run (each tool call needs its own id)",
    )
    assert error.request_ids == ("q1",)


async def test_an_expired_question_is_refused_naming_its_request(ask: Ask) -> None:
    tools = Tools()
    history = _answered(question(expires_at=PAST))
    error = await _refused(
        ask,
        tools,
        history,
        ExpiredRequestError,
        "question 'q1' expired; it can only be cancelled",
    )
    assert error.request_ids == ("q1",)


def _two_calls(second: AIContent, answers: list[ToolApprovalResponseContent]) -> list[ChatMessage]:
    """The request for ``c1``, another call using ``c1``, and the person's answers."""
    first = msg("assistant", delete_request())
    return [
        msg("user", TextContent("clean up")),
        first,
        msg("assistant", second),
        msg("user", *answers),
    ]


_AMBIGUOUS_C1 = (
    "tool call id 'c1' is used by more than one call or request, so the answers to request "
    "'approval_c1' are ambiguous; nothing was run (each tool call needs its own id)"
)


@pytest.mark.parametrize(
    ("second", "edit"),
    [
        (FunctionCallContent("c1", "delete_file", None), None),
        (call("c1", "delete_file", path="x"), {"path": "b"}),
        (call("c1", "delete_file", path="b"), {"path": "b"}),
    ],
    ids=["no-arguments", "edited-elsewhere", "rejected-edit"],
)
async def test_an_answer_does_not_hide_a_second_call_with_the_same_id(
    ask: Ask, second: FunctionCallContent, edit: dict[str, str] | None
) -> None:
    """Another call uses the approved call's id (one without arguments, one with arguments
    the edit does not give, or one a rejection "edits" to): the answer is ambiguous. Only
    the loop's own copy of an approved edit is the same call."""
    tools = Tools()
    answer = delete_request().create_response(True, edited_arguments=edit)
    if second.arguments == edit:  # a rejection carrying the other call's arguments
        answer = ToolApprovalResponseContent(
            "approval_c1", False, answer.tool_call, edited_arguments=edit
        )
    error = await _refused(
        ask, tools, _two_calls(second, [answer]), InvalidResponseError, _AMBIGUOUS_C1
    )
    assert error.request_ids == ("approval_c1",)


async def test_an_edited_answer_given_twice_is_refused_as_a_duplicate(ask: Ask) -> None:
    """A rejection and then an approved edit of one request, with the loop's copy of the
    edited call in the history: the request was answered twice (the copy is that call)."""
    tools = Tools()
    request = delete_request()
    answers = [
        request.create_response(False),
        request.create_response(True, edited_arguments={"path": "b"}),
    ]
    error = await _refused(
        ask,
        tools,
        _two_calls(call("c1", "delete_file", path="b"), answers),
        DuplicateResponseError,
        "request 'approval_c1' answered more than once; answer each request exactly once",
    )
    assert error.request_ids == ("approval_c1",)


# -- where the resumed block goes --------------------------------------------------------------


async def test_a_history_opening_with_the_request_gets_the_block_before_the_later_text(
    ask: Ask,
) -> None:
    """The history starts with the assistant's request: the call and its result come first,
    ahead of the text the person sent with the answer."""
    tools = Tools()
    request = delete_request()
    history = [
        msg("assistant", request),
        msg("user", request.create_response(True), TextContent("and tell me")),
    ]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == ["delete a"]
    assert seen(model) == [
        'assistant: call c1 delete_file {"path": "a"}',
        "tool: result c1 deleted a",
        "user: and tell me",
    ]


async def test_a_request_sent_twice_rebuilds_its_call_once(ask: Ask) -> None:
    """The caller re-sent the assistant message holding the request: the call is run once
    and shown to the model (and the caller) once."""
    tools = Tools()
    request = delete_request()
    history = [
        msg("user", TextContent("clean up")),
        msg("assistant", request),
        msg("assistant", request),
        msg("user", request.create_response(True)),
    ]
    model = scripted("done")
    response = await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == ["delete a"]
    expected = ['assistant: call c1 delete_file {"path": "a"}', "tool: result c1 deleted a"]
    assert seen(model) == ["user: clean up", *expected]
    assert describe(response.messages) == [*expected, "assistant: done"]


async def test_a_call_the_history_repeats_is_shown_once_and_its_message_kept(ask: Ask) -> None:
    """The history holds the approved call again, with text, after the request: the model
    sees the call once, the text where it was, then the result after the answer."""
    tools = Tools()
    request = delete_request()
    history = [
        msg("user", TextContent("clean up")),
        msg("assistant", request),
        msg("assistant", call("c1", "delete_file", path="a"), TextContent("Deleting a.")),
        msg("user", request.create_response(True)),
    ]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == ["delete a"]
    assert seen(model) == [
        "user: clean up",
        'assistant: call c1 delete_file {"path": "a"}',
        "assistant: Deleting a.",
        "tool: result c1 deleted a",
    ]


async def test_a_resumed_result_follows_its_call_even_placed_after_the_answer(ask: Ask) -> None:
    """The caller's history holds the questioned call after the question and its answer:
    the tool's result still comes after the call, before the person's next text."""
    tools = Tools()
    history = [
        msg("user", TextContent("ship")),
        msg("assistant", question()),
        msg("user", InterruptResponseContent("q1", 7)),
        msg("assistant", call("c1", "deploy", env="prod")),
        msg("user", TextContent("go on")),
    ]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == ["deploy prod 7"]
    assert seen(model) == [
        "user: ship",
        'assistant: call c1 deploy {"env": "prod"}',
        "tool: result c1 deployed prod",
        "user: go on",
    ]


async def test_the_block_goes_right_after_the_answers_ahead_of_a_later_exchange(
    ask: Ask,
) -> None:
    """After the answers the caller's history goes on with another call and its result: the
    resumed call and its result come first, right where the request stood."""
    tools = Tools()
    request = delete_request()
    history = [
        msg("user", TextContent("clean up")),
        msg("assistant", request),
        msg("user", request.create_response(True)),
        msg("assistant", call("c9", "list_files", folder="x")),
        msg("tool", FunctionResultContent("c9", "x: a.txt")),
    ]
    model = scripted("done")
    await ask(FunctionInvokingChatClient(model), history, tools.options)

    assert tools.runs == ["delete a"]
    assert seen(model) == [
        "user: clean up",
        'assistant: call c1 delete_file {"path": "a"}',
        "tool: result c1 deleted a",
        'assistant: call c9 list_files {"folder": "x"}',
        "tool: result c9 x: a.txt",
    ]


async def test_the_callers_tool_result_sent_after_the_answers_stays_with_its_batch(
    ask: Ask,
) -> None:
    """A batch paused on an approval beside a call the caller runs (``pick_color``): the
    caller sends the answer, then that call's result. The results of the batch stay
    together, and the resumed call and its result come after them."""
    tools = Tools()
    model = scripted(
        [
            call("c1", "delete_file", path="a"),
            call("c2", "list_files", folder="x"),
            call("c3", "pick_color"),
        ],
        "done",
    )
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "clean up")]
    paused = await ask(client, history, tools.options)
    assert describe(paused.messages) == [
        'assistant: approval? approval_c1 | call c2 list_files {"folder": "x"} | call c3 '
        "pick_color {}",
        "tool: result c2 x: a.txt",
    ]
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    history = [
        *resume(history, paused, request.create_response(True)),
        msg("tool", FunctionResultContent("c3", "red")),
    ]
    await ask(client, history, tools.options)

    assert tools.runs == ["list x", "delete a"]
    assert seen(model) == [
        "user: clean up",
        'assistant: call c2 list_files {"folder": "x"} | call c3 pick_color {}',
        "tool: result c2 x: a.txt",
        "tool: result c3 red",
        'assistant: call c1 delete_file {"path": "a"}',
        "tool: result c1 deleted a",
    ]
