"""``GeminiChatClient``: agui_chat over the ``google-genai`` SDK (``generate_content`` and its
stream).

Needs the ``gemini`` extra: ``pip install 'agui-chat[gemini]'``.
"""

from __future__ import annotations

from .._extras import needs_extra

# "google" too: without google-genai, the namespace package may be missing altogether.
with needs_extra(
    "gemini", by="agui_chat.gemini", module="google", package="the 'google-genai' package"
):
    from ._client import GeminiChatClient

__all__ = ["GeminiChatClient"]
