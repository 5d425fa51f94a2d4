"""Behaviours of the tool loop's gating and resume planning that a mutation run showed no test
pinned (shared/mutation-baseline.md, items 1, 2, 9, 10 and 14): each test names the
behaviour, streaming and not, and counts the tool's runs."""

from __future__ import annotations

from typing import Any

import pytest
from loop_support import Ask, call, resume, scripted

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    DuplicateResponseError,
    FunctionCallContent,
    FunctionInvokingChatClient,
    InterruptResponseContent,
    InvalidResponseError,
    TextContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)


class Files:
    """A gated ``delete_file`` (edits allowed or not) and a plain ``list_files``."""

    def __init__(self, *, allow_edits: bool = True) -> None:
        self.deleted: list[str] = []
        self.listed: list[str] = []

        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        @ai_function
        def list_files(folder: str) -> str:
            """List a folder."""
            self.listed.append(folder)
            return f"{folder}: a.txt"

        self.options = ChatOptions(
            tools=[approval_required(allow_edits=allow_edits)(delete_file), list_files]
        )


def _approvals(response: Any) -> list[ToolApprovalRequestContent]:
    found = [r for r in response.input_requests if isinstance(r, ToolApprovalRequestContent)]
    assert len(found) == len(response.input_requests)
    return found


# -- item 1: gating continues past other contents ----------------------------------------


async def test_a_gated_call_after_text_in_the_same_message_still_waits_for_approval(
    ask: Ask,
) -> None:
    files = Files()
    model = scripted([TextContent("I will delete it."), call("c1", "delete_file", path="a")])
    response = await ask(FunctionInvokingChatClient(model), "clean up", files.options)

    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    assert [r.tool_call.call_id for r in _approvals(response)] == ["c1"]
    assert files.deleted == []


async def test_a_gated_call_after_a_call_with_unparseable_arguments_still_waits(
    ask: Ask,
) -> None:
    files = Files()
    bad = FunctionCallContent.from_json_arguments("c0", "list_files", "{not json")
    model = scripted([bad, call("c1", "delete_file", path="a")], "done")
    response = await ask(FunctionInvokingChatClient(model), "clean up", files.options)

    assert [r.tool_call.call_id for r in _approvals(response)] == ["c1"]
    assert files.deleted == []
    assert files.listed == []


# -- item 2: the tool's own allow_edits wins ---------------------------------------------


async def _paused(ask: Ask, files: Files) -> tuple[list[ChatMessage], Any, Any]:
    model = scripted([call("c1", "delete_file", path="a")], "done")
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "clean up")]
    return history, client, await ask(client, history, files.options)


async def test_a_request_claiming_edits_for_a_tool_declared_without_them_runs_no_edit(
    ask: Ask,
) -> None:
    files = Files(allow_edits=False)
    history, client, paused = await _paused(ask, files)
    [request] = _approvals(paused)
    assert request.allow_edits is False
    request.allow_edits = True  # a history that claims edits were offered
    answer = request.create_response(True, edited_arguments={"path": "b"})

    with pytest.raises(InvalidResponseError, match="does not allow editing"):
        await ask(client, resume(history, paused, answer), files.options)
    assert files.deleted == []


async def test_a_request_that_offered_no_edits_refuses_an_edit_even_if_the_tool_allows_it(
    ask: Ask,
) -> None:
    files = Files(allow_edits=True)
    history, client, paused = await _paused(ask, files)
    [request] = _approvals(paused)
    request.allow_edits = False
    answer = request.create_response(True)
    answer.edited_arguments = {"path": "b"}

    with pytest.raises(InvalidResponseError, match="does not allow editing"):
        await ask(client, resume(history, paused, answer), files.options)
    assert files.deleted == []


# -- item 9: one request id, two calls ---------------------------------------------------


async def test_one_request_id_holding_two_different_calls_is_refused(ask: Ask) -> None:
    files = Files()
    first = ToolApprovalRequestContent("r1", call("c1", "delete_file", path="a"))
    second = ToolApprovalRequestContent("r1", call("c2", "delete_file", path="b"))
    history = [
        ChatMessage("user", "clean up"),
        ChatMessage("assistant", [first, second]),
        ChatMessage("user", [first.create_response(True)]),
    ]
    client = FunctionInvokingChatClient(scripted("done"))

    with pytest.raises(InvalidResponseError, match="ambiguous"):
        await ask(client, history, files.options)
    assert files.deleted == []


# -- item 10: a question answered twice --------------------------------------------------


async def test_a_question_answered_twice_is_refused_and_runs_nothing(ask: Ask) -> None:
    runs: list[str] = []

    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        answer = request_input("Which build?", key="build")
        runs.append(f"{env} {answer.payload}")
        return "deployed"

    options = ChatOptions(tools=[deploy])
    client = FunctionInvokingChatClient(scripted([call("c1", "deploy", env="prod")], "done"))
    history = [ChatMessage("user", "ship")]
    paused = await ask(client, history, options)
    [question] = paused.input_requests
    twice = [
        InterruptResponseContent(question.request_id, 1),
        InterruptResponseContent(question.request_id, 2),
    ]

    with pytest.raises(DuplicateResponseError, match="more than once"):
        await ask(client, resume(history, paused, *twice), options)
    assert runs == []


# -- item 14: an earlier approved edit carries to a question's resumed call ----------------


async def test_a_question_after_an_approved_edit_resumes_with_the_edited_arguments(
    ask: Ask,
) -> None:
    runs: list[str] = []

    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        answer = request_input("Which build?", key="build")
        runs.append(f"{env} {answer.payload}")
        return "deployed"

    options = ChatOptions(tools=[approval_required(deploy)])
    client = FunctionInvokingChatClient(scripted([call("c1", "deploy", env="prod")], "done"))
    history = [ChatMessage("user", "ship")]
    paused = await ask(client, history, options)
    [approval] = paused.input_requests
    assert isinstance(approval, ToolApprovalRequestContent)
    history = resume(
        history, paused, approval.create_response(True, edited_arguments={"env": "staging"})
    )
    asked = await ask(client, history, options)
    [question] = asked.input_requests
    final = await ask(
        client,
        resume(history, asked, InterruptResponseContent(question.request_id, 7)),
        options,
    )

    assert runs == ["staging 7"]
    assert final.text.endswith("done")
