"""What the server tells its own page to show (issue 25, DESIGN §3 rule 8): with ``ui=True``
each interrupt carries the consent engine's display of its call or question, and
``POST ?agui_chat=display`` shows any call (read from its JSON text, integers exact), an
edit's changes and results. The page renders only that text. Code points that draw as
nothing are escaped in names, keys and values, and an edit that only recomposes a value or
adds such a code point is a change a person can see."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agui_chat import (
    FunctionCallContent,
    InterruptRequestContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat._display import shown_call, shown_text
from agui_chat.agui.server._page_display import shown_json
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server
from agui_streams import SideEffects, scripted, user
from invisible_characters import (
    COMPOSED,
    DECOMPOSED,
    KEY,
    LOOK_ALIKE_EDITS,
    NAME,
    SHOWN,
    SHOWN_CALL,
    SHOWN_NAME,
    VALUE,
)

BIG = 9007199254740993


def _server(arguments: dict[str, Any], *, ui: bool = True) -> Any:
    effects = SideEffects()

    @approval_required
    @ai_function
    def delete_record(record_id: int, title: str = "") -> str:
        """Delete a record."""
        effects.record("delete_record", record_id=record_id, title=title)
        return "deleted"

    def reply(messages: Any, options: Any) -> Any:
        return [FunctionCallContent("c1", "delete_record", arguments)]

    return agui_server(ScriptedChatClient(reply), tools=[delete_record], ui=ui)


async def _display(app: Any, body: Any) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http:
        return await http.post("http://localhost/?agui_chat=display", json=body)


async def test_an_approval_for_the_page_carries_the_display_of_what_runs() -> None:
    arguments = {"record_id": BIG, "title": "report\u202efdp.exe"}
    paused = await _server(arguments).pause(user("go"))
    (interrupt,) = paused.interrupts
    shown = interrupt["metadata"]["agui_chat"]["shown"]
    assert shown["call"]["text"] == f'delete_record(record_id={BIG}, title="report\\u202efdp.exe")'
    assert shown["call"] == {
        "text": shown_call("delete_record", arguments).text,
        "full": shown_call("delete_record", arguments).full,
        "omitted": 0,
    }
    assert shown["tool"]["text"] == "delete_record"
    assert shown["title"]["text"] == "Approve delete_record?"


async def test_a_tools_question_for_the_page_shows_the_question_and_the_tool_asking() -> None:
    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        reply = request_input("Deploy to prod\nnow?", key="go")
        return f"deployed {reply.payload}"

    model = scripted([FunctionCallContent("c1", "deploy", {"env": "prod"})])
    paused = await agui_server(model, tools=[deploy], ui=True).pause(user("go"))
    (interrupt,) = paused.interrupts
    shown = interrupt["metadata"]["agui_chat"]["shown"]
    assert shown == {
        "title": shown_json(shown_text("Deploy to prod\nnow?")),
        "tool": shown_json(shown_text("deploy", multiline=False)),
    }
    assert shown["title"]["text"] == "Deploy to prod\nnow?"
    assert interrupt["metadata"]["agui_chat"]["key"] == "go"


async def test_a_question_with_no_message_for_the_page_has_a_plain_title_and_no_tool() -> None:
    """The model asked without a message (and no tool asked): the page shows a generic
    title, never an empty one, and names no tool."""
    model = scripted([InterruptRequestContent("q1", reason="confirm", key="k")])
    paused = await agui_server(model, ui=True).pause(user("go"))
    (interrupt,) = paused.interrupts
    shown = interrupt["metadata"]["agui_chat"]["shown"]
    assert shown == {"title": shown_json(shown_text("The agent has a question."))}


async def test_without_the_page_the_interrupt_is_unchanged() -> None:
    paused = await _server({"record_id": 1}, ui=False).pause(user("go"))
    assert "metadata" not in paused.interrupts[0]


async def test_a_call_is_shown_from_its_json_text_with_integers_exact() -> None:
    app = _server({}).app
    text = '{"record_id": 9007199254740993, "title": "a\\u001b[8mb"}'
    response = await _display(app, {"calls": [{"name": "delete_record", "arguments": text}]})
    assert response.status_code == 200
    (call,) = response.json()["calls"]
    assert call["call"]["text"] == f'delete_record(record_id={BIG}, title="a\\u001b[8mb")'


async def test_an_edit_is_shown_with_only_what_changed() -> None:
    app = _server({}).app
    ask = {
        "name": "delete_record",
        "before": '{"record_id": 9007199254740993, "title": "old", "gone": 1}',
        "arguments": '{"record_id": 9007199254740993, "title": "new", "added": true}',
    }
    (call,) = (await _display(app, {"calls": [ask]})).json()["calls"]
    changes = [
        (c["before"] and c["before"]["text"], c["after"] and c["after"]["text"])
        for c in call["changes"]
    ]
    assert changes == [('title="old"', 'title="new"'), ("gone=1", None), (None, "added=true")]


async def test_arguments_that_are_not_an_object_are_shown_as_their_escaped_text() -> None:
    app = _server({}).app
    ask = {"name": "x\u202ey", "arguments": "[1, \u202e2]"}
    (call,) = (await _display(app, {"calls": [ask]})).json()["calls"]
    assert call["call"]["text"] == "x\\u202ey([1, \\u202e2])"


async def test_texts_are_shown_escaped_and_cut_with_the_whole_kept() -> None:
    app = _server({}).app
    long = "\x1b[2J" + "x" * 5000
    (shown,) = (await _display(app, {"texts": [long]})).json()["texts"]
    assert shown["text"].startswith("\\x1b[2J") and shown["omitted"] > 0
    assert shown["full"] == "\\x1b[2J" + "x" * 5000


@pytest.mark.parametrize(
    "body",
    [[], {"calls": "x"}, {"calls": [{"arguments": "{}"}]}, {"texts": [1]}, {"texts": ["a"] * 201}],
)
async def test_a_malformed_display_request_is_a_400(body: Any) -> None:
    response = await _display(_server({}).app, body)
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_DISPLAY_REQUEST"


async def test_without_the_page_there_is_no_display_route() -> None:
    response = await _display(_server({}, ui=False).app, {"calls": []})
    assert response.status_code == 422  # read as a (bad) run input: no display without ui


def _changes(call: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    """An edit's changes as the page shows them: (before, after), ``None`` for no key."""
    return [
        (c["before"] and c["before"]["text"], c["after"] and c["after"]["text"])
        for c in call["changes"]
    ]


async def test_a_name_key_and_value_holding_what_draws_as_nothing_show_each_escaped() -> None:
    app = _server({}).app
    ask = {"name": NAME, "arguments": json.dumps({KEY: VALUE})}
    (call,) = (await _display(app, {"calls": [ask]})).json()["calls"]
    assert call["call"]["text"] == SHOWN_CALL
    assert call["tool"]["text"] == SHOWN_NAME
    (text,) = (await _display(app, {"texts": [VALUE]})).json()["texts"]
    assert text["text"] == f"notes.txt{SHOWN}"


@pytest.mark.parametrize("edit", LOOK_ALIKE_EDITS)
async def test_an_edit_that_only_recomposes_or_adds_an_invisible_code_point_is_a_visible_change(
    edit: str,
) -> None:
    proposed, edited, change = LOOK_ALIKE_EDITS[edit]
    ask = {
        "name": "delete_record",
        "before": json.dumps({"record_id": 1, "path": proposed}),
        "arguments": json.dumps({"record_id": 1, "path": edited}),
    }
    (call,) = (await _display(_server({}).app, {"calls": [ask]})).json()["calls"]
    assert _changes(call) == [change]


async def test_a_key_renamed_to_its_decomposed_spelling_shows_the_two_keys_apart() -> None:
    ask = {
        "name": "delete_record",
        "before": json.dumps({COMPOSED: 1}),
        "arguments": json.dumps({DECOMPOSED: 1}),
    }
    (call,) = (await _display(_server({}).app, {"calls": [ask]})).json()["calls"]
    assert _changes(call) == [
        ('"caf\\xe9.txt"=1', None),
        (None, '"cafe\\u0301.txt"=1'),
    ]


async def test_an_edit_lists_what_the_tool_would_receive_differently_and_nothing_else() -> None:
    """``1`` and ``1.0`` differ at any depth (a nested one used to pass unlisted: the two are
    equal in Python); an object whose keys only moved does not."""
    ask = {
        "name": "delete_record",
        "before": '{"a": {"n": 1}, "b": {"x": 1, "y": 2}}',
        "arguments": '{"a": {"n": 1.0}, "b": {"y": 2, "x": 1}}',
    }
    (call,) = (await _display(_server({}).app, {"calls": [ask]})).json()["calls"]
    assert _changes(call) == [('a={"n": 1}', 'a={"n": 1.0}')]
