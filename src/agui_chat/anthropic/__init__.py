"""``AnthropicChatClient``: agui_chat over the ``anthropic`` SDK's Messages API.

Needs the ``anthropic`` extra: ``pip install 'agui-chat[anthropic]'``.
"""

from __future__ import annotations

from .._extras import needs_extra

with needs_extra("anthropic", by="agui_chat.anthropic"):
    from ._client import AnthropicChatClient

__all__ = ["AnthropicChatClient"]
