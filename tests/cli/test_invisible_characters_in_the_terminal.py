"""The terminal, under a real pseudo-terminal, shows every code point that draws as nothing
(Unicode's ``Default_Ignorable_Code_Point``: variation selectors, the combining grapheme
joiner, Hangul fillers, Khmer and Mongolian signs, tags) as an escape, in a tool's name, an
argument's key and its value, so ``look…up(pa…th="notes.txt…")`` never reads as
``lookup(path="notes.txt")``. An edit that only recomposes a value (``café`` composed to
decomposed) or only adds such a code point is shown as a change a person can see, and what
runs is the edit exactly as typed.

The agent is a hostile AG-UI server on 127.0.0.1 that streams its own call and pause (a real
``AGUIServer`` only has tools with plain names) and records every answer it gets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from live_agent import serving
from test_terminal_under_a_pty import finish, terminal

from invisible_characters import HIDDEN, KEY, LOOK_ALIKE_EDITS, NAME, SHOWN_CALL, VALUE

#: The answer the pause asks for; naming ``editedArgs`` offers the person an edit.
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "reason": {"type": "string"},
        "editedArgs": {"type": "object"},
    },
    "required": ["approved"],
}


class HostileAgent:
    """Answers the prompt ``name`` with a call of :data:`NAME` holding :data:`KEY` and
    :data:`VALUE`, and ``edit CASE`` with a call of ``write_file`` whose ``path`` is that look-
    alike edit's proposed value; each then pauses for approval. A resume is recorded and
    answered ``Done.``."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        data = json.loads(body)
        ids = {"threadId": data["threadId"], "runId": data["runId"]}
        events: list[dict[str, Any]] = [{"type": "RUN_STARTED", **ids}]
        if data.get("resume"):
            self.answers.extend(data["resume"])
            events += [
                {"type": "TEXT_MESSAGE_START", "messageId": "done", "role": "assistant"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "done", "delta": "Done."},
                {"type": "TEXT_MESSAGE_END", "messageId": "done"},
                {"type": "RUN_FINISHED", **ids, "outcome": {"type": "success"}},
            ]
        else:
            prompt = str(data["messages"][-1]["content"])
            name, arguments = (NAME, {KEY: VALUE})
            if prompt.startswith("edit "):
                name, arguments = "write_file", {"path": LOOK_ALIKE_EDITS[prompt[5:]][0]}
            call = data["runId"] + "-call"
            pause = {
                "id": call + "-ask",
                "reason": "tool_call",
                "toolCallId": call,
                "responseSchema": ANSWER_SCHEMA,
            }
            events += [
                {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": name},
                {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": json.dumps(arguments)},
                {"type": "TOOL_CALL_END", "toolCallId": call},
                {
                    "type": "RUN_FINISHED",
                    **ids,
                    "outcome": {"type": "interrupt", "interrupts": [pause]},
                },
            ]
        stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": stream})


@contextmanager
def hostile_agent() -> Iterator[tuple[str, HostileAgent]]:
    agent = HostileAgent()
    with serving(agent) as url:
        yield url, agent


def test_a_name_key_and_value_holding_what_draws_as_nothing_are_shown_escaped() -> None:
    with hostile_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("name")
        child.expect_exact(f"approve {SHOWN_CALL}? [y]es / [n]o / [e]dit: ")
        child.sendline("n")
        child.expect_exact("reason (optional): ")
        child.sendline("")
        child.expect_exact("agent> Done.")
        child.expect_exact("you> ")
        child.sendeof()
        status, output = finish(child)
    assert status == 0
    for char in HIDDEN:
        assert char not in output, f"U+{ord(char):04X} reached the terminal raw"
    (answer,) = agent.answers
    assert answer["payload"] == {"approved": False}


@pytest.mark.parametrize("edit", LOOK_ALIKE_EDITS)
def test_an_edit_that_only_recomposes_or_adds_an_invisible_code_point_is_a_visible_change(
    edit: str,
) -> None:
    _, edited, (before, after) = LOOK_ALIKE_EDITS[edit]
    with hostile_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline(f"edit {edit}")
        child.expect_exact("? [y]es / [n]o / [e]dit: ")
        child.sendline("e")
        child.expect_exact("new arguments as JSON: ")
        # The line may start as the proposed arguments: Ctrl-U empties it (readline's kill,
        # the terminal's own without readline); the edit is typed as ASCII JSON escapes.
        child.sendline("\x15" + json.dumps({"path": edited}))
        child.expect_exact(f"changed  {before}  →  {after}")
        child.expect_exact(" instead? [y]es / [n]o, back: ")
        child.sendline("y")
        child.expect_exact("agent> Done.")
        child.expect_exact("you> ")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0
    (answer,) = agent.answers
    assert answer["payload"] == {"approved": True, "editedArgs": {"path": edited}}
