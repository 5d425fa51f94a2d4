"""The command's log lines on stderr, ``agui-chat: LEVEL: message``, escaped as everything
else a person reads is (:func:`agui_chat._display.visible`): a log message often quotes a
peer (a run id a client chose, a server's protocol slip, an MCP server's tool name), and it
must not move the cursor, retitle the window or pass for a prompt."""

from __future__ import annotations

import logging

from .._display import visible

__all__ = ["configure_logging"]


class _VisibleFormatter(logging.Formatter):
    """Each message on one line, hidden characters escaped; a traceback keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return visible(super().formatMessage(record))

    def formatException(self, ei: object) -> str:
        return visible(super().formatException(ei), multiline=True)  # type: ignore[arg-type]

    def formatStack(self, stack_info: str) -> str:
        return visible(super().formatStack(stack_info), multiline=True)


def configure_logging(level: int = logging.WARNING) -> None:
    """Warnings and errors to stderr (unless logging was configured already)."""
    handler = logging.StreamHandler()
    handler.setFormatter(_VisibleFormatter("agui-chat: %(levelname)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
