"""``agui-chat chat``: "don't ask again" at an approval prompt, only where the server's
interrupt offers it, saying exactly what it covers; choosing it makes a grant on the server, so
the same call in the same conversation runs without asking (counted by the tool's runs);
``/grants`` and ``/revoke`` list and end the conversation's grants through the server's
endpoint. Anything else typed at the prompt approves nothing, and no answer rejects.

The server is a live ``AGUIServer`` on 127.0.0.1 (``governance_agent``); the chat is the real
command in a child process, its answers piped or typed under a pseudo-terminal."""

from __future__ import annotations

import asyncio
import io
import json
import math
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from governance_agent import RAW, governed_agent
from live_agent import serving
from test_chat_command import chat
from test_terminal_under_a_pty import finish, terminal

from agui_chat import FunctionCallContent, ToolApprovalRequestContent
from agui_chat.agui import AGUIServer
from agui_chat.cli import _prompts
from agui_chat.cli._prompts import Terminal, answer_requests

COVERS = (
    "  d = approve and don't ask again in this conversation for {length}: only "
    'write_note(path="{path}") with these same arguments, only in this conversation, only '
    "for the next {length}"
)
NOTE_PROMPT = '  approve write_note(path="{path}")? [y]es / [n]o / [e]dit / [d]on\'t ask again: '
DELETE_PROMPT = '  approve delete_file(path="{path}")? [y]es / [n]o / [e]dit: '
ASK_AGAIN = "  please answer y or n (or e to edit) (or d not to be asked again)"


def grants_of(app: AGUIServer) -> list[Any]:
    """The server's live grants (its in-memory store, read once the chat has ended)."""
    return asyncio.run(app.approval_store.grants())


def decisions_of(app: AGUIServer) -> list[str]:
    async def read() -> list[str]:
        return [r.decision async for r in app.approval_store.audit()]

    return asyncio.run(read())


def test_dont_ask_again_is_offered_only_where_the_server_allows_it() -> None:
    with governed_agent() as (url, agent, app):
        out = chat(url, "clean a.txt\nn\n\nnote b.txt\ny\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert DELETE_PROMPT.format(path="a.txt") in text
    assert NOTE_PROMPT.format(path="b.txt") in text
    # Said once, before the one prompt that offers it, in full.
    assert text.count("don't ask again") == 1
    assert text.count("[d]on't ask again") == 1
    covers = COVERS.format(length="10 minutes", path="b.txt")
    assert f"{covers}\n{NOTE_PROMPT.format(path='b.txt')}" in text
    assert text.index(DELETE_PROMPT.format(path="a.txt")) < text.index(covers)
    assert agent.deleted == [] and agent.notes == ["b.txt"]
    assert grants_of(app) == []  # a plain yes remembers nothing


def test_choosing_it_makes_a_grant_and_the_same_call_runs_without_asking() -> None:
    with governed_agent() as (url, agent, app):
        out = chat(url, "note b.txt\nd\nnote b.txt\nnote b.txt\nnote c.txt\nn\n\n\n")
        (grant,) = grants_of(app)
        decisions = decisions_of(app)
    assert out.returncode == 0, out.stdout + out.stderr
    # b.txt ran three times, asked once; c.txt (other arguments) was asked and rejected.
    assert agent.notes == ["b.txt", "b.txt", "b.txt"]
    assert out.stdout.count(NOTE_PROMPT.format(path="b.txt")) == 1
    assert out.stdout.count(NOTE_PROMPT.format(path="c.txt")) == 1
    assert out.stdout.count('-> write_note(path="b.txt")') == 2  # shown as it ran unasked
    assert grant.tool == "write_note" and grant.arguments == {"path": "b.txt"}
    assert grant.scope == "thread" and grant.thread_id
    assert math.isclose((grant.expires - grant.created).total_seconds(), 600, abs_tol=1)
    assert decisions == ["approved", "remembered", "remembered", "rejected"]


def test_a_server_that_allows_less_is_offered_that_long_and_no_longer() -> None:
    with governed_agent(max_remember=timedelta(minutes=5)) as (url, _, app):
        out = chat(url, "note b.txt\nd\n\n")
        (grant,) = grants_of(app)
    assert out.returncode == 0, out.stdout + out.stderr
    assert COVERS.format(length="5 minutes", path="b.txt") in out.stdout
    assert math.isclose((grant.expires - grant.created).total_seconds(), 300, abs_tol=1)


@pytest.mark.parametrize(
    "typed", ["always", "remember", "dont ask again", "d!", "dd", "yes please", "ya", "don't"]
)
def test_a_choice_that_is_not_offered_approves_nothing(typed: str) -> None:
    """A prompt that offers "don't ask again" takes ``d``, nothing like it; one that does not
    offer it does not take ``d`` either. Each asks again, and the end of input rejects."""
    with governed_agent() as (url, agent, app):
        out = chat(url, f"note b.txt\n{typed}\n")
        offered_nowhere = chat(url, "clean a.txt\nd\n")
        grants = grants_of(app)
    assert out.returncode == 0 and offered_nowhere.returncode == 0
    assert agent.notes == [] and agent.deleted == []
    assert grants == []
    assert ASK_AGAIN in out.stdout
    assert "end of input: rejected write_note (no answer from the person)" in out.stdout
    assert "  please answer y or n (or e to edit)\n" in offered_nowhere.stdout
    assert "don't ask again" not in offered_nowhere.stdout
    assert "end of input: rejected delete_file" in offered_nowhere.stdout


def test_no_answer_after_the_offer_rejects_and_remembers_nothing() -> None:
    with governed_agent() as (url, agent, app):
        out = chat(url, "note b.txt\n")
        grants = grants_of(app)
    assert out.returncode == 0
    assert COVERS.format(length="10 minutes", path="b.txt") in out.stdout
    assert "end of input: rejected write_note (no answer from the person)" in out.stdout
    assert agent.notes == [] and grants == []


def test_grants_and_revoke_at_the_chat_prompt() -> None:
    with governed_agent() as (url, agent, _), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("/grants")
        child.expect_exact("nothing is remembered yet: this conversation has not started")
        child.expect_exact("you> ")
        child.sendline("note b.txt")
        child.expect_exact(NOTE_PROMPT.format(path="b.txt").strip())
        child.sendline("d")
        child.expect_exact("Done: wrote b.txt")
        child.expect_exact("you> ")
        child.sendline("/grants")
        child.expect_exact("remembered approvals (revoke one with /revoke <id>):")
        child.expect(
            r"  (\S+): don't ask again for write_note\(path=\"b\.txt\"\) in this "
            r"conversation until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
        )
        grant_id = child.match.group(1)
        child.expect_exact("you> ")
        child.sendline("note b.txt")  # remembered: runs without asking
        child.expect_exact("Done: wrote b.txt")
        child.expect_exact("you> ")
        child.sendline("/revoke")
        child.expect_exact("usage: /revoke <grant id>")
        child.expect_exact("you> ")
        child.sendline("/revoke not-a-grant")
        child.expect_exact("no live grant not-a-grant in this conversation: nothing was revoked")
        child.expect_exact("you> ")
        child.sendline(f"/revoke {grant_id}")
        child.expect_exact(f"revoked {grant_id}: those calls will be asked about again")
        child.expect_exact("you> ")
        child.sendline("/grants")
        child.expect_exact("no remembered approvals in this conversation")
        child.expect_exact("you> ")
        child.sendline("note b.txt")  # asked again
        child.expect_exact(NOTE_PROMPT.format(path="b.txt").strip())
        child.sendline("n")
        child.expect_exact("reason (optional): ")
        child.sendline("")
        child.expect_exact("you> ")
        child.sendeof()
        status, output = finish(child)
    assert status == 0, output
    assert agent.notes == ["b.txt", "b.txt"]
    # The commands went to the server's endpoint, never to the model as messages.
    said = [m.text for calls in agent.model.calls for m in calls[0] if m.role == "user"]
    assert not [text for text in said if text.startswith("/")]


HOSTILE_ID = "g\x1b]0;owned\x07"
HOSTILE_DESCRIPTION = "don't ask again for \u202etxt.exe\x1b[2J in this conversation"


def _grants_answered_by(app: Any, status: int, body: bytes, kind: bytes) -> Any:
    """``app``, its grants endpoint answering ``status`` with ``body`` instead."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("query_string") == b"agui_chat=grants":
            headers = [(b"content-type", kind)]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return asgi


@contextmanager
def answering(status: int, body: bytes, kind: bytes = b"application/json") -> Iterator[str]:
    with (
        governed_agent() as (_, _agent, app),
        serving(_grants_answered_by(app, status, body, kind)) as url,
    ):
        yield url


def test_what_the_server_says_of_its_grants_is_printed_escaped() -> None:
    listed = {"grants": [{"id": HOSTILE_ID, "description": HOSTILE_DESCRIPTION}]}
    with answering(200, json.dumps(listed).encode()) as url:
        out = chat(url, "note b.txt\ny\n/grants\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (
        "  g\\x1b]0;owned\\x07: don't ask again for \\u202etxt.exe\\x1b[2J in this conversation"
        in out.stdout
    )
    for char in (*RAW, "\x07"):
        assert char not in out.stdout


@pytest.mark.parametrize(
    ("status", "body", "kind", "says"),
    [
        (
            404,
            b"Not Found",
            b"text/plain",
            "HTTP 404: it has no grants endpoint (is it an agui-chat server?)",
        ),
        (
            404,
            b'{"code": "GRANTS_NOT_KEPT", "message": "this server\'s approval store keeps no '
            b'grants"}',
            b"application/json",
            "HTTP 404: this server's approval store keeps no grants",
        ),
        (500, b"\x1b[31mboom\x1b[0m", b"text/plain", "HTTP 500: \\x1b[31mboom\\x1b[0m"),
    ],
)
def test_a_grants_endpoint_that_refuses_is_one_line(
    status: int, body: bytes, kind: bytes, says: str
) -> None:
    with answering(status, body, kind) as url:
        out = chat(url, "note b.txt\ny\n/grants\n/revoke x\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    errors = [line for line in out.stdout.splitlines() if "error:" in line]
    assert len(errors) == 2, out.stdout
    for line in errors:
        assert line.endswith(f"error: the server answered {says}"), line
    assert "\x1b" not in out.stdout


# -- the prompt itself (the demo's and the chat's), in this process ------------------------


def _request(allow_remember: bool, interrupt: Any = None) -> ToolApprovalRequestContent:
    extra = {} if interrupt is None else {"agui_interrupt": interrupt}
    return ToolApprovalRequestContent(
        "req-1",
        FunctionCallContent("call-1", "write_note", {"path": "b.txt"}),
        allow_remember=allow_remember,
        additional_properties=extra,
    )


def _answer(
    request: ToolApprovalRequestContent,
    typed: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    auto: bool = False,
) -> tuple[Any, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    term = Terminal(auto=auto)
    term.stdout = io.StringIO()
    (answer,), _ = asyncio.run(answer_requests([request], term))
    return answer, term.stdout.getvalue()


def test_the_prompt_answers_d_with_a_thread_grant_for_ten_minutes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer, shown = _answer(_request(True), "d\n", monkeypatch)
    assert answer.approved and answer.remember == "thread"
    assert answer.remember_for == timedelta(minutes=10)
    assert answer.remember_match == "arguments" and answer.edited_arguments is None
    assert COVERS.format(length="10 minutes", path="b.txt") in shown


def test_yes_never_remembers(monkeypatch: pytest.MonkeyPatch) -> None:
    answer, shown = _answer(_request(True), "", monkeypatch, auto=True)
    assert answer.approved and answer.remember is None
    assert "[auto]" in shown


def test_d_where_it_is_not_offered_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    answer, shown = _answer(_request(False), "d\n", monkeypatch)
    assert not answer.approved and answer.remember is None
    assert "don't ask again" not in shown


def _capped(maximum: Any) -> dict[str, Any]:
    seconds = {"type": "number", "maximum": maximum}
    remember = {"type": "object", "properties": {"scope": {}, "seconds": seconds}}
    return {"responseSchema": {"type": "object", "properties": {"remember": remember}}}


@pytest.mark.parametrize(
    ("interrupt", "offered"),
    [
        (None, timedelta(minutes=10)),
        (_capped(86400), timedelta(minutes=10)),
        (_capped(90.7), timedelta(seconds=90)),
        (_capped(0.5), None),  # less than a second: not worth offering
        (_capped(True), timedelta(minutes=10)),  # not a number: the default, which it caps
        (_capped(float("nan")), timedelta(minutes=10)),
        (_capped(-5), timedelta(minutes=10)),
        (_capped("60"), timedelta(minutes=10)),
        ({"responseSchema": "nonsense"}, timedelta(minutes=10)),
    ],
)
def test_how_long_is_offered_follows_the_servers_cap(interrupt: Any, offered: Any) -> None:
    assert _prompts.remember_offer(_request(True, interrupt)) == offered
    assert _prompts.remember_offer(_request(False, interrupt)) is None


def test_the_interrupt_key_is_the_clients() -> None:
    from agui_chat.agui.client._updates import INTERRUPT_KEY

    assert _prompts._INTERRUPT_KEY == INTERRUPT_KEY


def test_ninety_seconds_is_said_in_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    answer, shown = _answer(_request(True, _capped(90)), "d\n", monkeypatch)
    assert answer.remember_for == timedelta(seconds=90)
    assert re.search(r"for 90 seconds: only write_note\(path=\"b\.txt\"\)", shown)
