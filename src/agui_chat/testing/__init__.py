"""Helpers for testing code that uses agui_chat, without a network or a model."""

from ._scripted import ScriptedChatClient

__all__ = ["ScriptedChatClient"]
