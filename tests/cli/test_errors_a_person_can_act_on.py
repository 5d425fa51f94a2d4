"""Every way a ``chat`` turn can fail is one line, printed once, saying what to do, and a
piped ``chat`` whose last turn failed exits 1. Against real servers on 127.0.0.1: an
AG-UI server restarted with another key (distinct from a token altered on the way), a plain
HTTP server (501 with an HTML page), nothing listening, a server that breaks the protocol,
and a run that fails; every other line in one session against an endpoint that fails each
turn the way its prompt says. Only the timeout's line is checked on the error itself."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from live_agent import Agent, agent_server, serving
from test_chat_command import chat
from test_help_and_errors import Outcome, agui_chat  # noqa: F401  (a fixture)
from test_terminal_under_a_pty import finish, terminal

from agui_chat import ServiceTimeoutError
from agui_chat.cli._errors import explain

URL = "http://127.0.0.1:8000/"


def error_lines(stdout: str) -> list[str]:
    """Each line saying ``error:``, from there on (a piped stdin echoes no newline after
    ``you>``, so the line may start with the prompt)."""
    return [
        line[line.index("error:") :].strip() for line in stdout.splitlines() if "error:" in line
    ]


class Switch:
    """An ASGI app passing each request to whichever app it holds now."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


async def read_body(receive: Any) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def altering_interrupt_ids(app: Any) -> Any:
    """The app, behind something that alters every resume's interrupt id on the way."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        body = await read_body(receive)
        data = json.loads(body)
        for entry in data.get("resume") or []:
            head, mac = entry["interruptId"].rsplit(".", 1)
            entry["interruptId"] = f"{head}.{'B' if mac[0] == 'A' else 'A'}{mac[1:]}"
        altered = json.dumps(data).encode()
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": altered, "more_body": False}

        await app(scope, replay, send)

    return asgi


def approve_at_a_terminal(url: str, before_answering: Any) -> tuple[int, str]:
    with terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("clean up the draft")
        child.expect_exact("[y]es / [n]o / [e]dit: ")
        before_answering()
        child.sendline("y")
        child.expect_exact("you> ")
        child.sendeof()
        return finish(child)


def test_an_approval_to_a_server_restarted_with_another_key_says_ask_again() -> None:
    agent = Agent()
    switch = Switch(agent_server(agent))

    def restart() -> None:
        switch.app = agent_server(agent, signing_key=b"n" * 32)

    with serving(switch) as url:
        status, output = approve_at_a_terminal(url, restart)
    assert error_lines(output) == [
        "error: the server no longer recognises this approval: it was restarted or its key "
        "changed — ask again"
    ]
    assert status == 1
    assert agent.deleted == []


def test_an_approval_whose_id_was_altered_on_the_way_says_so() -> None:
    agent = Agent()
    switch = Switch(agent_server(agent))

    def start_altering() -> None:
        switch.app = altering_interrupt_ids(switch.app)

    with serving(switch) as url:
        status, output = approve_at_a_terminal(url, start_altering)
    assert error_lines(output) == [
        "error: the server refused the approval because its id was altered on the way "
        "(APPROVAL_FORGED); nothing ran — ask again"
    ]
    assert status == 1
    assert agent.deleted == []


@contextmanager
def plain_http_server() -> Iterator[str]:
    """Python's own file server, which answers a POST with 501 and an HTML page."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_plain_http_server_is_asked_about_not_dumped() -> None:
    with plain_http_server() as url:
        out = chat(url, "hello\n")
    assert error_lines(out.stdout) == [
        f"error: {url} answered 501 with an HTML page: is this an AG-UI endpoint?"
    ]
    assert "<html" not in out.stdout.lower()
    assert out.returncode == 1


def test_a_server_that_is_down_says_connecting_then_gives_up_naming_the_address() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = chat(f"http://127.0.0.1:{port}/", "hello\n")
    assert f"  connecting to 127.0.0.1:{port}…" in out.stdout
    assert error_lines(out.stdout) == [
        f"error: cannot connect to 127.0.0.1:{port}: connection refused: nothing listens on "
        "that port. Is the server running? (start one with: agui-chat serve)"
    ]
    assert out.returncode == 1


def sse_app(*events: dict[str, Any]) -> Any:
    """An endpoint answering every POST with these events (threadId and runId filled in)."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        body = await read_body(receive)
        ids = json.loads(body)
        filled = [
            {**e, "threadId": ids["threadId"], "runId": ids["runId"]}
            if e["type"].startswith("RUN_") and e["type"] != "RUN_ERROR"
            else e
            for e in events
        ]
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in filled).encode()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    return asgi


def test_a_server_that_breaks_the_protocol_is_named_as_at_fault() -> None:
    app = sse_app(
        {"type": "RUN_STARTED"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
        {"type": "RUN_FINISHED"},
    )
    with serving(app) as url:
        out = chat(url, "hello\n")
    (line,) = error_lines(out.stdout)
    assert line.startswith("error: the server at 127.0.0.1:")
    assert " broke the AG-UI protocol: " in line
    assert "TEXT_MESSAGE_CONTENT" in line  # the rule it broke
    assert line.endswith("The server is at fault, not your input; tell whoever runs it")
    assert out.returncode == 1


def test_a_failed_run_is_reported_once_and_a_later_success_exits_0() -> None:
    app = sse_app(
        {"type": "RUN_STARTED"}, {"type": "RUN_ERROR", "message": "x", "code": "MODEL_ERROR"}
    )
    with serving(app) as url:
        failed = chat(url, "hello\n")
    assert error_lines(failed.stdout) == [
        "error: the agent's model service failed (MODEL_ERROR); try again, and if it persists "
        "tell whoever runs the server"
    ]
    assert failed.returncode == 1
    with serving(agent_server(Agent())) as url:
        recovered = chat(url, "hello\n")
    assert recovered.returncode == 0


def answering_by_prompt(body: dict[str, Any]) -> tuple[int, str, bytes]:
    """What ``failing_app`` answers to the prompt ``status``, ``html``, ``truncated``,
    ``reset`` or a ``RUN_ERROR`` ``code`` (``-`` for none) and ``message``."""
    ids = {"threadId": body["threadId"], "runId": body["runId"]}
    prompt = body["messages"][-1]["content"]
    kind, _, rest = prompt.partition(" ")
    if kind == "status":
        status, _, body = rest.partition(" ")
        return int(status), "text/plain", body.encode()
    if kind == "html":
        return 200, "text/html", b"<html>hi</html>"
    started = f"data: {json.dumps({'type': 'RUN_STARTED', **ids})}\n\n"
    if kind in ("truncated", "reset"):
        return 200, "text/event-stream", started.encode()
    code, _, message = rest.partition(" ")
    error = {"type": "RUN_ERROR", "message": message, **({} if code == "-" else {"code": code})}
    return 200, "text/event-stream", (started + f"data: {json.dumps(error)}\n\n").encode()


async def failing_app(scope: Any, receive: Any, send: Any) -> None:
    """An endpoint failing each turn the way its prompt says (see ``answering_by_prompt``)."""
    body = json.loads(await read_body(receive))
    status, content_type, data = answering_by_prompt(body)
    headers = [(b"content-type", content_type.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    if body["messages"][-1]["content"] == "reset":
        await send({"type": "http.response.body", "body": data, "more_body": True})
        raise RuntimeError("the connection is cut mid-stream")
    await send({"type": "http.response.body", "body": data})


RUN_ERRORS = [
    (
        "INTERRUPT_KEY_CHANGED",
        "the server no longer recognises this question: it was restarted or its key "
        "changed — ask again",
    ),
    (
        "INTERRUPT_FORGED",
        "the server refused the answer because the question's id was altered on the way "
        "(INTERRUPT_FORGED); nothing ran — ask again",
    ),
    (
        "APPROVAL_EXPIRED",
        "the approval request expired before you approved it; nothing ran — ask again",
    ),
    ("INTERRUPT_EXPIRED", "the question expired before you answered it — ask again"),
    (
        "RESUME_ALREADY_CONSUMED",
        "this approval was already used; nothing ran twice — ask again if you want it to run again",
    ),
    (
        "APPROVAL_STORE_UNAVAILABLE",
        "the server cannot record approvals right now (APPROVAL_STORE_UNAVAILABLE); "
        "nothing ran and your answer was not used — send it again shortly",
    ),
    (
        "RESUME_IN_PROGRESS",
        "your answer is being run by another request now (RESUME_IN_PROGRESS); nothing ran "
        "twice — send it again shortly to get its result",
    ),
    (
        "RESUME_CLAIM_HELD",
        "your answer is held by a claim that has not started its tool yet "
        "(RESUME_CLAIM_HELD); nothing was used — send it again shortly",
    ),
    (
        "APPROVAL_STORE_RESET",
        "the server's approval store lost its records since you were asked "
        "(APPROVAL_STORE_RESET); nothing ran — ask again",
    ),
    (
        "APPROVAL_AUDIENCE_MISMATCH",
        "this approval was issued by another server that shares the key "
        "(APPROVAL_AUDIENCE_MISMATCH); nothing ran — ask this server again",
    ),
    (
        "APPROVAL_STALE",
        "the approval request expired long ago and can no longer be answered; nothing ran "
        "— ask again",
    ),
    ("INTERRUPT_STALE", "the question expired long ago and can no longer be answered — ask again"),
    (
        "AGENT_ERROR",
        "the agent failed inside the server (AGENT_ERROR); try again, and if it persists "
        "tell whoever runs the server",
    ),
]


def test_each_failure_reads_as_one_line_saying_what_to_do(
    agui_chat: Callable[..., Outcome],  # noqa: F811
) -> None:
    with serving(failing_app) as url:
        where = url.removeprefix("http://").rstrip("/")
        prompts_and_lines = [
            (
                "status 401 no",
                f"{where} refused the credentials (HTTP 401); pass them with --header "
                "'Authorization: Bearer …'",
            ),
            (
                "status 501 <!DOCTYPE HTML><html>...",
                f"{url} answered 501 with an HTML page: is this an AG-UI endpoint?",
            ),
            (
                "status 404 Not Found",
                f"{url} answered HTTP 404 (Not Found): is this an AG-UI endpoint, and does it "
                "accept this request?",
            ),
            (
                "truncated",
                f"{where} closed the stream before the run finished (the server is at "
                "fault); try again",
            ),
            *((f"code {code} m", line) for code, line in RUN_ERRORS),
            (
                "code RESUME_DUPLICATE_ANSWER The resume answers a request twice.",
                "the agent's run failed: The resume answers a request twice. "
                "(RESUME_DUPLICATE_ANSWER; see docs/errors.md)",
            ),
            ("code - it broke", "the agent's run failed: it broke"),
            # A server's words in the error are shown as they are, never read as a template.
            (
                "code - reset by {where} {exc.args} {0}",
                "the agent's run failed: reset by {where} {exc.args} {0}",
            ),
        ]
        stdin = "".join(f"{prompt}\n" for prompt, _ in prompts_and_lines)
        out = agui_chat("chat", url, stdin=stdin)
        html = agui_chat("chat", url, stdin="html\n")
        reset = agui_chat("chat", url, stdin="reset\n")
    assert error_lines(out.stdout) == [f"error: {line}" for _, line in prompts_and_lines]
    assert out.returncode == 1
    (line,) = error_lines(html.stdout)
    assert line.startswith(f"error: {url} did not answer with an event stream (")
    assert "Content-Type 'text/html'" in line
    assert line.endswith("): is this an AG-UI endpoint?")
    (line,) = error_lines(reset.stdout)
    assert line.startswith(f"error: the connection to {where} broke: ")
    assert line.endswith("; try again")


def test_a_timeout_reads_as_one_line_saying_what_to_do() -> None:
    # A pin: a real timeout takes the client's 60 seconds; the line is checked on the error.
    line = explain(ServiceTimeoutError("x"), URL)
    assert line == "127.0.0.1:8000 did not answer in time; try again, or check the server"
