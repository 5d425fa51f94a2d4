"""``--api anthropic|gemini`` (on ``demo`` and ``serve``) builds that provider's client from
its environment, and names the variables to set when there are none."""

from __future__ import annotations

import pytest

from agui_chat.anthropic import AnthropicChatClient
from agui_chat.cli import _errors, _main, _models
from agui_chat.gemini import GeminiChatClient

PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
)


@pytest.fixture(autouse=True)
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("api", "variable", "kind", "label"),
    [
        ("anthropic", "ANTHROPIC_API_KEY", AnthropicChatClient, "Anthropic model 'm'"),
        ("anthropic", "ANTHROPIC_BASE_URL", AnthropicChatClient, "Anthropic model 'm'"),
        ("gemini", "GEMINI_API_KEY", GeminiChatClient, "Gemini model 'm'"),
        ("gemini", "GOOGLE_GEMINI_BASE_URL", GeminiChatClient, "Gemini model 'm'"),
    ],
)
def test_the_api_chooses_the_provider(
    monkeypatch: pytest.MonkeyPatch, api: str, variable: str, kind: type, label: str
) -> None:
    value = "http://127.0.0.1:9" if variable.endswith("BASE_URL") else "key-test"
    monkeypatch.setenv(variable, value)
    client, described = _models.chat_model("m", api)
    assert type(client) is kind
    assert label in described


@pytest.mark.parametrize("api", ["anthropic", "gemini"])
def test_a_provider_without_its_environment_names_what_to_set(api: str) -> None:
    with pytest.raises(_errors.CommandError) as caught:
        _models.chat_model("m", api)
    expected = "ANTHROPIC_API_KEY" if api == "anthropic" else "GEMINI_API_KEY"
    assert expected in str(caught.value)


@pytest.mark.parametrize("command", ["demo", "serve"])
def test_both_commands_take_the_provider_names(command: str) -> None:
    parser = _main._parser()
    args = parser.parse_args([command, "--model", "m", "--api", "gemini"])
    assert args.api == "gemini"
