"""Argument parsing, `agui-chat demo` and `agui-chat chat` (`serve` is in `_serve.py`, `audit`
in `_audit.py`, `grants` in `_grants.py`). Errors are one clear line, not a traceback."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any
from urllib.parse import urlparse

from .._client import ChatClient
from .._exceptions import AGUIChatError, RunError
from .._messages import ChatMessage
from ._audit import add_audit_command, audit_command
from ._chat_grants import ServerGrants
from ._conversation import Transcript, take_turn
from ._demo_agent import DEMO_PROMPTS, demo_tools
from ._errors import CommandError, ServerFailures
from ._grants import add_grants_command, grants_command
from ._input import Interrupted
from ._log_lines import configure_logging
from ._models import add_api_option, chat_model
from ._prompts import Terminal, one_line
from ._serve import DEFAULT_STORE_FILE, KEY_ENV, free_port, serve_command, server_extra
from ._session import is_loopback, run_chat

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agui-chat",
        description="Chat with, or serve, AG-UI agents with a person in the loop; read what "
        "their approval stores recorded (audit) and remember (grants).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="run a full approval + question round trip over AG-UI on this machine",
        description=(
            "Start an AG-UI server on 127.0.0.1 hosting a demo agent (an approval-gated "
            "delete_file tool and a deploy tool that asks which build), connect a client to "
            "it over real HTTP and hold a short conversation. Offline by default."
        ),
    )
    demo.add_argument(
        "--model",
        metavar="NAME",
        help="use this OpenAI (or OPENAI_BASE_URL-compatible) model instead of the offline one",
    )
    add_api_option(demo)
    demo.add_argument(
        "--browser",
        action="store_true",
        help="serve the demo with its web page instead: print the URL (and open it when a "
        "display exists), then serve until Ctrl-C",
    )
    demo.add_argument(
        "--yes",
        action="store_true",
        help="answer every prompt automatically (for unattended runs; otherwise the prompts "
        "read your answers from stdin, and no answer rejects)",
    )

    serve = sub.add_parser(
        "serve",
        help="serve the demo agent, or your own chat client, as an AG-UI endpoint",
        description="Serve an AG-UI endpoint with uvicorn (POST / on the given host and port).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=8000, help="port to bind (default 8000; 0 picks a free one)"
    )
    serve.add_argument(
        "--ui", action="store_true", help="also serve the web page for a person on GET /"
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name the server answers (repeatable; NAME or NAME:PORT, '*' for any); "
        "any other gets 403, against DNS rebinding. Default: the loopback names only "
        "(localhost, 127.0.0.1, ::1), so a --host other than loopback needs it",
    )
    which = serve.add_mutually_exclusive_group()
    which.add_argument("--model", metavar="NAME", help="serve the demo tools on this OpenAI model")
    add_api_option(serve)
    which.add_argument(
        "--app",
        metavar="MODULE:ATTR",
        help="serve your own ChatClient, AGUIServer or ASGI app (or a factory returning one)",
    )
    serve.add_argument(
        "--store",
        metavar="URL",
        help="where consumed approvals are kept: sqlite:///file.db, redis://host:6379/0, "
        "postgresql://user:password@host:5432/dbname or "
        f"memory:// (default: sqlite:///{DEFAULT_STORE_FILE} when {KEY_ENV} is set, else memory)",
    )

    serve.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="TARGET",
        help="also host an MCP server's tools (repeatable): a command line such as "
        "'npx @modelcontextprotocol/server-filesystem /tmp' (stdio) or an http(s):// URL; "
        "destructive tools ask for approval",
    )

    chat = sub.add_parser(
        "chat",
        help="chat with any AG-UI server in the terminal",
        description=(
            "An interactive terminal client for any AG-UI endpoint: streams text, shows tool "
            "calls and state changes, and prompts for approvals and questions. Where the "
            "server allows it, an approval can also be remembered ([d]on't ask again: the same "
            "call, in this conversation, for 10 minutes). Type /grants to list what this "
            "conversation remembers, /revoke ID to end one."
        ),
    )
    chat.add_argument("url", help="the agent's endpoint, e.g. http://127.0.0.1:8000/")
    chat.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an HTTP header to send (repeatable), e.g. 'Authorization: Bearer x'",
    )
    chat.add_argument(
        "--yes",
        action="store_true",
        help="approve and answer automatically (only for a loopback URL, unless "
        "--yes-i-mean-it is also given)",
    )
    chat.add_argument(
        "--yes-i-mean-it",
        action="store_true",
        help="allow --yes against a server on another machine",
    )
    chat.add_argument(
        "--dialect",
        choices=["auto", "agui", "langgraph", "langchain-hitl", "adk"],
        default="auto",
        help="how the server's pauses are read and answered (default: chosen from what it "
        "sends; see docs/interop.md)",
    )
    chat.add_argument(
        "--accept-foreign-thread-ids",
        action="store_true",
        help="tolerate a server whose runs name another thread than the request's",
    )
    add_audit_command(sub)
    add_grants_command(sub)
    for command in (serve, chat):  # issue 17: traces and metrics via the standard OTEL_* variables
        command.add_argument(
            "--otel",
            action="store_true",
            help="export traces and metrics: OTLP if OTEL_EXPORTER_OTLP_ENDPOINT is set, else "
            "to stderr (needs agui-chat[otel])",
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    configure_logging()
    try:
        if getattr(args, "otel", False):
            _OTEL.append(_export_telemetry())
        if args.command == "demo":
            with ServerFailures() as failures:  # its own server's failures: one line each
                try:
                    return asyncio.run(_demo(args))
                except RunError as exc:
                    raise CommandError(failures.explain(exc)) from None
        if args.command == "serve":
            return serve_command(args)
        if args.command in ("audit", "grants"):
            command = audit_command if args.command == "audit" else grants_command
            return _listing(command(args))
        return asyncio.run(_chat(args))
    except KeyboardInterrupt:
        return 130
    except (CommandError, AGUIChatError, OSError) as exc:
        # An error's text often quotes a server or a model: one escaped line, whole.
        print(f"agui-chat: error: {one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        while _OTEL:
            _OTEL.pop()()  # flush what is left to export


#: The exit status of a command whose reader went away (as for SIGPIPE in a shell).
PIPE_CLOSED_STATUS = 141


def _listing(command: Coroutine[Any, Any, int]) -> int:
    """Run a command that prints a listing; a reader that stops reading (``| head``) ends it
    quietly, as a shell pipeline expects."""
    try:
        return asyncio.run(command)
    except BrokenPipeError:
        # Python would flush stdout again at exit and complain: point it at nothing.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED_STATUS


#: The shutdown of the telemetry ``--otel`` set up (flushes the exporters).
_OTEL: list[Callable[[], None]] = []


def _export_telemetry() -> Callable[[], None]:
    try:
        from ..otel import configure_export
    except ImportError as exc:
        raise CommandError(str(exc)) from None
    # uvicorn re-raises a SIGTERM it caught once it has stopped: exit through ``main``'s
    # ``finally`` then, so what is still batched gets exported.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    return configure_export()


# -- demo --------------------------------------------------------------------------------

#: What the demo says it will ask, as it asks it: an approval prompt (and a reason, on a
#: rejection), then the question's form, one prompt per field of ``BUILD_SCHEMA``.
DEMO_WILL_ASK = (
    "It will ask you three things: to approve or reject a tool call (and why, if you reject "
    "it), then which build to deploy, then a note for the release log (optional). It waits "
    "for your answers; no answer rejects."
)
DEMO_ANSWERS_ITSELF = "It answers every prompt itself (--yes)."


async def _demo(args: argparse.Namespace) -> int:
    AGUIServer = server_extra().AGUIServer
    from ..agui import AGUIChatClient
    from ._background import BackgroundServer

    model, described = chat_model(args.model, args.api)
    if args.browser:
        return await _demo_in_browser(model, described)
    term = Terminal(auto=args.yes)
    # One process serves and talks to itself, so a key made here is all the demo needs.
    app = AGUIServer(
        model,
        tools=demo_tools(),
        signing_key=secrets.token_bytes(32),
        approval_store="memory://",
    )
    port = free_port("127.0.0.1")
    async with BackgroundServer(app, "127.0.0.1", port):
        url = f"http://127.0.0.1:{port}/"
        term.say(f"agui-chat demo: an AG-UI server on {url} hosting {described}.")
        term.say("The client below talks to it over real HTTP; the tools need your say-so.")
        term.say(DEMO_ANSWERS_ITSELF if args.yes else DEMO_WILL_ASK)
        history: list[ChatMessage] = []
        transcript = Transcript()
        async with AGUIChatClient(url) as client:
            with term.ctrl_c:
                for prompt in DEMO_PROMPTS:
                    kept = len(history)
                    try:
                        await take_turn(client, history, prompt, term, transcript)
                    except Interrupted:
                        del history[kept:]
                        term.say("  turn cancelled (Ctrl-C); the demo goes on")
    done = (
        transcript.requests_answered >= 2
        and any("delete" in r or "rejected" in r for r in transcript.tool_results)
        and any("deploy" in r for r in transcript.tool_results)
    )
    if done:
        term.say("\nRound trip complete: approval and question answered over AG-UI.")
    elif transcript.requests_unanswered:
        term.say(
            "\nThe round trip did not complete: a prompt got no answer, so nothing was "
            "approved. Answer the prompts, or pass --yes to answer them automatically."
        )
    else:
        term.say("\nThe round trip did not complete.")
    return 0 if done else 1


async def _demo_in_browser(model: ChatClient, described: str) -> int:
    from ..agui import AGUIServer
    from ..stores import InMemoryApprovalStore
    from ._background import BackgroundServer

    app = AGUIServer(
        model,
        tools=demo_tools(),
        signing_key=secrets.token_bytes(32),
        approval_store=InMemoryApprovalStore(),
        ui=True,
    )
    port = free_port("127.0.0.1")
    async with BackgroundServer(app, "127.0.0.1", port):
        url = f"http://127.0.0.1:{port}/"
        print(one_line(f"agui-chat demo: open {url} in a browser ({described})."), flush=True)
        print("Ask it to clean up the draft report, then to deploy; Ctrl-C stops.", flush=True)
        if _has_display():
            import webbrowser

            webbrowser.open(url)
        await asyncio.Event().wait()
    return 0


def _has_display() -> bool:
    """Whether a browser window can be opened here."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# -- chat --------------------------------------------------------------------------------


def _headers(raw: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise CommandError(f"--header must look like 'Name: value', got {item!r}")
        headers[name.strip()] = value.strip()
    return headers


async def _chat(args: argparse.Namespace) -> int:
    from .._url_secrets import redact_url
    from ..agui import AGUIChatClient

    url, shown = urlparse(args.url), redact_url(args.url)  # every line printed: ``shown``
    if url.scheme not in ("http", "https") or not url.netloc:
        raise CommandError(f"not an http(s) URL: {shown!r}")
    if args.yes and not args.yes_i_mean_it and not is_loopback(args.url):
        raise CommandError(
            f"--yes would approve every tool call of {url.hostname}, another machine, without "
            "asking; drop --yes to decide yourself, or add --yes-i-mean-it"
        )
    headers = _headers(args.header)
    term = Terminal(auto=args.yes)
    term.say(f"agui-chat: talking to {shown} (empty line or Ctrl-D to quit)")
    async with AGUIChatClient(
        args.url,
        headers=headers,
        dialect=None if args.dialect == "auto" else args.dialect,
        accept_foreign_thread_ids=args.accept_foreign_thread_ids,
    ) as client:
        # /grants and /revoke: the same http client and credentials as the conversation.
        grants = ServerGrants(client.http_client, args.url, headers, lambda: client.thread_id)
        return await run_chat(client, shown, term, grants)
