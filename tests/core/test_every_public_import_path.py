"""Every public import path keeps working after the layout change (issue 12): each package's
public names, listed here, import from that package and nowhere private is needed."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "agui_chat.agui": [
        "AGUIChatClient",
        "AGUIRunContext",
        "AGUIServer",
        "AGUIStateTracker",
        "AGUIThreadReducer",
        "ApprovalStore",
        "InMemoryApprovalStore",
        "current_run",
        "serve",
    ],
    "agui_chat.agui.client": ["AGUIChatClient", "AGUIStateTracker", "AGUIThreadReducer"],
    "agui_chat.agui.server": [
        "SIGNING_KEY_ENV",
        "AGUIRunContext",
        "AGUIServer",
        "ApprovalStore",
        "InMemoryApprovalStore",
        "current_run",
        "serve",
    ],
    "agui_chat.stores": ["ApprovalStore", "InMemoryApprovalStore"],
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
    "agui_chat.openai": ["OpenAIChatClient"],
    "agui_chat.testing": ["ScriptedChatClient"],
}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_each_package_exports_exactly_its_public_names(package: str) -> None:
    module = importlib.import_module(package)
    assert set(PUBLIC[package]) <= set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_the_store_aliases_in_agui_are_the_stores_packages_classes() -> None:
    from agui_chat import agui, stores

    assert agui.InMemoryApprovalStore is stores.InMemoryApprovalStore
    assert agui.ApprovalStore is stores.ApprovalStore


def test_the_agui_package_and_its_rooms_hand_out_the_same_objects() -> None:
    from agui_chat import agui
    from agui_chat.agui import client, server

    assert agui.AGUIChatClient is client.AGUIChatClient
    assert agui.AGUIServer is server.AGUIServer
    assert agui.current_run is server.current_run


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
    import builtins

    shadowing = set(importlib.import_module(package).__all__) & set(dir(builtins))
    assert not shadowing, f"{package} exports {sorted(shadowing)}"
