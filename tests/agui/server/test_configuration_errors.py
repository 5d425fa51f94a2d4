"""A misconfigured server, store or signing key raises ``ConfigurationError`` (issue 25: a bare
``ValueError``, outside the documented error tree): one of ours (``AGUIChatError``) and still a
``ValueError``, so existing ``except ValueError`` keeps working; the message names the setting."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from agui_chat import AGUIChatError, ConfigurationError, FunctionInvokingChatClient
from agui_chat.agui import AGUIServer, bearer_token
from agui_chat.stores import SQLiteApprovalStore, store_from_url
from agui_chat.testing import ScriptedChatClient

KEY = "a-test-key-that-is-long-enough-0123"


def _model() -> ScriptedChatClient:
    return ScriptedChatClient(lambda messages, options: "hi")


@pytest.mark.parametrize(
    ("settings", "names"),
    [
        ({"max_body_bytes": 0}, "max_body_bytes"),
        ({"keepalive_seconds": -1}, "keepalive_seconds"),
        ({"claim_lease": timedelta(0)}, "claim_lease"),
        ({"signing_key": "short", "approval_store": "memory://"}, "at least 16 bytes, not 5"),
        ({"signing_key": KEY}, "approval_store="),
        ({"signing_key": KEY, "approval_store": "postgres-ish://x"}, "approval store URL"),
        ({"approval_store": "sqlite:///:memory:"}, "SQLiteApprovalStore needs a file path"),
    ],
)
def test_a_misconfigured_server_is_a_configuration_error_naming_the_setting(
    settings: dict[str, Any], names: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGUI_CHAT_SIGNING_KEY", raising=False)
    with pytest.raises(ConfigurationError) as refused:
        AGUIServer(_model(), **settings)
    assert names in str(refused.value)
    assert isinstance(refused.value, AGUIChatError)
    assert isinstance(refused.value, ValueError)


def test_settings_for_a_tool_loop_the_pipeline_already_has_are_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="function_invocation settings"):
        AGUIServer(
            FunctionInvokingChatClient(_model()),
            function_invocation={"maximum_iterations_per_request": 3},
        )


def test_a_short_key_from_the_environment_is_the_keys_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGUI_CHAT_SIGNING_KEY", "tiny")
    with pytest.raises(ConfigurationError, match="signing key must be at least 16 bytes, not 4"):
        AGUIServer(_model(), approval_store="memory://")


def test_stores_and_the_bearer_check_raise_it_too() -> None:
    with pytest.raises(ConfigurationError, match="synchronous"):
        SQLiteApprovalStore("x.db", synchronous="SOMETIMES")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="cannot read the approval store URL"):
        store_from_url("sqlite:///x.db?journal=off")
    with pytest.raises(ConfigurationError, match="non-empty token"):
        bearer_token()


def test_the_server_says_whether_its_key_is_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGUI_CHAT_SIGNING_KEY", raising=False)
    assert AGUIServer(_model()).fixed_key is False
    assert AGUIServer(_model(), signing_key=KEY, approval_store="memory://").fixed_key is True


def test_a_plain_function_is_refused_saying_how_to_wrap_it() -> None:
    def model(messages: Any, options: Any) -> str:
        return "hi"

    with pytest.raises(ConfigurationError) as refused:
        AGUIServer(model)  # type: ignore[arg-type]  # as samples/tour.py writes its model
    assert str(refused.value) == (
        "AGUIServer needs a ChatClient, not the function 'model': wrap it, "
        "AGUIServer(ScriptedChatClient(model)), with ScriptedChatClient from agui_chat.testing "
        "(it calls model(messages, options) for each reply)"
    )
    wrapped = AGUIServer(ScriptedChatClient(model), signing_key=KEY, approval_store="memory://")
    assert wrapped.pipeline.get_service(ScriptedChatClient) is not None  # the advice works


@pytest.mark.parametrize(
    ("given", "named"),
    [(object(), "an instance of object"), (ScriptedChatClient, "the class ScriptedChatClient")],
)
def test_anything_else_that_is_no_chat_client_is_refused_naming_it(given: Any, named: str) -> None:
    with pytest.raises(ConfigurationError, match=f"needs a ChatClient .*, not {named}: "):
        AGUIServer(given)
