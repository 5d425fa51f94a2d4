"""``OpenAIChatClient``: agui_chat over the ``openai`` SDK's Chat Completions API, for OpenAI
and every OpenAI-compatible server (Ollama, vLLM, llama.cpp server, LM Studio); and
``OpenAIResponsesChatClient`` over its Responses API.

Needs the ``openai`` extra: ``pip install 'agui-chat[openai]'``.
"""

from __future__ import annotations

from .._extras import needs_extra

with needs_extra("openai", by="agui_chat.openai"):
    from ._client import OpenAIChatClient
    from ._responses_client import OpenAIResponsesChatClient

__all__ = ["OpenAIChatClient", "OpenAIResponsesChatClient"]
