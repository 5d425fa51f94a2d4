"""Argument parsing and the three commands. Errors are one clear line, not a traceback."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import secrets
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote, urlparse, urlsplit

from .._client import ChatClient
from .._exceptions import AGUIChatError, ConfigurationError, RunError
from .._messages import ChatMessage
from ..middleware import ChatClientBuilder
from ._conversation import Transcript, take_turn
from ._demo_agent import DEMO_PROMPTS, demo_model, demo_tools
from ._errors import ServerFailures
from ._input import Interrupted
from ._log_lines import configure_logging
from ._prompts import Terminal, one_line
from ._session import is_loopback, run_chat

__all__ = ["main"]

#: ``agui-chat serve``'s store when a signing key is set and ``--store`` is not given.
DEFAULT_STORE_FILE = "agui-chat-approvals.db"
_KEY_ENV = "AGUI_CHAT_SIGNING_KEY"


class CommandError(Exception):
    """A problem to report in one line, exiting with status 1."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agui-chat",
        description="Chat with, or serve, AG-UI agents with a person in the loop.",
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
    _add_api(demo)
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
    _add_api(serve)
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
        f"memory:// (default: sqlite:///{DEFAULT_STORE_FILE} when {_KEY_ENV} is set, else memory)",
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
            "calls and state changes, and prompts for approvals and questions."
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
        choices=["auto", "agui", "langgraph", "langchain-hitl"],
        default="auto",
        help="how the server's pauses are read and answered (default: chosen from what it "
        "sends; see docs/interop.md)",
    )
    chat.add_argument(
        "--accept-foreign-thread-ids",
        action="store_true",
        help="tolerate a server whose runs name another thread than the request's",
    )
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
            return _serve(args)
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


# -- models ------------------------------------------------------------------------------


def _add_api(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api",
        choices=("responses", "chat", "anthropic", "gemini"),
        help="the API --model speaks: OpenAI's Responses API or Chat Completions (default: "
        "chat for a custom OPENAI_BASE_URL, responses for OpenAI's own), Anthropic's Messages "
        "API (ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL) or Gemini (GEMINI_API_KEY, "
        "GOOGLE_API_KEY or GOOGLE_GEMINI_BASE_URL)",
    )


# For each provider API: its extra, the environment that makes it usable, and its name.
_PROVIDERS = {
    "anthropic": ("anthropic", ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"), "Anthropic"),
    "gemini": ("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"), "Gemini"),
}


def _provider_model(name: str, api: str) -> tuple[ChatClient, str]:
    extra, env, label = _PROVIDERS[api]
    if not any(os.environ.get(var) for var in env):
        raise CommandError(f"--api {api} needs {' or '.join(env)}")
    try:
        if api == "anthropic":
            from ..anthropic import AnthropicChatClient

            return AnthropicChatClient(name), f"the {label} model {name!r} (Messages API)"
        from ..gemini import GeminiChatClient

        return GeminiChatClient(name), f"the {label} model {name!r} (Gemini API)"
    except ImportError as exc:
        raise CommandError(
            f"--api {api} needs the {extra} extra: pip install 'agui-chat[{extra}]'"
        ) from exc


def _model(name: str | None, api: str | None = None) -> tuple[ChatClient, str]:
    if name is None:
        if api is not None:
            raise CommandError("--api chooses the API of --model; give --model too")
        return demo_model(), "the built-in offline demo model (no network, no API key)"
    if api in _PROVIDERS:
        return _provider_model(name, api)
    if not os.environ.get("OPENAI_API_KEY") and not os.environ.get("OPENAI_BASE_URL"):
        raise CommandError(
            "--model needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)"
        )
    try:
        from ..openai import OpenAIChatClient, OpenAIResponsesChatClient
    except ImportError as exc:
        raise CommandError(
            "--model needs the openai extra: pip install 'agui-chat[openai]'"
        ) from exc
    if api is None:
        host = urlparse(os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com").hostname
        api = (
            "responses"
            if (host or "").endswith(("api.openai.com", ".openai.azure.com"))
            else "chat"
        )
    if api == "responses":
        return OpenAIResponsesChatClient(name), f"the OpenAI model {name!r} (Responses API)"
    return OpenAIChatClient(name), f"the OpenAI model {name!r} (Chat Completions)"


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


# -- demo --------------------------------------------------------------------------------


async def _demo(args: argparse.Namespace) -> int:
    AGUIServer = _server_extra().AGUIServer
    from ..agui import AGUIChatClient
    from ._background import BackgroundServer

    model, described = _model(args.model, args.api)
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
    port = _free_port("127.0.0.1")
    async with BackgroundServer(app, "127.0.0.1", port):
        url = f"http://127.0.0.1:{port}/"
        term.say(f"agui-chat demo: an AG-UI server on {url} hosting {described}.")
        term.say("The client below talks to it over real HTTP; the tools need your say-so.")
        term.say(
            "It answers both questions itself (--yes)."
            if args.yes
            else "It will ask you two things: to approve or reject a tool call, then to answer "
            "a question. It waits for your answers; no answer rejects."
        )
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
    port = _free_port("127.0.0.1")
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


# -- serve -------------------------------------------------------------------------------


def _load_app(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise CommandError(f"--app must look like module:attribute, got {spec!r}")
    sys.path.insert(0, os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise CommandError(f"cannot import {module_name!r}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(target, part):
            raise CommandError(f"{module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if callable(target) and not isinstance(target, ChatClient) and _is_factory(target):
        target = target()
    return target


def _is_factory(obj: Any) -> bool:
    """A zero-argument callable that is not itself an ASGI app."""
    import inspect

    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False
    return not any(p.default is p.empty for p in params.values())


def _is_asgi(obj: Any) -> bool:
    """Callable with ``(scope, receive, send)``, as an ASGI 3 application is."""
    import inspect

    if not callable(obj):
        return False
    try:
        inspect.signature(obj).bind(None, None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): give it the benefit of the doubt
        return True
    return True


def _server_extra() -> Any:
    """``agui_chat.agui`` with its server names loaded, or one line naming the extra to
    install."""
    try:
        import uvicorn  # noqa: F401

        from .. import agui as server
        from ..agui.server import _server  # noqa: F401 - fail here if the extra is missing
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in ("starlette", "uvicorn"):
            raise
        raise CommandError(
            f"this command needs the server extra ({exc}): pip install 'agui-chat[server]'"
        ) from None
    return server


def check_port(host: str, port: int) -> None:
    """Fail in one line unless ``host:port`` can be listened on. ``SO_REUSEADDR``, as the
    server itself sets it: a port a stopped server left in TIME-WAIT is free to use."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def _serve(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port must be between 0 and 65535, got {args.port}")
    server = _server_extra()
    AGUIServer, serve = server.AGUIServer, server.serve
    _check_key()
    check_port(args.host, args.port)
    if not args.app or args.mcp:
        _check_reach(args)
    hosts = args.allowed_host or None
    from ..agui.server._hosts import HostGuard

    try:
        guard = HostGuard(hosts)
    except ValueError as exc:
        raise CommandError(f"--allowed-host: {exc}") from exc
    port = args.port or _free_port(args.host)  # --port 0: a free port, announced below
    # A fixed key needs a store every worker shares and a restart keeps; an ephemeral one
    # dies with the process, and memory is enough.
    store = args.store or (f"sqlite:///{DEFAULT_STORE_FILE}" if os.environ.get(_KEY_ENV) else None)
    try:
        if args.app:
            target = _load_app(args.app)
            is_client = isinstance(target, ChatClient)
            if not is_client and not _is_asgi(target):
                raise CommandError(
                    f"--app {args.app} is a {type(target).__name__}, neither a ChatClient nor "
                    "an ASGI app (nor a factory returning one)"
                )
            if args.mcp and not is_client:
                raise CommandError("--mcp needs --app to name a ChatClient, not a server")
            app = (
                _with_mcp(args, target, [], store)
                if args.mcp
                else AGUIServer(target, approval_store=store, allowed_hosts=hosts)
                if is_client
                else target
            )
            if args.ui and not isinstance(app, AGUIServer) and not args.mcp:
                raise CommandError(
                    "--ui needs a ChatClient or an AGUIServer; pass ui=True yourself"
                )
            if args.ui and not args.mcp:
                app.ui = True
            if hosts and not is_client and not args.mcp:
                if not isinstance(app, AGUIServer):
                    raise CommandError(
                        "--allowed-host needs a ChatClient or an AGUIServer; give your app's "
                        "AGUIServer allowed_hosts=[...] yourself"
                    )
                app.allowed_hosts = guard
            described = args.app
        else:
            model, described = _model(args.model, args.api)
            if args.otel:  # a span per model call, tool spans and the person's events
                model = ChatClientBuilder(model).use_opentelemetry().build()
            app = (
                _with_mcp(args, model, demo_tools(), store)
                if args.mcp
                else AGUIServer(
                    model, tools=demo_tools(), approval_store=store, ui=args.ui, allowed_hosts=hosts
                )
            )
    except ConfigurationError as exc:  # named for the setting it is about, not always --store
        about_store = args.store is not None and "store" in str(exc)
        raise CommandError(f"--store: {exc}" if about_store else str(exc)) from exc
    if args.app and not args.mcp and isinstance(app, AGUIServer):
        _check_reach(args)
    page = " (and its web page on GET /)" if args.ui else ""
    # The app's name, a store's URL or repr: escaped like everything else a person reads.
    banner = f"agui-chat: serving {described} on http://{args.host}:{port}/{page}"
    print(one_line(banner), file=sys.stderr)
    for line in _setup(app, store, AGUIServer, mcp=bool(args.mcp)):
        print(one_line(f"agui-chat: {line}"), file=sys.stderr)
    serve(app, host=args.host, port=port)
    return 0


def _check_reach(args: argparse.Namespace) -> None:
    """A ``--host`` other than loopback needs the names the server is reached under (the
    server's own check of them is what stops DNS rebinding)."""
    host = f"[{args.host}]" if ":" in args.host else args.host
    if not args.allowed_host and not is_loopback(f"http://{host}/"):
        raise CommandError(
            f"--host {args.host} lets other machines reach the server, which by default "
            "answers only the loopback names: say under which names it is reached with "
            "--allowed-host NAME (e.g. --allowed-host agent.example.com, or the machine's "
            "address)"
        )


def _check_key() -> None:
    """A signing key from the environment too short to use, reported as the key's error."""
    key = os.environ.get(_KEY_ENV)
    if key and len(key.encode("utf-8")) < 16:
        raise CommandError(
            f"{_KEY_ENV} is {len(key.encode('utf-8'))} bytes long; a signing key must be at "
            "least 16 bytes (make one with: python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))')"
        )


def _setup(app: Any, store: Any, server_type: Any, *, mcp: bool) -> list[str]:
    """What the banner says of the signing key and the approval store (where its files are)."""
    if not isinstance(app, server_type) and not mcp:  # an ASGI app of the user's
        return ["signing key and approval store: the app's own (--app is not an AGUIServer)"]
    fixed = app.fixed_key if isinstance(app, server_type) else bool(os.environ.get(_KEY_ENV))
    key = (
        f"signing key: fixed (signing_key or {_KEY_ENV}): pending approvals outlive this process"
        if fixed
        else "signing key: ephemeral (random, made now): pending approvals end with this "
        f"process; set {_KEY_ENV} to keep them"
    )
    if isinstance(app, server_type):
        store = app.approval_store
    return [key, f"approval store: {_store_described(store)}"]


def _store_described(store: Any) -> str:
    """Which store, and where it keeps what: a SQLite file's full path, a redacted URL."""
    from ..stores import InMemoryApprovalStore, SQLiteApprovalStore
    from ..stores._url_redaction import redact_url

    path = getattr(store, "path", None) if isinstance(store, SQLiteApprovalStore) else None
    if isinstance(store, str):
        parts = urlsplit(store)
        if parts.scheme.lower() == "memory":
            store = None
        elif parts.scheme.lower() == "sqlite":
            path = unquote(parts.path[1:])
        else:
            return redact_url(store)
    if path is not None:
        return f"SQLite file {os.path.abspath(path)} (made on first use, with -wal and -shm)"
    if store is None or isinstance(store, InMemoryApprovalStore):
        return "in memory (this process only: a restart forgets which approvals were used)"
    return str(getattr(store, "url", None) or repr(store))


def _with_mcp(args: argparse.Namespace, model: ChatClient, tools: list[Any], store: Any) -> Any:
    """The app for ``serve --mcp``: the AGUIServer is built once the MCP sessions are open."""
    from ._mcp import WithMCPTools

    AGUIServer = _server_extra().AGUIServer
    try:
        return WithMCPTools(
            args.mcp,
            lambda toolsets: AGUIServer(
                model,
                tools=[*tools, *toolsets],
                approval_store=store,
                ui=args.ui,
                allowed_hosts=args.allowed_host or None,
            ),
        )
    except (ValueError, TypeError, ImportError) as exc:
        raise CommandError(f"--mcp: {exc}") from exc


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
    from ..agui import AGUIChatClient

    url = urlparse(args.url)
    if url.scheme not in ("http", "https") or not url.netloc:
        raise CommandError(f"not an http(s) URL: {args.url!r}")
    if args.yes and not args.yes_i_mean_it and not is_loopback(args.url):
        raise CommandError(
            f"--yes would approve every tool call of {url.hostname}, another machine, without "
            "asking; drop --yes to decide yourself, or add --yes-i-mean-it"
        )
    headers = _headers(args.header)
    term = Terminal(auto=args.yes)
    term.say(f"agui-chat: talking to {args.url} (empty line or Ctrl-D to quit)")
    async with AGUIChatClient(
        args.url,
        headers=headers,
        dialect=None if args.dialect == "auto" else args.dialect,
        accept_foreign_thread_ids=args.accept_foreign_thread_ids,
    ) as client:
        return await run_chat(client, args.url, term)
