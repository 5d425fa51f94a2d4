"""``OpenAIChatClient``: agui_chat over the ``openai`` SDK's Chat Completions API, for OpenAI
and every OpenAI-compatible server (Ollama, vLLM, llama.cpp server, LM Studio); and
``OpenAIResponsesChatClient`` over its Responses API.

Needs the ``openai`` extra: ``pip install 'agui-chat[openai]'``.
"""

from __future__ import annotations

try:
    import openai as _openai  # noqa: F401 - fail here, with a hint, if the extra is missing
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "agui_chat.openai needs the 'openai' package: pip install 'agui-chat[openai]'"
    ) from exc

from ._client import OpenAIChatClient
from ._responses_client import OpenAIResponsesChatClient

__all__ = ["OpenAIChatClient", "OpenAIResponsesChatClient"]
