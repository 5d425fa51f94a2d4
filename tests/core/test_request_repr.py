"""``print(request)`` shows what a person needs to recognise a pause, not the request id: over
AG-UI that id is a signed token of hundreds of characters. An approval request names its tool
and its call id (shortened past 16 characters); a question its message (shortened past 40)
and the call that asks it."""

from __future__ import annotations

from agui_chat import FunctionCallContent, InterruptRequestContent, ToolApprovalRequestContent

TOKEN = "v1." + "eyJhIjp7InBhdGgiOiJhLnR4dCJ9" * 20 + ".wiD7vJCClzzgDf-kpxMYfteGleNn2IXO4mb5VQ"


def test_an_approval_request_names_its_tool_and_call_not_its_token() -> None:
    call = FunctionCallContent("call_0123456789abcdefXYZ", "delete_file", {"path": "a.txt"})
    request = ToolApprovalRequestContent(TOKEN, call)
    shown = repr(request)
    assert shown == "<ToolApprovalRequestContent tool='delete_file' call_id='call_0123456789…'>"
    assert str(request) == shown and str([request]) == f"[{shown}]"
    assert TOKEN[:20] not in shown


def test_a_short_call_id_is_shown_whole() -> None:
    request = ToolApprovalRequestContent("approval_c1", FunctionCallContent("c1", "rm", {}))
    assert repr(request) == "<ToolApprovalRequestContent tool='rm' call_id='c1'>"


def test_a_question_names_its_message_and_call_not_its_token() -> None:
    question = InterruptRequestContent(
        TOKEN, message="Which build of the web service should I deploy?", tool_call_id="call_1"
    )
    assert repr(question) == (
        "<InterruptRequestContent message='Which build of the web service should I…' "
        "call_id='call_1'>"
    )


def test_a_question_about_no_call_says_so() -> None:
    question = InterruptRequestContent("input_1", message="Continue?")
    assert repr(question) == "<InterruptRequestContent message='Continue?' call_id=None>"
