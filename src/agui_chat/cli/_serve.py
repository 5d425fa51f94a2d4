"""``agui-chat serve``: the app it serves (``--app``, ``--model``, ``--mcp``), the checks made
before anything is built (port, key, reach), and the banner's words for the key and the store."""

from __future__ import annotations

import argparse
import importlib
import os
import socket
import sys
from typing import Any
from urllib.parse import unquote, urlsplit

from .._client import ChatClient
from .._exceptions import ConfigurationError
from ..middleware import ChatClientBuilder
from ._demo_agent import demo_tools
from ._errors import CommandError
from ._models import chat_model
from ._prompts import one_line
from ._session import is_loopback

__all__ = [
    "DEFAULT_STORE_FILE",
    "KEY_ENV",
    "check_port",
    "free_port",
    "serve_command",
    "server_extra",
]

#: ``agui-chat serve``'s store when a signing key is set and ``--store`` is not given.
DEFAULT_STORE_FILE = "agui-chat-approvals.db"
#: The environment variable a fixed signing key comes from.
KEY_ENV = "AGUI_CHAT_SIGNING_KEY"


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


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


def server_extra() -> Any:
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


def serve_command(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port must be between 0 and 65535, got {args.port}")
    server = server_extra()
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
    port = args.port or free_port(args.host)  # --port 0: a free port, announced below
    # A fixed key needs a store every worker shares and a restart keeps; an ephemeral one
    # dies with the process, and memory is enough.
    store = args.store or (f"sqlite:///{DEFAULT_STORE_FILE}" if os.environ.get(KEY_ENV) else None)
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
            model, described = chat_model(args.model, args.api)
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
    from ..agui.server._signing import MAKE_A_KEY

    key = os.environ.get(KEY_ENV)
    if key and len(key.encode("utf-8")) < 16:
        raise CommandError(
            f"{KEY_ENV} is {len(key.encode('utf-8'))} bytes long; a signing key must be at "
            f"least 16 bytes (make one with: {MAKE_A_KEY})"
        )


def _setup(app: Any, store: Any, server_type: Any, *, mcp: bool) -> list[str]:
    """What the banner says of the signing key and the approval store (where its files are)."""
    if not isinstance(app, server_type) and not mcp:  # an ASGI app of the user's
        return ["signing key and approval store: the app's own (--app is not an AGUIServer)"]
    fixed = app.fixed_key if isinstance(app, server_type) else bool(os.environ.get(KEY_ENV))
    key = (
        f"signing key: fixed (signing_key or {KEY_ENV}): pending approvals outlive this process"
        if fixed
        else "signing key: ephemeral (random, made now): pending approvals end with this "
        f"process; set {KEY_ENV} to keep them"
    )
    if isinstance(app, server_type):
        store = app.approval_store
    return [key, f"approval store: {_store_described(store)}"]


def _store_described(store: Any) -> str:
    """Which store, and where it keeps what: a SQLite file's full path, a redacted URL."""
    from .._url_secrets import redact_url
    from ..stores import InMemoryApprovalStore, SQLiteApprovalStore

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

    AGUIServer = server_extra().AGUIServer
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
