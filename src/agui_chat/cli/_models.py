"""The chat client a command talks to: ``--model`` and ``--api`` (OpenAI's two APIs,
Anthropic, Gemini) or, without ``--model``, the offline demo model."""

from __future__ import annotations

import argparse
import os
from urllib.parse import urlparse

from .._client import ChatClient
from ._demo_agent import demo_model
from ._errors import CommandError

__all__ = ["add_api_option", "chat_model"]


def add_api_option(parser: argparse.ArgumentParser) -> None:
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


def chat_model(name: str | None, api: str | None = None) -> tuple[ChatClient, str]:
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
