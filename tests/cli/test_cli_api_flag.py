"""``--model`` takes ``--api responses|chat``: Chat Completions by default for a custom
``OPENAI_BASE_URL``, the Responses API for OpenAI's own; ``--api`` without ``--model`` is an
error of one line."""

from __future__ import annotations

import pytest

from agui_chat.cli import _main, _models
from agui_chat.openai import OpenAIChatClient, OpenAIResponsesChatClient


@pytest.mark.parametrize(
    ("base_url", "api", "kind"),
    [
        ("http://127.0.0.1:1234/v1", None, OpenAIChatClient),
        ("http://127.0.0.1:1234/v1", "responses", OpenAIResponsesChatClient),
        (None, None, OpenAIResponsesChatClient),
        ("https://api.openai.com/v1", None, OpenAIResponsesChatClient),
        (None, "chat", OpenAIChatClient),
    ],
)
def test_the_default_api_follows_the_base_url(
    monkeypatch: pytest.MonkeyPatch, base_url: str | None, api: str | None, kind: type
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    if base_url is None:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    client, described = _models.chat_model("m", api)
    assert type(client) is kind
    assert ("Responses API" in described) == (kind is OpenAIResponsesChatClient)


def test_api_without_a_model_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main.main(["demo", "--api", "chat", "--yes"]) == 1
    assert "--api chooses the API of --model" in capsys.readouterr().err


def test_api_takes_only_the_two_names(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _main.main(["serve", "--model", "m", "--api", "assistants"])
    assert "invalid choice" in capsys.readouterr().err
