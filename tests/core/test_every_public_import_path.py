"""One public home per name (DESIGN §2): each public package exports the names listed here,
and no public object can be imported from two public paths (a module path with no ``_`` part)
except through the top-level ``agui_chat``, which may re-export it. No aliases: no object is
exported under two names."""

from __future__ import annotations

import builtins
import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import agui_chat

PUBLIC = {
    "agui_chat.agui": [
        "AUDIENCE_ENV",
        "SIGNING_KEY_ENV",
        "AGUIChatClient",
        "AGUIRunContext",
        "AGUIServer",
        "AGUIStateTracker",
        "AGUIThreadReducer",
        "bearer_token",
        "current_run",
        "default_audience",
        "fastapi_router",
        "protect",
        "serve",
    ],
    "agui_chat.agui.client": [],
    "agui_chat.agui.server": [],
    "agui_chat.agui.wire": [],
    "agui_chat.stores": [
        "ApprovalStore",
        "AuditRecord",
        "Claim",
        "ClaimRecord",
        "Grant",
        "InMemoryApprovalStore",
        "PostgresApprovalStore",
        "RedisApprovalStore",
        "SQLiteApprovalStore",
        "store_from_url",
    ],
    "agui_chat.middleware": [
        "ChatClientBuilder",
        "ConfigureOptionsChatClient",
        "DelegatingChatClient",
        "FunctionInvocationContext",
        "FunctionInvokingChatClient",
        "LoggingChatClient",
        "RetryingChatClient",
        "current_invocation",
    ],
    "agui_chat.openai": ["OpenAIChatClient", "OpenAIResponsesChatClient"],
    "agui_chat.anthropic": ["AnthropicChatClient"],
    "agui_chat.gemini": ["GeminiChatClient"],
    "agui_chat.testing": ["ScriptedChatClient"],
}


def _public_modules() -> dict[str, ModuleType]:
    """Every importable module of the package whose dotted path has no ``_`` part."""
    found = {"agui_chat": agui_chat}
    for info in pkgutil.walk_packages(agui_chat.__path__, "agui_chat."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        try:
            found[info.name] = importlib.import_module(info.name)
        except ImportError:  # pragma: no cover - an extra that is not installed
            continue
    return found


def _exports(module: ModuleType) -> list[str]:
    """What ``module`` offers: its ``__all__``; without one, every public non-module name."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [n for n, v in vars(module).items() if not n.startswith("_") and not inspect.ismodule(v)]


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_each_package_exports_exactly_its_public_names(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(_exports(module)) == sorted(PUBLIC[package])
    for name in _exports(module):
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_every_public_object_has_one_public_home_besides_the_top_level() -> None:
    homes: dict[object, list[str]] = {}
    for path, module in _public_modules().items():
        for name in _exports(module):
            value = getattr(module, name)
            # Constants are told apart by name: equal strings may be one interned object.
            key = (name, value) if isinstance(value, (str, int, float, bool)) else id(value)
            homes.setdefault(key, []).append(f"{path}.{name}")
    aliased = {}
    for where in homes.values():
        besides_top = [p for p in where if p.rpartition(".")[0] != "agui_chat"]
        names = {p.rpartition(".")[2] for p in where}
        if len(besides_top) > 1 or len(names) > 1:
            aliased[where[0]] = where
    assert not aliased, f"names with more than one public home: {sorted(aliased.values())}"


def test_the_rule_sees_every_public_package() -> None:
    """The walk above reaches the adapters (so the one-home test can fail for them)."""
    seen = set(_public_modules())
    assert set(PUBLIC) | {"agui_chat"} <= seen


def test_the_agui_package_hands_out_the_server_names_from_their_modules() -> None:
    from agui_chat import agui
    from agui_chat.agui.server import _run_context, _server

    assert agui.AGUIServer is _server.AGUIServer
    assert agui.current_run is _run_context.current_run


#: Public names deleted by issue 24: nothing in the package produces or needs them.
DELETED = [
    ("agui_chat", "McpServerToolCallContent"),
    ("agui_chat", "McpServerToolResultContent"),
    ("agui_chat", "HostedMcpServerTool"),
    ("agui_chat", "ChatMessages"),
    ("agui_chat.agui.server", "ASGIHandOff"),
    ("agui_chat", "TimeoutError"),  # renamed ServiceTimeoutError: it shadowed the builtin
]


@pytest.mark.parametrize(("package", "name"), DELETED)
def test_names_nothing_produces_have_no_public_home(package: str, name: str) -> None:
    assert not hasattr(importlib.import_module(package), name)


@pytest.mark.parametrize("package", ["agui_chat", *sorted(PUBLIC)])
def test_no_public_name_shadows_a_builtin(package: str) -> None:
    """``from agui_chat import *`` must not replace a builtin (``TimeoutError`` once did)."""
    shadowing = set(_exports(importlib.import_module(package))) & set(dir(builtins))
    assert not shadowing, f"{package} exports {sorted(shadowing)}"
